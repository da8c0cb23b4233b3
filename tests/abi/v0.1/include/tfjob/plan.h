/*
 * libtfjob - the reconcile planner.
 * SPDX-License-Identifier: Apache-2.0
 *
 * tfjob_plan_new() is one reconcile step of the TFJob controller as a pure function: from a job
 * (with its status), the Pods and Services observed for it, the time and the work queue's requeue
 * count it computes a plan: an ordered list of actions (create or delete a Pod or Service, delete
 * the TFJob, record an Event), the job's new status, whether the status changed, and when to look
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
#include "cluster.h"
#include "objects.h"

TFJOB_BEGIN_DECLS

/** What an action does. */
typedef enum tfjob_action_type {
	TFJOB_ACTION_CREATE = 0, /* create the object (tfjob_plan_action_object_json()) */
	TFJOB_ACTION_DELETE = 1, /* delete the named object; NotFound counts as done */
	TFJOB_ACTION_EVENT = 2   /* record an Event on the TFJob */
} tfjob_action_type;

/** The kind of object a create or delete action is about. */
typedef enum tfjob_object_kind {
	TFJOB_OBJECT_NONE = 0,    /* events */
	TFJOB_OBJECT_POD = 1,
	TFJOB_OBJECT_SERVICE = 2,
	TFJOB_OBJECT_TFJOB = 3
} tfjob_object_kind;

/** Kubernetes event types. */
typedef enum tfjob_event_type {
	TFJOB_EVENT_NORMAL = 0,
	TFJOB_EVENT_WARNING = 1
} tfjob_event_type;

#define TFJOB_PLAN_OPTIONS_VERSION 1

/**
 * Options of one planning step. Initialise with TFJOB_PLAN_OPTIONS_INIT or
 * tfjob_plan_options_init(); fields are only ever appended.
 */
typedef struct tfjob_plan_options {
	unsigned int version;                /* TFJOB_PLAN_OPTIONS_VERSION */
	tfjob_compat compat;                 /* TFJOB_COMPAT_DOCUMENTED; also used for defaults, validation, rendering */
	int64_t now;                         /* the current time, Unix seconds (UTC), years 0000-9999 */
	int64_t requeues;                    /* times the work queue has requeued this job (v1.9's NumRequeues) */
	const tfjob_render_options *render;  /* rendering of created children; NULL = defaults. Its compat is overridden by ours. */
} tfjob_plan_options;

#define TFJOB_PLAN_OPTIONS_INIT { TFJOB_PLAN_OPTIONS_VERSION, TFJOB_COMPAT_DOCUMENTED, 0, 0, NULL }

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
 * The complete object of a create action as JSON text (flags: TFJOB_JSON_*). *out owned by the
 * caller (tfjob_free()). TFJOB_EINVAL when i is out of range or the action is not a create,
 * TFJOB_ENOMEM.
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

/** "create", "delete", "event"; "unknown" otherwise. Static string. */
TFJOB_EXTERN const char *tfjob_action_type_name(tfjob_action_type type);
/** "Pod", "Service", "TFJob"; "" for TFJOB_OBJECT_NONE and unknown values. Static string. */
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
