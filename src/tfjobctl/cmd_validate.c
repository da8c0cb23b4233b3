/*
 * tfjobctl validate [--old OLD] [--compat C] [-o json] FILE | -f FILE...
 * SPDX-License-Identifier: Apache-2.0
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfjobctl.h"

void usage_validate(FILE *out)
{
	fprintf(out,
	        "usage: tfjobctl validate [--old OLD] [--compat C] [-o json] FILE\n"
	        "       tfjobctl validate [--old OLD] [--compat C] [-o json] -f FILE|DIR|- [-f ...]\n\n"
	        "Validate every TFJob in FILE as the API server (CRD schema) and the training-operator\n"
	        "admission webhook would, on create, or on update when --old gives the stored object.\n"
	        "With -f, one result per TFJob: \"tfjob/NAME valid\", or a line per error\n"
	        "\"FILE:LINE: tfjob/NAME: FIELD: ...\" (LINE: where its document starts).\n\n"
	        "  -f, --filename F  a file, a directory (its .yaml, .yml and .json files, in name order)\n"
	        "                  or '-' for standard input; repeatable; multi-document YAML streams\n"
	        "  --old OLD       the stored TFJob: also apply the update rules (immutable fields)\n"
	        "  --istio-injection  warn as for a namespace labelled istio-injection=enabled\n"
	        CTL_WARNINGS_AS_ERRORS_USAGE
	        "  --compat C      'documented' (default) or 'training-operator-1.9'\n"
	        "  -o, --output F  'text' (default) or 'json':\n"
	        "                  {\"valid\":bool,\"errors\":[{\"field\":...,\"type\":...,\"detail\":...}]}\n"
	        "                  (one line per TFJob when FILE holds several)\n\n"
	        "A valid TFJob may get warnings, on stderr, for what the TFJob docs advise against\n"
	        "(restartPolicy Never, GPUs without cpu/memory requests, the Istio sidecar).\n\n"
	        "Exit status: 0 valid, 1 invalid (or warned, with --warnings-as-errors), 2 usage or input error.\n");
}

struct warn_flags {
	bool istio_injection, as_errors;
};

/* The warnings of a valid job: EXIT_NEGATIVE when there are some and they count as errors. */
static int warn_valid(const tfjob_job *job, const tfjob_field_errors *errs, const struct warn_flags *warn)
{
	if (tfjob_field_errors_count(errs) > 0)
		return EXIT_OK; /* only admitted objects get warnings */
	int n = ctl_print_warnings(job, warn->istio_injection);
	return n < 0 ? EXIT_USAGE : n > 0 && warn->as_errors ? EXIT_NEGATIVE : EXIT_OK;
}

/* The -f form's text: "tfjob/NAME valid", or one line per error named by file and line. */
static void print_doc_result(const tfjob_field_errors *errs, const struct ctl_doc *d)
{
	size_t n = tfjob_field_errors_count(errs);
	if (n == 0)
		printf("tfjob/%s valid\n", ctl_job_label(d->job));
	for (size_t i = 0; i < n; i++) {
		ctl_doc_prefix(stdout, d);
		printf("%s\n", tfjob_field_errors_message(errs, i));
	}
}

static int print_result(const tfjob_field_errors *errs, bool json, const char *path, const tfjob_job *job)
{
	if (json) {
		char *text = NULL;
		tfjob_error *err = NULL;
		if (tfjob_field_errors_to_json(&text, errs, TFJOB_JSON_COMPACT, &err))
			return ctl_fail_err(err);
		ctl_print_owned(text);
		return 0;
	}
	const char *name = tfjob_job_name(job);
	size_t n = tfjob_field_errors_count(errs);
	if (n == 0)
		printf("%s: TFJob %s is valid\n", path, name ? name : "(unnamed)");
	for (size_t i = 0; i < n; i++)
		printf("%s: %s\n", path, tfjob_field_errors_message(errs, i));
	return 0;
}

/* The -f form: every TFJob of the sources, each with its own result; the worst status. */
static int validate_inputs(struct ctl_sources *sources, const tfjob_validate_options *opts, bool json,
                           const struct warn_flags *warn)
{
	struct ctl_inputs in = { 0 };
	int status = ctl_inputs_read(&in, sources);
	for (size_t i = 0; i < in.count; i++) {
		tfjob_field_errors *errs = NULL;
		tfjob_error *err = NULL;
		int rc = EXIT_OK;
		if (tfjob_job_validate(&errs, in.docs[i].job, opts, &err))
			rc = ctl_fail_err(err);
		else if (json)
			rc = print_result(errs, true, NULL, NULL) ? EXIT_USAGE : EXIT_OK;
		else
			print_doc_result(errs, &in.docs[i]);
		if (rc == EXIT_OK && tfjob_field_errors_count(errs) > 0)
			rc = EXIT_NEGATIVE;
		if (rc == EXIT_OK)
			rc = warn_valid(in.docs[i].job, errs, warn);
		if (rc > status)
			status = rc;
		tfjob_field_errors_free(errs);
	}
	ctl_inputs_free(&in);
	return status;
}

int cmd_validate(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "old", required_argument, NULL, 'O' },
		{ "compat", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		{ "filename", required_argument, NULL, 'f' },
		{ "istio-injection", no_argument, NULL, 'I' },
		{ "warnings-as-errors", no_argument, NULL, 'W' },
		{ NULL, 0, NULL, 0 },
	};
	struct warn_flags warn = { false, false };
	struct ctl_sources sources = { 0 };
	tfjob_validate_options opts = TFJOB_VALIDATE_OPTIONS_INIT;
	const char *old_path = NULL;
	bool json = false;
	int ch;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":o:f:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'f':
			if (ctl_sources_add(&sources, optarg))
				return EXIT_USAGE;
			break;
		case 'I':
			warn.istio_injection = true;
			break;
		case 'W':
			warn.as_errors = true;
			break;
		case 'O':
			old_path = optarg;
			break;
		case 'c':
			if (!ctl_parse_compat(&opts.compat, optarg))
				return EXIT_USAGE;
			break;
		case 'o':
			if (!strcmp(optarg, "json"))
				json = true;
			else if (strcmp(optarg, "text"))
				return ctl_fail("validate: unknown output format '%s' (expected json or text)", optarg);
			break;
		case ':':
			return ctl_fail("validate: option '%s' needs a value", argv[optind - 1]);
		default:
			return ctl_fail("validate: unknown option '%s' (see tfjobctl validate --help)", argv[optind - 1]);
		}
	}
	if (sources.count && optind != argc) {
		free(sources.paths);
		return ctl_fail("validate: give FILE or -f, not both (see tfjobctl validate --help)");
	}
	if (!sources.count && optind != argc - 1)
		return ctl_fail("validate: expected exactly one FILE (see tfjobctl validate --help)");

	tfjob_job *old = NULL;
	if (old_path && ctl_load_job(&old, old_path)) {
		free(sources.paths);
		return EXIT_USAGE;
	}
	opts.old = old;
	if (sources.count) {
		int status = validate_inputs(&sources, &opts, json, &warn);
		tfjob_job_free(old);
		return status;
	}
	const char *path = argv[optind];
	tfjob_job **jobs = NULL;
	size_t count = 0;
	if (ctl_load_jobs(&jobs, &count, path)) {
		tfjob_job_free(old);
		return EXIT_USAGE;
	}
	int status = EXIT_OK;
	for (size_t i = 0; i < count && status != EXIT_USAGE; i++) {
		tfjob_field_errors *errs = NULL;
		tfjob_error *err = NULL;
		if (tfjob_job_validate(&errs, jobs[i], &opts, &err)) {
			status = ctl_fail_err(err);
			break;
		}
		int rc = EXIT_OK;
		if (print_result(errs, json, path, jobs[i]))
			rc = EXIT_USAGE;
		else if (tfjob_field_errors_count(errs) > 0)
			rc = EXIT_NEGATIVE;
		else
			rc = warn_valid(jobs[i], errs, &warn);
		if (rc > status)
			status = rc;
		tfjob_field_errors_free(errs);
	}
	tfjob_job_array_free(jobs, count);
	tfjob_job_free(old);
	return status;
}
