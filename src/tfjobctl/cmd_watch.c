/*
 * tfjobctl watch NAME [-o json] [--timeout S] [--kubeconfig F] [--context C] [-n NS]
 * SPDX-License-Identifier: Apache-2.0
 */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "connection.h"
#include "local_view.h"

void usage_watch(FILE *out)
{
	fprintf(out,
	        "usage: tfjobctl watch NAME [-o json] [--timeout S] [--kubeconfig F] [--context C] [-n NS]\n\n"
	        "Follow a TFJob until it has finished or is deleted, as tfjobctl run shows a local run:\n"
	        "a line per change, each with the time: its conditions (type, reason, message), its\n"
	        "replicas by type (active, succeeded, failed), its pods (phase, waiting reason, exit code,\n"
	        "restarts and the last exit), and the new Events of the job and its pods; then a summary.\n"
	        "-o json prints the TFJob's watch events instead, one JSON line each\n"
	        "{\"type\":\"ADDED|MODIFIED|DELETED\",\"object\":{...}}, and nothing else.\n\n"
	        "  -o, --output F  'json' (default: text lines)\n"
	        "  --timeout S     give up after S seconds\n" CTL_CLUSTER_USAGE "\n"
	        "Exit status: 0 the job succeeded, 1 it failed, was deleted or the timeout passed, 2 usage,\n"
	        "configuration or connection error, 130 interrupted (Ctrl-C, SIGTERM).\n");
}

static atomic_int interrupted;

static void on_signal(int sig)
{
	(void)sig;
	atomic_store(&interrupted, 1);
}

struct follow {
	int json;
	const char *name;
	int outcome; /* -1 running, EXIT_OK succeeded, EXIT_NEGATIVE failed or deleted */
	char rv[64];
	/* The text view: what was shown already, so that only changes are printed. */
	pthread_mutex_t mu;   /* the watch thread and the main loop print */
	bool headed;          /* the first line was printed */
	bool deleted;         /* a DELETED event came */
	json_t *conditions;   /* type -> "status|reason" */
	char *replicas;       /* the last replicas line */
	json_t *pods;         /* pod name -> its summary */
	json_t *events;       /* uid -> count */
	json_t *last;         /* the last TFJob seen */
};

static void clock_now(char *buf, size_t size)
{
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(buf, size, "%H:%M:%S", &tm);
}

/* "Worker: 2 active, 1 succeeded, 0 failed; PS: 1 active, ..." (types in the spec's order). */
static void replicas_line(char *buf, size_t size, const json_t *job)
{
	buf[0] = '\0';
	const json_t *rs = json_object_get(json_object_get(job, "status"), "replicaStatuses");
	const char *type;
	json_t *spec;
	json_object_foreach(json_object_get(json_object_get(job, "spec"), "tfReplicaSpecs"), type, spec) {
		const json_t *r = json_object_get(rs, type);
		json_t *n = json_object_get(spec, "replicas");
		size_t len = strlen(buf);
		snprintf(buf + len, size - len, "%s%s: %lld of %lld active, %lld succeeded, %lld failed", len ? "; " : "", type,
		         (long long)json_integer_value(json_object_get(r, "active")), n ? (long long)json_integer_value(n) : 1LL,
		         (long long)json_integer_value(json_object_get(r, "succeeded")),
		         (long long)json_integer_value(json_object_get(r, "failed")));
	}
}

/* What changed in the TFJob since the last view: its conditions and its replicas. */
static void show_job(struct follow *f, const char *type, const json_t *obj)
{
	char ts[16];
	clock_now(ts, sizeof ts);
	const json_t *meta = json_object_get(obj, "metadata");
	if (!f->headed) {
		const char *manager = ctl_job_foreign_manager(obj);
		printf("%s TFJob %s/%s: %s%s%s\n", ts, ctl_str(meta, "namespace"), f->name,
		       ctl_job_state(obj)[0] ? ctl_job_state(obj) : "no status yet", manager ? ", managed by " : "",
		       manager ? manager : "");
		f->headed = true;
	}
	if (!strcmp(type, "DELETED")) {
		printf("%s TFJob %s was deleted\n", ts, f->name);
		f->deleted = true;
		return;
	}
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(json_object_get(obj, "status"), "conditions"), i, c) {
		char seen[512];
		snprintf(seen, sizeof seen, "%s|%s", ctl_str(c, "status"), ctl_str(c, "reason"));
		const char *before = json_string_value(json_object_get(f->conditions, ctl_str(c, "type")));
		if (before && !strcmp(before, seen))
			continue;
		json_object_set_new(f->conditions, ctl_str(c, "type"), json_string(seen));
		printf("%s condition %s=%s %s: %s\n", ts, ctl_str(c, "type"), ctl_str(c, "status"), ctl_str(c, "reason"), ctl_str(c, "message"));
	}
	char reps[1024];
	replicas_line(reps, sizeof reps, obj);
	if (reps[0] && (!f->replicas || strcmp(f->replicas, reps))) {
		printf("%s replicas %s\n", ts, reps);
		free(f->replicas);
		f->replicas = strdup(reps);
	}
	json_decref(f->last);
	f->last = json_deep_copy(obj);
}

/* Print one state; returns 1 when the job is over (outcome set). */
static int report(struct follow *f, const char *type, const json_t *obj)
{
	if (!strcmp(type, "BOOKMARK")) {
		/* Only a resume point, never shown (kubectl does not show them either). */
		const char *brv = json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
		if (brv)
			snprintf(f->rv, sizeof(f->rv), "%s", brv);
		return 0;
	}
	if (f->json) {
		json_t *line = json_pack("{s:s, s:O}", "type", type, "object", obj);
		char *s = json_dumps(line, JSON_COMPACT);
		printf("%s\n", s ? s : "");
		free(s);
		json_decref(line);
	} else {
		pthread_mutex_lock(&f->mu);
		show_job(f, type, obj);
		pthread_mutex_unlock(&f->mu);
	}
	fflush(stdout);
	const char *rv = json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
	if (rv)
		snprintf(f->rv, sizeof(f->rv), "%s", rv);
	if (!strcmp(type, "DELETED")) {
		f->outcome = EXIT_NEGATIVE;
		return 1;
	}
	const json_t *conds = json_object_get(json_object_get(obj, "status"), "conditions");
	size_t i;
	json_t *c;
	json_array_foreach(conds, i, c) {
		const char *ct = json_string_value(json_object_get(c, "type"));
		const char *cs = json_string_value(json_object_get(c, "status"));
		if (ct && cs && !strcmp(cs, "True") && (!strcmp(ct, "Succeeded") || !strcmp(ct, "Failed"))) {
			f->outcome = !strcmp(ct, "Succeeded") ? EXIT_OK : EXIT_NEGATIVE;
			return 1;
		}
	}
	return 0;
}

/* A cluster pod's state: "Running", "Pending (ImagePullBackOff: ...)", "Failed (exit 137)",
 * "Running, restarts 2, last exit 137 (OOMKilled)". */
static void pod_line(char *buf, size_t size, const json_t *pod)
{
	char sum[256];
	ctl_pod_summary(sum, sizeof sum, pod);
	const json_t *cs = ctl_pod_tf_status(pod);
	const json_t *state = json_object_get(cs, "state"), *wait = json_object_get(state, "waiting");
	const json_t *last = json_object_get(json_object_get(cs, "lastState"), "terminated");
	int n = snprintf(buf, size, "%s", sum);
	if (wait && !last && ctl_str(wait, "reason")[0] && n >= 0 && (size_t)n < size)
		n += snprintf(buf + n, size - (size_t)n, " (%s%s%s)", ctl_str(wait, "reason"), ctl_str(wait, "message")[0] ? ": " : "",
		              ctl_str(wait, "message"));
	/* Not scheduled: the scheduler's reason, from the PodScheduled condition. */
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(json_object_get(pod, "status"), "conditions"), i, c)
		if (!strcmp(ctl_str(c, "type"), "PodScheduled") && !strcmp(ctl_str(c, "status"), "False") && n >= 0 &&
		    (size_t)n < size)
			n += snprintf(buf + n, size - (size_t)n, " (%s: %s)", ctl_str(c, "reason"), ctl_str(c, "message"));
	json_int_t restarts = json_integer_value(json_object_get(cs, "restartCount"));
	if (restarts > 0 && n >= 0 && (size_t)n < size) {
		n += snprintf(buf + n, size - (size_t)n, ", restarts %lld", (long long)restarts);
		if (last && !wait && n >= 0 && (size_t)n < size)
			snprintf(buf + n, size - (size_t)n, ", last exit %lld (%s)",
			         (long long)json_integer_value(json_object_get(last, "exitCode")), ctl_str(last, "reason"));
	}
}

/* The job's pods and the new Events of the job and of its pods, printed when they changed. */
static void poll_children(tfjob_transport *t, struct follow *f)
{
	char selector[600], *text = NULL;
	tfjob_error *err = NULL;
	snprintf(selector, sizeof selector, "%s=%s", TFJOB_LABEL_JOB_NAME, f->name);
	tfjob_list_options lo = TFJOB_LIST_OPTIONS_INIT;
	lo.label_selector = selector;
	json_t *pods = NULL, *jobev = NULL, *podev = NULL;
	if (!tfjob_transport_list(&text, t, tfjob_resource_lookup("pods"), NULL, &lo, &err))
		pods = json_loads(text, 0, NULL);
	tfjob_free(text);
	tfjob_error_free(err);
	text = NULL;
	err = NULL;
	lo.label_selector = NULL;
	snprintf(selector, sizeof selector, "involvedObject.kind=TFJob,involvedObject.name=%s", f->name);
	lo.field_selector = selector;
	if (!tfjob_transport_list(&text, t, &ctl_events, NULL, &lo, &err))
		jobev = json_loads(text, 0, NULL);
	tfjob_free(text);
	tfjob_error_free(err);
	text = NULL;
	err = NULL;
	lo.field_selector = "involvedObject.kind=Pod";
	if (json_array_size(json_object_get(pods, "items")) &&
	    !tfjob_transport_list(&text, t, &ctl_events, NULL, &lo, &err))
		podev = json_loads(text, 0, NULL);
	tfjob_free(text);
	tfjob_error_free(err);

	pthread_mutex_lock(&f->mu);
	char ts[16];
	clock_now(ts, sizeof ts);
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(pods, "items"), i, p) {
		char line[1024];
		pod_line(line, sizeof line, p);
		const char *name = ctl_str(json_object_get(p, "metadata"), "name");
		const char *before = json_string_value(json_object_get(f->pods, name));
		if (before && !strcmp(before, line))
			continue;
		json_object_set_new(f->pods, name, json_string(line));
		printf("%s pod %s: %s\n", ts, name, line);
	}
	json_t *lists[2] = { jobev, podev };
	for (size_t l = 0; l < 2; l++) {
		json_t *e;
		json_array_foreach(json_object_get(lists[l], "items"), i, e) {
			const json_t *obj = json_object_get(e, "involvedObject");
			if (l == 1 && !json_object_get(f->pods, ctl_str(obj, "name")))
				continue; /* another job's pod */
			const char *uid = ctl_str(json_object_get(e, "metadata"), "uid");
			json_int_t count = json_integer_value(json_object_get(e, "count"));
			json_t *seen = json_object_get(f->events, uid);
			if (seen && json_integer_value(seen) >= count)
				continue;
			json_object_set_new(f->events, uid, json_integer(count));
			char times[32] = "";
			if (count > 1)
				snprintf(times, sizeof times, " (x%lld)", (long long)count);
			printf("%s %-7s %-20s %s/%s: %s%s\n", ts, ctl_str(e, "type"), ctl_str(e, "reason"), ctl_str(obj, "kind"), ctl_str(obj, "name"),
			       ctl_str(e, "message"), times);
		}
	}
	fflush(stdout);
	pthread_mutex_unlock(&f->mu);
	json_decref(pods);
	json_decref(jobev);
	json_decref(podev);
}

/* The end: how the job finished, how long it ran, its replicas and the pods that restarted. */
static void summary(const struct follow *f)
{
	const json_t *job = f->last, *st = json_object_get(job, "status");
	if (!job)
		return;
	const json_t *conds = json_object_get(st, "conditions");
	const json_t *c = json_array_get(conds, json_array_size(conds) ? json_array_size(conds) - 1 : 0);
	char took[64] = "";
	int64_t from, to;
	if (!tfjob_time_parse(&from, ctl_str(st, "startTime")) && !tfjob_time_parse(&to, ctl_str(st, "completionTime")) && to >= from) {
		int64_t d = to - from;
		if (d >= 3600)
			snprintf(took, sizeof took, " after %lldh%02lldm%02llds", (long long)(d / 3600), (long long)(d / 60 % 60),
			         (long long)(d % 60));
		else if (d >= 60)
			snprintf(took, sizeof took, " after %lldm%02llds", (long long)(d / 60), (long long)(d % 60));
		else
			snprintf(took, sizeof took, " after %llds", (long long)d);
	}
	if (f->deleted) {
		printf("\nTFJob %s was deleted (last seen: %s)\n", f->name,
		       ctl_job_state(job)[0] ? ctl_job_state(job) : "without status");
		fflush(stdout);
		return;
	}
	bool over = f->outcome >= 0; /* else interrupted, or --timeout passed */
	printf("\nTFJob %s %s%s", f->name, over ? "" : "still ",
	       ctl_job_state(job)[0] ? ctl_job_state(job) : "without status");
	if (c && over)
		printf(" (%s: %s)", ctl_str(c, "reason"), ctl_str(c, "message"));
	printf("%s\n", took);
	char reps[1024];
	replicas_line(reps, sizeof reps, job);
	if (reps[0])
		printf("  replicas %s\n", reps);
	const char *pod;
	json_t *line;
	json_object_foreach(f->pods, pod, line)
		if (strstr(json_string_value(line), "restarts ") || strstr(json_string_value(line), "exit ") ||
		    strstr(json_string_value(line), "("))
			printf("  pod %s: %s\n", pod, json_string_value(line));
	fflush(stdout);
}

static int on_event(tfjob_watch_event type, const char *json, void *payload)
{
	json_t *obj = json_loads(json, 0, NULL);
	int stop = obj ? report(payload, tfjob_watch_event_name(type), obj) : 0;
	json_decref(obj);
	return stop;
}

struct closed {
	atomic_int code;
};

static void on_closed(int code, const tfjob_error *err, void *payload)
{
	struct closed *c = payload;
	if (code && code != TFJOB_EGONE)
		fprintf(stderr, "tfjobctl: watch: %s\n", tfjob_error_message(err));
	atomic_store(&c->code, code);
}

/* Payload shared by both callbacks: the follow state first. */
struct watch_state {
	struct follow f;
	struct closed c;
};

static int on_event_ws(tfjob_watch_event type, const char *json, void *payload)
{
	return on_event(type, json, &((struct watch_state *)payload)->f);
}

static void on_closed_ws(int code, const tfjob_error *err, void *payload)
{
	on_closed(code, err, &((struct watch_state *)payload)->c);
}

/* The current object: printed, and the version to watch from. */
static int initial(tfjob_transport *t, struct watch_state *ws)
{
	char *text = NULL;
	tfjob_error *err = NULL;
	if (tfjob_transport_get(&text, t, &ctl_tfjobs, NULL, ws->f.name, &err))
		return ctl_api_fail(err);
	json_t *obj = ctl_parse_json(text);
	tfjob_free(text);
	if (!obj)
		return EXIT_USAGE;
	report(&ws->f, "ADDED", obj);
	json_decref(obj);
	return 0;
}

static int follow_job(tfjob_transport *t, struct watch_state *ws, int64_t timeout_s)
{
	char selector[300];
	snprintf(selector, sizeof(selector), "metadata.name=%s", ws->f.name);
	int64_t waited_ms = 0;
	for (;;) {
		int rc = initial(t, ws);
		if (!rc && !ws->f.json)
			poll_children(t, &ws->f);
		if (rc || ws->f.outcome >= 0)
			return rc ? rc : ws->f.outcome;
		tfjob_watch_options wo = TFJOB_WATCH_OPTIONS_INIT;
		wo.field_selector = selector;
		wo.resource_version = ws->f.rv;
		wo.allow_bookmarks = 1;
		wo.on_event = on_event_ws;
		wo.on_closed = on_closed_ws;
		wo.payload = ws;
		atomic_store(&ws->c.code, 1);
		tfjob_watch *w = NULL;
		tfjob_error *err = NULL;
		if (tfjob_transport_watch(&w, t, &ctl_tfjobs, NULL, &wo, &err))
			return ctl_api_fail(err);
		int ticks = 0;
		while (tfjob_watch_wait(w, 200) == TFJOB_ETIMEOUT && !atomic_load(&interrupted) &&
		       (timeout_s <= 0 || (waited_ms += 200) < timeout_s * 1000))
			if (!ws->f.json && ++ticks % 10 == 0) /* the pods and Events, every 2 s */
				poll_children(t, &ws->f);
		tfjob_watch_free(w);
		int code = atomic_load(&ws->c.code);
		if (ws->f.outcome >= 0)
			return ws->f.outcome;
		if (atomic_load(&interrupted))
			return EXIT_INTERRUPTED;
		if (timeout_s > 0 && waited_ms >= timeout_s * 1000) {
			fprintf(stderr, "tfjobctl: watch: TFJob %s did not finish within %lld s\n", ws->f.name, (long long)timeout_s);
			return EXIT_NEGATIVE;
		}
		if (code != TFJOB_EGONE)
			return code == 0 ? EXIT_OK : EXIT_USAGE;
		/* 410 Gone: read the object again and watch from its version. */
	}
}

/* Follow the job; in text mode, then the last state of its pods and Events, and a summary. */
static int follow(tfjob_transport *t, struct watch_state *ws, int64_t timeout_s)
{
	int rc = follow_job(t, ws, timeout_s);
	if (!ws->f.json && ws->f.last && rc != EXIT_USAGE) {
		if (rc != EXIT_INTERRUPTED)
			poll_children(t, &ws->f);
		summary(&ws->f);
	}
	return rc;
}

int cmd_watch(int argc, char **argv)
{
	static const struct option longopts[] = {
		CTL_CLUSTER_LONGOPTS,
		{ "output", required_argument, NULL, 'o' },
		{ "timeout", required_argument, NULL, CTL_OPT_TIMEOUT },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl_cluster cl = { 0 };
	struct watch_state ws = { .f = { .outcome = -1, .mu = PTHREAD_MUTEX_INITIALIZER } };
	int64_t timeout_s = 0;
	int ch;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":o:n:", longopts, NULL)) != -1) {
		if (ctl_cluster_option(&cl, ch, optarg))
			continue;
		if (ch == 'o') {
			optarg = (char *)ctl_flag_value(optarg);
			if (strcmp(optarg, "json"))
				return ctl_fail("watch: unknown output format '%s' (expected json)", optarg);
			ws.f.json = 1;
		} else if (ch == CTL_OPT_TIMEOUT) {
			char *end;
			timeout_s = strtoll(optarg, &end, 10);
			if (*end || timeout_s <= 0)
				return ctl_fail("watch: --timeout needs a positive number of seconds");
		} else if (ch == ':') {
			return ctl_fail("watch: option '%s' needs a value", argv[optind - 1]);
		} else {
			return ctl_fail("watch: unknown option '%s' (see tfjobctl watch --help)", argv[optind - 1]);
		}
	}
	if (optind != argc - 1)
		return ctl_fail("watch: expected exactly one NAME (see tfjobctl watch --help)");
	ws.f.name = ctl_object_name(argv[optind], "watch");
	if (!ws.f.name)
		return EXIT_USAGE;
	tfjob_transport *t;
	int rc = ctl_connect(&t, &cl);
	if (rc)
		return rc;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	ws.f.conditions = json_object();
	ws.f.pods = json_object();
	ws.f.events = json_object();
	rc = follow(t, &ws, timeout_s);
	ctl_disconnect(t);
	json_decref(ws.f.conditions);
	json_decref(ws.f.pods);
	json_decref(ws.f.events);
	json_decref(ws.f.last);
	free(ws.f.replicas);
	return rc;
}
