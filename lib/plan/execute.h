/*
 * The one executor of a plan's actions, shared by everything that carries plans out: the
 * controller (lib/controller, against an API server), the local runner (lib/local, processes)
 * and the simulator (plan/simulate.c, a cluster of plain objects). The rules of execution live
 * here once: the order of the actions, what an Event action records, that a child already gone
 * counts as deleted, the Events that report the outcome of each write (named as
 * training-operator names them), the Event that says the job itself was deleted, when a plan
 * restarts the job, and stopping between actions. A backend supplies only the writes.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_INTERNAL_EXECUTE_H
#define TFJOB_INTERNAL_EXECUTE_H

#include "util/common.h"

/*
 * What a backend does for the executor. ctx is the backend's own. The writes return 0, a
 * TFJOB_E* code (with *err set when they have one), or TFJOB__EXEC_SKIPPED when there was
 * nothing to do (no request made, no Event). NULL writes are skipped, as actions of a kind the
 * backend does not run (a local run has no gang scheduler, so no PodGroup).
 */
typedef struct tfjob__exec_ops {
	/* An Event about the job (the plan's own, or one reporting a write). */
	void (*event)(void *ctx, const char *type, const char *reason, const char *message);
	/* Optional: every action but an Event, before it is carried out (simulate prints them). */
	void (*before)(void *ctx, const tfjob_plan *plan, size_t i);
	/* Create action i's Pod or Service. */
	int (*create_child)(void *ctx, const tfjob_plan *plan, size_t i, tfjob_error **err);
	/* Delete the Pod or Service of action i. NotFound, or Conflict on the child's uid
	   precondition (replaced meanwhile), count as deleted, with no Event. */
	int (*delete_child)(void *ctx, const tfjob_plan *plan, size_t i, tfjob_error **err);
	/* Adopt or release a child (action i's object is the merge patch). NotFound: nothing to do. */
	int (*claim)(void *ctx, const tfjob_plan *plan, size_t i, tfjob_error **err);
	/* Create or patch the PodGroup (action i's object). AlreadyExists or NotFound: nothing to
	   do (its watch event brings the job back). */
	int (*write_pod_group)(void *ctx, const tfjob_plan *plan, size_t i, tfjob_error **err);
	/* Delete the PodGroup. NotFound counts as deleted, with the Event of a delete. */
	int (*delete_pod_group)(void *ctx, const tfjob_plan *plan, size_t i, tfjob_error **err);
	/* Delete the job itself (its TTL ran out). NotFound or Conflict: gone, or another job of
	   that name now: done, no Event. */
	int (*delete_job)(void *ctx, tfjob_error **err);
	/* Optional: true to stop before the next action (the rest is counted as left). */
	bool (*stopping)(void *ctx);
	/* Record the Events of creating and deleting Pods and Services (training-operator's
	   SuccessfulCreatePod, FailedDeleteService, ...). A local run and the simulator report their
	   children otherwise. */
	bool child_events;
} tfjob__exec_ops;

#define TFJOB__EXEC_SKIPPED 1

/* What carrying out a plan did. */
typedef struct tfjob__exec_result {
	size_t left;      /* actions not carried out: the backend asked to stop */
	bool acted;       /* a write was made (anything but Events and waits) */
	bool restarted;   /* the plan restarts the job: its pods are deleted to be created again */
	bool deleted_job; /* the job itself was deleted */
} tfjob__exec_result;

/*
 * Carry out the plan's actions in order with ops, until one fails (its code is returned, and
 * *err set when the backend gave an error) or ops->stopping says so. *res is always filled.
 */
int tfjob__plan_execute(const tfjob_plan *plan, const tfjob__exec_ops *ops, void *ctx, tfjob__exec_result *res,
                        tfjob_error **err);

#endif
