/*
 * tfjobctl validate [--old OLD] [--compat C] [--strict=BOOL] [-o json] FILE | -f FILE...
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
	        "usage: tfjobctl validate [--old OLD] [--compat C] [--strict=BOOL] [-o json] FILE\n"
	        "       tfjobctl validate [--old OLD] [--compat C] [--strict=BOOL] [-o json] -f FILE|DIR|- [-f ...]\n\n"
	        "Validate every TFJob in FILE as the API server (CRD schema) and the training-operator\n"
	        "admission webhook would, on create, or on update when --old gives the stored object.\n"
	        "With -f, one result per TFJob: \"tfjob/NAME valid\", or a line per error\n"
	        "\"FILE:LINE:COLUMN: tfjob/NAME: FIELD: ...\" (where the field is written), else\n"
	        "\"FILE:LINE: tfjob/NAME: FIELD: ...\" (LINE: where its document starts).\n"
	        "FILE's errors read \"FILE:LINE:COLUMN: FIELD: ...\", or \"FILE: FIELD: ...\"; when FILE\n"
	        "holds several TFJobs, each error starts with its TFJob: TFJob \"NAME\": FILE:...\n\n"
	        "  -f, --filename F  a file, a directory (its .yaml, .yml and .json files, in name order)\n"
	        "                  or '-' for standard input; repeatable; multi-document YAML streams\n"
	        "  --old OLD       the stored TFJob: also apply the update rules (immutable fields)\n"
	        "  --istio-injection  warn as for a namespace labelled istio-injection=enabled\n"
	        CTL_WARNINGS_AS_ERRORS_USAGE
	        "  --compat C      'documented' (default) or 'training-operator-1.9'\n"
	        "  --strict=BOOL   true (default): a field the CRD schema does not declare is an error\n"
	        "                  (FieldValueNotSupported, with a \"did you mean\"), as kubectl's\n"
	        "                  fieldValidation=Strict has the API server refuse it; false: allowed\n"
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

/* The text result of a document: the -f form's "tfjob/NAME valid" or "FILE:LINE:COLUMN: tfjob/NAME: error"
 * lines, or the positional FILE's "FILE: TFJob NAME is valid" / "FILE:LINE:COLUMN: error" (its line is 0). */
static void print_text(const tfjob_field_errors *errs, const struct ctl_doc *d, size_t docs)
{
	size_t n = tfjob_field_errors_count(errs);
	if (n == 0 && d->line)
		printf("tfjob/%s valid\n", ctl_job_label(d->job));
	else if (n == 0)
		printf("%s: TFJob %s is valid\n", d->file, tfjob_job_name(d->job) ? tfjob_job_name(d->job) : "(unnamed)");
	/* A positional FILE holding several TFJobs: each error names its TFJob ('TFJob "b": FILE:...'). */
	char prefix[300] = "";
	if (!d->line && docs > 1)
		snprintf(prefix, sizeof(prefix), "TFJob \"%s\": ", ctl_job_label(d->job));
	ctl_print_doc_errors(stdout, errs, d, prefix);
}

/* Validate one document and print its result; its exit status. */
static int validate_doc(const struct ctl_doc *d, size_t docs, const tfjob_validate_options *opts, bool json,
                        const struct warn_flags *warn)
{
	tfjob_field_errors *errs = NULL;
	tfjob_error *err = NULL;
	if (tfjob_job_validate(&errs, d->job, opts, &err))
		return ctl_fail_err(err);
	int rc = EXIT_OK;
	char *text = NULL;
	if (!json)
		print_text(errs, d, docs);
	else if (tfjob_field_errors_to_json(&text, errs, TFJOB_JSON_COMPACT, &err))
		rc = ctl_fail_err(err);
	else
		ctl_print_owned(text);
	if (rc == EXIT_OK)
		rc = tfjob_field_errors_count(errs) > 0 ? EXIT_NEGATIVE : warn_valid(d->job, errs, warn);
	tfjob_field_errors_free(errs);
	return rc;
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
		{ "strict", optional_argument, NULL, 's' },
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
		int bad = 0;
		switch (ch) {
		case 'f':
			bad = ctl_sources_add(&sources, optarg);
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
			bad = !ctl_parse_compat(&opts.compat, optarg);
			break;
		case 's':
			if (!optarg || !strcmp(optarg, "true"))
				opts.strict = 1;
			else if (!strcmp(optarg, "false"))
				opts.strict = 0;
			else
				bad = ctl_fail("validate: --strict takes true or false, not '%s'", optarg);
			break;
		case 'o':
			if (!strcmp(optarg, "json"))
				json = true;
			else if (strcmp(optarg, "text"))
				bad = ctl_fail("validate: unknown output format '%s' (expected json or text)", optarg);
			break;
		case ':':
			bad = ctl_fail("validate: option '%s' needs a value", argv[optind - 1]);
			break;
		default:
			bad = ctl_fail("validate: unknown option '%s' (see tfjobctl validate --help)", argv[optind - 1]);
			break;
		}
		if (bad) {
			free(sources.paths);
			return EXIT_USAGE;
		}
	}
	tfjob_job *old = NULL;
	if (old_path && ctl_load_job(&old, old_path)) {
		free(sources.paths);
		return EXIT_USAGE;
	}
	opts.old = old;
	struct ctl_inputs in = { 0 };
	int status = ctl_inputs_of_command(&in, &sources, argc, argv, "validate");
	for (size_t i = 0; i < in.count; i++) {
		int rc = validate_doc(&in.docs[i], in.count, &opts, json, &warn);
		if (rc > status)
			status = rc;
	}
	ctl_inputs_free(&in);
	tfjob_job_free(old);
	return status;
}
