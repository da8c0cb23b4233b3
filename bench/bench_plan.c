/*
 * bench_plan: one reconcile step of a steady job (every pod Running, every service there:
 * nothing to do) with N workers and 1 PS, from objects parsed once (tfjob_plan_new_with_objects,
 * what a controller with a cache does) and from JSON text (tfjob_plan_new, what tfjobctl plan
 * does). Prints medians of repeated runs, the observed input size, and the peak RSS. Then the
 * first step of a new job of 1,000 / 3,000 / 10,000 workers (every child created) written with
 * tfjob_plan_write_json() to /dev/null, each in a child process: its time and peak RSS (what
 * tfjobctl plan needs). Usage: bench_plan [REPEATS [ONLY_WORKERS [MAX_NEW_WORKERS]]]
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include <jansson.h>
#include <tfjob/tfjob.h>

#include "bench_time.h"

static void die(const char *what, tfjob_error *err)
{
	fprintf(stderr, "bench_plan: %s: %s\n", what, tfjob_error_message(err));
	exit(1);
}

static tfjob_job *make_job(int workers)
{
	char text[1024];
	snprintf(text, sizeof(text),
	         "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"bench\",\"namespace\":"
	         "\"ns\",\"uid\":\"u-1\"},\"spec\":{\"tfReplicaSpecs\":{"
	         "\"PS\":{\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"i\"}]}}},"
	         "\"Worker\":{\"replicas\":%d,\"restartPolicy\":\"OnFailure\",\"template\":{\"spec\":{\"containers\":[{"
	         "\"name\":\"tensorflow\",\"image\":\"i\"}]}}}}}}",
	         workers);
	tfjob_job *job = NULL;
	tfjob_error *err = NULL;
	if (tfjob_job_parse(&job, text, strlen(text), NULL, &err))
		die("parse", err);
	return job;
}

/* The children of the job as a running cluster would show them, and the job's status after one step. */
static void steady_state(tfjob_job *job, char **pods_text, char **services_text)
{
	tfjob_job *defaulted = NULL;
	tfjob_error *err = NULL;
	char *all = NULL;
	if (tfjob_job_clone(&defaulted, job, &err) || tfjob_job_apply_defaults(defaulted, NULL, &err) ||
	    tfjob_render_all(&all, defaulted, NULL, 0, &err))
		die("render", err);
	json_t *children = json_loads(all, 0, NULL);
	tfjob_free(all);
	size_t i;
	json_t *pod;
	json_array_foreach(json_object_get(children, "pods"), i, pod) {
		json_object_set_new(pod, "status", json_pack("{s:s,s:[{s:s,s:i,s:{s:{}}}]}", "phase", "Running",
		                                             "containerStatuses", "name", "tensorflow", "restartCount", 0,
		                                             "state", "running"));
	}
	*pods_text = json_dumps(json_object_get(children, "pods"), JSON_COMPACT);
	*services_text = json_dumps(json_object_get(children, "services"), JSON_COMPACT);
	json_decref(children);
	tfjob_job_free(defaulted);

	/* Two steps bring the status to its steady value (Created, then Running). */
	for (int step = 0; step < 2; step++) {
		tfjob_plan_options po = TFJOB_PLAN_OPTIONS_INIT;
		po.now = 1767225600 + step;
		tfjob_plan *plan = NULL;
		char *status = NULL;
		if (tfjob_plan_new(&plan, job, *pods_text, *services_text, &po, &err) ||
		    tfjob_plan_status_json(&status, plan, 0, &err) || tfjob_job_set_status_json(job, status, &err))
			die("plan", err);
		tfjob_free(status);
		tfjob_plan_free(plan);
	}
}

static double time_plan(const tfjob_job *job, const tfjob_objects *pods, const tfjob_objects *svcs, const char *pods_text,
                        const char *svcs_text, int repeats, size_t *actions, int *changed)
{
	double *t = malloc(sizeof(double) * (size_t)repeats);
	for (int r = 0; r < repeats; r++) {
		tfjob_plan_options po = TFJOB_PLAN_OPTIONS_INIT;
		po.now = 1767225600 + 2;
		tfjob_plan *plan = NULL;
		tfjob_error *err = NULL;
		double t0 = now_ns();
		int rc = pods ? tfjob_plan_new_with_objects(&plan, job, pods, svcs, &po, &err)
		              : tfjob_plan_new(&plan, job, pods_text, svcs_text, &po, &err);
		t[r] = now_ns() - t0;
		if (rc)
			die("plan", err);
		*actions = tfjob_plan_action_count(plan);
		*changed = tfjob_plan_status_changed(plan);
		tfjob_plan_free(plan);
	}
	double m = median(t, repeats);
	free(t);
	return m;
}

static int write_counted(const char *data, size_t len, void *payload)
{
	size_t *bytes = payload;
	*bytes += len;
	return 0;
}

/* (child process) plan a new job of *arg workers and write the plan: CPU ms and bytes. */
static void plan_new_job(void *arg, double out[2])
{
	tfjob_job *job = make_job(*(int *)arg);
	tfjob_plan_options po = TFJOB_PLAN_OPTIONS_INIT;
	po.now = 1767225600;
	tfjob_plan *plan = NULL;
	tfjob_error *err = NULL;
	size_t bytes = 0;
	double t0 = now_ns();
	if (tfjob_plan_new(&plan, job, NULL, NULL, &po, &err) ||
	    tfjob_plan_write_json(plan, TFJOB_JSON_COMPACT, write_counted, &bytes, &err))
		die("plan", err);
	out[0] = (now_ns() - t0) / 1e6;
	out[1] = (double)bytes;
	tfjob_plan_free(plan);
	tfjob_job_free(job);
}

static void new_job_rows(int repeats, int max_workers)
{
	static const int sizes[] = { 1000, 3000, 10000 };
	printf("\nfirst step of a new job (every pod and service created), tfjob_plan_write_json(), one child\n"
	       "process per run: CPU ms (median, min-max), peak RSS of the process (median)\n\n");
	printf("%8s %6s %14s %10s %16s %12s\n", "workers", "runs", "plan bytes", "ms", "ms min-max", "peak RSS MB");
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]) && sizes[s] <= max_workers; s++) {
		int n = sizes[s], runs = n >= 10000 ? 1 : (n >= 3000 ? (repeats < 3 ? repeats : 3) : repeats);
		double *ms = calloc((size_t)runs, sizeof(double)), *rss = calloc((size_t)runs, sizeof(double));
		double got[2] = { 0, 0 }, lo = 0, hi = 0;
		for (int r = 0; r < runs; r++) {
			long kb = 0;
			if (bench_in_child(plan_new_job, &n, got, &kb)) {
				fprintf(stderr, "bench_plan: new job of %d workers failed\n", n);
				exit(1);
			}
			ms[r] = got[0];
			rss[r] = (double)kb / 1024;
			lo = r == 0 || ms[r] < lo ? ms[r] : lo;
			hi = r == 0 || ms[r] > hi ? ms[r] : hi;
		}
		char spread[48];
		snprintf(spread, sizeof spread, "%.0f-%.0f", lo, hi);
		printf("%8d %6d %14.0f %10.0f %16s %12.1f\n", n, runs, got[1], median(ms, runs), spread, median(rss, runs));
		free(ms);
		free(rss);
	}
}

int main(int argc, char **argv)
{
	int repeats = argc > 1 ? atoi(argv[1]) : 21;
	static const int sizes[] = { 10, 100, 1000 };
	printf("%-8s %12s %14s %14s %9s %8s\n", "workers", "input MB", "objects us", "text us", "actions", "changed");
	int only = argc > 2 ? atoi(argv[2]) : 0;
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		if (only && sizes[s] != only)
			continue;
		tfjob_job *job = make_job(sizes[s]);
		char *pods_text = NULL, *svcs_text = NULL;
		steady_state(job, &pods_text, &svcs_text);
		tfjob_objects *pods = NULL, *svcs = NULL;
		tfjob_error *err = NULL;
		if (tfjob_objects_parse(&pods, pods_text, strlen(pods_text), NULL, &err) ||
		    tfjob_objects_parse(&svcs, svcs_text, strlen(svcs_text), NULL, &err))
			die("objects", err);
		size_t actions = 0;
		int changed = 0;
		double with_objects = time_plan(job, pods, svcs, NULL, NULL, repeats, &actions, &changed);
		int text_repeats = sizes[s] >= 1000 || only ? 1 : repeats;
		double with_text = time_plan(job, NULL, NULL, pods_text, svcs_text, text_repeats, &actions, &changed);
		printf("%-8d %12.2f %14.1f %14.1f %9zu %8d\n", sizes[s],
		       (double)(strlen(pods_text) + strlen(svcs_text)) / 1e6, with_objects / 1e3, with_text / 1e3, actions,
		       changed);
		tfjob_objects_free(pods);
		tfjob_objects_free(svcs);
		free(pods_text);
		free(svcs_text);
		tfjob_job_free(job);
	}
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("peak RSS: %.1f MB\n", (double)ru.ru_maxrss / 1024.0);
	fflush(stdout);
	new_job_rows(repeats < 5 ? repeats : 5, argc > 3 ? atoi(argv[3]) : 10000);
	return 0;
}
