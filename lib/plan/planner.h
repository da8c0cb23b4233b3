/*
 * Internals of the reconcile planner: conditions, status helpers, cleanup rules.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_INTERNAL_PLAN_H
#define TFJOB_INTERNAL_PLAN_H

#include <jansson.h>

#include "util/common.h"

/* Condition types and reasons (reason = "TFJob" + type, except FailedValidation). */
#define TFJOB__COND_CREATED "Created"
#define TFJOB__COND_RUNNING "Running"
#define TFJOB__COND_RESTARTING "Restarting"
#define TFJOB__COND_SUCCEEDED "Succeeded"
#define TFJOB__COND_FAILED "Failed"
#define TFJOB__COND_SUSPENDED "Suspended"

#define TFJOB__REASON_CREATED "TFJobCreated"
#define TFJOB__REASON_RUNNING "TFJobRunning"
#define TFJOB__REASON_RESTARTING "TFJobRestarting"
#define TFJOB__REASON_SUCCEEDED "TFJobSucceeded"
#define TFJOB__REASON_FAILED "TFJobFailed"
#define TFJOB__REASON_SUSPENDED "TFJobSuspended"
#define TFJOB__REASON_RESUMED "TFJobResumed"
#define TFJOB__REASON_FAILED_VALIDATION "TFJobFailedValidation"

/* The Unix seconds of 0000-01-01T00:00:00Z and 9999-12-31T23:59:59Z: the times RFC 3339 can write. */
#define TFJOB__TIME_MIN INT64_C(-62167219200)
#define TFJOB__TIME_MAX INT64_C(253402300799)

/* ---- conditions.c: the condition state machine on a status object ---- */

/* The condition object of that type in status.conditions, or NULL. Borrowed. */
json_t *tfjob__cond_find(json_t *status, const char *type);
/* True when the condition of that type has status "True". */
bool tfjob__cond_true(json_t *status, const char *type);

/* The status a plan wants, borrowed from the plan (valid while it lives; never to be modified):
   for a controller, so that it need not print the status and parse it again. */
json_t *tfjob__plan_status(const tfjob_plan *plan);
/* The object of action i (a create's, rendered now or kept; an adopt's, release's or patch's): a
   new reference, possibly shared with the plan, so never to be changed (copy what changes), for a
   runner that hands it on without the text tfjob_plan_action_object_json() would print and its
   backend parse again. */
int tfjob__plan_action_object(json_t **out, const tfjob_plan *plan, size_t i, tfjob_error **err);
/*
 * Set a condition as v1.9's UpdateJobConditions does (SEMANTICS.md "Conditions"): no-op once
 * Failed is True (documented mode: once Succeeded or Failed is True); no-op when status and reason
 * are unchanged; same status keeps lastTransitionTime; Running and Restarting exclude each other;
 * Succeeded/Failed turn Running False (documented mode: Running and Restarting). The condition is
 * moved to the end of the list. Returns 0 or TFJOB_ENOMEM.
 */
int tfjob__cond_set(json_t *status, const char *type, const char *cstatus, const char *reason,
                    const char *message, int64_t now, tfjob_compat compat);

/* Check the JSON types of a status object; TFJOB_ESCHEMA naming the field. */
int tfjob__status_check(const json_t *status, tfjob_error **err);

/* Set status[key] to the RFC 3339 form of t. */
int tfjob__status_set_time(json_t *status, const char *key, int64_t t);
/* Read status[key] as a time: 0 and *out, or TFJOB_ENOTFOUND (absent or unparsable). */
int tfjob__status_get_time(int64_t *out, json_t *status, const char *key);

/* ---- cleanup.c: cleanPodPolicy and TTL ---- */

/*
 * Whether cleanup deletes a pod in the given phase: for a finished job by cleanPodPolicy (All:
 * every pod; Running: Running and Pending pods; None: none; other values as All, like v1.9),
 * limit failures included (the job is Failed first); for a suspended job every pod.
 */
bool tfjob__cleanup_deletes(const char *policy, const char *phase, bool finished);

typedef enum tfjob__ttl_verdict {
	TFJOB__TTL_NONE = 0,    /* no TTL */
	TFJOB__TTL_WAIT = 1,    /* *remaining seconds left */
	TFJOB__TTL_EXPIRED = 2, /* delete the TFJob */
	TFJOB__TTL_NO_COMPLETION = 3 /* TTL set but no completionTime (an error in v1.9) */
} tfjob__ttl_verdict;

/* TTL of a finished job: has_ttl/ttl from runPolicy, completion (has_completion) from status. */
tfjob__ttl_verdict tfjob__ttl_check(int64_t *remaining, bool has_ttl, int64_t ttl, bool has_completion,
                                    int64_t completion, int64_t now);

#endif
