/*
 * Reading JSON text without parsing it (lib/parse/jscan.c): members found where they are, and
 * the validator agreeing with jansson on valid and broken texts, hand-written and mutated.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "parse/jscan.h"
#include "testutil.h"

/* Mutated texts per property: enough to meet every branch here (the suite also runs this under
 * valgrind); fuzz/fuzz_jscan.c explores further. */
#define MUTATIONS 40000

static const char *member(const char *text, const char *key)
{
	static char out[256];
	const char *a, *b;
	if (!tfjob__jscan_member(text, key, &a, &b))
		return NULL;
	snprintf(out, sizeof(out), "%.*s", (int)(b - a), a);
	return out;
}

START_TEST(members_are_found_at_their_place)
{
	const char *ev = " {\"type\" : \"ADDED\", \"x\":{\"type\":\"no\"}, \"object\":{\"a\":[1,\"]\"]}, \"n\":-1.5e3 }";
	ck_assert_str_eq(member(ev, "\"type\""), "\"ADDED\"");
	ck_assert_str_eq(member(ev, "\"object\""), "{\"a\":[1,\"]\"]}");
	ck_assert_str_eq(member(ev, "\"n\""), "-1.5e3");
	ck_assert_ptr_null(member(ev, "\"missing\""));
	ck_assert_ptr_null(member("[1,2]", "\"type\""));
	ck_assert_ptr_null(member("{\"type\":\"cut", "\"type\""));
	ck_assert_str_eq(member("{\"k\":\"\\\"}\"}", "\"k\""), "\"\\\"}\"");
}
END_TEST

static const char *without(const char *text, const char *key)
{
	static char out[256];
	const char *a, *b;
	if (!tfjob__jscan_member_span(text, key, &a, &b))
		return NULL;
	snprintf(out, sizeof(out), "%.*s%s", (int)(a - text), text, b);
	return out;
}

START_TEST(member_spans_remove_cleanly)
{
	ck_assert_str_eq(without("{\"a\":1,\"b\":[2],\"c\":3}", "\"b\""), "{\"a\":1,\"c\":3}");
	ck_assert_str_eq(without("{\"a\":1,\"b\":[2],\"c\":3}", "\"a\""), "{\"b\":[2],\"c\":3}");
	ck_assert_str_eq(without("{\"a\":1,\"b\":[2],\"c\":3}", "\"c\""), "{\"a\":1,\"b\":[2]}");
	ck_assert_str_eq(without("{ \"a\" : 1 , \"c\" : 3 }", "\"c\""), "{ \"a\" : 1 }");
	ck_assert_str_eq(without("{\"only\":{\"x\":\"}\"}}", "\"only\""), "{}");
	ck_assert_ptr_null(without("{\"a\":1}", "\"z\""));
	const char *abc = "\"abc\"";
	char *s = tfjob__jscan_plain_string(abc, abc + strlen(abc));
	ck_assert_str_eq(s, "abc");
	free(s);
	const char *esc = "\"a\\\"b\"";
	ck_assert_ptr_null(tfjob__jscan_plain_string(esc, esc + strlen(esc)));
	const char *number = "12";
	ck_assert_ptr_null(tfjob__jscan_plain_string(number, number + strlen(number)));
}
END_TEST

static int valid(const char *text)
{
	return tfjob__jscan_valid(text, strlen(text), 64);
}

START_TEST(validator_accepts_json)
{
	const char *good[] = {
		"{}", "[]", "0", "-0", "1.5e+3", "-12.0E-7", "\"\"", "true", "false", "null", " \t\r\n{ } \n",
		"{\"a\":[1,{\"b\":null},\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u00e9\"]}", "\"\\ud83d\\ude00\"", "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"",
		"[[[[[[[[]]]]]]]]", "\"\\u0000\"",
	};
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++)
		ck_assert_msg(valid(good[i]), "should be valid: %s", good[i]);
}
END_TEST

START_TEST(validator_rejects_what_is_not_json)
{
	const char *bad[] = {
		"", " ", "{", "}", "[1,]", "{\"a\":1,}", "{\"a\" 1}", "{a:1}", "01", "1.", ".5", "1e", "+1", "-", "tru",
		"nul", "True", "\"abc", "\"\\x\"", "\"\\u12\"", "\"\\ud800\"", "\"\\udc00\"", "\"\\ud800\\u0041\"",
		"\"a\nb\"", "\"\x01\"", "\"\xc0\xaf\"", "\"\xe0\x80\xaf\"", "\"\xed\xa0\x80\"", "\"\xf4\x90\x80\x80\"", "\"\xff\"",
		"\"\xc3\"", "{} {}", "[1] x", "{\"a\":1}}", "[1 2]", "NaN", "Infinity", "'a'",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(!valid(bad[i]), "should be invalid: %s", bad[i]);
	/* depth: 64 levels pass, 65 do not */
	char deep[200] = "";
	for (int i = 0; i < 64; i++)
		strcat(deep, "[");
	for (int i = 0; i < 64; i++)
		strcat(deep, "]");
	ck_assert(valid(deep));
	char deeper[200] = "[";
	strcat(deeper, deep);
	strcat(deeper, "]");
	ck_assert(!valid(deeper));
	/* the length bounds the text: a valid prefix is not enough */
	ck_assert(tfjob__jscan_valid("{}x", 2, 8));
	ck_assert(!tfjob__jscan_valid("{}x", 3, 8));
}
END_TEST

/* jansson's verdict, or -1 where the two readers differ by design (numbers beyond its range). */
static int jansson_verdict(const char *text, size_t len)
{
	json_error_t e;
	json_t *v = json_loadb(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL, &e);
	if (v) {
		json_decref(v);
		return 1;
	}
	return strstr(e.text, "too big") || strstr(e.text, "overflow") || strstr(e.text, "NUL byte") ? -1 : 0;
}

START_TEST(validator_agrees_with_jansson_on_mutations)
{
	const char *seed = "{\"type\":\"MODIFIED\",\"object\":{\"metadata\":{\"name\":\"w-0\",\"resourceVersion\":\"12\","
	                   "\"labels\":{\"a\":\"b\\u00e9\\\"\"}},\"spec\":{\"n\":[1,-2.5,3e2,true,false,null]},"
	                   "\"status\":{\"phase\":\"Running\",\"x\":\"\xc3\xa9\xf0\x9f\x98\x80\"}}}";
	const char alphabet[] = "{}[]\",:\\ 0123456789-+.eEtrufalsn\x80\xc3\xa9\xed\xf0u";
	size_t n = strlen(seed);
	char *buf = malloc(n + 8);
	srand(15);
	int agreed = 0;
	for (int round = 0; round < MUTATIONS; round++) {
		memcpy(buf, seed, n + 1);
		size_t len = n;
		for (int k = 0, edits = 1 + rand() % 3; k < edits; k++) {
			size_t at = (size_t)rand() % len;
			int op = rand() % 3;
			char c = alphabet[rand() % (int)(sizeof(alphabet) - 1)];
			if (op == 0) { /* replace */
				buf[at] = c;
			} else if (op == 1 && len > 1) { /* delete */
				memmove(buf + at, buf + at + 1, len - at);
				len--;
			} else { /* insert */
				memmove(buf + at + 1, buf + at, len - at + 1);
				buf[at] = c;
				len++;
			}
		}
		if (memchr(buf, '\0', len))
			continue;
		int want = jansson_verdict(buf, len);
		if (want < 0)
			continue;
		ck_assert_msg(tfjob__jscan_valid(buf, len, 2048) == want, "jansson says %d for: %.*s", want, (int)len, buf);
		agreed++;
	}
	ck_assert_int_gt(agreed, MUTATIONS * 3 / 4);
	free(buf);
}
END_TEST

/* Strings are read 8 bytes at a time: each byte that ends or breaks a run, at every offset of a
   long string (and at its end), is seen as jansson sees it. */
START_TEST(validator_reads_long_strings_byte_exact)
{
	static const char *const specials[] = { "\\\"", "\\\\", "\\u00e9", "\xc3\xa9", "\xe2\x82\xac",
		                                    "\x01", "\x1f", "\x7f", "\xc3", "\xff", "\xed\xa0\x80", "\t", " ", "~" };
	char buf[128];
	for (size_t k = 0; k < sizeof(specials) / sizeof(specials[0]); k++) {
		for (int at = 0; at <= 40; at++) {
			int n = snprintf(buf, sizeof(buf), "{\"k\":\"%.*s%s%.*s\"}", at, "abcdefghijklmnopqrstuvwxyz0123456789ABCDEFGH",
			                 specials[k], 40 - at, "HGFEDCBA9876543210zyxwvutsrqponmlkjihgfedcba");
			json_t *j = json_loadb(buf, (size_t)n, 0, NULL);
			int want = j != NULL;
			json_decref(j);
			ck_assert_msg(tfjob__jscan_valid(buf, (size_t)n, 8) == want, "jansson says %d for special %zu at %d: %s", want,
			              k, at, buf);
		}
	}
}
END_TEST

START_TEST(certain_only_when_jansson_takes_it)
{
	const char *yes[] = {
		"{}", " {\"a\":[1,-2.5e10,true,null,\"\\u00e9\\\"\"],\"b\":{\"a\":1}} ",
		"{\"n\":123456789012345678}", "{\"x\":1.5e99}",
	};
	for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
		ck_assert_msg(tfjob__jscan_certain(yes[i], strlen(yes[i])), "should be certain: %s", yes[i]);
	const char *no[] = {
		"[]", "1", "\"s\"", "{\"a\":1,\"a\":2}", "{\"a\\u0062\":1}", "{\"s\":\"\\u0000\"}",
		"{\"n\":1234567890123456789}", "{\"x\":1e400}", "{\"x\":1e100}", "{\"a\":1", "{\"a\":{\"b\":1,\"b\":1}}",
	};
	for (size_t i = 0; i < sizeof(no) / sizeof(no[0]); i++)
		ck_assert_msg(!tfjob__jscan_certain(no[i], strlen(no[i])), "should not be certain: %s", no[i]);
	/* keys of sibling objects do not meet; an object of 65 keys is left to jansson */
	const char *siblings = "{\"a\":{\"k\":1},\"b\":{\"k\":1},\"k\":1}";
	ck_assert(tfjob__jscan_certain(siblings, strlen(siblings)));
	char wide[1024] = "{";
	for (int i = 0; i < 65; i++)
		snprintf(wide + strlen(wide), sizeof(wide) - strlen(wide), "%s\"k%d\":%d", i ? "," : "", i, i);
	strcat(wide, "}");
	ck_assert(!tfjob__jscan_certain(wide, strlen(wide)));
	ck_assert(tfjob__jscan_valid(wide, strlen(wide), 8));
}
END_TEST

/* Wherever the scan is certain, jansson (refusing duplicates) agrees; and it is certain of the
   plain texts jansson takes. */
START_TEST(certain_agrees_with_jansson_on_mutations)
{
	const char *seed = "{\"metadata\":{\"name\":\"w-0\",\"labels\":{\"a\":\"b\\u00e9\"}},\"spec\":{\"n\":[1,-2.5,3e2,true,"
	                   "false,null],\"m\":{\"n\":1}},\"status\":{\"phase\":\"Running\",\"x\":\"\xc3\xa9\"}}";
	const char alphabet[] = "{}[]\",:\\ 0123456789-+.eEn\"\"mx\xc3\xa9u";
	size_t n = strlen(seed);
	char *buf = malloc(n + 8);
	srand(16);
	int certain = 0, taken = 0;
	for (int round = 0; round < MUTATIONS; round++) {
		memcpy(buf, seed, n + 1);
		size_t len = n;
		size_t at = (size_t)rand() % len;
		char c = alphabet[rand() % (int)(sizeof(alphabet) - 1)];
		if (rand() % 2) {
			buf[at] = c;
		} else {
			memmove(buf + at + 1, buf + at, len - at + 1);
			buf[at] = c;
			len++;
		}
		json_t *v = json_loadb(buf, len, JSON_REJECT_DUPLICATES, NULL);
		int sure = tfjob__jscan_certain(buf, len);
		ck_assert_msg(!sure || v, "certain, but jansson refuses: %.*s", (int)len, buf);
		certain += sure;
		taken += v != NULL && json_is_object(v);
		json_decref(v);
	}
	ck_assert_int_gt(certain, MUTATIONS / 200);
	ck_assert_int_ge(certain * 10, taken * 9); /* seldom unsure of what jansson takes */
	free(buf);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("jscan");
	TCase *tc = tcase_create("jscan");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, members_are_found_at_their_place);
	tcase_add_test(tc, member_spans_remove_cleanly);
	tcase_add_test(tc, validator_accepts_json);
	tcase_add_test(tc, validator_rejects_what_is_not_json);
	tcase_add_test(tc, validator_agrees_with_jansson_on_mutations);
	tcase_add_test(tc, validator_reads_long_strings_byte_exact);
	tcase_add_test(tc, certain_only_when_jansson_takes_it);
	tcase_add_test(tc, certain_agrees_with_jansson_on_mutations);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
