/*
 * The controller on the memory backend: API calls and time per job lifecycle (PS 1 + Worker 2:
 * created, running, worker 0 succeeds, cleanup), and steady-state reconciles per second with the
 * whole process pinned to one core; the cache of many jobs (its estimated heap beside the JSON
 * size of the objects it holds) and a round of reconciles over all of them. Prints numbers;
 * never a timed test. Usage: bench_controller [JOBS [ROUNDS [CACHE_JOBS]]] (CACHE_JOBS 0 skips).
 * SPDX-License-Identifier: Apache-2.0
 */
#define _GNU_SOURCE
#include <jansson.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tfjob/tfjob.h>

static const tfjob_resource TFJOBS = TFJOB_RESOURCE_TFJOBS_INIT;
static const tfjob_resource PODS = TFJOB_RESOURCE_PODS_INIT;

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_ms(int ms)
{
	struct timespec ts = { 0, ms * 1000000L };
	nanosleep(&ts, NULL);
}

static char *job_json(const char *name)
{
	char *out = malloc(1024);
	snprintf(out, 1024,
	         "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\"},"
	         "\"spec\":{\"runPolicy\":{\"cleanPodPolicy\":\"Running\"},\"tfReplicaSpecs\":{"
	         "\"PS\":{\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"tf\"}]}}},"
	         "\"Worker\":{\"replicas\":2,\"template\":{\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"tf\"}]}}}}}}",
	         name);
	return out;
}

static void set_pod(tfjob_transport *t, const char *name, const char *phase, int code)
{
	for (int a = 0; a < 50; a++) {
		char *text = NULL;
		if (tfjob_transport_get(&text, t, &PODS, "default", name, NULL)) {
			sleep_ms(1);
			continue;
		}
		json_t *pod = json_loads(text, 0, NULL);
		tfjob_free(text);
		json_t *cs = code >= 0 ? json_pack("[{s:s,s:{s:{s:i}}}]", "name", "tensorflow", "state", "terminated", "exitCode", code)
		                       : json_pack("[{s:s,s:{s:{}}}]", "name", "tensorflow", "state", "running");
		json_object_set_new(pod, "status", json_pack("{s:s,s:o}", "phase", phase, "containerStatuses", cs));
		text = json_dumps(pod, JSON_COMPACT);
		json_decref(pod);
		int rc = tfjob_transport_update_status(NULL, t, &PODS, "default", text, NULL);
		free(text);
		if (rc == 0)
			return;
	}
}

static int cond_true(tfjob_transport *t, const char *name, const char *type)
{
	char *text = NULL;
	if (tfjob_transport_get(&text, t, &TFJOBS, "default", name, NULL))
		return 0;
	char pat[128];
	snprintf(pat, sizeof(pat), "\"type\":\"%s\",\"status\":\"True\"", type);
	int ok = strstr(text, pat) != NULL;
	tfjob_free(text);
	return ok;
}

static void wait_cond(tfjob_transport *t, const char *name, const char *type)
{
	for (int i = 0; i < 20000 && !cond_true(t, name, type); i++)
		sleep_ms(1);
}

static void wait_pods(tfjob_transport *t, const char *name, int n)
{
	char pod[128];
	for (int i = 0; i < n; i++) {
		snprintf(pod, sizeof(pod), "%s-%s", name, i == 0 ? "ps-0" : i == 1 ? "worker-0" : "worker-1");
		for (int k = 0; k < 20000 && tfjob_transport_get(NULL, t, &PODS, "default", pod, NULL); k++)
			sleep_ms(1);
	}
}

/* Create PREFIX-0 .. PREFIX-(n-1) (PS 1 + Worker 2 each) and wait until each is Created. */
static void create_jobs(tfjob_transport *t, const char *prefix, int n)
{
	char name[64];
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s-%d", prefix, i);
		char *j = job_json(name);
		tfjob_transport_create(NULL, t, &TFJOBS, "default", j, NULL);
		free(j);
	}
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s-%d", prefix, i);
		wait_cond(t, name, "Created");
	}
}

/* Sum over a metric family's lines in the /metrics text (0 when absent). */
static double metric_sum(const char *text, const char *family)
{
	double sum = 0;
	size_t n = strlen(family);
	for (const char *p = text; (p = strstr(p, family)) != NULL; p += n)
		if ((p == text || p[-1] == '\n') && (p[n] == '{' || p[n] == ' '))
			sum += atof(strchr(p, ' ') + 1);
	return sum;
}

/* Number of objects and bytes of their compact JSON, as the server holds them. */
static size_t json_size_of(tfjob_transport *t, const tfjob_resource *res, size_t *count)
{
	char *text = NULL;
	if (tfjob_transport_list(&text, t, res, "default", NULL, NULL))
		return 0;
	json_t *l = json_loads(text, 0, NULL);
	tfjob_free(text);
	size_t bytes = 0, i;
	json_t *item;
	json_array_foreach(json_object_get(l, "items"), i, item) {
		char *one = json_dumps(item, JSON_COMPACT);
		bytes += one ? strlen(one) : 0;
		free(one);
	}
	*count = json_array_size(json_object_get(l, "items"));
	json_decref(l);
	return bytes;
}

/* 4. Many jobs of 1 PS + 2 workers, all created (pods and services): the caches' size, then one
   round of reconciles over every job. */
static void cache_of_many_jobs(int n)
{
	static const tfjob_resource services = TFJOB_RESOURCE_SERVICES_INIT;
	tfjob_transport *t = NULL;
	tfjob_memory_transport_new(&t, NULL, NULL);
	tfjob_controller_options o = TFJOB_CONTROLLER_OPTIONS_INIT;
	o.workers = 1;
	o.no_events = 1; /* the memory backend would keep every Event: not the cache's cost */
	tfjob_controller *c = NULL;
	tfjob_controller_new(&c, t, &o, NULL);
	if (tfjob_controller_start(c, NULL)) {
		fprintf(stderr, "start failed\n");
		exit(1);
	}
	char name[64];
	double t0 = now_s();
	create_jobs(t, "many", n);
	tfjob_controller_wait_idle(c, 600000);
	double created = now_s() - t0;
	size_t nj = 0, np = 0, ns = 0;
	size_t json = json_size_of(t, &TFJOBS, &nj) + json_size_of(t, &PODS, &np) + json_size_of(t, &services, &ns);
	char *text = NULL;
	tfjob_controller_metrics_text(&text, c, NULL);
	double cache = metric_sum(text, "tfjob_controller_cache_bytes");
	double held = metric_sum(text, "tfjob_controller_cache_objects");
	double by[3];
	const char *kinds[3] = { "tfjobs", "pods", "services" };
	for (int k = 0; k < 3; k++) {
		char line[96];
		snprintf(line, sizeof(line), "tfjob_controller_cache_bytes{resource=\"%s\"} ", kinds[k]);
		const char *p = strstr(text, line);
		by[k] = p ? atof(p + strlen(line)) : 0;
	}
	tfjob_free(text);
	printf("cache of %d jobs (1 PS + 2 workers, all created; %.1f s to create): %.0f objects held (%zu jobs, %zu pods, "
	       "%zu services)\n", n, created, held, nj, np, ns);
	printf("  cache %.1f MB estimated heap vs %.1f MB of the objects' compact JSON = %.2fx (goal <= 2x); %.0f bytes per object\n",
	       cache / 1e6, (double)json / 1e6, cache / (double)json, cache / held);
	printf("  per object: %.0f bytes a job, %.0f a pod, %.0f a service\n", by[0] / (double)nj, by[1] / (double)np,
	       by[2] / (double)ns);
	tfjob_controller_metrics m = { .version = TFJOB_CONTROLLER_METRICS_VERSION };
	tfjob_controller_metrics_get(&m, c);
	uint64_t r0 = m.reconciles;
	double sum0 = m.reconcile_latency_sum, s = now_s();
	for (int i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "many-%d", i);
		tfjob_controller_enqueue(c, "default", name);
	}
	tfjob_controller_wait_idle(c, 600000);
	double el = now_s() - s;
	tfjob_controller_metrics_get(&m, c);
	uint64_t done = m.reconciles - r0;
	printf("  one round over all %d jobs: %llu reconciles in %.3f s = %.0f reconciles/s (goal >= 1000); "
	       "%.0f reconciles/s of worker time\n", n, (unsigned long long)done, el, (double)done / el,
	       (double)done / (m.reconcile_latency_sum - sum0));
	tfjob_controller_free(c);
	tfjob_transport_free(t);
}

int main(int argc, char **argv)
{
	int jobs = argc > 1 ? atoi(argv[1]) : 200;
	int rounds = argc > 2 ? atoi(argv[2]) : 20;
	int cache_jobs = argc > 3 ? atoi(argv[3]) : 10000;
	cpu_set_t cpus;
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	int pinned = sched_setaffinity(0, sizeof(cpus), &cpus) == 0;
	tfjob_global_init();
	tfjob_transport *t = NULL;
	tfjob_memory_transport_new(&t, NULL, NULL);
	tfjob_controller_options o = TFJOB_CONTROLLER_OPTIONS_INIT;
	o.workers = 1;
	tfjob_controller *c = NULL;
	tfjob_controller_new(&c, t, &o, NULL);
	if (tfjob_controller_start(c, NULL)) {
		fprintf(stderr, "start failed\n");
		return 1;
	}
	printf("bench_controller: memory backend, 1 worker, %s\n", pinned ? "pinned to one core" : "not pinned");

	/* 1. Lifecycles. */
	double t0 = now_s();
	char name[64], pod[96];
	for (int i = 0; i < jobs; i++) {
		snprintf(name, sizeof(name), "life-%d", i);
		char *j = job_json(name);
		tfjob_transport_create(NULL, t, &TFJOBS, "default", j, NULL);
		free(j);
	}
	for (int i = 0; i < jobs; i++) {
		snprintf(name, sizeof(name), "life-%d", i);
		wait_pods(t, name, 3);
		snprintf(pod, sizeof(pod), "%s-ps-0", name);
		set_pod(t, pod, "Running", -1);
		snprintf(pod, sizeof(pod), "%s-worker-0", name);
		set_pod(t, pod, "Running", -1);
		snprintf(pod, sizeof(pod), "%s-worker-1", name);
		set_pod(t, pod, "Running", -1);
	}
	for (int i = 0; i < jobs; i++) {
		snprintf(name, sizeof(name), "life-%d", i);
		wait_cond(t, name, "Running");
		snprintf(pod, sizeof(pod), "%s-worker-0", name);
		set_pod(t, pod, "Succeeded", 0);
	}
	for (int i = 0; i < jobs; i++) {
		snprintf(name, sizeof(name), "life-%d", i);
		wait_cond(t, name, "Succeeded");
	}
	tfjob_controller_wait_idle(c, 60000);
	double life = now_s() - t0;
	tfjob_controller_metrics m = { .version = TFJOB_CONTROLLER_METRICS_VERSION };
	tfjob_controller_metrics_get(&m, c);
	printf("lifecycle (PS 1 + Worker 2, created -> running -> worker 0 succeeded -> cleanPodPolicy Running), %d jobs:\n", jobs);
	printf("  per job: %.2f creates (minimum 6: 3 pods + 3 services), %.2f status writes, %.2f deletes (cleanup: 2 pods + 2 services),\n"
	       "           %.2f gets, %.2f updates, %.2f patches, %.2f events, %.2f reconciles, %.2f status conflicts\n",
	       (double)m.api_calls[TFJOB_API_CREATE] / jobs, (double)m.api_calls[TFJOB_API_UPDATE_STATUS] / jobs,
	       (double)m.api_calls[TFJOB_API_DELETE] / jobs, (double)m.api_calls[TFJOB_API_GET] / jobs,
	       (double)m.api_calls[TFJOB_API_UPDATE] / jobs, (double)m.api_calls[TFJOB_API_PATCH] / jobs,
	       (double)m.api_calls[TFJOB_API_CREATE_EVENT] / jobs, (double)m.reconciles / jobs,
	       (double)m.status_conflicts / jobs);
	printf("  wall time %.3f s for %d jobs (%.2f ms per job, driver and fake kubelet included)\n", life, jobs,
	       life * 1000 / jobs);

	/* 2. Steady state: every job re-examined, nothing to do. */
	uint64_t r0 = m.reconciles;
	double best = 0;
	for (int r = 0; r < rounds; r++) {
		double s = now_s();
		for (int i = 0; i < jobs; i++) {
			snprintf(name, sizeof(name), "life-%d", i);
			tfjob_controller_enqueue(c, "default", name);
		}
		tfjob_controller_wait_idle(c, 60000);
		double rate = jobs / (now_s() - s);
		if (rate > best)
			best = rate;
	}
	tfjob_controller_metrics_get(&m, c);
	printf("steady reconciles (finished jobs, 1 pod each): %llu in %d rounds, best round %.0f reconciles/s\n",
	       (unsigned long long)(m.reconciles - r0), rounds, best);

	/* 3. Steady state of running jobs (3 pods + 3 services each, nothing to do). */
	create_jobs(t, "run", jobs);
	tfjob_controller_wait_idle(c, 60000);
	tfjob_controller_metrics_get(&m, c);
	r0 = m.reconciles;
	uint64_t w0 = m.api_calls[TFJOB_API_UPDATE_STATUS] + m.api_calls[TFJOB_API_CREATE];
	double s = now_s();
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < jobs; i++) {
			snprintf(name, sizeof(name), "run-%d", i);
			tfjob_controller_enqueue(c, "default", name);
		}
		tfjob_controller_wait_idle(c, 60000);
	}
	double el = now_s() - s;
	double sum0 = m.reconcile_latency_sum;
	tfjob_controller_metrics_get(&m, c);
	printf("steady reconciles (3 pods + 3 services each): %llu in %.3f s = %.0f reconciles/s (%.1f us each); writes meanwhile: %llu\n",
	       (unsigned long long)(m.reconciles - r0), el, (double)(m.reconciles - r0) / el,
	       el * 1e6 / (double)(m.reconciles - r0),
	       (unsigned long long)(m.api_calls[TFJOB_API_UPDATE_STATUS] + m.api_calls[TFJOB_API_CREATE] - w0));
	printf("  time inside the reconcile itself (latency histogram sum): %.1f us each = %.0f reconciles/s of worker time\n",
	       (m.reconcile_latency_sum - sum0) * 1e6 / (double)(m.reconciles - r0),
	       (double)(m.reconciles - r0) / (m.reconcile_latency_sum - sum0));
	tfjob_controller_free(c);
	tfjob_transport_free(t);
	if (cache_jobs > 0)
		cache_of_many_jobs(cache_jobs);
	tfjob_global_cleanup();
	return 0;
}
