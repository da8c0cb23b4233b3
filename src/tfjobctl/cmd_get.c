/*
 * tfjobctl get [NAME...] [-o json|yaml|wide|name] [-l SELECTOR] [-A] [--kubeconfig F] [--context C] [-n NS]
 * SPDX-License-Identifier: Apache-2.0
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "connection.h"

void usage_get(FILE *out)
{
	fprintf(out,
	        "usage: tfjobctl get [NAME...|-f FILE...] [-o json|yaml|wide|name] [-l SELECTOR] [-A]\n"
	        "                    [--chunk-size N] [--kubeconfig F] [--context C] [-n NS]\n\n"
	        "Show the TFJobs of a namespace (or those named) from the cluster, as kubectl would: a\n"
	        "table NAME STATE AGE (wide: also the replicas, the clean pod policy and runPolicy.managedBy),\n"
	        "the objects (one object for one NAME, else a List), or their names\n"
	        "(tfjob.kubeflow.org/NAME). A TFJob that runPolicy.managedBy hands to another controller\n"
	        "and that has no status yet gets a note on stderr saying so.\n\n"
	        "  -o, --output F  'json', 'yaml', 'wide' or 'name' (default: the table)\n"
	        "  -f, --filename F  the TFJobs of a file, a directory (its .yaml, .yml and .json files) or\n"
	        "                  '-', repeatable: each by its name, in its own namespace if it has one\n"
	        "  -l, --selector S  a label selector (e.g. team=ml,tier!=x)\n"
	        "  -A, --all-namespaces  every namespace\n"
	        "  --show-managed-fields  keep metadata.managedFields in json and yaml output\n"
	        "  --no-headers    no header line in the table\n"
	        "  --chunk-size N  list in pages of N TFJobs, as kubectl (default 500; 0: one request)\n"
	        CTL_CLUSTER_USAGE "\n"
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

static void print_table(const json_t *items, int wide, int all_ns, int no_headers)
{
	time_t now = time(NULL);
	struct ctl_table tb = { 0, (size_t)(3 + (all_ns ? 1 : 0) + (wide ? 3 : 0)), NULL };
	const char *head[CTL_TABLE_MAX_COLS];
	size_t n = 0;
	if (all_ns)
		head[n++] = "NAMESPACE";
	head[n++] = "NAME";
	head[n++] = "STATE";
	head[n++] = "AGE";
	if (wide) {
		head[n++] = "REPLICAS";
		head[n++] = "CLEAN-POD-POLICY";
		head[n++] = "MANAGED-BY";
	}
	if (!no_headers)
		ctl_table_add(&tb, head);
	size_t i;
	json_t *job;
	json_array_foreach(items, i, job) {
		const json_t *meta = json_object_get(job, "metadata");
		char age[32], reps[256];
		ctl_age(age, sizeof(age), json_string_value(json_object_get(meta, "creationTimestamp")), now);
		const char *row[CTL_TABLE_MAX_COLS];
		n = 0;
		if (all_ns)
			row[n++] = json_string_value(json_object_get(meta, "namespace"));
		row[n++] = json_string_value(json_object_get(meta, "name"));
		row[n++] = ctl_job_state(job);
		row[n++] = age;
		if (wide) {
			replicas_summary(reps, sizeof(reps), job);
			const char *cpp = json_string_value(
				json_object_get(json_object_get(json_object_get(job, "spec"), "runPolicy"), "cleanPodPolicy"));
			row[n++] = reps;
			row[n++] = cpp ? cpp : "<default>";
			const char *m = json_string_value(
				json_object_get(json_object_get(json_object_get(job, "spec"), "runPolicy"), "managedBy"));
			row[n++] = m && m[0] ? m : "<default>";
		}
		ctl_table_add(&tb, row);
	}
	ctl_table_print(stdout, &tb);
	/* An empty STATE has a reason to show: another controller runs the job (runPolicy.managedBy). */
	json_array_foreach(items, i, job) {
		const char *manager = ctl_job_foreign_manager(job);
		if (manager && !ctl_job_state(job)[0])
			fprintf(stderr, "Note: tfjob/%s is managed by %s (spec.runPolicy.managedBy): the training operator "
			                "leaves it to that controller, which has written no status yet\n",
			        json_string_value(json_object_get(json_object_get(job, "metadata"), "name")), manager);
	}
}

/* As kubectl (without --show-managed-fields): no metadata.managedFields; kind and apiVersion set. */
static void tidy(json_t *obj, int show_managed_fields)
{
	if (!show_managed_fields)
		json_object_del(json_object_get(obj, "metadata"), "managedFields");
	if (!json_object_get(obj, "apiVersion"))
		json_object_set_new(obj, "apiVersion", json_string("kubeflow.org/v1"));
	if (!json_object_get(obj, "kind"))
		json_object_set_new(obj, "kind", json_string("TFJob"));
}

struct get_args {
	const char *format; /* NULL: the table */
	int all_ns;
	int show_managed_fields;
	int no_headers;
	const char *selector;
	int64_t chunk_size; /* items per list request, as kubectl's --chunk-size (0: all at once) */
};

/*
 * Every TFJob of the namespace (or all, ns ""), page by page as kubectl lists them, so that a
 * large collection never comes back as one huge answer. The items in *out (a new array).
 */
static int list_all(json_t **out, tfjob_transport *t, const char *ns, const struct get_args *a)
{
	json_t *items = json_array();
	char *token = NULL;
	int status = EXIT_OK;
	do {
		char *text = NULL;
		tfjob_error *err = NULL;
		tfjob_list_options lo = TFJOB_LIST_OPTIONS_INIT;
		lo.label_selector = a->selector;
		lo.limit = a->chunk_size;
		lo.continue_token = token;
		int rc = tfjob_transport_list(&text, t, &ctl_tfjobs, ns, &lo, &err);
		free(token);
		token = NULL;
		if (rc) {
			status = ctl_api_fail(err);
			break;
		}
		json_t *list = ctl_parse_json(text);
		tfjob_free(text);
		if (!list) {
			status = EXIT_USAGE;
			break;
		}
		json_t *page = json_object_get(list, "items");
		if (json_is_array(page))
			json_array_extend(items, page);
		const char *next = json_string_value(json_object_get(json_object_get(list, "metadata"), "continue"));
		if (next && next[0])
			token = strdup(next);
		json_decref(list);
	} while (token);
	if (status) {
		json_decref(items);
		items = NULL;
	}
	*out = items;
	return status;
}

/*
 * Print the objects. single: one NAME was asked for (the object itself, not a List); listed: the
 * objects come from a list of the namespace (none found is "No resources found ...").
 */
static void show(json_t *items, const struct get_args *a, int single, int listed, const char *ns)
{
	const char *f = a->format;
	if (f && (!strcmp(f, "json") || !strcmp(f, "yaml"))) {
		size_t i;
		json_t *item;
		json_array_foreach(items, i, item)
			tidy(item, a->show_managed_fields);
		json_t *v;
		if (single)
			v = json_incref(json_array_get(items, 0));
		else /* kubectl's wrapper of what it got, whatever kind of list the server sent */
			v = ctl_list_of(items);
		if (!strcmp(f, "json"))
			ctl_print_json(stdout, v);
		else
			ctl_print_yaml(stdout, v);
		json_decref(v);
		return;
	}
	if (json_array_size(items) == 0) {
		if (listed) {
			if (a->all_ns)
				fprintf(stderr, "No resources found\n");
			else
				fprintf(stderr, "No resources found in %s namespace.\n", ns);
		}
		return;
	}
	if (f && !strcmp(f, "name")) {
		size_t i;
		json_t *item;
		json_array_foreach(items, i, item) {
			tidy(item, a->show_managed_fields);
			ctl_print_name(stdout, item);
		}
		return;
	}
	print_table(items, f != NULL, a->all_ns, a->no_headers);
}

/* The TFJobs named (targets), else the list, printed as -o asks. */
static int get_and_show(const struct ctl_cluster *cl, const struct ctl_target *targets, size_t names,
                        const struct get_args *a)
{
	tfjob_transport *t;
	int rc = ctl_connect(&t, cl);
	if (rc)
		return rc;
	const char *ns = tfjob_transport_namespace(t);
	json_t *items = NULL;
	int status = EXIT_OK;
	if (names == 0) {
		status = list_all(&items, t, a->all_ns ? "" : NULL, a);
		if (items)
			show(items, a, 0, 1, ns);
	} else {
		/* Each NAME in turn, as kubectl: what was found is printed, each error reported. */
		items = json_array();
		for (size_t i = 0; i < names; i++) {
			char *text = NULL;
			tfjob_error *err = NULL;
			if (tfjob_transport_get(&text, t, &ctl_tfjobs, targets[i].ns, targets[i].name, &err)) {
				int r = ctl_api_fail(err);
				if (r > status)
					status = r;
			} else {
				json_t *obj = ctl_parse_json(text);
				if (obj)
					json_array_append_new(items, obj);
				else if (status < EXIT_USAGE)
					status = EXIT_USAGE;
			}
			tfjob_free(text);
		}
		/* Nothing found: nothing printed, but an empty List for json/yaml of several NAMEs. */
		if (json_array_size(items) > 0 ||
		    (names > 1 && a->format && (!strcmp(a->format, "json") || !strcmp(a->format, "yaml"))))
			show(items, a, names == 1, 0, ns);
	}
	json_decref(items);
	ctl_disconnect(t);
	return status;
}

/* NAMEs or -f, not both; neither with -A or -l (kubectl's rules). */
static int check_names(int argc, const struct ctl_sources *sources, const struct get_args *a)
{
	bool named = optind < argc || sources->count;
	if (optind < argc && sources->count)
		return ctl_fail("get: give NAMEs or -f, not both (see tfjobctl get --help)");
	if (named && a->all_ns)
		return ctl_fail("get: a resource cannot be retrieved by name across all namespaces");
	if (named && a->selector)
		return ctl_fail("get: name cannot be provided when a selector is specified");
	return EXIT_OK;
}

int cmd_get(int argc, char **argv)
{
	static const struct option longopts[] = {
		CTL_CLUSTER_LONGOPTS,
		{ "output", required_argument, NULL, 'o' },
		{ "selector", required_argument, NULL, 'l' },
		{ "all-namespaces", no_argument, NULL, 'A' },
		{ "show-managed-fields", no_argument, NULL, 'M' },
		{ "no-headers", no_argument, NULL, 'H' },
		{ "chunk-size", required_argument, NULL, 'K' },
		{ "filename", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl_cluster cl = { 0 };
	struct ctl_sources sources = { 0 };
	struct get_args a = { .chunk_size = 500 };
	int ch;
	opterr = 0;
	int bad = EXIT_OK;
	while (!bad && (ch = getopt_long(argc, argv, ":o:n:l:Af:", longopts, NULL)) != -1) {
		if (ctl_cluster_option(&cl, ch, optarg))
			continue;
		if (ch == 'f') {
			if (ctl_sources_add(&sources, ctl_flag_value(optarg)))
				bad = EXIT_USAGE;
		} else if (ch == 'o') {
			optarg = (char *)ctl_flag_value(optarg);
			if (strcmp(optarg, "json") && strcmp(optarg, "yaml") && strcmp(optarg, "wide") && strcmp(optarg, "name"))
				bad = ctl_fail("get: unknown output format '%s' (expected json, yaml, wide or name)", optarg);
			a.format = optarg;
		} else if (ch == 'l') {
			a.selector = ctl_flag_value(optarg);
		} else if (ch == 'A') {
			a.all_ns = 1;
		} else if (ch == 'M') {
			a.show_managed_fields = 1;
		} else if (ch == 'H') {
			a.no_headers = 1;
		} else if (ch == 'K') {
			char *end;
			optarg = (char *)ctl_flag_value(optarg);
			long long n = strtoll(optarg, &end, 10);
			if (!optarg[0] || *end || n < 0)
				bad = ctl_fail("get: --chunk-size must be a number of items, 0 or more (got '%s')", optarg);
			a.chunk_size = n;
		} else if (ch == ':') {
			bad = ctl_fail("get: option '%s' needs a value", argv[optind - 1]);
		} else {
			bad = ctl_fail("get: unknown option '%s' (see tfjobctl get --help)", argv[optind - 1]);
		}
	}
	if (bad) {
		free(sources.paths);
		return bad;
	}
	int status = check_names(argc, &sources, &a);
	struct ctl_inputs in = { 0 };
	struct ctl_target *targets = NULL;
	size_t names = 0;
	if (status == EXIT_OK && sources.count)
		status = ctl_inputs_read(&in, &sources);
	if (status == EXIT_OK && (in.count || optind < argc))
		status = ctl_targets_of(&targets, &names, argc, argv, &in, "get");
	if (status == EXIT_OK)
		status = get_and_show(&cl, targets, names, &a);
	free(targets);
	ctl_inputs_free(&in);
	free(sources.paths);
	return status;
}
