/*
 * The one executor of a plan's actions (execute.h): the order, the outcome Events and the rules
 * every backend shares. The Events are named and worded as training-operator's controllers
 * record them, so that `kubectl describe` reads the same with either operator.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "plan/execute.h"
#include "plan/planner.h"

/* An Event worded with printf rules; none when out of memory (an Event is a report, not a write). */
static void report(const tfjob__exec_ops *ops, void *ctx, const char *type, const char *reason, const char *fmt, ...)
	TFJOB_PRINTF(5, 6);

static void report(const tfjob__exec_ops *ops, void *ctx, const char *type, const char *reason, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *message = tfjob__strdup_vprintf(fmt, ap);
	va_end(ap);
	if (message)
		ops->event(ctx, type, reason, message);
	free(message);
}

/* What went wrong, in words: the backend's error, else the code's. */
static const char *failure_text(const tfjob_error *e, int rc)
{
	const char *m = e ? tfjob_error_message(e) : NULL;
	return m && *m ? m : tfjob_strerror(rc);
}

/* "pod" or "service", and the Event reasons' noun: "Pod" or "Service". */
static const char *child_word(tfjob_object_kind kind, bool noun)
{
	if (kind == TFJOB_OBJECT_POD)
		return noun ? "Pod" : "pod";
	return noun ? "Service" : "service";
}

/* A failure the action's own rules make a success: *err is dropped with it. */
static int forgive(int rc, int a, int b, tfjob_error **err)
{
	if (rc != a && rc != b && rc != TFJOB__EXEC_SKIPPED)
		return rc;
	if (err && rc != TFJOB__EXEC_SKIPPED) {
		tfjob_error_free(*err);
		*err = NULL;
	}
	return 0;
}

/* How the Events of a write of a Pod or Service word it. */
typedef struct child_write {
	int (*write)(void *ctx, const tfjob_plan *plan, size_t i, tfjob_error **err);
	const char *verb;  /* in the reason: "Create", "Delete" */
	const char *done;  /* "Created", "Deleted" */
	const char *doing; /* "creating", "deleting" */
	bool may_be_gone;  /* NotFound or Conflict (replaced) count as done, with no Event */
} child_write;

/* Create or delete action i's Pod or Service, and report the outcome when the backend asks for
 * child Events. AlreadyExists is a failure of a create, as in training-operator: the name is
 * taken by an object that is not the job's, or the cache is behind. */
static int write_child(const tfjob_plan *plan, size_t i, const child_write *w, const tfjob__exec_ops *ops, void *ctx,
                       tfjob_error **err)
{
	tfjob_object_kind kind = tfjob_plan_action_kind(plan, i);
	int rc = w->write(ctx, plan, i, err);
	bool quiet = rc == TFJOB__EXEC_SKIPPED || (w->may_be_gone && (rc == TFJOB_ENOTFOUND || rc == TFJOB_ECONFLICT));
	if (quiet)
		return forgive(rc, TFJOB_ENOTFOUND, TFJOB_ECONFLICT, err);
	if (!ops->child_events)
		return rc;
	char reason[32];
	if (rc) {
		snprintf(reason, sizeof(reason), "Failed%s%s", w->verb, child_word(kind, true));
		report(ops, ctx, "Warning", reason, "Error %s: %s", w->doing, failure_text(err ? *err : NULL, rc));
	} else {
		snprintf(reason, sizeof(reason), "Successful%s%s", w->verb, child_word(kind, true));
		report(ops, ctx, "Normal", reason, "%s %s: %s", w->done, child_word(kind, false),
		       tfjob_plan_action_name(plan, i));
	}
	return rc;
}

static int delete_pod_group(const tfjob_plan *plan, size_t i, const tfjob__exec_ops *ops, void *ctx, tfjob_error **err)
{
	/* Gone already counts as deleted, and says so (training-operator's words either way). */
	int rc = forgive(ops->delete_pod_group(ctx, plan, i, err), TFJOB_ENOTFOUND, TFJOB_ENOTFOUND, err);
	if (rc)
		report(ops, ctx, "Warning", "FailedDeletePodGroup", "Error deleting: %s", failure_text(err ? *err : NULL, rc));
	else
		report(ops, ctx, "Normal", "SuccessfulDeletePodGroup", "Deleted PodGroup: %s", tfjob_plan_action_name(plan, i));
	return rc;
}

static int delete_job(const tfjob_plan *plan, size_t i, const tfjob__exec_ops *ops, void *ctx, tfjob_error **err)
{
	int rc = ops->delete_job(ctx, err);
	if (rc == TFJOB_ENOTFOUND || rc == TFJOB_ECONFLICT || rc == TFJOB__EXEC_SKIPPED)
		return forgive(rc, TFJOB_ENOTFOUND, TFJOB_ECONFLICT, err); /* gone, or another job of that name */
	if (rc)
		report(ops, ctx, "Warning", "FailedDeleteJob", "Error deleting: %s", failure_text(err ? *err : NULL, rc));
	else
		report(ops, ctx, "Normal", "SuccessfulDeleteJob", "Deleted job: %s", tfjob_plan_action_name(plan, i));
	return rc;
}

/* Whether the backend writes action i's kind of change (a local run has no PodGroup). */
static bool has_writer(const tfjob_plan *plan, size_t i, const tfjob__exec_ops *ops)
{
	tfjob_action_type type = tfjob_plan_action_type(plan, i);
	switch (tfjob_plan_action_kind(plan, i)) {
	case TFJOB_OBJECT_TFJOB:
		return ops->delete_job != NULL;
	case TFJOB_OBJECT_PODGROUP:
		return (type == TFJOB_ACTION_DELETE ? ops->delete_pod_group : ops->write_pod_group) != NULL;
	default:
		if (type == TFJOB_ACTION_CREATE)
			return ops->create_child != NULL;
		return (type == TFJOB_ACTION_DELETE ? ops->delete_child : ops->claim) != NULL;
	}
}

/* Carry out action i (not an Event, not a wait); *deleted_job set when it deleted the job. */
static int write_action(const tfjob_plan *plan, size_t i, const tfjob__exec_ops *ops, void *ctx, bool *deleted_job,
                        tfjob_error **err)
{
	tfjob_action_type type = tfjob_plan_action_type(plan, i);
	tfjob_object_kind kind = tfjob_plan_action_kind(plan, i);
	if (kind == TFJOB_OBJECT_TFJOB) {
		*deleted_job = type == TFJOB_ACTION_DELETE;
		return *deleted_job && ops->delete_job ? delete_job(plan, i, ops, ctx, err) : 0;
	}
	if (kind == TFJOB_OBJECT_PODGROUP) {
		if (type == TFJOB_ACTION_DELETE)
			return ops->delete_pod_group ? delete_pod_group(plan, i, ops, ctx, err) : 0;
		return ops->write_pod_group ? forgive(ops->write_pod_group(ctx, plan, i, err), TFJOB_EEXISTS, TFJOB_ENOTFOUND, err)
		                            : 0;
	}
	switch (type) {
	case TFJOB_ACTION_CREATE: {
		const child_write create = { ops->create_child, "Create", "Created", "creating", false };
		return ops->create_child ? write_child(plan, i, &create, ops, ctx, err) : 0;
	}
	case TFJOB_ACTION_DELETE: {
		const child_write remove = { ops->delete_child, "Delete", "Deleted", "deleting", true };
		return ops->delete_child ? write_child(plan, i, &remove, ops, ctx, err) : 0;
	}
	case TFJOB_ACTION_ADOPT:
	case TFJOB_ACTION_RELEASE:
		return ops->claim ? forgive(ops->claim(ctx, plan, i, err), TFJOB_ENOTFOUND, TFJOB_ENOTFOUND, err) : 0;
	default:
		return 0; /* a PATCH is the PodGroup's; EVENT and WAIT are not writes */
	}
}

int tfjob__plan_execute(const tfjob_plan *plan, const tfjob__exec_ops *ops, void *ctx, tfjob__exec_result *res,
                        tfjob_error **err)
{
	memset(res, 0, sizeof(*res));
	size_t n = tfjob_plan_action_count(plan);
	int rc = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		if (ops->stopping && ops->stopping(ctx)) {
			res->left = n - i;
			break;
		}
		tfjob_action_type type = tfjob_plan_action_type(plan, i);
		if (type == TFJOB_ACTION_EVENT) {
			const char *reason = tfjob_plan_action_reason(plan, i);
			if (reason && !strcmp(reason, TFJOB__REASON_RESTARTING))
				res->restarted = true;
			ops->event(ctx, tfjob_event_type_name(tfjob_plan_action_event_type(plan, i)), reason,
			           tfjob_plan_action_message(plan, i));
			continue;
		}
		if (ops->before)
			ops->before(ctx, plan, i);
		if (type == TFJOB_ACTION_WAIT)
			continue; /* nothing changes: the PodGroup's admission brings the next step */
		if (!has_writer(plan, i, ops))
			continue;
		res->acted = true;
		rc = write_action(plan, i, ops, ctx, &res->deleted_job, err);
	}
	return rc;
}
