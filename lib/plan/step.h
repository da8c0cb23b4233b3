/*
 * The reconcile planner's private context, shared by the files of lib/plan/ and nothing else.
 * SPDX-License-Identifier: Apache-2.0
 *
 * One step (tfjob_plan_new) follows training-operator v1.9's ReconcileJobs: step.c runs the
 * paths in order, lifecycle.c holds the paths that end early (finished, suspended, limits) and
 * the checks before the children, children.c ReconcilePods / ReconcileServices, status.c
 * UpdateJobStatus and the status helpers, actions.c the action list, plan.c the plan object.
 * The documented mode fixes the defects listed in SEMANTICS.md; the training-operator-1.9 mode
 * reproduces them (docs/semantics.md).
 */
#ifndef TFJOB_PLAN_STEP_H
#define TFJOB_PLAN_STEP_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>

#include "graph/graph.h"
#include "parse/doc.h"
#include "core/job.h"
#include "core/objects.h"
#include "plan/planner.h"
#include "graph/render.h"

/* v1.9 creates every missing index below the highest observed one; we stop this far above replicas. */
#define COMPAT_GAP_CAP 1024

struct tfjob__action {
	tfjob_action_type type;
	tfjob_object_kind kind;
	char *name;
	json_t *object;  /* a create's object; NULL: rendered on demand from (rtype, index) */
	tfjob_event_type event_type;
	char *reason;
	char *message;
	size_t rtype;    /* a create: the graph's type index of the child */
	int64_t index;   /* a create: the child's replica index */
};

/* What a plan keeps to render its creates on demand (actions.c). */
struct tfjob__plan_renderer;

struct tfjob_plan {
	struct tfjob__action *actions;
	size_t count, cap;
	json_t *status;
	bool changed;
	bool has_requeue;
	int64_t requeue;
	struct tfjob__plan_renderer *renderer; /* made at the first create; NULL when there is none */
};

/* Summaries of observed objects, in list order. */
typedef struct sum_list {
	const tfjob__summary **items;
	size_t n;
} sum_list;

typedef struct rtype_state {
	const char *key;  /* spec key (canonical after defaults) */
	char *lower;      /* label value */
	int64_t replicas;
	const char *policy;
	int64_t active, succeeded, failed;
	sum_list pods, services; /* ours whose replica-type label is `lower` (borrowed from ctx's buckets) */
} rtype_state;

typedef struct entry {
	int64_t index;
	size_t pos;
	const tfjob__summary *sum;
} entry;

typedef enum path { PATH_NORMAL, PATH_FINISHED, PATH_SUSPENDED, PATH_LIMIT, PATH_VALIDATION } path;

typedef struct ctx {
	tfjob_plan *plan;
	tfjob_job *job;
	const tfjob_job *given; /* the job as the caller gave it (not defaulted): its warnings */
	tfjob_compat compat;
	bool documented;
	int64_t now;
	int64_t requeues;
	const char *name;
	const char *ns;
	const char *uid;   /* metadata.uid, "" when absent */
	json_t *status;
	sum_list pods;     /* the observed pods that are the job's (claim.c) */
	sum_list services; /* the same for services */
	const tfjob_objects *all_services; /* every observed service, the job's or not (cleanup deletes by name) */
	json_t *pod_group; /* the observed PodGroup, NULL = none (owned) */
	bool pods_wait;    /* gang scheduling: no pod is created in this step (gang.c) */
	const tfjob__summary **buckets; /* storage of the types' pod and service lists */
	rtype_state *types;
	size_t ntypes;
	const tfjob_render_options *render;
	tfjob_error **err;
	bool restart_started;
	char *restart_message;
	char **perm_failures; /* documented mode: permanent exit-code failures waiting for the status step */
	size_t nperm;
	bool worker0_completed;
	bool job_deleted;
	path path;
} ctx;

/* The replica types in v1.9's order of UpdateJobStatus (chief, evaluator, master, ps, worker). */
#define TFJOB__PLAN_TYPE_COUNT 5
extern const char *const tfjob__plan_all_types[TFJOB__PLAN_TYPE_COUNT];

/* ---- actions.c: the plan's actions (each returns 0 or TFJOB_ENOMEM through c->err) ---- */

/* Append an event action (reason and message are copied). */
int tfjob__plan_event(ctx *c, tfjob_event_type type, const char *reason, const char *message);
int tfjob__plan_eventf(ctx *c, tfjob_event_type type, const char *reason, const char *fmt, ...) TFJOB_PRINTF(4, 5);
/* Append a create or delete action; takes obj (NULL for deletes) even on failure. */
int tfjob__plan_object_action(ctx *c, tfjob_action_type type, tfjob_object_kind kind, const char *name, json_t *obj);
/*
 * Append the creation of child (type key, index) of a kind, index below the type's replicas.
 * The object is rendered when it is read (tfjob_plan_action_object_json(), the plan's JSON),
 * so a plan of many creates holds no rendered child; the first child of each type and kind is
 * rendered here, so rendering errors (which depend on the type's template) fail the step.
 */
int tfjob__plan_create(ctx *c, const char *type, int64_t index, tfjob_object_kind kind);
/* Ask to be requeued after secs (negative: 0); the earliest request wins. */
void tfjob__plan_requeue(ctx *c, int64_t secs);
/* Release what one action owns. */
void tfjob__plan_action_clear(struct tfjob__action *a);
/* The object of a create action, kept or rendered now: a new reference. */
int tfjob__plan_action_object_of(json_t **out, const tfjob_plan *plan, const struct tfjob__action *a,
                                 tfjob_error **err);
/* Free what a plan keeps to render its creates (NULL: nothing). */
void tfjob__plan_renderer_free(struct tfjob__plan_renderer *r);

/* ---- step.c ---- */

/* The whole step for tfjob_plan_new*: the lists (NULL = none) are only read. */
int tfjob__plan_run(tfjob_plan **out, const tfjob_job *job, const tfjob_objects *pods,
                    const tfjob_objects *services, const tfjob_plan_options *opts, tfjob_error **err);

/* ---- status.c: status helpers and UpdateJobStatus ---- */

/* status.replicaStatuses, created when missing; NULL on out of memory. Borrowed. */
json_t *tfjob__plan_replica_statuses(ctx *c);
/* obj[key] = v, or removed when v is 0 (v1.9 omits zero counts). 0 or TFJOB_ENOMEM. */
int tfjob__plan_set_count(json_t *obj, const char *key, int64_t v);
int64_t tfjob__plan_get_count(json_t *obj, const char *key);
int tfjob__plan_cond_set(ctx *c, const char *type, const char *cstatus, const char *reason, const char *message);
/* Succeeded or Failed is True in the new status. */
bool tfjob__plan_finished(ctx *c);
int tfjob__plan_set_completion(ctx *c);
/* A terminal transition: its event, completionTime (when asked), then the condition True. */
int tfjob__plan_record_terminal(ctx *c, tfjob_event_type event_type, const char *reason, const char *cond,
                                const char *msg, bool set_completion);
/* UpdateJobStatus over the counts the children step wrote into c->types. */
int tfjob__plan_update_status(ctx *c);

/* ---- children.c: ReconcilePods / ReconcileServices ---- */

/* A Warning event per observed object without a replica-type label. */
int tfjob__plan_warn_unlabelled(ctx *c, const sum_list *objs, tfjob_object_kind kind);
/* Create the missing children of a type, handle its pods, delete what is beyond replicas. */
int tfjob__plan_reconcile_children(ctx *c, rtype_state *rt, tfjob_object_kind kind);
/* status.replicaStatuses[type] from the counts of reconcile_children. */
int tfjob__plan_write_replica_status(ctx *c, rtype_state *rt);

/* ---- claim.c: controller references (ClaimPods / ClaimServices) ---- */

/*
 * Which observed objects are the job's (into *out), by their controller reference: adopt and
 * release actions for what changes hands. The job must not be being deleted.
 */
int tfjob__plan_claim_children(ctx *c, sum_list *out, const tfjob_objects *objects, tfjob_object_kind kind);

/* ---- gang.c: the PodGroup of gang scheduling ---- */

/* SyncPodGroup on the normal path: create or patch the PodGroup; volcano's pods wait for it (c->pods_wait). */
int tfjob__plan_gang_sync(ctx *c);
/* DeletePodGroup on the finished, suspended and limit paths (documented mode: when one is observed). */
int tfjob__plan_gang_delete(ctx *c);

/* ---- lifecycle.c: the paths that end a step early, and the checks before the children ---- */

int tfjob__plan_step_finished(ctx *c);
int tfjob__plan_step_suspended(ctx *c);
int tfjob__plan_resume_if_suspended(ctx *c);
/* RecordAbnormalPods: Warning events for active pods whose containers or conditions look wrong. */
int tfjob__plan_record_abnormal_pods(ctx *c);
/* backoffLimit and activeDeadlineSeconds; *message is set (owned) when the job has to fail. */
int tfjob__plan_check_limits(ctx *c, char **message);
int tfjob__plan_step_limit(ctx *c, const char *message);

#endif
