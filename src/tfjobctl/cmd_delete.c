/*
 * tfjobctl delete NAME...|-f FILE... [--kubeconfig F] [--context C] [-n NS]
 * SPDX-License-Identifier: Apache-2.0
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connection.h"

void usage_delete(FILE *out)
{
	fprintf(out,
	        "usage: tfjobctl delete NAME...|-f FILE... [--cascade background|foreground|orphan]\n"
	        "                       [--ignore-not-found] [--kubeconfig F] [--context C] [-n NS]\n\n"
	        "Delete TFJobs from the cluster. Their pods and services go with them (garbage collection\n"
	        "through ownerReferences) unless --cascade orphan.\n\n"
	        "  -f, --filename F  the TFJobs of a file, a directory (its .yaml, .yml and .json files) or\n"
	        "                  '-', repeatable: each by its name, in its own namespace if it has one\n"
	        "  --cascade P     the propagation policy (default: background; kubectl's legacy 'true' is\n"
	        "                  background, 'false' orphan)\n"
	        "  --ignore-not-found  a TFJob that does not exist is not an error\n" CTL_CLUSTER_USAGE "\n"
	        "Exit status: 0 all deleted, 1 the server refused one (e.g. NotFound), 2 usage,\n"
	        "configuration or connection error.\n");
}

static int delete_all(tfjob_transport *t, const struct ctl_target *targets, size_t n, const tfjob_delete_options *opts,
                      int ignore_not_found)
{
	int status = EXIT_OK;
	for (size_t i = 0; i < n; i++) {
		tfjob_error *err = NULL;
		int drc = tfjob_transport_delete(NULL, t, &ctl_tfjobs, targets[i].ns, targets[i].name, opts, &err);
		if (drc == TFJOB_ENOTFOUND && ignore_not_found) {
			tfjob_error_free(err);
			continue;
		}
		if (drc) {
			int r = ctl_api_fail(err);
			if (r > status)
				status = r;
			continue;
		}
		printf("tfjob.kubeflow.org \"%s\" deleted\n", targets[i].name);
	}
	return status;
}

/* --cascade: kubectl's propagation policies, and its legacy true/false. Reports a bad value. */
static bool parse_cascade(tfjob_delete_options *opts, const char *value)
{
	if (!strcmp(value, "background") || !strcmp(value, "true"))
		opts->propagation = TFJOB_PROPAGATION_BACKGROUND;
	else if (!strcmp(value, "foreground"))
		opts->propagation = TFJOB_PROPAGATION_FOREGROUND;
	else if (!strcmp(value, "orphan") || !strcmp(value, "false"))
		opts->propagation = TFJOB_PROPAGATION_ORPHAN;
	else
		return ctl_fail("delete: unknown --cascade '%s' (background, foreground or orphan)", value) == 0;
	return true;
}

int cmd_delete(int argc, char **argv)
{
	static const struct option longopts[] = {
		CTL_CLUSTER_LONGOPTS,
		{ "cascade", required_argument, NULL, 'c' },
		{ "ignore-not-found", no_argument, NULL, 'I' },
		{ "filename", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl_sources sources = { 0 };
	struct ctl_cluster cl = { 0 };
	tfjob_delete_options opts = TFJOB_DELETE_OPTIONS_INIT;
	opts.propagation = TFJOB_PROPAGATION_BACKGROUND;
	int ch, ignore_not_found = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":n:f:", longopts, NULL)) != -1) {
		if (ctl_cluster_option(&cl, ch, optarg))
			continue;
		int bad = 0;
		if (ch == 'f')
			bad = ctl_sources_add(&sources, ctl_flag_value(optarg));
		else if (ch == 'c')
			bad = !parse_cascade(&opts, optarg);
		else if (ch == 'I')
			ignore_not_found = 1;
		else if (ch == ':')
			bad = ctl_fail("delete: option '%s' needs a value", argv[optind - 1]);
		else
			bad = ctl_fail("delete: unknown option '%s' (see tfjobctl delete --help)", argv[optind - 1]);
		if (bad) {
			free(sources.paths);
			return EXIT_USAGE;
		}
	}
	if (sources.count ? optind < argc : optind >= argc) {
		free(sources.paths);
		return ctl_fail("delete: expected NAMEs or -f, not both, not neither (see tfjobctl delete --help)");
	}
	struct ctl_inputs in = { 0 };
	struct ctl_target *targets = NULL;
	size_t n = 0;
	int status = sources.count ? ctl_inputs_read(&in, &sources) : EXIT_OK;
	if (status == EXIT_OK)
		status = ctl_targets_of(&targets, &n, argc, argv, &in, "delete");
	tfjob_transport *t = NULL;
	if (status == EXIT_OK)
		status = ctl_connect(&t, &cl);
	if (status == EXIT_OK) {
		status = delete_all(t, targets, n, &opts, ignore_not_found);
		ctl_disconnect(t);
	}
	free(targets);
	ctl_inputs_free(&in);
	return status;
}
