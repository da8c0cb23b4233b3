/*
 * Helpers shared by the Check tests.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "testutil.h"

#include <dirent.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *read_path(const char *dir_env, const char *name, size_t *len)
{
	const char *dir = getenv(dir_env);
	ck_assert_msg(dir != NULL, "%s is not set", dir_env);
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *buf = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(buf);
	ck_assert_uint_eq(fread(buf, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	buf[n] = '\0';
	if (len)
		*len = (size_t)n;
	return buf;
}

char *tu_read_data(const char *name, size_t *len) { return read_path("TFJOB_TEST_DATA", name, len); }
char *tu_read_example(const char *name, size_t *len) { return read_path("TFJOB_EXAMPLES", name, len); }

tfjob_job *tu_parse(const char *text)
{
	tfjob_job *job = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_job_parse(&job, text, strlen(text), NULL, &err);
	ck_assert_msg(rc == 0, "parse failed: %s", tfjob_error_message(err));
	return job;
}

tfjob_error *tu_parse_fail(const char *text, size_t len, int code)
{
	tfjob_job *job = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_job_parse(&job, text, len, NULL, &err);
	ck_assert_msg(rc == code, "expected %s, got %s (%s)", tfjob_error_code_name(code), tfjob_error_code_name(rc),
	              tfjob_error_message(err));
	ck_assert_ptr_null(job);
	ck_assert_ptr_nonnull(err);
	ck_assert_int_eq(tfjob_error_code_of(err), code);
	return err;
}

tfjob_field_errors *tu_validate(const tfjob_job *job, tfjob_compat compat, const tfjob_job *old)
{
	tfjob_validate_options opts = TFJOB_VALIDATE_OPTIONS_INIT;
	opts.compat = compat;
	opts.old = old;
	tfjob_field_errors *errs = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_job_validate(&errs, job, &opts, &err);
	ck_assert_msg(rc == 0, "validate failed: %s", tfjob_error_message(err));
	return errs;
}

int tu_find_error(const tfjob_field_errors *errs, const char *field, tfjob_field_error_type type)
{
	for (size_t i = 0; i < tfjob_field_errors_count(errs); i++)
		if (!strcmp(tfjob_field_errors_field(errs, i), field) && tfjob_field_errors_type(errs, i) == type)
			return (int)i;
	return -1;
}

static char tmpdir[64];

void tu_tmpdir_make(const char *prefix)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/tfjob-%s-XXXXXX", prefix);
	ck_assert_ptr_nonnull(mkdtemp(tmpdir));
}

void tu_tmpdir_remove(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	ck_assert_int_eq(system(cmd), 0);
}

const char *tu_tmp_path(const char *name)
{
	static char paths[4][512];
	static int next;
	char *p = paths[next++ % 4];
	snprintf(p, sizeof(paths[0]), "%s/%s", tmpdir, name);
	return p;
}

void tu_write_tmp(const char *name, const char *text, size_t len)
{
	FILE *f = fopen(tu_tmp_path(name), "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(text, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

TCase *tu_tcase(Suite *s, const char *name, double timeout)
{
	TCase *tc = tcase_create(name);
	tcase_set_timeout(tc, timeout);
	suite_add_tcase(s, tc);
	return tc;
}

int tu_run(Suite *s)
{
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}

int tu_run_global(Suite *s)
{
	if (tfjob_global_init() != 0)
		return 1;
	int rc = tu_run(s);
	tfjob_global_cleanup();
	return rc;
}

int tu_collect(const char *data, size_t len, void *payload)
{
	tu_collected *c = payload;
	c->pieces++;
	if (c->refuse_at && c->pieces >= c->refuse_at)
		return 1;
	ck_assert_uint_gt(len, 0);
	char *grown = realloc(c->text, c->len + len + 1);
	ck_assert_ptr_nonnull(grown);
	memcpy(grown + c->len, data, len);
	c->text = grown;
	c->len += len;
	c->text[c->len] = '\0';
	if (len > c->largest)
		c->largest = len;
	return 0;
}

static void *no_work(void *arg) { return arg; }

static void list_threads(tu_threads *out)
{
	out->count = 0;
	DIR *d = opendir("/proc/self/task");
	ck_assert_ptr_nonnull(d);
	struct dirent *e;
	while ((e = readdir(d)) && out->count < TU_MAX_THREADS)
		if (e->d_name[0] != '.')
			out->ids[out->count++] = atol(e->d_name);
	closedir(d);
}

void tu_threads_now(tu_threads *out)
{
	/* ThreadSanitizer starts its background thread at the first pthread_create(): have it
	   started now, so that it counts as one of the threads already there. */
	pthread_t t;
	ck_assert_int_eq(pthread_create(&t, NULL, no_work, NULL), 0);
	pthread_join(t, NULL);
	list_threads(out);
}

static long voluntary_switches(long tid)
{
	char path[64], line[128];
	long n = 0;
	snprintf(path, sizeof(path), "/proc/self/task/%ld/status", tid);
	FILE *f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "voluntary_ctxt_switches:", 24))
			n = atol(line + 24);
	if (f)
		fclose(f);
	return n;
}

long tu_new_threads_sleeps(const tu_threads *before)
{
	tu_threads now;
	list_threads(&now);
	long total = 0;
	for (size_t i = 0; i < now.count; i++) {
		bool old = false;
		for (size_t j = 0; j < before->count && !old; j++)
			old = before->ids[j] == now.ids[i];
		if (!old)
			total += voluntary_switches(now.ids[i]);
	}
	return total;
}
