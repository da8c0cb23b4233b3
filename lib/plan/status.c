/*
 * UpdateJobStatus and the status helpers of the planner.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "plan/step.h"

/* ---- status helpers ---- */

json_t *tfjob__plan_replica_statuses(ctx *c)
{
	json_t *rs = json_object_get(c->status, "replicaStatuses");
	if (!json_is_object(rs)) {
		rs = json_object();
		if (!rs || json_object_set_new(c->status, "replicaStatuses", rs))
			return NULL;
	}
	return rs;
}

int tfjob__plan_set_count(json_t *obj, const char *key, int64_t v)
{
	if (v == 0) {
		json_object_del(obj, key);
		return 0;
	}
	return json_object_set_new(obj, key, json_integer(v)) ? TFJOB_ENOMEM : 0;
}

int64_t tfjob__plan_get_count(json_t *obj, const char *key)
{
	int64_t v = 0;
	tfjob__int(&v, obj, key);
	return v;
}

int tfjob__plan_cond_set(ctx *c, const char *type, const char *cstatus, const char *reason, const char *message)
{
	if (tfjob__cond_set(c->status, type, cstatus, reason, message, c->now, c->compat))
		return tfjob__oom(c->err);
	return 0;
}

bool tfjob__plan_finished(ctx *c)
{
	return tfjob__cond_true(c->status, TFJOB__COND_SUCCEEDED) || tfjob__cond_true(c->status, TFJOB__COND_FAILED);
}

int tfjob__plan_set_completion(ctx *c)
{
	json_t *v = json_object_get(c->status, "completionTime");
	if (v && !json_is_null(v))
		return 0;
	return tfjob__status_set_time(c->status, "completionTime", c->now) ? tfjob__oom(c->err) : 0;
}

/* ---- UpdateJobStatus ---- */

const char *const tfjob__plan_all_types[TFJOB__PLAN_TYPE_COUNT] = { TFJOB__TYPE_CHIEF, TFJOB__TYPE_EVALUATOR, TFJOB__TYPE_MASTER,
	                                 TFJOB__TYPE_PS, TFJOB__TYPE_WORKER };

static rtype_state *find_type(ctx *c, const char *key)
{
	for (size_t i = 0; i < c->ntypes; i++)
		if (!strcmp(c->types[i].key, key))
			return &c->types[i];
	return NULL;
}

static bool has_chief(ctx *c) { return find_type(c, TFJOB__TYPE_CHIEF) || find_type(c, TFJOB__TYPE_MASTER); }

/* A terminal transition: its event, completionTime (when asked), then the condition True. */
int tfjob__plan_record_terminal(ctx *c, tfjob_event_type event_type, const char *reason, const char *cond,
                           const char *msg, bool set_completion)
{
	int rc = tfjob__plan_event(c, event_type, reason, msg);
	if (!rc && set_completion)
		rc = tfjob__plan_set_completion(c);
	if (!rc)
		rc = tfjob__plan_cond_set(c, cond, "True", reason, msg);
	return rc;
}

static int succeed(ctx *c)
{
	char *msg = tfjob__strdup_printf("TFJob %s/%s successfully completed.", c->ns, c->name);
	if (!msg)
		return tfjob__oom(c->err);
	int rc = tfjob__plan_record_terminal(c, TFJOB_EVENT_NORMAL, TFJOB__REASON_SUCCEEDED, TFJOB__COND_SUCCEEDED, msg, true);
	free(msg);
	return rc;
}

static int running(ctx *c)
{
	char *msg = tfjob__strdup_printf("TFJob %s/%s is running.", c->ns, c->name);
	if (!msg)
		return tfjob__oom(c->err);
	int rc = tfjob__plan_cond_set(c, TFJOB__COND_RUNNING, "True", TFJOB__REASON_RUNNING, msg);
	free(msg);
	return rc;
}

static int fail_type(ctx *c, rtype_state *rt, bool set_completion)
{
	char *msg = tfjob__strdup_printf("TFJob %s/%s has failed because %" PRId64 " %s replica(s) failed.", c->ns,
	                                 c->name, rt->failed, rt->key);
	if (!msg)
		return tfjob__oom(c->err);
	int rc = tfjob__plan_record_terminal(c, TFJOB_EVENT_NORMAL, TFJOB__REASON_FAILED, TFJOB__COND_FAILED, msg, set_completion);
	free(msg);
	return rc;
}

/* Restarting condition as found at the start of UpdateJobStatus (v1.9: any status; documented: True). */
static int existing_restarting(ctx *c, char **reason, char **message)
{
	*reason = *message = NULL;
	json_t *cond = tfjob__cond_find(c->status, TFJOB__COND_RESTARTING);
	if (!cond)
		return 0;
	if (c->documented && !tfjob__cond_true(c->status, TFJOB__COND_RESTARTING))
		return 0;
	*reason = tfjob__strdup(tfjob__str(cond, "reason") ? tfjob__str(cond, "reason") : "");
	*message = tfjob__strdup(tfjob__str(cond, "message") ? tfjob__str(cond, "message") : "");
	if (!*reason || !*message) {
		free(*reason);
		free(*message);
		*reason = *message = NULL;
		return tfjob__oom(c->err);
	}
	return 1;
}

/* What UpdateJobStatus reads once per step. */
typedef struct status_inputs {
	bool chief;        /* the job has a Chief or Master: it decides success */
	bool all_workers;  /* successPolicy AllWorkers */
	bool dynamic;      /* enableDynamicWorker: a failed worker does not fail the job */
	int has_restarting; /* a Restarting condition was there at the start */
	char *rreason, *rmessage; /* its reason and message (owned) */
} status_inputs;

/*
 * The success rule and Running for one type: *success when the type says the job succeeded;
 * Running is set when its pods are active (unless `gate` and a restart started in this step).
 */
static int type_progress(ctx *c, const status_inputs *in, rtype_state *rt, bool gate, bool *success)
{
	*success = false;
	int64_t expected = rt->replicas - rt->succeeded;
	bool may_run = rt->active > 0 && !(gate && c->restart_started);
	if (in->chief) {
		if (!tfjob__is_chief_or_master(rt->key, false))
			return 0;
		*success = expected == 0;
		return may_run ? running(c) : 0; /* Running before Succeeded, as v1.9 writes them */
	}
	if (strcmp(rt->key, TFJOB__TYPE_WORKER))
		return 0;
	*success = expected == 0 || (c->worker0_completed && !in->all_workers);
	return !*success && may_run ? running(c) : 0;
}

/* A type with failed pods: Restarting kept when it was there, else the job fails (not for dynamic workers). */
static int type_failed(ctx *c, const status_inputs *in, rtype_state *rt)
{
	if (in->has_restarting)
		return tfjob__plan_cond_set(c, TFJOB__COND_RESTARTING, "True", in->rreason, in->rmessage);
	if (in->dynamic && !strcmp(rt->key, TFJOB__TYPE_WORKER))
		return 0;
	return fail_type(c, rt, true);
}

/* v1.9's loop, defects included: success and failure decided type by type, in one pass. */
static int update_status_v19(ctx *c, const status_inputs *in)
{
	int rc = 0;
	for (size_t i = 0; i < TFJOB__PLAN_TYPE_COUNT && !rc; i++) {
		rtype_state *rt = find_type(c, tfjob__plan_all_types[i]);
		if (!rt)
			continue;
		bool success;
		rc = type_progress(c, in, rt, false, &success);
		if (!rc && success)
			rc = succeed(c);
		if (!rc && rt->failed > 0)
			rc = type_failed(c, in, rt);
	}
	return rc;
}

/* Documented: success first; a step that succeeds does not also fail (defect 1). */
static int update_status_documented(ctx *c, const status_inputs *in)
{
	int rc = 0;
	bool success = false;
	for (size_t i = 0; i < TFJOB__PLAN_TYPE_COUNT && !rc; i++) {
		rtype_state *rt = find_type(c, tfjob__plan_all_types[i]);
		bool type_success = false;
		if (rt)
			rc = type_progress(c, in, rt, true, &type_success);
		success = success || type_success;
	}
	if (rc)
		return rc;
	if (success)
		return tfjob__plan_finished(c) ? 0 : succeed(c);
	for (size_t i = 0; i < c->nperm && !rc; i++) {
		/* completionTime too (defect 3) */
		rc = tfjob__plan_record_terminal(c, TFJOB_EVENT_WARNING, TFJOB__REASON_FAILED, TFJOB__COND_FAILED,
		                                 c->perm_failures[i], true);
	}
	for (size_t i = 0; i < TFJOB__PLAN_TYPE_COUNT && !rc; i++) {
		rtype_state *rt = find_type(c, tfjob__plan_all_types[i]);
		if (rt && rt->failed > 0 && !tfjob__plan_finished(c))
			rc = type_failed(c, in, rt);
	}
	/* defect 4: a restart started in this step leaves Restarting True */
	if (!rc && c->restart_started && !tfjob__plan_finished(c))
		rc = tfjob__plan_cond_set(c, TFJOB__COND_RESTARTING, "True", TFJOB__REASON_RESTARTING, c->restart_message);
	return rc;
}

int tfjob__plan_update_status(ctx *c)
{
	json_t *st = json_object_get(c->status, "startTime");
	if ((!st || json_is_null(st)) && tfjob__status_set_time(c->status, "startTime", c->now))
		return tfjob__oom(c->err);
	status_inputs in = { .chief = has_chief(c), .dynamic = tfjob_job_enable_dynamic_worker(c->job) };
	const char *sp = tfjob_job_success_policy(c->job);
	in.all_workers = sp && !strcmp(sp, "AllWorkers");
	in.has_restarting = existing_restarting(c, &in.rreason, &in.rmessage);
	if (in.has_restarting < 0)
		return in.has_restarting;
	int rc = c->documented ? update_status_documented(c, &in) : update_status_v19(c, &in);
	free(in.rreason);
	free(in.rmessage);
	return rc;
}
