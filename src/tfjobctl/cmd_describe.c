/*
 * tfjobctl describe NAME [--kubeconfig F] [--context C] [-n NS]
 * SPDX-License-Identifier: Apache-2.0
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"

void usage_describe(FILE *out)
{
	fprintf(out,
	        "usage: tfjobctl describe NAME [--kubeconfig F] [--context C] [-n NS]\n\n"
	        "Describe a TFJob as kubectl describe does: metadata, replica specs, run policy,\n"
	        "conditions, replica statuses and the events recorded about it.\n\n" CTL_CLUSTER_USAGE "\n"
	        "Exit status: 0 ok, 1 the server answered with an error (e.g. NotFound), 2 usage,\n"
	        "configuration or connection error.\n");
}

static const char *str(const json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));
	return s ? s : "";
}

static void print_map(const char *title, const json_t *map)
{
	printf("%-13s", title);
	if (json_object_size(map) == 0) {
		printf("<none>\n");
		return;
	}
	const char *key;
	json_t *v;
	int first = 1;
	json_object_foreach((json_t *)map, key, v) {
		printf("%*s%s=%s\n", first ? 0 : 13, "", key, json_is_string(v) ? json_string_value(v) : "");
		first = 0;
	}
}

static void print_spec(const json_t *job)
{
	const json_t *spec = json_object_get(job, "spec");
	printf("Spec:\n");
	const json_t *rp = json_object_get(spec, "runPolicy");
	if (rp) {
		printf("  Run Policy:\n");
		const char *key;
		json_t *v;
		json_object_foreach((json_t *)rp, key, v) {
			char *s = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
			printf("    %s: %s\n", key, json_is_string(v) ? json_string_value(v) : (s ? s : ""));
			free(s);
		}
	}
	if (json_object_get(spec, "successPolicy"))
		printf("  Success Policy:  %s\n", str(spec, "successPolicy"));
	printf("  TF Replica Specs:\n");
	const char *type;
	json_t *rs;
	json_object_foreach(json_object_get(spec, "tfReplicaSpecs"), type, rs) {
		json_t *r = json_object_get(rs, "replicas");
		printf("    %s:\n      Replicas:        %lld\n      Restart Policy:  %s\n", type,
		       r ? (long long)json_integer_value(r) : 1LL, json_object_get(rs, "restartPolicy") ? str(rs, "restartPolicy") : "Never");
		size_t i;
		json_t *c;
		json_array_foreach(json_object_get(json_object_get(json_object_get(rs, "template"), "spec"), "containers"), i, c)
			printf("      Container %s:  %s\n", str(c, "name"), str(c, "image"));
	}
}

static void print_status(const json_t *job)
{
	const json_t *st = json_object_get(job, "status");
	printf("Status:\n");
	const json_t *conds = json_object_get(st, "conditions");
	if (json_array_size(conds)) {
		printf("  Conditions:\n    %-10s %-7s %-22s %-21s %s\n", "Type", "Status", "Reason", "Last Transition Time",
		       "Message");
		size_t i;
		json_t *c;
		json_array_foreach(conds, i, c)
			printf("    %-10s %-7s %-22s %-21s %s\n", str(c, "type"), str(c, "status"), str(c, "reason"),
			       str(c, "lastTransitionTime"), str(c, "message"));
	}
	const json_t *rs = json_object_get(st, "replicaStatuses");
	if (json_object_size(rs)) {
		printf("  Replica Statuses:\n");
		const char *type;
		json_t *r;
		json_object_foreach((json_t *)rs, type, r)
			printf("    %s:  Active: %lld  Succeeded: %lld  Failed: %lld\n", type,
			       (long long)json_integer_value(json_object_get(r, "active")),
			       (long long)json_integer_value(json_object_get(r, "succeeded")),
			       (long long)json_integer_value(json_object_get(r, "failed")));
	}
	if (json_object_get(st, "startTime"))
		printf("  Start Time:       %s\n", str(st, "startTime"));
	if (json_object_get(st, "completionTime"))
		printf("  Completion Time:  %s\n", str(st, "completionTime"));
}

/* An event's time: lastTimestamp, else eventTime, else its creation. */
static const char *event_time(const json_t *e)
{
	const char *ts = str(e, "lastTimestamp");
	if (!ts[0])
		ts = str(e, "eventTime");
	if (!ts[0])
		ts = str(json_object_get(e, "metadata"), "creationTimestamp");
	return ts;
}

static int by_time(const void *a, const void *b)
{
	/* RFC 3339 times in UTC compare as strings (eventTime's fraction sorts after the second). */
	return strcmp(event_time(*(json_t *const *)a), event_time(*(json_t *const *)b));
}

static void print_events(const json_t *list)
{
	const json_t *items = json_object_get(list, "items");
	size_t n = json_array_size(items);
	printf("Events:");
	json_t **sorted = n ? calloc(n, sizeof(json_t *)) : NULL;
	if (!sorted) {
		printf("  <none>\n");
		return;
	}
	printf("\n  %-8s %-24s %-8s %-20s %s\n  %-8s %-24s %-8s %-20s %s\n", "Type", "Reason", "Age", "From", "Message",
	       "----", "------", "----", "----", "-------");
	for (size_t i = 0; i < n; i++)
		sorted[i] = json_array_get(items, i);
	/* Oldest first, as kubectl describe lists them. */
	qsort(sorted, n, sizeof(json_t *), by_time);
	time_t now = time(NULL);
	for (size_t i = 0; i < n; i++) {
		const json_t *e = sorted[i];
		char age[32], first[32], shown[96];
		ctl_age(age, sizeof(age), event_time(e), now);
		json_int_t count = json_integer_value(json_object_get(e, "count"));
		const char *first_ts = str(e, "firstTimestamp");
		if (count > 1 && first_ts[0]) {
			ctl_age(first, sizeof(first), first_ts, now);
			snprintf(shown, sizeof(shown), "%s (x%lld over %s)", age, (long long)count, first);
		} else {
			snprintf(shown, sizeof(shown), "%s", age);
		}
		/* From: the source component, else the reporting controller (events.k8s.io events). */
		const char *from = str(json_object_get(e, "source"), "component");
		if (!from[0])
			from = str(e, "reportingComponent");
		if (!from[0])
			from = str(e, "reportingController");
		printf("  %-8s %-24s %-8s %-20s %s\n", str(e, "type"), str(e, "reason"), shown, from, str(e, "message"));
	}
	free(sorted);
}

static void describe(const json_t *job, const json_t *events)
{
	const json_t *meta = json_object_get(job, "metadata");
	printf("%-13s%s\n%-13s%s\n", "Name:", str(meta, "name"), "Namespace:", str(meta, "namespace"));
	print_map("Labels:", json_object_get(meta, "labels"));
	print_map("Annotations:", json_object_get(meta, "annotations"));
	printf("%-13s%s\n%-13s%s\n", "API Version:", str(job, "apiVersion"), "Kind:", str(job, "kind"));
	printf("Metadata:\n  Creation Timestamp:  %s\n  UID:                 %s\n  Resource Version:    %s\n",
	       str(meta, "creationTimestamp"), str(meta, "uid"), str(meta, "resourceVersion"));
	print_spec(job);
	print_status(job);
	print_events(events);
}

int cmd_describe(int argc, char **argv)
{
	static const struct option longopts[] = { CTL_CLUSTER_LONGOPTS, { NULL, 0, NULL, 0 } };
	struct ctl_cluster cl = { 0 };
	int ch;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":n:", longopts, NULL)) != -1) {
		if (ctl_cluster_option(&cl, ch, optarg))
			continue;
		if (ch == ':')
			return ctl_fail("describe: option '%s' needs a value", argv[optind - 1]);
		return ctl_fail("describe: unknown option '%s' (see tfjobctl describe --help)", argv[optind - 1]);
	}
	if (optind != argc - 1)
		return ctl_fail("describe: expected exactly one NAME (see tfjobctl describe --help)");
	const char *name = ctl_object_name(argv[optind], "describe");
	if (!name)
		return EXIT_USAGE;
	tfjob_transport *t;
	int rc = ctl_connect(&t, &cl);
	if (rc)
		return rc;
	char *text = NULL, *evtext = NULL;
	tfjob_error *err = NULL;
	if (tfjob_transport_get(&text, t, &ctl_tfjobs, NULL, name, &err)) {
		rc = ctl_api_fail(err);
	} else {
		char selector[512];
		snprintf(selector, sizeof(selector), "involvedObject.name=%s,involvedObject.kind=TFJob", name);
		tfjob_list_options lo = TFJOB_LIST_OPTIONS_INIT;
		lo.field_selector = selector;
		json_t *job = ctl_parse_json(text), *events = NULL;
		if (tfjob_transport_list(&evtext, t, &ctl_events, NULL, &lo, &err)) {
			/* Events are a courtesy: show the job anyway. */
			fprintf(stderr, "tfjobctl: cannot list events: %s\n", tfjob_error_message(err));
			tfjob_error_free(err);
		} else {
			events = json_loads(evtext, 0, NULL);
		}
		if (job)
			describe(job, events);
		rc = job ? EXIT_OK : EXIT_USAGE;
		json_decref(job);
		json_decref(events);
	}
	tfjob_free(text);
	tfjob_free(evtext);
	ctl_disconnect(t);
	return rc;
}
