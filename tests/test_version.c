/*
 * Version macros, tfjob_version() and the project version agree.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <string.h>

#include "testutil.h"

START_TEST(version_matches_build)
{
	ck_assert_str_eq(tfjob_version(), TFJOB_VERSION);
	ck_assert_str_eq(tfjob_version(), TFJOB_PROJECT_VERSION);
	int major = -1, minor = -1, patch = -1;
	int number = tfjob_version_numbers(&major, &minor, &patch);
	ck_assert_int_eq(major, TFJOB_VERSION_MAJOR);
	ck_assert_int_eq(minor, TFJOB_VERSION_MINOR);
	ck_assert_int_eq(patch, TFJOB_VERSION_PATCH);
	ck_assert_int_eq(number, TFJOB_VERSION_NUMBER);
	ck_assert_int_eq(tfjob_version_numbers(NULL, NULL, NULL), number);
}
END_TEST

START_TEST(compat_names_round_trip)
{
	tfjob_compat c = (tfjob_compat)99;
	ck_assert_int_eq(tfjob_compat_from_string(&c, "training-operator-1.9"), 0);
	ck_assert_int_eq(c, TFJOB_COMPAT_TRAINING_OPERATOR_1_9);
	ck_assert_str_eq(tfjob_compat_name(c), "training-operator-1.9");
	ck_assert_int_eq(tfjob_compat_from_string(&c, "documented"), 0);
	ck_assert_int_eq(c, TFJOB_COMPAT_DOCUMENTED);
	ck_assert_str_eq(tfjob_compat_name(c), "documented");
	ck_assert_int_eq(tfjob_compat_from_string(&c, "training-operator-1.8"), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_compat_from_string(NULL, "documented"), TFJOB_EINVAL);
	ck_assert_str_eq(tfjob_compat_name((tfjob_compat)7), "unknown");
}
END_TEST

START_TEST(error_codes_are_named)
{
	ck_assert_str_eq(tfjob_error_code_name(TFJOB_EPARSE), "TFJOB_EPARSE");
	ck_assert_str_eq(tfjob_error_code_name(-1000), "TFJOB_UNKNOWN");
	ck_assert_str_eq(tfjob_strerror(TFJOB_ENOMEM), "out of memory");
	ck_assert_str_eq(tfjob_strerror(12345), "unknown error");
	/* Accessors are safe on NULL. */
	ck_assert_str_eq(tfjob_error_message(NULL), "");
	ck_assert_ptr_null(tfjob_error_field(NULL));
	ck_assert_int_eq(tfjob_error_line(NULL), 0);
	ck_assert_int_eq(tfjob_error_http_status(NULL), 0);
	tfjob_error_free(NULL);
	tfjob_free(NULL);
}
END_TEST

START_TEST(global_init_nests)
{
	ck_assert_int_eq(tfjob_global_init(), 0);
	ck_assert_int_eq(tfjob_global_init(), 0);
	tfjob_global_cleanup();
	tfjob_global_cleanup();
	tfjob_global_cleanup(); /* one too many is harmless */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("version");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, version_matches_build);
	tcase_add_test(tc, compat_names_round_trip);
	tcase_add_test(tc, error_codes_are_named);
	tcase_add_test(tc, global_init_nests);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
