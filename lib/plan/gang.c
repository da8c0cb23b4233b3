/*
 * Gang scheduling: the job's PodGroup (v1.9's SyncPodGroup and DeletePodGroup) and the pods that
 * wait for it. The gang scheduler is the render options' (volcano or scheduler-plugins); the
 * observed PodGroup comes in through the plan options.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdlib.h>
#include <string.h>

#include "plan/step.h"

#define REASON_JOB_TERMINATED "JobTerminated"

static bool gang_on(const ctx *c) { return c->render->gang_scheduler != TFJOB_GANG_NONE; }

static bool deleting(json_t *obj)
{
	json_t *ts = json_object_get(tfjob__obj(obj, "metadata"), "deletionTimestamp");
	return ts && !json_is_null(ts);
}

/* v1.9's DelayPodCreationDueToPodGroup: volcano's pods wait while the group has no phase or is Pending. */
static bool volcano_waits(json_t *pg)
{
	const char *phase = tfjob__str(tfjob__obj(pg, "status"), "phase");
	return !phase || !*phase || !strcmp(phase, "Pending");
}

/*
 * A merge patch that makes the observed spec `want` (v1.9 replaces the whole spec): the fields
 * of want, and null for each field the observed spec has and want does not.
 */
static json_t *spec_patch(json_t *want, json_t *have)
{
	json_t *spec = json_copy(want);
	const char *key;
	json_t *v;
	json_object_foreach(have, key, v) {
		if (spec && !json_object_get(spec, key) && json_object_set_new(spec, key, json_null())) {
			json_decref(spec);
			return NULL;
		}
	}
	return spec ? json_pack("{s:o}", "spec", spec) : NULL;
}

static int wait_for_group(ctx *c)
{
	c->pods_wait = true;
	return tfjob__plan_object_action(c, TFJOB_ACTION_WAIT, TFJOB_OBJECT_PODGROUP, c->name, NULL);
}

/* An observed PodGroup: patch its spec where it differs from the one wanted. */
static int sync_existing(ctx *c, json_t *want)
{
	json_t *ws = json_object_get(want, "spec");
	json_t *have = tfjob__obj(c->pod_group, "spec");
	/* volcano: a queue the PodGroup has already is kept (an admission webhook or an administrator set it) */
	const char *queue = tfjob__str(have, "queue");
	if (c->render->gang_scheduler == TFJOB_GANG_VOLCANO && queue && *queue &&
	    json_object_set_new(ws, "queue", json_string(queue)))
		return tfjob__oom(c->err);
	if (have && json_equal(ws, have))
		return 0;
	json_t *patch = spec_patch(ws, have);
	if (!patch)
		return tfjob__oom(c->err);
	return tfjob__plan_object_action(c, TFJOB_ACTION_PATCH, TFJOB_OBJECT_PODGROUP, c->name, patch);
}

int tfjob__plan_gang_sync(ctx *c)
{
	if (!gang_on(c))
		return 0;
	bool volcano = c->render->gang_scheduler == TFJOB_GANG_VOLCANO;
	if (c->pod_group && deleting(c->pod_group) && c->documented)
		return wait_for_group(c); /* going away: wait for it to go, then create it again */
	json_t *want = NULL;
	int rc = tfjob__render_pod_group(&want, c->job, c->render, c->err);
	if (rc)
		return rc;
	bool wait;
	if (!c->pod_group) {
		rc = tfjob__plan_object_action(c, TFJOB_ACTION_CREATE, TFJOB_OBJECT_PODGROUP, c->name, want);
		want = NULL;
		wait = volcano; /* a new group has no phase yet */
	} else {
		rc = sync_existing(c, want);
		wait = volcano && volcano_waits(c->pod_group);
	}
	json_decref(want);
	if (!rc && wait)
		rc = wait_for_group(c);
	return rc;
}

int tfjob__plan_gang_delete(ctx *c)
{
	if (!gang_on(c))
		return 0;
	/* v1.9 deletes (and says so) at every step of a finished, suspended or failing job, there or not */
	if (c->documented && (!c->pod_group || deleting(c->pod_group)))
		return 0;
	int rc = tfjob__plan_event(c, TFJOB_EVENT_NORMAL, REASON_JOB_TERMINATED, "Job has been terminated. Deleting PodGroup");
	if (!rc)
		rc = tfjob__plan_object_action(c, TFJOB_ACTION_DELETE, TFJOB_OBJECT_PODGROUP, c->name, NULL);
	return rc;
}
