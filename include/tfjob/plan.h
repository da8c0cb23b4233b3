/*
 * libtfjob - the reconcile planner.
 * SPDX-License-Identifier: Apache-2.0
 *
 * tfjob_plan_new() is one reconcile step of the TFJob controller as a pure function: from a job
 * (with its status), the Pods and Services observed for it, the time and the work queue's requeue
 * count it computes a plan: an ordered list of actions (create or delete a Pod or Service, adopt
 * or release a child, create, patch or delete the PodGroup or wait for it, delete the TFJob,
 * record an Event), the job's new status, whether the status changed, and when to look
 * at the job again. It performs no I/O, reads no clock, environment or global state: the same
 * inputs give the same plan. docs/semantics.md describes the rules; docs/plan.md the API.
 *
 * Thread-safety: tfjob_plan_new() is re-entrant. A tfjob_plan is immutable once returned and may
 * be read from several threads at once.
 */
#ifndef TFJOB_PLAN_H
#define TFJOB_PLAN_H

#include "common.h"
#include "error.h"
#include "job.h"
#include "graph.h"
#include "objects.h"

TFJOB_BEGIN_DECLS

/** What an action does. */
typedef enum tfjob_action_type {
	TFJOB_ACTION_CREATE = 0,  /* create the object (tfjob_plan_action_object_json()) */
	TFJOB_ACTION_DELETE = 1,  /* delete the named object; NotFound counts as done */
	TFJOB_ACTION_EVENT = 2,   /* record an Event on the TFJob */
	TFJOB_ACTION_ADOPT = 3,   /* make the job the controller of the named orphan child: apply the merge patch of
	                             tfjob_plan_action_object_json() (its owner references, the child's uid as a
	                             precondition) after re-reading the job (same uid, not being deleted); NotFound
	                             counts as done */
	TFJOB_ACTION_RELEASE = 4, /* remove the job's owner reference from the named child (merge patch as for adopt) */
	TFJOB_ACTION_PATCH = 5,   /* apply the merge patch of tfjob_plan_action_object_json() to the named object (a
	                             PodGroup's spec); NotFound counts as done */
	TFJOB_ACTION_WAIT = 6     /* the job's pods wait for the named PodGroup to be scheduled: none is created in this
	                             step (the PodGroup's change of phase brings the next step) */
} tfjob_action_type;

/** The kind of object a create or delete action is about. */
typedef enum tfjob_object_kind {
	TFJOB_OBJECT_NONE = 0,    /* events */
	TFJOB_OBJECT_POD = 1,
	TFJOB_OBJECT_SERVICE = 2,
	TFJOB_OBJECT_TFJOB = 3,
	TFJOB_OBJECT_PODGROUP = 4 /* gang scheduling's PodGroup (volcano or scheduler-plugins, per the render options) */
} tfjob_object_kind;

/** Kubernetes event types. */
typedef enum tfjob_event_type {
	TFJOB_EVENT_NORMAL = 0,
	TFJOB_EVENT_WARNING = 1
} tfjob_event_type;

#define TFJOB_PLAN_OPTIONS_VERSION 2

/**
 * Options of one planning step. Initialise with TFJOB_PLAN_OPTIONS_INIT or
 * tfjob_plan_options_init(); fields are only ever appended.
 */
typedef struct tfjob_plan_options {
	unsigned int version;                /* TFJOB_PLAN_OPTIONS_VERSION */
	tfjob_compat compat;                 /* TFJOB_COMPAT_DOCUMENTED; also used for defaults, validation, rendering */
	int64_t now;                         /* the current time, Unix seconds (UTC), years 0000-9999 */
	int64_t requeues;                    /* times the work queue has requeued this job (v1.9's NumRequeues) */
	const tfjob_render_options *render;  /* rendering of created children; NULL = defaults. Its compat is overridden by ours.
	                                        Its gang_scheduler is the plan's: the PodGroup actions. */
	/* version 2 */
	const char *pod_group_json;          /* the job's observed PodGroup (JSON or YAML), NULL = none; read with gang scheduling */
} tfjob_plan_options;

#define TFJOB_PLAN_OPTIONS_INIT { TFJOB_PLAN_OPTIONS_VERSION, TFJOB_COMPAT_DOCUMENTED, 0, 0, NULL, NULL }

/** Initialise options of the given version to their defaults. TFJOB_EVERSION for unknown versions, TFJOB_EINVAL for NULL. */
TFJOB_EXTERN int tfjob_plan_options_init(tfjob_plan_options *opts, unsigned int version);

/** Opaque, immutable plan. */
typedef struct tfjob_plan tfjob_plan;

/**
 * Plan one reconcile step of job.
 *
 * pods_json / services_json: NUL-terminated JSON or YAML text holding the observed Pods /
 * Services of the job as an array, a Kubernetes List, or a stream of documents; NULL means none.
 * The job is not changed: defaults (opts->compat) are applied to a copy first. opts must not be
 * NULL (the time is required).
 *
 * Malformed observed objects never abort the step when they can be ignored: a Pod or Service
 * without a usable replica-type or replica-index label is skipped with a Warning event.
 *
 * On success *out is a new plan owned by the caller (tfjob_plan_free()).
 * Errors: TFJOB_EINVAL (NULL arguments, unknown compat, opts->now outside the years 0000-9999),
 * TFJOB_EVERSION, TFJOB_EPARSE (pods/services text is not
 * JSON/YAML; line and column set), TFJOB_ESCHEMA (an observed item is not an object, or the job's
 * status has fields of the wrong type; the message names the field), TFJOB_ELIMIT, TFJOB_ENOMEM,
 * and rendering errors of created children.
 */
TFJOB_EXTERN int tfjob_plan_new(tfjob_plan **out, const tfjob_job *job, const char *pods_json,
                                const char *services_json, const tfjob_plan_options *opts, tfjob_error **err);

/**
 * tfjob_plan_new() on objects already parsed (tfjob_objects_parse(), or a controller's cache):
 * no text is parsed, so a steady step costs time proportional to the objects, not their bytes.
 * pods / services may be NULL (none). They are only read. Errors as tfjob_plan_new() (less the
 * parse errors). Re-entrant; the same objects may be used by several plans at once.
 */
TFJOB_EXTERN int tfjob_plan_new_with_objects(tfjob_plan **out, const tfjob_job *job, const tfjob_objects *pods,
                                             const tfjob_objects *services, const tfjob_plan_options *opts,
                                             tfjob_error **err);

/** Release a plan. Accepts NULL. */
TFJOB_EXTERN void tfjob_plan_free(tfjob_plan *plan);

/** Number of actions, in the order they are to be carried out (0 for NULL). */
TFJOB_EXTERN size_t tfjob_plan_action_count(const tfjob_plan *plan);

/** Type of the i-th action; TFJOB_ACTION_EVENT when i is out of range (check the count first). */
TFJOB_EXTERN tfjob_action_type tfjob_plan_action_type(const tfjob_plan *plan, size_t i);

/** Object kind of the i-th action (TFJOB_OBJECT_NONE for events and out-of-range i). */
TFJOB_EXTERN tfjob_object_kind tfjob_plan_action_kind(const tfjob_plan *plan, size_t i);

/** Name of the object of a create/delete action; NULL for events and out-of-range i. Borrowed from the plan. */
TFJOB_EXTERN const char *tfjob_plan_action_name(const tfjob_plan *plan, size_t i);

/**
 * The complete object of a create action, or the merge patch of an adopt, release or patch
 * action, as JSON text (flags: TFJOB_JSON_*). *out owned by the caller (tfjob_free()). The plan
 * holds no rendered Pod or Service it creates (but the first of each replica type and kind, and
 * those at or beyond a type's replicas): such an object is rendered at this call, from the plan's
 * own copy of the job, so its cost is that of rendering one child. TFJOB_EINVAL when i is out of
 * range or the action has no object, TFJOB_ENOMEM.
 */
TFJOB_EXTERN int tfjob_plan_action_object_json(char **out, const tfjob_plan *plan, size_t i, unsigned int flags,
                                               tfjob_error **err);

/** Event type of an event action (TFJOB_EVENT_NORMAL for other actions). */
TFJOB_EXTERN tfjob_event_type tfjob_plan_action_event_type(const tfjob_plan *plan, size_t i);

/** Event reason ("TFJobRestarting", ...) of an event action; NULL otherwise. Borrowed. */
TFJOB_EXTERN const char *tfjob_plan_action_reason(const tfjob_plan *plan, size_t i);

/** Event message of an event action; NULL otherwise. Borrowed. */
TFJOB_EXTERN const char *tfjob_plan_action_message(const tfjob_plan *plan, size_t i);

/**
 * The job's new status as JSON text (the whole status object, unknown fields kept). *out owned by
 * the caller (tfjob_free()). TFJOB_EINVAL, TFJOB_ENOMEM.
 */
TFJOB_EXTERN int tfjob_plan_status_json(char **out, const tfjob_plan *plan, unsigned int flags, tfjob_error **err);

/** 1 when the new status differs from the job's status (the caller should write it), else 0. */
TFJOB_EXTERN int tfjob_plan_status_changed(const tfjob_plan *plan);

/**
 * When to reconcile the job again: 0 and *out = seconds from now (0 = at once), or
 * TFJOB_ENOTFOUND when the plan asks for no timed requeue (events on children still trigger one).
 */
TFJOB_EXTERN int tfjob_plan_requeue_after(int64_t *out, const tfjob_plan *plan);

/**
 * The plan as the tfjobctl contract's JSON:
 * {"actions":[...],"status":{...},"statusChanged":bool,"requeueAfterSeconds":number|null}.
 * *out owned by the caller (tfjob_free()). TFJOB_EINVAL, TFJOB_ENOMEM.
 */
TFJOB_EXTERN int tfjob_plan_to_json(char **out, const tfjob_plan *plan, unsigned int flags, tfjob_error **err);

/**
 * tfjob_plan_to_json() written piece by piece to write(data, len, payload) instead of into one
 * string: the object of each create action is rendered, written and released in turn, so a plan
 * creating thousands of children (gigabytes of JSON: each pod carries the whole TF_CONFIG) is
 * written in the memory of one child. The bytes are exactly those of tfjob_plan_to_json() with
 * the same flags. Errors: TFJOB_EINVAL (NULL plan or write), TFJOB_ENOMEM, TFJOB_EIO when write
 * returns non-zero (nothing more is written). Re-entrant; the plan is only read.
 */
TFJOB_EXTERN int tfjob_plan_write_json(const tfjob_plan *plan, unsigned int flags, tfjob_write_cb write,
                                       void *payload, tfjob_error **err);

/** "create", "delete", "event", "adopt", "release", "patch", "wait"; "unknown" otherwise. Static string. */
TFJOB_EXTERN const char *tfjob_action_type_name(tfjob_action_type type);
/** "Pod", "Service", "TFJob", "PodGroup"; "" for TFJOB_OBJECT_NONE and unknown values. Static string. */
TFJOB_EXTERN const char *tfjob_object_kind_name(tfjob_object_kind kind);
/** "Normal", "Warning". Static string. */
TFJOB_EXTERN const char *tfjob_event_type_name(tfjob_event_type type);

/**
 * Parse an RFC 3339 time ("2024-05-01T10:00:00Z", fractions and offsets accepted) into Unix
 * seconds (fractions truncated). TFJOB_EINVAL when the text is not such a time. Pure, thread-safe.
 */
TFJOB_EXTERN int tfjob_time_parse(int64_t *out, const char *text);

/**
 * Format Unix seconds as RFC 3339 UTC with second precision, as Kubernetes' metav1.Time does
 * ("2024-05-01T10:00:00Z"), into buf (at least 32 bytes). Returns buf. Pure, thread-safe.
 */
TFJOB_EXTERN char *tfjob_time_format(char *buf, size_t size, int64_t seconds);

/* ---- Simulation ---- */

#define TFJOB_SIMULATE_OPTIONS_VERSION 1

/** Options of tfjob_simulate(). Initialise with TFJOB_SIMULATE_OPTIONS_INIT or tfjob_simulate_options_init(). */
typedef struct tfjob_simulate_options {
	unsigned int version;                /* TFJOB_SIMULATE_OPTIONS_VERSION */
	int override_compat;                 /* non-zero: use `compat` instead of the scenario's `compat:` */
	tfjob_compat compat;
	const tfjob_render_options *render;  /* rendering of created children; NULL = defaults */
	unsigned int max_steps;              /* reconcile steps before the run stops; 0 = 1000 */
} tfjob_simulate_options;

#define TFJOB_SIMULATE_OPTIONS_INIT { TFJOB_SIMULATE_OPTIONS_VERSION, 0, TFJOB_COMPAT_DOCUMENTED, NULL, 0 }

/** Initialise options of the given version to their defaults. TFJOB_EVERSION for unknown versions, TFJOB_EINVAL for NULL. */
TFJOB_EXTERN int tfjob_simulate_options_init(tfjob_simulate_options *opts, unsigned int version);

/**
 * Run a scenario (YAML or JSON text of `len` bytes, format in docs/simulate.md: a job and a
 * timeline of pod phase / exit code changes) through the planner step by step on an in-memory
 * cluster: create/delete actions change its pod and service lists, status changes are written
 * back to the job, requeues are followed. Reads no clock: time is the scenario's.
 * *out receives the report (condition timeline, final status and events, like kubectl describe),
 * owned by the caller (tfjob_free()). opts may be NULL.
 * Errors: TFJOB_EINVAL, TFJOB_EVERSION, TFJOB_EPARSE, TFJOB_ESCHEMA (the scenario's shape; the
 * message names what is wrong), TFJOB_ENOMEM and any error of tfjob_plan_new(). Re-entrant.
 */
TFJOB_EXTERN int tfjob_simulate(char **out, const char *scenario, size_t len, const tfjob_simulate_options *opts,
                                tfjob_error **err);

TFJOB_END_DECLS

#endif
