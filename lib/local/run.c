/*
 * tfjob_local_run(): the controller loop on the local backend. plan -> execute the actions
 * through the transport -> wait for a process event or the requeue time -> plan again.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/job.h"
#include "core/objects.h"
#include "local/internal.h"
#include "local/run.h"
#include "plan/execute.h"
#include "plan/planner.h"
#include "util/versioned_structs.h"

#define IDLE_WAIT_MS 1000
#define QUIET_REQUEUE_MS 100
#define RESTART_DELAY_MS 1000      /* first delay before recreating a restarted replica */
#define RESTART_DELAY_MAX_MS 30000 /* doubling up to this */

int tfjob_local_run_options_init(tfjob_local_run_options *opts, unsigned int version)
{
	return tfjob__versioned_init(&tfjob__local_run_options_v, opts, version);
}

const char *tfjob_local_outcome_name(tfjob_local_outcome outcome)
{
	switch (outcome) {
	case TFJOB_LOCAL_SUCCEEDED: return "Succeeded";
	case TFJOB_LOCAL_FAILED: return "Failed";
	case TFJOB_LOCAL_INTERRUPTED: return "Interrupted";
	default: return "Unknown";
	}
}

/* Engine events (called with the engine's lock held): queue them; the loop records them. */
static void engine_event(const char *pod, const char *type, const char *reason, const char *message, void *payload)
{
	run *r = payload;
	tfjob__run_event(r, "Pod", pod, type, reason, message, false);
	if (r->user_cb)
		r->user_cb(pod, type, reason, message, r->user_payload);
}

/* Validate, default and check a copy of the job. */
static int prepare(run *r, const tfjob_job *job, tfjob_error **err)
{
	int rc = tfjob_job_clone(&r->job, job, err);
	if (rc)
		return rc;
	tfjob_default_options dopts = TFJOB_DEFAULT_OPTIONS_INIT;
	dopts.compat = r->compat;
	tfjob_validate_options vopts = TFJOB_VALIDATE_OPTIONS_INIT;
	vopts.compat = r->compat;
	tfjob_field_errors *fe = NULL;
	rc = tfjob_job_validate(&fe, r->job, &vopts, err);
	if (!rc && tfjob_field_errors_count(fe) > 0)
		rc = tfjob__fail(err, TFJOB_EINVALID, "invalid TFJob: %s", tfjob_field_errors_message(fe, 0));
	tfjob_field_errors_free(fe);
	if (!rc)
		rc = tfjob_job_apply_defaults(r->job, &dopts, err);
	if (!rc)
		rc = tfjob_local_check(r->job, err);
	if (!rc) /* before anything starts: a job asking for more GPUs than there are could never run */
		rc = tfjob__local_gpus_check(r->local, r->job, err);
	return rc;
}

/* Store the job: the store gives it a uid, creationTimestamp and namespace. */
static int store_job(run *r, tfjob_error **err)
{
	json_t *root = r->job->root;
	json_t *meta = tfjob__obj(root, "metadata");
	if (!tfjob__str(meta, "namespace"))
		json_object_set_new(meta, "namespace", json_string("default"));
	json_object_del(root, "status");
	char *text = tfjob__dump(root, 0), *stored = NULL;
	if (!text)
		return tfjob__oom(err);
	tfjob_resource res = TFJOB_RESOURCE_TFJOBS_INIT;
	int rc = tfjob_transport_create(&stored, r->t, &res, tfjob_job_namespace(r->job), text, err);
	free(text);
	if (rc)
		return rc;
	tfjob_job *job = NULL;
	rc = tfjob_job_parse(&job, stored, strlen(stored), NULL, err);
	tfjob_free(stored);
	if (rc)
		return rc;
	tfjob_job_free(r->job);
	r->job = job;
	r->ns = tfjob_job_namespace(job);
	r->name = tfjob_job_name(job);
	return 0;
}

/* The run's Services as parsed objects (from the in-memory store, through the transport). */
static int list_services(tfjob_objects **out, run *r, tfjob_error **err)
{
	*out = NULL;
	tfjob_list_options lo = TFJOB_LIST_OPTIONS_INIT;
	char sel[512];
	int rc = tfjob__run_selector(sel, sizeof sel, r);
	if (rc)
		return tfjob__fail(err, rc, "TFJob name too long for a label selector: %s", r->name);
	lo.label_selector = sel;
	char *text = NULL;
	tfjob_resource res = TFJOB_RESOURCE_SERVICES_INIT;
	rc = tfjob_transport_list(&text, r->t, &res, r->ns, &lo, err);
	if (rc)
		return rc;
	json_t *list = json_loads(text, 0, NULL);
	tfjob_free(text);
	json_t *items = json_incref(json_object_get(list, "items"));
	json_decref(list);
	return items ? tfjob__objects_wrap(out, items, "services", err) : tfjob__oom(err);
}

/* The run's Services, listed again only after the run created or deleted one: it is their only
 * writer (the in-memory store is its own), so a steady step does not parse them. Borrowed. */
static int services(const tfjob_objects **out, run *r, tfjob_error **err)
{
	if (r->services_stale) {
		tfjob_objects *fresh = NULL;
		int rc = list_services(&fresh, r, err);
		if (rc)
			return rc;
		tfjob_objects_free(r->services);
		r->services = fresh;
		r->services_stale = false;
	}
	*out = r->services;
	return 0;
}

/* The run's Pods as the planner reads them: metadata and status, without the spec (which holds
 * the whole TF_CONFIG): a step costs time linear in the number of Pods, not in their bytes. */
static int list_pods(tfjob_objects **out, run *r, tfjob_error **err)
{
	json_t *items = NULL;
	int rc = tfjob__run_pods(&items, r, false, NULL, err);
	return rc ? rc : tfjob__objects_wrap(out, items, "pods", err);
}

/* Will the job be finished once this plan's status is written? */
static bool plan_finishes(const tfjob_plan *plan)
{
	char *text = NULL;
	if (tfjob_plan_status_json(&text, plan, 0, NULL))
		return false;
	json_t *st = json_loads(text, 0, NULL);
	tfjob_free(text);
	bool finished = false;
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(st, "conditions"), i, c) {
		const char *type = tfjob__str(c, "type"), *status = tfjob__str(c, "status");
		if (type && status && !strcmp(status, "True") && (!strcmp(type, "Succeeded") || !strcmp(type, "Failed")))
			finished = true;
	}
	json_decref(st);
	return finished;
}

/* Why this plan deletes Pods, in the words of the report ("deleted by cleanPodPolicy Running"). */
static char *deletion_reason(run *r, const tfjob_plan *plan)
{
	size_t n = tfjob_plan_action_count(plan);
	for (size_t i = 0; i < n; i++) {
		const char *reason = tfjob_plan_action_reason(plan, i);
		if (tfjob_plan_action_type(plan, i) == TFJOB_ACTION_EVENT && reason && !strcmp(reason, TFJOB__REASON_RESTARTING))
			return tfjob__strdup("deleted to be created again (a restart ordered by the job)");
	}
	if (plan_finishes(plan) || tfjob_job_is_finished(r->job)) {
		const char *policy = tfjob__str(tfjob__obj(tfjob__obj(r->job->root, "spec"), "runPolicy"), "cleanPodPolicy");
		return tfjob__strdup_printf("deleted by cleanPodPolicy %s as the job finished", policy ? policy : "");
	}
	return tfjob__strdup("deleted by the job's controller");
}

static void note_deleted(run *r, const char *pod, const char *why)
{
	pthread_mutex_lock(&r->local->lock);
	tfjob__local_note_deleted(r->local, pod, why);
	pthread_mutex_unlock(&r->local->lock);
}

/* Create action i; a Pod that cannot run here is a Warning, as the API server's refusal would be.
 * A Pod is handed to the engine as the tree the planner rendered: its spec holds the whole
 * TF_CONFIG, which printing and parsing again would cost twice per Pod. */
static int create(void *ctx, const tfjob_plan *plan, size_t i, tfjob_error **err)
{
	run *r = ctx;
	tfjob_object_kind kind = tfjob_plan_action_kind(plan, i);
	if (kind == TFJOB_OBJECT_SERVICE)
		r->services_stale = true;
	json_t *pod = NULL;
	char *obj = NULL;
	int rc = kind == TFJOB_OBJECT_POD ? tfjob__plan_action_object(&pod, plan, i, err)
	                                  : tfjob_plan_action_object_json(&obj, plan, i, 0, err);
	if (rc)
		return rc;
	tfjob_error *e = NULL;
	rc = pod ? tfjob__local_create_pod(r->local, r->ns, pod, NULL, &e)
	         : tfjob_transport_create(NULL, r->t, tfjob_resource_lookup(tfjob_object_kind_name(kind)), r->ns, obj, &e);
	tfjob_free(obj);
	if (rc == TFJOB_EEXISTS) {
		rc = 0; /* the runner is the only writer: it is the one the plan wants */
	} else if (rc && kind == TFJOB_OBJECT_POD && rc != TFJOB_ENOMEM) {
		tfjob__run_event(r, "TFJob", r->name, "Warning", "FailedCreatePod", tfjob_error_message(e), true);
		rc = tfjob__fail(err, tfjob_error_code_of(e), "%s", tfjob_error_message(e));
	} else if (rc && err) {
		*err = e, e = NULL;
	}
	tfjob_error_free(e);
	return rc;
}

/* Delete action i's Pod or Service; a Pod's deletion is noted with why, for the report. */
static int delete_child(void *ctx, const tfjob_plan *plan, size_t i, tfjob_error **err)
{
	run *r = ctx;
	tfjob_object_kind kind = tfjob_plan_action_kind(plan, i);
	const char *name = tfjob_plan_action_name(plan, i);
	if (kind == TFJOB_OBJECT_SERVICE)
		r->services_stale = true;
	int rc = tfjob_transport_delete(NULL, r->t, tfjob_resource_lookup(tfjob_object_kind_name(kind)), r->ns, name, NULL,
	                                err);
	if (!rc && kind == TFJOB_OBJECT_POD) {
		if (!r->deletion_why)
			r->deletion_why = deletion_reason(r, plan);
		note_deleted(r, name, r->deletion_why ? r->deletion_why : "deleted");
	}
	return rc;
}

/* Adopt or release action i's child: its merge patch of owner references. */
static int claim(void *ctx, const tfjob_plan *plan, size_t i, tfjob_error **err)
{
	run *r = ctx;
	tfjob_object_kind kind = tfjob_plan_action_kind(plan, i);
	if (kind == TFJOB_OBJECT_SERVICE)
		r->services_stale = true;
	char *patch = NULL;
	int rc = tfjob_plan_action_object_json(&patch, plan, i, TFJOB_JSON_COMPACT, err);
	if (!rc)
		rc = tfjob_transport_patch(NULL, r->t, tfjob_resource_lookup(tfjob_object_kind_name(kind)), r->ns,
		                           tfjob_plan_action_name(plan, i), NULL, patch, err);
	tfjob_free(patch);
	return rc;
}

/* The job's TTL ran out: the run ends with the job gone (the executor records the Event). */
static int delete_job(void *ctx, tfjob_error **err)
{
	(void)err;
	((run *)ctx)->deleted = true;
	return 0;
}

static void job_event(void *ctx, const char *type, const char *reason, const char *message)
{
	run *r = ctx;
	tfjob__run_event(r, "TFJob", r->name, type, reason, message, false);
}

/* The local runner's writes, for the plan executor (lib/plan/execute.h). No PodGroup: no gang
 * scheduler runs local processes. Children are reported in the run's own words (the replica
 * table, the deletion notes), not as Events. */
static const tfjob__exec_ops LOCAL_WRITES = {
	.event = job_event,
	.create_child = create,
	.delete_child = delete_child,
	.claim = claim,
	.delete_job = delete_job,
};

static int execute(run *r, const tfjob_plan *plan, bool *acted, tfjob_error **err)
{
	tfjob__exec_result res;
	int rc = tfjob__plan_execute(plan, &LOCAL_WRITES, r, &res, err);
	free(r->deletion_why);
	r->deletion_why = NULL;
	*acted = *acted || res.acted;
	r->restarted = r->restarted || res.restarted;
	if (!rc)
		rc = tfjob__run_save_replicas(r, err);
	return rc;
}

/* Write the job's status to the store, at the resourceVersion we hold (we are its only writer),
 * and keep the new resourceVersion. */
static int store_status(run *r, tfjob_error **err)
{
	char *text = tfjob__dump(r->job->root, 0), *stored = NULL;
	if (!text)
		return tfjob__oom(err);
	tfjob_resource res = TFJOB_RESOURCE_TFJOBS_INIT;
	int rc = tfjob_transport_update_status(&stored, r->t, &res, r->ns, text, err);
	free(text);
	json_t *o = rc ? NULL : json_loads(stored, 0, NULL);
	tfjob_free(stored);
	json_t *rv = json_object_get(tfjob__obj(o, "metadata"), "resourceVersion");
	if (rv)
		json_object_set(tfjob__obj(r->job->root, "metadata"), "resourceVersion", rv);
	json_decref(o);
	return rc;
}

static int write_status(run *r, const tfjob_plan *plan, tfjob_error **err)
{
	char *st = NULL;
	int rc = tfjob_plan_status_json(&st, plan, 0, err);
	if (!rc)
		rc = tfjob_job_set_status_json(r->job, st, err);
	if (!rc) {
		rc = store_status(r, err);
		if (!rc)
			rc = tfjob__run_save_job(r, err);
		if (!rc && r->on_update)
			r->on_update(TFJOB_LOCAL_UPDATE_STATUS, st, r->payload);
	}
	tfjob_free(st);
	return rc;
}

static bool any_deleting(tfjob_local *l)
{
	bool d = false;
	pthread_mutex_lock(&l->lock);
	for (lpod *p = l->pods; p; p = p->next)
		d = d || p->deleting;
	pthread_mutex_unlock(&l->lock);
	return d;
}

/* Some Pod may still change by itself: it is pending, running, restarting or being deleted. */
static bool any_live(tfjob_local *l)
{
	bool live = false;
	pthread_mutex_lock(&l->lock);
	for (lpod *p = l->pods; p && !live; p = p->next)
		live = p->state != LPOD_DONE || p->deleting;
	pthread_mutex_unlock(&l->lock);
	return live;
}

/* One reconcile step. *done when the job is finished and nothing is left to do. */
static int step(run *r, bool *done, int64_t *wait_ms, tfjob_error **err)
{
	tfjob_objects *pods = NULL;
	const tfjob_objects *svcs = NULL;
	int rc = list_pods(&pods, r, err);
	if (!rc)
		rc = services(&svcs, r, err);
	if (!rc)
		rc = tfjob__run_save_pods(r, false, err);
	tfjob_plan *plan = NULL;
	if (!rc) {
		r->popts.now = tfjob__local_wall();
		/* The work queue's requeue count: each restart is a rate-limited requeue, so backoffLimit
		 * bounds ExitCode restarts too (documented mode); v1.9's operator always reports 0. */
		r->popts.requeues = r->compat == TFJOB_COMPAT_TRAINING_OPERATOR_1_9 ? 0 : r->restarts;
		r->restarted = false;
		rc = tfjob_plan_new_with_objects(&plan, r->job, pods, svcs, &r->popts, err);
	}
	tfjob_objects_free(pods);
	bool acted = false;
	if (!rc)
		rc = execute(r, plan, &acted, err);
	if (!rc) /* the plan's events at once (one events.json write per step, not one per event) */
		rc = tfjob__run_flush_events(r, err);
	if (!rc && acted) /* what the actions made is shown before the engine starts it: new Pods are Pending */
		rc = tfjob__run_save_pods(r, false, err);
	if (!rc && tfjob_plan_status_changed(plan))
		rc = write_status(r, plan, err);
	if (!rc)
		rc = tfjob__run_flush_events(r, err);
	int64_t after = -1;
	bool requeue = plan && tfjob_plan_requeue_after(&after, plan) == 0;
	bool quiet = !acted && plan && !tfjob_plan_status_changed(plan);
	tfjob_plan_free(plan);
	if (rc)
		return rc;
	if (r->restarted) {
		/* Rate limit, as a work queue's per-item backoff: the replica is recreated after 1 s,
		 * 2 s, 4 s, ... 30 s, not in a tight loop. Decisions stay the planner's. */
		int64_t delay = RESTART_DELAY_MS;
		for (int64_t n = 0; n < r->restarts && delay < RESTART_DELAY_MAX_MS; n++)
			delay *= 2;
		r->restarts++;
		r->not_before_ms = tfjob__monotonic_ms() + (delay < RESTART_DELAY_MAX_MS ? delay : RESTART_DELAY_MAX_MS);
	}
	*done = r->deleted || (tfjob_job_is_finished(r->job) && quiet && !requeue && !any_deleting(r->local));
	int64_t deadline;
	if (!*done && quiet && !requeue && !r->restarted && !any_live(r->local) &&
	    tfjob_job_active_deadline_seconds(&deadline, r->job) != 0) {
		/* Nothing can change any more: every Pod has ended for good, the planner has nothing to do
		 * and no time rule will wake it (on a cluster the job would stay unfinished forever, e.g.
		 * one with only PS replicas, which never decide success). */
		tfjob__run_event(r, "TFJob", r->name, "Warning", "LocalRunStuck",
		                 "every replica has ended and the planner has nothing more to do: the job can never finish",
		                 true);
		return tfjob__fail(err, TFJOB_ESTATE,
		                   "TFJob %s can never finish: every replica has ended, it is neither Succeeded nor Failed, and "
		                   "the planner has nothing more to do (only Chief/Master or Worker replicas decide success)",
		                   r->name);
	}
	*wait_ms = IDLE_WAIT_MS;
	if (requeue)
		*wait_ms = after > 0 ? (after * 1000 < IDLE_WAIT_MS ? after * 1000 : IDLE_WAIT_MS) : (quiet ? QUIET_REQUEUE_MS : 0);
	else if (!quiet)
		*wait_ms = 0;
	int64_t files_due = tfjob__run_files_due_ms(r);
	if (files_due >= 0 && files_due < *wait_ms) /* a deferred pods.json or events.json write */
		*wait_ms = files_due;
	return 0;
}

/* The TFJob was deleted (TTL): its Pods and Services go with it, as the garbage collector does. */
static int collect(run *r, tfjob_error **err)
{
	tfjob_resource res = TFJOB_RESOURCE_TFJOBS_INIT;
	tfjob_transport_delete(NULL, r->t, &res, r->ns, r->name, NULL, NULL);
	tfjob__run_event(r, "TFJob", r->name, "Normal", "Deleted",
	                 "TFJob deleted (ttlSecondsAfterFinished): its pods and services are deleted with it", true);
	tfjob_objects *kids[2] = { NULL, NULL };
	int rc = list_pods(&kids[0], r, err);
	if (!rc)
		rc = list_services(&kids[1], r, err);
	for (size_t k = 0; k < 2 && !rc; k++) {
		const tfjob_resource *kind = tfjob_resource_lookup(k ? "services" : "pods");
		for (size_t i = 0; i < tfjob__objects_size(kids[k]); i++) {
			const char *name = kids[k]->sums[i].name;
			if (name && tfjob_transport_delete(NULL, r->t, kind, r->ns, name, NULL, NULL) == 0 && !k)
				note_deleted(r, name, "deleted with the TFJob (ttlSecondsAfterFinished)");
		}
	}
	tfjob_objects_free(kids[0]);
	tfjob_objects_free(kids[1]);
	if (rc)
		return rc;
	while (any_deleting(r->local) && !r->local->interrupts) {
		rc = tfjob_local_poll(r->local, IDLE_WAIT_MS, err);
		if (rc < 0)
			return rc;
	}
	return 0;
}

static int loop(run *r, tfjob_error **err)
{
	for (;;) {
		if (r->local->interrupts)
			return 0;
		bool done = false;
		int64_t wait_ms = 0;
		int rc = step(r, &done, &wait_ms, err);
		if (rc)
			return rc;
		if (r->deleted)
			return collect(r, err);
		if (done)
			return 0;
		rc = tfjob_local_poll(r->local, wait_ms, err);
		if (rc < 0)
			return rc;
		/* Rate-limited after a restart: keep the processes reaped, but do not reconcile yet. */
		while (!r->local->interrupts && tfjob__monotonic_ms() < r->not_before_ms) {
			int64_t wait = r->not_before_ms - tfjob__monotonic_ms(), files_due = tfjob__run_files_due_ms(r);
			rc = tfjob_local_poll(r->local, files_due >= 0 && files_due < wait ? files_due : wait, err);
			if (rc < 0)
				return rc;
			if (rc > 0)
				tfjob__run_flush_events(r, NULL);
			tfjob__run_save_files(r, false, NULL);
		}
	}
}

static void flush_tick(void *payload)
{
	tfjob__run_flush_events(payload, NULL);
}

/* Stop what is left, record it, save the final state. */
static void finish(run *r, const char *why)
{
	size_t left = tfjob_local_running_count(r->local);
	if (left && why)
		tfjob__run_event(r, "TFJob", r->name ? r->name : "", "Normal", "LocalRunEnded", why, true);
	tfjob__local_shutdown_tick(r->local, flush_tick, r);
	tfjob__run_save_replicas(r, NULL);
	tfjob__run_flush_events(r, NULL);
	tfjob__run_save_files(r, true, NULL);
}

int tfjob_local_run(tfjob_local_outcome *out, tfjob_local *local, const tfjob_job *job,
                    const tfjob_local_run_options *caller_opts, tfjob_error **err)
{
	if (!out || !local || !job)
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_local_run: out, local and job are required");
	tfjob_local_run_options copy;
	int rc = tfjob__versioned_copy(&tfjob__local_run_options_v, &copy, caller_opts, err);
	if (rc)
		return rc;
	const tfjob_local_run_options *opts = &copy;
	run r;
	rc = tfjob__run_init(&r, local, opts, err);
	if (rc)
		return rc;
	pthread_mutex_lock(&local->lock);
	r.user_cb = local->on_event;
	r.user_payload = local->event_payload;
	local->on_event = engine_event;
	local->event_payload = &r;
	pthread_mutex_unlock(&local->lock);

	rc = prepare(&r, job, err);
	if (!rc)
		rc = store_job(&r, err);
	if (!rc)
		rc = tfjob__run_save_job(&r, err);
	if (!rc)
		rc = loop(&r, err);
	if (rc) {
		finish(&r, "the run stopped on an error: stopping every process");
	} else if (local->interrupts) {
		char msg[256];
		snprintf(msg, sizeof msg,
		         "interrupted: stopping %zu running processes (SIGTERM, SIGKILL after the grace period; interrupt "
		         "again to kill them at once)", tfjob_local_running_count(local));
		tfjob__run_event(&r, "TFJob", r.name, "Warning", "Interrupted", msg, true);
		finish(&r, NULL);
		*out = TFJOB_LOCAL_INTERRUPTED;
	} else {
		finish(&r, "the job is finished; processes its cleanPodPolicy left running are stopped as the run ends");
		const char *failed = tfjob_job_condition_status(r.job, "Failed");
		*out = failed && !strcmp(failed, "True") ? TFJOB_LOCAL_FAILED : TFJOB_LOCAL_SUCCEEDED;
	}
	if (!rc && r.job)
		rc = tfjob__run_save_job(&r, err);
	pthread_mutex_lock(&local->lock);
	local->on_event = r.user_cb;
	local->event_payload = r.user_payload;
	pthread_mutex_unlock(&local->lock);
	tfjob__run_free(&r);
	return rc;
}
