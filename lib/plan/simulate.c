/*
 * The simulator: runs the planner step by step on an in-memory cluster driven by a scenario
 * (docs/simulate.md) and reports the condition timeline and the events.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/doc.h"
#include "core/job.h"
#include "plan/execute.h"
#include "plan/planner.h"
#include "util/sbuf.h"
#include "util/versioned_structs.h"

#define DEFAULT_START 1704067200 /* 2024-01-01T00:00:00Z */
#define DEFAULT_MAX_STEPS 1000u
#define STEPS_PER_INSTANT 20
/* 'at' and 'until' are seconds after the start, at most this (about 317 years): the sums of
 * times below stay far from int64 overflow, and requeues are capped just beyond it. */
#define MAX_OFFSET INT64_C(10000000000)
/* Without 'until', requeues are followed for an hour after the last timeline entry: long enough
 * for restart backoffs, deadlines and TTLs a scenario sets within minutes, short enough that a
 * job waiting on nothing ends the run. */
#define DEFAULT_UNTIL_AFTER_LAST 3600

typedef struct sim {
	tfjob__sbuf out;
	tfjob__sbuf events;
	tfjob_job *job;
	json_t *pods;
	json_t *services;
	json_t *pod_group; /* gang scheduling: the job's PodGroup, NULL = none */
	tfjob_plan_options popts;
	int64_t start;
	int64_t now;
	unsigned steps, max_steps;
	bool deleted;
	bool has_requeue;
	int64_t requeue_at;
	tfjob_error **err;
	char *last_conditions;
} sim;

static void addf(tfjob__sbuf *b, const char *fmt, ...) TFJOB_PRINTF(2, 3);
static void addf(tfjob__sbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = tfjob__strdup_vprintf(fmt, ap);
	va_end(ap);
	if (!s) {
		b->oom = true;
		return;
	}
	tfjob__sbuf_adds(b, s);
	free(s);
}

static const char *job_name(sim *s) { return tfjob_job_name(s->job) ? tfjob_job_name(s->job) : ""; }

/* ---- the in-memory cluster ---- */

static json_t *find_named(json_t *items, const char *name, size_t *pos)
{
	size_t i;
	json_t *o;
	json_array_foreach(items, i, o) {
		const char *n = tfjob__str(tfjob__obj(o, "metadata"), "name");
		if (n && !strcmp(n, name)) {
			if (pos)
				*pos = i;
			return o;
		}
	}
	return NULL;
}

/* A JSON merge patch (RFC 7386) of src into dst: null removes a field. */
static void merge(json_t *dst, json_t *src)
{
	const char *k;
	json_t *v;
	json_object_foreach(src, k, v) {
		json_t *cur = json_object_get(dst, k);
		if (json_is_null(v))
			json_object_del(dst, k);
		else if (json_is_object(cur) && json_is_object(v))
			merge(cur, v);
		else
			json_object_set(dst, k, v);
	}
}

/* The object of action i (its created object or its patch), new reference; NULL with *rc set on failure. */
static json_t *action_object(sim *s, const tfjob_plan *plan, size_t i, int *rc)
{
	char *text = NULL;
	*rc = tfjob_plan_action_object_json(&text, plan, i, 0, s->err);
	if (*rc)
		return NULL;
	json_t *obj = json_loads(text, 0, NULL);
	tfjob_free(text);
	if (!obj)
		*rc = tfjob__oom(s->err);
	return obj;
}

static void record(sim *s, const char *type, const char *reason, const char *message)
{
	addf(&s->events, "  %-8s %-28s +%-6" PRId64 " %s\n", type, reason, s->now - s->start, message);
}

/* ---- the simulated cluster's writes, for the plan executor (execute.h) ---- */

static void sim_event(void *ctx, const char *type, const char *reason, const char *message)
{
	record(ctx, type, reason, message);
}

/* Every action but an Event is printed as it is carried out. */
static void sim_before(void *ctx, const tfjob_plan *plan, size_t i)
{
	sim *s = ctx;
	addf(&s->out, "           %s %s %s\n", tfjob_action_type_name(tfjob_plan_action_type(plan, i)),
	     tfjob_object_kind_name(tfjob_plan_action_kind(plan, i)), tfjob_plan_action_name(plan, i));
}

static json_t *children_of(sim *s, const tfjob_plan *plan, size_t i)
{
	return tfjob_plan_action_kind(plan, i) == TFJOB_OBJECT_POD ? s->pods : s->services;
}

/* A new Pod starts Pending; a name taken already is left as it is (AlreadyExists). */
static int sim_create(void *ctx, const tfjob_plan *plan, size_t i, tfjob_error **err)
{
	sim *s = ctx;
	json_t *items = children_of(s, plan, i);
	int rc = 0;
	json_t *obj = action_object(s, plan, i, &rc);
	if (!obj)
		return rc ? rc : tfjob__oom(err);
	if (tfjob_plan_action_kind(plan, i) == TFJOB_OBJECT_POD)
		json_object_set_new(obj, "status", json_pack("{s:s}", "phase", "Pending"));
	if (find_named(items, tfjob_plan_action_name(plan, i), NULL) || json_array_append_new(items, obj))
		json_decref(obj);
	return 0;
}

static int sim_delete(void *ctx, const tfjob_plan *plan, size_t i, tfjob_error **err)
{
	(void)err;
	sim *s = ctx;
	json_t *items = children_of(s, plan, i);
	size_t pos;
	if (find_named(items, tfjob_plan_action_name(plan, i), &pos))
		json_array_remove(items, pos);
	return 0;
}

/* Adopt or release: the action's object is a merge patch of the child. */
static int sim_claim(void *ctx, const tfjob_plan *plan, size_t i, tfjob_error **err)
{
	sim *s = ctx;
	int rc = 0;
	json_t *patch = action_object(s, plan, i, &rc);
	if (!patch)
		return rc ? rc : tfjob__oom(err);
	json_t *child = find_named(children_of(s, plan, i), tfjob_plan_action_name(plan, i), NULL);
	if (child)
		merge(child, patch);
	json_decref(patch);
	return 0;
}

/* The in-memory gang scheduler admits a group as soon as it exists. */
static int sim_write_pod_group(void *ctx, const tfjob_plan *plan, size_t i, tfjob_error **err)
{
	sim *s = ctx;
	tfjob_action_type type = tfjob_plan_action_type(plan, i);
	int rc = 0;
	json_t *obj = action_object(s, plan, i, &rc);
	if (!obj)
		return rc ? rc : tfjob__oom(err);
	if (type == TFJOB_ACTION_PATCH && s->pod_group) {
		merge(s->pod_group, obj);
		json_decref(obj);
	} else if (type == TFJOB_ACTION_CREATE && !s->pod_group) {
		s->pod_group = obj;
		if (json_object_set_new(obj, "status", json_pack("{s:s}", "phase", "Running")))
			return tfjob__oom(err);
	} else {
		json_decref(obj); /* AlreadyExists, or NotFound */
	}
	return 0;
}

static int sim_delete_pod_group(void *ctx, const tfjob_plan *plan, size_t i, tfjob_error **err)
{
	(void)plan, (void)i, (void)err;
	sim *s = ctx;
	json_decref(s->pod_group);
	s->pod_group = NULL;
	return 0;
}

static int sim_delete_job(void *ctx, tfjob_error **err)
{
	(void)err;
	((sim *)ctx)->deleted = true;
	return 0;
}

static const tfjob__exec_ops SIMULATED_WRITES = {
	.event = sim_event,
	.before = sim_before,
	.create_child = sim_create,
	.delete_child = sim_delete,
	.claim = sim_claim,
	.write_pod_group = sim_write_pod_group,
	.delete_pod_group = sim_delete_pod_group,
	.delete_job = sim_delete_job,
};

static int apply_plan(sim *s, const tfjob_plan *plan, bool *acted)
{
	tfjob__exec_result res;
	int rc = tfjob__plan_execute(plan, &SIMULATED_WRITES, s, &res, s->err);
	*acted = res.acted;
	return rc;
}

static void print_conditions(sim *s, const char *indent)
{
	json_t *st = tfjob__status(s->job);
	json_t *conds = tfjob__arr(st, "conditions");
	tfjob__sbuf line = TFJOB__SBUF_INIT;
	tfjob__sbuf_adds(&line, "conditions:");
	size_t i;
	json_t *c;
	json_array_foreach(conds, i, c) {
		const char *t = tfjob__str(c, "type"), *v = tfjob__str(c, "status");
		addf(&line, " %s=%s", t ? t : "?", v ? v : "?");
	}
	if (!json_array_size(conds))
		tfjob__sbuf_adds(&line, " (none)");
	char *text = tfjob__sbuf_take(&line);
	if (!text) {
		s->out.oom = true;
		return;
	}
	if (!s->last_conditions || strcmp(text, s->last_conditions)) {
		addf(&s->out, "%s%s\n", indent, text);
		free(s->last_conditions);
		s->last_conditions = text;
	} else {
		free(text);
	}
}

/* One reconcile; *quiet when it neither acted nor changed the status. */
static int step(sim *s, bool *quiet)
{
	*quiet = true;
	char *pods = json_dumps(s->pods, JSON_COMPACT), *svcs = json_dumps(s->services, JSON_COMPACT);
	if (!pods || !svcs) {
		free(pods);
		free(svcs);
		return tfjob__oom(s->err);
	}
	s->popts.now = s->now;
	char *pg = s->pod_group ? json_dumps(s->pod_group, JSON_COMPACT) : NULL;
	s->popts.pod_group_json = pg;
	tfjob_plan *plan = NULL;
	int rc = s->pod_group && !pg ? tfjob__oom(s->err) : tfjob_plan_new(&plan, s->job, pods, svcs, &s->popts, s->err);
	s->popts.pod_group_json = NULL;
	free(pg);
	free(pods);
	free(svcs);
	if (rc)
		return rc;
	s->steps++;
	bool acted = false;
	rc = apply_plan(s, plan, &acted);
	if (!rc && tfjob_plan_status_changed(plan)) {
		char *st = NULL;
		rc = tfjob_plan_status_json(&st, plan, 0, s->err);
		if (!rc)
			rc = tfjob_job_set_status_json(s->job, st, s->err);
		tfjob_free(st);
		if (!rc)
			print_conditions(s, "           ");
	}
	int64_t after;
	if (!rc && tfjob_plan_requeue_after(&after, plan) == 0) {
		int64_t at = s->now + (after > MAX_OFFSET ? MAX_OFFSET + 1 : after);
		if (!s->has_requeue || at < s->requeue_at || s->requeue_at <= s->now) {
			s->has_requeue = true;
			s->requeue_at = at;
		}
	}
	*quiet = !acted && !tfjob_plan_status_changed(plan);
	tfjob_plan_free(plan);
	return rc;
}

/* Reconcile until the cluster is quiet at this instant (the controller reacting to its own writes). */
static int settle(sim *s)
{
	for (int i = 0; i < STEPS_PER_INSTANT && !s->deleted; i++) {
		if (s->steps >= s->max_steps)
			return 0;
		bool quiet;
		int rc = step(s, &quiet);
		if (rc)
			return rc;
		if (quiet && !(s->has_requeue && s->requeue_at <= s->now))
			return 0;
		if (quiet)
			s->has_requeue = false; /* a requeue at once that changed nothing: wait for the next event */
	}
	return 0;
}

/* ---- scenario changes ---- */

static int apply_pod_change(sim *s, const char *key, json_t *change)
{
	char *name = tfjob__strdup_printf("%s-%s", job_name(s), key);
	if (!name)
		return tfjob__oom(s->err);
	json_t *pod = find_named(s->pods, name, NULL);
	if (!pod) {
		addf(&s->out, "           (no pod %s: change ignored)\n", name);
		free(name);
		return 0;
	}
	free(name);
	const char *phase = json_is_string(change) ? json_string_value(change) : tfjob__str(change, "phase");
	json_t *status = json_object();
	if (!status)
		return tfjob__oom(s->err);
	if (phase)
		json_object_set_new(status, "phase", json_string(phase));
	int64_t code = 0, restarts = 0;
	bool has_code = json_is_object(change) && tfjob__int(&code, change, "exitCode") == 0;
	if (json_is_object(change))
		tfjob__int(&restarts, change, "restartCount");
	json_t *state = json_object();
	const char *waiting = json_is_object(change) ? tfjob__str(change, "waiting") : NULL;
	const char *reason = json_is_object(change) ? tfjob__str(change, "reason") : NULL;
	const char *message = json_is_object(change) ? tfjob__str(change, "message") : NULL;
	if (has_code) {
		json_t *term = json_pack("{s:I}", "exitCode", (json_int_t)code);
		if (reason)
			json_object_set_new(term, "reason", json_string(reason));
		if (message)
			json_object_set_new(term, "message", json_string(message));
		json_object_set_new(state, "terminated", term);
	} else if (waiting) {
		json_object_set_new(state, "waiting", json_pack("{s:s,s:s}", "reason", waiting, "message", message ? message : waiting));
	} else if (phase && !strcmp(phase, "Running")) {
		json_object_set_new(state, "running", json_object());
	}
	json_object_set_new(status, "containerStatuses",
	                    json_pack("[{s:s,s:I,s:o}]", "name", TFJOB__CONTAINER_NAME, "restartCount", (json_int_t)restarts,
	                              "state", state));
	json_object_set_new(pod, "status", status);
	return 0;
}

static int apply_entry(sim *s, json_t *entry)
{
	json_t *pods = tfjob__obj(entry, "pods");
	const char *key;
	json_t *change;
	tfjob__sbuf_adds(&s->out, "changes:");
	json_object_foreach(pods, key, change) {
		const char *phase = json_is_string(change) ? json_string_value(change) : tfjob__str(change, "phase");
		int64_t code;
		addf(&s->out, " %s %s", key, phase ? phase : "");
		if (json_is_object(change) && tfjob__int(&code, change, "exitCode") == 0)
			addf(&s->out, " (exit %" PRId64 ")", code);
		tfjob__sbuf_addc(&s->out, ';');
	}
	json_t *spec = tfjob__obj(entry, "spec");
	if (spec) {
		char *text = json_dumps(spec, JSON_COMPACT);
		addf(&s->out, " spec %s;", text ? text : "");
		free(text);
	}
	json_t *deletes = tfjob__arr(entry, "deletePods");
	size_t i;
	json_t *d;
	json_array_foreach(deletes, i, d)
		addf(&s->out, " delete %s;", json_string_value(d) ? json_string_value(d) : "?");
	tfjob__sbuf_addc(&s->out, '\n');
	json_object_foreach(pods, key, change) {
		int rc = apply_pod_change(s, key, change);
		if (rc)
			return rc;
	}
	if (spec) {
		json_t *js = tfjob__spec(s->job);
		if (js)
			merge(js, spec);
	}
	json_array_foreach(deletes, i, d) {
		char *name = tfjob__strdup_printf("%s-%s", job_name(s), json_string_value(d) ? json_string_value(d) : "");
		size_t pos;
		if (name && find_named(s->pods, name, &pos))
			json_array_remove(s->pods, pos);
		free(name);
	}
	return 0;
}

static void report_final(sim *s)
{
	json_t *st = tfjob__status(s->job);
	char buf[48];
	tfjob__sbuf_adds(&s->out, "\nStatus:\n  Conditions:\n    Type        Status  Reason                 Last Transition       Message\n");
	json_t *conds = tfjob__arr(st, "conditions");
	size_t i;
	json_t *c;
	json_array_foreach(conds, i, c) {
		const char *t = tfjob__str(c, "type"), *v = tfjob__str(c, "status"), *r = tfjob__str(c, "reason"),
		           *lt = tfjob__str(c, "lastTransitionTime"), *m = tfjob__str(c, "message");
		addf(&s->out, "    %-11s %-7s %-22s %-21s %s\n", t ? t : "", v ? v : "", r ? r : "", lt ? lt : "", m ? m : "");
	}
	tfjob__sbuf_adds(&s->out, "  Replica Statuses:\n");
	json_t *rs = tfjob__obj(st, "replicaStatuses");
	const char *k;
	json_t *v;
	json_object_foreach(rs, k, v) {
		int64_t a = 0, su = 0, f = 0;
		tfjob__int(&a, v, "active");
		tfjob__int(&su, v, "succeeded");
		tfjob__int(&f, v, "failed");
		addf(&s->out, "    %-10s active %" PRId64 ", succeeded %" PRId64 ", failed %" PRId64 "\n", k, a, su, f);
	}
	const char *start = tfjob__str(st, "startTime"), *done = tfjob__str(st, "completionTime");
	addf(&s->out, "  Start Time:       %s\n  Completion Time:  %s\n", start ? start : "<none>", done ? done : "<none>");
	addf(&s->out, "  Pods left:        %zu   Services left: %zu   TFJob deleted: %s\n", json_array_size(s->pods),
	     json_array_size(s->services), s->deleted ? "yes" : "no");
	addf(&s->out, "  Reconcile steps:  %u   Simulated until: %s\n", s->steps, tfjob_time_format(buf, sizeof buf, s->now));
	tfjob__sbuf_adds(&s->out, "\nEvents:\n  Type     Reason                       At      Message\n"
	                          "  ----     ------                       --      -------\n");
	if (s->events.len)
		tfjob__sbuf_add(&s->out, s->events.p, s->events.len);
}

int tfjob_simulate_options_init(tfjob_simulate_options *opts, unsigned int version)
{
	return tfjob__versioned_init(&tfjob__simulate_options_v, opts, version);
}

static int scenario_error(tfjob_error **err, const char *what)
{
	return tfjob__fail(err, TFJOB_ESCHEMA, "scenario: %s (see docs/simulate.md)", what);
}

/* Check the scenario's timeline: each entry has an 'at' not before the previous one. *last gets
 * the last 'at' (0 for none). */
static int read_timeline(int64_t *last, const json_t *timeline, tfjob_error **err)
{
	*last = 0;
	size_t i;
	json_t *e;
	json_array_foreach(timeline, i, e) {
		int64_t at;
		if (!json_is_object(e) || tfjob__int(&at, e, "at") || at < *last || at > MAX_OFFSET)
			return tfjob__fail(err, TFJOB_ESCHEMA,
			                   "scenario: timeline[%zu] needs 'at' (seconds, not before the previous entry, at "
			                   "most %" PRId64 ")", i, MAX_OFFSET);
		*last = at;
	}
	return 0;
}

/* The scenario's settings into s (compat, start, the job) and *until; the timeline is checked. */
static int read_scenario(sim *s, json_t *root, const tfjob_simulate_options *opts, int64_t *until, tfjob_error **err)
{
	json_t *timeline = json_object_get(root, "timeline"), *jobv = json_object_get(root, "job");
	const char *compat = tfjob__str(root, "compat"), *start = tfjob__str(root, "start");
	if (!json_is_object(root) || !json_is_object(jobv))
		return scenario_error(err, "a mapping with a 'job' mapping is required");
	if (timeline && !json_is_array(timeline))
		return scenario_error(err, "'timeline' must be a list");
	if (opts->override_compat)
		s->popts.compat = opts->compat;
	else if (compat && tfjob_compat_from_string(&s->popts.compat, compat))
		return tfjob__fail(err, TFJOB_ESCHEMA, "scenario: unknown compat '%s'", compat);
	s->start = DEFAULT_START;
	if (start && tfjob_time_parse(&s->start, start))
		return tfjob__fail(err, TFJOB_ESCHEMA, "scenario: start '%s' is not an RFC 3339 time", start);
	int64_t last;
	int rc = read_timeline(&last, timeline, err);
	if (rc)
		return rc;
	if (tfjob__int(until, root, "until"))
		*until = last + DEFAULT_UNTIL_AFTER_LAST;
	else if (*until < 0 || *until > MAX_OFFSET)
		return tfjob__fail(err, TFJOB_ESCHEMA, "scenario: 'until' must be 0 to %" PRId64 " seconds", MAX_OFFSET);
	rc = tfjob__job_wrap(&s->job, json_deep_copy(jobv), "scenario job", err);
	if (!rc && !tfjob_job_name(s->job))
		rc = scenario_error(err, "the job needs metadata.name");
	return rc;
}

/* Apply the timeline's entries from *next that happen at entry_at (s->now), on one line each. */
static int apply_entries_at(sim *s, json_t *timeline, size_t *next, int64_t entry_at)
{
	int rc = 0;
	for (bool first = true; !rc && *next < json_array_size(timeline); first = false) {
		int64_t at;
		tfjob__int(&at, json_array_get(timeline, *next), "at");
		if (at + s->start != entry_at)
			break;
		if (first)
			addf(&s->out, "  +%-7" PRId64 " ", s->now - s->start);
		else
			tfjob__sbuf_adds(&s->out, "           ");
		rc = apply_entry(s, json_array_get(timeline, *next));
		(*next)++;
	}
	return rc;
}

/* Run the job from its creation: the timeline's entries and the planner's requeues, in time
 * order, each followed by reconciles until the cluster is quiet. */
static int run_timeline(sim *s, json_t *timeline, int64_t until)
{
	size_t next = 0;
	s->now = s->start;
	addf(&s->out, "  +%-7" PRId64 " job created\n", (int64_t)0);
	int rc = settle(s);
	while (!rc && !s->deleted && s->steps < s->max_steps) {
		bool have_entry = next < json_array_size(timeline);
		int64_t entry_at = 0;
		if (have_entry)
			tfjob__int(&entry_at, json_array_get(timeline, next), "at");
		entry_at += s->start;
		bool have_requeue = s->has_requeue && s->requeue_at > s->now && s->requeue_at - s->start <= until;
		if (!have_entry && !have_requeue)
			break;
		if (have_entry && (!have_requeue || entry_at <= s->requeue_at)) {
			s->now = entry_at > s->now ? entry_at : s->now;
			rc = apply_entries_at(s, timeline, &next, entry_at);
		} else {
			s->now = s->requeue_at;
			s->has_requeue = false;
			addf(&s->out, "  +%-7" PRId64 " requeue\n", s->now - s->start);
		}
		if (!rc)
			rc = settle(s);
	}
	if (!rc && !s->deleted && s->steps >= s->max_steps)
		addf(&s->out, "           (stopped: %u reconcile steps)\n", s->steps);
	return rc;
}

static void sim_free(sim *s)
{
	tfjob__sbuf_free(&s->out);
	tfjob__sbuf_free(&s->events);
	free(s->last_conditions);
	tfjob_job_free(s->job);
	json_decref(s->pods);
	json_decref(s->services);
	json_decref(s->pod_group);
}

int tfjob_simulate(char **out, const char *scenario, size_t len, const tfjob_simulate_options *caller_opts, tfjob_error **err)
{
	if (!out || !scenario)
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_simulate: out and scenario are required");
	*out = NULL;
	tfjob_simulate_options opts;
	int rc = tfjob__versioned_copy(&tfjob__simulate_options_v, &opts, caller_opts, err);
	json_t *root = NULL;
	if (!rc)
		rc = tfjob__load_one(&root, scenario, len, "scenario", err);
	if (rc)
		return rc;
	sim s;
	memset(&s, 0, sizeof s);
	s.err = err;
	tfjob_plan_options pinit = TFJOB_PLAN_OPTIONS_INIT;
	s.popts = pinit;
	s.popts.render = opts.render;
	s.max_steps = opts.max_steps ? opts.max_steps : DEFAULT_MAX_STEPS;
	s.pods = json_array();
	s.services = json_array();
	int64_t until = 0;
	rc = s.pods && s.services ? read_scenario(&s, root, &opts, &until, err) : tfjob__oom(err);
	if (!rc) {
		const char *desc = tfjob__str(root, "description");
		char buf[48];
		addf(&s.out, "Scenario: %s\nTFJob:    %s/%s   compat: %s   start: %s\n\nTimeline:\n",
		     desc ? desc : "(no description)",
		     tfjob_job_namespace(s.job) ? tfjob_job_namespace(s.job) : "default", job_name(&s),
		     tfjob_compat_name(s.popts.compat), tfjob_time_format(buf, sizeof buf, s.start));
		rc = run_timeline(&s, json_object_get(root, "timeline"), until);
	}
	if (!rc) {
		report_final(&s);
		*out = s.out.oom || s.events.oom ? NULL : tfjob__sbuf_take(&s.out);
		if (!*out)
			rc = tfjob__oom(err);
	}
	sim_free(&s);
	json_decref(root);
	return rc;
}
