/*
 * bench_local: the local runner (tfjob_local_run()) with N Worker replicas of `sleep 600`, for
 * N = 100, 300, 1000 (or the sizes given). For each N it prints:
 *   - start: from tfjob_local_run() to the N-th replica's "Started" event (wall and CPU ms);
 *   - step: one reconcile step after one replica changed. The bench kills one replica
 *     (SIGKILL); the engine notices the exit ("Exited" event from the engine), the run does one
 *     step (list, plan, execute, status, files) and flushes that event (its progress callback):
 *     that interval is one step. The replica restarts in place (restartPolicy OnFailure or
 *     Always, back-off 1 ms): the "Started" event and its flush make a second step. Median and
 *     min-max over all steps, wall and CPU time of this thread (the run is single-threaded);
 *   - the same per replica (us / N), so that linearity shows as a flat column;
 *   - stop: from tfjob_local_interrupt() to tfjob_local_run()'s return (every process stopped);
 * then, for each N, the engine alone with N Pods running and nothing happening: its CPU per
 * second (the pass over the Pods at every tick of tfjob_local_poll()).
 * Usage: bench_local [-n 100,300,1000] [-kills K] [-policy OnFailure|Always]
 * Limits: N processes (ulimit -u, kernel.pid_max, kernel.threads-max) are checked first, and a
 * size that does not fit is skipped with a message saying which limit and by how much.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>
#include <tfjob/tfjob.h>

#include "bench_time.h"

#define MAX_STEPS 256

static double wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double cpu_ms(void) { return now_ns() / 1e6; }

/* What one run of N replicas records from its callbacks. */
struct bench {
	tfjob_local *local;
	int n, kills_wanted, kills;
	int started;                /* "Started" events from the engine */
	pid_t *pids;                /* the process group of each replica index (from "Started") */
	double t0_wall, t0_cpu;     /* tfjob_local_run() called */
	double start_wall, start_cpu; /* the N-th replica started */
	char victim[256];           /* the Pod whose change is being timed ("" when none) */
	const char *awaited;        /* the reason whose flush ends the timed step */
	double mark_wall, mark_cpu; /* the engine noticed the change */
	double step_wall[MAX_STEPS], step_cpu[MAX_STEPS];
	int steps;
	double stop_wall;           /* interrupt sent */
};

static int index_of(const char *pod)
{
	const char *dash = strrchr(pod, '-');
	return dash ? atoi(dash + 1) : -1;
}

/* Engine events: called inside tfjob_local_poll(), when the engine notices a change. */
static void on_event(const char *pod, const char *type, const char *reason, const char *message, void *payload)
{
	(void)type;
	struct bench *b = payload;
	if (!strcmp(reason, "Started")) {
		const char *pg = strstr(message, "process group ");
		int i = index_of(pod);
		if (pg && i >= 0 && i < b->n)
			b->pids[i] = (pid_t)atoi(pg + strlen("process group "));
		if (++b->started == b->n) {
			b->start_wall = wall_ms();
			b->start_cpu = cpu_ms();
		}
	}
	if (b->victim[0] && !strcmp(pod, b->victim) && !strcmp(reason, b->awaited)) {
		b->mark_wall = wall_ms();
		b->mark_cpu = cpu_ms();
	}
}

/* Kill the next replica, or end the run when enough steps were timed. */
static void next_kill(struct bench *b)
{
	if (b->kills >= b->kills_wanted || b->steps + 2 > MAX_STEPS) {
		b->victim[0] = '\0';
		b->stop_wall = wall_ms();
		tfjob_local_interrupt(b->local);
		return;
	}
	int i = b->kills++ % b->n;
	snprintf(b->victim, sizeof b->victim, "bench-worker-%d", i);
	b->awaited = "Exited";
	b->mark_wall = 0;
	kill(-b->pids[i], SIGKILL);
}

static const char *field(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));
	return s ? s : "";
}

/* Progress of the run: an event flushed ends a timed step. */
static void on_update(tfjob_local_update what, const char *text, void *payload)
{
	struct bench *b = payload;
	if (what != TFJOB_LOCAL_UPDATE_EVENT || b->started < b->n)
		return;
	json_t *e = json_loads(text, 0, NULL);
	const char *reason = field(e, "reason"), *object = field(e, "object");
	if (!b->victim[0] && !b->kills && !strcmp(reason, "Started")) {
		next_kill(b); /* every replica runs and the step that saw it is done: the first kill */
	} else if (b->victim[0] && b->mark_wall > 0 && !strcmp(reason, b->awaited) && strstr(object, b->victim)) {
		b->step_wall[b->steps] = wall_ms() - b->mark_wall;
		b->step_cpu[b->steps] = cpu_ms() - b->mark_cpu;
		b->steps++;
		b->mark_wall = 0;
		if (!strcmp(b->awaited, "Exited"))
			b->awaited = "Started"; /* restarted in place after the back-off */
		else
			next_kill(b);
	}
	json_decref(e);
}

static tfjob_job *make_job(int n, const char *policy)
{
	char text[1024];
	snprintf(text, sizeof text,
	         "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"bench\"},\"spec\":{"
	         "\"runPolicy\":{\"cleanPodPolicy\":\"All\"},\"tfReplicaSpecs\":{\"Worker\":{\"replicas\":%d,"
	         "\"restartPolicy\":\"%s\",\"template\":{\"spec\":{\"containers\":[{\"name\":\"tensorflow\","
	         "\"image\":\"none\",\"command\":[\"sleep\",\"600\"]}]}}}}}}",
	         n, policy);
	tfjob_job *job = NULL;
	tfjob_error *err = NULL;
	if (tfjob_job_parse(&job, text, strlen(text), NULL, &err)) {
		fprintf(stderr, "bench_local: job: %s\n", tfjob_error_message(err));
		exit(2);
	}
	return job;
}

static long read_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;
	if (f && fscanf(f, "%ld", &v) != 1)
		v = -1;
	if (f)
		fclose(f);
	return v;
}

/* Processes of this user now (threads count against RLIMIT_NPROC too; an estimate from /proc). */
static long processes_now(void)
{
	FILE *p = popen("ps -L -u \"$(id -u)\" -o lwp= 2>/dev/null | wc -l", "r");
	long v = -1;
	if (p && fscanf(p, "%ld", &v) != 1)
		v = -1;
	if (p)
		pclose(p);
	return v;
}

/* Whether n more processes fit under the limits; prints why not. A supervisor process per
 * replica may run beside it, so 2n are asked for. */
static bool fits(int n)
{
	long need = 2L * n + 16;
	struct rlimit rl;
	long now = processes_now();
	if (getrlimit(RLIMIT_NPROC, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && now >= 0 &&
	    now + need > (long)rl.rlim_cur) {
		fprintf(stderr, "bench_local: n=%d skipped: ulimit -u is %ld, %ld processes run already, %ld more are needed\n",
		        n, (long)rl.rlim_cur, now, need);
		return false;
	}
	long pid_max = read_long("/proc/sys/kernel/pid_max"), threads = read_long("/proc/sys/kernel/threads-max");
	if (pid_max > 0 && need > pid_max / 2) {
		fprintf(stderr, "bench_local: n=%d skipped: kernel.pid_max is %ld, %ld processes are needed\n", n, pid_max, need);
		return false;
	}
	if (threads > 0 && need > threads / 2) {
		fprintf(stderr, "bench_local: n=%d skipped: kernel.threads-max is %ld, %ld processes are needed\n", n, threads,
		        need);
		return false;
	}
	return true;
}

static void print_row(const struct bench *b, double run_ms, double stop_ms)
{
	double w[MAX_STEPS], c[MAX_STEPS];
	int s = b->steps;
	memcpy(w, b->step_wall, sizeof w);
	memcpy(c, b->step_cpu, sizeof c);
	double wmed = s ? median(w, s) : 0, cmed = s ? median(c, s) : 0;
	double start = b->start_wall - b->t0_wall, start_cpu = b->start_cpu - b->t0_cpu;
	printf("%6d %10.1f %10.1f %8.1f | %6d %9.2f %9.2f %9.2f-%-9.2f %9.1f %9.1f | %9.1f %9.1f\n", b->n, start, start_cpu,
	       start_cpu * 1e3 / b->n, s, wmed, cmed, s ? c[0] : 0, s ? c[s - 1] : 0, wmed * 1e3 / b->n, cmed * 1e3 / b->n,
	       stop_ms, run_ms);
	fflush(stdout);
}

static int bench_one(int n, int kills, const char *policy)
{
	char dir[] = "/tmp/bench-local-XXXXXX";
	const char *tmp = getenv("TMPDIR");
	char *run_dir = NULL;
	if (tmp && tmp[0]) {
		run_dir = malloc(strlen(tmp) + 32);
		if (run_dir)
			sprintf(run_dir, "%s/bench-local-XXXXXX", tmp);
	} else {
		run_dir = strdup(dir);
	}
	if (!run_dir || !mkdtemp(run_dir)) {
		fprintf(stderr, "bench_local: run directory: %s\n", strerror(errno));
		free(run_dir);
		return 1;
	}
	struct bench b;
	memset(&b, 0, sizeof b);
	b.n = n;
	b.kills_wanted = kills;
	b.pids = calloc((size_t)n, sizeof *b.pids);
	tfjob_local_options lo = TFJOB_LOCAL_OPTIONS_INIT;
	lo.run_dir = run_dir;
	lo.backoff_initial_ms = 1;
	lo.backoff_max_ms = 1;
	lo.grace_period_ms = 2000;
	lo.gpus = "";
	lo.on_event = on_event;
	lo.event_payload = &b;
	tfjob_error *err = NULL;
	if (!b.pids || tfjob_local_new(&b.local, &lo, &err)) {
		fprintf(stderr, "bench_local: %s\n", b.pids ? tfjob_error_message(err) : "out of memory");
		tfjob_error_free(err);
		free(b.pids);
		free(run_dir);
		return 1;
	}
	tfjob_job *job = make_job(n, policy);
	tfjob_local_run_options ro = TFJOB_LOCAL_RUN_OPTIONS_INIT;
	ro.on_update = on_update;
	ro.payload = &b;
	tfjob_local_outcome outcome;
	b.t0_wall = wall_ms();
	b.t0_cpu = cpu_ms();
	int rc = tfjob_local_run(&outcome, b.local, job, &ro, &err);
	double end = wall_ms();
	if (rc)
		fprintf(stderr, "bench_local: n=%d: %s\n", n, tfjob_error_message(err));
	else if (b.started < n)
		fprintf(stderr, "bench_local: n=%d: only %d replicas started\n", n, b.started);
	else
		print_row(&b, end - b.t0_wall, b.stop_wall > 0 ? end - b.stop_wall : 0);
	tfjob_error_free(err);
	tfjob_job_free(job);
	tfjob_local_free(b.local);
	free(b.pids);
	char cmd[4200];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", run_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_local: could not remove %s\n", run_dir);
	free(run_dir);
	return rc != 0;
}

/* The engine alone with n Pods running `sleep 600` and nothing happening: CPU per second of
 * tfjob_local_poll() (its pass over the Pods every tick). */
static int bench_idle(int n)
{
	char run_dir[] = "/tmp/bench-local-idle-XXXXXX";
	if (!mkdtemp(run_dir)) {
		fprintf(stderr, "bench_local: run directory: %s\n", strerror(errno));
		return 1;
	}
	tfjob_local_options lo = TFJOB_LOCAL_OPTIONS_INIT;
	lo.run_dir = run_dir;
	lo.grace_period_ms = 2000;
	lo.gpus = "";
	tfjob_local *local = NULL;
	tfjob_transport *t = NULL;
	tfjob_error *err = NULL;
	tfjob_resource pods = TFJOB_RESOURCE_PODS_INIT;
	int rc = tfjob_local_new(&local, &lo, &err);
	if (!rc)
		rc = tfjob_local_transport_new(&t, local, &err);
	for (int i = 0; i < n && !rc; i++) {
		char pod[512];
		snprintf(pod, sizeof pod,
		         "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"idle-%d\"},\"spec\":{"
		         "\"restartPolicy\":\"Never\",\"containers\":[{\"name\":\"tensorflow\",\"command\":[\"sleep\",\"600\"]}]}}",
		         i);
		rc = tfjob_transport_create(NULL, t, &pods, "default", pod, &err);
	}
	double deadline = wall_ms() + 600000;
	while (!rc && tfjob_local_running_count(local) < (size_t)n && wall_ms() < deadline)
		rc = tfjob_local_poll(local, 100, &err) < 0;
	if (!rc) {
		double c0 = cpu_ms(), w0 = wall_ms();
		while (wall_ms() - w0 < 3000 && rc == 0)
			rc = tfjob_local_poll(local, 3000 - (int64_t)(wall_ms() - w0), &err) < 0;
		double per_s = (cpu_ms() - c0) / ((wall_ms() - w0) / 1000);
		printf("%6d %14.2f %14.2f\n", n, per_s, per_s * 1e3 / n);
	}
	if (rc)
		fprintf(stderr, "bench_local: idle n=%d: %s\n", n, err ? tfjob_error_message(err) : "failed");
	tfjob_error_free(err);
	tfjob_transport_free(t);
	tfjob_local_free(local);
	char cmd[256];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", run_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench_local: could not remove %s\n", run_dir);
	return rc != 0;
}

static void usage(void)
{
	fprintf(stderr, "usage: bench_local [-n 100,300,1000] [-kills K] [-policy OnFailure|Always]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *sizes = "100,300,1000", *policy = "OnFailure";
	int kills = 5;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-n") && i + 1 < argc)
			sizes = argv[++i];
		else if (!strcmp(argv[i], "-kills") && i + 1 < argc)
			kills = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-policy") && i + 1 < argc)
			policy = argv[++i];
		else
			usage();
	}
	if (kills < 1 || (strcmp(policy, "OnFailure") && strcmp(policy, "Always")))
		usage();
	printf("local runner, Worker replicas of `sleep 600`, restartPolicy %s, %d kills (2 steps each)\n", policy, kills);
	printf("%6s %10s %10s %8s | %6s %9s %9s %19s %9s %9s | %9s %9s\n", "n", "start ms", "start cpu", "us/rep",
	       "steps", "step ms", "step cpu", "cpu min-max", "us/rep", "cpu us/rep", "stop ms", "total ms");
	int failed = 0;
	char *list = strdup(sizes);
	for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int n = atoi(tok);
		if (n < 1) {
			fprintf(stderr, "bench_local: bad size %s\n", tok);
			failed = 1;
		} else if (fits(n)) {
			failed |= bench_one(n, kills, policy);
		}
	}
	free(list);
	printf("\nthe engine alone, n Pods of `sleep 600` running, nothing happening (3 s of tfjob_local_poll())\n");
	printf("%6s %14s %14s\n", "n", "cpu ms per s", "us/s per rep");
	list = strdup(sizes);
	for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int n = atoi(tok);
		if (n >= 1 && fits(n))
			failed |= bench_idle(n);
	}
	free(list);
	return failed;
}
