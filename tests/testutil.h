/*
 * Helpers shared by the Check tests.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_TESTUTIL_H
#define TFJOB_TESTUTIL_H

#include <check.h>
#include <stdbool.h>
#include <stddef.h>

#include <tfjob/tfjob.h>

/* Read tests/data/NAME (or examples/NAME with examples = 1); aborts the test when missing. */
char *tu_read_data(const char *name, size_t *len);
char *tu_read_example(const char *name, size_t *len);

/* Parse text as a TFJob; fails the test on error. */
tfjob_job *tu_parse(const char *text);

/* Parse text and expect failure with code; returns the error (caller frees). */
tfjob_error *tu_parse_fail(const char *text, size_t len, int code);

/* Validate; returns the field errors (caller frees). */
tfjob_field_errors *tu_validate(const tfjob_job *job, tfjob_compat compat, const tfjob_job *old);

/* Index of the first field error with that field and type, or -1. */
int tu_find_error(const tfjob_field_errors *errs, const char *field, tfjob_field_error_type type);

/* Run the suite, return the process exit status. */
int tu_run(Suite *s);

#endif
