/*
 * tfjobctl simulate [--compat C] [--cluster-domain D] [--gang-scheduler G] [--max-steps N] SCENARIO
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfjobctl.h"

void usage_simulate(FILE *out)
{
	fprintf(out,
	        "usage: tfjobctl simulate [--compat C] [--cluster-domain D] [--gang-scheduler G]\n"
	        "                         [--max-steps N] SCENARIO\n\n"
	        "Run SCENARIO (a job and a timeline of pod phase / exit code changes, see docs/simulate.md)\n"
	        "through the planner step by step on an in-memory cluster, and print the condition timeline,\n"
	        "the final status and the events, like kubectl describe.\n\n"
	        "  --compat C          override the scenario's compat: 'documented' or 'training-operator-1.9'\n"
	        "  --cluster-domain D  cluster domain of the addresses in TF_CONFIG\n"
	        "  --gang-scheduler G  gang scheduling: 'volcano' or 'scheduler-plugins' (a PodGroup the\n"
	        "                      in-memory cluster admits as soon as it is created)\n"
	        "  --max-steps N       stop after N reconcile steps (default 1000)\n\n"
	        "Exit status: 0 ok, 2 usage or input error.\n");
}

int cmd_simulate(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "compat", required_argument, NULL, 'c' },
		{ "cluster-domain", required_argument, NULL, 'd' },
		{ "max-steps", required_argument, NULL, 'm' },
		{ "gang-scheduler", required_argument, NULL, 'g' },
		{ NULL, 0, NULL, 0 },
	};
	tfjob_simulate_options opts = TFJOB_SIMULATE_OPTIONS_INIT;
	tfjob_render_options ropts = TFJOB_RENDER_OPTIONS_INIT;
	opts.render = &ropts;
	int ch;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (ch) {
		case 'c':
			if (!ctl_parse_compat(&opts.compat, optarg))
				return EXIT_USAGE;
			opts.override_compat = 1;
			break;
		case 'd':
			ropts.cluster_domain = optarg;
			break;
		case 'g':
			if (!ctl_parse_gang(&ropts.gang_scheduler, optarg))
				return EXIT_USAGE;
			break;
		case 'm': {
			char *end;
			errno = 0;
			unsigned long v = strtoul(optarg, &end, 10);
			if (errno || end == optarg || *end || v == 0 || v > 1000000)
				return ctl_fail("simulate: --max-steps needs an integer from 1 to 1000000, got '%s'", optarg);
			opts.max_steps = (unsigned int)v;
			break;
		}
		case ':':
			return ctl_fail("simulate: option '%s' needs a value", argv[optind - 1]);
		default:
			return ctl_fail("simulate: unknown option '%s' (see tfjobctl simulate --help)", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return ctl_fail("simulate: expected exactly one SCENARIO file (see tfjobctl simulate --help)");
	char *data = NULL;
	size_t len = 0;
	if (ctl_read_file(&data, &len, argv[optind], TFJOB_DEFAULT_MAX_INPUT_BYTES))
		return EXIT_USAGE;
	char *report = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_simulate(&report, data, len, &opts, &err);
	free(data);
	if (rc)
		return ctl_fail_err(err);
	fputs(report, stdout);
	tfjob_free(report);
	return EXIT_OK;
}
