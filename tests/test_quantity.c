/*
 * Kubernetes quantities (internal): parsing every form k8s accepts, canonical output as
 * Quantity.String(), exact sums.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <check.h>
#include <string.h>

#include "util/common.h"
#include "util/quantity.h"
#include "testutil.h"

static void expect_canonical(const char *in, const char *want)
{
	tfjob__quantity q;
	ck_assert_msg(tfjob__quantity_parse(&q, in) == 0, "parse %s", in);
	char buf[96];
	ck_assert_msg(!strcmp(tfjob__quantity_format(&q, buf, sizeof(buf)), want), "%s: got %s, want %s", in, buf, want);
}

START_TEST(canonical_forms)
{
	static const char *const table[][2] = {
		{ "0", "0" },           { "0m", "0" },          { "1", "1" },           { "+1", "1" },
		{ "-1", "-1" },         { "1.5", "1500m" },     { "100m", "100m" },     { "1000m", "1" },
		{ "0.1", "100m" },      { ".5", "500m" },       { "1k", "1k" },         { "1000", "1k" },
		{ "1200", "1200" },     { "12000", "12k" },     { "1.1M", "1100k" },    { "100M", "100M" },
		{ "2G", "2G" },         { "3T", "3T" },         { "4P", "4P" },         { "5E", "5E" },
		{ "5000E", "5000E" },   { "1n", "1n" },         { "1u", "1u" },         { "1500u", "1500u" },
		{ "0.0000000001", "1n" }, { "1.0000000001", "1000000001n" },
		{ "1Ki", "1Ki" },       { "1024", "1024" },     { "0.5Gi", "512Mi" },   { "1.5Gi", "1536Mi" },
		{ "1536Mi", "1536Mi" }, { "1024Mi", "1Gi" },    { "512Ki", "512Ki" },   { "0.5Ki", "512" },
		{ "1.5Ki", "1536" },    { "0.1Ki", "102400m" }, { "1Ei", "1Ei" },       { "2048Ei", "2048Ei" },
		{ "-2Gi", "-2Gi" },     { "1e3", "1e3" },       { "1E3", "1e3" },       { "1e-3", "1e-3" },
		{ "12e6", "12e6" },     { "1e0", "1" },         { "1.5e3", "1500" },    { "100e-2", "1" },
		{ "0.001", "1m" },      { "123456789", "123456789" },
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		expect_canonical(table[i][0], table[i][1]);
}
END_TEST

START_TEST(invalid_forms)
{
	static const char *const bad[] = { "", "abc", "1K", "1.2.3", "1 Gi", "Gi", "1iG", ".", "1e", "1e+", "--1",
		                           "1Gi ", " 1", "1ki", "1mi", "0x10", "1e3k" };
	tfjob__quantity q;
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(tfjob__quantity_parse(&q, bad[i]) == TFJOB_EINVAL, "accepted '%s'", bad[i]);
	ck_assert_int_eq(tfjob__quantity_parse(&q, NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob__quantity_parse(&q, "1e999"), TFJOB_ELIMIT);
	ck_assert_int_eq(tfjob__quantity_parse(&q, "99999999999999999999999999999999E"), TFJOB_ELIMIT);
	ck_assert_int_eq(tfjob__quantity_parse(&q, "1e-99"), 0); /* rounds up to 1n */
	char buf[96];
	ck_assert_str_eq(tfjob__quantity_format(&q, buf, sizeof(buf)), "1e-9");
}
END_TEST

static void expect_sum(const char *a, const char *b, int64_t times, const char *want)
{
	tfjob__quantity qa, qb;
	ck_assert_int_eq(tfjob__quantity_parse(&qa, a), 0);
	ck_assert_int_eq(tfjob__quantity_parse(&qb, b), 0);
	ck_assert_int_eq(tfjob__quantity_add(&qa, &qb, times), 0);
	char buf[96];
	ck_assert_msg(!strcmp(tfjob__quantity_format(&qa, buf, sizeof(buf)), want), "%s + %lld*%s: got %s, want %s", a,
	              (long long)times, b, buf, want);
}

START_TEST(sums_keep_first_format)
{
	expect_sum("500m", "1.5", 1, "2");
	expect_sum("1Gi", "512Mi", 1, "1536Mi");
	expect_sum("100Mi", "100M", 1, "204857600");
	expect_sum("100M", "100Mi", 1, "204857600");
	expect_sum("1", "250m", 4, "2");
	expect_sum("2Gi", "2Gi", 3, "8Gi");
	expect_sum("1e3", "1k", 1, "2e3");
	expect_sum("1", "-1", 1, "0");
	tfjob__quantity a, b;
	ck_assert_int_eq(tfjob__quantity_parse(&a, "900000000E"), 0);
	ck_assert_int_eq(tfjob__quantity_parse(&b, "900000000E"), 0);
	ck_assert_int_eq(tfjob__quantity_add(&a, &b, 2), TFJOB_ELIMIT);
	ck_assert_int_eq(tfjob__quantity_add(&a, &b, -1), TFJOB_ELIMIT);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("quantity");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, canonical_forms);
	tcase_add_test(tc, invalid_forms);
	tcase_add_test(tc, sums_keep_first_format);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
