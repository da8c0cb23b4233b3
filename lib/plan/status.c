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

int tfjob__plan_update_status(ctx *c)
{
	int rc = 0;
	json_t *st = json_object_get(c->status, "startTime");
	if (!st || json_is_null(st)) {
		if (tfjob__status_set_time(c->status, "startTime", c->now))
			return tfjob__oom(c->err);
	}
	char *rreason, *rmessage;
	int has_restarting = existing_restarting(c, &rreason, &rmessage);
	if (has_restarting < 0)
		return has_restarting;
	const char *sp = tfjob_job_success_policy(c->job);
	bool all_workers = sp && !strcmp(sp, "AllWorkers");
	bool chief = has_chief(c);
	bool dynamic = tfjob_job_enable_dynamic_worker(c->job);

	if (!c->documented) {
		/* v1.9's loop, defects included */
		for (size_t i = 0; i < TFJOB_ARRAY_LEN(tfjob__plan_all_types) && !rc; i++) {
			rtype_state *rt = find_type(c, tfjob__plan_all_types[i]);
			if (!rt)
				continue;
			int64_t expected = rt->replicas - rt->succeeded;
			if (chief) {
				if (tfjob__is_chief_or_master(rt->key, false)) {
					if (rt->active > 0)
						rc = running(c);
					if (!rc && expected == 0)
						rc = succeed(c);
				}
			} else if (!strcmp(rt->key, TFJOB__TYPE_WORKER)) {
				if (expected == 0 || (c->worker0_completed && !all_workers))
					rc = succeed(c);
				else if (rt->active > 0)
					rc = running(c);
			}
			if (rc || rt->failed == 0)
				continue;
			if (has_restarting)
				rc = tfjob__plan_cond_set(c, TFJOB__COND_RESTARTING, "True", rreason, rmessage);
			else if (dynamic && !strcmp(rt->key, TFJOB__TYPE_WORKER))
				continue;
			else
				rc = fail_type(c, rt, true);
		}
		free(rreason);
		free(rmessage);
		return rc;
	}

	/* documented: success first; a step that succeeds does not also fail (defect 1) */
	bool success = false;
	for (size_t i = 0; i < TFJOB_ARRAY_LEN(tfjob__plan_all_types) && !rc; i++) {
		rtype_state *rt = find_type(c, tfjob__plan_all_types[i]);
		if (!rt)
			continue;
		int64_t expected = rt->replicas - rt->succeeded;
		if (chief) {
			if (tfjob__is_chief_or_master(rt->key, false)) {
				if (rt->active > 0 && !c->restart_started)
					rc = running(c);
				if (expected == 0)
					success = true;
			}
		} else if (!strcmp(rt->key, TFJOB__TYPE_WORKER)) {
			if (expected == 0 || (c->worker0_completed && !all_workers))
				success = true;
			else if (rt->active > 0 && !c->restart_started)
				rc = running(c);
		}
	}
	if (!rc && success && !tfjob__plan_finished(c))
		rc = succeed(c);
	if (!rc && !success) {
		for (size_t i = 0; i < c->nperm && !rc; i++) {
			/* completionTime too (defect 3) */
			rc = tfjob__plan_record_terminal(c, TFJOB_EVENT_WARNING, TFJOB__REASON_FAILED, TFJOB__COND_FAILED,
			                     c->perm_failures[i], true);
		}
		for (size_t i = 0; i < TFJOB_ARRAY_LEN(tfjob__plan_all_types) && !rc; i++) {
			rtype_state *rt = find_type(c, tfjob__plan_all_types[i]);
			if (!rt || rt->failed == 0 || tfjob__plan_finished(c))
				continue;
			if (has_restarting)
				rc = tfjob__plan_cond_set(c, TFJOB__COND_RESTARTING, "True", rreason, rmessage);
			else if (dynamic && !strcmp(rt->key, TFJOB__TYPE_WORKER))
				continue;
			else
				rc = fail_type(c, rt, true);
		}
		/* defect 4: a restart started in this step leaves Restarting True */
		if (!rc && c->restart_started && !tfjob__plan_finished(c))
			rc = tfjob__plan_cond_set(c, TFJOB__COND_RESTARTING, "True", TFJOB__REASON_RESTARTING, c->restart_message);
	}
	free(rreason);
	free(rmessage);
	return rc;
}
