/*
 * tfjobctl describe NAME [--kubeconfig F] [--context C] [-n NS]
 * SPDX-License-Identifier: Apache-2.0
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connection.h"

void usage_describe(FILE *out)
{
	fprintf(out,
	        "usage: tfjobctl describe NAME...|-f FILE... [--kubeconfig F] [--context C] [-n NS]\n\n"
	        "Describe a TFJob as kubectl describe does: metadata, run policy, the replica specs with\n"
	        "their pod templates' containers (image, ports, command, args, limits, requests,\n"
	        "environment, and the TF_CONFIG the operator sets, indented), conditions, replica statuses\n"
	        "and the events recorded about it. Several TFJobs: one after the other, a blank line\n"
	        "between them.\n\n"
	        "  -f, --filename F  the TFJobs of a file, a directory (its .yaml, .yml and .json files) or\n"
	        "                  '-', repeatable: each by its name, in its own namespace if it has one\n"
	        CTL_CLUSTER_USAGE "\n"
	        "Exit status: 0 ok, 1 the server answered with an error (e.g. NotFound), 2 usage,\n"
	        "configuration or connection error.\n");
}

/* "Title:  k=v" then one "k=v" line per further entry, aligned, at an indentation. */
static void print_map_at(const char *title, const json_t *map, int indent)
{
	printf("%*s%-13s", indent, "", title);
	if (json_object_size(map) == 0) {
		printf("<none>\n");
		return;
	}
	const char *key;
	json_t *v;
	int first = 1;
	json_object_foreach((json_t *)map, key, v) {
		printf("%*s%s=%s\n", first ? 0 : 13 + indent, "", key, json_is_string(v) ? json_string_value(v) : "");
		first = 0;
	}
}

static void print_map(const char *title, const json_t *map) { print_map_at(title, map, 0); }

/* The compat mode TF_CONFIG is shown in (--compat). */
static tfjob_compat describe_compat = TFJOB_COMPAT_DOCUMENTED;

/* Each line of text, indented. */
static void print_indented(const char *text, int indent)
{
	for (const char *line = text; *line;) {
		const char *nl = strchr(line, '\n');
		int n = nl ? (int)(nl - line) : (int)strlen(line);
		printf("%*s%.*s\n", indent, "", n, line);
		line += n + (nl ? 1 : 0);
	}
}

/* "Title:" then one "item" line per element (kubectl's Command: / Args: lists). */
static void print_list(const char *title, const json_t *items, int indent)
{
	if (!json_array_size(items))
		return;
	printf("%*s%s:\n", indent, "", title);
	size_t i;
	json_t *v;
	json_array_foreach(items, i, v) {
		char *s = json_is_string(v) ? NULL : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		printf("%*s%s\n", indent + 2, "", s ? s : json_string_value(v));
		free(s);
	}
}

/* "Limits:" / "Requests:" with "name:  quantity" lines. */
static void print_quantities(const char *title, const json_t *map, int indent)
{
	if (!json_object_size(map))
		return;
	printf("%*s%s:\n", indent, "", title);
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)map, key, v) {
		char *s = json_is_string(v) ? NULL : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		printf("%*s%s:  %s\n", indent + 2, "", key, s ? s : json_string_value(v));
		free(s);
	}
}

/* The TF_CONFIG the operator sets on replica 0 of the type, indented JSON; NULL when it sets none. */
static char *tf_config_of(const tfjob_job *job, const char *type)
{
	if (!job)
		return NULL;
	tfjob_render_options ro = TFJOB_RENDER_OPTIONS_INIT;
	ro.compat = describe_compat;
	char *text = NULL;
	if (tfjob_tf_config(&text, job, type, 0, &ro, NULL) || !text[0]) {
		tfjob_free(text);
		return NULL;
	}
	json_t *v = json_loads(text, 0, NULL);
	tfjob_free(text);
	char *pretty = v ? json_dumps(v, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
	json_decref(v);
	return pretty;
}

static void print_env(const json_t *container, const char *tf_config, int indent)
{
	const json_t *env = json_object_get(container, "env");
	if (!json_array_size(env) && !tf_config) {
		printf("%*sEnvironment:  <none>\n", indent, "");
		return;
	}
	printf("%*sEnvironment:\n", indent, "");
	size_t i;
	json_t *e;
	json_array_foreach(env, i, e) {
		const json_t *from = json_object_get(e, "valueFrom");
		const json_t *secret = json_object_get(from, "secretKeyRef"), *cm = json_object_get(from, "configMapKeyRef");
		const json_t *field = json_object_get(from, "fieldRef");
		printf("%*s%s:  ", indent + 2, "", ctl_str(e, "name"));
		if (secret) /* kubectl's words; never the secret's value, which a TFJob does not hold anyway */
			printf("<set to the key '%s' in secret '%s'>\n", ctl_str(secret, "key"), ctl_str(secret, "name"));
		else if (cm)
			printf("<set to the key '%s' of config map '%s'>\n", ctl_str(cm, "key"), ctl_str(cm, "name"));
		else if (field)
			printf("(%s:%s)\n", json_object_get(field, "apiVersion") ? ctl_str(field, "apiVersion") : "v1",
			       ctl_str(field, "fieldPath"));
		else if (from) {
			char *s = json_dumps(from, JSON_COMPACT);
			printf("<from %s>\n", s ? s : "");
			free(s);
		} else
			printf("%s\n", ctl_str(e, "value"));
	}
	if (tf_config) {
		printf("%*sTF_CONFIG:  (set by the operator; replica 0 shown, the other replicas differ in task.index)\n",
		       indent + 2, "");
		print_indented(tf_config, indent + 4);
	}
}

/* A container as kubectl describe shows a pod's: image, ports, command, args, resources, env. */
static void print_container(const json_t *c, const char *tf_config, int indent)
{
	printf("%*s%s:\n", indent, "", ctl_str(c, "name"));
	indent += 2;
	printf("%*sImage:  %s\n", indent, "", json_object_get(c, "image") ? ctl_str(c, "image") : "<none>");
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(c, "ports"), i, p) {
		const char *proto = ctl_str(p, "protocol");
		printf("%*sPort:   %lld/%s%s%s%s\n", indent, "", (long long)json_integer_value(json_object_get(p, "containerPort")),
		       proto[0] ? proto : "TCP", json_object_get(p, "name") ? " (" : "", ctl_str(p, "name"),
		       json_object_get(p, "name") ? ")" : "");
	}
	print_list("Command", json_object_get(c, "command"), indent);
	print_list("Args", json_object_get(c, "args"), indent);
	const json_t *res = json_object_get(c, "resources");
	print_quantities("Limits", json_object_get(res, "limits"), indent);
	print_quantities("Requests", json_object_get(res, "requests"), indent);
	print_env(c, tf_config, indent);
}

static void print_pod_template(const json_t *rs, const tfjob_job *job, const char *type)
{
	const json_t *tmpl = json_object_get(rs, "template");
	printf("      Pod Template:\n");
	const json_t *meta = json_object_get(tmpl, "metadata");
	if (json_object_size(json_object_get(meta, "labels")))
		print_map_at("Labels:", json_object_get(meta, "labels"), 8);
	if (json_object_size(json_object_get(meta, "annotations")))
		print_map_at("Annotations:", json_object_get(meta, "annotations"), 8);
	printf("        Containers:\n");
	char *tf_config = tf_config_of(job, type);
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(json_object_get(tmpl, "spec"), "containers"), i, c)
		/* The operator sets TF_CONFIG on the tensorflow container. */
		print_container(c, !strcmp(ctl_str(c, "name"), "tensorflow") ? tf_config : NULL, 10);
	free(tf_config);
}

/* A field name as kubectl describe titles it: "cleanPodPolicy" is "Clean Pod Policy" ("ttl..." is "TTL"). */
static void field_title(char *buf, size_t size, const char *key)
{
	size_t n = 0;
	if (!strncmp(key, "ttl", 3)) {
		n = (size_t)snprintf(buf, size, "TTL");
		key += 3;
	}
	for (const char *c = key; *c && n + 3 < size; c++) {
		if (c == key && !n)
			buf[n++] = (char)(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c);
		else if (*c >= 'A' && *c <= 'Z') {
			buf[n++] = ' ';
			buf[n++] = *c;
		} else
			buf[n++] = *c;
	}
	buf[n] = '\0';
}

/* An object's fields as kubectl describe prints them: "Title:  value" aligned, objects nested. */
static void print_fields(const json_t *obj, int indent)
{
	const char *key;
	json_t *v;
	size_t width = 0;
	json_object_foreach((json_t *)obj, key, v) {
		char title[128];
		field_title(title, sizeof(title), key);
		if (!json_is_object(v) && strlen(title) > width)
			width = strlen(title);
	}
	json_object_foreach((json_t *)obj, key, v) {
		char title[128];
		field_title(title, sizeof(title), key);
		if (json_is_object(v)) {
			printf("%*s%s:\n", indent, "", title);
			print_fields(v, indent + 2);
			continue;
		}
		char *s = json_is_string(v) ? NULL : json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
		printf("%*s%s:%*s  %s\n", indent, "", title, (int)(width - strlen(title)), "",
		       s ? s : json_string_value(v));
		free(s);
	}
}

static void print_spec(const json_t *job, const tfjob_job *parsed)
{
	const json_t *spec = json_object_get(job, "spec");
	printf("Spec:\n");
	const json_t *rp = json_object_get(spec, "runPolicy");
	if (json_object_size(rp)) {
		printf("  Run Policy:\n");
		print_fields(rp, 4);
	}
	if (json_object_get(spec, "successPolicy"))
		printf("  Success Policy:  %s\n", ctl_str(spec, "successPolicy"));
	printf("  TF Replica Specs:\n");
	const char *type;
	json_t *rs;
	json_object_foreach(json_object_get(spec, "tfReplicaSpecs"), type, rs) {
		json_t *r = json_object_get(rs, "replicas");
		printf("    %s:\n      Replicas:        %lld\n      Restart Policy:  %s\n", type,
		       r ? (long long)json_integer_value(r) : 1LL, json_object_get(rs, "restartPolicy") ? ctl_str(rs, "restartPolicy") : "Never");
		print_pod_template(rs, parsed, type);
	}
}

static void print_status(const json_t *job)
{
	const json_t *st = json_object_get(job, "status");
	printf("Status:\n");
	const char *manager = ctl_job_foreign_manager(job);
	if (manager)
		printf("  Managed By:  %s (spec.runPolicy.managedBy): that controller runs this job and writes its\n"
		       "               status, the training operator leaves it alone%s\n",
		       manager, json_object_size(st) ? "" : " (no status written yet)");
	const json_t *conds = json_object_get(st, "conditions");
	if (!json_array_size(conds) && !manager)
		printf("  No status yet: 'tfjobctl diagnose %s' says which step fails (operator, pods, scheduling).\n",
		       ctl_str(json_object_get(job, "metadata"), "name"));
	if (json_array_size(conds)) {
		printf("  Conditions:\n    %-10s %-7s %-22s %-21s %s\n", "Type", "Status", "Reason", "Last Transition Time",
		       "Message");
		size_t i;
		json_t *c;
		json_array_foreach(conds, i, c)
			printf("    %-10s %-7s %-22s %-21s %s\n", ctl_str(c, "type"), ctl_str(c, "status"), ctl_str(c, "reason"),
			       ctl_str(c, "lastTransitionTime"), ctl_str(c, "message"));
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
		printf("  Start Time:       %s\n", ctl_str(st, "startTime"));
	if (json_object_get(st, "completionTime"))
		printf("  Completion Time:  %s\n", ctl_str(st, "completionTime"));
}

/* An event's time: lastTimestamp, else eventTime, else its creation. */
static const char *event_time(const json_t *e)
{
	const char *ts = ctl_str(e, "lastTimestamp");
	if (!ts[0])
		ts = ctl_str(e, "eventTime");
	if (!ts[0])
		ts = ctl_str(json_object_get(e, "metadata"), "creationTimestamp");
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
		const char *first_ts = ctl_str(e, "firstTimestamp");
		if (count > 1 && first_ts[0]) {
			ctl_age(first, sizeof(first), first_ts, now);
			snprintf(shown, sizeof(shown), "%s (x%lld over %s)", age, (long long)count, first);
		} else {
			snprintf(shown, sizeof(shown), "%s", age);
		}
		/* From: the source component, else the reporting controller (events.k8s.io events). */
		const char *from = ctl_str(json_object_get(e, "source"), "component");
		if (!from[0])
			from = ctl_str(e, "reportingComponent");
		if (!from[0])
			from = ctl_str(e, "reportingController");
		printf("  %-8s %-24s %-8s %-20s %s\n", ctl_str(e, "type"), ctl_str(e, "reason"), shown, from, ctl_str(e, "message"));
	}
	free(sorted);
}

/* The object as a library job with defaults applied (for its TF_CONFIG), or NULL. */
static tfjob_job *defaulted(const char *text)
{
	tfjob_job *job = NULL;
	tfjob_default_options dopts = TFJOB_DEFAULT_OPTIONS_INIT;
	dopts.compat = describe_compat;
	if (tfjob_job_parse(&job, text, strlen(text), NULL, NULL) || tfjob_job_apply_defaults(job, &dopts, NULL)) {
		tfjob_job_free(job);
		return NULL;
	}
	return job;
}

static void describe(const json_t *job, const json_t *events, const char *text)
{
	const json_t *meta = json_object_get(job, "metadata");
	printf("%-13s%s\n%-13s%s\n", "Name:", ctl_str(meta, "name"), "Namespace:", ctl_str(meta, "namespace"));
	print_map("Labels:", json_object_get(meta, "labels"));
	print_map("Annotations:", json_object_get(meta, "annotations"));
	printf("%-13s%s\n%-13s%s\n", "API Version:", ctl_str(job, "apiVersion"), "Kind:", ctl_str(job, "kind"));
	printf("Metadata:\n  Creation Timestamp:  %s\n  UID:                 %s\n  Resource Version:    %s\n",
	       ctl_str(meta, "creationTimestamp"), ctl_str(meta, "uid"), ctl_str(meta, "resourceVersion"));
	tfjob_job *parsed = defaulted(text);
	print_spec(job, parsed);
	tfjob_job_free(parsed);
	print_status(job);
	print_events(events);
}

/* Describe one TFJob (ns NULL: -n or the context's). EXIT_* */
static int describe_one(tfjob_transport *t, const char *ns, const char *name)
{
	char *text = NULL, *evtext = NULL;
	tfjob_error *err = NULL;
	int rc;
	if (tfjob_transport_get(&text, t, &ctl_tfjobs, ns, name, &err)) {
		rc = ctl_api_fail(err);
	} else {
		char selector[512];
		snprintf(selector, sizeof(selector), "involvedObject.name=%s,involvedObject.kind=TFJob", name);
		tfjob_list_options lo = TFJOB_LIST_OPTIONS_INIT;
		lo.field_selector = selector;
		json_t *job = ctl_parse_json(text), *events = NULL;
		if (tfjob_transport_list(&evtext, t, &ctl_events, ns, &lo, &err)) {
			/* Events are a courtesy: show the job anyway. */
			fprintf(stderr, "tfjobctl: cannot list events: %s\n", tfjob_error_message(err));
			tfjob_error_free(err);
		} else {
			events = json_loads(evtext, 0, NULL);
		}
		if (job)
			describe(job, events, text);
		rc = job ? EXIT_OK : EXIT_USAGE;
		json_decref(job);
		json_decref(events);
	}
	tfjob_free(text);
	tfjob_free(evtext);
	return rc;
}

/* Each target in turn, as kubectl: a blank line between two descriptions; the worst status. */
static int describe_all(const struct ctl_cluster *cl, const struct ctl_target *targets, size_t n)
{
	tfjob_transport *t;
	int status = ctl_connect(&t, cl);
	if (status)
		return status;
	bool printed = false;
	for (size_t i = 0; i < n; i++) {
		if (printed)
			printf("\n\n");
		fflush(stdout);
		int rc = describe_one(t, targets[i].ns, targets[i].name);
		printed = printed || rc == EXIT_OK;
		if (rc > status)
			status = rc;
	}
	ctl_disconnect(t);
	return status;
}

int cmd_describe(int argc, char **argv)
{
	static const struct option longopts[] = {
		CTL_CLUSTER_LONGOPTS,
		{ "filename", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl_cluster cl = { 0 };
	struct ctl_sources sources = { 0 };
	int ch, status = EXIT_OK;
	opterr = 0;
	while (!status && (ch = getopt_long(argc, argv, ":n:f:", longopts, NULL)) != -1) {
		if (ctl_cluster_option(&cl, ch, optarg))
			continue;
		if (ch == 'f')
			status = ctl_sources_add(&sources, ctl_flag_value(optarg));
		else if (ch == ':')
			status = ctl_fail("describe: option '%s' needs a value", argv[optind - 1]);
		else
			status = ctl_fail("describe: unknown option '%s' (see tfjobctl describe --help)", argv[optind - 1]);
	}
	if (!status && (sources.count ? optind < argc : optind >= argc))
		status = ctl_fail("describe: expected NAMEs or -f, not both, not neither (see tfjobctl describe --help)");
	describe_compat = cl.compat;
	struct ctl_inputs in = { 0 };
	struct ctl_target *targets = NULL;
	size_t n = 0;
	if (!status && sources.count)
		status = ctl_inputs_read(&in, &sources);
	if (!status)
		status = ctl_targets_of(&targets, &n, argc, argv, &in, "describe");
	if (!status)
		status = describe_all(&cl, targets, n);
	free(targets);
	ctl_inputs_free(&in);
	free(sources.paths);
	return status;
}
