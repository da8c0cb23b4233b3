/*
 * tfjobctl: shared helpers of the command-line tool.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOBCTL_H
#define TFJOBCTL_H

#include <stdbool.h>
#include <stddef.h>

#include <tfjob/tfjob.h>

/* Exit codes of the tfjobctl contract. */
enum { EXIT_OK = 0, EXIT_NEGATIVE = 1, EXIT_USAGE = 2 };

struct command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
	void (*usage)(FILE *out);
};

/* Read a whole file ("-" = standard input) into a NUL-terminated buffer, at most max bytes + 1. */
int ctl_read_file(char **out, size_t *out_len, const char *path, size_t max);

/* Read and parse one TFJob (or every TFJob of the file with all = true). Prints errors; EXIT_* on failure. */
int ctl_load_job(tfjob_job **out, const char *path);
int ctl_load_jobs(tfjob_job ***out, size_t *count, const char *path);

/* A file's TFJobs and its text (for tfjob_field_locate()); free(*text). */
struct ctl_source {
	const char *path;
	char *text;
	size_t len;
};
int ctl_load_jobs_source(tfjob_job ***out, size_t *count, struct ctl_source *src);
/*
 * Print the field errors of the doc-th TFJob of src, one a line, as
 * "PATH:LINE:COLUMN: message" where the field is written in the text, else "PATH: message".
 */
void ctl_print_field_errors(FILE *out, const tfjob_field_errors *errs, const struct ctl_source *src, size_t doc,
                            const char *prefix);

/* Print "tfjobctl: <message>" to stderr (message of err, or text) and return EXIT_USAGE. */
int ctl_fail_err(tfjob_error *err);
int ctl_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parse --compat's value; prints an error and returns false when unknown. */
bool ctl_parse_compat(tfjob_compat *out, const char *value);

/* Print a string the library allocated, then free it. */
void ctl_print_owned(char *text);

int cmd_validate(int argc, char **argv);
void usage_validate(FILE *out);
int cmd_default(int argc, char **argv);
void usage_default(FILE *out);
int cmd_exit_code(int argc, char **argv);
void usage_exit_code(FILE *out);
int cmd_tf_config(int argc, char **argv);
void usage_tf_config(FILE *out);
int cmd_render(int argc, char **argv);
void usage_render(FILE *out);
int cmd_plan(int argc, char **argv);
void usage_plan(FILE *out);
int cmd_simulate(int argc, char **argv);
void usage_simulate(FILE *out);

/* --now: parse an RFC 3339 time, or read the clock when value is NULL. Prints errors; EXIT_USAGE on failure. */
int ctl_parse_now(int64_t *out, const char *value);
int cmd_apply(int argc, char **argv);
void usage_apply(FILE *out);
int cmd_get(int argc, char **argv);
void usage_get(FILE *out);
int cmd_describe(int argc, char **argv);
void usage_describe(FILE *out);
int cmd_delete(int argc, char **argv);
void usage_delete(FILE *out);
int cmd_watch(int argc, char **argv);
void usage_watch(FILE *out);
int cmd_run(int argc, char **argv);
void usage_run(FILE *out);
int cmd_logs(int argc, char **argv);
void usage_logs(FILE *out);
/* tfjobctl get --run-dir DIR: a local run's state (local_view.c). */
int cmd_get_run_dir(int argc, char **argv);
void usage_get_run_dir(FILE *out);

#endif
