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

/* A private temporary directory, /tmp/tfjob-PREFIX-XXXXXX (one at a time: a checked fixture
 * makes it and removes it with everything in it). */
void tu_tmpdir_make(const char *prefix);
void tu_tmpdir_remove(void);

/* The path of NAME in that directory (the last four stay valid). */
const char *tu_tmp_path(const char *name);

/* Write len bytes of text to NAME in that directory. */
void tu_write_tmp(const char *name, const char *text, size_t len);

/* A test case of s with that name and timeout (seconds); tests are added to it afterwards. */
TCase *tu_tcase(Suite *s, const char *name, double timeout);

/* Run the suite, return the process exit status. */
int tu_run(Suite *s);

/* tu_run between tfjob_global_init() and tfjob_global_cleanup() (the transport needs them). */
int tu_run_global(Suite *s);

/* What a streamed writer (tfjob_write_cb) handed over: the pieces joined, how many, the largest.
 * refuse_at > 0: the callback returns 1 at that piece (counted from 1). Free text with free(). */
typedef struct tu_collected {
	char *text;
	size_t len, pieces, largest;
	size_t refuse_at;
} tu_collected;
int tu_collect(const char *data, size_t len, void *payload);

/* The ids of this process's threads now (at most TU_MAX_THREADS): a snapshot taken before
 * starting the threads a test watches, so that the runtime's own (a sanitizer's, started by it
 * if not yet) are not among them. */
#define TU_MAX_THREADS 256
typedef struct tu_threads {
	long ids[TU_MAX_THREADS];
	size_t count;
} tu_threads;
void tu_threads_now(tu_threads *out);
/* Voluntary context switches so far of the threads alive now that were not in `before`: how
 * often the threads started since then went to sleep. */
long tu_new_threads_sleeps(const tu_threads *before);

#endif
