/*
 * Helpers for the planner tests: jobs, observed pods and plan inspection.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_PLANUTIL_H
#define TFJOB_PLANUTIL_H

#include <jansson.h>
#include <stdbool.h>

#include "testutil.h"

#define T0 1704067200 /* 2024-01-01T00:00:00Z */

/* JSON members of a child of pu_job()'s job: its controller reference, and the job's selector labels. */
#define PU_OWNED "\"ownerReferences\":[{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"name\":\"job\"," \
                 "\"uid\":\"u-1\",\"controller\":true}],"
#define PU_JOB_LABELS "\"training.kubeflow.org/job-name\":\"job\",\"training.kubeflow.org/operator-name\":\"tfjob-controller\","

/* Replica spec: type, replicas, restartPolicy (NULL = absent). */
typedef struct pu_replica {
	const char *type;
	int replicas;
	const char *policy;
} pu_replica;

/*
 * A TFJob named "job" in namespace "ns". replicas ends with a {NULL} entry; run_policy and
 * extra_spec are JSON object members without braces ("\"backoffLimit\":3"), or NULL; status is a
 * JSON object text or NULL.
 */
tfjob_job *pu_job(const pu_replica *replicas, const char *run_policy, const char *extra_spec, const char *status);

/* Observed pod: type (spec key), index, phase; exit code of `tensorflow` (-1 = not terminated). */
typedef struct pu_pod {
	const char *type;
	int index;
	const char *phase;
	int exit_code;
	int restarts;
	bool deleting;
} pu_pod;

/* The pods as a JSON array text (caller frees with free()). count may be 0. */
char *pu_pods(const pu_pod *pods, size_t count);
/* Services for every (type, index) of the spec: JSON array text. */
char *pu_services_for(const pu_replica *replicas);

/* Run the planner; fails the test on error. */
tfjob_plan *pu_plan(const tfjob_job *job, const char *pods, const char *services, tfjob_compat compat, int64_t now,
                    int64_t requeues);

/* The plan's status as a jansson value (caller decrefs). */
json_t *pu_status(const tfjob_plan *plan);
/* Status ("True"/"False") of a condition of the plan's status, NULL when absent. Static buffer. */
const char *pu_cond(const tfjob_plan *plan, const char *type);
const char *pu_cond_reason(const tfjob_plan *plan, const char *type);
/* Count of replicaStatuses[type][key] (0 when absent). */
int64_t pu_count(const tfjob_plan *plan, const char *type, const char *key);
/* A status time field, NULL when absent. Static buffer. */
const char *pu_time(const tfjob_plan *plan, const char *key);

/* Number of actions of the given type and kind (kind ignored for events) whose name or reason is `what` (NULL = any). */
int pu_actions(const tfjob_plan *plan, tfjob_action_type type, tfjob_object_kind kind, const char *what);
/* Index of the first event with that reason, or -1. */
int pu_event(const tfjob_plan *plan, const char *reason);
/* Requeue seconds, or -1 for none. */
int64_t pu_requeue(const tfjob_plan *plan);

#endif
