/*
 * The incremental JSON splitter of watch streams: every split point of a sample stream, byte by
 * byte, three-way splits, white space, errors and the size limit.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"
#include "transport/watch_splitter.h"

static const char *const values[] = {
	"{\"type\":\"ADDED\",\"object\":{\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"1\"}}}",
	"{\"type\":\"MODIFIED\",\"object\":{\"s\":\"braces } { ] [ inside\",\"e\":\"escaped \\\" quote \\\\\",\"u\":\"\\u00e9\\u007d\"}}",
	"{\"type\":\"BOOKMARK\",\"object\":{\"a\":[1,[2,{\"b\":[]}],\"]\"],\"n\":null,\"t\":true,\"x\":-1.5e3}}",
	"[{\"array\":\"at top level\"},\"\\\\\"]",
	"{}",
	"{\"k\":\"\\\\\\\"}\"}",
};
#define NVALUES (sizeof(values) / sizeof(values[0]))

#define MAX_GOT 48

struct got {
	char *items[MAX_GOT];
	size_t count;
};

static int collect(const char *value, size_t len, void *payload)
{
	struct got *g = payload;
	ck_assert_uint_eq(strlen(value), len);
	ck_assert_uint_lt(g->count, MAX_GOT);
	g->items[g->count++] = strdup(value);
	return 0;
}

static char *sample(void)
{
	static char buf[4096];
	buf[0] = '\0';
	for (size_t i = 0; i < NVALUES; i++) {
		strcat(buf, values[i]);
		strcat(buf, i % 2 ? "\n" : " \r\n\t");
	}
	return buf;
}

static void check_got(struct got *g)
{
	ck_assert_uint_eq(g->count, NVALUES);
	for (size_t i = 0; i < NVALUES; i++) {
		ck_assert_str_eq(g->items[i], values[i]);
		free(g->items[i]);
	}
	g->count = 0;
}

START_TEST(every_split_point)
{
	const char *s = sample();
	size_t n = strlen(s);
	tfjob__splitter sp;
	tfjob__splitter_init(&sp, 0);
	for (size_t cut = 0; cut <= n; cut++) {
		struct got g = { { 0 }, 0 };
		tfjob__splitter_reset(&sp);
		ck_assert_int_eq(tfjob__splitter_feed(&sp, s, cut, collect, &g), 0);
		ck_assert_int_eq(tfjob__splitter_feed(&sp, s + cut, n - cut, collect, &g), 0);
		ck_assert(!tfjob__splitter_pending(&sp));
		check_got(&g);
	}
	tfjob__splitter_free(&sp);
}
END_TEST

START_TEST(three_way_splits_and_bytes)
{
	const char *s = sample();
	size_t n = strlen(s);
	tfjob__splitter sp;
	tfjob__splitter_init(&sp, 0);
	for (size_t a = 0; a <= n; a += 7) {
		for (size_t b = a; b <= n; b += 5) {
			struct got g = { { 0 }, 0 };
			tfjob__splitter_reset(&sp);
			ck_assert_int_eq(tfjob__splitter_feed(&sp, s, a, collect, &g), 0);
			ck_assert_int_eq(tfjob__splitter_feed(&sp, s + a, b - a, collect, &g), 0);
			ck_assert_int_eq(tfjob__splitter_feed(&sp, s + b, n - b, collect, &g), 0);
			check_got(&g);
		}
	}
	struct got g = { { 0 }, 0 };
	tfjob__splitter_reset(&sp);
	for (size_t i = 0; i < n; i++)
		ck_assert_int_eq(tfjob__splitter_feed(&sp, s + i, 1, collect, &g), 0);
	check_got(&g);
	tfjob__splitter_free(&sp);
}
END_TEST

/* Strings are skipped 8 bytes at a time: quotes, escapes and braces at every offset of long
   strings, and every split point, give the values as they were. */
START_TEST(long_strings_at_every_offset)
{
	char stream[8192] = "", value[256];
	char *want[48];
	size_t nwant = 0;
	for (int at = 0; at < 24; at++) {
		snprintf(value, sizeof(value), "{\"s\":\"%.*s\\\"}{%.*s\",\"t\":\"%.*s\\\\\",\"u\":[\"]\"]}", at,
		         "abcdefghijklmnopqrstuvwxyz", 24 - at, "ABCDEFGHIJKLMNOPQRSTUVWX", at, "0123456789012345678901234");
		want[nwant++] = strdup(value);
		strcat(stream, value);
		strcat(stream, "\n");
	}
	size_t n = strlen(stream);
	tfjob__splitter sp;
	tfjob__splitter_init(&sp, 0);
	for (size_t cut = 0; cut <= n; cut += 3) {
		struct got g = { { 0 }, 0 };
		tfjob__splitter_reset(&sp);
		ck_assert_int_eq(tfjob__splitter_feed(&sp, stream, cut, collect, &g), 0);
		ck_assert_int_eq(tfjob__splitter_feed(&sp, stream + cut, n - cut, collect, &g), 0);
		ck_assert_uint_eq(g.count, nwant);
		for (size_t i = 0; i < nwant; i++) {
			ck_assert_str_eq(g.items[i], want[i]);
			free(g.items[i]);
		}
	}
	for (size_t i = 0; i < nwant; i++)
		free(want[i]);
	tfjob__splitter_free(&sp);
}
END_TEST

static int stop_at_first(const char *value, size_t len, void *payload)
{
	(void)value;
	(void)len;
	(*(int *)payload)++;
	return 7;
}

START_TEST(errors_limits_and_stop)
{
	tfjob__splitter sp;
	tfjob__splitter_init(&sp, 16);
	struct got g = { { 0 }, 0 };
	ck_assert_int_eq(tfjob__splitter_feed(&sp, "{\"a\":\"0123456789abcdef\"}", 24, collect, &g), -1);
	ck_assert_int_eq(tfjob__splitter_feed(&sp, "{}", 2, collect, &g), -1); /* failed until reset */
	tfjob__splitter_reset(&sp);
	ck_assert_int_eq(tfjob__splitter_feed(&sp, "{}", 2, collect, &g), 0);
	ck_assert_int_eq(tfjob__splitter_feed(&sp, "  garbage", 9, collect, &g), -1);
	tfjob__splitter_reset(&sp);
	ck_assert_int_eq(tfjob__splitter_feed(&sp, "{\"a\":", 5, collect, &g), 0);
	ck_assert(tfjob__splitter_pending(&sp));
	tfjob__splitter_reset(&sp);
	ck_assert(!tfjob__splitter_pending(&sp));
	free(g.items[0]);
	int calls = 0;
	ck_assert_int_eq(tfjob__splitter_feed(&sp, "{}{}{}", 6, stop_at_first, &calls), 7);
	ck_assert_int_eq(calls, 1);
	tfjob__splitter_free(&sp);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("watch_splitter");
	TCase *tc = tcase_create("splitter");
	tcase_add_test(tc, every_split_point);
	tcase_add_test(tc, three_way_splits_and_bytes);
	tcase_add_test(tc, long_strings_at_every_offset);
	tcase_add_test(tc, errors_limits_and_stop);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
