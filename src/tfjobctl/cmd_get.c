/*
 * tfjobctl get [NAME] [-o json|yaml|wide] [--kubeconfig F] [--context C] [-n NS]
 * SPDX-License-Identifier: Apache-2.0
 */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cluster.h"

void usage_get(FILE *out)
{
	fprintf(out,
	        "usage: tfjobctl get [NAME] [-o json|yaml|wide] [--kubeconfig F] [--context C] [-n NS]\n\n"
	        "Show the TFJobs of a namespace (or the one named) from the cluster, as kubectl would:\n"
	        "a table NAME STATE AGE (wide: also the replicas and the clean pod policy), or the objects.\n\n"
	        "  -o, --output F  'json', 'yaml' or 'wide' (default: the table)\n"
	        "  -A, --all-namespaces  every namespace\n" CTL_CLUSTER_USAGE "\n"
	        "Exit status: 0 ok, 1 the server answered with an error (e.g. NotFound), 2 usage,\n"
	        "configuration or connection error.\n");
}

static void replicas_summary(char *buf, size_t size, const json_t *job)
{
	buf[0] = '\0';
	const char *type;
	json_t *spec;
	json_object_foreach(json_object_get(json_object_get(job, "spec"), "tfReplicaSpecs"), type, spec) {
		char part[128];
		json_t *r = json_object_get(spec, "replicas");
		snprintf(part, sizeof(part), "%s%s:%lld", buf[0] ? "," : "", type, r ? (long long)json_integer_value(r) : 1LL);
		strncat(buf, part, size - strlen(buf) - 1);
	}
}

static void print_table(const json_t *items, int wide, int all_ns)
{
	time_t now = time(NULL);
	if (json_array_size(items) == 0) {
		fprintf(stderr, "No resources found.\n");
		return;
	}
	if (all_ns)
		printf("%-16s ", "NAMESPACE");
	printf("%-32s %-12s %-8s%s\n", "NAME", "STATE", "AGE", wide ? " REPLICAS                 CLEAN-POD-POLICY" : "");
	size_t i;
	json_t *job;
	json_array_foreach(items, i, job) {
		const json_t *meta = json_object_get(job, "metadata");
		char age[32];
		ctl_age(age, sizeof(age), json_string_value(json_object_get(meta, "creationTimestamp")), now);
		if (all_ns)
			printf("%-16s ", json_string_value(json_object_get(meta, "namespace")));
		printf("%-32s %-12s %-8s", json_string_value(json_object_get(meta, "name")), ctl_job_state(job), age);
		if (wide) {
			char reps[256];
			replicas_summary(reps, sizeof(reps), job);
			const char *cpp = json_string_value(
				json_object_get(json_object_get(json_object_get(job, "spec"), "runPolicy"), "cleanPodPolicy"));
			printf(" %-24s %s", reps, cpp ? cpp : "<default>");
		}
		printf("\n");
	}
}

static int show(const char *text, const char *format, int is_list, int all_ns)
{
	json_t *v = ctl_parse_json(text);
	if (!v)
		return EXIT_USAGE;
	if (format && !strcmp(format, "json"))
		ctl_print_json(stdout, v);
	else if (format && !strcmp(format, "yaml"))
		ctl_print_yaml(stdout, v);
	else if (is_list)
		print_table(json_object_get(v, "items"), format != NULL, all_ns);
	else {
		json_t *one = json_array();
		json_array_append(one, v);
		print_table(one, format != NULL, 0);
		json_decref(one);
	}
	json_decref(v);
	return EXIT_OK;
}

int cmd_get(int argc, char **argv)
{
	static const struct option longopts[] = {
		CTL_CLUSTER_LONGOPTS,
		{ "output", required_argument, NULL, 'o' },
		{ "all-namespaces", no_argument, NULL, 'A' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl_cluster cl = { 0 };
	const char *format = NULL;
	int all_ns = 0, ch;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":o:n:A", longopts, NULL)) != -1) {
		if (ctl_cluster_option(&cl, ch, optarg))
			continue;
		if (ch == 'o') {
			if (strcmp(optarg, "json") && strcmp(optarg, "yaml") && strcmp(optarg, "wide"))
				return ctl_fail("get: unknown output format '%s' (expected json, yaml or wide)", optarg);
			format = optarg;
		} else if (ch == 'A') {
			all_ns = 1;
		} else if (ch == ':') {
			return ctl_fail("get: option '%s' needs a value", argv[optind - 1]);
		} else {
			return ctl_fail("get: unknown option '%s' (see tfjobctl get --help)", argv[optind - 1]);
		}
	}
	if (argc - optind > 1)
		return ctl_fail("get: expected at most one NAME (see tfjobctl get --help)");
	const char *name = optind < argc ? argv[optind] : NULL;
	tfjob_transport *t;
	int rc = ctl_connect(&t, &cl);
	if (rc)
		return rc;
	char *text = NULL;
	tfjob_error *err = NULL;
	if (name)
		rc = tfjob_transport_get(&text, t, &ctl_tfjobs, NULL, name, &err);
	else
		rc = tfjob_transport_list(&text, t, &ctl_tfjobs, all_ns ? "" : NULL, NULL, &err);
	rc = rc ? ctl_api_fail(err) : show(text, format, name == NULL, all_ns);
	tfjob_free(text);
	ctl_disconnect(t);
	return rc;
}
