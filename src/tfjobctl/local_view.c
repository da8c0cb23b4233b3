/*
 * Views of a local run directory (job.json, pods.json, events.json): the kubectl-describe style
 * report printed at the end of `tfjobctl run`, and `tfjobctl get --run-dir DIR`.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <getopt.h>
#include <stdint.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "local_view.h"

static const char *s(const json_t *o, const char *k)
{
	const char *v = json_string_value(json_object_get(o, k));
	return v ? v : "";
}

json_t *ctl_run_load(const char *run_dir, const char *file)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s", run_dir, file);
	return json_load_file(path, 0, NULL);
}

const json_t *ctl_pod_tf_status(const json_t *pod)
{
	const json_t *cs = json_object_get(json_object_get(pod, "status"), "containerStatuses");
	size_t i;
	json_t *c;
	json_array_foreach(cs, i, c)
		if (!strcmp(s(c, "name"), "tensorflow"))
			return c;
	return json_array_get(cs, 0);
}

/* "Running", "Succeeded (exit 0)", "Failed (exit 137)", "Running (CrashLoopBackOff, last exit 1)" */
void ctl_pod_summary(char *buf, size_t size, const json_t *pod)
{
	const json_t *st = json_object_get(pod, "status"), *cs = ctl_pod_tf_status(pod);
	const json_t *state = json_object_get(cs, "state");
	const json_t *term = json_object_get(state, "terminated"), *wait = json_object_get(state, "waiting");
	const json_t *last = json_object_get(json_object_get(cs, "lastState"), "terminated");
	const char *phase = s(st, "phase");
	bool deleting = json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp") != NULL;
	if (term)
		snprintf(buf, size, "%s (exit %lld)", phase, (long long)json_integer_value(json_object_get(term, "exitCode")));
	else if (wait && last)
		snprintf(buf, size, "%s (%s, last exit %lld)", phase, s(wait, "reason"),
		         (long long)json_integer_value(json_object_get(last, "exitCode")));
	else
		snprintf(buf, size, "%s%s", phase, deleting ? " (Terminating)" : "");
}

void ctl_print_pods(FILE *out, const json_t *pods)
{
	const json_t *items = json_is_array(pods) ? pods : json_object_get(pods, "items");
	fprintf(out, "Pods:\n");
	if (!json_array_size(items)) {
		fprintf(out, "  <none>\n");
		return;
	}
	fprintf(out, "  %-28s %-36s %-9s %s\n", "Name", "Status", "Restarts", "PID");
	size_t i;
	json_t *p;
	json_array_foreach(items, i, p) {
		char sum[160];
		ctl_pod_summary(sum, sizeof sum, p);
		const json_t *meta = json_object_get(p, "metadata");
		const char *pid = s(json_object_get(meta, "annotations"), TFJOB_LOCAL_PID_ANNOTATION);
		fprintf(out, "  %-28s %-36s %-9lld %s\n", s(meta, "name"), sum,
		        (long long)json_integer_value(json_object_get(ctl_pod_tf_status(p), "restartCount")), pid[0] ? pid : "-");
	}
}

void ctl_print_conditions(FILE *out, const json_t *status)
{
	const json_t *conds = json_object_get(status, "conditions");
	fprintf(out, "  Conditions:\n");
	if (!json_array_size(conds)) {
		fprintf(out, "    <none>\n");
		return;
	}
	fprintf(out, "    %-10s %-7s %-22s %-21s %s\n", "Type", "Status", "Reason", "Last Transition Time", "Message");
	size_t i;
	json_t *c;
	json_array_foreach(conds, i, c)
		fprintf(out, "    %-10s %-7s %-22s %-21s %s\n", s(c, "type"), s(c, "status"), s(c, "reason"),
		        s(c, "lastTransitionTime"), s(c, "message"));
}

void ctl_print_replica_statuses(FILE *out, const json_t *status)
{
	const json_t *rs = json_object_get(status, "replicaStatuses");
	fprintf(out, "  Replica Statuses:\n");
	const char *type;
	json_t *r;
	json_object_foreach((json_t *)rs, type, r)
		fprintf(out, "    %-10s Active: %lld  Succeeded: %lld  Failed: %lld\n", type,
		        (long long)json_integer_value(json_object_get(r, "active")),
		        (long long)json_integer_value(json_object_get(r, "succeeded")),
		        (long long)json_integer_value(json_object_get(r, "failed")));
}

bool ctl_parse_tail(int64_t *out, const char *command, const char *text, bool all_allowed, int64_t max)
{
	char *end;
	errno = 0;
	long long v = strtoll(text, &end, 10);
	if (errno || end == text || *end || v < (all_allowed ? -1 : 0) || v > max) {
		char range[64] = "0 or more";
		if (max < INT64_MAX)
			snprintf(range, sizeof range, "from 0 to %lld", (long long)max);
		ctl_fail("%s: --tail needs a number of lines %s%s, got '%s'", command, range, all_allowed ? " (-1: all)" : "",
		         text);
		return false;
	}
	*out = v;
	return true;
}

json_t *ctl_run_report(const char *run_dir, int64_t tail)
{
	char *text = NULL;
	if (tfjob_local_report(&text, run_dir, tail, NULL))
		return NULL;
	json_t *report = json_loads(text, 0, NULL);
	tfjob_free(text);
	return report;
}

void ctl_print_replica_failure(FILE *out, const char *indent, const json_t *replica)
{
	const json_t *tail = json_object_get(replica, "tail");
	size_t n = json_array_size(tail);
	fprintf(out, "%slog: %s", indent, s(replica, "log"));
	if (n)
		fprintf(out, " (last %zu line%s):", n, n == 1 ? "" : "s");
	fprintf(out, "\n");
	size_t i;
	json_t *line;
	json_array_foreach(tail, i, line)
		fprintf(out, "%s| %s\n", indent, json_string_value(line));
}

/* What happened to each replica, with the last lines of the ones that failed. */
static void print_replicas(FILE *out, const char *run_dir, int64_t tail)
{
	json_t *report = ctl_run_report(run_dir, tail);
	const json_t *replicas = json_object_get(report, "replicas");
	if (json_array_size(replicas)) {
		fprintf(out, "Replicas:\n");
		size_t i;
		json_t *r;
		json_array_foreach(replicas, i, r) {
			fprintf(out, "  %s\n", s(r, "summary"));
			if (json_integer_value(json_object_get(r, "failures")) > 0)
				ctl_print_replica_failure(out, "      ", r);
		}
	}
	json_decref(report);
}

void ctl_run_describe(FILE *out, const char *run_dir, int64_t tail)
{
	json_t *job = ctl_run_load(run_dir, "job.json"), *pods = ctl_run_load(run_dir, "pods.json"),
	       *events = ctl_run_load(run_dir, "events.json");
	const json_t *meta = json_object_get(job, "metadata"), *st = json_object_get(job, "status");
	fprintf(out, "Name:           %s\nNamespace:      %s\nUID:            %s\nRun Directory:  %s\n", s(meta, "name"),
	        s(meta, "namespace"), s(meta, "uid"), run_dir);
	const json_t *rp = json_object_get(json_object_get(job, "spec"), "runPolicy");
	fprintf(out, "Clean Pod Policy: %s\n", s(rp, "cleanPodPolicy"));
	fprintf(out, "Status:\n");
	ctl_print_conditions(out, st);
	ctl_print_replica_statuses(out, st);
	fprintf(out, "  Start Time:       %s\n  Completion Time:  %s\n",
	        json_object_get(st, "startTime") ? s(st, "startTime") : "<none>",
	        json_object_get(st, "completionTime") ? s(st, "completionTime") : "<none>");
	ctl_print_pods(out, pods);
	print_replicas(out, run_dir, tail);
	fprintf(out, "Events:\n");
	if (!json_array_size(events)) {
		fprintf(out, "  <none>\n");
	} else {
		fprintf(out, "  %-8s %-22s %-20s %-28s %s\n", "Type", "Reason", "Time", "Object", "Message");
		size_t i;
		json_t *e;
		json_array_foreach(events, i, e) {
			long long n = json_integer_value(json_object_get(e, "count"));
			char count[32] = "";
			if (n > 1)
				snprintf(count, sizeof count, "(x%lld) ", n);
			fprintf(out, "  %-8s %-22s %-20s %-28s %s%s\n", s(e, "type"), s(e, "reason"), s(e, "time"), s(e, "object"),
			        count, s(e, "message"));
		}
	}
	json_decref(job);
	json_decref(pods);
	json_decref(events);
}

void usage_get_run_dir(FILE *out)
{
	fprintf(out, "usage: tfjobctl get --run-dir DIR [--compat C] [--tail N] [-o json|yaml|name]\n\n"
	             "Show a local run (tfjobctl run): the TFJob's conditions and replica statuses, its pods\n"
	             "with their exit codes and restarts, what happened to each replica (with the last N lines\n"
	             "of the output of those that failed, default 20, and the log's path) and its events.\n"
	             "-o json prints {\"job\":...,\"pods\":[...],\"events\":[...],\"report\":{...}} as kept in\n"
	             "DIR (report: tfjob_local_report(), docs/local.md); -o yaml the same as YAML; -o name\n"
	             "the TFJob's name (tfjob.kubeflow.org/NAME).\n"
	             "--compat C ('documented' or 'training-operator-1.9') is accepted as by every command;\n"
	             "the run keeps the mode it was started with.\n\n"
	             "Exit status: 0 ok, 2 usage error or no run in DIR.\n");
}

int cmd_get_run_dir(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "run-dir", required_argument, NULL, 'r' },
		{ "output", required_argument, NULL, 'o' },
		{ "compat", required_argument, NULL, 'c' },
		{ "tail", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 },
	};
	const char *dir = NULL;
	enum ctl_format format = CTL_FORMAT_DEFAULT;
	int64_t tail = CTL_DEFAULT_TAIL;
	tfjob_compat compat; /* accepted as by every command; the run's state is shown as saved */
	int ch;
	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, ":o:", longopts, NULL)) != -1) {
		if (ch == 'r')
			dir = optarg;
		else if (ch == 'o') {
			if (!ctl_parse_format(&format, optarg, CTL_FORMAT_BIT(CTL_FORMAT_JSON) | CTL_FORMAT_BIT(CTL_FORMAT_YAML) |
			                      CTL_FORMAT_BIT(CTL_FORMAT_NAME), "get --run-dir"))
				return EXIT_USAGE;
		}
		else if (ch == 't') {
			if (!ctl_parse_tail(&tail, "get", optarg, false, CTL_REPORT_TAIL_MAX))
				return EXIT_USAGE;
		}
		else if (ch == 'c') {
			if (!ctl_parse_compat(&compat, optarg))
				return EXIT_USAGE;
		} else if (ch == ':')
			return ctl_fail("get: option '%s' needs a value", argv[optind - 1]);
		else
			return ctl_fail("get: unknown option '%s' with --run-dir (see tfjobctl get --help)", argv[optind - 1]);
	}
	if (!dir || optind != argc)
		return ctl_fail("get: --run-dir DIR takes no other argument");
	json_t *job = ctl_run_load(dir, "job.json");
	if (!job)
		return ctl_fail("get: %s holds no run (no readable job.json)", dir);
	if (format == CTL_FORMAT_NAME) {
		ctl_print_name(stdout, job);
		json_decref(job);
		return EXIT_OK;
	}
	if (format != CTL_FORMAT_DEFAULT) {
		json_t *pods = ctl_run_load(dir, "pods.json"), *events = ctl_run_load(dir, "events.json");
		json_t *items = json_object_get(pods, "items");
		json_t *report = ctl_run_report(dir, tail);
		json_t *all = json_pack("{s:o, s:O, s:O, s:o}", "job", job, "pods", items ? items : json_array(), "events",
		                        events ? events : json_array(), "report", report ? report : json_object());
		json_decref(pods);
		json_decref(events);
		if (format == CTL_FORMAT_YAML) {
			ctl_print_yaml(stdout, all);
		} else {
			char *text = json_dumps(all, JSON_INDENT(2));
			printf("%s\n", text ? text : "null");
			free(text);
		}
		json_decref(all);
		return EXIT_OK;
	}
	json_decref(job);
	ctl_run_describe(stdout, dir, tail);
	return EXIT_OK;
}
