/*
 * tfjobctl delete NAME... [--kubeconfig F] [--context C] [-n NS]
 * SPDX-License-Identifier: Apache-2.0
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cluster.h"

void usage_delete(FILE *out)
{
	fprintf(out,
	        "usage: tfjobctl delete NAME... [--cascade background|foreground|orphan] [--ignore-not-found]\n"
	        "                       [--kubeconfig F] [--context C] [-n NS]\n\n"
	        "Delete TFJobs from the cluster. Their pods and services go with them (garbage collection\n"
	        "through ownerReferences) unless --cascade orphan.\n\n"
	        "  --cascade P     the propagation policy (default: background; kubectl's legacy 'true' is\n"
	        "                  background, 'false' orphan)\n"
	        "  --ignore-not-found  a TFJob that does not exist is not an error\n" CTL_CLUSTER_USAGE "\n"
	        "Exit status: 0 all deleted, 1 the server refused one (e.g. NotFound), 2 usage,\n"
	        "configuration or connection error.\n");
}

int cmd_delete(int argc, char **argv)
{
	static const struct option longopts[] = {
		CTL_CLUSTER_LONGOPTS,
		{ "cascade", required_argument, NULL, 'c' },
		{ "ignore-not-found", no_argument, NULL, 'I' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl_cluster cl = { 0 };
	tfjob_delete_options opts = TFJOB_DELETE_OPTIONS_INIT;
	opts.propagation = TFJOB_PROPAGATION_BACKGROUND;
	int ch, ignore_not_found = 0;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":n:", longopts, NULL)) != -1) {
		if (ctl_cluster_option(&cl, ch, optarg))
			continue;
		if (ch == 'c') {
			if (!strcmp(optarg, "background") || !strcmp(optarg, "true"))
				opts.propagation = TFJOB_PROPAGATION_BACKGROUND;
			else if (!strcmp(optarg, "foreground"))
				opts.propagation = TFJOB_PROPAGATION_FOREGROUND;
			else if (!strcmp(optarg, "orphan") || !strcmp(optarg, "false"))
				opts.propagation = TFJOB_PROPAGATION_ORPHAN;
			else
				return ctl_fail("delete: unknown --cascade '%s' (background, foreground or orphan)", optarg);
		} else if (ch == 'I') {
			ignore_not_found = 1;
		} else if (ch == ':') {
			return ctl_fail("delete: option '%s' needs a value", argv[optind - 1]);
		} else {
			return ctl_fail("delete: unknown option '%s' (see tfjobctl delete --help)", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return ctl_fail("delete: expected a NAME (see tfjobctl delete --help)");
	for (int i = optind; i < argc; i++)
		if (!ctl_object_name(argv[i], "delete"))
			return EXIT_USAGE;
	tfjob_transport *t;
	int rc = ctl_connect(&t, &cl);
	if (rc)
		return rc;
	int status = EXIT_OK;
	for (int i = optind; i < argc; i++) {
		tfjob_error *err = NULL;
		const char *name = ctl_object_name(argv[i], "delete");
		int drc = tfjob_transport_delete(NULL, t, &ctl_tfjobs, NULL, name, &opts, &err);
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
		printf("tfjob.kubeflow.org \"%s\" deleted\n", name);
	}
	ctl_disconnect(t);
	return status;
}
