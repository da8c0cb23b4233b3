/*
 * tfjobctl default [--compat C] FILE
 * SPDX-License-Identifier: Apache-2.0
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "tfjobctl.h"

void usage_default(FILE *out)
{
	fprintf(out,
	        "usage: tfjobctl default [--compat C] FILE\n\n"
	        "Print each TFJob of FILE with the TFJob defaults applied, as JSON. Fields the defaults do\n"
	        "not touch (pod templates, unknown fields) are kept as they are.\n\n"
	        "  --compat C   'documented' (default; cleanPodPolicy Running) or 'training-operator-1.9'\n"
	        "               (cleanPodPolicy None)\n\n"
	        "Exit status: 0 ok, 2 usage or input error (including fields of the wrong JSON type).\n");
}

int cmd_default(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "compat", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	tfjob_default_options opts = TFJOB_DEFAULT_OPTIONS_INIT;
	int ch;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		if (ch == 'c') {
			if (!ctl_parse_compat(&opts.compat, optarg))
				return EXIT_USAGE;
		} else if (ch == ':') {
			return ctl_fail("default: option '%s' needs a value", argv[optind - 1]);
		} else {
			return ctl_fail("default: unknown option '%s' (see tfjobctl default --help)", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return ctl_fail("default: expected exactly one FILE (see tfjobctl default --help)");
	tfjob_job **jobs = NULL;
	size_t count = 0;
	if (ctl_load_jobs(&jobs, &count, argv[optind]))
		return EXIT_USAGE;
	int status = EXIT_OK;
	for (size_t i = 0; i < count; i++) {
		tfjob_error *err = NULL;
		char *text = NULL;
		if (tfjob_job_apply_defaults(jobs[i], &opts, &err) || tfjob_job_to_json(&text, jobs[i], TFJOB_JSON_PRETTY, &err)) {
			/* The job no longer knows its file: name it here ("FILE: field: detail"). */
			fprintf(stderr, "tfjobctl: %s: %s\n", argv[optind], tfjob_error_message(err));
			tfjob_error_free(err);
			status = EXIT_USAGE;
			break;
		}
		ctl_print_owned(text);
	}
	tfjob_job_array_free(jobs, count);
	return status;
}
