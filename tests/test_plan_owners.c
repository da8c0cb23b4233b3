/*
 * The planner's controller references (ignore, adopt, release), its gang-scheduling actions
 * (PodGroup create, patch, delete, wait), steady jobs that plan no status change, and render
 * and plan agreeing on the children of a new job.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <dirent.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planutil.h"

#define TFJOB_ARRAY_LEN_T(a) (sizeof(a) / sizeof((a)[0]))
#define DOC TFJOB_COMPAT_DOCUMENTED
#define V19 TFJOB_COMPAT_TRAINING_OPERATOR_1_9
static const tfjob_compat both[] = { DOC, V19 };

/* ---- controller references ---- */

typedef enum owner { OWNED, FOREIGN, ORPHAN } owner;

typedef struct claim_case {
	const char *what;
	owner owner;
	bool labels_match;
	bool deleting;
	/* outcome per mode (documented, v1.9) and kind (pod, service) */
	int adopt[2][2], release[2][2], counted[2][2];
} claim_case;

static const claim_case claim_table[] = {
	{ "controlled by the job", OWNED, true, false, { { 0, 0 }, { 0, 0 } }, { { 0, 0 }, { 0, 0 } }, { { 1, 1 }, { 1, 1 } } },
	{ "controlled by another object", FOREIGN, true, false, { { 0, 0 }, { 0, 0 } }, { { 0, 0 }, { 0, 0 } },
	  { { 0, 0 }, { 0, 0 } } },
	/* v1.9 keeps only the pods the job controls, but claims (adopts) matching services */
	{ "orphan, labels match", ORPHAN, true, false, { { 1, 1 }, { 0, 1 } }, { { 0, 0 }, { 0, 0 } }, { { 1, 1 }, { 0, 1 } } },
	{ "orphan being deleted", ORPHAN, true, true, { { 0, 0 }, { 0, 0 } }, { { 0, 0 }, { 0, 0 } }, { { 0, 0 }, { 0, 0 } } },
	{ "orphan of other labels", ORPHAN, false, false, { { 0, 0 }, { 0, 0 } }, { { 0, 0 }, { 0, 0 } },
	  { { 0, 0 }, { 0, 0 } } },
	/* v1.9 lists by the selector and never sees it; documented mode releases it */
	{ "controlled, labels changed", OWNED, false, false, { { 0, 0 }, { 0, 0 } }, { { 1, 1 }, { 0, 0 } },
	  { { 0, 0 }, { 0, 0 } } },
};

/* One child "job-worker-0" of the case (a Running pod or a service) as a JSON list. */
static char *child_json(const claim_case *c, bool pod)
{
	json_t *labels = json_pack("{s:s,s:s,s:s,s:s}", "training.kubeflow.org/job-name", c->labels_match ? "job" : "other",
	                           "training.kubeflow.org/operator-name", "tfjob-controller",
	                           "training.kubeflow.org/replica-type", "worker", "training.kubeflow.org/replica-index", "0");
	json_t *meta = json_pack("{s:s,s:s,s:o}", "name", "job-worker-0", "uid", "child-uid", "labels", labels);
	json_t *refs = json_pack("[{s:s,s:s,s:s,s:s}]", "apiVersion", "apps/v1", "kind", "ReplicaSet", "name", "rs", "uid",
	                         "rs-uid"); /* a reference that is not a controller stays */
	if (c->owner != ORPHAN)
		json_array_append_new(refs, json_pack("{s:s,s:s,s:s,s:s,s:b}", "apiVersion", "kubeflow.org/v1", "kind", "TFJob",
		                                      "name", "job", "uid", c->owner == OWNED ? "u-1" : "other-uid",
		                                      "controller", 1));
	json_object_set_new(meta, "ownerReferences", refs);
	if (c->deleting)
		json_object_set_new(meta, "deletionTimestamp", json_string("2024-01-01T00:00:00Z"));
	json_t *obj = json_pack("{s:s,s:o}", "kind", pod ? "Pod" : "Service", "metadata", meta);
	if (pod)
		json_object_set_new(obj, "status", json_pack("{s:s}", "phase", "Running"));
	json_t *list = json_pack("[o]", obj);
	char *text = json_dumps(list, JSON_COMPACT);
	json_decref(list);
	return text;
}

/* The index of the adopt or release action of job-worker-0 (-1: none). */
static int claim_action(const tfjob_plan *plan, tfjob_action_type type)
{
	for (size_t i = 0; i < tfjob_plan_action_count(plan); i++)
		if (tfjob_plan_action_type(plan, i) == type)
			return (int)i;
	return -1;
}

static void check_claim_patch(const tfjob_plan *plan, int i, bool adopt)
{
	char *text = NULL;
	ck_assert_int_eq(tfjob_plan_action_object_json(&text, plan, (size_t)i, 0, NULL), 0);
	json_t *patch = json_loads(text, 0, NULL);
	tfjob_free(text);
	json_t *meta = json_object_get(patch, "metadata");
	ck_assert_str_eq(json_string_value(json_object_get(meta, "uid")), "child-uid"); /* precondition */
	json_t *refs = json_object_get(meta, "ownerReferences");
	ck_assert_uint_eq(json_array_size(refs), adopt ? 2 : 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(refs, 0), "uid")), "rs-uid");
	if (adopt) {
		json_t *ours = json_array_get(refs, 1);
		ck_assert_str_eq(json_string_value(json_object_get(ours, "uid")), "u-1");
		ck_assert(json_is_true(json_object_get(ours, "controller")));
		ck_assert(json_is_true(json_object_get(ours, "blockOwnerDeletion")));
		ck_assert_str_eq(json_string_value(json_object_get(ours, "kind")), "TFJob");
	}
	json_decref(patch);
}

START_TEST(claim_by_controller_reference)
{
	const claim_case *c = &claim_table[_i / 4];
	int m = (_i / 2) % 2, k = _i % 2;
	bool pod = k == 0;
	pu_replica reps[] = { { "Worker", 1, "Never" }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, NULL);
	char *child = child_json(c, pod);
	tfjob_plan *plan = pu_plan(job, pod ? child : NULL, pod ? NULL : child, both[m], T0, 0);
	tfjob_object_kind kind = pod ? TFJOB_OBJECT_POD : TFJOB_OBJECT_SERVICE;
	const char *what = c->what;
	ck_assert_msg(pu_actions(plan, TFJOB_ACTION_ADOPT, kind, "job-worker-0") == c->adopt[m][k], "%s: adopt", what);
	ck_assert_msg(pu_actions(plan, TFJOB_ACTION_RELEASE, kind, "job-worker-0") == c->release[m][k], "%s: release", what);
	/* a child that is not the job's is replaced by one of its own (whose create then fails with AlreadyExists) */
	ck_assert_msg(pu_actions(plan, TFJOB_ACTION_CREATE, kind, "job-worker-0") == !c->counted[m][k], "%s: create", what);
	if (pod) {
		json_t *st = pu_status(plan);
		json_t *w = json_object_get(json_object_get(st, "replicaStatuses"), "Worker");
		ck_assert_msg(json_integer_value(json_object_get(w, "active")) == c->counted[m][k], "%s: counted", what);
		json_decref(st);
	}
	if (c->adopt[m][k])
		check_claim_patch(plan, claim_action(plan, TFJOB_ACTION_ADOPT), true);
	if (c->release[m][k])
		check_claim_patch(plan, claim_action(plan, TFJOB_ACTION_RELEASE), false);
	tfjob_plan_free(plan);
	free(child);
	tfjob_job_free(job);
}
END_TEST

/* A job being deleted plans nothing: no adoption, no release. */
START_TEST(claim_nothing_while_job_is_deleted)
{
	static const tfjob_compat modes[] = { DOC, V19 };
	char text[2048];
	snprintf(text, sizeof text,
	         "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"job\",\"namespace\":\"ns\","
	         "\"uid\":\"u-1\",\"deletionTimestamp\":\"2024-01-01T00:00:00Z\"},\"spec\":{\"tfReplicaSpecs\":{\"Worker\":{"
	         "\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"x\"}]}}}}}}");
	tfjob_job *job = tu_parse(text);
	for (size_t ci = 0; ci < TFJOB_ARRAY_LEN_T(claim_table); ci++) {
		for (int k = 0; k < 2; k++) {
			char *child = child_json(&claim_table[ci], k == 0);
			for (size_t m = 0; m < 2; m++) {
				tfjob_plan *plan = pu_plan(job, k == 0 ? child : NULL, k == 0 ? NULL : child, modes[m], T0, 0);
				ck_assert_uint_eq(tfjob_plan_action_count(plan), 0);
				ck_assert(!tfjob_plan_status_changed(plan));
				tfjob_plan_free(plan);
			}
			free(child);
		}
	}
	tfjob_job_free(job);
}
END_TEST

/* A running job whose status is exactly what training-operator v1.9 writes for it (no
   replicaStatuses selector, counts only when not 0): no action and no status change in either mode,
   so an operator taking over from v1.9 writes nothing. */
START_TEST(steady_job_plans_no_status_change)
{
	static const char *v19_status =
		"{\"conditions\":[{\"type\":\"Created\",\"status\":\"True\",\"reason\":\"TFJobCreated\","
		"\"message\":\"TFJob job is created.\",\"lastUpdateTime\":\"2024-01-01T00:00:00Z\","
		"\"lastTransitionTime\":\"2024-01-01T00:00:00Z\"},{\"type\":\"Running\",\"status\":\"True\","
		"\"reason\":\"TFJobRunning\",\"message\":\"TFJob ns/job is running.\","
		"\"lastUpdateTime\":\"2024-01-01T00:00:05Z\",\"lastTransitionTime\":\"2024-01-01T00:00:05Z\"}],"
		"\"replicaStatuses\":{\"PS\":{\"active\":1},\"Worker\":{\"active\":2}},"
		"\"startTime\":\"2024-01-01T00:00:00Z\"}";
	pu_replica reps[] = { { "PS", 1, NULL }, { "Worker", 2, "OnFailure" }, { NULL, 0, NULL } };
	pu_pod pods[] = { { "PS", 0, "Running", -1, 0, false }, { "Worker", 0, "Running", -1, 0, false },
		          { "Worker", 1, "Running", -1, 0, false } };
	char *pj = pu_pods(pods, 3), *sj = pu_services_for(reps);
	tfjob_job *job = pu_job(reps, "\"cleanPodPolicy\":\"None\"", NULL, v19_status);
	for (size_t m = 0; m < 2; m++) {
		tfjob_plan *plan = pu_plan(job, pj, sj, both[m], T0 + 60, 0);
		char *st = NULL;
		ck_assert_int_eq(tfjob_plan_status_json(&st, plan, 0, NULL), 0);
		ck_assert_msg(!tfjob_plan_status_changed(plan), "mode %zu: a steady job writes its status: %s", m, st);
		ck_assert_uint_eq(tfjob_plan_action_count(plan), 0);
		tfjob_free(st);
		tfjob_plan_free(plan);
	}
	tfjob_job_free(job);
	free(pj);
	free(sj);
}
END_TEST

/* ---- gang scheduling ---- */

static tfjob_plan *gang_plan(tfjob_job *job, const char *pods, tfjob_gang_scheduler gang, const char *pod_group,
                             tfjob_compat compat)
{
	tfjob_render_options ro = TFJOB_RENDER_OPTIONS_INIT;
	ro.gang_scheduler = gang;
	tfjob_plan_options po = TFJOB_PLAN_OPTIONS_INIT;
	po.compat = compat;
	po.now = T0;
	po.render = &ro;
	po.pod_group_json = pod_group;
	tfjob_plan *plan = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_plan_new(&plan, job, pods, NULL, &po, &err);
	ck_assert_msg(rc == 0, "%s", tfjob_error_message(err));
	return plan;
}

/* The PodGroup tfjob_render_pod_group() renders for the job, with a status phase. */
static char *rendered_group(tfjob_job *job, tfjob_gang_scheduler gang, const char *phase)
{
	tfjob_render_options ro = TFJOB_RENDER_OPTIONS_INIT;
	ro.gang_scheduler = gang;
	char *text = NULL;
	ck_assert_int_eq(tfjob_render_pod_group(&text, job, &ro, 0, NULL), 0);
	json_t *pg = json_loads(text, 0, NULL);
	tfjob_free(text);
	json_object_set_new(pg, "status", json_pack("{s:s}", "phase", phase));
	char *out = json_dumps(pg, JSON_COMPACT);
	json_decref(pg);
	return out;
}

START_TEST(gang_creates_group_and_pods_wait)
{
	pu_replica reps[] = { { "Worker", 2, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, NULL);
	for (size_t m = 0; m < 2; m++) {
		/* volcano: a new group has no phase, so the pods wait */
		tfjob_plan *plan = gang_plan(job, NULL, TFJOB_GANG_VOLCANO, NULL, both[m]);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_PODGROUP, "job"), 1);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_WAIT, TFJOB_OBJECT_PODGROUP, "job"), 1);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, NULL), 0);
		json_t *st = pu_status(plan);
		if (both[m] == V19) { /* v1.9 reconciles no child and writes lastReconcileTime only */
			ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_SERVICE, NULL), 0);
			ck_assert_str_eq(json_string_value(json_object_get(st, "lastReconcileTime")), "2024-01-01T00:00:00Z");
		} else {
			ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_SERVICE, NULL), 2);
			ck_assert_ptr_null(json_object_get(st, "lastReconcileTime"));
		}
		json_decref(st);
		char *obj = NULL;
		ck_assert_int_eq(tfjob_plan_action_object_json(&obj, plan, 0, 0, NULL), 0);
		ck_assert_ptr_nonnull(strstr(obj, "scheduling.volcano.sh/v1beta1"));
		tfjob_free(obj);
		tfjob_plan_free(plan);
		/* scheduler-plugins: no waiting */
		plan = gang_plan(job, NULL, TFJOB_GANG_SCHEDULER_PLUGINS, NULL, both[m]);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_PODGROUP, "job"), 1);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_WAIT, TFJOB_OBJECT_PODGROUP, NULL), 0);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, NULL), 2);
		tfjob_plan_free(plan);
		/* no gang scheduler: no PodGroup */
		plan = gang_plan(job, NULL, TFJOB_GANG_NONE, NULL, both[m]);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_PODGROUP, NULL), 0);
		tfjob_plan_free(plan);
	}
	tfjob_job_free(job);
}
END_TEST

START_TEST(gang_existing_group)
{
	pu_replica reps[] = { { "Worker", 2, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, NULL);
	for (size_t m = 0; m < 2; m++) {
		/* scheduled and as wanted: nothing to write, the pods are created */
		char *pg = rendered_group(job, TFJOB_GANG_VOLCANO, "Running");
		tfjob_plan *plan = gang_plan(job, NULL, TFJOB_GANG_VOLCANO, pg, both[m]);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_PODGROUP, NULL), 0);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_PATCH, TFJOB_OBJECT_PODGROUP, NULL), 0);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_WAIT, TFJOB_OBJECT_PODGROUP, NULL), 0);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, NULL), 2);
		tfjob_plan_free(plan);
		free(pg);
		/* Pending: the pods wait */
		pg = rendered_group(job, TFJOB_GANG_VOLCANO, "Pending");
		plan = gang_plan(job, NULL, TFJOB_GANG_VOLCANO, pg, both[m]);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_WAIT, TFJOB_OBJECT_PODGROUP, "job"), 1);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, NULL), 0);
		tfjob_plan_free(plan);
		free(pg);
		/* another spec: patched whole (a field the job does not want is removed); a queue set is kept */
		plan = gang_plan(job, NULL, TFJOB_GANG_VOLCANO,
		                 "{\"metadata\":{\"name\":\"job\"},\"spec\":{\"minMember\":7,\"queue\":\"research\","
		                 "\"priorityClassName\":\"old\"},\"status\":{\"phase\":\"Inqueue\"}}",
		                 both[m]);
		int i = -1;
		for (size_t k = 0; k < tfjob_plan_action_count(plan); k++)
			if (tfjob_plan_action_type(plan, k) == TFJOB_ACTION_PATCH)
				i = (int)k;
		ck_assert_int_ge(i, 0);
		ck_assert_int_eq(tfjob_plan_action_kind(plan, (size_t)i), TFJOB_OBJECT_PODGROUP);
		char *text = NULL;
		ck_assert_int_eq(tfjob_plan_action_object_json(&text, plan, (size_t)i, 0, NULL), 0);
		json_t *root = json_loads(text, 0, NULL), *spec = json_object_get(root, "spec");
		tfjob_free(text);
		ck_assert_int_eq(json_integer_value(json_object_get(spec, "minMember")), 2);
		ck_assert_str_eq(json_string_value(json_object_get(spec, "queue")), "research");
		ck_assert(json_is_null(json_object_get(spec, "priorityClassName")));
		json_decref(root);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, NULL), 2); /* Inqueue: scheduled */
		tfjob_plan_free(plan);
		/* being deleted: documented mode waits for it to go; v1.9 treats it as there */
		plan = gang_plan(job, NULL, TFJOB_GANG_SCHEDULER_PLUGINS,
		                 "{\"metadata\":{\"name\":\"job\",\"deletionTimestamp\":\"2024-01-01T00:00:00Z\"},\"spec\":{}}",
		                 both[m]);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_WAIT, TFJOB_OBJECT_PODGROUP, "job"), both[m] == DOC);
		ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_POD, NULL), both[m] == DOC ? 0 : 2);
		tfjob_plan_free(plan);
	}
	tfjob_job_free(job);
}
END_TEST

/* Finished, suspended and failing jobs delete the PodGroup: v1.9 at every step, documented mode when there is one. */
START_TEST(gang_deletes_group_when_done)
{
	pu_replica reps[] = { { "Worker", 1, NULL }, { NULL, 0, NULL } };
	const char *finished = "{\"conditions\":[{\"type\":\"Succeeded\",\"status\":\"True\",\"reason\":\"TFJobSucceeded\"}],"
	                       "\"completionTime\":\"2024-01-01T00:00:00Z\"}";
	tfjob_job *jobs[] = { pu_job(reps, NULL, NULL, finished), pu_job(reps, "\"suspend\":true", NULL, NULL),
		              pu_job(reps, "\"activeDeadlineSeconds\":5", NULL, "{\"startTime\":\"2023-12-31T00:00:00Z\"}") };
	const char *pg = "{\"metadata\":{\"name\":\"job\"},\"spec\":{\"minMember\":1}}";
	for (size_t j = 0; j < 3; j++) {
		for (size_t m = 0; m < 2; m++) {
			for (int observed = 0; observed < 2; observed++) {
				tfjob_plan *plan = gang_plan(jobs[j], NULL, TFJOB_GANG_VOLCANO, observed ? pg : NULL, both[m]);
				int want = both[m] == V19 || observed;
				ck_assert_msg(pu_actions(plan, TFJOB_ACTION_DELETE, TFJOB_OBJECT_PODGROUP, "job") == want,
				              "job %zu mode %zu observed %d", j, m, observed);
				ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_EVENT, TFJOB_OBJECT_NONE, "JobTerminated"), want);
				ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_PODGROUP, NULL), 0);
				ck_assert_int_eq(pu_event(plan, "SuccessfulDeletePodGroup"), -1); /* the executor's */
				tfjob_plan_free(plan);
			}
		}
		tfjob_job_free(jobs[j]);
	}
}
END_TEST

/* tfjob_plan_write_json() hands over the bytes of tfjob_plan_to_json(), patches and PodGroups included. */
static void check_streamed_same(const tfjob_plan *plan)
{
	static const unsigned int flag_sets[] = { TFJOB_JSON_COMPACT, TFJOB_JSON_PRETTY, TFJOB_JSON_SORT_KEYS,
		                                  TFJOB_JSON_PRETTY | TFJOB_JSON_SORT_KEYS };
	for (size_t f = 0; f < TFJOB_ARRAY_LEN_T(flag_sets); f++) {
		char *whole = NULL;
		tu_collected got = { 0 };
		ck_assert_int_eq(tfjob_plan_to_json(&whole, plan, flag_sets[f], NULL), 0);
		ck_assert_int_eq(tfjob_plan_write_json(plan, flag_sets[f], tu_collect, &got, NULL), 0);
		ck_assert_str_eq(got.text, whole);
		free(got.text);
		tfjob_free(whole);
	}
}

START_TEST(plan_json_of_new_actions)
{
	pu_replica reps[] = { { "Worker", 1, "Never" }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, NULL);
	char *child = child_json(&claim_table[2], true); /* an orphan pod: adopted in documented mode */
	tfjob_plan *plan = pu_plan(job, child, NULL, DOC, T0, 0);
	char *text = NULL;
	ck_assert_int_eq(tfjob_plan_to_json(&text, plan, 0, NULL), 0);
	json_t *p = json_loads(text, 0, NULL);
	json_t *a = json_array_get(json_object_get(p, "actions"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(a, "action")), "adopt");
	ck_assert_str_eq(json_string_value(json_object_get(a, "kind")), "Pod");
	ck_assert_str_eq(json_string_value(json_object_get(a, "name")), "job-worker-0");
	ck_assert(json_is_object(json_object_get(a, "patch")));
	ck_assert_uint_eq(json_object_size(a), 4);
	json_decref(p);
	tfjob_free(text);
	check_streamed_same(plan);
	tfjob_plan_free(plan);
	plan = gang_plan(job, NULL, TFJOB_GANG_VOLCANO, NULL, DOC);
	ck_assert_int_eq(tfjob_plan_to_json(&text, plan, 0, NULL), 0);
	ck_assert_ptr_nonnull(strstr(text, "{\"action\":\"wait\",\"kind\":\"PodGroup\",\"name\":\"job\"}"));
	ck_assert_ptr_nonnull(strstr(text, "{\"action\":\"create\",\"kind\":\"PodGroup\",\"name\":\"job\",\"object\":{"));
	tfjob_free(text);
	check_streamed_same(plan);
	tfjob_plan_free(plan);
	ck_assert_str_eq(tfjob_action_type_name(TFJOB_ACTION_ADOPT), "adopt");
	ck_assert_str_eq(tfjob_action_type_name(TFJOB_ACTION_RELEASE), "release");
	ck_assert_str_eq(tfjob_action_type_name(TFJOB_ACTION_PATCH), "patch");
	ck_assert_str_eq(tfjob_action_type_name(TFJOB_ACTION_WAIT), "wait");
	ck_assert_str_eq(tfjob_object_kind_name(TFJOB_OBJECT_PODGROUP), "PodGroup");
	free(child);
	tfjob_job_free(job);
}
END_TEST

/* Options of version 1 (no pod_group_json field) still plan; a PodGroup that is not an object is refused. */
START_TEST(plan_options_versions)
{
	/* a version-1 caller's struct is smaller: only its bytes are written (ASan would see more) */
	void *v1 = malloc(offsetof(tfjob_plan_options, pod_group_json));
	ck_assert_ptr_nonnull(v1);
	ck_assert_int_eq(tfjob_plan_options_init(v1, 1), 0);
	unsigned int version = 0;
	memcpy(&version, (char *)v1 + offsetof(tfjob_plan_options, version), sizeof version);
	ck_assert_uint_eq(version, 1);
	free(v1);
	tfjob_plan_options po;
	ck_assert_int_eq(tfjob_plan_options_init(&po, 1), 0);
	ck_assert_int_eq(po.version, 1);
	ck_assert_int_eq(tfjob_plan_options_init(&po, 2), 0);
	ck_assert_ptr_null(po.pod_group_json);
	ck_assert_int_eq(tfjob_plan_options_init(&po, 3), TFJOB_EVERSION);
	pu_replica reps[] = { { "Worker", 1, NULL }, { NULL, 0, NULL } };
	tfjob_job *job = pu_job(reps, NULL, NULL, NULL);
	tfjob_render_options ro = TFJOB_RENDER_OPTIONS_INIT;
	ro.gang_scheduler = TFJOB_GANG_VOLCANO;
	po.now = T0;
	po.render = &ro;
	po.pod_group_json = "[1]";
	tfjob_plan *plan = NULL;
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_plan_new(&plan, job, NULL, NULL, &po, &err), TFJOB_ESCHEMA);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "pod group"));
	tfjob_error_free(err);
	po.version = 1; /* a version-1 caller has no such field: it is not read */
	ck_assert_int_eq(tfjob_plan_new(&plan, job, NULL, NULL, &po, NULL), 0);
	ck_assert_int_eq(pu_actions(plan, TFJOB_ACTION_CREATE, TFJOB_OBJECT_PODGROUP, "job"), 1);
	tfjob_plan_free(plan);
	tfjob_job_free(job);
}
END_TEST

/* ---- render and plan agree ---- */

/* The job of text (one TFJob document) with every replica type's replicas set to r. */
static tfjob_job *with_replicas(const tfjob_job *job, int r)
{
	char *text = NULL;
	ck_assert_int_eq(tfjob_job_to_json(&text, job, 0, NULL), 0);
	json_t *root = json_loads(text, 0, NULL);
	tfjob_free(text);
	const char *key;
	json_t *spec;
	json_object_foreach(json_object_get(json_object_get(root, "spec"), "tfReplicaSpecs"), key, spec)
		json_object_set_new(spec, "replicas", json_integer(r));
	json_object_set_new(json_object_get(root, "metadata"), "uid", json_string("u-agree"));
	text = json_dumps(root, JSON_COMPACT);
	json_decref(root);
	tfjob_job *out = tu_parse(text);
	free(text);
	return out;
}

/* The created children of a plan, by kind, as one JSON array each, in plan order. */
static void plan_children(const tfjob_plan *plan, json_t *pods, json_t *svcs)
{
	for (size_t i = 0; i < tfjob_plan_action_count(plan); i++) {
		if (tfjob_plan_action_type(plan, i) != TFJOB_ACTION_CREATE)
			continue;
		char *text = NULL;
		ck_assert_int_eq(tfjob_plan_action_object_json(&text, plan, i, 0, NULL), 0);
		json_array_append_new(tfjob_plan_action_kind(plan, i) == TFJOB_OBJECT_POD ? pods : svcs, json_loads(text, 0, NULL));
		tfjob_free(text);
	}
}

/* Returns 1 when the job was compared (its plan creates children), 0 when it fails validation or has no name. */
static int agree_one(const tfjob_job *orig, int r, const char *what)
{
	if (!tfjob_job_name(orig))
		return 0; /* generateName: the server names it */
	tfjob_job *job = with_replicas(orig, r);
	tfjob_default_options dopts = TFJOB_DEFAULT_OPTIONS_INIT;
	dopts.compat = V19;
	ck_assert_int_eq(tfjob_job_apply_defaults(job, &dopts, NULL), 0);
	tfjob_plan *plan = pu_plan(job, NULL, NULL, V19, T0, 0);
	int compared = pu_cond(plan, "Failed") == NULL;
	if (compared) {
		tfjob_render_options ro = TFJOB_RENDER_OPTIONS_INIT;
		ro.compat = V19;
		char *text = NULL;
		tfjob_error *err = NULL;
		ck_assert_msg(tfjob_render_all(&text, job, &ro, TFJOB_JSON_PRETTY, &err) == 0, "%s: %s", what,
		              tfjob_error_message(err));
		json_t *rendered = json_loads(text, 0, NULL);
		tfjob_free(text);
		json_t *pods = json_array(), *svcs = json_array();
		plan_children(plan, pods, svcs);
		ck_assert_msg(json_array_size(pods) >= 1, "%s replicas %d: no pod created", what, r);
		ck_assert_msg(json_equal(pods, json_object_get(rendered, "pods")), "%s replicas %d: pods differ", what, r);
		ck_assert_msg(json_equal(svcs, json_object_get(rendered, "services")), "%s replicas %d: services differ", what, r);
		json_decref(pods);
		json_decref(svcs);
		json_decref(rendered);
	}
	tfjob_plan_free(plan);
	tfjob_job_free(job);
	return compared;
}

/* The TFJobs of an example file, each checked with replicas 0..3. Returns the number compared. */
static int agree_file(const char *path)
{
	size_t len;
	char *text = tu_read_example(path, &len);
	tfjob_job **jobs = NULL;
	size_t count = 0;
	ck_assert_int_eq(tfjob_job_parse_all(&jobs, &count, text, len, NULL, NULL), 0);
	int compared = 0;
	for (size_t j = 0; j < count; j++) {
		for (int r = 0; r <= 3; r++)
			compared += agree_one(jobs[j], r, path);
		tfjob_job_free(jobs[j]);
	}
	free(jobs);
	free(text);
	return compared;
}

/* training-operator-1.9 mode: tfjobctl render's children are the ones plan creates for a new job,
   index 0 of a type with replicas: 0 included (v1.9 creates it). */
START_TEST(render_and_plan_agree_in_compat_mode)
{
	static const char *const dirs[] = { "", "ps-training/", "failures/", "tensorflow-mwms/" };
	const char *root = getenv("TFJOB_EXAMPLES");
	ck_assert_ptr_nonnull(root);
	int files = 0, compared = 0;
	for (size_t d = 0; d < TFJOB_ARRAY_LEN_T(dirs); d++) {
		char dir[1024];
		snprintf(dir, sizeof dir, "%s/%s", root, dirs[d]);
		DIR *dh = opendir(dir);
		ck_assert_ptr_nonnull(dh);
		struct dirent *e;
		while ((e = readdir(dh)) != NULL) {
			size_t n = strlen(e->d_name);
			if (n < 6 || strcmp(e->d_name + n - 5, ".yaml"))
				continue;
			char path[1024];
			snprintf(path, sizeof path, "%s%s", dirs[d], e->d_name);
			compared += agree_file(path);
			files++;
		}
		closedir(dh);
	}
	ck_assert_int_ge(files, 8);
	ck_assert_int_ge(compared, 2 * files); /* some jobs fail validation with replicas 0, or have no name */
}
END_TEST

int main(void)
{
	Suite *s = suite_create("plan_owners");
	TCase *tc = tcase_create("owners");
	tcase_add_loop_test(tc, claim_by_controller_reference, 0, (int)(4 * TFJOB_ARRAY_LEN_T(claim_table)));
	tcase_add_test(tc, claim_nothing_while_job_is_deleted);
	tcase_add_test(tc, steady_job_plans_no_status_change);
	tcase_add_test(tc, plan_json_of_new_actions);
	tcase_add_test(tc, plan_options_versions);
	tcase_add_test(tc, render_and_plan_agree_in_compat_mode);
	suite_add_tcase(s, tc);
	TCase *gang = tcase_create("gang");
	tcase_add_test(gang, gang_creates_group_and_pods_wait);
	tcase_add_test(gang, gang_existing_group);
	tcase_add_test(gang, gang_deletes_group_when_done);
	suite_add_tcase(s, gang);
	return tu_run(s);
}
