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

#include "cluster.h"

void usage_watch(FILE *out)
{
	fprintf(out,
	        "usage: tfjobctl watch NAME [-o json] [--timeout S] [--kubeconfig F] [--context C] [-n NS]\n\n"
	        "Follow a TFJob: print a line per change (EVENT NAME STATE) until it has finished or is\n"
	        "deleted. -o json prints each event as one JSON line {\"type\":...,\"object\":{...}}.\n\n"
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
};

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
		printf("%-9s %-32s %s\n", type, f->name, ctl_job_state(obj));
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

static int follow(tfjob_transport *t, struct watch_state *ws, int64_t timeout_s)
{
	char selector[300];
	snprintf(selector, sizeof(selector), "metadata.name=%s", ws->f.name);
	int64_t waited_ms = 0;
	for (;;) {
		int rc = initial(t, ws);
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
		while (tfjob_watch_wait(w, 200) == TFJOB_ETIMEOUT && !atomic_load(&interrupted) &&
		       (timeout_s <= 0 || (waited_ms += 200) < timeout_s * 1000))
			;
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

int cmd_watch(int argc, char **argv)
{
	static const struct option longopts[] = {
		CTL_CLUSTER_LONGOPTS,
		{ "output", required_argument, NULL, 'o' },
		{ "timeout", required_argument, NULL, CTL_OPT_TIMEOUT },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl_cluster cl = { 0 };
	struct watch_state ws = { .f = { .outcome = -1 } };
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
	rc = follow(t, &ws, timeout_s);
	ctl_disconnect(t);
	return rc;
}
