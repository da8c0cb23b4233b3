/*
 * The controller on the memory backend: job lifecycles driven by a fake kubelet (the test sets
 * pod status in the store), API calls per lifecycle, conflicts, adoption, gang scheduling,
 * leader election, hooks, metrics.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tfjob/sys/transport.h>

#include "ctlutil.h"
#include "testutil.h"

#define NS "default"
#define W 10000

static tfjob_transport *T;
static tfjob_controller *C;

static tfjob_transport *new_store(void)
{
	tfjob_memory_options mo = TFJOB_MEMORY_OPTIONS_INIT;
	mo.clock = cu_clock;
	mo.seed = 42;
	tfjob_transport *t = NULL;
	ck_assert_int_eq(tfjob_memory_transport_new(&t, &mo, NULL), 0);
	return t;
}

static void debug_log(tfjob_log_level l, const char *msg, const char *fields, void *p)
{
	(void)p;
	fprintf(stderr, "[%d] %s %s\n", (int)l, msg, fields);
}

static tfjob_controller *start_on(tfjob_transport *t, tfjob_controller_options *o)
{
	tfjob_controller_options d = TFJOB_CONTROLLER_OPTIONS_INIT;
	static tfjob_controller_hooks dh = TFJOB_CONTROLLER_HOOKS_INIT;
	if (!o)
		o = &d;
	if (!o->hooks) { /* CU_LOG=1: the controller's log on stderr; else kept for a failed wait */
		dh.log = getenv("CU_LOG") ? debug_log : cu_log_ring;
		dh.log_level = TFJOB_LOG_DEBUG;
		o->hooks = &dh;
	}
	o->clock = cu_clock;
	tfjob_controller *c = NULL;
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_controller_new(&c, t, o, &err), 0);
	ck_assert_int_eq(tfjob_controller_start(c, &err), 0);
	return c;
}

static void setup(void)
{
	cu_now = 1700000000;
	cu_log_ring_clear();
	T = new_store();
	C = NULL;
}

static void teardown(void)
{
	tfjob_controller_free(C);
	tfjob_transport_free(T);
	cu_log_ring_clear();
}

static void create(const char *name, const char *types, const char *spec, const char *rp)
{
	char *j = cu_job(name, types, spec, rp);
	ck_assert_int_eq(cu_create_job(T, j), 0);
	free(j);
}

static void set_pod(const char *name, const char *phase, int code, int restarts)
{
	ck_assert_int_eq(cu_set_pod(T, NS, name, phase, code, restarts), 0);
}

static void metrics(tfjob_controller_metrics *m)
{
	m->version = TFJOB_CONTROLLER_METRICS_VERSION;
	ck_assert_int_eq(tfjob_controller_metrics_get(m, C), 0);
}

/* Status writes must each change the status: watch the job and compare consecutive statuses. */
typedef struct status_log {
	pthread_mutex_t mu;
	json_t *last;
	int changes, noop_writes;
} status_log;

static int on_job_event(tfjob_watch_event type, const char *json, void *payload)
{
	status_log *l = payload;
	if (type != TFJOB_WATCH_MODIFIED && type != TFJOB_WATCH_ADDED)
		return 0;
	json_t *o = json_loads(json, 0, NULL);
	json_t *st = json_object_get(o, "status");
	pthread_mutex_lock(&l->mu);
	if (type == TFJOB_WATCH_MODIFIED) {
		if (l->last && st && json_equal(l->last, st))
			l->noop_writes++;
		else
			l->changes++;
	}
	json_decref(l->last);
	l->last = json_incref(st);
	pthread_mutex_unlock(&l->mu);
	json_decref(o);
	return 0;
}

START_TEST(ps_workers_succeed_worker0)
{
	status_log log = { PTHREAD_MUTEX_INITIALIZER, NULL, 0, 0 };
	tfjob_watch *w = NULL;
	tfjob_watch_options wo = TFJOB_WATCH_OPTIONS_INIT;
	wo.on_event = on_job_event;
	wo.payload = &log;
	/* Watch from a resourceVersion: the watch thread may start after the job's first status
	   write, which a watch without one would fold into its initial ADDED. */
	static const tfjob_resource tfjobs = TFJOB_RESOURCE_TFJOBS_INIT, nss = TFJOB_RESOURCE_NAMESPACES_INIT;
	ck_assert_int_eq(tfjob_transport_create(NULL, T, &nss, NULL, "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\","
	                                        "\"metadata\":{\"name\":\"mark\"}}", NULL), 0);
	char since[32];
	snprintf(since, sizeof(since), "%llu", (unsigned long long)tfjob_memory_resource_version(T));
	wo.resource_version = since;
	ck_assert_int_eq(tfjob_transport_watch(&w, T, &tfjobs, NS, &wo, NULL), 0);

	C = start_on(T, NULL);
	create("job1", "PS:1:Never,Worker:2:Never", NULL, NULL);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job1") == 3 && cu_count(T, NS, "services", "job1") == 3, W));
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job1", "Created", "True"), W));
	/* Events are written by the recorder's thread, after the writes they report */
	ck_assert(CU_WAIT(cu_events(T, NS, "SuccessfulCreatePod") == 3, W));
	ck_assert(CU_WAIT(cu_events(T, NS, "SuccessfulCreateService") == 3, W));
	set_pod("job1-ps-0", "Running", -1, 0);
	set_pod("job1-worker-0", "Running", -1, 0);
	set_pod("job1-worker-1", "Running", -1, 0);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job1", "Running", "True"), W));
	set_pod("job1-worker-0", "Succeeded", 0, 0);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job1", "Succeeded", "True"), W));
	/* cleanPodPolicy Running: the running PS and worker 1 go, the finished worker 0 stays */
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job1") == 1, W));
	ck_assert(cu_exists(T, NS, "pods", "job1-worker-0"));
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);

	tfjob_controller_metrics m;
	metrics(&m);
	/* The minimum: one create per pod and service, one status write per status change,
	   deletes only for cleanup, no reads, no updates, no patches. */
	ck_assert_uint_eq(m.api_calls[TFJOB_API_CREATE], 6);
	ck_assert_uint_eq(m.api_calls[TFJOB_API_DELETE], 4);
	ck_assert_uint_eq(m.api_calls[TFJOB_API_GET], 0);
	ck_assert_uint_eq(m.api_calls[TFJOB_API_UPDATE], 0);
	ck_assert_uint_eq(m.api_calls[TFJOB_API_PATCH], 0);
	ck_assert_uint_eq(m.status_conflicts, 0);
	/* every write shows up as one change on our own watch (give it time to arrive) */
	ck_assert(CU_WAIT(__extension__({ pthread_mutex_lock(&log.mu); int n_ = log.changes + log.noop_writes;
	                                  pthread_mutex_unlock(&log.mu); (uint64_t)n_ >= m.api_calls[TFJOB_API_UPDATE_STATUS]; }), W));
	tfjob_watch_free(w);
	pthread_mutex_lock(&log.mu);
	ck_assert_int_eq(log.noop_writes, 0);
	ck_assert_uint_eq(m.api_calls[TFJOB_API_UPDATE_STATUS], (uint64_t)log.changes);
	json_decref(log.last);
	pthread_mutex_unlock(&log.mu);
	printf("lifecycle PS1+Worker2: creates %llu, deletes %llu, status writes %llu, events %llu, reconciles %llu\n",
	       (unsigned long long)m.api_calls[TFJOB_API_CREATE], (unsigned long long)m.api_calls[TFJOB_API_DELETE],
	       (unsigned long long)m.api_calls[TFJOB_API_UPDATE_STATUS],
	       (unsigned long long)m.api_calls[TFJOB_API_CREATE_EVENT], (unsigned long long)m.reconciles);
	ck_assert_uint_eq(m.jobs_created, 1);
	ck_assert_uint_eq(m.jobs_succeeded, 1);
}
END_TEST

START_TEST(chief_decides)
{
	C = start_on(T, NULL);
	create("job2", "Chief:1:Never,Worker:2:Never", NULL, NULL);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job2") == 3, W));
	set_pod("job2-chief-0", "Running", -1, 0);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job2", "Running", "True"), W));
	set_pod("job2-worker-0", "Succeeded", 0, 0); /* a worker alone decides nothing with a chief */
	cu_sleep_ms(50);
	ck_assert(!cu_cond_is(T, NS, "job2", "Succeeded", "True"));
	set_pod("job2-chief-0", "Succeeded", 0, 0);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job2", "Succeeded", "True"), W));
	ck_assert(cu_cond_is(T, NS, "job2", "Running", "False"));
}
END_TEST

START_TEST(all_workers)
{
	C = start_on(T, NULL);
	create("job3", "Worker:2:Never", "\"successPolicy\":\"AllWorkers\"", NULL);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job3") == 2, W));
	set_pod("job3-worker-1", "Running", -1, 0);
	set_pod("job3-worker-0", "Succeeded", 0, 0);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job3", "Running", "True"), W));
	ck_assert(!cu_cond_is(T, NS, "job3", "Succeeded", "True"));
	set_pod("job3-worker-1", "Succeeded", 0, 0);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job3", "Succeeded", "True"), W));
}
END_TEST

START_TEST(exit_code_retryable_then_success)
{
	C = start_on(T, NULL);
	create("job4", "Worker:1:ExitCode", NULL, NULL);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job4") == 1, W));
	char *uid1 = cu_uid(T, NS, "pods", "job4-worker-0");
	set_pod("job4-worker-0", "Failed", 137, 0);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job4", "Restarting", "True"), W));
	ck_assert(CU_WAIT(cu_exists(T, NS, "pods", "job4-worker-0"), W));
	char *uid2 = NULL;
	ck_assert(CU_WAIT((free(uid2), uid2 = cu_uid(T, NS, "pods", "job4-worker-0")) && strcmp(uid1, uid2), W));
	ck_assert(CU_WAIT(cu_events(T, NS, "SuccessfulDeletePod") >= 1, W));
	set_pod("job4-worker-0", "Running", -1, 0);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job4", "Running", "True"), W));
	set_pod("job4-worker-0", "Succeeded", 0, 0);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job4", "Succeeded", "True"), W));
	ck_assert(!cu_cond_is(T, NS, "job4", "Failed", "True"));
	tfjob_controller_metrics m;
	metrics(&m);
	ck_assert_uint_eq(m.jobs_restarted, 1);
	free(uid1);
	free(uid2);
}
END_TEST

START_TEST(exit_code_permanent_fails)
{
	C = start_on(T, NULL);
	create("job5", "Worker:2:ExitCode", NULL, "\"cleanPodPolicy\":\"None\"");
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job5") == 2, W));
	set_pod("job5-worker-1", "Running", -1, 0);
	set_pod("job5-worker-0", "Failed", 1, 0);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job5", "Failed", "True"), W));
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	ck_assert_int_eq(cu_count(T, NS, "pods", "job5"), 2); /* cleanPodPolicy None */
	tfjob_controller_metrics m;
	metrics(&m);
	ck_assert_uint_eq(m.jobs_failed, 1);
}
END_TEST

START_TEST(on_failure_backoff_limit)
{
	C = start_on(T, NULL);
	create("job6", "Worker:1:OnFailure", NULL, "\"backoffLimit\":2");
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job6") == 1, W));
	set_pod("job6-worker-0", "Running", -1, 1);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job6", "Running", "True"), W));
	set_pod("job6-worker-0", "Running", -1, 2);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job6", "Failed", "True"), W));
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job6") == 0, W)); /* limit failures delete pods */
}
END_TEST

START_TEST(active_deadline)
{
	C = start_on(T, NULL);
	create("job7", "Worker:1:Never", NULL, "\"activeDeadlineSeconds\":10");
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job7") == 1, W));
	set_pod("job7-worker-0", "Running", -1, 0);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job7", "Running", "True"), W));
	cu_now += 11;
	tfjob_controller_enqueue(C, NS, "job7");
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job7", "Failed", "True"), W));
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job7") == 0, W));
}
END_TEST

static void clean_policy(const char *policy, int left)
{
	C = start_on(T, NULL);
	char rp[64];
	snprintf(rp, sizeof(rp), "\"cleanPodPolicy\":\"%s\"", policy);
	char *j = cu_job("job8", "PS:1:Never,Worker:2:Never", NULL, NULL);
	/* replace the default policy */
	char *p = strstr(j, "\"cleanPodPolicy\":\"Running\"");
	char *nj = malloc(strlen(j) + 64);
	snprintf(nj, strlen(j) + 64, "%.*s%s%s", (int)(p - j), j, rp, p + strlen("\"cleanPodPolicy\":\"Running\""));
	ck_assert_int_eq(cu_create_job(T, nj), 0);
	free(j);
	free(nj);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job8") == 3, W));
	set_pod("job8-ps-0", "Running", -1, 0);
	set_pod("job8-worker-1", "Running", -1, 0);
	set_pod("job8-worker-0", "Succeeded", 0, 0);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job8", "Succeeded", "True"), W));
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job8") == left, W));
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	ck_assert_int_eq(cu_count(T, NS, "pods", "job8"), left);
}

START_TEST(clean_pod_policy_all) { clean_policy("All", 0); }
END_TEST
START_TEST(clean_pod_policy_running) { clean_policy("Running", 1); }
END_TEST
START_TEST(clean_pod_policy_none) { clean_policy("None", 3); }
END_TEST

START_TEST(ttl_deletes_job)
{
	C = start_on(T, NULL);
	create("job9", "Worker:1:Never", NULL, "\"ttlSecondsAfterFinished\":5");
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job9") == 1, W));
	set_pod("job9-worker-0", "Succeeded", 0, 0);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job9", "Succeeded", "True"), W));
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	ck_assert(cu_job_exists(T, NS, "job9"));
	cu_now += 6;
	tfjob_controller_enqueue(C, NS, "job9");
	ck_assert(CU_WAIT(!cu_job_exists(T, NS, "job9"), W));
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job9") == 0, W)); /* garbage collected */
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	tfjob_controller_metrics m;
	metrics(&m);
	ck_assert_uint_eq(m.jobs_deleted, 1);
}
END_TEST

START_TEST(suspend_and_resume)
{
	static const tfjob_resource tfjobs = TFJOB_RESOURCE_TFJOBS_INIT;
	C = start_on(T, NULL);
	create("job10", "Worker:2:Never", NULL, "\"suspend\":true");
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job10", "Suspended", "True"), W));
	ck_assert_int_eq(cu_count(T, NS, "pods", "job10"), 0);
	ck_assert_int_eq(tfjob_transport_patch(NULL, T, &tfjobs, NS, "job10", NULL,
	                                       "{\"spec\":{\"runPolicy\":{\"suspend\":false}}}", NULL), 0);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job10") == 2, W));
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job10", "Suspended", "False"), W));
	set_pod("job10-worker-0", "Running", -1, 0);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job10", "Running", "True"), W));
	ck_assert_int_eq(tfjob_transport_patch(NULL, T, &tfjobs, NS, "job10", NULL,
	                                       "{\"spec\":{\"runPolicy\":{\"suspend\":true}}}", NULL), 0);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job10") == 0 && cu_count(T, NS, "services", "job10") == 0, W));
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job10", "Suspended", "True"), W));
	ck_assert(cu_cond_is(T, NS, "job10", "Running", "False"));
}
END_TEST

START_TEST(managed_by_other_untouched)
{
	C = start_on(T, NULL);
	create("job11", "Worker:2:Never", NULL, "\"managedBy\":\"kueue.x-k8s.io/multikueue\"");
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	cu_sleep_ms(20);
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	ck_assert_int_eq(cu_count(T, NS, "pods", "job11"), 0);
	char *s = cu_cond(T, NS, "job11", "Created");
	ck_assert_ptr_null(s);
	tfjob_controller_metrics m;
	metrics(&m);
	ck_assert_uint_eq(m.api_calls[TFJOB_API_UPDATE_STATUS], 0);
	ck_assert_uint_eq(m.api_calls[TFJOB_API_CREATE], 0);
}
END_TEST

START_TEST(scale_down)
{
	static const tfjob_resource tfjobs = TFJOB_RESOURCE_TFJOBS_INIT;
	C = start_on(T, NULL);
	create("job12", "Worker:3:Never", NULL, NULL);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job12") == 3, W));
	ck_assert_int_eq(tfjob_transport_patch(NULL, T, &tfjobs, NS, "job12", NULL,
	                                       "{\"spec\":{\"tfReplicaSpecs\":{\"Worker\":{\"replicas\":1}}}}", NULL), 0);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job12") == 1 && cu_count(T, NS, "services", "job12") == 1, W));
	ck_assert(cu_exists(T, NS, "pods", "job12-worker-0"));
}
END_TEST

START_TEST(pod_deleted_behind_our_back)
{
	static const tfjob_resource pods = TFJOB_RESOURCE_PODS_INIT;
	C = start_on(T, NULL);
	create("job13", "Worker:2:Never", NULL, NULL);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job13") == 2, W));
	char *uid1 = cu_uid(T, NS, "pods", "job13-worker-1");
	ck_assert_int_eq(tfjob_transport_delete(NULL, T, &pods, NS, "job13-worker-1", NULL, NULL), 0);
	char *uid2 = NULL;
	ck_assert(CU_WAIT((free(uid2), uid2 = cu_uid(T, NS, "pods", "job13-worker-1")) && strcmp(uid1, uid2), W));
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	ck_assert_int_eq(cu_count(T, NS, "pods", "job13"), 2);
	free(uid1);
	free(uid2);
}
END_TEST

START_TEST(hundred_jobs_converge)
{
	tfjob_controller_options o = TFJOB_CONTROLLER_OPTIONS_INIT;
	o.workers = 4;
	C = start_on(T, &o);
	for (int i = 0; i < 100; i++) {
		char name[32];
		snprintf(name, sizeof(name), "many-%d", i);
		create(name, "PS:1:Never,Worker:2:Never", NULL, NULL);
	}
	for (int i = 0; i < 100; i++) {
		char name[32];
		snprintf(name, sizeof(name), "many-%d", i);
		ck_assert(CU_WAIT(cu_cond_is(T, NS, name, "Created", "True"), W));
	}
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	tfjob_controller_metrics m;
	metrics(&m);
	ck_assert_uint_eq(m.api_calls[TFJOB_API_CREATE], 600); /* exactly: no duplicate */
	ck_assert_uint_eq(m.jobs_created, 100);
	for (int i = 0; i < 100; i++) {
		char name[64];
		snprintf(name, sizeof(name), "many-%d-worker-0", i);
		set_pod(name, "Succeeded", 0, 0);
	}
	for (int i = 0; i < 100; i++) {
		char name[32];
		snprintf(name, sizeof(name), "many-%d", i);
		ck_assert(CU_WAIT(cu_cond_is(T, NS, name, "Succeeded", "True"), W));
	}
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	metrics(&m);
	ck_assert_uint_eq(m.jobs_succeeded, 100);
}
END_TEST

START_TEST(invalid_spec_fails_validation)
{
	C = start_on(T, NULL);
	ck_assert_int_eq(cu_create_job(T, "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"bad\"},"
	                                  "\"spec\":{\"tfReplicaSpecs\":{\"Worker\":{\"replicas\":1,\"template\":{\"spec\":"
	                                  "{\"containers\":[{\"name\":\"tensorflow\"}]}}}}}}"), 0);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "bad", "Failed", "True"), W));
	static const tfjob_resource tfjobs = TFJOB_RESOURCE_TFJOBS_INIT;
	char *text = NULL;
	ck_assert_int_eq(tfjob_transport_get(&text, T, &tfjobs, NS, "bad", NULL), 0);
	ck_assert_ptr_nonnull(strstr(text, "TFJobFailedValidation"));
	ck_assert_ptr_nonnull(strstr(text, "spec.tfReplicaSpecs[Worker].template.spec.containers[0].image"));
	tfjob_free(text);
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	ck_assert_int_eq(cu_count(T, NS, "pods", "bad"), 0);
}
END_TEST

/* The pod hook changes the job while its reconcile runs: the status write conflicts, the
   controller reads the job again, plans again and writes. */
static int bump_job(char **out, const char *pod, const char *job, void *payload)
{
	static const tfjob_resource tfjobs = TFJOB_RESOURCE_TFJOBS_INIT;
	int *n = payload;
	*out = NULL;
	if ((*n)++ == 0)
		tfjob_transport_patch(NULL, T, &tfjobs, NS, "job14", NULL, "{\"metadata\":{\"annotations\":{\"x\":\"y\"}}}",
		                      NULL);
	/* add a sidecar */
	json_t *p = json_loads(pod, 0, NULL);
	json_array_append_new(json_object_get(json_object_get(p, "spec"), "containers"),
	                      json_pack("{s:s,s:s}", "name", "sidecar", "image", "busybox"));
	*out = json_dumps(p, JSON_COMPACT);
	json_decref(p);
	return 0;
}

START_TEST(status_conflict_retry_and_pod_hook)
{
	int n = 0;
	tfjob_controller_hooks h = TFJOB_CONTROLLER_HOOKS_INIT;
	h.mutate_pod = bump_job;
	h.payload = &n;
	tfjob_controller_options o = TFJOB_CONTROLLER_OPTIONS_INIT;
	o.hooks = &h;
	C = start_on(T, &o);
	create("job14", "Worker:1:Never", NULL, NULL);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job14", "Created", "True"), W));
	tfjob_controller_metrics m;
	metrics(&m);
	ck_assert_uint_ge(m.status_conflicts, 1);
	ck_assert_uint_eq(m.api_calls[TFJOB_API_CREATE], 2); /* re-planning created nothing twice */
	static const tfjob_resource pods = TFJOB_RESOURCE_PODS_INIT;
	char *text = NULL;
	ck_assert_int_eq(tfjob_transport_get(&text, T, &pods, NS, "job14-worker-0", NULL), 0);
	ck_assert_ptr_nonnull(strstr(text, "sidecar"));
	tfjob_free(text);
}
END_TEST

/* Each pod create takes 20 ms (the pod hook): a 1,000-worker job takes 20 s to create. */
static int slow_pod(char **out, const char *pod, const char *job, void *payload)
{
	_Atomic int *calls = payload;
	atomic_fetch_add(calls, 1);
	*out = NULL;
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	nanosleep(&ts, NULL);
	return 0;
}

/* Stopping the controller does not wait for a long reconcile: it gives up between two requests
   and writes no status for the children it did not create. */
START_TEST(stop_cuts_a_long_reconcile_short)
{
	_Atomic int calls = 0;
	tfjob_controller_hooks h = TFJOB_CONTROLLER_HOOKS_INIT;
	h.mutate_pod = slow_pod;
	h.payload = &calls;
	tfjob_controller_options o = TFJOB_CONTROLLER_OPTIONS_INIT;
	o.hooks = &h;
	C = start_on(T, &o);
	create("job-wide", "Worker:1000:Never", NULL, NULL);
	ck_assert(CU_WAIT(atomic_load(&calls) >= 5, W));
	tfjob_controller_stop(C);
	int at_stop = atomic_load(&calls);
	ck_assert_int_lt(at_stop, 100); /* not the 1,000 of the whole reconcile */
	ck_assert_int_eq(cu_count(T, NS, "pods", "job-wide"), at_stop);
	ck_assert(!cu_cond_is(T, NS, "job-wide", "Created", "True"));
}
END_TEST

START_TEST(adopts_orphans)
{
	static const tfjob_resource pods = TFJOB_RESOURCE_PODS_INIT;
	ck_assert_int_eq(tfjob_transport_create(NULL, T, &pods, NS,
		"{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"job15-worker-0\",\"labels\":{"
		"\"training.kubeflow.org/job-name\":\"job15\",\"training.kubeflow.org/operator-name\":\"tfjob-controller\","
		"\"training.kubeflow.org/replica-type\":\"worker\",\"training.kubeflow.org/replica-index\":\"0\"}},"
		"\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"x\"}]}}", NULL), 0);
	C = start_on(T, NULL);
	create("job15", "Worker:1:Never", NULL, NULL);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job15", "Created", "True"), W));
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	char *text = NULL;
	ck_assert_int_eq(tfjob_transport_get(&text, T, &pods, NS, "job15-worker-0", NULL), 0);
	ck_assert_ptr_nonnull(strstr(text, "\"ownerReferences\""));
	tfjob_free(text);
	ck_assert_int_eq(cu_count(T, NS, "pods", "job15"), 1);
	tfjob_controller_metrics m;
	metrics(&m);
	ck_assert_uint_eq(m.api_calls[TFJOB_API_PATCH], 1);
	ck_assert_uint_eq(m.api_calls[TFJOB_API_CREATE], 1); /* only the service */
}
END_TEST

START_TEST(gang_volcano_waits_for_pod_group)
{
	/* Pods wait while the PodGroup is Pending; its phase change arrives through the PodGroup watch
	   and the pods are created at once (no tfjob_controller_enqueue, no resync: there is none). */
	static const tfjob_resource pg = TFJOB_RESOURCE_PODGROUPS_INIT;
	tfjob_controller_options o = TFJOB_CONTROLLER_OPTIONS_INIT;
	o.gang_scheduler = TFJOB_GANG_VOLCANO;
	C = start_on(T, &o);
	create("job16", "Worker:2:Never", NULL, NULL);
	ck_assert(CU_WAIT(cu_exists(T, NS, "podgroups", "job16"), W));
	ck_assert(CU_WAIT(cu_count(T, NS, "services", "job16") == 2, W));
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	ck_assert_int_eq(cu_count(T, NS, "pods", "job16"), 0); /* phase "" : wait */
	ck_assert_int_eq(tfjob_transport_patch(NULL, T, &pg, NS, "job16", "status",
	                                       "{\"status\":{\"phase\":\"Pending\"}}", NULL), 0);
	cu_sleep_ms(100);
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	ck_assert_int_eq(cu_count(T, NS, "pods", "job16"), 0); /* Pending: still waiting */
	tfjob_controller_metrics m;
	metrics(&m);
	uint64_t reconciles = m.reconciles;
	ck_assert_int_eq(tfjob_transport_patch(NULL, T, &pg, NS, "job16", "status",
	                                       "{\"status\":{\"phase\":\"Inqueue\"}}", NULL), 0);
	/* no resync exists, so nothing but the PodGroup's watch event can bring the pods */
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job16") == 2, W));
	ck_assert(CU_WAIT(__extension__({ metrics(&m); m.reconciles > reconciles; }), W));
	ck_assert_uint_eq(m.api_calls[TFJOB_API_GET], 0); /* the PodGroup comes from its cache */
	char *text = NULL;
	static const tfjob_resource pods = TFJOB_RESOURCE_PODS_INIT;
	ck_assert_int_eq(tfjob_transport_get(&text, T, &pods, NS, "job16-worker-0", NULL), 0);
	ck_assert_ptr_nonnull(strstr(text, "volcano"));
	tfjob_free(text);
	/* deleted behind our back while the job runs: created again (its DELETED event queues the job) */
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	ck_assert_int_eq(tfjob_transport_delete(NULL, T, &pg, NS, "job16", NULL, NULL), 0);
	ck_assert(CU_WAIT(cu_exists(T, NS, "podgroups", "job16"), W));
	set_pod("job16-worker-0", "Succeeded", 0, 0);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job16", "Succeeded", "True"), W));
	ck_assert(CU_WAIT(!cu_exists(T, NS, "podgroups", "job16"), W));
	ck_assert(CU_WAIT(cu_events(T, NS, "SuccessfulDeletePodGroup") == 1, W)); /* recorded after the delete */
	ck_assert_int_eq(cu_events(T, NS, "JobTerminated"), 1);                  /* and before it, as v1.9 */
}
END_TEST

/*
 * A volcano PodGroup `name` with `spec` (JSON), already Running (made by an earlier incarnation),
 * then the controller (volcano) and a one-worker job of that name, run until idle with its pod.
 */
static void run_job_with_running_pod_group(const char *name, const char *spec, tfjob_compat compat)
{
	static const tfjob_resource pg = TFJOB_RESOURCE_PODGROUPS_INIT;
	char obj[512];
	snprintf(obj, sizeof obj,
	         "{\"apiVersion\":\"scheduling.volcano.sh/v1beta1\",\"kind\":\"PodGroup\",\"metadata\":{\"name\":\"%s\"},"
	         "\"spec\":%s}", name, spec);
	ck_assert_int_eq(tfjob_transport_create(NULL, T, &pg, NS, obj, NULL), 0);
	ck_assert_int_eq(tfjob_transport_patch(NULL, T, &pg, NS, name, "status", "{\"status\":{\"phase\":\"Running\"}}", NULL), 0);
	tfjob_controller_options o = TFJOB_CONTROLLER_OPTIONS_INIT;
	o.gang_scheduler = TFJOB_GANG_VOLCANO;
	o.compat = compat;
	C = start_on(T, &o);
	create(name, "Worker:1:Never", NULL, NULL);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", name) == 1, W));
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
}

START_TEST(gang_volcano_pod_group_running_before_pods)
{
	/* A PodGroup that is already Running when the job is first seen: no create, no waiting. */
	static const tfjob_resource pg = TFJOB_RESOURCE_PODGROUPS_INIT;
	run_job_with_running_pod_group("job30", "{\"minMember\":1}", TFJOB_COMPAT_DOCUMENTED);
	tfjob_controller_metrics m;
	metrics(&m);
	ck_assert_uint_eq(m.api_calls[TFJOB_API_PATCH], 1); /* its spec brought to the job's */
	ck_assert_uint_eq(m.api_calls[TFJOB_API_CREATE], 2); /* the pod and the service only */
	char *text = NULL;
	ck_assert_int_eq(tfjob_transport_get(&text, T, &pg, NS, "job30", NULL), 0);
	ck_assert_ptr_nonnull(strstr(text, "\"queue\":\"default\""));
	tfjob_free(text);
}
END_TEST

START_TEST(gang_volcano_existing_queue_kept)
{
	/* An existing volcano PodGroup's queue is kept when its spec is brought to the job's, as v1.9
	   keeps it (semantics-diff: the gang comparison's open point); the rest of the spec is ours. */
	static const tfjob_resource pg = TFJOB_RESOURCE_PODGROUPS_INIT;
	run_job_with_running_pod_group("job31", "{\"minMember\":7,\"queue\":\"research\"}", TFJOB_COMPAT_DOCUMENTED);
	char *text = NULL;
	ck_assert_int_eq(tfjob_transport_get(&text, T, &pg, NS, "job31", NULL), 0);
	ck_assert_ptr_nonnull(strstr(text, "\"queue\":\"research\""));
	ck_assert_ptr_nonnull(strstr(text, "\"minMember\":1"));
	tfjob_free(text);
}
END_TEST

START_TEST(gang_compat_finished_job_deletes_pod_group_once)
{
	/* Compat mode plans the PodGroup's delete (and its Events) at every reconcile of a finished job,
	   as v1.9 does; v1.9 reads the PodGroup first and deletes only one that is there, and so does
	   the executor from its cache: one DELETE however many reconciles follow. */
	run_job_with_running_pod_group("job32", "{\"minMember\":1}", TFJOB_COMPAT_TRAINING_OPERATOR_1_9);
	set_pod("job32-worker-0", "Succeeded", 0, 0);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job32", "Succeeded", "True"), W));
	ck_assert(CU_WAIT(!cu_exists(T, NS, "podgroups", "job32"), W));
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	for (int i = 0; i < 3; i++) { /* later reconciles of the finished job */
		ck_assert_int_eq(tfjob_controller_enqueue(C, NS, "job32"), 0);
		ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	}
	tfjob_controller_metrics m;
	metrics(&m);
	ck_assert_uint_eq(m.api_calls[TFJOB_API_DELETE], 1);
	ck_assert_int_ge(cu_events(T, NS, "JobTerminated"), 1);
	ck_assert_int_ge(cu_events(T, NS, "SuccessfulDeletePodGroup"), 1);
}
END_TEST

static void set_finalizer(const char *pod, int on)
{
	static const tfjob_resource pods = TFJOB_RESOURCE_PODS_INIT;
	ck_assert_int_eq(tfjob_transport_patch(NULL, T, &pods, NS, pod, NULL,
	                                       on ? "{\"metadata\":{\"finalizers\":[\"test/hold\"]}}"
	                                          : "{\"metadata\":{\"finalizers\":null}}", NULL), 0);
}

START_TEST(cleanup_skips_children_already_gone)
{
	/* A user deletes a running worker that finalizers keep terminating: the job fails and its
	   cleanup (cleanPodPolicy Running) deletes the other pods (terminating too) and every service.
	   The pods go one by one; the reconciles they bring plan the terminating pod's service again
	   (v1.9 reads it and finds nothing): that costs no DELETE. */
	static const tfjob_resource pods = TFJOB_RESOURCE_PODS_INIT;
	C = start_on(T, NULL);
	create("job33", "PS:1:Never,Worker:2:Never", NULL, NULL);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job33") == 3 && cu_count(T, NS, "services", "job33") == 3, W));
	const char *names[] = { "job33-ps-0", "job33-worker-0", "job33-worker-1" };
	for (int i = 0; i < 3; i++) {
		set_finalizer(names[i], 1);
		set_pod(names[i], "Running", -1, 0);
	}
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job33", "Running", "True"), W));
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	tfjob_controller_metrics m;
	metrics(&m);
	uint64_t deletes = m.api_calls[TFJOB_API_DELETE];
	ck_assert_int_eq(tfjob_transport_delete(NULL, T, &pods, NS, "job33-worker-1", NULL, NULL), 0);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job33", "Failed", "True"), W));
	ck_assert(CU_WAIT(cu_count(T, NS, "services", "job33") == 0, W));
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	/* the user's pod first (it meets the worker deletion expected), then the PS: the reconcile
	   that follows sees worker-0 still terminating */
	const int order[] = { 2, 0, 1 };
	for (int i = 0; i < 3; i++) {
		set_finalizer(names[order[i]], 0);
		ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job33") == 2 - i, W));
		ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	}
	metrics(&m);
	ck_assert_uint_eq(m.api_calls[TFJOB_API_DELETE] - deletes, 5); /* 2 pods, 3 services */
	ck_assert_int_eq(cu_events(T, NS, "SuccessfulDeleteService"), 3);
}
END_TEST

START_TEST(child_update_the_planner_cannot_see_queues_nothing)
{
	/* A pod's annotation or its node changes nothing the planner reads: no reconcile. */
	static const tfjob_resource pods = TFJOB_RESOURCE_PODS_INIT;
	C = start_on(T, NULL);
	create("job34", "Worker:1:Never", NULL, NULL);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job34") == 1, W));
	set_pod("job34-worker-0", "Running", -1, 0);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job34", "Running", "True"), W));
	/* settled: the echo of our own status write may still queue one reconcile after idle */
	tfjob_controller_metrics m;
	uint64_t reconciles, adds;
	do {
		metrics(&m);
		reconciles = m.reconciles;
		adds = m.queue_adds;
		cu_sleep_ms(300);
		ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
		metrics(&m);
	} while (m.reconciles != reconciles || m.queue_adds != adds);
	ck_assert_int_eq(tfjob_transport_patch(NULL, T, &pods, NS, "job34-worker-0", NULL,
	                                       "{\"metadata\":{\"annotations\":{\"note\":\"x\"}},"
	                                       "\"spec\":{\"nodeName\":\"node-1\"}}", NULL), 0);
	cu_sleep_ms(300); /* the watch event reaches the cache */
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	metrics(&m);
	ck_assert_uint_eq(m.reconciles, reconciles);
	ck_assert_uint_eq(m.queue_adds, adds);
	set_pod("job34-worker-0", "Succeeded", 0, 0); /* one it can see */
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job34", "Succeeded", "True"), W));
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0); /* the count follows the status write */
	metrics(&m);
	ck_assert_uint_gt(m.reconciles, reconciles);
}
END_TEST

static int count_before, count_after;
static int before_cb(const char *ns, const char *name, void *p) { (void)ns; (void)name; (void)p; __atomic_add_fetch(&count_before, 1, __ATOMIC_SEQ_CST); return 0; }
static void after_cb(const char *ns, const char *name, int rc, void *p) { (void)ns; (void)name; (void)rc; (void)p; __atomic_add_fetch(&count_after, 1, __ATOMIC_SEQ_CST); }
static int logged;
static void log_cb(tfjob_log_level l, const char *msg, const char *fields, void *p)
{
	(void)l; (void)msg; (void)p;
	json_t *f = json_loads(fields, 0, NULL);
	ck_assert(json_is_object(f));
	json_decref(f);
	__atomic_add_fetch(&logged, 1, __ATOMIC_SEQ_CST);
}

START_TEST(hooks_logging_metrics_text)
{
	tfjob_controller_hooks h;
	ck_assert_int_eq(tfjob_controller_hooks_init(&h, TFJOB_CONTROLLER_HOOKS_VERSION), 0);
	h.before_reconcile = before_cb;
	h.after_reconcile = after_cb;
	h.log = log_cb;
	h.log_level = TFJOB_LOG_DEBUG;
	tfjob_controller_options o;
	ck_assert_int_eq(tfjob_controller_options_init(&o, TFJOB_CONTROLLER_OPTIONS_VERSION), 0);
	ck_assert_int_eq(tfjob_controller_options_init(&o, 99), TFJOB_EVERSION);
	ck_assert_int_eq(tfjob_controller_options_init(&o, TFJOB_CONTROLLER_OPTIONS_VERSION), 0);
	o.hooks = &h;
	o.workers = 2;
	C = start_on(T, &o);
	ck_assert(tfjob_controller_is_ready(C));
	ck_assert(tfjob_controller_is_leader(C));
	create("job17", "Worker:1:Never", NULL, NULL);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job17", "Created", "True"), W));
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	ck_assert_int_ge(__atomic_load_n(&count_before, __ATOMIC_SEQ_CST), 1);
	ck_assert_int_eq(__atomic_load_n(&count_before, __ATOMIC_SEQ_CST), __atomic_load_n(&count_after, __ATOMIC_SEQ_CST));
	ck_assert_int_ge(__atomic_load_n(&logged, __ATOMIC_SEQ_CST), 1);
	char *text = NULL;
	ck_assert_int_eq(tfjob_controller_metrics_text(&text, C, NULL), 0);
	ck_assert_ptr_nonnull(strstr(text, "training_operator_jobs_created_total{framework=\"tensorflow\"} 1\n"));
	ck_assert_ptr_nonnull(strstr(text, "tfjob_controller_reconcile_time_seconds_bucket{le=\"+Inf\"}"));
	ck_assert_ptr_nonnull(strstr(text, "workqueue_depth{name=\"tfjob\"} 0\n"));
	ck_assert_ptr_nonnull(strstr(text, "tfjob_controller_api_requests_total{verb=\"create\"} 1\n") ? "" : strstr(text, "verb=\"create\"} 2"));
	tfjob_free(text);
	ck_assert_str_eq(tfjob_api_verb_name(TFJOB_API_UPDATE_STATUS), "update_status");
	ck_assert(tfjob_controller_latency_bucket_bound(0) == 0.005);
	ck_assert_int_eq(tfjob_controller_start(C, NULL), TFJOB_ESTATE);
	tfjob_controller_stop(C);
	tfjob_controller_stop(C); /* idempotent */
	tfjob_controller_metrics m = { .version = 99 };
	ck_assert_int_eq(tfjob_controller_metrics_get(&m, C), TFJOB_EVERSION);
}
END_TEST

START_TEST(leader_election_failover)
{
	tfjob_controller_options o = TFJOB_CONTROLLER_OPTIONS_INIT;
	o.leader_election = 1;
	o.lease_duration_ms = 1000;
	o.renew_deadline_ms = 600;
	o.retry_period_ms = 100;
	o.identity = "one";
	C = start_on(T, &o);
	ck_assert(CU_WAIT(tfjob_controller_is_leader(C), W));
	o.identity = "two";
	tfjob_controller *c2 = start_on(T, &o);
	cu_sleep_ms(300);
	ck_assert(!tfjob_controller_is_leader(c2));
	create("job18", "Worker:1:Never", NULL, NULL);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job18") == 1, W));
	char *text = NULL;
	static const tfjob_resource leases = { "coordination.k8s.io", "v1", "leases", 1 };
	ck_assert_int_eq(tfjob_transport_get(&text, T, &leases, NS, "1ca428e5.training-operator.kubeflow.org", NULL), 0);
	ck_assert_ptr_nonnull(strstr(text, "\"holderIdentity\":\"one\""));
	tfjob_free(text);
	tfjob_controller_stop(C); /* releases the lease */
	ck_assert(CU_WAIT(tfjob_controller_is_leader(c2), W));
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job18", "Created", "True"), W));
	ck_assert_int_eq(tfjob_transport_get(&text, T, &leases, NS, "1ca428e5.training-operator.kubeflow.org", NULL), 0);
	ck_assert_ptr_nonnull(strstr(text, "\"holderIdentity\":\"two\""));
	ck_assert_ptr_nonnull(strstr(text, "\"leaseTransitions\":1"));
	tfjob_free(text);
	ck_assert_int_eq(tfjob_controller_wait_idle(c2, W), 0);
	ck_assert_int_eq(cu_count(T, NS, "pods", "job18"), 1);
	tfjob_controller_free(c2);
}
END_TEST

/* A leader whose Lease was last renewed longer ago than the renew deadline writes nothing (another
   replica may hold the Lease by now) until its manager renews it; then the job goes on. The long
   retry period stands for a manager that could not renew (a paused process, a slow request). */
START_TEST(leader_fenced_past_renew_deadline)
{
	tfjob_controller_options o = TFJOB_CONTROLLER_OPTIONS_INIT;
	o.leader_election = 1;
	o.lease_duration_ms = 5000;
	o.renew_deadline_ms = 300;
	o.retry_period_ms = 2500;
	o.identity = "me";
	C = start_on(T, &o);
	ck_assert(CU_WAIT(tfjob_controller_is_leader(C), W));
	int64_t won = cu_mono();
	cu_sleep_ms(600); /* past the renew deadline; the next renewal is 2.5 s after the first */
	create("job60", "Worker:1:Never", NULL, NULL);
	cu_sleep_ms(800);
	if (cu_mono() - won < 2300) { /* (a loaded machine may have renewed already: nothing to check then) */
		ck_assert_int_eq(cu_count(T, NS, "pods", "job60"), 0);
		ck_assert(!cu_cond_is(T, NS, "job60", "Created", "True"));
	}
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job60") == 1, W));
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job60", "Created", "True"), W));
	ck_assert(tfjob_controller_is_leader(C));
}
END_TEST

START_TEST(relist_after_compaction_and_restart)
{
	/* A controller restarted on a store that changed meanwhile converges with no duplicates. */
	C = start_on(T, NULL);
	create("job19", "Worker:3:Never", NULL, NULL);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job19") == 3, W));
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	tfjob_controller_free(C);
	static const tfjob_resource pods = TFJOB_RESOURCE_PODS_INIT;
	ck_assert_int_eq(tfjob_transport_delete(NULL, T, &pods, NS, "job19-worker-2", NULL, NULL), 0);
	tfjob_memory_compact(T);
	C = start_on(T, NULL);
	ck_assert(CU_WAIT(cu_exists(T, NS, "pods", "job19-worker-2"), W));
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	ck_assert_int_eq(cu_count(T, NS, "pods", "job19"), 3);
	tfjob_controller_metrics m;
	metrics(&m);
	ck_assert_uint_eq(m.api_calls[TFJOB_API_CREATE], 1);
}
END_TEST

START_TEST(watch_gone_relists)
{
	/* Writes followed at once by a compaction leave a watch behind the history: 410 Gone ends
	   it, the controller lists again and carries on. */
	static const tfjob_resource tfjobs = TFJOB_RESOURCE_TFJOBS_INIT;
	C = start_on(T, NULL);
	create("job20", "Worker:1:Never", NULL, NULL);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job20") == 1, W));
	tfjob_controller_metrics m;
	for (int attempt = 0; attempt < 50; attempt++) {
		for (int i = 0; i < 30; i++) {
			char patch[128];
			snprintf(patch, sizeof(patch), "{\"metadata\":{\"annotations\":{\"n\":\"%d-%d\"}}}", attempt, i);
			tfjob_transport_patch(NULL, T, &tfjobs, NS, "job20", NULL, patch, NULL);
		}
		tfjob_memory_compact(T);
		cu_sleep_ms(20);
		metrics(&m);
		if (m.relists > 0)
			break;
	}
	ck_assert_uint_ge(m.relists, 1);
	ck_assert(CU_WAIT(tfjob_controller_is_ready(C), W));
	create("job21", "Worker:2:Never", NULL, NULL);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job21") == 2, W));
	set_pod("job20-worker-0", "Succeeded", 0, 0);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job20", "Succeeded", "True"), W));
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	ck_assert_int_eq(cu_count(T, NS, "pods", "job20"), 1);
}
END_TEST

START_TEST(releases_relabelled_child)
{
	static const tfjob_resource pods = TFJOB_RESOURCE_PODS_INIT;
	C = start_on(T, NULL);
	create("job22", "Worker:1:Never", NULL, NULL);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job22") == 1, W));
	char *uid1 = cu_uid(T, NS, "pods", "job22-worker-0");
	/* the pod no longer matches the job's selector: released (our reference removed) and replaced */
	ck_assert_int_eq(tfjob_transport_patch(NULL, T, &pods, NS, "job22-worker-0", NULL,
	                                       "{\"metadata\":{\"labels\":{\"training.kubeflow.org/job-name\":\"someone-else\"}}}",
	                                       NULL), 0);
	/* (its name stays taken, so no replacement can be created while it exists: as training-operator) */
	char *text = NULL;
	int released = 0;
	json_t *l = NULL;
	for (int tries = 0; tries < 2000 && !released; tries++) {
	json_decref(l);
	cu_sleep_ms(5);
	ck_assert_int_eq(tfjob_transport_list(&text, T, &pods, NS, NULL, NULL), 0);
	l = json_loads(text, 0, NULL);
	tfjob_free(text);
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(l, "items"), i, p) {
		const char *u = json_string_value(json_object_get(json_object_get(p, "metadata"), "uid"));
		if (u && !strcmp(u, uid1))
			released = json_array_size(json_object_get(json_object_get(p, "metadata"), "ownerReferences")) == 0;
	}
	}
	json_decref(l);
	if (!released) {
		free(uid1);
		uid1 = NULL;
	}
	ck_assert_ptr_nonnull(uid1);
	free(uid1);
}
END_TEST

/* Someone else keeps taking the Lease: the controller stops reconciling by itself. */
START_TEST(leader_election_lost)
{
	static const tfjob_resource leases = { "coordination.k8s.io", "v1", "leases", 1 };
	tfjob_controller_options o = TFJOB_CONTROLLER_OPTIONS_INIT;
	o.leader_election = 1;
	o.lease_duration_ms = 1000;
	o.renew_deadline_ms = 400;
	o.retry_period_ms = 50;
	o.identity = "me";
	C = start_on(T, &o);
	ck_assert(CU_WAIT(tfjob_controller_is_leader(C), W));
	ck_assert_int_eq(tfjob_controller_wait_stopped(C, 0), TFJOB_ETIMEOUT);
	int64_t end = cu_mono() + 5000;
	int stopped = 0;
	for (int n = 0; cu_mono() < end && !stopped; n++) {
		char patch[256];
		snprintf(patch, sizeof(patch), "{\"spec\":{\"holderIdentity\":\"thief\",\"renewTime\":\"2030-01-01T00:00:%02d.000000Z\"}}", n % 60);
		tfjob_transport_patch(NULL, T, &leases, NS, "1ca428e5.training-operator.kubeflow.org", NULL, patch, NULL);
		stopped = tfjob_controller_wait_stopped(C, 20) == 0;
	}
	ck_assert(stopped);
	ck_assert(!tfjob_controller_is_leader(C));
	ck_assert(!tfjob_controller_is_ready(C));
}
END_TEST

START_TEST(job_being_deleted_left_alone)
{
	static const tfjob_resource tfjobs = TFJOB_RESOURCE_TFJOBS_INIT, pods = TFJOB_RESOURCE_PODS_INIT;
	C = start_on(T, NULL);
	create("job23", "Worker:2:Never", NULL, NULL);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job23") == 2, W));
	ck_assert_int_eq(tfjob_transport_patch(NULL, T, &tfjobs, NS, "job23", NULL,
	                                       "{\"metadata\":{\"finalizers\":[\"example.com/keep\"]}}", NULL), 0);
	tfjob_delete_options d = TFJOB_DELETE_OPTIONS_INIT;
	d.propagation = TFJOB_PROPAGATION_ORPHAN;
	ck_assert_int_eq(tfjob_transport_delete(NULL, T, &tfjobs, NS, "job23", &d, NULL), 0);
	ck_assert(cu_job_exists(T, NS, "job23")); /* kept by its finalizer, with a deletionTimestamp */
	/* let the job's watch deliver the deletionTimestamp first (watches of different resources
	   are not ordered with each other, as with any informer) */
	cu_sleep_ms(100);
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	ck_assert_int_eq(tfjob_transport_delete(NULL, T, &pods, NS, "job23-worker-1", NULL, NULL), 0);
	cu_sleep_ms(50);
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	ck_assert(!cu_exists(T, NS, "pods", "job23-worker-1")); /* not recreated */
}
END_TEST

static int by_rv(const void *a, const void *b)
{
	const json_t *x = *(json_t *const *)a, *y = *(json_t *const *)b;
	long long rx = atoll(json_string_value(json_object_get(json_object_get(x, "metadata"), "resourceVersion")));
	long long ry = atoll(json_string_value(json_object_get(json_object_get(y, "metadata"), "resourceVersion")));
	return rx < ry ? -1 : rx > ry;
}

/* Children are created in the planner's order (the store's resourceVersions tell the order). */
START_TEST(executor_follows_plan_order)
{
	char *j = cu_job("job24", "Chief:1:Never,PS:2:Never,Worker:3:Never", NULL, NULL);
	ck_assert_int_eq(cu_create_job(T, j), 0);
	static const tfjob_resource tfjobs = TFJOB_RESOURCE_TFJOBS_INIT;
	char *stored = NULL;
	ck_assert_int_eq(tfjob_transport_get(&stored, T, &tfjobs, NS, "job24", NULL), 0);
	tfjob_job *job = tu_parse(stored);
	tfjob_plan_options po = TFJOB_PLAN_OPTIONS_INIT;
	po.now = cu_now;
	tfjob_plan *plan = NULL;
	ck_assert_int_eq(tfjob_plan_new(&plan, job, NULL, NULL, &po, NULL), 0);
	json_t *want = json_array();
	for (size_t i = 0; i < tfjob_plan_action_count(plan); i++)
		if (tfjob_plan_action_type(plan, i) == TFJOB_ACTION_CREATE)
			json_array_append_new(want, json_sprintf("%s/%s", tfjob_object_kind_name(tfjob_plan_action_kind(plan, i)),
			                                         tfjob_plan_action_name(plan, i)));
	ck_assert_uint_eq(json_array_size(want), 12);
	C = start_on(T, NULL);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "job24", "Created", "True"), W));
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	json_t *all[64];
	size_t n = 0;
	const char *kinds[2] = { "pods", "services" };
	json_t *lists[2];
	for (int k = 0; k < 2; k++) {
		char *text = NULL;
		ck_assert_int_eq(tfjob_transport_list(&text, T, tfjob_resource_lookup(kinds[k]), NS, NULL, NULL), 0);
		lists[k] = json_loads(text, 0, NULL);
		tfjob_free(text);
		size_t i;
		json_t *o;
		json_array_foreach(json_object_get(lists[k], "items"), i, o) {
			json_object_set_new(o, "kind", json_string(k ? "Service" : "Pod"));
			all[n++] = o;
		}
	}
	qsort(all, n, sizeof(all[0]), by_rv);
	ck_assert_uint_eq(n, 12);
	for (size_t i = 0; i < n; i++) {
		char got[256];
		snprintf(got, sizeof(got), "%s/%s", json_string_value(json_object_get(all[i], "kind")),
		         json_string_value(json_object_get(json_object_get(all[i], "metadata"), "name")));
		ck_assert_str_eq(got, json_string_value(json_array_get(want, i)));
	}
	json_decref(lists[0]);
	json_decref(lists[1]);
	json_decref(want);
	tfjob_plan_free(plan);
	tfjob_job_free(job);
	tfjob_free(stored);
	free(j);
}
END_TEST

START_TEST(gang_scheduler_plugins_and_namespace)
{
	tfjob_controller_options o = TFJOB_CONTROLLER_OPTIONS_INIT;
	o.gang_scheduler = TFJOB_GANG_SCHEDULER_PLUGINS;
	o.namespace_name = NS; /* jobs elsewhere are not ours */
	C = start_on(T, &o);
	char *j = cu_job("elsewhere", "Worker:1:Never", NULL, NULL);
	char *p = strstr(j, "\"namespace\":\"default\"");
	memcpy(p, "\"namespace\":\"other00\"", strlen("\"namespace\":\"other00\""));
	ck_assert_int_eq(tfjob_transport_create(NULL, T, tfjob_resource_lookup("tfjobs"), "other00", j, NULL), 0);
	free(j);
	create("job25", "Worker:2:Never", NULL, NULL);
	static const tfjob_resource pg = { "scheduling.x-k8s.io", "v1alpha1", "podgroups", 1 };
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "job25") == 2, W)); /* scheduler-plugins: no waiting */
	ck_assert_int_eq(tfjob_transport_get(NULL, T, &pg, NS, "job25", NULL), 0);
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	ck_assert_int_eq(cu_count(T, "other00", "pods", "elsewhere"), 0);
	ck_assert(!cu_cond_is(T, "other00", "elsewhere", "Created", "True"));
	/* the scheduler-plugins PodGroup is watched too: a spec changed by someone else is put back */
	ck_assert_int_eq(tfjob_transport_patch(NULL, T, &pg, NS, "job25", NULL, "{\"spec\":{\"minMember\":7}}", NULL), 0);
	ck_assert(CU_WAIT(__extension__({ char *t_ = NULL; tfjob_transport_get(&t_, T, &pg, NS, "job25", NULL);
	                                  int ok_ = t_ && strstr(t_, "\"minMember\":2"); tfjob_free(t_); ok_; }), W));
}
END_TEST

/* ---- an API server that goes away: a transport in front of the memory store that fails every
   call with TFJOB_ENETWORK and breaks every watch while `down` is set ---- */

typedef struct flaky {
	tfjob_transport *inner;
	_Atomic int down;
	_Atomic int watches; /* watch streams started */
	_Atomic int prune_active; /* status writes lose status.replicaStatuses.*.active, as a CRD
	                                schema without that field would prune it */
	_Atomic int status_delay_ms;  /* each status write first waits this long, as a busy server */
	_Atomic int status_in_flight, status_max_in_flight, status_writes;
	pthread_mutex_t mu;           /* guards writing[] */
	char writing[64][128];        /* the jobs whose status is being written */
	_Atomic int same_job_at_once; /* two writes of one job's status overlapped */
	_Atomic int sorted_answers;   /* status writes answer with keys sorted, as the API server does */
} flaky;

static tfjob_error *net_error(void)
{
	return tfjob_transport_error_new(TFJOB_ENETWORK, 0, "connection refused (test)", NULL);
}

#define FLAKY_GUARD(f, err) do { if ((f)->down) { if (err) *(err) = net_error(); return TFJOB_ENETWORK; } } while (0)

static void fl_free(void *d)
{
	pthread_mutex_destroy(&((flaky *)d)->mu);
	free(d);
}
static const char *fl_ns(void *d) { return tfjob_transport_namespace(((flaky *)d)->inner); }
static int fl_get(void *d, char **out, const tfjob_resource *res, const char *ns, const char *name, tfjob_error **err)
{
	FLAKY_GUARD((flaky *)d, err);
	return tfjob_transport_get(out, ((flaky *)d)->inner, res, ns, name, err);
}
static int fl_list(void *d, char **out, const tfjob_resource *res, const char *ns, const tfjob_list_options *o,
                   tfjob_error **err)
{
	FLAKY_GUARD((flaky *)d, err);
	return tfjob_transport_list(out, ((flaky *)d)->inner, res, ns, o, err);
}
static int fl_create(void *d, char **out, const tfjob_resource *res, const char *ns, const char *obj, tfjob_error **err)
{
	FLAKY_GUARD((flaky *)d, err);
	return tfjob_transport_create(out, ((flaky *)d)->inner, res, ns, obj, err);
}
static int fl_update(void *d, char **out, const tfjob_resource *res, const char *ns, const char *name,
                     const char *obj, tfjob_error **err)
{
	(void)name;
	FLAKY_GUARD((flaky *)d, err);
	return tfjob_transport_update(out, ((flaky *)d)->inner, res, ns, obj, err);
}
/* A status write that takes status_delay_ms, noting how many overlap and whether two of one job
   ever do. */
static int writing_slot(flaky *f, const char *name, int take)
{
	int slot = -1;
	pthread_mutex_lock(&f->mu);
	for (int i = 0; i < 64; i++) {
		if (take && !f->writing[i][0] && slot < 0)
			slot = i;
		else if (take && !strcmp(f->writing[i], name))
			f->same_job_at_once = 1;
		else if (!take && !strcmp(f->writing[i], name))
			f->writing[i][0] = 0;
	}
	if (slot >= 0)
		snprintf(f->writing[slot], sizeof(f->writing[slot]), "%s", name);
	pthread_mutex_unlock(&f->mu);
	return slot;
}

static int slow_update_status(flaky *f, char **out, const tfjob_resource *res, const char *ns, const char *obj,
                              tfjob_error **err)
{
	json_t *o = json_loads(obj, 0, NULL);
	char name[128];
	snprintf(name, sizeof(name), "%s", json_string_value(json_object_get(json_object_get(o, "metadata"), "name")));
	json_decref(o);
	writing_slot(f, name, 1);
	int now = atomic_fetch_add(&f->status_in_flight, 1) + 1;
	for (int max = f->status_max_in_flight; now > max && !atomic_compare_exchange_weak(&f->status_max_in_flight, &max, now);)
		;
	cu_sleep_ms(f->status_delay_ms);
	int rc = tfjob_transport_update_status(out, f->inner, res, ns, obj, err);
	atomic_fetch_sub(&f->status_in_flight, 1);
	writing_slot(f, name, 0);
	atomic_fetch_add(&f->status_writes, 1);
	return rc;
}

static int fl_update_status_as_asked(flaky *f, char **out, const tfjob_resource *res, const char *ns,
                                     const char *obj, tfjob_error **err)
{
	if (f->status_delay_ms)
		return slow_update_status(f, out, res, ns, obj, err);
	if (!f->prune_active)
		return tfjob_transport_update_status(out, f->inner, res, ns, obj, err);
	json_t *o = json_loads(obj, 0, NULL);
	const char *k;
	json_t *rs;
	json_object_foreach(json_object_get(json_object_get(o, "status"), "replicaStatuses"), k, rs)
		json_object_del(rs, "active");
	char *pruned = json_dumps(o, JSON_COMPACT);
	json_decref(o);
	int rc = tfjob_transport_update_status(out, f->inner, res, ns, pruned, err);
	free(pruned);
	return rc;
}

static int fl_update_status(void *d, char **out, const tfjob_resource *res, const char *ns, const char *name,
                            const char *obj, tfjob_error **err)
{
	(void)name;
	flaky *f = d;
	FLAKY_GUARD(f, err);
	int rc = fl_update_status_as_asked(f, out, res, ns, obj, err);
	if (rc == 0 && out && *out && f->sorted_answers) {
		json_t *o = json_loads(*out, 0, NULL);
		char *sorted = o ? json_dumps(o, JSON_COMPACT | JSON_SORT_KEYS) : NULL;
		json_decref(o);
		ck_assert_ptr_nonnull(sorted);
		tfjob_free(*out);
		*out = sorted; /* malloc'd, as tfjob_free() expects */
	}
	return rc;
}
static int fl_patch(void *d, char **out, const tfjob_resource *res, const char *ns, const char *name, const char *sub,
                    const char *patch, tfjob_error **err)
{
	FLAKY_GUARD((flaky *)d, err);
	return tfjob_transport_patch(out, ((flaky *)d)->inner, res, ns, name, sub, patch, err);
}
static int fl_del(void *d, char **out, const tfjob_resource *res, const char *ns, const char *name,
                  const tfjob_delete_options *o, tfjob_error **err)
{
	FLAKY_GUARD((flaky *)d, err);
	return tfjob_transport_delete(out, ((flaky *)d)->inner, res, ns, name, o, err);
}

typedef struct fl_stream {
	tfjob_watch_sink *sink;
	_Atomic int closed;
	int code;
} fl_stream;

static int fl_on_event(tfjob_watch_event type, const char *json, void *p)
{
	return tfjob_watch_sink_emit(((fl_stream *)p)->sink, type, json);
}

static void fl_on_closed(int code, const tfjob_error *err, void *p)
{
	(void)err;
	fl_stream *st = p;
	st->code = code;
	st->closed = 1;
}

static int fl_watch(void *d, tfjob_watch_sink *sink, const tfjob_resource *res, const char *ns,
                    const tfjob_watch_options *opts, tfjob_error **err)
{
	flaky *f = d;
	FLAKY_GUARD(f, err);
	fl_stream st = { sink, 0, 0 };
	tfjob_watch_options wo = *opts;
	wo.on_event = fl_on_event;
	wo.on_closed = fl_on_closed;
	wo.payload = &st;
	tfjob_watch *w = NULL;
	int rc = tfjob_transport_watch(&w, f->inner, res, ns, &wo, err);
	if (rc)
		return rc;
	f->watches++;
	while (!tfjob_watch_sink_stopped(sink) && !f->down && !st.closed)
		cu_sleep_ms(5);
	tfjob_watch_free(w);
	if (tfjob_watch_sink_stopped(sink))
		return 0;
	if (f->down) {
		if (err)
			*err = net_error();
		return TFJOB_ENETWORK;
	}
	return st.code;
}

static tfjob_transport *flaky_new(tfjob_transport *inner, flaky **out)
{
	flaky *f = calloc(1, sizeof(*f));
	f->inner = inner;
	pthread_mutex_init(&f->mu, NULL);
	tfjob_transport_backend be = { TFJOB_TRANSPORT_BACKEND_VERSION, f, fl_free, fl_ns, fl_get, fl_list, fl_create,
	                               fl_update, fl_update_status, fl_patch, fl_del, fl_watch, NULL, NULL };
	tfjob_transport *t = NULL;
	ck_assert_int_eq(tfjob_transport_new(&t, &be, NULL), 0);
	*out = f;
	return t;
}

START_TEST(api_server_outage)
{
	/* Jobs in flight when the API server goes away: the watches break (not ready), resume from
	   their last resourceVersion when it is back (no relist needed), and everything converges with
	   no duplicate or recreated pod. Meanwhile a job was created, a pod finished, and a PodGroup
	   turned Inqueue: all of it is caught up from the watches. */
	static const tfjob_resource pg = TFJOB_RESOURCE_PODGROUPS_INIT;
	flaky *f = NULL;
	tfjob_transport *ft = flaky_new(T, &f);
	tfjob_controller_options o = TFJOB_CONTROLLER_OPTIONS_INIT;
	o.gang_scheduler = TFJOB_GANG_VOLCANO;
	o.workers = 2;
	o.backoff_max_ms = 200; /* keep the retries of failed reconciles short */
	C = start_on(ft, &o);
	create("out1", "PS:1:Never,Worker:2:Never", NULL, NULL);
	ck_assert(CU_WAIT(cu_exists(T, NS, "podgroups", "out1"), W));
	ck_assert_int_eq(tfjob_transport_patch(NULL, T, &pg, NS, "out1", "status", "{\"status\":{\"phase\":\"Running\"}}", NULL), 0);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "out1") == 3, W));
	set_pod("out1-ps-0", "Running", -1, 0);
	set_pod("out1-worker-0", "Running", -1, 0);
	set_pod("out1-worker-1", "Running", -1, 0);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "out1", "Running", "True"), W));
	create("out2", "Worker:2:Never", NULL, NULL); /* its PodGroup stays Pending: no pods yet */
	ck_assert(CU_WAIT(cu_exists(T, NS, "podgroups", "out2"), W));
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	ck_assert(tfjob_controller_is_ready(C));
	char *uids[3] = { cu_uid(T, NS, "pods", "out1-ps-0"), cu_uid(T, NS, "pods", "out1-worker-0"),
	                  cu_uid(T, NS, "pods", "out1-worker-1") };
	tfjob_controller_metrics m0, m1;
	m0.version = TFJOB_CONTROLLER_METRICS_VERSION;
	ck_assert_int_eq(tfjob_controller_metrics_get(&m0, C), 0);
	ck_assert_int_eq(m0.caches_synced, 1);

	f->down = 1;
	ck_assert(CU_WAIT(!tfjob_controller_is_ready(C), W)); /* every watch broke */
	/* what happens meanwhile (through another way in, as a second API server would) */
	set_pod("out1-worker-0", "Succeeded", 0, 0);
	create("out3", "Worker:1:Never", NULL, NULL);
	ck_assert_int_eq(tfjob_transport_patch(NULL, T, &pg, NS, "out2", "status", "{\"status\":{\"phase\":\"Inqueue\"}}", NULL), 0);
	cu_sleep_ms(300);
	ck_assert(!tfjob_controller_is_ready(C));
	char *mt = NULL;
	ck_assert_int_eq(tfjob_controller_metrics_text(&mt, C, NULL), 0);
	ck_assert_ptr_nonnull(strstr(mt, "tfjob_controller_cache_synced{resource=\"pods\"} 0\n"));
	tfjob_free(mt);
	ck_assert_int_eq(cu_count(T, NS, "pods", "out2"), 0);

	f->down = 0;
	ck_assert(CU_WAIT(tfjob_controller_is_ready(C), W));
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "out1", "Succeeded", "True"), W));
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "out2") == 2, W));
	ck_assert(CU_WAIT(cu_exists(T, NS, "podgroups", "out3") && cu_count(T, NS, "services", "out3") == 1, W));
	ck_assert_int_eq(cu_count(T, NS, "pods", "out3"), 0);
	ck_assert_int_eq(tfjob_transport_patch(NULL, T, &pg, NS, "out3", "status", "{\"status\":{\"phase\":\"Inqueue\"}}", NULL), 0);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "out3") == 1, W));
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "out3", "Created", "True"), W));
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	/* out1: cleanPodPolicy Running removed the running PS and worker 1; worker 0 is the same pod */
	char *now0 = cu_uid(T, NS, "pods", "out1-worker-0");
	ck_assert_ptr_nonnull(now0);
	ck_assert_str_eq(now0, uids[1]);
	free(now0);
	ck_assert_int_eq(cu_count(T, NS, "pods", "out1"), 1);
	ck_assert_int_eq(cu_events(T, NS, "SuccessfulCreatePod"), 3 + 2 + 1); /* each pod created once */
	m1.version = TFJOB_CONTROLLER_METRICS_VERSION;
	ck_assert_int_eq(tfjob_controller_metrics_get(&m1, C), 0);
	ck_assert_uint_ge(m1.watch_errors, m0.watch_errors + 4); /* jobs, pods, services, podgroups */
	ck_assert_uint_ge(m1.watch_restarts, m0.watch_restarts + 4);
	ck_assert_uint_eq(m1.relists, m0.relists); /* resumed, not relisted: the history was still there */
	ck_assert_int_eq(m1.caches_synced, 1);
	/* version 1 callers get version 1's fields only */
	tfjob_controller_metrics v1;
	memset(&v1, 0xab, sizeof(v1));
	v1.version = 1;
	ck_assert_int_eq(tfjob_controller_metrics_get(&v1, C), 0);
	ck_assert_uint_eq(v1.watch_restarts, 0xababababababababULL);
	for (int i = 0; i < 3; i++)
		free(uids[i]);
	tfjob_controller_free(C);
	C = NULL;
	tfjob_transport_free(ft);
}
END_TEST

/* n jobs of one worker through one reconcile worker and `writers` status writers, on a server
   whose status writes take 20 ms: every job Created, then Succeeded. Returns the most status
   writes that were in flight at once. */
static int slow_status_run(int writers, int n)
{
	flaky *f = NULL;
	tfjob_transport *ft = flaky_new(T, &f);
	f->status_delay_ms = 20;
	f->sorted_answers = 1; /* the written job is cached as it came back, unparsed */
	tfjob_controller_options o = TFJOB_CONTROLLER_OPTIONS_INIT;
	o.workers = 1;
	o.status_writers = writers;
	C = start_on(ft, &o);
	char name[64];
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "slow-%d", i);
		create(name, "Worker:1:Never", NULL, NULL);
	}
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "slow-%d", i);
		ck_assert(CU_WAIT(cu_cond_is(T, NS, name, "Created", "True"), W));
	}
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "slow-%d-worker-0", i);
		set_pod(name, "Succeeded", 0, 0);
	}
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "slow-%d", i);
		ck_assert(CU_WAIT(cu_cond_is(T, NS, name, "Succeeded", "True"), W));
	}
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	tfjob_controller_metrics m;
	metrics(&m);
	ck_assert_uint_eq(m.jobs_created, (uint64_t)n);
	ck_assert_uint_eq(m.jobs_succeeded, (uint64_t)n);
	ck_assert_uint_eq(m.reconcile_errors, 0);
	ck_assert_uint_eq(m.status_conflicts, 0); /* each write planned from the job as last written */
	ck_assert_uint_eq(m.api_calls[TFJOB_API_UPDATE_STATUS], (uint64_t)f->status_writes);
	ck_assert_int_eq(cu_events(T, NS, "SuccessfulCreatePod"), n); /* the Events follow their writes */
	ck_assert_int_eq(f->same_job_at_once, 0);
	int most = f->status_max_in_flight;
	tfjob_controller_free(C);
	C = NULL;
	tfjob_transport_free(ft);
	return most;
}

START_TEST(status_writes_leave_the_worker)
{
	/* One reconcile worker, four writers: the worker goes on while statuses are written, so
	   writes of different jobs overlap, never two of one job. */
	int most = slow_status_run(4, 12);
	ck_assert_int_ge(most, 2);
	ck_assert_int_le(most, 4);
}
END_TEST

START_TEST(status_writes_by_the_worker)
{
	/* Writers turned off: the one worker writes each status itself, one at a time. */
	ck_assert_int_eq(slow_status_run(-1, 6), 1);
}
END_TEST

START_TEST(stop_leaves_queued_status_writes)
{
	/* A stop does not wait for the status writes queued behind slow ones: they are left to the
	   next start, which writes them. */
	flaky *f = NULL;
	tfjob_transport *ft = flaky_new(T, &f);
	f->status_delay_ms = 300;
	tfjob_controller_options o = TFJOB_CONTROLLER_OPTIONS_INIT;
	o.workers = 1;
	o.status_writers = 1;
	C = start_on(ft, &o);
	char name[64];
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "left-%d", i);
		create(name, "Worker:1:Never", NULL, NULL);
	}
	ck_assert(CU_WAIT(f->status_in_flight == 1, W)); /* the first write is in progress */
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "left-2") == 1, W)); /* and more are decided */
	tfjob_controller_stop(C);
	ck_assert_int_le(f->status_writes, 2); /* the one in progress, perhaps one more that began */
	int done = f->status_writes;
	tfjob_controller_free(C);
	f->status_delay_ms = 1;
	C = start_on(ft, &o);
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "left-%d", i);
		ck_assert(CU_WAIT(cu_cond_is(T, NS, name, "Created", "True"), W));
	}
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	ck_assert_int_ge(f->status_writes, done + 2);
	ck_assert_int_eq(cu_events(T, NS, "SuccessfulCreatePod"), 4); /* each pod created once */
	tfjob_controller_free(C);
	C = NULL;
	tfjob_transport_free(ft);
}
END_TEST

START_TEST(outage_longer_than_history_relists)
{
	/* Down long enough for the history to be compacted: resuming fails with 410 Gone, the
	   caches are listed again, and a job deleted meanwhile is forgotten. */
	flaky *f = NULL;
	tfjob_transport *ft = flaky_new(T, &f);
	tfjob_controller_options o = TFJOB_CONTROLLER_OPTIONS_INIT;
	o.backoff_max_ms = 200;
	C = start_on(ft, &o);
	create("gone1", "Worker:1:Never", NULL, NULL);
	create("gone2", "Worker:1:Never", NULL, NULL);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "gone1") == 1 && cu_count(T, NS, "pods", "gone2") == 1, W));
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	f->down = 1;
	ck_assert(CU_WAIT(!tfjob_controller_is_ready(C), W));
	static const tfjob_resource tfjobs = TFJOB_RESOURCE_TFJOBS_INIT;
	ck_assert_int_eq(tfjob_transport_delete(NULL, T, &tfjobs, NS, "gone2", NULL, NULL), 0);
	set_pod("gone1-worker-0", "Succeeded", 0, 0);
	tfjob_memory_compact(T);
	tfjob_controller_metrics m;
	metrics(&m);
	uint64_t relists = m.relists;
	f->down = 0;
	ck_assert(CU_WAIT(tfjob_controller_is_ready(C), W));
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "gone1", "Succeeded", "True"), W));
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	metrics(&m);
	ck_assert_uint_gt(m.relists, relists);
	ck_assert_int_eq(cu_count(T, NS, "pods", "gone1"), 1);
	tfjob_controller_free(C);
	C = NULL;
	tfjob_transport_free(ft);
}
END_TEST

START_TEST(api_errors)
{
	tfjob_controller *c = NULL;
	ck_assert_int_eq(tfjob_controller_new(&c, NULL, NULL, NULL), TFJOB_EINVAL);
	tfjob_controller_options o = TFJOB_CONTROLLER_OPTIONS_INIT;
	o.version = 7;
	ck_assert_int_eq(tfjob_controller_new(&c, T, &o, NULL), TFJOB_EVERSION);
	tfjob_controller_free(NULL);
	ck_assert_int_eq(tfjob_controller_hooks_init(NULL, 1), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_controller_wait_idle(NULL, 0), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_controller_is_ready(NULL), 0);
	ck_assert_str_eq(tfjob_api_verb_name((tfjob_api_verb)42), "unknown");
}
END_TEST

static pthread_mutex_t pruned_mu = PTHREAD_MUTEX_INITIALIZER;
static char pruned_seen[512];

static void pruned_log(tfjob_log_level l, const char *msg, const char *fields, void *p)
{
	(void)p;
	if (l == TFJOB_LOG_WARN && strstr(msg, "stored status differs")) {
		pthread_mutex_lock(&pruned_mu);
		snprintf(pruned_seen, sizeof(pruned_seen), "%s", fields ? fields : "");
		pthread_mutex_unlock(&pruned_mu);
	}
}

static int pruned_logged(const char *what)
{
	pthread_mutex_lock(&pruned_mu);
	int yes = what ? strstr(pruned_seen, what) != NULL : pruned_seen[0] != '\0';
	pthread_mutex_unlock(&pruned_mu);
	return yes;
}

static void status_pruned_by_schema(int sorted_answers)
{
	/* A CRD whose status schema lacks a field the operator writes (the server prunes it): the
	   operator warns, naming the field, instead of silently writing it again at every event.
	   With a schema that keeps everything (training-operator v1.9.2's, tests/suites/66) nothing
	   is logged. */
	flaky *f = NULL;
	tfjob_transport *ft = flaky_new(T, &f);
	tfjob_controller_options o = TFJOB_CONTROLLER_OPTIONS_INIT;
	tfjob_controller_hooks h = TFJOB_CONTROLLER_HOOKS_INIT;
	h.log = pruned_log;
	h.log_level = TFJOB_LOG_DEBUG;
	o.hooks = &h;
	pruned_seen[0] = '\0';
	f->sorted_answers = sorted_answers; /* as the API server: an unchanged status comes back as written */
	C = start_on(ft, &o);
	create("kept", "Worker:1:Never", NULL, NULL);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "kept") == 1, W));
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "kept", "Created", "True"), W));
	set_pod("kept-worker-0", "Running", -1, 0);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "kept", "Running", "True"), W));
	ck_assert_int_eq(tfjob_controller_wait_idle(C, W), 0);
	ck_assert(!pruned_logged(NULL));
	f->prune_active = 1;
	create("lost", "Worker:1:Never", NULL, NULL);
	ck_assert(CU_WAIT(cu_count(T, NS, "pods", "lost") == 1, W));
	set_pod("lost-worker-0", "Running", -1, 0);
	ck_assert(CU_WAIT(cu_cond_is(T, NS, "lost", "Running", "True"), W));
	ck_assert(CU_WAIT(pruned_logged("status.replicaStatuses.Worker.active"), W));
	ck_assert(pruned_logged("default/lost"));
	tfjob_controller_free(C);
	C = NULL;
	tfjob_transport_free(ft);
}

START_TEST(status_pruned_by_schema_is_logged) { status_pruned_by_schema(0); }
END_TEST

START_TEST(status_pruned_by_schema_is_logged_sorted) { status_pruned_by_schema(1); }
END_TEST

/* CU_ONLY=name runs that test alone (with CU_LOG=1 for the controller's log). */
#define ADD(t) do { const char *only_ = getenv("CU_ONLY"); if (!only_ || !strcmp(only_, #t)) tcase_add_test(tc, t); } while (0)

static Suite *suite(void)
{
	Suite *s = suite_create("controller");
	TCase *tc = tcase_create("lifecycle");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 120);
	ADD(ps_workers_succeed_worker0);
	ADD(chief_decides);
	ADD(all_workers);
	ADD(exit_code_retryable_then_success);
	ADD(exit_code_permanent_fails);
	ADD(on_failure_backoff_limit);
	ADD(active_deadline);
	ADD(clean_pod_policy_all);
	ADD(clean_pod_policy_running);
	ADD(clean_pod_policy_none);
	ADD(ttl_deletes_job);
	ADD(suspend_and_resume);
	ADD(managed_by_other_untouched);
	ADD(scale_down);
	ADD(pod_deleted_behind_our_back);
	ADD(hundred_jobs_converge);
	ADD(invalid_spec_fails_validation);
	ADD(status_conflict_retry_and_pod_hook);
	ADD(status_writes_leave_the_worker);
	ADD(status_writes_by_the_worker);
	ADD(stop_leaves_queued_status_writes);
	ADD(stop_cuts_a_long_reconcile_short);
	ADD(adopts_orphans);
	ADD(gang_volcano_waits_for_pod_group);
	ADD(gang_volcano_pod_group_running_before_pods);
	ADD(gang_volcano_existing_queue_kept);
	ADD(gang_compat_finished_job_deletes_pod_group_once);
	ADD(cleanup_skips_children_already_gone);
	ADD(child_update_the_planner_cannot_see_queues_nothing);
	ADD(hooks_logging_metrics_text);
	ADD(leader_election_failover);
	ADD(leader_fenced_past_renew_deadline);
	ADD(relist_after_compaction_and_restart);
	ADD(watch_gone_relists);
	ADD(releases_relabelled_child);
	ADD(leader_election_lost);
	ADD(job_being_deleted_left_alone);
	ADD(executor_follows_plan_order);
	ADD(gang_scheduler_plugins_and_namespace);
	ADD(api_server_outage);
	ADD(outage_longer_than_history_relists);
	ADD(api_errors);
	ADD(status_pruned_by_schema_is_logged);
	ADD(status_pruned_by_schema_is_logged_sorted);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	tfjob_global_init();
	int rc = tu_run(suite());
	tfjob_global_cleanup();
	return rc;
}
