/*
 * The exit-code classifier, in both modes, for every code from -1 to 256.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "testutil.h"

static tfjob_exit_class documented_expectation(int code)
{
	switch (code) {
	case 1: case 2: case 126: case 127: case 128: case 139:
		return TFJOB_EXIT_PERMANENT;
	case 130: case 137: case 138: case 143:
		return TFJOB_EXIT_RETRYABLE;
	default:
		return code >= 128 ? TFJOB_EXIT_RETRYABLE : TFJOB_EXIT_PERMANENT;
	}
}

START_TEST(documented_table)
{
	/* The documented table, spelled out. */
	static const struct { int code; tfjob_exit_class cls; } table[] = {
		{ 0, TFJOB_EXIT_PERMANENT },   { 1, TFJOB_EXIT_PERMANENT },   { 2, TFJOB_EXIT_PERMANENT },
		{ 126, TFJOB_EXIT_PERMANENT }, { 127, TFJOB_EXIT_PERMANENT }, { 128, TFJOB_EXIT_PERMANENT },
		{ 139, TFJOB_EXIT_PERMANENT }, { 130, TFJOB_EXIT_RETRYABLE }, { 137, TFJOB_EXIT_RETRYABLE },
		{ 138, TFJOB_EXIT_RETRYABLE }, { 143, TFJOB_EXIT_RETRYABLE }, { 129, TFJOB_EXIT_RETRYABLE },
		{ 255, TFJOB_EXIT_RETRYABLE }, { 3, TFJOB_EXIT_PERMANENT },   { 125, TFJOB_EXIT_PERMANENT },
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
		ck_assert_msg(tfjob_exit_code_classify(table[i].code, TFJOB_COMPAT_DOCUMENTED) == table[i].cls,
		              "code %d", table[i].code);
}
END_TEST

START_TEST(every_code_both_modes)
{
	for (int code = -1; code <= 256; code++) {
		ck_assert_int_eq(tfjob_exit_code_classify(code, TFJOB_COMPAT_DOCUMENTED), documented_expectation(code));
		ck_assert_int_eq(tfjob_exit_code_classify(code, TFJOB_COMPAT_TRAINING_OPERATOR_1_9),
		                 code >= 128 ? TFJOB_EXIT_RETRYABLE : TFJOB_EXIT_PERMANENT);
	}
}
END_TEST

START_TEST(modes_differ_only_on_128_and_139)
{
	for (int code = 0; code < 256; code++) {
		bool differs = tfjob_exit_code_classify(code, TFJOB_COMPAT_DOCUMENTED) !=
		               tfjob_exit_code_classify(code, TFJOB_COMPAT_TRAINING_OPERATOR_1_9);
		ck_assert_int_eq(differs, code == 128 || code == 139);
	}
	ck_assert_str_eq(tfjob_exit_class_name(TFJOB_EXIT_RETRYABLE), "retryable");
	ck_assert_str_eq(tfjob_exit_class_name(TFJOB_EXIT_PERMANENT), "permanent");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("exitcode");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, documented_table);
	tcase_add_test(tc, every_code_both_modes);
	tcase_add_test(tc, modes_differ_only_on_128_and_139);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
