/*
 * tfjobctl validate [--old OLD] [--compat C] [--strict=BOOL] [-o json] FILE
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
	        "usage: tfjobctl validate [--old OLD] [--compat C] [--strict=BOOL] [-o json] FILE\n\n"
	        "Validate every TFJob in FILE as the API server (CRD schema) and the training-operator\n"
	        "admission webhook would, on create, or on update when --old gives the stored object.\n\n"
	        "  --old OLD       the stored TFJob: also apply the update rules (immutable fields)\n"
	        "  --compat C      'documented' (default) or 'training-operator-1.9'\n"
	        "  --strict=BOOL   true (default): a field the CRD schema does not declare is an error\n"
	        "                  (FieldValueNotSupported, with a \"did you mean\"), as kubectl's\n"
	        "                  fieldValidation=Strict has the API server refuse it; false: allowed\n"
	        "  -o, --output F  'text' (default) or 'json':\n"
	        "                  {\"valid\":bool,\"errors\":[{\"field\":...,\"type\":...,\"detail\":...}]}\n"
	        "                  (one line per TFJob when FILE holds several)\n\n"
	        "Exit status: 0 valid, 1 invalid, 2 usage or input error.\n");
}

static int print_result(const tfjob_field_errors *errs, bool json, const struct ctl_source *src, size_t doc,
                        const tfjob_job *job)
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
		printf("%s: TFJob %s is valid\n", src->path, name ? name : "(unnamed)");
	ctl_print_field_errors(stdout, errs, src, doc, "");
	return 0;
}

int cmd_validate(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "old", required_argument, NULL, 'O' },
		{ "compat", required_argument, NULL, 'c' },
		{ "output", required_argument, NULL, 'o' },
		{ "strict", optional_argument, NULL, 's' },
		{ NULL, 0, NULL, 0 },
	};
	tfjob_validate_options opts = TFJOB_VALIDATE_OPTIONS_INIT;
	const char *old_path = NULL;
	bool json = false;
	int ch;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":o:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'O':
			old_path = optarg;
			break;
		case 'c':
			if (!ctl_parse_compat(&opts.compat, optarg))
				return EXIT_USAGE;
			break;
		case 's':
			if (!optarg || !strcmp(optarg, "true"))
				opts.strict = 1;
			else if (!strcmp(optarg, "false"))
				opts.strict = 0;
			else
				return ctl_fail("validate: --strict takes true or false, not '%s'", optarg);
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
	if (optind != argc - 1)
		return ctl_fail("validate: expected exactly one FILE (see tfjobctl validate --help)");
	const char *path = argv[optind];

	tfjob_job *old = NULL;
	if (old_path && ctl_load_job(&old, old_path))
		return EXIT_USAGE;
	opts.old = old;
	tfjob_job **jobs = NULL;
	size_t count = 0;
	struct ctl_source src = { path, NULL, 0 };
	if (ctl_load_jobs_source(&jobs, &count, &src)) {
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
		if (print_result(errs, json, &src, i, jobs[i]))
			status = EXIT_USAGE;
		else if (tfjob_field_errors_count(errs) > 0)
			status = EXIT_NEGATIVE;
		tfjob_field_errors_free(errs);
	}
	tfjob_job_array_free(jobs, count);
	tfjob_job_free(old);
	free(src.text);
	return status;
}
