/*
 * tfjobctl: shared helpers of the command-line tool.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOBCTL_H
#define TFJOBCTL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <jansson.h>

#include <tfjob/tfjob.h>

/* Exit codes of the tfjobctl contract; 130 (128 + SIGINT) when Ctrl-C or SIGTERM stopped a command. */
enum { EXIT_OK = 0, EXIT_NEGATIVE = 1, EXIT_USAGE = 2, EXIT_INTERRUPTED = 130 };

/* Which of the global flags (those that may come before COMMAND) a command takes. */
enum {
	CTL_TAKES_CONNECTION = 1, /* -n/--namespace, --context, --kubeconfig, --request-timeout */
	CTL_TAKES_NAMESPACE = 2,  /* -n/--namespace only (a default namespace) */
	CTL_TAKES_COMPAT = 4,     /* --compat */
};

struct command {
	const char *name;
	const char *summary;
	int (*run)(int argc, char **argv);
	void (*usage)(FILE *out);
	unsigned globals; /* CTL_TAKES_*: the global flags it reads; the others are ignored */
};

/* Read a whole file ("-" = standard input) into a NUL-terminated buffer, at most max bytes + 1. */
int ctl_read_file(char **out, size_t *out_len, const char *path, size_t max);

/* Read and parse one TFJob (or every TFJob of the file with all = true). Prints errors; EXIT_* on failure. */
int ctl_load_job(tfjob_job **out, const char *path);
int ctl_load_jobs(tfjob_job ***out, size_t *count, const char *path);
/* ctl_load_jobs(), and the file's text in *text (free()) and *len, for tfjob_field_locate(). */
int ctl_load_jobs_text(tfjob_job ***out, size_t *count, const char *path, char **text, size_t *len);

/* ---- output (output.c) ---- */

/* -o values; each command accepts some of them (a mask of CTL_FORMAT_BIT()). */
enum ctl_format { CTL_FORMAT_DEFAULT, CTL_FORMAT_JSON, CTL_FORMAT_YAML, CTL_FORMAT_NAME, CTL_FORMAT_WIDE, CTL_FORMAT_LIST };
#define CTL_FORMAT_BIT(f) (1u << (f))
/* Parse -o's value (also "-o=json") among the allowed formats; reports and returns false otherwise. */
bool ctl_parse_format(enum ctl_format *out, const char *value, unsigned int allowed, const char *command);

void ctl_print_yaml(FILE *out, const json_t *v);
/* kubectl's -o json: 4-space indentation, keys sorted. */
void ctl_print_json(FILE *out, const json_t *v);
/* Each object of the array as a document of a YAML stream ("---" between documents). */
void ctl_print_yaml_stream(FILE *out, const json_t *items);
/* kubectl's wrapper of several objects: {apiVersion: v1, items, kind: List, metadata}. New reference. */
json_t *ctl_list_of(const json_t *items);
/* -o name: "pod/NAME", "service/NAME", "tfjob.kubeflow.org/NAME" (kind.group for other groups). */
void ctl_print_name(FILE *out, const json_t *obj);

/* Cells of a table, printed as kubectl's tabwriter does: each column but the last padded to its
 * widest cell plus 3 spaces (at least 10 characters), no trailing blanks. */
enum { CTL_TABLE_MAX_COLS = 8 };
struct ctl_table {
	size_t rows, cols;
	char **cells; /* rows * cols */
};
int ctl_table_add(struct ctl_table *tb, const char *const *row);
/* Print and empty the table. */
void ctl_table_print(FILE *out, struct ctl_table *tb);

/* ---- -f sources (input.c) ---- */

/* The -f values of a command line, in order (the strings are argv's). */
struct ctl_sources {
	const char **paths;
	size_t count;
};
/* Append one -f value; EXIT_USAGE (reported) when out of memory. */
int ctl_sources_add(struct ctl_sources *s, const char *path);

/* One TFJob of the inputs and where it was read. */
struct ctl_doc {
	tfjob_job *job;
	const char *file;  /* as given; "<stdin>" for '-' */
	unsigned int line; /* first line of its document (0: the positional FILE, read whole) */
	/* The text the job was parsed from, for tfjob_field_locate(): its index-th document, whose
	 * lines count from `line` (from 1 when line is 0). NULL when positions could point at the
	 * wrong job (a List or a JSON array of several). */
	const char *text;
	size_t len, index;
};

struct ctl_inputs {
	struct ctl_doc *docs;
	size_t count;
	char **names; /* owned copies of the file names and texts the docs point at */
	size_t nnames;
};

/*
 * Read every TFJob of the sources (a file, '-' for standard input, or a directory: its .yaml,
 * .yml and .json files in name order; each file a multi-document stream), then release the
 * sources. A document that cannot be read (syntax, not a TFJob) is reported with its file and
 * line, and the others are read all the same: EXIT_USAGE when any failed, else EXIT_OK.
 */
int ctl_inputs_read(struct ctl_inputs *in, struct ctl_sources *s);
int ctl_inputs_add(struct ctl_inputs *in, const char *source);
/* FILE as the positional form reads it: the whole file at once, any bad document fails it all
 * (the tfjobctl contract); the docs' line is 0. */
int ctl_inputs_whole_file(struct ctl_inputs *in, const char *path);
/* The inputs of a command taking FILE or -f: the -f sources when given (then no FILE may follow,
 * argv[optind...]), else the one FILE. Reports errors; EXIT_* as ctl_inputs_read(). */
int ctl_inputs_of_command(struct ctl_inputs *in, struct ctl_sources *s, int argc, char **argv, const char *command);
void ctl_inputs_free(struct ctl_inputs *in);
/* The one TFJob of the -f sources (then released) and the file that held it ("-" for standard
 * input; free() it). Inputs holding none or several are refused, naming each with its file and
 * line, then `why` ("the input holds 2 TFJobs: tfjob/a (x.yaml:1), ...; WHY"). EXIT_*. */
int ctl_inputs_one_job(tfjob_job **job, char **file, struct ctl_sources *s, const char *command, const char *why);
/* The job's name, else its generateName, else "(unnamed)". */
const char *ctl_job_label(const tfjob_job *job);
/* "FILE:LINE: tfjob/NAME: " of a document, as the results of -f inputs are prefixed. */
void ctl_doc_prefix(FILE *out, const struct ctl_doc *d);
/*
 * Print the field errors of a document, one a line after prefix: "FILE:LINE:COLUMN: " where the
 * field is written in its text, else ctl_doc_prefix(); then "tfjob/NAME: " for -f documents, then
 * the message.
 */
void ctl_print_doc_errors(FILE *out, const tfjob_field_errors *errs, const struct ctl_doc *d, const char *prefix);

/* The string member key of a JSON object, or "" when it is absent or not a string; borrowed from obj. */
const char *ctl_str(const json_t *obj, const char *key);

/* Print "tfjobctl: <message>" to stderr (message of err, or text) and return EXIT_USAGE. */
int ctl_fail_err(tfjob_error *err);
int ctl_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parse --compat's value; prints an error and returns false when unknown. */
bool ctl_parse_compat(tfjob_compat *out, const char *value);
/* --gang-scheduler: 'volcano' or 'scheduler-plugins'; false (after the message) otherwise. */
bool ctl_parse_gang(tfjob_gang_scheduler *out, const char *value);

/* Print the job's warnings (tfjob_job_warnings) as kubectl prints an API server's:
 * "Warning: tfjob/NAME: FIELD: text" on stderr. Returns how many, or -1 (reported) on error. */
int ctl_print_warnings(const tfjob_job *job, bool istio_injection);
#define CTL_WARNINGS_AS_ERRORS_USAGE \
	"  --warnings-as-errors  warnings (\"Warning: ...\" on stderr) fail the command, exit 1\n"

/* The entries of dir whose name ends in one of the suffixes (NULL-terminated; the name is more
 * than the suffix, and does not start with '.'), in byte order: *out an array of count names
 * (each, and the array, released with free()). Reports errors; 0 or EXIT_USAGE. */
int ctl_list_dir(char ***out, size_t *count, const char *dir, const char *const *suffixes);
void ctl_free_names(char **names, size_t count);

/* Print a string the library allocated, then free it. */
void ctl_print_owned(char *text);
/* tfjob_write_cb writing to standard output; non-zero on a write error. */
int ctl_write_stdout(const char *data, size_t len, void *payload);

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

/* A duration as kubectl takes it (--request-timeout, --since): a number of seconds, or a Go
 * duration such as 1m30s or 500ms, below 10^12 ms. 1 with *out set, 0 when it is not one. */
int ctl_parse_duration_ms(long *out, const char *s);
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
int cmd_diagnose(int argc, char **argv);
void usage_diagnose(FILE *out);
/* tfjobctl get --run-dir DIR: a local run's state (local_view.c). */
int cmd_get_run_dir(int argc, char **argv);
void usage_get_run_dir(FILE *out);
/* tfjobctl completion bash|zsh|fish: a completion script made from the commands' help
 * (cmd_completion.c). */
int cmd_completion(int argc, char **argv);
void usage_completion(FILE *out);
/* main.c's table of commands, in the order of tfjobctl --help (read by cmd_completion.c). */
extern const struct command *const ctl_commands;
extern const size_t ctl_command_count;

#endif
