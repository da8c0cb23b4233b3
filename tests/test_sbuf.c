/*
 * The JSON text writers (internal): the fast compact writer matches jansson byte for byte, and
 * Go-compatible quoting as encoding/json does it.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "util/sbuf.h"
#include "testutil.h"

/* Documents and the precision jansson needs for their reals (each holds reals of one precision). */
static const struct {
	const char *doc;
	int precision;
} jansson_docs[] = {
	{ "{}", 17 }, { "[]", 17 }, { "null", 17 }, { "true", 17 }, { "false", 17 }, { "0", 17 }, { "-12", 17 },
	{ "9223372036854775807", 17 }, { "-9223372036854775808", 17 }, { "1.5", 17 }, { "1e300", 1 }, { "-0.0", 17 },
	{ "3.0", 17 }, { "0.1", 1 }, { "[0.30000000000000004,1.7976931348623157e308]", 17 }, { "1e-7", 1 },
	{ "\"\"", 17 },
	{ "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u0001\\u001f\\u007f é \\u2028 😀\"", 17 },
	{ "{\"k\\n\":[1,{\"x\":null,\"y\":[true,false,\"<>&\"]},2.25],\"z\":{},\"a\":[[],{}],\"b\":[{\"c\":[1,[2]]}]}", 17 },
};

/* Formatted text is not bounded by a fixed buffer: 100 KiB of lines (the controller's metrics
   text was once capped at 16 KiB) read back exactly, as snprintf would have written them. */
START_TEST(printf_grows_past_any_fixed_size)
{
	tfjob__sbuf b = TFJOB__SBUF_INIT;
	size_t expect_len = 0;
	for (int i = 0; i < 4096; i++) {
		char line[64];
		expect_len += (size_t)snprintf(line, sizeof(line), "metric_%04d{le=\"%g\"} %llu\n", i, i * 0.5,
		                               (unsigned long long)i * 1000003ULL);
		tfjob__sbuf_printf(&b, "metric_%04d{le=\"%g\"} %llu\n", i, i * 0.5, (unsigned long long)i * 1000003ULL);
	}
	ck_assert(!b.oom);
	ck_assert_uint_eq(b.len, expect_len);
	ck_assert_uint_gt(b.len, 100 * 1024);
	ck_assert_str_eq(b.p + b.len - strlen("metric_4095{le=\"2047.5\"} 4095012285\n"),
	                 "metric_4095{le=\"2047.5\"} 4095012285\n");
	char *text = tfjob__sbuf_take(&b);
	ck_assert_ptr_nonnull(text);
	ck_assert_uint_eq(strlen(text), expect_len);
	free(text);
}
END_TEST

START_TEST(compact_writer_matches_jansson)
{
	for (size_t i = 0; i < sizeof(jansson_docs) / sizeof(jansson_docs[0]); i++) {
		json_error_t jerr;
		json_t *v = json_loads(jansson_docs[i].doc, JSON_DECODE_ANY, &jerr);
		ck_assert_msg(v != NULL, "%s: %s", jansson_docs[i].doc, jerr.text);
		char *want = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(jansson_docs[i].precision));
		tfjob__sbuf b = TFJOB__SBUF_INIT;
		tfjob__sbuf_add_json(&b, v);
		char *got = tfjob__sbuf_take(&b);
		ck_assert_str_eq(got, want);
		free(got);
		free(want);
		json_decref(v);
	}
}
END_TEST

/* Indented and key-sorted output is jansson's JSON_INDENT(n) / JSON_SORT_KEYS, byte for byte. */
START_TEST(pretty_and_sorted_match_jansson)
{
	for (size_t i = 0; i < sizeof(jansson_docs) / sizeof(jansson_docs[0]); i++) {
		json_t *v = json_loads(jansson_docs[i].doc, JSON_DECODE_ANY, NULL);
		ck_assert_ptr_nonnull(v);
		for (unsigned int indent = 0; indent <= 4; indent += 2) {
			for (int sort = 0; sort <= 1; sort++) {
				size_t flags = JSON_ENCODE_ANY | JSON_REAL_PRECISION(jansson_docs[i].precision) |
				               (indent ? JSON_INDENT(indent) : JSON_COMPACT) | (sort ? JSON_SORT_KEYS : 0);
				char *want = json_dumps(v, flags);
				tfjob__sbuf b = TFJOB__SBUF_INIT;
				tfjob__sbuf_add_json_ex(&b, v, indent, sort);
				char *got = tfjob__sbuf_take(&b);
				ck_assert_msg(!strcmp(got, want), "indent %u sort %d:\n%s\nwanted:\n%s", indent, sort, got, want);
				free(got);
				free(want);
			}
		}
		json_decref(v);
	}
}
END_TEST

/*
 * Each real is written on its own with the fewest digits that read back exactly, so a document
 * that mixes short and long reals keeps both as they were written (jansson's one precision per
 * dump would write 0.1 as 0.10000000000000001 next to 0.30000000000000004).
 */
START_TEST(reals_shortest_each)
{
	static const char *const cases[][2] = {
		{ "0.1", "0.1" },
		{ "1e-7", "1e-7" },
		{ "1E-07", "1e-7" },
		{ "1.5e300", "1.5e300" },
		{ "1e3", "1000.0" }, /* written out in full below 1e17, as jansson does */
		{ "1000.0", "1000.0" },
		{ "100.0", "100.0" },
		{ "1e16", "10000000000000000.0" },
		{ "1e17", "1e17" },
		{ "1.5e16", "15000000000000000.0" },
		{ "1e21", "1e21" },
		{ "1.0", "1.0" },
		{ "-0.0", "-0.0" },
		{ "2.50", "2.5" },
		{ "123456.789", "123456.789" },
		{ "0.30000000000000004", "0.30000000000000004" },
		{ "5e-324", "5e-324" },
		{ "1.7976931348623157e308", "1.7976931348623157e308" },
		{ "[0.1,0.30000000000000004,1e-7,1.5e300,2.0]", "[0.1,0.30000000000000004,1e-7,1.5e300,2.0]" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		json_t *v = json_loads(cases[i][0], JSON_DECODE_ANY, NULL);
		ck_assert_ptr_nonnull(v);
		tfjob__sbuf b = TFJOB__SBUF_INIT;
		tfjob__sbuf_add_json(&b, v);
		char *got = tfjob__sbuf_take(&b);
		ck_assert_msg(!strcmp(got, cases[i][1]), "%s: got %s, wanted %s", cases[i][0], got, cases[i][1]);
		/* And it reads back as the same value. */
		json_t *back = json_loads(got, JSON_DECODE_ANY, NULL);
		ck_assert(json_equal(back, v));
		json_decref(back);
		free(got);
		json_decref(v);
	}
}
END_TEST

START_TEST(go_quoting)
{
	tfjob__sbuf b = TFJOB__SBUF_INIT;
	tfjob__sbuf_add_quoted(&b, "a\"b\\c\n\r\t\x01<>&\xe2\x80\xa8\xe2\x80\xa9 é/");
	char *got = tfjob__sbuf_take(&b);
	ck_assert_str_eq(got, "\"a\\\"b\\\\c\\n\\r\\t\\u0001\\u003c\\u003e\\u0026\\u2028\\u2029 é/\"");
	free(got);
	got = tfjob__sbuf_take(&b); /* an empty buffer gives "" */
	ck_assert_str_eq(got, "");
	free(got);
	tfjob__sbuf_add_i64(&b, -42);
	tfjob__sbuf_add_quoted(&b, "");
	got = tfjob__sbuf_take(&b);
	ck_assert_str_eq(got, "-42\"\"");
	free(got);
}
END_TEST

/* The checked string writer against json_dumps(json_string(s)): the same text, and refused
   exactly when jansson refuses the string. */
static void check_json_str(const char *s)
{
	json_t *v = json_string(s);
	char *want = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
	tfjob__sbuf b = TFJOB__SBUF_INIT;
	tfjob__sbuf_add(&b, "x", 1);
	bool ok = tfjob__sbuf_add_json_str(&b, s);
	char *got = tfjob__sbuf_take(&b);
	ck_assert_msg(ok == (v != NULL), "accepted %d, jansson %d, for %zu bytes", ok, v != NULL, strlen(s));
	if (ok)
		ck_assert_str_eq(got + 1, want);
	else
		ck_assert_str_eq(got, "x"); /* nothing appended */
	free(got);
	free(want);
	json_decref(v);
}

START_TEST(json_str_matches_jansson)
{
	static const char *const fixed[] = {
		"", "plain", "q\"uo\\te/", "\b\f\n\r\t\x01\x1f\x7f", "é € 😀 \xe2\x80\xa8", "\xc0\xaf", "\xe0\x80\xaf",
		"\xed\xa0\x80", "\xf4\x90\x80\x80", "\xf0\x8f\xbf\xbf", "\xff", "a\xc3", "\xe2\x82", "\x80", "\xf4\x8f\xbf\xbf",
	};
	for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
		check_json_str(fixed[i]);
	/* every byte value, alone and before a continuation byte */
	for (int c = 1; c < 256; c++) {
		char s[4] = { (char)c, 0, 0, 0 };
		check_json_str(s);
		s[1] = (char)0xa9;
		check_json_str(s);
	}
	/* random strings over bytes that make and break UTF-8 */
	static const unsigned char alphabet[] = { 'a', '"', '\\', '\n', 0x01, 0x1f, 0x7f, 0x80, 0xbf, 0xc2, 0xc3, 0xe0,
		                                      0xe2, 0xed, 0xef, 0xf0, 0xf4, 0xf5, 0xa0, 0x9f, 0x90, 0x8f };
	srand(15);
	for (int n = 0; n < 20000; n++) {
		char s[12];
		int len = rand() % (int)(sizeof(s) - 1);
		for (int i = 0; i < len; i++)
			s[i] = (char)alphabet[rand() % (int)sizeof(alphabet)];
		s[len] = '\0';
		check_json_str(s);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sbuf");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, compact_writer_matches_jansson);
	tcase_add_test(tc, pretty_and_sorted_match_jansson);
	tcase_add_test(tc, reals_shortest_each);
	tcase_add_test(tc, go_quoting);
	tcase_add_test(tc, json_str_matches_jansson);
	tcase_add_test(tc, printf_grows_past_any_fixed_size);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
