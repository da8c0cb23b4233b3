/*
 * The reconcile planner: one test (or table) per rule of SEMANTICS.md "Reconcile" and below, in
 * both modes, including training-operator v1.9's status table (status_test.go) as our own table.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdlib.h>
#include <string.h>

#include "planutil.h"

#define TFJOB_ARRAY_LEN_T(a) (sizeof(a) / sizeof((a)[0]))
#define DOC TFJOB_COMPAT_DOCUMENTED
#define V19 TFJOB_COMPAT_TRAINING_OPERATOR_1_9

static const tfjob_compat both[] = { DOC, V19 };

/* ---- v1.9's status table (controller.v1/tensorflow/status_test.go), mirrored ---- */

typedef struct status_case {
	const char *description;
	bool chief;            /* NewTFJobWithChief(4, 2), else NewTFJob(workers, ps) */
	int workers, ps;
	bool all_workers;      /* successPolicy AllWorkers */
	int failed_ps, succeeded_ps, active_ps;
	int failed_worker, succeeded_worker, active_worker;
	int failed_chief, succeeded_chief, active_chief;
	bool restart;          /* ExitCode policy, failed pods exit 130 */
	bool worker0_completed;
	const char *expected_type;
} status_case;

static const status_case status_table[] = {
	{ "Chief worker is succeeded", true, 1, 0, false, 0, 0, 0, 0, 1, 0, 0, 1, 0, false, false, "Succeeded" },
	{ "Chief worker is running", true, 1, 0, false, 0, 0, 0, 0, 0, 0, 0, 0, 1, false, false, "Running" },
	{ "Chief worker is failed", true, 1, 0, false, 0, 0, 0, 0, 0, 0, 1, 0, 0, false, false, "Failed" },
	{ "(No chief worker) Worker is failed", false, 1, 0, false, 0, 0, 0, 1, 0, 0, 0, 0, 0, false, false, "Failed" },
	{ "(No chief worker) Worker is succeeded", false, 1, 0, false, 0, 0, 0, 0, 1, 0, 0, 0, 0, false, false, "Succeeded" },
	{ "(No chief worker) Worker is running", false, 1, 0, false, 0, 0, 0, 0, 0, 1, 0, 0, 0, false, false, "Running" },
	{ "(No chief worker) 2 workers are succeeded, 2 workers are active", false, 4, 2, false, 0, 0, 2, 0, 2, 2, 0, 0, 0,
	  false, false, "Running" },
	{ "(No chief worker) 2 workers are running, 2 workers are failed", false, 4, 2, false, 0, 0, 2, 2, 0, 2, 0, 0, 0,
	  false, false, "Failed" },
	{ "(No chief worker) 2 workers are succeeded, 2 workers are failed", false, 4, 2, false, 0, 0, 2, 2, 2, 0, 0, 0,
	  0, false, false, "Failed" },
	{ "(No chief worker) worker-0 are succeeded, 3 workers are active", false, 4, 2, false, 0, 0, 2, 0, 1, 3, 0, 0, 0,
	  false, true, "Succeeded" },
	{ "(No chief worker, successPolicy: AllWorkers) worker-0 are succeeded, 3 workers are active", false, 4, 0, true,
	  0, 0, 0, 0, 1, 3, 0, 0, 0, false, true, "Running" },
	{ "(No chief worker, successPolicy: AllWorkers) 4 workers are succeeded", false, 4, 0, true, 0, 0, 0, 0, 4, 0, 0,
	  0, 0, false, true, "Succeeded" },
	{ "(No chief worker, successPolicy: AllWorkers) worker-0 is succeeded, 2 workers are running, 1 worker is failed",
	  false, 4, 0, true, 0, 0, 0, 1, 1, 2, 0, 0, 0, false, true, "Failed" },
	{ "Chief is running, workers are failed", true, 4, 2, false, 0, 0, 2, 4, 0, 0, 0, 0, 1, false, false, "Running" },
	{ "Chief is running, workers are succeeded", true, 4, 2, false, 0, 0, 2, 0, 4, 0, 0, 0, 1, false, false, "Running" },
	{ "Chief is running, a PS is failed", true, 4, 2, false, 1, 0, 1, 0, 4, 0, 0, 0, 1, false, false, "Failed" },
	{ "Chief is failed, workers are succeeded", true, 4, 2, false, 0, 0, 2, 0, 4, 0, 1, 0, 0, false, false, "Failed" },
	{ "Chief is succeeded, workers are failed", true, 4, 2, false, 0, 0, 2, 4, 0, 0, 0, 1, 0, false, false,
	  "Succeeded" },
	{ "Chief is failed and restarting", true, 4, 2, false, 0, 0, 2, 4, 0, 0, 1, 0, 0, true, false, "Restarting" },
};

static size_t add_pods(pu_pod *pods, size_t n, const char *type, int succeeded, int failed, int active, bool restart,
                       bool w0)
{
	int index = 0;
	for (int i = 0; i < succeeded; i++, index++)
		pods[n++] = (pu_pod){ type, index, "Succeeded", (w0 && index == 0 && !strcmp(type, "Worker")) ? 0 : -1, 0, false };
	for (int i = 0; i < failed; i++, index++)
		pods[n++] = (pu_pod){ type, index, "Failed", restart ? 130 : -1, 0, false };
	for (int i = 0; i < active; i++, index++)
		pods[n++] = (pu_pod){ type, index, "Running", -1, 0, false };
	return n;
}

START_TEST(reference_status_table)
{
	const status_case *c = &status_table[_i / 2];
	tfjob_compat compat = both[_i % 2];
	const char *pol = c->restart ? "ExitCode" : NULL;
	pu_replica reps[4] = { { NULL, 0, NULL } };
	int r = 0;
	if (c->chief)
		reps[r++] = (pu_replica){ "Chief", 1, pol };
	if (c->ps)
		reps[r++] = (pu_replica){ "PS", c->ps, pol };
	reps[r++] = (pu_replica){ "Worker", c->workers, c->chief ? pol : (pol ? pol : NULL) };
	char status[512];
	snprintf(status, sizeof status,
	         "{\"replicaStatuses\":{\"PS\":{\"failed\":%d,\"succeeded\":%d,\"active\":%d},"
	         "\"Worker\":{\"failed\":%d,\"succeeded\":%d,\"active\":%d},\"Chief\":{\"failed\":%d,\"succeeded\":%d,\"active\":%d}}}",
	         c->failed_ps, c->succeeded_ps, c->active_ps, c->failed_worker, c->succeeded_worker, c->active_worker,
	         c->failed_chief, c->succeeded_chief, c->active_chief);
	tfjob_job *job = pu_job(reps, NULL, c->all_workers ? "\"successPolicy\":\"AllWorkers\"" : NULL, status);
	pu_pod pods[32];
	size_t n = 0;
	n = add_pods(pods, n, "PS", c->succeeded_ps, c->failed_ps, c->active_ps, c->restart, false);
	n = add_pods(pods, n, "Worker", c->succeeded_worker, c->failed_worker, c->active_worker, c->restart,
	             c->worker0_completed);
	n = add_pods(pods, n, "Chief", c->succeeded_chief, c->failed_chief, c->active_chief, c->restart, false);
	char *pj = pu_pods(pods, n);
	tfjob_plan *plan = pu_plan(job, pj, NULL, compat, T0, 0);
	ck_assert_msg(pu_cond(plan, c->expected_type) != NULL, "%s (%s): no %s condition", c->description,
	              tfjob_compat_name(compat), c->expected_type);
	/* the counts are the observed pods' */
	ck_assert_int_eq(pu_count(plan, "Worker", "active"), c->active_worker);
	ck_assert_int_eq(pu_count(plan, "Worker", "succeeded"), c->succeeded_worker);
	ck_assert_int_eq(pu_count(plan, "Worker", "failed"), c->failed_worker);
	tfjob_plan_free(plan);
	free(pj);
	tfjob_job_free(job);
}
END_TEST

/* ---- restartPolicy x exit code ---- */

typedef struct restart_case {
	const char *policy;
	int code; /* -1: no terminated state */
	bool restart_doc, restart_v19;
} restart_case;

static const restart_case restart_table[] = {
	{ "Always", 1, true, true },      { "Always", 137, true, true },    { "OnFailure", 1, true, true },
	{ "OnFailure", 143, true, true }, { "Never", 1, false, false },     { "Never", 137, false, false },
	{ "ExitCode", 1, false, false },  { "ExitCode", 2, false, false },  { "ExitCode", 126, false, false },
	{ "ExitCode", 127, false, false }, { "ExitCode", 128, false, true }, { "ExitCode", 139, false, true },
	{ "ExitCode", 130, true, true },  { "ExitCode", 137, true, true },  { "ExitCode", 138, true, true },
	{ "ExitCode", 143, true, true },  { "ExitCode", 255, true, true },  { "ExitCode", 3, false, false },
	{ "ExitCode", -1, true, true }, /* no exit code seen: v1.9's 0xbeef marker, >= 128 */
};

START_TEST(restart_policy_by_exit_code)
{
	const restart_case *c = &restart_table[_i / 2];
	tfjob_compat compat = both[_i % 2];
	bool restart = compat == DOC ? c->restart_doc : c->restart_v19;
	pu_replica reps[] = { { "Worker", 2, c->policy }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, NULL);
	pu_pod pods[] = { { "Worker", 0, "Running", -1, 0, false }, { "Worker", 1, "Failed", c->code, 0, false } };
	char *pj = pu_pods(pods, 2), *sj = pu_services_for(reps);
	tfjob_plan *plan = pu_plan(job, pj, sj, compat, T0, 0);
	const char *what = c->policy;
	if (restart) {
		ck_assert_msg(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, "job-worker-1") == 1, "%s %d", what, c->code);
		ck_assert_str_eq(pu_cond(plan, "Restarting"), "True");
		ck_assert_int_ge(pu_event(plan, "TFJobRestarting"), 0);
		ck_assert_ptr_null(pu_cond(plan, "Failed"));
	} else {
		ck_assert_msg(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, NULL) == 0, "%s %d", what, c->code);
		ck_assert_str_eq(pu_cond(plan, "Failed"), "True");
		ck_assert_str_eq(pu_cond_reason(plan, "Failed"), "TFJobFailed");
		ck_assert_ptr_nonnull(pu_time(plan, "completionTime"));
		ck_assert_ptr_null(pu_cond(plan, "Restarting"));
	}
	if (c->code >= 0)
		ck_assert_int_ge(pu_event(plan, "ExitedWithCode"), 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, NULL), 0);
	ck_assert_int_eq(pu_count(plan, "Worker", "failed"), 1);
	ck_assert_int_eq(pu_count(plan, "Worker", "active"), 1);
	tfjob_plan_free(plan);
	free(pj);
	free(sj);
	tfjob_job_free(job);
}
END_TEST

START_TEST(exit_code_messages)
{
	/* v1.9's messages and event types for restart and permanent failure */
	pu_replica reps[] = { { "Worker", 1, "ExitCode" }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, NULL);
	pu_pod pods[] = { { "Worker", 0, "Failed", 1, 0, false } };
	char *pj = pu_pods(pods, 1);
	tfjob_plan *plan = pu_plan(job, pj, NULL, V19, T0, 0);
	int e = pu_event(plan, "TFJobFailed");
	ck_assert_int_ge(e, 0);
	ck_assert_int_eq(tfjob_plan_action_event_type(plan, (size_t)e), TFJOB_EVENT_WARNING);
	ck_assert_str_eq(tfjob_plan_action_message(plan, (size_t)e), "job \"job\" is failing because \"Worker\" replica(s) failed.");
	ck_assert_str_eq(pu_cond_reason(plan, "Failed"), "TFJobFailed");
	/* then the status step's Normal event */
	bool normal = false;
	for (size_t i = 0; i < tfjob_plan_action_count(plan); i++)
		if (tfjob_plan_action_type(plan, i) == TFJOB_ACTION_EVENT && tfjob_plan_action_event_type(plan, i) == TFJOB_EVENT_NORMAL &&
		    !strcmp(tfjob_plan_action_message(plan, i), "TFJob ns/job has failed because 1 Worker replica(s) failed."))
			normal = true;
	ck_assert(normal);
	e = pu_event(plan, "ExitedWithCode");
	ck_assert_str_eq(tfjob_plan_action_message(plan, (size_t)e), "Pod: ns.job-worker-0 exited with code 1");
	tfjob_plan_free(plan);
	free(pj);
	tfjob_job_free(job);
}
END_TEST

/* ---- cleanPodPolicy x pod phase ---- */

typedef struct clean_case {
	const char *policy;
	const char *phase;
	bool deleted;
} clean_case;

static const clean_case clean_table[] = {
	{ "All", "Running", true },      { "All", "Pending", true },     { "All", "Succeeded", true },
	{ "All", "Failed", true },       { "Running", "Running", true }, { "Running", "Pending", true },
	{ "Running", "Succeeded", false }, { "Running", "Failed", false }, { "None", "Running", false },
	{ "None", "Pending", false },    { "None", "Succeeded", false }, { "None", "Failed", false },
};

START_TEST(clean_pod_policy_by_phase)
{
	const clean_case *c = &clean_table[_i / 2];
	tfjob_compat compat = both[_i % 2];
	pu_replica reps[] = { { "Worker", 1, NULL }, { NULL, 0, NULL } };
	char rp[128];
	snprintf(rp, sizeof rp, "\"cleanPodPolicy\":\"%s\"", c->policy);
	tfjob_job *job = pu_job(reps, rp, NULL,
	                        "{\"conditions\":[{\"type\":\"Succeeded\",\"status\":\"True\",\"reason\":\"TFJobSucceeded\"}],"
	                        "\"completionTime\":\"2024-01-01T00:00:00Z\"}");
	pu_pod pods[] = { { "Worker", 0, c->phase, -1, 0, false } };
	char *pj = pu_pods(pods, 1);
	tfjob_plan *plan = pu_plan(job, pj, NULL, compat, T0 + 10, 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, "job-worker-0"), c->deleted);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_SERVICE, "job-worker-0"), c->deleted);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, NULL), 0);
	tfjob_plan_free(plan);
	free(pj);
	tfjob_job_free(job);
}
END_TEST

/*
 * Cleanup of children already being deleted (semantics-diff found it): such a pod is not deleted
 * again, but its service still is (v1.9 deletes the service by the pod's name); a service
 * already being deleted is not deleted again. Both modes; the suspension path uses the same rule.
 */
START_TEST(cleanup_of_children_being_deleted)
{
#define SVC(i, extra)                                                                                   \
	"{\"metadata\":{\"name\":\"job-worker-" #i "\"," extra PU_OWNED "\"labels\":{" PU_JOB_LABELS                \
	"\"training.kubeflow.org/replica-type\":\"worker\",\"training.kubeflow.org/replica-index\":\"" #i "\"}}}"
	const char *services = "[" SVC(0, "") "," SVC(1, "\"deletionTimestamp\":\"2024-01-01T00:00:00Z\",") "]";
#undef SVC
	pu_replica reps[] = { { "Worker", 2, NULL }, { NULL, 0, NULL } };
	for (size_t m = 0; m < 2; m++) {
		for (int suspend = 0; suspend < 2; suspend++) {
			tfjob_job *job = suspend ? pu_job(reps, "\"cleanPodPolicy\":\"All\",\"suspend\":true", NULL, NULL)
			                         : pu_job(reps, "\"cleanPodPolicy\":\"All\"", NULL,
			                                  "{\"conditions\":[{\"type\":\"Succeeded\",\"status\":\"True\","
			                                  "\"reason\":\"TFJobSucceeded\"}],\"completionTime\":\"2024-01-01T00:00:00Z\"}");
			pu_pod pods[] = { { "Worker", 0, "Running", -1, 0, true }, { "Worker", 1, "Running", -1, 0, false } };
			char *pj = pu_pods(pods, 2);
			tfjob_plan *plan = pu_plan(job, pj, services, both[m], T0 + 10, 0);
			ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, "job-worker-0"), 0);
			ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, "job-worker-1"), 1);
			ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_SERVICE, "job-worker-0"), 1);
			ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_SERVICE, "job-worker-1"), 0);
			tfjob_plan_free(plan);
			free(pj);
			tfjob_job_free(job);
		}
	}
}
END_TEST

START_TEST(clean_pod_policy_default_by_mode)
{
	/* documented default Running deletes the running pod of a finished job; v1.9's None keeps it */
	pu_replica reps[] = { { "Worker", 1, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, "{\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\"}],"
	                                          "\"completionTime\":\"2024-01-01T00:00:00Z\"}");
	pu_pod pods[] = { { "Worker", 0, "Running", -1, 0, false } };
	char *pj = pu_pods(pods, 1);
	tfjob_plan *plan = pu_plan(job, pj, NULL, DOC, T0, 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, NULL), 1);
	tfjob_plan_free(plan);
	plan = pu_plan(job, pj, NULL, V19, T0, 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, NULL), 0);
	ck_assert(!tfjob_plan_status_changed(plan));
	tfjob_plan_free(plan);
	free(pj);
	tfjob_job_free(job);
}
END_TEST

START_TEST(finished_job_counts_and_never_recreates)
{
	for (size_t m = 0; m < 2; m++) {
		pu_replica reps[] = { { "Worker", 3, "OnFailure" }, { NULL, 0, NULL } };
		tfjob_job *job = pu_job(reps, "\"cleanPodPolicy\":\"None\"", NULL,
		                        "{\"conditions\":[{\"type\":\"Succeeded\",\"status\":\"True\"}],"
		                        "\"completionTime\":\"2024-01-01T00:00:00Z\","
		                        "\"replicaStatuses\":{\"Worker\":{\"active\":2,\"succeeded\":1}}}");
		pu_pod pods[] = { { "Worker", 2, "Failed", 137, 0, false } };
		char *pj = pu_pods(pods, 1);
		tfjob_plan *plan = pu_plan(job, pj, NULL, both[m], T0, 0);
		if (both[m] == V19) {
			/* v1.9 moves `active` into `succeeded`, whatever the pods did */
			ck_assert_int_eq(pu_count(plan, "Worker", "succeeded"), 3);
			ck_assert_int_eq(pu_count(plan, "Worker", "active"), 0);
			ck_assert_int_eq(pu_count(plan, "Worker", "failed"), 0);
		} else {
			/* documented: no pod runs, the one observed failed; the recorded success is kept */
			ck_assert_int_eq(pu_count(plan, "Worker", "succeeded"), 1);
			ck_assert_int_eq(pu_count(plan, "Worker", "active"), 0);
			ck_assert_int_eq(pu_count(plan, "Worker", "failed"), 1);
		}
		ck_assert(tfjob_plan_status_changed(plan));
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, NULL), 0);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_SERVICE, NULL), 0);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, NULL), 0);
		ck_assert_int_eq(pu_event(plan, "TFJobRestarting"), -1);
		tfjob_plan_free(plan);
		free(pj);
		tfjob_job_free(job);
	}
}
END_TEST

/* ---- backoffLimit ---- */

typedef struct backoff_case {
	const char *desc;
	int limit;
	const char *policy;
	int restarts;       /* restartCount of the running pod */
	bool failed_pod;    /* worker 1 Failed (new failure) */
	int64_t requeues;
	bool fails;
} backoff_case;

static const backoff_case backoff_table[] = {
	{ "limit 0, no restart", 0, "OnFailure", 0, false, 0, false },
	{ "limit 0, one restart", 0, "OnFailure", 1, false, 0, true },
	{ "limit 3, 2 restarts", 3, "OnFailure", 2, false, 0, false },
	{ "limit 3, exactly 3 restarts", 3, "OnFailure", 3, false, 0, true },
	{ "limit 3, Always counts", 3, "Always", 3, false, 0, true },
	{ "limit 3, ExitCode counts", 3, "ExitCode", 4, false, 0, true },
	{ "limit 3, Never does not count", 3, "Never", 5, false, 0, false },
	{ "limit 0, new failure, requeues 0", 0, "OnFailure", 0, true, 0, true },
	{ "limit 2, new failure, requeues 1", 2, "OnFailure", 0, true, 1, false },
	{ "limit 2, new failure, requeues 2", 2, "OnFailure", 0, true, 2, true },
	{ "limit 2, new failure, requeues INT64_MAX (no overflow)", 2, "OnFailure", 0, true, INT64_MAX, true },
	{ "limit 0, no new failure, requeues INT64_MAX", 0, "OnFailure", 0, false, INT64_MAX, false },
};

START_TEST(backoff_limit)
{
	const backoff_case *c = &backoff_table[_i / 2];
	tfjob_compat compat = both[_i % 2];
	pu_replica reps[] = { { "Worker", 2, c->policy }, { NULL, 0, NULL } };
	char rp[128];
	snprintf(rp, sizeof rp, "\"backoffLimit\":%d,\"cleanPodPolicy\":\"None\"", c->limit);
	tfjob_job *job = pu_job(reps, rp, NULL, "{\"startTime\":\"2024-01-01T00:00:00Z\"}");
	pu_pod pods[] = { { "Worker", 0, "Running", -1, c->restarts, false },
		          { "Worker", 1, c->failed_pod ? "Failed" : "Running", c->failed_pod ? 1 : -1, 0, false } };
	char *pj = pu_pods(pods, 2);
	tfjob_plan *plan = pu_plan(job, pj, NULL, compat, T0 + 5, c->requeues);
	if (c->fails) {
		ck_assert_msg(pu_cond(plan, "Failed") && !strcmp(pu_cond(plan, "Failed"), "True"), "%s", c->desc);
		int e = pu_event(plan, "TFJobFailed");
		ck_assert_str_eq(tfjob_plan_action_message(plan, (size_t)e),
		                 "Job job has failed because it has reached the specified backoff limit");
		/* cleanPodPolicy None keeps every pod (v1.9.4, kubeflow/trainer #3419: v1.9.2 deleted them all) */
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, NULL), 0);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_SERVICE, NULL), 0);
		ck_assert_str_eq(pu_time(plan, "completionTime"), "2024-01-01T00:00:05Z");
	} else {
		for (size_t i = 0; i < tfjob_plan_action_count(plan); i++)
			ck_assert_msg(tfjob_plan_action_type(plan, i) != TFJOB_ACTION_EVENT ||
			                      !strstr(tfjob_plan_action_message(plan, i), "backoff limit"),
			              "%s", c->desc);
	}
	tfjob_plan_free(plan);
	free(pj);
	tfjob_job_free(job);
}
END_TEST

/*
 * A limit failure honours cleanPodPolicy (v1.9.4's fix of kubeflow/trainer #3419; documented
 * mode too): the job is Failed first, then cleaned up as a finished job is. One Running, one
 * Pending, one Succeeded and one Failed worker; the failure is new, so the backoff limit 0 is hit.
 */
START_TEST(limit_failure_honours_clean_pod_policy)
{
	static const struct {
		const char *policy;
		int deleted;
		const char *first, *second;
	} cases[] = { { "None", 0, NULL, NULL },
		      { "Running", 2, "job-worker-0", "job-worker-1" },
		      { "All", 4, "job-worker-0", "job-worker-3" } };
	for (size_t k = 0; k < sizeof(cases) / sizeof(cases[0]); k++) {
		for (size_t m = 0; m < 2; m++) {
			pu_replica reps[] = { { "Worker", 4, "Never" }, { NULL, 0, NULL } };
			char rp[128];
			snprintf(rp, sizeof rp, "\"backoffLimit\":0,\"cleanPodPolicy\":\"%s\"", cases[k].policy);
			tfjob_job *job = pu_job(reps, rp, NULL,
			                        "{\"startTime\":\"2024-01-01T00:00:00Z\",\"replicaStatuses\":"
			                        "{\"Worker\":{\"active\":3}}}");
			pu_pod pods[] = { { "Worker", 0, "Running", -1, 0, false },
				          { "Worker", 1, "Pending", -1, 0, false },
				          { "Worker", 2, "Succeeded", 0, 0, false },
				          { "Worker", 3, "Failed", 1, 0, false } };
			char *pj = pu_pods(pods, 4);
			tfjob_plan *plan = pu_plan(job, pj, NULL, both[m], T0 + 5, 0);
			ck_assert_str_eq(pu_cond(plan, "Failed"), "True");
			ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, NULL), cases[k].deleted);
			ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_SERVICE, NULL), cases[k].deleted);
			if (cases[k].first) {
				ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, cases[k].first), 1);
				ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, cases[k].second), 1);
			}
			/* v1.9.4: the Failed event before the children's deletes */
			int e = pu_event(plan, "TFJobFailed");
			ck_assert_int_ge(e, 0);
			for (size_t i = 0; i < (size_t)e; i++)
				ck_assert_int_ne(tfjob_plan_action_type(plan, i), TFJOB_ACTION_DELETE);
			if (both[m] == V19) {
				/* v1.9 writes the counts of the last step again */
				ck_assert_int_eq(pu_count(plan, "Worker", "active"), 3);
				ck_assert_int_eq(pu_count(plan, "Worker", "failed"), 0);
			} else {
				/* documented: the running pod counts while it stays; the completed ones count */
				ck_assert_int_eq(pu_count(plan, "Worker", "active"), !strcmp(cases[k].policy, "None") ? 1 : 0);
				ck_assert_int_eq(pu_count(plan, "Worker", "succeeded"), 1);
				ck_assert_int_eq(pu_count(plan, "Worker", "failed"), 1);
			}
			tfjob_plan_free(plan);
			free(pj);
			tfjob_job_free(job);
		}
	}
}
END_TEST

/*
 * Documented replicaStatuses of a finished job: active = running pods, succeeded / failed = pods
 * that completed so (kept once counted); v1.9 moves active into succeeded (job Succeeded) and
 * keeps active for the deleted pods of a failed job.
 */
START_TEST(finished_job_replica_statuses)
{
	pu_replica reps[] = { { "Chief", 1, "OnFailure" }, { "Worker", 2, "OnFailure" }, { NULL, 0, NULL } };
	/* Succeeded with workers still running; cleanPodPolicy Running deletes them */
	tfjob_job *job = pu_job(reps, "\"cleanPodPolicy\":\"Running\"", NULL,
	                        "{\"conditions\":[{\"type\":\"Succeeded\",\"status\":\"True\"}],"
	                        "\"completionTime\":\"2024-01-01T00:00:00Z\","
	                        "\"replicaStatuses\":{\"Chief\":{\"succeeded\":1},\"Worker\":{\"active\":2}}}");
	pu_pod pods[] = { { "Chief", 0, "Succeeded", 0, 0, false },
		          { "Worker", 0, "Running", -1, 0, false },
		          { "Worker", 1, "Running", -1, 0, false } };
	char *pj = pu_pods(pods, 3);
	tfjob_plan *plan = pu_plan(job, pj, NULL, DOC, T0, 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, NULL), 2);
	ck_assert_int_eq(pu_count(plan, "Worker", "active"), 0);
	ck_assert_int_eq(pu_count(plan, "Worker", "succeeded"), 0); /* they never completed */
	ck_assert_int_eq(pu_count(plan, "Chief", "succeeded"), 1);
	tfjob_plan_free(plan);
	plan = pu_plan(job, pj, NULL, V19, T0, 0);
	ck_assert_int_eq(pu_count(plan, "Worker", "active"), 0);
	ck_assert_int_eq(pu_count(plan, "Worker", "succeeded"), 2); /* v1.9 */
	tfjob_plan_free(plan);
	free(pj);
	tfjob_job_free(job);

	/* Failed; its pods were deleted before this step: nothing runs any more */
	job = pu_job(reps, "\"cleanPodPolicy\":\"All\"", NULL,
	             "{\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\"}],"
	             "\"completionTime\":\"2024-01-01T00:00:00Z\","
	             "\"replicaStatuses\":{\"Chief\":{\"failed\":1},\"Worker\":{\"active\":2}}}");
	plan = pu_plan(job, NULL, NULL, DOC, T0, 0);
	ck_assert(tfjob_plan_status_changed(plan));
	ck_assert_int_eq(pu_count(plan, "Worker", "active"), 0);
	ck_assert_int_eq(pu_count(plan, "Chief", "failed"), 1);
	tfjob_plan_free(plan);
	plan = pu_plan(job, NULL, NULL, V19, T0, 0);
	ck_assert(!tfjob_plan_status_changed(plan));
	ck_assert_int_eq(pu_count(plan, "Worker", "active"), 2); /* v1.9 */
	tfjob_plan_free(plan);
	/* a later step with the same (empty) pods changes nothing */
	tfjob_job_free(job);
	job = pu_job(reps, "\"cleanPodPolicy\":\"All\"", NULL,
	             "{\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\"}],"
	             "\"completionTime\":\"2024-01-01T00:00:00Z\","
	             "\"replicaStatuses\":{\"Chief\":{\"failed\":1},\"Worker\":{}}}");
	plan = pu_plan(job, NULL, NULL, DOC, T0, 0);
	ck_assert(!tfjob_plan_status_changed(plan));
	tfjob_plan_free(plan);
	tfjob_job_free(job);
}
END_TEST

/* ---- activeDeadlineSeconds ---- */

START_TEST(active_deadline)
{
	tfjob_compat compat = both[_i];
	pu_replica reps[] = { { "Worker", 1, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, "\"activeDeadlineSeconds\":100", NULL, "{\"startTime\":\"2024-01-01T00:00:00Z\"}");
	pu_pod pods[] = { { "Worker", 0, "Running", -1, 0, false } };
	char *pj = pu_pods(pods, 1);
	tfjob_plan *plan = pu_plan(job, pj, NULL, compat, T0 + 99, 0);
	ck_assert_ptr_null(pu_cond(plan, "Failed"));
	/* defect 5: documented requeues for the remaining time, v1.9 drops it */
	ck_assert_int_eq(pu_requeue(plan), compat == DOC ? 1 : -1);
	tfjob_plan_free(plan);
	plan = pu_plan(job, pj, NULL, compat, T0 + 100, 0);
	ck_assert_str_eq(pu_cond(plan, "Failed"), "True");
	ck_assert_str_eq(pu_cond_reason(plan, "Failed"), "TFJobFailed");
	int e = pu_event(plan, "TFJobFailed");
	ck_assert_str_eq(tfjob_plan_action_message(plan, (size_t)e),
	                 "Job job has failed because it was active longer than specified deadline");
	/* cleanPodPolicy's default: documented Running deletes the running pod, v1.9's None keeps it */
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, "job-worker-0"), compat == DOC ? 1 : 0);
	ck_assert_str_eq(pu_cond(plan, "Running") ? pu_cond(plan, "Running") : "absent", "absent");
	tfjob_plan_free(plan);
	free(pj);
	tfjob_job_free(job);
}
END_TEST

START_TEST(active_deadline_first_step_requeues_full_deadline)
{
	pu_replica reps[] = { { "Worker", 1, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, "\"activeDeadlineSeconds\":600", NULL, NULL);
	tfjob_plan *plan = pu_plan(job, NULL, NULL, DOC, T0, 0);
	ck_assert_str_eq(pu_time(plan, "startTime"), "2024-01-01T00:00:00Z");
	ck_assert_int_eq(pu_requeue(plan), 600);
	tfjob_plan_free(plan);
	plan = pu_plan(job, NULL, NULL, V19, T0, 0);
	ck_assert_int_eq(pu_requeue(plan), -1);
	tfjob_plan_free(plan);
	tfjob_job_free(job);
}
END_TEST

START_TEST(active_deadline_extremes)
{
	/* activeDeadlineSeconds is an int64: the remaining time saturates instead of overflowing
	 * (startTime after now makes the elapsed time negative) */
	pu_replica reps[] = { { "Worker", 1, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, "\"activeDeadlineSeconds\":9223372036854775807", NULL,
	                        "{\"startTime\":\"2024-01-01T00:01:00Z\"}");
	tfjob_plan *plan = pu_plan(job, NULL, NULL, DOC, T0, 0);
	ck_assert_ptr_null(pu_cond(plan, "Failed"));
	ck_assert_int_eq(pu_requeue(plan), INT64_MAX);
	tfjob_plan_free(plan);
	plan = pu_plan(job, NULL, NULL, DOC, T0 + 3600, 0);
	ck_assert_int_eq(pu_requeue(plan), INT64_MAX - 3540);
	tfjob_plan_free(plan);
	tfjob_job_free(job);
	job = pu_job(reps, "\"activeDeadlineSeconds\":-9223372036854775808", NULL, "{\"startTime\":\"2024-01-01T00:00:00Z\"}");
	plan = pu_plan(job, NULL, NULL, DOC, T0 + 10, 0);
	ck_assert_str_eq(pu_cond(plan, "Failed"), "True");
	tfjob_plan_free(plan);
	tfjob_job_free(job);
}
END_TEST

/* ---- TTL ---- */

START_TEST(ttl_before_and_after_expiry)
{
	tfjob_compat compat = both[_i];
	pu_replica reps[] = { { "Worker", 1, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, "\"ttlSecondsAfterFinished\":60", NULL,
	                        "{\"conditions\":[{\"type\":\"Succeeded\",\"status\":\"True\",\"reason\":\"TFJobSucceeded\"}],"
	                        "\"completionTime\":\"2024-01-01T00:00:00Z\"}");
	tfjob_plan *plan = pu_plan(job, NULL, NULL, compat, T0 + 30, 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_TFJOB, NULL), 0);
	ck_assert_int_eq(pu_requeue(plan), 30);
	ck_assert(!tfjob_plan_status_changed(plan));
	tfjob_plan_free(plan);
	plan = pu_plan(job, NULL, NULL, compat, T0 + 60, 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_TFJOB, "job"), 1);
	ck_assert_int_eq(pu_event(plan, "SuccessfulDeleteJob"), -1); /* an API outcome: recorded by whoever deletes it */
	tfjob_plan_free(plan);
	tfjob_job_free(job);
}
END_TEST

START_TEST(ttl_just_finished_requeues)
{
	/* a job that succeeds in this step with a TTL requeues at its expiry (both modes: v1.9's
	 * Reconcile reads the new status) */
	for (size_t m = 0; m < 2; m++) {
		pu_replica reps[] = { { "Worker", 1, NULL }, { NULL, 0, NULL } };
		tfjob_job *job = pu_job(reps, "\"ttlSecondsAfterFinished\":100", NULL, "{\"startTime\":\"2024-01-01T00:00:00Z\"}");
		pu_pod pods[] = { { "Worker", 0, "Succeeded", 0, 0, false } };
		char *pj = pu_pods(pods, 1);
		tfjob_plan *plan = pu_plan(job, pj, NULL, both[m], T0 + 10, 0);
		ck_assert_str_eq(pu_cond(plan, "Succeeded"), "True");
		ck_assert_str_eq(pu_time(plan, "completionTime"), "2024-01-01T00:00:10Z");
		ck_assert_int_eq(pu_requeue(plan), 100);
		tfjob_plan_free(plan);
		free(pj);
		tfjob_job_free(job);
	}
}
END_TEST

START_TEST(ttl_after_limit_failure)
{
	/* defect 5: a limit failure with a TTL requeues at expiry (v1.9 drops it); TTL 0 deletes at once */
	pu_replica reps[] = { { "Worker", 1, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, "\"activeDeadlineSeconds\":10,\"ttlSecondsAfterFinished\":50", NULL,
	                        "{\"startTime\":\"2024-01-01T00:00:00Z\"}");
	tfjob_plan *plan = pu_plan(job, NULL, NULL, DOC, T0 + 10, 0);
	ck_assert_str_eq(pu_cond(plan, "Failed"), "True");
	ck_assert_int_eq(pu_requeue(plan), 50);
	tfjob_plan_free(plan);
	plan = pu_plan(job, NULL, NULL, V19, T0 + 10, 0);
	ck_assert_int_eq(pu_requeue(plan), -1);
	tfjob_plan_free(plan);
	tfjob_job_free(job);
	job = pu_job(reps, "\"activeDeadlineSeconds\":10,\"ttlSecondsAfterFinished\":0", NULL,
	             "{\"startTime\":\"2024-01-01T00:00:00Z\"}");
	for (size_t m = 0; m < 2; m++) {
		plan = pu_plan(job, NULL, NULL, both[m], T0 + 10, 0);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_TFJOB, "job"), 1);
		tfjob_plan_free(plan);
	}
	tfjob_job_free(job);
}
END_TEST

START_TEST(ttl_missing_completion_time)
{
	/* v1.9: an error (no status write, retried at once); documented: completionTime is set now */
	pu_replica reps[] = { { "Worker", 1, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, "\"ttlSecondsAfterFinished\":60", NULL,
	                        "{\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\"}]}");
	tfjob_plan *plan = pu_plan(job, NULL, NULL, V19, T0, 0);
	ck_assert(!tfjob_plan_status_changed(plan));
	ck_assert_int_eq(pu_requeue(plan), 0);
	tfjob_plan_free(plan);
	plan = pu_plan(job, NULL, NULL, DOC, T0, 0);
	ck_assert_str_eq(pu_time(plan, "completionTime"), "2024-01-01T00:00:00Z");
	ck_assert_int_eq(pu_requeue(plan), 60);
	tfjob_plan_free(plan);
	tfjob_job_free(job);
}
END_TEST

/* ---- suspend / resume ---- */

START_TEST(suspend_then_resume)
{
	tfjob_compat compat = both[_i];
	pu_replica reps[] = { { "Worker", 2, NULL }, { NULL, 0, NULL } };
	const char *running =
		"{\"conditions\":[{\"type\":\"Created\",\"status\":\"True\",\"reason\":\"TFJobCreated\"},"
		"{\"type\":\"Running\",\"status\":\"True\",\"reason\":\"TFJobRunning\"}],"
		"\"replicaStatuses\":{\"Worker\":{\"active\":2}},\"startTime\":\"2024-01-01T00:00:00Z\"}";
	tfjob_job *job = pu_job(reps, "\"suspend\":true,\"cleanPodPolicy\":\"None\",\"ttlSecondsAfterFinished\":0", NULL,
	                        running);
	pu_pod pods[] = { { "Worker", 0, "Running", -1, 0, false }, { "Worker", 1, "Running", -1, 0, false } };
	char *pj = pu_pods(pods, 2);
	tfjob_plan *plan = pu_plan(job, pj, NULL, compat, T0 + 50, 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, NULL), 2);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_SERVICE, NULL), 2);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_TFJOB, NULL), 0);
	ck_assert_str_eq(pu_cond(plan, "Running"), "False");
	ck_assert_str_eq(pu_cond_reason(plan, "Running"), "TFJobSuspended");
	ck_assert_str_eq(pu_cond(plan, "Suspended"), "True");
	ck_assert_int_eq(pu_count(plan, "Worker", "active"), 0);
	int e = pu_event(plan, "TFJobSuspended");
	ck_assert_str_eq(tfjob_plan_action_message(plan, (size_t)e), "TFJob job is suspended.");
	ck_assert_int_eq(pu_requeue(plan), -1);
	char *suspended = NULL;
	ck_assert_int_eq(tfjob_plan_status_json(&suspended, plan, 0, NULL), 0);
	tfjob_plan_free(plan);
	tfjob_job_free(job);

	/* resume: Suspended -> False, startTime reset, children created again */
	job = pu_job(reps, "\"suspend\":false", NULL, suspended);
	tfjob_free(suspended);
	plan = pu_plan(job, NULL, NULL, compat, T0 + 100, 0);
	ck_assert_str_eq(pu_cond(plan, "Suspended"), "False");
	ck_assert_str_eq(pu_cond_reason(plan, "Suspended"), "TFJobResumed");
	ck_assert_str_eq(pu_time(plan, "startTime"), "2024-01-01T00:01:40Z");
	e = pu_event(plan, "TFJobResumed");
	ck_assert_str_eq(tfjob_plan_action_message(plan, (size_t)e), "TFJob job is resumed.");
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, NULL), 2);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_SERVICE, NULL), 2);
	tfjob_plan_free(plan);
	free(pj);
	tfjob_job_free(job);
}
END_TEST

/* ---- managedBy, deletion, validation ---- */

START_TEST(managed_by_other_controller)
{
	pu_replica reps[] = { { "Worker", 2, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, "\"managedBy\":\"kueue.x-k8s.io/multikueue\"", NULL, NULL);
	for (size_t m = 0; m < 2; m++) {
		tfjob_plan *plan = pu_plan(job, NULL, NULL, both[m], T0, 0);
		ck_assert_uint_eq(tfjob_plan_action_count(plan), 0);
		ck_assert(!tfjob_plan_status_changed(plan));
		ck_assert_int_eq(pu_requeue(plan), -1);
		tfjob_plan_free(plan);
	}
	tfjob_job_free(job);
	job = pu_job(reps, "\"managedBy\":\"kubeflow.org/training-operator\"", NULL, NULL);
	tfjob_plan *plan = pu_plan(job, NULL, NULL, DOC, T0, 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, NULL), 2);
	tfjob_plan_free(plan);
	tfjob_job_free(job);
}
END_TEST

START_TEST(validation_failure)
{
	for (size_t m = 0; m < 2; m++) {
		tfjob_job *job = tu_parse("{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"job\","
		                          "\"namespace\":\"ns\"},\"spec\":{\"tfReplicaSpecs\":{\"Worker\":{\"template\":{\"spec\":"
		                          "{\"containers\":[{\"name\":\"tensorflow\"}]}}}}}}");
		tfjob_plan *plan = pu_plan(job, NULL, NULL, both[m], T0, 0);
		ck_assert_str_eq(pu_cond(plan, "Failed"), "True");
		ck_assert_str_eq(pu_cond_reason(plan, "Failed"), "TFJobFailedValidation");
		int e = pu_event(plan, "TFJobFailedValidation");
		ck_assert_int_ge(e, 0);
		ck_assert_int_eq(tfjob_plan_action_event_type(plan, (size_t)e), TFJOB_EVENT_WARNING);
		ck_assert_ptr_nonnull(strstr(tfjob_plan_action_message(plan, (size_t)e),
		                             "spec.tfReplicaSpecs[Worker].template.spec.containers[0].image"));
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, NULL), 0);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_SERVICE, NULL), 0);
		ck_assert_ptr_nonnull(pu_time(plan, "completionTime"));
		tfjob_plan_free(plan);
		tfjob_job_free(job);
	}
}
END_TEST

/* Past the library's replica limit: a validation failure like any other, not an error retried forever. */
START_TEST(validation_failure_replica_limit)
{
	for (size_t m = 0; m < 2; m++) {
		tfjob_job *job = tu_parse("{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"job\","
		                          "\"namespace\":\"ns\"},\"spec\":{\"tfReplicaSpecs\":{\"Worker\":{\"replicas\":100000000,"
		                          "\"template\":{\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"x\"}]}}}}}}");
		tfjob_plan *plan = pu_plan(job, NULL, NULL, both[m], T0, 0);
		ck_assert_str_eq(pu_cond(plan, "Failed"), "True");
		ck_assert_str_eq(pu_cond_reason(plan, "Failed"), "TFJobFailedValidation");
		int e = pu_event(plan, "TFJobFailedValidation");
		ck_assert_int_ge(e, 0);
		ck_assert_int_eq(tfjob_plan_action_event_type(plan, (size_t)e), TFJOB_EVENT_WARNING);
		ck_assert_ptr_nonnull(strstr(tfjob_plan_action_message(plan, (size_t)e),
		                             "spec.tfReplicaSpecs[Worker].replicas: Invalid value: 100000000: must be less "
		                             "than or equal to 100000"));
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, NULL), 0);
		tfjob_plan_free(plan);
		tfjob_job_free(job);
	}
}
END_TEST

/* Documented mode: the job's warnings (tfjob_job_warnings) as Warning events, once, with Created. */
START_TEST(warnings_recorded_once)
{
	static const char text[] =
		"{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"job\",\"namespace\":"
		"\"ns\"},\"spec\":{\"tfReplicaSpecs\":{\"Chief\":{\"replicas\":2,\"restartPolicy\":\"OnFailure\","
		"\"template\":{\"spec\":{\"restartPolicy\":\"Always\",\"containers\":[{\"name\":\"tensorflow\","
		"\"image\":\"x\"}]}}}}}%s}";
	char buf[1024];
	snprintf(buf, sizeof buf, text, "");
	tfjob_job *job = tu_parse(buf);
	tfjob_plan *plan = pu_plan(job, NULL, NULL, DOC, T0, 0);
	int e = pu_event(plan, "TemplateRestartPolicyIgnored");
	ck_assert_int_ge(e, 0);
	ck_assert_int_eq(tfjob_plan_action_event_type(plan, (size_t)e), TFJOB_EVENT_WARNING);
	ck_assert_ptr_nonnull(strstr(tfjob_plan_action_message(plan, (size_t)e),
	                             "spec.tfReplicaSpecs[Chief].template.spec.restartPolicy: restartPolicy Always"));
	e = pu_event(plan, "MultipleChiefReplicas");
	ck_assert_int_ge(e, 0);
	ck_assert_ptr_nonnull(strstr(tfjob_plan_action_message(plan, (size_t)e), "spec.tfReplicaSpecs[Chief].replicas: "));
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, NULL), 2);
	tfjob_plan_free(plan);
	/* v1.9 has no such events */
	plan = pu_plan(job, NULL, NULL, V19, T0, 0);
	ck_assert_int_eq(pu_event(plan, "TemplateRestartPolicyIgnored"), -1);
	ck_assert_int_eq(pu_event(plan, "MultipleChiefReplicas"), -1);
	tfjob_plan_free(plan);
	tfjob_job_free(job);
	/* the next step (Created is there): none again */
	snprintf(buf, sizeof buf, text,
	         ",\"status\":{\"conditions\":[{\"type\":\"Created\",\"status\":\"True\",\"reason\":\"TFJobCreated\"}]}");
	job = tu_parse(buf);
	plan = pu_plan(job, NULL, NULL, DOC, T0, 0);
	ck_assert_int_eq(pu_event(plan, "TemplateRestartPolicyIgnored"), -1);
	ck_assert_int_eq(pu_event(plan, "MultipleChiefReplicas"), -1);
	tfjob_plan_free(plan);
	tfjob_job_free(job);
}
END_TEST

START_TEST(defect10_unknown_restart_policy)
{
	/* documented: rejected by validation; v1.9 accepts it and plans children */
	pu_replica reps[] = { { "Worker", 1, "Sometimes" }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, NULL);
	tfjob_plan *plan = pu_plan(job, NULL, NULL, DOC, T0, 0);
	ck_assert_str_eq(pu_cond_reason(plan, "Failed"), "TFJobFailedValidation");
	tfjob_plan_free(plan);
	plan = pu_plan(job, NULL, NULL, V19, T0, 0);
	ck_assert_ptr_null(pu_cond(plan, "Failed"));
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, NULL), 1);
	tfjob_plan_free(plan);
	tfjob_job_free(job);
}
END_TEST

START_TEST(job_being_deleted)
{
	tfjob_job *job = tu_parse("{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"job\","
	                          "\"deletionTimestamp\":\"2024-01-01T00:00:00Z\"},\"spec\":{\"tfReplicaSpecs\":{\"Worker\":"
	                          "{\"template\":{\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"x\"}]}}}}}}");
	tfjob_plan *plan = pu_plan(job, NULL, NULL, DOC, T0, 0);
	ck_assert_uint_eq(tfjob_plan_action_count(plan), 0);
	ck_assert(!tfjob_plan_status_changed(plan));
	tfjob_plan_free(plan);
	tfjob_job_free(job);
}
END_TEST

/* ---- new job, Created, creation of children ---- */

START_TEST(new_job_created_condition_and_children)
{
	tfjob_compat compat = both[_i];
	pu_replica reps[] = { { "PS", 1, NULL }, { "Worker", 2, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, NULL);
	tfjob_plan *plan = pu_plan(job, NULL, NULL, compat, T0, 0);
	ck_assert_str_eq(pu_cond(plan, "Created"), "True");
	ck_assert_str_eq(pu_cond_reason(plan, "Created"), "TFJobCreated");
	json_t *st = pu_status(plan);
	json_t *c0 = json_array_get(json_object_get(st, "conditions"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(c0, "message")), "TFJob job is created.");
	ck_assert_str_eq(json_string_value(json_object_get(c0, "lastTransitionTime")), "2024-01-01T00:00:00Z");
	ck_assert_str_eq(json_string_value(json_object_get(st, "startTime")), "2024-01-01T00:00:00Z");
	json_decref(st);
	ck_assert(tfjob_plan_status_changed(plan));
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, NULL), 3);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_SERVICE, NULL), 3);
	/* the order: per type (ps, worker), pods then services */
	ck_assert_str_eq(tfjob_plan_action_name(plan, 0), "job-ps-0");
	ck_assert_int_eq(tfjob_plan_action_kind(plan, 0), TFJOB_OBJECT_POD);
	ck_assert_int_eq(tfjob_plan_action_kind(plan, 1), TFJOB_OBJECT_SERVICE);
	ck_assert_str_eq(tfjob_plan_action_name(plan, 2), "job-worker-0");
	char *obj = NULL;
	ck_assert_int_eq(tfjob_plan_action_object_json(&obj, plan, 2, 0, NULL), 0);
	json_t *pod = json_loads(obj, 0, NULL);
	tfjob_free(obj);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(pod, "metadata"), "name")), "job-worker-0");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(pod, "metadata"), "labels"),
	                                                   "training.kubeflow.org/replica-index")), "0");
	json_decref(pod);
	ck_assert_int_ne(tfjob_plan_action_object_json(&obj, plan, 1000, 0, NULL), 0);
	tfjob_plan_free(plan);
	tfjob_job_free(job);
}
END_TEST

START_TEST(template_restart_policy_warning)
{
	tfjob_job *job = tu_parse("{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"job\"},"
	                          "\"spec\":{\"tfReplicaSpecs\":{\"Worker\":{\"template\":{\"spec\":{\"restartPolicy\":\"Always\","
	                          "\"containers\":[{\"name\":\"tensorflow\",\"image\":\"x\"}]}}}}}}");
	tfjob_plan *plan = pu_plan(job, NULL, NULL, DOC, T0, 0);
	int e = pu_event(plan, "SetPodTemplateRestartPolicy");
	ck_assert_int_ge(e, 0);
	ck_assert_int_eq(tfjob_plan_action_event_type(plan, (size_t)e), TFJOB_EVENT_WARNING);
	tfjob_plan_free(plan);
	tfjob_job_free(job);
}
END_TEST

/* With gang scheduling, a template naming another scheduler gives v1.9's Warning on every pod created
   (semantics-diff, gang comparison); the template's scheduler is kept. */
static int scheduler_warnings(const char *sched_in_template, tfjob_gang_scheduler gang, const char *gang_name,
                              tfjob_compat compat)
{
	char text[1024];
	snprintf(text, sizeof text,
	         "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"job\"},"
	         "\"spec\":{\"tfReplicaSpecs\":{\"Worker\":{\"replicas\":2,\"template\":{\"spec\":{"
	         "\"containers\":[{\"name\":\"tensorflow\",\"image\":\"x\"}]}}},"
	         "\"PS\":{\"replicas\":1,\"template\":{\"spec\":{\"schedulerName\":\"%s\","
	         "\"containers\":[{\"name\":\"tensorflow\",\"image\":\"x\"}]}}}}}}",
	         sched_in_template);
	tfjob_job *job = tu_parse(text);
	tfjob_render_options ro = TFJOB_RENDER_OPTIONS_INIT;
	ro.gang_scheduler = gang;
	ro.scheduler_name = gang_name;
	tfjob_plan_options po = TFJOB_PLAN_OPTIONS_INIT;
	po.compat = compat;
	po.now = T0;
	po.render = &ro;
	po.pod_group_json = "{\"metadata\":{\"name\":\"job\"},\"status\":{\"phase\":\"Running\"}}"; /* volcano: scheduled */
	tfjob_plan *plan = NULL;
	ck_assert_int_eq(tfjob_plan_new(&plan, job, NULL, NULL, &po, NULL), 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, NULL), 3);
	int n = pu_actions(plan, TFJOB_ACTION_EVENT, TFJOB_OBJECT_NONE, "SetPodTemplateSchedulerName");
	int e = pu_event(plan, "SetPodTemplateSchedulerName");
	if (e >= 0)
		ck_assert_int_eq(tfjob_plan_action_event_type(plan, (size_t)e), TFJOB_EVENT_WARNING);
	tfjob_plan_free(plan);
	tfjob_job_free(job);
	return n;
}

START_TEST(gang_template_scheduler_warning)
{
	for (size_t m = 0; m < 2; m++) {
		ck_assert_int_eq(scheduler_warnings("other", TFJOB_GANG_VOLCANO, NULL, both[m]), 3);
		ck_assert_int_eq(scheduler_warnings("other", TFJOB_GANG_SCHEDULER_PLUGINS, NULL, both[m]), 3);
		ck_assert_int_eq(scheduler_warnings("other", TFJOB_GANG_NONE, NULL, both[m]), 0);
		ck_assert_int_eq(scheduler_warnings("volcano", TFJOB_GANG_VOLCANO, NULL, both[m]), 0);
		ck_assert_int_eq(scheduler_warnings("scheduler-plugins-scheduler", TFJOB_GANG_SCHEDULER_PLUGINS, NULL, both[m]), 0);
		ck_assert_int_eq(scheduler_warnings("my-gang", TFJOB_GANG_SCHEDULER_PLUGINS, "my-gang", both[m]), 0);
		ck_assert_int_eq(scheduler_warnings("scheduler-plugins-scheduler", TFJOB_GANG_SCHEDULER_PLUGINS, "my-gang", both[m]), 3);
		ck_assert_int_eq(scheduler_warnings("", TFJOB_GANG_VOLCANO, NULL, both[m]), 0);
	}
}
END_TEST

START_TEST(steady_state_is_quiet)
{
	pu_replica reps[] = { { "Worker", 2, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, NULL);
	pu_pod pods[] = { { "Worker", 0, "Running", -1, 0, false }, { "Worker", 1, "Running", -1, 0, false } };
	char *pj = pu_pods(pods, 2), *sj = pu_services_for(reps);
	for (size_t m = 0; m < 2; m++) {
		tfjob_plan *plan = pu_plan(job, pj, sj, both[m], T0, 0);
		ck_assert_str_eq(pu_cond(plan, "Running"), "True");
		ck_assert_str_eq(pu_cond_reason(plan, "Running"), "TFJobRunning");
		char *st = NULL;
		ck_assert_int_eq(tfjob_plan_status_json(&st, plan, 0, NULL), 0);
		tfjob_plan_free(plan);
		/* feed the status back: nothing to do, nothing changes */
		tfjob_job *again = pu_job(reps, NULL, NULL, st);
		tfjob_free(st);
		plan = pu_plan(again, pj, sj, both[m], T0 + 30, 0);
		ck_assert_uint_eq(tfjob_plan_action_count(plan), 0);
		ck_assert(!tfjob_plan_status_changed(plan));
		tfjob_plan_free(plan);
		tfjob_job_free(again);
	}
	free(pj);
	free(sj);
	tfjob_job_free(job);
}
END_TEST

/* ---- grouping ---- */

START_TEST(scale_down_and_missing_index)
{
	pu_replica reps[] = { { "Worker", 2, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, NULL);
	pu_pod pods[] = { { "Worker", 0, "Running", -1, 0, false }, { "Worker", 3, "Running", -1, 0, false } };
	char *pj = pu_pods(pods, 2);
	pu_replica svcs[] = { { "Worker", 4, NULL }, { NULL, 0, NULL } };
	char *sj = pu_services_for(svcs);
	tfjob_plan *plan = pu_plan(job, pj, sj, DOC, T0, 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, "job-worker-1"), 1);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, NULL), 1);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, "job-worker-3"), 1);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_SERVICE, "job-worker-2"), 1);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_SERVICE, "job-worker-3"), 1);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_SERVICE, NULL), 0);
	/* v1.9 counts the pod being scaled away */
	ck_assert_int_eq(pu_count(plan, "Worker", "active"), 2);
	tfjob_plan_free(plan);
	/* v1.9 also creates the gap below the highest observed index (index 2) */
	plan = pu_plan(job, pj, sj, V19, T0, 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, NULL), 2);
	tfjob_plan_free(plan);
	free(pj);
	free(sj);
	tfjob_job_free(job);
}
END_TEST

START_TEST(other_jobs_children_are_ignored)
{
	pu_replica reps[] = { { "Worker", 1, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, NULL);
	const char *pods = "[{\"metadata\":{\"name\":\"other-worker-0\",\"labels\":{\"training.kubeflow.org/job-name\":\"other\","
	                   "\"training.kubeflow.org/replica-type\":\"worker\",\"training.kubeflow.org/replica-index\":\"0\"}},"
	                   "\"status\":{\"phase\":\"Running\"}}]";
	tfjob_plan *plan = pu_plan(job, pods, NULL, DOC, T0, 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, "job-worker-0"), 1);
	ck_assert_int_eq(pu_count(plan, "Worker", "active"), 0);
	tfjob_plan_free(plan);
	tfjob_job_free(job);
}
END_TEST

START_TEST(too_many_pods_for_an_index)
{
	pu_replica reps[] = { { "Worker", 1, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, NULL);
	pu_pod pods[] = { { "Worker", 0, "Running", -1, 0, false }, { "Worker", 0, "Running", -1, 0, false } };
	char *pj = pu_pods(pods, 2);
	tfjob_plan *plan = pu_plan(job, pj, NULL, DOC, T0, 0);
	ck_assert_int_ge(pu_event(plan, "TooManyPods"), 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, NULL), 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, NULL), 0);
	ck_assert_int_eq(pu_count(plan, "Worker", "active"), 0);
	tfjob_plan_free(plan);
	free(pj);
	tfjob_job_free(job);
}
END_TEST

START_TEST(bad_labels_warn)
{
	pu_replica reps[] = { { "Worker", 1, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, NULL);
	const char *pods =
		"[{\"metadata\":{\"name\":\"a\"," PU_OWNED "\"labels\":{" PU_JOB_LABELS "\"training.kubeflow.org/replica-type\":\"worker\","
		"\"training.kubeflow.org/replica-index\":\"x1\"}},\"status\":{\"phase\":\"Running\"}},"
		"{\"metadata\":{\"name\":\"b\"," PU_OWNED "\"labels\":{" PU_JOB_LABELS "\"training.kubeflow.org/replica-type\":\"worker\","
		"\"training.kubeflow.org/replica-index\":\"-1\"}}},"
		"{\"metadata\":{\"name\":\"c\"," PU_OWNED "\"labels\":{" PU_JOB_LABELS "\"training.kubeflow.org/replica-type\":\"worker\"}}},"
		"{\"metadata\":{\"name\":\"d\"," PU_OWNED "\"labels\":{" PU_JOB_LABELS "\"x\":\"y\"}}},"
		"{\"metadata\":{\"name\":\"e\"," PU_OWNED "\"labels\":{" PU_JOB_LABELS "\"training.kubeflow.org/replica-type\":\"worker\","
		"\"training.kubeflow.org/replica-index\":\"99999999999999999999\"}}},"
		"{\"metadata\":{" PU_OWNED "\"labels\":{" PU_JOB_LABELS "\"x\":\"y\"}}},"
		"{\"kind\":\"Pod\"}]";
	for (size_t m = 0; m < 2; m++) {
		tfjob_plan *plan = pu_plan(job, pods,
		                           "{\"kind\":\"ServiceList\",\"items\":[{\"metadata\":{" PU_OWNED "\"labels\":{" PU_JOB_LABELS
		                           "\"x\":\"y\"}}}]}",
		                           both[m], T0, 0);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_EVENT, TFJOB_OBJECT_NONE, "InvalidReplicaIndex"), 4);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_EVENT, TFJOB_OBJECT_NONE, "InvalidReplicaType"), 3);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, "job-worker-0"), 1);
		tfjob_plan_free(plan);
	}
	tfjob_job_free(job);
}
END_TEST

START_TEST(bad_inputs)
{
	pu_replica reps[] = { { "Worker", 1, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, NULL);
	tfjob_plan_options opts = TFJOB_PLAN_OPTIONS_INIT;
	tfjob_plan *plan = NULL;
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_plan_new(&plan, job, "[{\"a\":", NULL, &opts, &err), TFJOB_EPARSE);
	ck_assert_ptr_null(plan);
	tfjob_error_free(err);
	err = NULL;
	ck_assert_int_eq(tfjob_plan_new(&plan, job, "[1, 2]", NULL, &opts, &err), TFJOB_ESCHEMA);
	tfjob_error_free(err);
	err = NULL;
	ck_assert_int_eq(tfjob_plan_new(&plan, job, NULL, "[\"svc\"]", &opts, &err), TFJOB_ESCHEMA);
	tfjob_error_free(err);
	ck_assert_int_eq(tfjob_plan_new(&plan, job, "[{\"metadata\":3}]", NULL, &opts, NULL), TFJOB_ESCHEMA);
	ck_assert_int_eq(tfjob_plan_new(NULL, job, NULL, NULL, &opts, NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_plan_new(&plan, NULL, NULL, NULL, &opts, NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_plan_new(&plan, job, NULL, NULL, NULL, NULL), TFJOB_EINVAL);
	opts.version = 99;
	ck_assert_int_eq(tfjob_plan_new(&plan, job, NULL, NULL, &opts, NULL), TFJOB_EVERSION);
	opts.version = TFJOB_PLAN_OPTIONS_VERSION;
	opts.compat = (tfjob_compat)7;
	ck_assert_int_eq(tfjob_plan_new(&plan, job, NULL, NULL, &opts, NULL), TFJOB_EINVAL);
	/* now: the years 0000-9999 an RFC 3339 status time can hold */
	opts.compat = TFJOB_COMPAT_DOCUMENTED;
	static const int64_t bad_now[] = { INT64_MIN, -62167219201, 253402300800, INT64_MAX };
	for (size_t i = 0; i < TFJOB_ARRAY_LEN_T(bad_now); i++) {
		opts.now = bad_now[i];
		ck_assert_int_eq(tfjob_plan_new(&plan, job, NULL, NULL, &opts, NULL), TFJOB_EINVAL);
	}
	static const int64_t edge_now[] = { -62167219200, 253402300799 };
	for (size_t i = 0; i < TFJOB_ARRAY_LEN_T(edge_now); i++) {
		opts.now = edge_now[i];
		ck_assert_int_eq(tfjob_plan_new(&plan, job, NULL, NULL, &opts, NULL), 0);
		ck_assert_int_eq(tfjob_time_parse(&opts.now, pu_time(plan, "startTime")), 0);
		ck_assert_int_eq(opts.now, edge_now[i]);
		tfjob_plan_free(plan);
		plan = NULL;
	}
	tfjob_job_free(job);

	/* a status with wrong types is an error naming the field */
	static const char *const bad_status[] = {
		"{\"conditions\":{}}", "{\"conditions\":[3]}", "{\"conditions\":[{\"type\":1}]}",
		"{\"replicaStatuses\":[]}", "{\"replicaStatuses\":{\"Worker\":{\"active\":\"1\"}}}",
		"{\"startTime\":\"yesterday\"}", "{\"completionTime\":5}", "[]",
	};
	for (size_t i = 0; i < TFJOB_ARRAY_LEN_T(bad_status); i++) {
		job = pu_job(reps, NULL, NULL, bad_status[i]);
		err = NULL;
		opts.compat = DOC;
		ck_assert_msg(tfjob_plan_new(&plan, job, NULL, NULL, &opts, &err) == TFJOB_ESCHEMA, "%s", bad_status[i]);
		ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "status"));
		tfjob_error_free(err);
		tfjob_job_free(job);
	}

	/* a pod without status, labels of the wrong type, containerStatuses of the wrong type */
	job = pu_job(reps, NULL, NULL, NULL);
	plan = pu_plan(job,
	               "[{\"metadata\":{\"name\":\"p\"," PU_OWNED "\"labels\":{" PU_JOB_LABELS "\"training.kubeflow.org/replica-type\":\"worker\","
	               "\"training.kubeflow.org/replica-index\":\"0\"}},\"status\":{\"phase\":\"Failed\",\"containerStatuses\":3}},"
	               "{\"metadata\":{\"name\":\"q\",\"labels\":7}}]",
	               NULL, DOC, T0, 0);
	ck_assert_str_eq(pu_cond(plan, "Failed"), "True");
	tfjob_plan_free(plan);
	tfjob_job_free(job);
	ck_assert_int_eq(tfjob_plan_options_init(&opts, 0), TFJOB_EVERSION);
	ck_assert_int_eq(tfjob_plan_options_init(NULL, 1), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_plan_options_init(&opts, TFJOB_PLAN_OPTIONS_VERSION), 0);
	ck_assert_int_eq(opts.compat, DOC);
	ck_assert_uint_eq(tfjob_plan_action_count(NULL), 0);
	ck_assert_ptr_null(tfjob_plan_action_name(NULL, 0));
	tfjob_plan_free(NULL);
}
END_TEST

/* ---- conditions state machine ---- */

START_TEST(condition_rules)
{
	pu_replica reps[] = { { "Worker", 1, NULL }, { NULL, 0, NULL } };
	pu_pod pods[] = { { "Worker", 0, "Running", -1, 0, false } };
	char *pj = pu_pods(pods, 1);
	/* same status, new reason keeps lastTransitionTime; Running removes Restarting */
	tfjob_job *job = pu_job(reps, NULL, NULL,
	                        "{\"conditions\":[{\"type\":\"Created\",\"status\":\"True\",\"reason\":\"TFJobCreated\"},"
	                        "{\"type\":\"Running\",\"status\":\"True\",\"reason\":\"Old\",\"lastTransitionTime\":"
	                        "\"2023-01-01T00:00:00Z\",\"lastUpdateTime\":\"2023-01-01T00:00:00Z\"},"
	                        "{\"type\":\"Restarting\",\"status\":\"True\",\"reason\":\"TFJobRestarting\"}],"
	                        "\"startTime\":\"2024-01-01T00:00:00Z\"}");
	tfjob_plan *plan = pu_plan(job, pj, NULL, DOC, T0 + 5, 0);
	json_t *st = pu_status(plan);
	json_t *conds = json_object_get(st, "conditions");
	ck_assert_uint_eq(json_array_size(conds), 2);
	json_t *run = json_array_get(conds, 1);
	ck_assert_str_eq(json_string_value(json_object_get(run, "reason")), "TFJobRunning");
	ck_assert_str_eq(json_string_value(json_object_get(run, "lastTransitionTime")), "2023-01-01T00:00:00Z");
	ck_assert_str_eq(json_string_value(json_object_get(run, "lastUpdateTime")), "2024-01-01T00:00:05Z");
	json_decref(st);
	tfjob_plan_free(plan);
	tfjob_job_free(job);

	/* once Failed is True nothing changes but cleanup */
	job = pu_job(reps, "\"cleanPodPolicy\":\"None\"", NULL,
	             "{\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\",\"reason\":\"TFJobFailed\"}],"
	             "\"completionTime\":\"2024-01-01T00:00:00Z\",\"replicaStatuses\":{\"Worker\":{\"active\":1}}}");
	for (size_t m = 0; m < 2; m++) {
		plan = pu_plan(job, pj, NULL, both[m], T0 + 5, 0);
		ck_assert(!tfjob_plan_status_changed(plan));
		ck_assert_uint_eq(tfjob_plan_action_count(plan), 0);
		ck_assert_ptr_null(pu_cond(plan, "Running"));
		tfjob_plan_free(plan);
	}
	tfjob_job_free(job);
	free(pj);
}
END_TEST

/* ---- the defects, both modes ---- */

START_TEST(defect1_chief_succeeded_workers_failed)
{
	pu_replica reps[] = { { "Chief", 1, NULL }, { "Worker", 2, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, "{\"startTime\":\"2024-01-01T00:00:00Z\"}");
	pu_pod pods[] = { { "Chief", 0, "Succeeded", 0, 0, false }, { "Worker", 0, "Failed", 1, 0, false },
		          { "Worker", 1, "Succeeded", 0, 0, false } };
	char *pj = pu_pods(pods, 3);
	tfjob_plan *plan = pu_plan(job, pj, NULL, DOC, T0, 0);
	ck_assert_str_eq(pu_cond(plan, "Succeeded"), "True");
	ck_assert_ptr_null(pu_cond(plan, "Failed"));
	ck_assert_int_eq(pu_event(plan, "TFJobFailed"), -1);
	tfjob_plan_free(plan);
	plan = pu_plan(job, pj, NULL, V19, T0, 0);
	ck_assert_str_eq(pu_cond(plan, "Succeeded"), "True");
	ck_assert_str_eq(pu_cond(plan, "Failed"), "True");
	tfjob_plan_free(plan);
	free(pj);
	tfjob_job_free(job);
}
END_TEST

START_TEST(defect1_worker0_succeeded_worker1_failed)
{
	pu_replica reps[] = { { "Worker", 2, "ExitCode" }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, "{\"startTime\":\"2024-01-01T00:00:00Z\"}");
	pu_pod pods[] = { { "Worker", 0, "Succeeded", 0, 0, false }, { "Worker", 1, "Failed", 1, 0, false } };
	char *pj = pu_pods(pods, 2);
	tfjob_plan *plan = pu_plan(job, pj, NULL, DOC, T0, 0);
	ck_assert_str_eq(pu_cond(plan, "Succeeded"), "True");
	ck_assert_ptr_null(pu_cond(plan, "Failed"));
	tfjob_plan_free(plan);
	/* v1.9: the permanent exit code fails the job first; Succeeded is blocked but its event is recorded */
	plan = pu_plan(job, pj, NULL, V19, T0, 0);
	ck_assert_str_eq(pu_cond(plan, "Failed"), "True");
	ck_assert_ptr_null(pu_cond(plan, "Succeeded"));
	ck_assert_int_ge(pu_event(plan, "TFJobSucceeded"), 0);
	tfjob_plan_free(plan);
	free(pj);
	tfjob_job_free(job);
}
END_TEST

START_TEST(defect2_3_restart_then_permanent_failure)
{
	pu_replica reps[] = { { "Worker", 3, "ExitCode" }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL,
	                        "{\"conditions\":[{\"type\":\"Running\",\"status\":\"True\",\"reason\":\"TFJobRunning\"}],"
	                        "\"startTime\":\"2024-01-01T00:00:00Z\"}");
	pu_pod pods[] = { { "Worker", 0, "Running", -1, 0, false }, { "Worker", 1, "Failed", 137, 0, false },
		          { "Worker", 2, "Failed", 1, 0, false } };
	char *pj = pu_pods(pods, 3);
	tfjob_plan *plan = pu_plan(job, pj, NULL, DOC, T0 + 7, 0);
	ck_assert_str_eq(pu_cond(plan, "Failed"), "True");
	ck_assert_str_eq(pu_cond(plan, "Restarting"), "False");
	ck_assert_str_eq(pu_time(plan, "completionTime"), "2024-01-01T00:00:07Z");
	tfjob_plan_free(plan);
	plan = pu_plan(job, pj, NULL, V19, T0 + 7, 0);
	ck_assert_str_eq(pu_cond(plan, "Failed"), "True");
	ck_assert_str_eq(pu_cond(plan, "Restarting"), "True");
	ck_assert_ptr_null(pu_time(plan, "completionTime"));
	tfjob_plan_free(plan);
	free(pj);
	tfjob_job_free(job);
}
END_TEST

START_TEST(defect3_dynamic_worker_permanent_failure)
{
	pu_replica reps[] = { { "PS", 1, NULL }, { "Worker", 2, "ExitCode" }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, "\"enableDynamicWorker\":true", "{\"startTime\":\"2024-01-01T00:00:00Z\"}");
	pu_pod pods[] = { { "PS", 0, "Running", -1, 0, false }, { "Worker", 0, "Running", -1, 0, false },
		          { "Worker", 1, "Failed", 2, 0, false } };
	char *pj = pu_pods(pods, 3);
	tfjob_plan *plan = pu_plan(job, pj, NULL, DOC, T0, 0);
	ck_assert_str_eq(pu_cond(plan, "Failed"), "True");
	ck_assert_ptr_nonnull(pu_time(plan, "completionTime"));
	tfjob_plan_free(plan);
	plan = pu_plan(job, pj, NULL, V19, T0, 0);
	ck_assert_str_eq(pu_cond(plan, "Failed"), "True");
	ck_assert_ptr_null(pu_time(plan, "completionTime"));
	tfjob_plan_free(plan);
	free(pj);
	tfjob_job_free(job);

	/* a Never worker failing with enableDynamicWorker is tolerated in both modes */
	pu_replica reps2[] = { { "PS", 1, NULL }, { "Worker", 2, NULL }, { NULL, 0, NULL } };
	job = pu_job(reps2, NULL, "\"enableDynamicWorker\":true", "{\"startTime\":\"2024-01-01T00:00:00Z\"}");
	pu_pod pods2[] = { { "PS", 0, "Running", -1, 0, false }, { "Worker", 0, "Running", -1, 0, false },
		           { "Worker", 1, "Failed", 2, 0, false } };
	pj = pu_pods(pods2, 3);
	for (size_t m = 0; m < 2; m++) {
		plan = pu_plan(job, pj, NULL, both[m], T0, 0);
		ck_assert_ptr_null(pu_cond(plan, "Failed"));
		ck_assert_str_eq(pu_cond(plan, "Running"), "True");
		tfjob_plan_free(plan);
	}
	free(pj);
	tfjob_job_free(job);
}
END_TEST

START_TEST(defect4_ps_restart_while_workers_run)
{
	pu_replica reps[] = { { "PS", 1, "OnFailure" }, { "Worker", 2, "OnFailure" }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, "{\"startTime\":\"2024-01-01T00:00:00Z\"}");
	pu_pod pods[] = { { "PS", 0, "Failed", 1, 0, false }, { "Worker", 0, "Running", -1, 0, false },
		          { "Worker", 1, "Running", -1, 0, false } };
	char *pj = pu_pods(pods, 3);
	tfjob_plan *plan = pu_plan(job, pj, NULL, DOC, T0, 0);
	ck_assert_str_eq(pu_cond(plan, "Restarting"), "True");
	ck_assert_ptr_null(pu_cond(plan, "Running"));
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, "job-ps-0"), 1);
	tfjob_plan_free(plan);
	plan = pu_plan(job, pj, NULL, V19, T0, 0);
	ck_assert_ptr_null(pu_cond(plan, "Restarting"));
	ck_assert_str_eq(pu_cond(plan, "Running"), "True");
	tfjob_plan_free(plan);
	free(pj);
	tfjob_job_free(job);
}
END_TEST

START_TEST(defect6_finished_and_suspended)
{
	pu_replica reps[] = { { "Worker", 1, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, "\"suspend\":true,\"ttlSecondsAfterFinished\":10", NULL,
	                        "{\"conditions\":[{\"type\":\"Succeeded\",\"status\":\"True\"}],"
	                        "\"completionTime\":\"2024-01-01T00:00:00Z\"}");
	tfjob_plan *plan = pu_plan(job, NULL, NULL, DOC, T0 + 20, 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_TFJOB, "job"), 1);
	ck_assert_int_eq(pu_requeue(plan), -1);
	tfjob_plan_free(plan);
	plan = pu_plan(job, NULL, NULL, V19, T0 + 20, 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_TFJOB, NULL), 0);
	ck_assert_int_eq(pu_requeue(plan), 0);
	ck_assert_ptr_null(pu_cond(plan, "Suspended"));
	tfjob_plan_free(plan);
	tfjob_job_free(job);
}
END_TEST

START_TEST(defect7_zero_replicas)
{
	pu_replica reps[] = { { "PS", 0, NULL }, { "Worker", 2, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, NULL);
	tfjob_plan *plan = pu_plan(job, NULL, NULL, DOC, T0, 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, "job-ps-0"), 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_SERVICE, "job-ps-0"), 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, NULL), 2);
	tfjob_plan_free(plan);
	plan = pu_plan(job, NULL, NULL, V19, T0, 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, "job-ps-0"), 1);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_SERVICE, "job-ps-0"), 1);
	tfjob_plan_free(plan);
	/* ... and deletes it the next step */
	pu_pod pods[] = { { "PS", 0, "Pending", -1, 0, false } };
	char *pj = pu_pods(pods, 1);
	plan = pu_plan(job, pj, NULL, V19, T0, 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, "job-ps-0"), 1);
	tfjob_plan_free(plan);
	free(pj);
	tfjob_job_free(job);
}
END_TEST

/* The TF_CONFIG env of the created pod `name` (NULL when it has none). Caller frees. */
static char *created_tf_config(const tfjob_plan *plan, const char *name)
{
	for (size_t i = 0; i < tfjob_plan_action_count(plan); i++) {
		if (tfjob_plan_action_type(plan, i) != TFJOB_ACTION_CREATE ||
		    tfjob_plan_action_kind(plan, i) != TFJOB_OBJECT_POD || strcmp(tfjob_plan_action_name(plan, i), name))
			continue;
		char *text = NULL;
		ck_assert_int_eq(tfjob_plan_action_object_json(&text, plan, i, 0, NULL), 0);
		json_t *pod = json_loads(text, 0, NULL);
		tfjob_free(text);
		json_t *env = json_object_get(json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0), "env");
		char *value = NULL;
		size_t k;
		json_t *e;
		json_array_foreach(env, k, e) {
			if (!strcmp(json_string_value(json_object_get(e, "name")), "TF_CONFIG"))
				value = strdup(json_string_value(json_object_get(e, "value")));
		}
		json_decref(pod);
		return value;
	}
	ck_abort_msg("no created pod %s", name);
	return NULL;
}

/* v1.9 writes the real spec's TF_CONFIG into pods it creates at or beyond replicas. */
START_TEST(defect7_compat_tf_config_of_extra_pods)
{
	pu_replica only_master[] = { { "Master", 0, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(only_master, NULL, NULL, NULL);
	tfjob_plan *plan = pu_plan(job, NULL, NULL, V19, T0, 0);
	char *cfg = created_tf_config(plan, "job-master-0");
	ck_assert_str_eq(cfg, "{\"cluster\":{\"master\":[]},\"task\":{\"type\":\"master\",\"index\":0},"
	                      "\"environment\":\"cloud\"}");
	free(cfg);
	tfjob_plan_free(plan);
	tfjob_job_free(job);

	/* A stray pod at index 1 of a one-worker job: the real job is not distributed, so no TF_CONFIG. */
	pu_replica one_worker[] = { { "Worker", 1, NULL }, { NULL, 0, NULL } };
	job = pu_job(one_worker, NULL, NULL, NULL);
	pu_pod pods[] = { { "Worker", 2, "Running", -1, 0, false } };
	char *pj = pu_pods(pods, 1);
	plan = pu_plan(job, pj, NULL, V19, T0, 0);
	ck_assert_ptr_null(created_tf_config(plan, "job-worker-1"));
	ck_assert_ptr_null(created_tf_config(plan, "job-worker-0"));
	tfjob_plan_free(plan);
	free(pj);
	tfjob_job_free(job);
}
END_TEST

/* ---- other rules ---- */

START_TEST(running_pod_being_deleted_counts_as_failed)
{
	pu_replica reps[] = { { "Worker", 2, "OnFailure" }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, "{\"conditions\":[{\"type\":\"Restarting\",\"status\":\"True\","
	                                          "\"reason\":\"TFJobRestarting\",\"message\":\"m\"}]}");
	pu_pod pods[] = { { "Worker", 0, "Running", -1, 0, true }, { "Worker", 1, "Running", -1, 0, false } };
	char *pj = pu_pods(pods, 2);
	tfjob_plan *plan = pu_plan(job, pj, NULL, DOC, T0, 0);
	ck_assert_int_eq(pu_count(plan, "Worker", "failed"), 1);
	ck_assert_int_eq(pu_count(plan, "Worker", "active"), 1);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, NULL), 0);
	/* Restarting holds, so the failure keeps the job restarting */
	ck_assert_str_eq(pu_cond(plan, "Restarting"), "True");
	ck_assert_ptr_null(pu_cond(plan, "Failed"));
	tfjob_plan_free(plan);
	free(pj);
	tfjob_job_free(job);
}
END_TEST

START_TEST(only_ps_never_drives_running)
{
	pu_replica reps[] = { { "PS", 2, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, NULL);
	pu_pod pods[] = { { "PS", 0, "Running", -1, 0, false }, { "PS", 1, "Succeeded", 0, 0, false } };
	char *pj = pu_pods(pods, 2);
	for (size_t m = 0; m < 2; m++) {
		tfjob_plan *plan = pu_plan(job, pj, NULL, both[m], T0, 0);
		ck_assert_ptr_null(pu_cond(plan, "Running"));
		ck_assert_ptr_null(pu_cond(plan, "Succeeded"));
		tfjob_plan_free(plan);
	}
	free(pj);
	tfjob_job_free(job);
}
END_TEST

START_TEST(success_messages_and_events)
{
	pu_replica reps[] = { { "Master", 1, NULL }, { "Worker", 1, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, NULL);
	pu_pod pods[] = { { "Master", 0, "Succeeded", 0, 0, false }, { "Worker", 0, "Running", -1, 0, false } };
	char *pj = pu_pods(pods, 2);
	tfjob_plan *plan = pu_plan(job, pj, NULL, DOC, T0, 0);
	int e = pu_event(plan, "TFJobSucceeded");
	ck_assert_int_ge(e, 0);
	ck_assert_int_eq(tfjob_plan_action_event_type(plan, (size_t)e), TFJOB_EVENT_NORMAL);
	ck_assert_str_eq(tfjob_plan_action_message(plan, (size_t)e), "TFJob ns/job successfully completed.");
	ck_assert_str_eq(pu_cond_reason(plan, "Succeeded"), "TFJobSucceeded");
	ck_assert_ptr_nonnull(pu_time(plan, "completionTime"));
	tfjob_plan_free(plan);
	free(pj);
	tfjob_job_free(job);
}
END_TEST

START_TEST(abnormal_pod_events)
{
	pu_replica reps[] = { { "Worker", 1, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, NULL);
	const char *pods =
		"[{\"metadata\":{\"name\":\"job-worker-0\"," PU_OWNED "\"labels\":{" PU_JOB_LABELS
		"\"training.kubeflow.org/replica-type\":\"worker\","
		"\"training.kubeflow.org/replica-index\":\"0\"}},\"status\":{\"phase\":\"Pending\",\"containerStatuses\":["
		"{\"name\":\"tensorflow\",\"state\":{\"waiting\":{\"reason\":\"ImagePullBackOff\",\"message\":\"no image\"}}}]}}]";
	tfjob_plan *plan = pu_plan(job, pods, NULL, DOC, T0, 0);
	int e = pu_event(plan, "ImagePullBackOff");
	ck_assert_int_ge(e, 0);
	ck_assert_str_eq(tfjob_plan_action_message(plan, (size_t)e),
	                 "Error pod job-worker-0 container tensorflow waiting message: no image");
	tfjob_plan_free(plan);
	tfjob_job_free(job);
}
END_TEST

/* The plan's JSON rebuilt from its accessors and dumped by jansson: the reference for its writers. */
static char *reference_plan_json(const tfjob_plan *plan, unsigned int flags)
{
	json_t *root = json_object(), *actions = json_array();
	for (size_t i = 0; i < tfjob_plan_action_count(plan); i++) {
		json_t *a = json_object();
		tfjob_action_type type = tfjob_plan_action_type(plan, i);
		json_object_set_new(a, "action", json_string(tfjob_action_type_name(type)));
		if (type == TFJOB_ACTION_EVENT) {
			json_object_set_new(a, "type", json_string(tfjob_event_type_name(tfjob_plan_action_event_type(plan, i))));
			json_object_set_new(a, "reason", json_string(tfjob_plan_action_reason(plan, i)));
			json_object_set_new(a, "message", json_string(tfjob_plan_action_message(plan, i)));
		} else {
			json_object_set_new(a, "kind", json_string(tfjob_object_kind_name(tfjob_plan_action_kind(plan, i))));
			json_object_set_new(a, "name", json_string(tfjob_plan_action_name(plan, i)));
		}
		if (type == TFJOB_ACTION_CREATE) {
			char *obj = NULL;
			ck_assert_int_eq(tfjob_plan_action_object_json(&obj, plan, i, 0, NULL), 0);
			json_object_set_new(a, "object", json_loads(obj, 0, NULL));
			tfjob_free(obj);
		}
		json_array_append_new(actions, a);
	}
	char *st = NULL;
	ck_assert_int_eq(tfjob_plan_status_json(&st, plan, 0, NULL), 0);
	int64_t after = 0;
	json_object_set_new(root, "actions", actions);
	json_object_set_new(root, "status", json_loads(st, 0, NULL));
	json_object_set_new(root, "statusChanged", json_boolean(tfjob_plan_status_changed(plan)));
	json_object_set_new(root, "requeueAfterSeconds",
	                    tfjob_plan_requeue_after(&after, plan) == 0 ? json_integer(after) : json_null());
	tfjob_free(st);
	size_t jflags = (flags & TFJOB_JSON_PRETTY) ? JSON_INDENT(2) : JSON_COMPACT;
	if (flags & TFJOB_JSON_SORT_KEYS)
		jflags |= JSON_SORT_KEYS;
	char *text = json_dumps(root, jflags);
	json_decref(root);
	return text;
}

START_TEST(plan_json_streamed_and_lazy_creates)
{
	/* a new job of 200 workers: 404 creates, each pod with the whole TF_CONFIG, rendered when read */
	pu_replica reps[] = { { "PS", 2, "OnFailure" }, { "Worker", 200, "ExitCode" }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, "\"activeDeadlineSeconds\":1000", NULL, NULL);
	tfjob_plan *plan = pu_plan(job, NULL, NULL, DOC, T0, 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, NULL), 202);
	static const unsigned int flag_sets[] = { TFJOB_JSON_COMPACT, TFJOB_JSON_PRETTY, TFJOB_JSON_SORT_KEYS,
		                                  TFJOB_JSON_PRETTY | TFJOB_JSON_SORT_KEYS };
	for (size_t f = 0; f < 4; f++) {
		char *ref = reference_plan_json(plan, flag_sets[f]), *whole = NULL;
		tu_collected got = { 0 };
		ck_assert_int_eq(tfjob_plan_write_json(plan, flag_sets[f], tu_collect, &got, NULL), 0);
		ck_assert_int_eq(tfjob_plan_to_json(&whole, plan, flag_sets[f], NULL), 0);
		ck_assert_str_eq(got.text, ref);
		ck_assert_str_eq(whole, ref);
		ck_assert_uint_gt(got.pieces, 10);
		free(ref);
		free(got.text);
		tfjob_free(whole);
	}
	/* the objects rendered on demand are those of the renderer, name included */
	size_t n = tfjob_plan_action_count(plan);
	for (size_t i = 0; i < n; i++) {
		if (tfjob_plan_action_type(plan, i) != TFJOB_ACTION_CREATE)
			continue;
		char *obj = NULL, *direct = NULL;
		const char *name = tfjob_plan_action_name(plan, i);
		const char *type = strstr(name, "-ps-") ? "PS" : "Worker";
		int64_t index = strtoll(strrchr(name, '-') + 1, NULL, 10);
		tfjob_job *defaulted = NULL;
		ck_assert_int_eq(tfjob_job_clone(&defaulted, job, NULL), 0);
		ck_assert_int_eq(tfjob_job_apply_defaults(defaulted, NULL, NULL), 0);
		ck_assert_int_eq(tfjob_plan_action_object_json(&obj, plan, i, 0, NULL), 0);
		if (tfjob_plan_action_kind(plan, i) == TFJOB_OBJECT_POD)
			ck_assert_int_eq(tfjob_render_pod(&direct, defaulted, type, index, NULL, 0, NULL), 0);
		else
			ck_assert_int_eq(tfjob_render_service(&direct, defaulted, type, index, NULL, 0, NULL), 0);
		ck_assert_str_eq(obj, direct);
		tfjob_job_free(defaulted);
		tfjob_free(obj);
		tfjob_free(direct);
		if (i > 8 && i < n - 8)
			i += 37; /* a sample of the middle */
	}
	/* the plan does not depend on the job it was made from: free the job first */
	tfjob_job_free(job);
	tu_collected refused = { .refuse_at = 2 };
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_plan_write_json(plan, 0, tu_collect, &refused, &err), TFJOB_EIO);
	tfjob_error_free(err);
	free(refused.text);
	ck_assert_int_eq(tfjob_plan_write_json(plan, 0, NULL, NULL, NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_plan_write_json(NULL, 0, tu_collect, &refused, NULL), TFJOB_EINVAL);
	tfjob_plan_free(plan);
}
END_TEST

START_TEST(deterministic_and_json_shape)
{
	pu_replica reps[] = { { "PS", 1, "OnFailure" }, { "Worker", 2, "ExitCode" }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, "\"activeDeadlineSeconds\":1000", NULL, NULL);
	pu_pod pods[] = { { "PS", 0, "Running", -1, 0, false }, { "Worker", 1, "Failed", 137, 0, false } };
	char *pj = pu_pods(pods, 2);
	char *a = NULL, *b = NULL;
	tfjob_plan *p1 = pu_plan(job, pj, NULL, DOC, T0, 0), *p2 = pu_plan(job, pj, NULL, DOC, T0, 0);
	ck_assert_int_eq(tfjob_plan_to_json(&a, p1, 0, NULL), 0);
	ck_assert_int_eq(tfjob_plan_to_json(&b, p2, 0, NULL), 0);
	ck_assert_str_eq(a, b);
	json_t *v = json_loads(a, 0, NULL);
	ck_assert(json_is_array(json_object_get(v, "actions")));
	ck_assert(json_is_object(json_object_get(v, "status")));
	ck_assert(json_is_boolean(json_object_get(v, "statusChanged")));
	ck_assert_int_eq(json_integer_value(json_object_get(v, "requeueAfterSeconds")), 1000);
	size_t i;
	json_t *act;
	json_array_foreach(json_object_get(v, "actions"), i, act) {
		const char *kind = json_string_value(json_object_get(act, "action"));
		if (!strcmp(kind, "create"))
			ck_assert(json_is_object(json_object_get(act, "object")));
		else if (!strcmp(kind, "delete"))
			ck_assert_ptr_null(json_object_get(act, "object"));
		else
			ck_assert(json_is_string(json_object_get(act, "reason")));
	}
	json_decref(v);
	tfjob_free(a);
	tfjob_free(b);
	tfjob_plan_free(p1);
	tfjob_plan_free(p2);
	free(pj);
	tfjob_job_free(job);
	ck_assert_str_eq(tfjob_action_type_name(TFJOB_ACTION_CREATE), "create");
	ck_assert_str_eq(tfjob_action_type_name((tfjob_action_type)9), "unknown");
	ck_assert_str_eq(tfjob_object_kind_name(TFJOB_OBJECT_TFJOB), "TFJob");
	ck_assert_str_eq(tfjob_object_kind_name(TFJOB_OBJECT_NONE), "");
	ck_assert_str_eq(tfjob_event_type_name(TFJOB_EVENT_WARNING), "Warning");
}
END_TEST

START_TEST(time_parse_and_format)
{
	int64_t t;
	char buf[40];
	ck_assert_int_eq(tfjob_time_parse(&t, "2024-01-01T00:00:00Z"), 0);
	ck_assert_int_eq(t, T0);
	ck_assert_int_eq(tfjob_time_parse(&t, "2024-01-01T01:00:00.123456+01:00"), 0);
	ck_assert_int_eq(t, T0);
	ck_assert_int_eq(tfjob_time_parse(&t, "1969-12-31T23:59:59Z"), 0);
	ck_assert_int_eq(t, -1);
	ck_assert_str_eq(tfjob_time_format(buf, sizeof buf, -1), "1969-12-31T23:59:59Z");
	ck_assert_str_eq(tfjob_time_format(buf, sizeof buf, 951782400), "2000-02-29T00:00:00Z");
	ck_assert_int_eq(tfjob_time_parse(&t, "2023-02-29T00:00:00Z"), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_time_parse(&t, "2024-01-01 00:00"), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_time_parse(&t, "2024-01-01T00:00:00"), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_time_parse(&t, "2024-01-01T00:00:00Zx"), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_time_parse(NULL, "x"), TFJOB_EINVAL);
	for (int64_t s = -100000000; s < 4000000000; s += 12345677) {
		tfjob_time_format(buf, sizeof buf, s);
		ck_assert_int_eq(tfjob_time_parse(&t, buf), 0);
		ck_assert_int_eq(t, s);
	}
}
END_TEST

/* ---- the simulator ---- */

START_TEST(simulate_api)
{
	const char *scenario =
		"description: two workers\n"
		"job:\n"
		"  apiVersion: kubeflow.org/v1\n"
		"  kind: TFJob\n"
		"  metadata: {name: sim}\n"
		"  spec:\n"
		"    runPolicy: {ttlSecondsAfterFinished: 60}\n"
		"    tfReplicaSpecs:\n"
		"      Worker:\n"
		"        replicas: 2\n"
		"        restartPolicy: ExitCode\n"
		"        template: {spec: {containers: [{name: tensorflow, image: tf}]}}\n"
		"timeline:\n"
		"  - at: 5\n"
		"    pods: {worker-0: Running, worker-1: Running, worker-7: Running}\n"
		"  - at: 10\n"
		"    pods: {worker-1: {phase: Failed, exitCode: 143}}\n"
		"  - at: 20\n"
		"    pods: {worker-0: {phase: Succeeded, exitCode: 0}}\n";
	char *out = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_simulate(&out, scenario, strlen(scenario), NULL, &err);
	ck_assert_msg(rc == 0, "%s", tfjob_error_message(err));
	ck_assert_ptr_nonnull(strstr(out, "TFJobRestarting"));
	ck_assert_ptr_nonnull(strstr(out, "Succeeded   True"));
	ck_assert_ptr_nonnull(strstr(out, "delete TFJob sim"));
	ck_assert_ptr_nonnull(strstr(out, "+80"));
	ck_assert_ptr_nonnull(strstr(out, "no pod sim-worker-7"));
	tfjob_free(out);

	/* a requeue (activeDeadlineSeconds) beyond any time a scenario can reach is not followed */
	const char *far = "job:\n"
	                  "  apiVersion: kubeflow.org/v1\n"
	                  "  kind: TFJob\n"
	                  "  metadata: {name: far}\n"
	                  "  spec:\n"
	                  "    runPolicy: {activeDeadlineSeconds: 9223372036854775807}\n"
	                  "    tfReplicaSpecs: {Worker: {template: {spec: {containers: [{name: tensorflow, image: tf}]}}}}\n"
	                  "timeline: [{at: 5, pods: {worker-0: Running}}]\n";
	rc = tfjob_simulate(&out, far, strlen(far), NULL, &err);
	ck_assert_msg(rc == 0, "%s", tfjob_error_message(err));
	ck_assert_ptr_nonnull(strstr(out, "Simulated until: 2024-01-01T00:00:05Z"));
	ck_assert_ptr_null(strstr(out, "requeue"));
	tfjob_free(out);
	out = NULL;

	static const char *const bad[] = {
		"[]", "job: 3", "job: {apiVersion: kubeflow.org/v1, kind: TFJob}",
		"job: {apiVersion: kubeflow.org/v1, kind: TFJob, metadata: {name: a}}\ntimeline: 3",
		"job: {apiVersion: kubeflow.org/v1, kind: TFJob, metadata: {name: a}}\ntimeline: [{at: 5}, {at: 1}]",
		"job: {apiVersion: kubeflow.org/v1, kind: TFJob, metadata: {name: a}}\ncompat: nope",
		"job: {apiVersion: kubeflow.org/v1, kind: TFJob, metadata: {name: a}}\nstart: soon",
		"job: {apiVersion: v1, kind: Pod, metadata: {name: a}}", "{",
		/* times far enough to overflow int64 when added to the start */
		"job: {apiVersion: kubeflow.org/v1, kind: TFJob, metadata: {name: a}}\ntimeline: [{at: 9223372036854775807}]",
		"job: {apiVersion: kubeflow.org/v1, kind: TFJob, metadata: {name: a}}\nuntil: 9223372036854775807\ntimeline: []",
		"job: {apiVersion: kubeflow.org/v1, kind: TFJob, metadata: {name: a}}\nuntil: -1\ntimeline: []",
	};
	for (size_t i = 0; i < TFJOB_ARRAY_LEN_T(bad); i++) {
		err = NULL;
		out = NULL;
		ck_assert_msg(tfjob_simulate(&out, bad[i], strlen(bad[i]), NULL, &err) != 0, "%s", bad[i]);
		ck_assert_ptr_null(out);
		tfjob_error_free(err);
	}
	tfjob_simulate_options so;
	ck_assert_int_eq(tfjob_simulate_options_init(&so, 2), TFJOB_EVERSION);
	ck_assert_int_eq(tfjob_simulate_options_init(&so, 1), 0);
	so.max_steps = 2;
	ck_assert_int_eq(tfjob_simulate(&out, scenario, strlen(scenario), &so, NULL), 0);
	ck_assert_ptr_nonnull(strstr(out, "stopped"));
	tfjob_free(out);
	ck_assert_int_eq(tfjob_simulate(NULL, scenario, 1, NULL, NULL), TFJOB_EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("plan");
	TCase *tc = tcase_create("core");
	tcase_add_loop_test(tc, reference_status_table, 0, (int)(2 * TFJOB_ARRAY_LEN_T(status_table)));
	tcase_add_loop_test(tc, restart_policy_by_exit_code, 0, (int)(2 * TFJOB_ARRAY_LEN_T(restart_table)));
	tcase_add_test(tc, exit_code_messages);
	tcase_add_loop_test(tc, clean_pod_policy_by_phase, 0, (int)(2 * TFJOB_ARRAY_LEN_T(clean_table)));
	tcase_add_test(tc, cleanup_of_children_being_deleted);
	tcase_add_test(tc, gang_template_scheduler_warning);
	tcase_add_test(tc, clean_pod_policy_default_by_mode);
	tcase_add_test(tc, finished_job_counts_and_never_recreates);
	tcase_add_loop_test(tc, backoff_limit, 0, (int)(2 * TFJOB_ARRAY_LEN_T(backoff_table)));
	tcase_add_test(tc, limit_failure_honours_clean_pod_policy);
	tcase_add_test(tc, finished_job_replica_statuses);
	tcase_add_loop_test(tc, active_deadline, 0, 2);
	tcase_add_test(tc, active_deadline_first_step_requeues_full_deadline);
	tcase_add_test(tc, active_deadline_extremes);
	tcase_add_loop_test(tc, ttl_before_and_after_expiry, 0, 2);
	tcase_add_test(tc, ttl_just_finished_requeues);
	tcase_add_test(tc, ttl_after_limit_failure);
	tcase_add_test(tc, ttl_missing_completion_time);
	tcase_add_loop_test(tc, suspend_then_resume, 0, 2);
	tcase_add_test(tc, managed_by_other_controller);
	tcase_add_test(tc, validation_failure);
	tcase_add_test(tc, validation_failure_replica_limit);
	tcase_add_test(tc, warnings_recorded_once);
	tcase_add_test(tc, defect10_unknown_restart_policy);
	tcase_add_test(tc, job_being_deleted);
	tcase_add_loop_test(tc, new_job_created_condition_and_children, 0, 2);
	tcase_add_test(tc, template_restart_policy_warning);
	tcase_add_test(tc, steady_state_is_quiet);
	tcase_add_test(tc, scale_down_and_missing_index);
	tcase_add_test(tc, too_many_pods_for_an_index);
	tcase_add_test(tc, other_jobs_children_are_ignored);
	tcase_add_test(tc, bad_labels_warn);
	tcase_add_test(tc, bad_inputs);
	tcase_add_test(tc, condition_rules);
	tcase_add_test(tc, defect1_chief_succeeded_workers_failed);
	tcase_add_test(tc, defect1_worker0_succeeded_worker1_failed);
	tcase_add_test(tc, defect2_3_restart_then_permanent_failure);
	tcase_add_test(tc, defect3_dynamic_worker_permanent_failure);
	tcase_add_test(tc, defect4_ps_restart_while_workers_run);
	tcase_add_test(tc, defect6_finished_and_suspended);
	tcase_add_test(tc, defect7_zero_replicas);
	tcase_add_test(tc, defect7_compat_tf_config_of_extra_pods);
	tcase_add_test(tc, running_pod_being_deleted_counts_as_failed);
	tcase_add_test(tc, only_ps_never_drives_running);
	tcase_add_test(tc, success_messages_and_events);
	tcase_add_test(tc, abnormal_pod_events);
	tcase_add_test(tc, deterministic_and_json_shape);
	tcase_add_test(tc, plan_json_streamed_and_lazy_creates);
	tcase_add_test(tc, time_parse_and_format);
	tcase_add_test(tc, simulate_api);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
