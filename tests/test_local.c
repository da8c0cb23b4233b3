/*
 * The local backend's process engine: spawning, phases, exit codes (signals as 128+n), in-place
 * restarts with backoff, SIGTERM -> SIGKILL escalation, logs, refused and ignored pod fields,
 * addresses, and one whole tfjob_local_run().
 * SPDX-License-Identifier: Apache-2.0
 */
#include <dirent.h>
#include <errno.h>
#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"

static const tfjob_resource PODS = TFJOB_RESOURCE_PODS_INIT;

static char run_dir[256];
static json_t *events; /* [[pod, reason, message], ...] */
static tfjob_local *local;
static tfjob_transport *tr;

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void on_event(const char *pod, const char *type, const char *reason, const char *message, void *payload)
{
	(void)type;
	(void)payload;
	json_array_append_new(events, json_pack("[s, s, s, I]", pod, reason, message, (json_int_t)now_ms()));
}

static void setup(void)
{
	snprintf(run_dir, sizeof run_dir, "/tmp/tfjob-test-local-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(run_dir));
	events = json_array();
	tfjob_local_options opts;
	ck_assert_int_eq(tfjob_local_options_init(&opts, TFJOB_LOCAL_OPTIONS_VERSION), 0);
	opts.run_dir = run_dir;
	opts.base_dir = run_dir;
	opts.backoff_initial_ms = 100;
	opts.backoff_max_ms = 400;
	opts.on_event = on_event;
	ck_assert_int_eq(tfjob_local_new(&local, &opts, NULL), 0);
	ck_assert_int_eq(tfjob_local_transport_new(&tr, local, NULL), 0);
}

static void teardown(void)
{
	tfjob_transport_free(tr);
	tfjob_local_free(local);
	json_decref(events);
	char cmd[300];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", run_dir);
	ck_assert_int_eq(system(cmd), 0);
}

/* A Pod running argv (a JSON array) with restartPolicy policy; extra: JSON merged into the container. */
static int create_pod(const char *name, const char *policy, const char *argv, const char *extra, const char *spec_extra,
                      tfjob_error **err)
{
	char text[4096];
	snprintf(text, sizeof text,
	         "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"%s\",\"labels\":{\"app\":\"t\"}},"
	         "\"spec\":{\"restartPolicy\":\"%s\",\"containers\":[{\"name\":\"tensorflow\",\"image\":\"x\"%s%s%s}]%s%s}}",
	         name, policy, argv ? ",\"command\":" : "", argv ? argv : "", extra ? extra : "", spec_extra ? "," : "",
	         spec_extra ? spec_extra : "");
	return tfjob_transport_create(NULL, tr, &PODS, "default", text, err);
}

static json_t *get_pod(const char *name)
{
	char *text = NULL;
	if (tfjob_transport_get(&text, tr, &PODS, "default", name, NULL))
		return NULL;
	json_t *pod = json_loads(text, 0, NULL);
	tfjob_free(text);
	return pod;
}

static const char *phase_of(json_t *pod)
{
	return json_string_value(json_object_get(json_object_get(pod, "status"), "phase"));
}

static json_t *container(json_t *pod)
{
	return json_array_get(json_object_get(json_object_get(pod, "status"), "containerStatuses"), 0);
}

static int exit_code(json_t *pod)
{
	json_t *t = json_object_get(json_object_get(container(pod), "state"), "terminated");
	return t ? (int)json_integer_value(json_object_get(t, "exitCode")) : -1;
}

/* Poll until the pod is in phase (NULL: gone); returns the pod (caller frees) or NULL. */
static json_t *wait_phase(const char *name, const char *phase, int64_t timeout_ms)
{
	int64_t end = now_ms() + timeout_ms;
	for (;;) {
		json_t *pod = get_pod(name);
		if (!phase && !pod)
			return NULL;
		if (phase && pod && !strcmp(phase_of(pod), phase))
			return pod;
		json_decref(pod);
		ck_assert_msg(now_ms() < end, "pod %s did not reach %s in %lld ms", name, phase ? phase : "deletion",
		              (long long)timeout_ms);
		ck_assert_int_ge(tfjob_local_poll(local, 50, NULL), 0);
	}
}

static char *read_log(const char *pod)
{
	char path[512];
	snprintf(path, sizeof path, "%s/%s.log", run_dir, pod);
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "no log %s", path);
	static char buf[8192];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

/* Processes of process group pgid that are not zombies, from /proc. */
static int live_in_group(pid_t pgid)
{
	int n = 0;
	DIR *d = opendir("/proc");
	struct dirent *ent;
	while (d && (ent = readdir(d))) {
		char path[300], buf[512];
		snprintf(path, sizeof path, "/proc/%s/stat", ent->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		size_t len = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[len] = '\0';
		char *rp = strrchr(buf, ')');
		char state;
		int ppid, pgrp;
		if (rp && sscanf(rp + 2, "%c %d %d", &state, &ppid, &pgrp) == 3 && pgrp == pgid && state != 'Z')
			n++;
	}
	if (d)
		closedir(d);
	return n;
}

/* Poll until the pod's log holds needle (the process has started its program). */
static void wait_log(const char *pod, const char *needle)
{
	int64_t end = now_ms() + 10000;
	while (!strstr(read_log(pod), needle)) {
		ck_assert_msg(now_ms() < end, "no '%s' in the log of %s", needle, pod);
		tfjob_local_poll(local, 20, NULL);
	}
}

static int count_events(const char *reason, const char *needle)
{
	int n = 0;
	size_t i;
	json_t *e;
	json_array_foreach(events, i, e)
		if (!strcmp(json_string_value(json_array_get(e, 1)), reason) &&
		    (!needle || strstr(json_string_value(json_array_get(e, 2)), needle)))
			n++;
	return n;
}

START_TEST(test_options)
{
	tfjob_local_options o;
	ck_assert_int_eq(tfjob_local_options_init(&o, 99), TFJOB_EVERSION);
	ck_assert_int_eq(tfjob_local_options_init(NULL, 1), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_local_options_init(&o, 1), 0);
	ck_assert_int_eq(o.grace_period_ms, -1);
	tfjob_local_run_options r;
	ck_assert_int_eq(tfjob_local_run_options_init(&r, 2), TFJOB_EVERSION);
	ck_assert_int_eq(tfjob_local_run_options_init(&r, 1), 0);
	tfjob_local *l = NULL;
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_local_new(&l, &o, &err), TFJOB_EINVAL); /* no run_dir */
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "run_dir"));
	tfjob_error_free(err);
	tfjob_local_free(NULL);
	tfjob_local_interrupt(NULL);
	ck_assert_int_eq(tfjob_local_interrupted(NULL), 0);
	ck_assert_str_eq(tfjob_local_outcome_name(TFJOB_LOCAL_INTERRUPTED), "Interrupted");
}
END_TEST

START_TEST(test_spawn_succeeds_with_logs)
{
	ck_assert_int_eq(create_pod("ok", "Never", "[\"sh\",\"-c\",\"echo out; echo err >&2; echo $TFJOB_POD_NAME\"]", NULL,
	                            NULL, NULL), 0);
	json_t *pod = get_pod("ok");
	ck_assert_str_eq(phase_of(pod), "Pending");
	json_decref(pod);
	pod = wait_phase("ok", "Succeeded", 5000);
	ck_assert_int_eq(exit_code(pod), 0);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(container(pod), "state"), "terminated"),
	                                                   "reason")), "Completed");
	json_decref(pod);
	const char *log = read_log("ok");
	ck_assert_ptr_nonnull(strstr(log, "out\n"));
	ck_assert_ptr_nonnull(strstr(log, "err\n"));
	ck_assert_ptr_nonnull(strstr(log, "ok\n"));
	ck_assert_int_eq(count_events("Started", NULL), 1);
	ck_assert_int_eq(tfjob_local_running_count(local), 0);
}
END_TEST

START_TEST(test_running_then_exit_code)
{
	ck_assert_int_eq(create_pod("three", "Never", "[\"sh\",\"-c\",\"sleep 0.3; exit 3\"]", NULL, NULL, NULL), 0);
	json_t *pod = wait_phase("three", "Running", 5000);
	const char *pid = json_string_value(
		json_object_get(json_object_get(json_object_get(pod, "metadata"), "annotations"), "local.kubeflow.org/pid"));
	ck_assert_ptr_nonnull(pid);
	ck_assert_int_eq(kill(atoi(pid), 0), 0);
	ck_assert_int_eq(tfjob_local_running_count(local), 1);
	json_decref(pod);
	pod = wait_phase("three", "Failed", 5000);
	ck_assert_int_eq(exit_code(pod), 3);
	json_decref(pod);
}
END_TEST

START_TEST(test_signal_is_128_plus_n)
{
	ck_assert_int_eq(create_pod("killed", "Never", "[\"sh\",\"-c\",\"kill -9 $$$$\"]", NULL, NULL, NULL), 0);
	json_t *pod = wait_phase("killed", "Failed", 5000);
	ck_assert_int_eq(exit_code(pod), 137);
	json_t *t = json_object_get(json_object_get(container(pod), "state"), "terminated");
	ck_assert_int_eq(json_integer_value(json_object_get(t, "signal")), 9);
	json_decref(pod);
	ck_assert_int_eq(create_pod("segv", "Never", "[\"sh\",\"-c\",\"kill -SEGV $$$$\"]", NULL, NULL, NULL), 0);
	pod = wait_phase("segv", "Failed", 5000);
	ck_assert_int_eq(exit_code(pod), 139);
	json_decref(pod);
}
END_TEST

/* A live process (not a zombie), from /proc. */
static bool process_alive(pid_t pid)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return false;
	size_t n = fread(line, 1, sizeof line - 1, f);
	fclose(f);
	line[n] = '\0';
	const char *rp = strrchr(line, ')');
	return rp && rp[1] == ' ' && rp[2] != 'Z';
}

/* The replica's supervisor kills what the replica leaves behind when it exits, also what left
 * its process group (setsid), though this process is no subreaper; the pid annotation names the
 * replica, the leader of its own process group. */
START_TEST(test_leftovers_die_with_the_replica)
{
	ck_assert_int_eq(create_pod("leaves", "Never",
	                            "[\"sh\",\"-c\",\"sleep 60 & echo $! > left; setsid sleep 60 & echo $! >> left; "
	                            "sleep 0.5\"]",
	                            NULL, NULL, NULL), 0);
	json_t *pod = wait_phase("leaves", "Running", 5000);
	const char *pid = json_string_value(
		json_object_get(json_object_get(json_object_get(pod, "metadata"), "annotations"), "local.kubeflow.org/pid"));
	ck_assert_ptr_nonnull(pid);
	ck_assert_int_eq(getpgid(atoi(pid)), atoi(pid));
	char started[64];
	snprintf(started, sizeof started, "process group %s,", pid);
	ck_assert_int_eq(count_events("Started", started), 1);
	json_decref(pod);
	pod = wait_phase("leaves", "Succeeded", 5000);
	json_decref(pod);
	char path[300];
	snprintf(path, sizeof path, "%s/left", run_dir);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	int left[2] = { 0, 0 };
	ck_assert_int_eq(fscanf(f, "%d %d", &left[0], &left[1]), 2);
	fclose(f);
	int64_t end = now_ms() + 5000;
	while ((process_alive(left[0]) || process_alive(left[1])) && now_ms() < end)
		usleep(20 * 1000);
	bool gone = !process_alive(left[0]) && !process_alive(left[1]);
	for (int i = 0; i < 2; i++)
		if (process_alive(left[i]))
			kill(left[i], SIGKILL); /* never leave them behind, even when failing */
	ck_assert_msg(gone, "processes left behind: %d %d", left[0], left[1]);
}
END_TEST

/* The pid of process pid's parent, or -1. */
static pid_t parent_pid(pid_t pid)
{
	char path[64], line[512];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(line, 1, sizeof line - 1, f);
	fclose(f);
	line[n] = '\0';
	const char *rp = strrchr(line, ')');
	return rp && strlen(rp) > 4 ? (pid_t)atoi(rp + 4) : -1;
}

/* The pid a pod's replica wrote to FILE in the run directory (waiting for it), or 0. */
static pid_t pid_written(const char *file)
{
	char path[300];
	snprintf(path, sizeof path, "%s/%s", run_dir, file);
	int pid = 0;
	for (int64_t end = now_ms() + 5000; pid <= 0 && now_ms() < end; usleep(20 * 1000)) {
		FILE *f = fopen(path, "r");
		if (f && fscanf(f, "%d", &pid) != 1)
			pid = 0;
		if (f)
			fclose(f);
	}
	return (pid_t)pid;
}

/* A replica's descendant that left its process group (setsid) and outlived its supervisor,
 * killed with SIGKILL as the OOM killer would, is stopped when the engine is freed: found by the
 * TFJOB_RUN_DIR marker of its environment, with no subreaper set on this process (as in any
 * program that embeds the library). */
START_TEST(test_strays_of_a_killed_supervisor_end_with_the_engine)
{
	ck_assert_int_eq(create_pod("strays", "Never", "[\"sh\",\"-c\",\"setsid sleep 61 & echo $! > stray; sleep 60\"]",
	                            NULL, NULL, NULL), 0);
	json_t *pod = wait_phase("strays", "Running", 5000);
	const char *pid = json_string_value(
		json_object_get(json_object_get(json_object_get(pod, "metadata"), "annotations"), "local.kubeflow.org/pid"));
	ck_assert_ptr_nonnull(pid);
	pid_t replica = (pid_t)atoi(pid), stray = pid_written("stray");
	json_decref(pod);
	ck_assert_int_gt(stray, 0);
	pid_t supervisor = parent_pid(replica);
	ck_assert_int_gt(supervisor, 1);
	ck_assert_int_ne(supervisor, getpid());
	kill(supervisor, SIGKILL);
	json_decref(wait_phase("strays", "Failed", 5000)); /* the replica died with its supervisor */
	bool outlived = process_alive(stray);
	tfjob_transport_free(tr);
	tr = NULL;
	tfjob_local_free(local);
	local = NULL;
	int64_t end = now_ms() + 5000;
	while (process_alive(stray) && now_ms() < end)
		usleep(20 * 1000);
	bool gone = !process_alive(stray);
	if (!gone)
		kill(stray, SIGKILL); /* never leave it behind, even when failing */
	ck_assert_msg(outlived, "the stray %d did not outlive its supervisor: the test tests nothing", (int)stray);
	ck_assert_msg(gone, "the stray %d outlived the engine", (int)stray);
}
END_TEST

/* /proc/<pid>/<what> into buf (NUL bytes included); its length. */
static size_t read_proc(pid_t pid, const char *what, char *buf, size_t size)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/%s", (int)pid, what);
	FILE *f = fopen(path, "r");
	ck_assert_msg(f != NULL, "cannot read %s", path);
	size_t n = fread(buf, 1, size, f);
	fclose(f);
	return n;
}

/* The bytes of an argv in /proc/<pid>/cmdline, and the same as a JSON array. */
static const char ODD_ARGV[] = "sh\0-c\0printf %s \"$ODD\" > odd; sleep 60; :\0a b\n'\"$x*";
#define ODD_ARGV_JSON "[\"sh\",\"-c\",\"printf %s \\\"$ODD\\\" > odd; sleep 60; :\",\"a b\\n'\\\"$x*\"]"

/* Each replica's supervisor is the program tfjob-supervise, found next to libtfjob.so; with
 * TFJOB_SUPERVISE naming no program (tests/meson.build runs this file so too, as test_local_fork)
 * it is a fork of this process, which one SupervisorInProcess event says. Either way the
 * replica's arguments and environment reach it byte for byte. */
START_TEST(test_supervisor_program_or_fork)
{
	const char *override = getenv("TFJOB_SUPERVISE");
	bool forked = override && override[0] && access(override, X_OK) != 0;
	ck_assert_int_eq(create_pod("odd", "Never", ODD_ARGV_JSON, ",\"env\":[{\"name\":\"ODD\",\"value\":\"x\\ny z=\\\"\"}]",
	                            NULL, NULL), 0);
	json_t *pod = wait_phase("odd", "Running", 5000);
	pid_t replica = atoi(json_string_value(
		json_object_get(json_object_get(json_object_get(pod, "metadata"), "annotations"), "local.kubeflow.org/pid")));
	json_decref(pod);
	char path[512], got[4096], exe[4096];
	snprintf(path, sizeof path, "%s/odd", run_dir);
	int64_t end = now_ms() + 5000;
	struct stat st;
	while ((stat(path, &st) != 0 || st.st_size < 7) && now_ms() < end)
		usleep(20 * 1000);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	size_t n = fread(got, 1, sizeof got - 1, f);
	fclose(f);
	got[n] = '\0';
	ck_assert_str_eq(got, "x\ny z=\"");
	n = read_proc(replica, "cmdline", got, sizeof got);
	ck_assert_int_eq(n, sizeof ODD_ARGV);
	ck_assert_mem_eq(got, ODD_ARGV, sizeof ODD_ARGV);
	pid_t supervisor = parent_pid(replica);
	ck_assert_int_eq(parent_pid(supervisor), getpid());
	snprintf(path, sizeof path, "/proc/%d/exe", (int)supervisor);
	ssize_t len = readlink(path, exe, sizeof exe - 1);
	ck_assert_int_gt(len, 0);
	exe[len] = '\0';
	ck_assert_ptr_nonnull(strrchr(exe, '/'));
	if (forked) {
		/* a fork of this program (its name is not compared: under valgrind it is valgrind's) */
		ck_assert_str_ne(strrchr(exe, '/'), "/tfjob-supervise");
		ck_assert_int_eq(count_events("SupervisorInProcess", override), 1);
	} else {
		ck_assert_str_eq(strrchr(exe, '/'), "/tfjob-supervise");
		n = read_proc(supervisor, "cmdline", got, sizeof got);
		ck_assert_uint_gt(n, sizeof ODD_ARGV + 3);
		ck_assert_mem_eq(got + n - sizeof ODD_ARGV - 3, "--", 3); /* the command follows "--" */
		ck_assert_mem_eq(got + n - sizeof ODD_ARGV, ODD_ARGV, sizeof ODD_ARGV);
		ck_assert_int_eq(count_events("SupervisorInProcess", NULL), 0);
	}
	/* Said once per engine, not per replica. */
	ck_assert_int_eq(create_pod("plain", "Never", "[\"true\"]", NULL, NULL, NULL), 0);
	json_decref(wait_phase("plain", "Succeeded", 5000));
	ck_assert_int_eq(count_events("SupervisorInProcess", NULL), forked ? 1 : 0);
}
END_TEST

static void *poll_until_running(void *name)
{
	json_t *pod = wait_phase(name, "Running", 5000);
	json_decref(pod);
	usleep(200 * 1000); /* the child has armed its parent-death signal by now */
	return NULL;
}

/* A replica outlives the thread that started it (the parent-death signal its supervisor gets
 * when that thread ends is not the end of the process): it runs to its own end. */
START_TEST(test_replica_outlives_the_thread_that_started_it)
{
	ck_assert_int_eq(create_pod("outlives", "Never", "[\"sh\",\"-c\",\"sleep 0.5; exit 7\"]", NULL, NULL, NULL), 0);
	pthread_t starter;
	ck_assert_int_eq(pthread_create(&starter, NULL, poll_until_running, "outlives"), 0);
	ck_assert_int_eq(pthread_join(starter, NULL), 0);
	json_t *pod = wait_phase("outlives", "Failed", 5000);
	ck_assert_int_eq(exit_code(pod), 7);
	json_decref(pod);
}
END_TEST

START_TEST(test_missing_executable_is_127)
{
	ck_assert_int_eq(create_pod("nope", "Never", "[\"/nonexistent/tfjob-no-such-program\"]", NULL, NULL, NULL), 0);
	json_t *pod = wait_phase("nope", "Failed", 5000);
	ck_assert_int_eq(exit_code(pod), 127);
	json_decref(pod);
	ck_assert_ptr_nonnull(strstr(read_log("nope"), "cannot run '/nonexistent/tfjob-no-such-program'"));
	ck_assert_int_eq(count_events("Exited", "code 127: cannot run '/nonexistent/tfjob-no-such-program'"), 1);
	/* A working directory that does not exist: the same, with the reason in the event too. */
	ck_assert_int_eq(create_pod("nowd", "Never", "[\"true\"]", ",\"workingDir\":\"no/such/dir\"", NULL, NULL), 0);
	pod = wait_phase("nowd", "Failed", 5000);
	ck_assert_int_eq(exit_code(pod), 127);
	json_decref(pod);
	ck_assert_int_eq(count_events("Exited", "code 127: cannot change to the working directory"), 1);
	ck_assert_ptr_nonnull(strstr(read_log("nowd"), "no/such/dir': No such file or directory"));
}
END_TEST

START_TEST(test_restart_backoff)
{
	/* OnFailure restarts in place: 100, 200, 400, 400 ms (cap) with the shortened options. */
	ck_assert_int_eq(create_pod("flaky", "OnFailure", "[\"sh\",\"-c\",\"exit 1\"]", NULL, NULL, NULL), 0);
	int64_t end = now_ms() + 10000;
	json_t *pod = NULL;
	for (;;) {
		ck_assert_int_ge(tfjob_local_poll(local, 50, NULL), 0);
		json_decref(pod);
		pod = get_pod("flaky");
		if (json_integer_value(json_object_get(container(pod), "restartCount")) >= 4)
			break;
		ck_assert_msg(now_ms() < end, "no 4 restarts in 10 s");
	}
	ck_assert_str_eq(phase_of(pod), "Running"); /* restarting in place: the pod stays Running */
	json_t *last = json_object_get(json_object_get(container(pod), "lastState"), "terminated");
	ck_assert_int_eq(json_integer_value(json_object_get(last, "exitCode")), 1);
	json_decref(pod);
	ck_assert_int_eq(count_events("BackOff", "Back-off 100 ms"), 1);
	ck_assert_int_eq(count_events("BackOff", "Back-off 200 ms"), 1);
	ck_assert_int_ge(count_events("BackOff", "Back-off 400 ms"), 2);
	ck_assert_int_eq(count_events("BackOff", "Back-off 800 ms"), 0);
	/* The delays are real: from the first exit to the 4th start at least 100+200+400 ms. */
	int64_t first_exit = -1, fourth_start = -1;
	int starts = 0;
	size_t i;
	json_t *e;
	json_array_foreach(events, i, e) {
		const char *reason = json_string_value(json_array_get(e, 1));
		if (!strcmp(reason, "Exited") && first_exit < 0)
			first_exit = json_integer_value(json_array_get(e, 3));
		if (!strcmp(reason, "Started") && ++starts == 4)
			fourth_start = json_integer_value(json_array_get(e, 3));
	}
	ck_assert_int_ge(fourth_start - first_exit, 700);
	/* Exit 0 under OnFailure ends the pod. */
	ck_assert_int_eq(create_pod("once", "OnFailure", "[\"true\"]", NULL, NULL, NULL), 0);
	pod = wait_phase("once", "Succeeded", 5000);
	json_decref(pod);
}
END_TEST

START_TEST(test_kubelet_backoff_by_default)
{
	/* Without the test options: the first restart waits 10 s, as the kubelet's does. */
	tfjob_local *l = NULL;
	tfjob_transport *t = NULL;
	tfjob_local_options opts = TFJOB_LOCAL_OPTIONS_INIT;
	opts.run_dir = run_dir;
	opts.on_event = on_event;
	ck_assert_int_eq(tfjob_local_new(&l, &opts, NULL), 0);
	ck_assert_int_eq(tfjob_local_transport_new(&t, l, NULL), 0);
	ck_assert_int_eq(tfjob_transport_create(NULL, t, &PODS, "default",
	                                        "{\"metadata\":{\"name\":\"crash\"},\"spec\":{\"restartPolicy\":\"OnFailure\","
	                                        "\"containers\":[{\"name\":\"tensorflow\",\"command\":[\"false\"]}]}}", NULL), 0);
	int64_t end = now_ms() + 5000;
	while (count_events("BackOff", NULL) == 0) {
		ck_assert_msg(now_ms() < end, "no BackOff");
		ck_assert_int_ge(tfjob_local_poll(l, 50, NULL), 0);
	}
	ck_assert_int_eq(count_events("BackOff", "Back-off 10000 ms restarting container tensorflow (restart 1)"), 1);
	tfjob_local_poll(l, 300, NULL);
	ck_assert_int_eq(count_events("Started", NULL), 1); /* not restarted yet */
	tfjob_transport_free(t);
	tfjob_local_free(l);
}
END_TEST

START_TEST(test_always_restarts_after_success)
{
	ck_assert_int_eq(create_pod("always", "Always", "[\"true\"]", NULL, NULL, NULL), 0);
	int64_t end = now_ms() + 5000;
	json_t *pod = NULL;
	do {
		ck_assert_msg(now_ms() < end, "no restart");
		ck_assert_int_ge(tfjob_local_poll(local, 50, NULL), 0);
		json_decref(pod);
		pod = get_pod("always");
	} while (json_integer_value(json_object_get(container(pod), "restartCount")) < 1);
	ck_assert_str_eq(phase_of(pod), "Running");
	json_decref(pod);
}
END_TEST

START_TEST(test_sigterm_then_sigkill)
{
	/* The process ignores SIGTERM: SIGKILL comes after the pod's grace period (1 s). */
	/* Its child (sleep, SIGTERM ignored too) outlives the test unless the group is killed. */
	ck_assert_int_eq(create_pod("stubborn", "Never", "[\"sh\",\"-c\",\"trap '' TERM; echo ready; while :; do sleep 30; done\"]",
	                            NULL, "\"terminationGracePeriodSeconds\":1", NULL), 0);
	json_t *pod = wait_phase("stubborn", "Running", 5000);
	pid_t pid = atoi(json_string_value(
		json_object_get(json_object_get(json_object_get(pod, "metadata"), "annotations"), "local.kubeflow.org/pid")));
	json_decref(pod);
	wait_log("stubborn", "ready");
	int64_t start = now_ms();
	ck_assert_int_eq(tfjob_transport_delete(NULL, tr, &PODS, "default", "stubborn", NULL, NULL), 0);
	pod = get_pod("stubborn"); /* terminating: still listed, with a deletionTimestamp */
	ck_assert_ptr_nonnull(json_object_get(json_object_get(pod, "metadata"), "deletionTimestamp"));
	json_decref(pod);
	tfjob_local_poll(local, 300, NULL);
	ck_assert_int_eq(kill(pid, 0), 0); /* still alive: it ignores SIGTERM */
	wait_phase("stubborn", NULL, 10000);
	int64_t took = now_ms() - start;
	ck_assert_int_ge(took, 950);
	ck_assert_int_le(took, 10000); /* loose: a loaded machine or valgrind; 30 s would be the default grace */
	/* The whole process group is gone (zombies aside). SIGKILL is delivered asynchronously: the
	 * shell is reaped, its sleep may still be on its way out on a loaded machine, so wait a
	 * little for it (far less than the sleep's own 30 s). */
	int64_t deadline = now_ms() + 3000;
	while (live_in_group(pid) > 0 && now_ms() < deadline)
		usleep(20 * 1000);
	ck_assert_int_eq(live_in_group(pid), 0);
	ck_assert_int_eq(count_events("Killing", "Grace period over"), 1);
	ck_assert_int_eq(count_events("Exited", "code 137 (SIGKILL)"), 1);
}
END_TEST

START_TEST(test_delete_terminates_with_143)
{
	ck_assert_int_eq(create_pod("sleeper", "Never", "[\"sh\",\"-c\",\"echo ready; exec sleep 60\"]", NULL, NULL, NULL), 0);
	json_t *pod = wait_phase("sleeper", "Running", 5000);
	json_decref(pod);
	wait_log("sleeper", "ready");
	tfjob_delete_options dopts = TFJOB_DELETE_OPTIONS_INIT;
	dopts.grace_period_seconds = 5;
	int64_t start = now_ms();
	ck_assert_int_eq(tfjob_transport_delete(NULL, tr, &PODS, "default", "sleeper", &dopts, NULL), 0);
	wait_phase("sleeper", NULL, 5000);
	ck_assert_int_lt(now_ms() - start, 4900); /* before the SIGKILL at 5 s (loose for loaded machines) */
	ck_assert_int_eq(count_events("Exited", "code 143 (SIGTERM)"), 1);
	ck_assert_int_eq(count_events("Killing", "SIGKILL after 5000 ms"), 1); /* the delete's own grace period */
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_transport_delete(NULL, tr, &PODS, "default", "sleeper", NULL, &err), TFJOB_ENOTFOUND);
	tfjob_error_free(err);
}
END_TEST

START_TEST(test_default_grace_period_is_30s)
{
	/* No terminationGracePeriodSeconds and no option: 30 s, as Kubernetes defaults it. */
	ck_assert_int_eq(create_pod("plain", "Never", "[\"sh\",\"-c\",\"echo ready; exec sleep 60\"]", NULL, NULL, NULL), 0);
	json_decref(wait_phase("plain", "Running", 5000));
	wait_log("plain", "ready");
	ck_assert_int_eq(tfjob_transport_delete(NULL, tr, &PODS, "default", "plain", NULL, NULL), 0);
	wait_phase("plain", NULL, 5000);
	ck_assert_int_eq(count_events("Killing", "SIGTERM, SIGKILL after 30000 ms"), 1);
	/* The pod's own terminationGracePeriodSeconds. */
	ck_assert_int_eq(create_pod("own", "Never", "[\"sh\",\"-c\",\"echo ready; exec sleep 60\"]", NULL,
	                            "\"terminationGracePeriodSeconds\":7", NULL), 0);
	json_decref(wait_phase("own", "Running", 5000));
	wait_log("own", "ready");
	ck_assert_int_eq(tfjob_transport_delete(NULL, tr, &PODS, "default", "own", NULL, NULL), 0);
	wait_phase("own", NULL, 5000);
	ck_assert_int_eq(count_events("Killing", "SIGTERM, SIGKILL after 7000 ms"), 1);
}
END_TEST

START_TEST(test_shutdown_keeps_final_state)
{
	ck_assert_int_eq(create_pod("a", "Always", "[\"sh\",\"-c\",\"echo ready; exec sleep 60\"]", NULL, NULL, NULL), 0);
	json_t *pod = wait_phase("a", "Running", 5000);
	json_decref(pod);
	wait_log("a", "ready");
	ck_assert_int_eq(tfjob_local_shutdown(local, NULL), 1);
	pod = get_pod("a");
	ck_assert_str_eq(phase_of(pod), "Failed"); /* Always, but no restart after a shutdown */
	ck_assert_int_eq(exit_code(pod), 143);
	json_decref(pod);
	ck_assert_int_eq(tfjob_local_running_count(local), 0);
}
END_TEST

START_TEST(test_env_workdir_and_relative_paths)
{
	char sub[512];
	snprintf(sub, sizeof sub, "%s/sub", run_dir);
	ck_assert_int_eq(mkdir(sub, 0777), 0);
	snprintf(sub, sizeof sub, "%s/sub/hello.sh", run_dir);
	FILE *f = fopen(sub, "w");
	fputs("#!/bin/sh\necho \"script in $(pwd) FOO=$FOO EMPTY=[$EMPTY] args=$*\"\n", f);
	fclose(f);
	chmod(sub, 0755);
	ck_assert_int_eq(create_pod("envy", "Never", "[\"./hello.sh\"]",
	                            ",\"args\":[\"x\",\"y\"],\"workingDir\":\"sub\",\"env\":[{\"name\":\"FOO\",\"value\":\"bar\"},"
	                            "{\"name\":\"EMPTY\"}]",
	                            NULL, NULL), 0);
	json_t *pod = wait_phase("envy", "Succeeded", 5000);
	json_decref(pod);
	char want[600];
	snprintf(want, sizeof want, "script in %s/sub FOO=bar EMPTY=[] args=x y\n", run_dir);
	ck_assert_str_eq(read_log("envy"), want);
}
END_TEST

START_TEST(test_variable_expansion)
{
	/* $(VAR) from the container's env, $$ escapes, unknown references stay; env values see earlier entries. */
	ck_assert_int_eq(create_pod("exp", "Never", "[\"echo\",\"$(GREETING)\"]",
	                            ",\"args\":[\"$(WHO)\",\"$$(WHO)\",\"$(NOPE)\",\"a$$b\",\"$(TF_CONFIG_PATH\",\"end$\"],"
	                            "\"env\":[{\"name\":\"WHO\",\"value\":\"world\"},"
	                            "{\"name\":\"GREETING\",\"value\":\"hello-$(WHO)\"}]",
	                            NULL, NULL), 0);
	json_t *pod = wait_phase("exp", "Succeeded", 5000);
	json_decref(pod);
	ck_assert_str_eq(read_log("exp"), "hello-world world $(WHO) $(NOPE) a$b $(TF_CONFIG_PATH end$\n");
}
END_TEST

START_TEST(test_refused_fields)
{
	tfjob_error *err = NULL;
	ck_assert_int_eq(create_pod("nocmd", "Never", NULL, NULL, NULL, &err), TFJOB_EINVAL);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "pod nocmd: spec.containers[0].command: "));
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "runs no images"));
	ck_assert_str_eq(tfjob_error_field(err), "spec.containers[0].command");
	tfjob_error_free(err);
	err = NULL;
	/* Kubernetes' field path of a list entry is its index: env[1], and the message names the variable. */
	ck_assert_int_eq(create_pod("vf", "Never", "[\"true\"]",
	                            ",\"env\":[{\"name\":\"A\",\"value\":\"a\"},"
	                            "{\"name\":\"PASSWORD\",\"valueFrom\":{\"secretKeyRef\":{\"name\":\"s\",\"key\":\"k\"}}}]",
	                            NULL, &err), TFJOB_EINVAL);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "spec.containers[0].env[1].valueFrom: PASSWORD: "));
	ck_assert_str_eq(tfjob_error_field(err), "spec.containers[0].env[1].valueFrom");
	tfjob_error_free(err);
	err = NULL;
	ck_assert_int_eq(create_pod("ef", "Never", "[\"true\"]", ",\"envFrom\":[{\"configMapRef\":{\"name\":\"c\"}}]", NULL, &err),
	                 TFJOB_EINVAL);
	ck_assert_str_eq(tfjob_error_field(err), "spec.containers[0].envFrom");
	tfjob_error_free(err);
	ck_assert_ptr_null(get_pod("nocmd"));
	/* Duplicate names are refused as by an API server. */
	ck_assert_int_eq(create_pod("dup", "Never", "[\"true\"]", NULL, NULL, NULL), 0);
	err = NULL;
	ck_assert_int_eq(create_pod("dup", "Never", "[\"true\"]", NULL, NULL, &err), TFJOB_EEXISTS);
	tfjob_error_free(err);
	/* Update and patch of Pods are not supported. */
	err = NULL;
	ck_assert_int_eq(tfjob_transport_patch(NULL, tr, &PODS, "default", "dup", NULL, "{}", &err), TFJOB_ESTATE);
	tfjob_error_free(err);
}
END_TEST

START_TEST(test_ignored_reported_once)
{
	const char *spec = "\"volumes\":[{\"name\":\"v\",\"emptyDir\":{}}],\"nodeSelector\":{\"a\":\"b\"}";
	const char *extra = ",\"resources\":{\"limits\":{\"cpu\":\"1\"}},\"volumeMounts\":[{\"name\":\"v\",\"mountPath\":\"/v\"}]";
	char text[2048];
	snprintf(text, sizeof text, "%s", spec);
	ck_assert_int_eq(create_pod("i1", "Never", "[\"true\"]", extra, text, NULL), 0);
	ck_assert_int_eq(create_pod("i2", "Never", "[\"true\"]", extra, text, NULL), 0);
	/* A sidecar is not run, and said so. */
	ck_assert_int_eq(
		tfjob_transport_create(NULL, tr, &PODS, "default",
		                       "{\"metadata\":{\"name\":\"i3\"},\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"command\":[\"true\"]},"
		                       "{\"name\":\"sidecar\",\"image\":\"istio\"}]}}", NULL), 0);
	ck_assert_int_eq(count_events("Ignored", "spec.volumes "), 1);
	ck_assert_int_eq(count_events("Ignored", "spec.nodeSelector "), 1);
	ck_assert_int_eq(count_events("Ignored", "spec.containers[tensorflow].image "), 1);
	ck_assert_int_eq(count_events("Ignored", "spec.containers[tensorflow].resources "), 1);
	ck_assert_int_eq(count_events("Ignored", "spec.containers[tensorflow].volumeMounts "), 1);
	ck_assert_int_eq(count_events("Ignored", "spec.containers[sidecar] "), 1);
	ck_assert_int_eq(count_events("Ignored", NULL), 6);
}
END_TEST

START_TEST(test_list_with_selector)
{
	ck_assert_int_eq(create_pod("l1", "Never", "[\"true\"]", NULL, NULL, NULL), 0);
	tfjob_list_options lo = TFJOB_LIST_OPTIONS_INIT;
	lo.label_selector = "app=t";
	char *text = NULL;
	ck_assert_int_eq(tfjob_transport_list(&text, tr, &PODS, "default", &lo, NULL), 0);
	json_t *list = json_loads(text, 0, NULL);
	tfjob_free(text);
	ck_assert_int_eq(json_array_size(json_object_get(list, "items")), 1);
	json_decref(list);
	lo.label_selector = "app=other";
	ck_assert_int_eq(tfjob_transport_list(&text, tr, &PODS, "default", &lo, NULL), 0);
	list = json_loads(text, 0, NULL);
	tfjob_free(text);
	ck_assert_int_eq(json_array_size(json_object_get(list, "items")), 0);
	json_decref(list);
}
END_TEST

START_TEST(test_addresses)
{
	char a[256], b[256], c[256];
	ck_assert_int_eq(tfjob_local_address(a, sizeof a, "worker", 0, 2222, local), 0);
	ck_assert_int_eq(tfjob_local_address(b, sizeof b, "worker", 1, 2222, local), 0);
	ck_assert_int_eq(tfjob_local_address(c, sizeof c, "worker", 0, 2222, local), 0);
	ck_assert_str_eq(a, c);
	ck_assert_str_ne(a, b);
	ck_assert_int_eq(strncmp(a, "127.0.0.1:", 10), 0);
	ck_assert_int_gt(atoi(a + 10), 0);
	ck_assert_int_eq(tfjob_local_address(a, 8, "worker", 0, 2222, local), TFJOB_EINVAL);
}
END_TEST

START_TEST(test_interrupt_wakes_poll)
{
	int64_t start = now_ms();
	tfjob_local_interrupt(local);
	ck_assert_int_eq(tfjob_local_poll(local, 5000, NULL), 0);
	ck_assert_int_lt(now_ms() - start, 4000); /* well before the 5 s timeout, loose for loaded machines */
	ck_assert_int_eq(tfjob_local_interrupted(local), 1);
}
END_TEST

static const char *JOB = "apiVersion: kubeflow.org/v1\n"
                         "kind: TFJob\n"
                         "metadata: {name: unit}\n"
                         "spec:\n"
                         "  tfReplicaSpecs:\n"
                         "    Worker:\n"
                         "      replicas: 2\n"
                         "      restartPolicy: ExitCode\n"
                         "      template:\n"
                         "        spec:\n"
                         "          containers:\n"
                         "          - name: tensorflow\n"
                         "            image: x\n"
                         "            command: [sh, -c, 'echo \"$TF_CONFIG\"']\n";

static void count_updates(tfjob_local_update what, const char *json, void *payload)
{
	int *counts = payload;
	ck_assert_ptr_nonnull(json);
	counts[what]++;
}

START_TEST(test_run_job)
{
	tfjob_job *job = tu_parse(JOB);
	tfjob_local_run_options ro = TFJOB_LOCAL_RUN_OPTIONS_INIT;
	int counts[3] = { 0, 0, 0 };
	ro.on_update = count_updates;
	ro.payload = counts;
	tfjob_local_outcome outcome = TFJOB_LOCAL_FAILED;
	tfjob_error *err = NULL;
	int rc = tfjob_local_run(&outcome, local, job, &ro, &err);
	ck_assert_msg(rc == 0, "run: %s", tfjob_error_message(err));
	ck_assert_int_eq(outcome, TFJOB_LOCAL_SUCCEEDED);
	ck_assert_int_gt(counts[TFJOB_LOCAL_UPDATE_STATUS], 0);
	ck_assert_int_gt(counts[TFJOB_LOCAL_UPDATE_PODS], 0);
	ck_assert_int_gt(counts[TFJOB_LOCAL_UPDATE_EVENT], 0);
	const char *log = read_log("unit-worker-0");
	ck_assert_ptr_nonnull(strstr(log, "\"task\":{\"type\":\"worker\",\"index\":0}"));
	ck_assert_ptr_nonnull(strstr(log, "127.0.0.1:"));
	const char *files[] = { "job.json", "pods.json", "events.json" };
	for (size_t i = 0; i < 3; i++) {
		char path[512];
		snprintf(path, sizeof path, "%s/%s", run_dir, files[i]);
		json_t *doc = json_load_file(path, 0, NULL);
		ck_assert_msg(doc != NULL, "%s", path);
		json_decref(doc);
	}
	tfjob_job_free(job);
}
END_TEST

/* Each of N replicas writes its TF_CONFIG to tf-<pid> in the run directory (the base dir; aside,
 * then renamed), then waits until all N have, so that none is stopped before it wrote, whichever
 * decides the job's end ($$$$: Kubernetes' expansion makes it the shell's $$). */
#define WRITE_TF_CONFIG(N) "      template:\n" \
                           "        spec:\n" \
                           "          containers:\n" \
                           "          - name: tensorflow\n" \
                           "            image: x\n" \
                           "            command: [sh, -c, 'printf %s \"$TF_CONFIG\" > .t-$$$$ && mv .t-$$$$ tf-$$$$ && " \
                           "while set -- tf-*; [ $# -lt " N " ]; do sleep 0.1; done']\n"
/* No Pod is deleted as the job ends: pods.json keeps them all. */
#define KEEP_PODS "  runPolicy: {cleanPodPolicy: None}\n"

static int compare_strings(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The tf-* files of dir, sorted (n of them in *count); NULL-terminated, malloc'd. */
static char **tf_config_files(const char *dir, size_t *count)
{
	char **out = calloc(1024, sizeof *out);
	size_t n = 0;
	DIR *d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	for (struct dirent *e; (e = readdir(d)) && n < 1023;) {
		if (strncmp(e->d_name, "tf-", 3))
			continue;
		char path[512];
		snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
		FILE *f = fopen(path, "rb");
		ck_assert_ptr_nonnull(f);
		char *text = calloc(1, 1 << 20);
		size_t len = fread(text, 1, (1 << 20) - 1, f);
		text[len] = '\0';
		fclose(f);
		out[n++] = text;
	}
	closedir(d);
	qsort(out, n, sizeof *out, compare_strings);
	*count = n;
	return out;
}

/* The TF_CONFIG each replica of a run was started with is, byte for byte, what tfjob_tf_config()
 * writes for it with the run's addresses; and each Pod in pods.json is what tfjob_render_pod()
 * renders (the run hands the engine the planner's rendered tree, not its text). */
static void check_run_tf_config(const char *job_text)
{
	tfjob_job *job = tu_parse(job_text);
	tfjob_local_outcome outcome = TFJOB_LOCAL_FAILED;
	tfjob_error *err = NULL;
	int rc = tfjob_local_run(&outcome, local, job, NULL, &err);
	ck_assert_msg(rc == 0, "run: %s", tfjob_error_message(err));
	ck_assert_int_eq(outcome, TFJOB_LOCAL_SUCCEEDED);
	ck_assert_int_eq(tfjob_job_apply_defaults(job, NULL, NULL), 0);
	tfjob_render_options ro = TFJOB_RENDER_OPTIONS_INIT;
	ro.address_cb = tfjob_local_address;
	ro.address_payload = local;
	char path[512];
	snprintf(path, sizeof path, "%s/pods.json", run_dir);
	json_t *pods = json_load_file(path, 0, NULL), *item;
	ck_assert_ptr_nonnull(pods);
	char **want = calloc(1024, sizeof *want);
	size_t n = 0, i;
	json_array_foreach(json_object_get(pods, "items"), i, item) {
		json_t *labels = json_object_get(json_object_get(item, "metadata"), "labels");
		const char *type = json_string_value(json_object_get(labels, TFJOB_LABEL_REPLICA_TYPE));
		const char *index = json_string_value(json_object_get(labels, TFJOB_LABEL_REPLICA_INDEX));
		ck_assert_ptr_nonnull(type);
		ck_assert_ptr_nonnull(index);
		/* the label is the type in lower case: the job's key is found case-insensitively */
		const char *keys[] = { "PS", "Worker", "Chief", "Evaluator", "Master" }, *key = NULL;
		for (size_t k = 0; k < 5; k++)
			if (!strcasecmp(keys[k], type))
				key = keys[k];
		ck_assert_ptr_nonnull(key);
		ck_assert_int_eq(tfjob_tf_config(&want[n], job, key, atoll(index), &ro, &err), 0);
		char *rendered = NULL;
		ck_assert_int_eq(tfjob_render_pod(&rendered, job, key, atoll(index), &ro, 0, &err), 0);
		json_t *pod = json_loads(rendered, 0, NULL);
		ck_assert_msg(json_equal(json_object_get(pod, "spec"), json_object_get(item, "spec")), "%s-%s", type, index);
		json_decref(pod);
		tfjob_free(rendered);
		n++;
	}
	qsort(want, n, sizeof *want, compare_strings);
	size_t got_n = 0;
	char **got = tf_config_files(run_dir, &got_n);
	ck_assert_uint_eq(got_n, n);
	for (i = 0; i < n; i++) {
		ck_assert_str_eq(got[i], want[i]);
		tfjob_free(want[i]);
		free(got[i]);
	}
	free(want);
	free(got);
	json_decref(pods);
	tfjob_job_free(job);
}

START_TEST(test_run_tf_config_as_rendered)
{
	static const char *const shapes[] = {
		/* n = 1: not distributed, no TF_CONFIG */
		"spec:\n" KEEP_PODS "  tfReplicaSpecs:\n    Worker:\n      replicas: 1\n" WRITE_TF_CONFIG("1"),
		"spec:\n" KEEP_PODS "  tfReplicaSpecs:\n    Worker:\n      replicas: 2\n" WRITE_TF_CONFIG("2"),
		"spec:\n" KEEP_PODS "  tfReplicaSpecs:\n    PS:\n      replicas: 1\n" WRITE_TF_CONFIG("5")
		"    Worker:\n      replicas: 2\n" WRITE_TF_CONFIG("5") "    Chief:\n      replicas: 1\n" WRITE_TF_CONFIG("5")
		"    Evaluator:\n      replicas: 1\n" WRITE_TF_CONFIG("5"),
		"spec:\n" KEEP_PODS "  enableDynamicWorker: true\n  tfReplicaSpecs:\n    PS:\n      replicas: 2\n"
		WRITE_TF_CONFIG("5") "    Worker:\n      replicas: 3\n" WRITE_TF_CONFIG("5"),
		/* a custom port: the local run gives each replica a free port of its own all the same */
		"spec:\n" KEEP_PODS "  tfReplicaSpecs:\n    Worker:\n      replicas: 2\n" WRITE_TF_CONFIG("2")
		"            ports: [{name: tfjob-port, containerPort: 3333}]\n",
		"spec:\n" KEEP_PODS "  tfReplicaSpecs:\n    Worker:\n      replicas: 100\n" WRITE_TF_CONFIG("100"),
	};
	for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
		if (s) { /* a run directory (and an engine) per run */
			teardown();
			setup();
		}
		char text[8192];
		snprintf(text, sizeof text, "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: shape%zu}\n%s", s,
		         shapes[s]);
		check_run_tf_config(text);
	}
}
END_TEST

START_TEST(test_run_refuses_job_without_command)
{
	char *text = strdup(JOB);
	*strstr(text, "            command") = '\0';
	tfjob_job *job = tu_parse(text);
	free(text);
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_local_check(job, &err), TFJOB_EINVAL);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "spec.tfReplicaSpecs[Worker].template.spec.containers[0].command: "));
	ck_assert_str_eq(tfjob_error_field(err), "spec.tfReplicaSpecs[Worker].template.spec.containers[0].command");
	tfjob_error_free(err);
	err = NULL;
	tfjob_local_outcome outcome;
	ck_assert_int_eq(tfjob_local_run(&outcome, local, job, NULL, &err), TFJOB_EINVAL);
	tfjob_error_free(err);
	ck_assert_int_eq(tfjob_local_running_count(local), 0);
	tfjob_job_free(job);
}
END_TEST

/* A job the planner would leave alone forever is refused: nothing can resume it or take it over. */
START_TEST(test_run_refuses_job_it_would_never_run)
{
	static const char *const cases[][2] = {
		{ "spec:\n  runPolicy: {suspend: true}\n", "spec.runPolicy.suspend" },
		{ "spec:\n  runPolicy: {managedBy: kueue.x-k8s.io/multikueue}\n", "spec.runPolicy.managedBy" },
	};
	for (size_t i = 0; i < 2; i++) {
		char text[2048];
		const char *spec = strstr(JOB, "spec:\n");
		snprintf(text, sizeof text, "%.*s%s%s", (int)(spec - JOB), JOB, cases[i][0], spec + 6);
		tfjob_job *job = tu_parse(text);
		tfjob_error *err = NULL;
		ck_assert_int_eq(tfjob_local_check(job, &err), TFJOB_EINVAL);
		ck_assert_str_eq(tfjob_error_field(err), cases[i][1]);
		tfjob_error_free(err);
		err = NULL;
		tfjob_local_outcome outcome;
		ck_assert_int_eq(tfjob_local_run(&outcome, local, job, NULL, &err), TFJOB_EINVAL);
		tfjob_error_free(err);
		tfjob_job_free(job);
	}
	/* managedBy training-operator is this controller. */
	const char *spec = strstr(JOB, "spec:\n");
	char text[2048];
	snprintf(text, sizeof text, "%.*sspec:\n  runPolicy: {managedBy: kubeflow.org/training-operator, suspend: false}\n%s",
	         (int)(spec - JOB), JOB, spec + 6);
	tfjob_job *job = tu_parse(text);
	ck_assert_int_eq(tfjob_local_check(job, NULL), 0);
	tfjob_job_free(job);
}
END_TEST

/* The report of the run directory as JSON (asserts it can be made). */
static json_t *report(int64_t tail)
{
	char *text = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_local_report(&text, run_dir, tail, &err);
	ck_assert_msg(rc == 0, "report: %s", tfjob_error_message(err));
	json_t *doc = json_loads(text, 0, NULL);
	tfjob_free(text);
	ck_assert_ptr_nonnull(doc);
	return doc;
}

static json_t *replica(json_t *rep, const char *name)
{
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(rep, "replicas"), i, r)
		if (!strcmp(json_string_value(json_object_get(r, "name")), name))
			return r;
	ck_abort_msg("no replica %s in the report", name);
	return NULL;
}

static const char *rstr(json_t *r, const char *key)
{
	const char *v = json_string_value(json_object_get(r, key));
	return v ? v : "";
}

/* A job of two workers: worker-1 writes three lines and exits 3 (restartPolicy given). */
static tfjob_job *failing_job(const char *policy, const char *run_policy)
{
	char text[2048];
	snprintf(text, sizeof text,
	         "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: rep}\nspec:\n  runPolicy: %s\n"
	         "  tfReplicaSpecs:\n    Worker:\n      replicas: 2\n      restartPolicy: %s\n      template:\n"
	         "        spec:\n          containers:\n          - name: tensorflow\n            image: busybox\n            command: [sh, -c, "
	         "'if [ $TFJOB_POD_NAME = rep-worker-1 ]; then echo one; echo two >&2; echo three; exit 3; fi; sleep 30']\n",
	         run_policy, policy);
	return tu_parse(text);
}

/* A replica that failed and was then deleted by cleanPodPolicy is reported as such (v1.9 then
 * counts it as succeeded), with its exit code, the last lines of its output and its log. */
START_TEST(test_report_failed_then_deleted)
{
	tfjob_job *job = failing_job("Never", "{cleanPodPolicy: All}");
	tfjob_local_outcome outcome = TFJOB_LOCAL_SUCCEEDED;
	tfjob_local_run_options ro = TFJOB_LOCAL_RUN_OPTIONS_INIT;
	ro.compat = TFJOB_COMPAT_TRAINING_OPERATOR_1_9;
	ck_assert_int_eq(tfjob_local_run(&outcome, local, job, &ro, NULL), 0);
	ck_assert_int_eq(outcome, TFJOB_LOCAL_FAILED);
	json_t *rep = report(2);
	ck_assert_str_eq(rstr(rep, "outcome"), "Failed");
	json_t *w1 = replica(rep, "worker-1");
	ck_assert_str_eq(rstr(w1, "summary"), "worker-1 failed with exit 3, then deleted by cleanPodPolicy All as the job finished");
	ck_assert_str_eq(rstr(w1, "phase"), "Deleted");
	ck_assert_int_eq(json_integer_value(json_object_get(w1, "failedExitCode")), 3);
	json_t *tail = json_object_get(w1, "tail");
	ck_assert_int_eq(json_array_size(tail), 2); /* the last 2 of 3 lines */
	ck_assert_str_eq(json_string_value(json_array_get(tail, 0)), "two");
	ck_assert_str_eq(json_string_value(json_array_get(tail, 1)), "three");
	ck_assert_ptr_nonnull(strstr(rstr(w1, "log"), "rep-worker-1.log"));
	json_t *w0 = replica(rep, "worker-0");
	ck_assert_int_eq(json_integer_value(json_object_get(w0, "failures")), 0); /* stopped by us: no failure */
	ck_assert_ptr_nonnull(strstr(rstr(w0, "summary"), "worker-0 was still running: deleted by cleanPodPolicy All"));
	ck_assert_int_eq(json_array_size(json_object_get(w0, "tail")), 0);
	json_decref(rep);
	rep = report(-1); /* default: 20 lines, so all 3 */
	ck_assert_int_eq(json_array_size(json_object_get(replica(rep, "worker-1"), "tail")), 3);
	json_decref(rep);
	tfjob_job_free(job);
}
END_TEST

struct loop_seen {
	char summary[256];
	int64_t restart_in_ms;
};

/* While the run goes on: the report of a replica waiting to restart in place. */
static void watch_restart_loop(tfjob_local_update what, const char *json, void *payload)
{
	struct loop_seen *seen = payload;
	(void)json;
	if (what != TFJOB_LOCAL_UPDATE_PODS || seen->summary[0])
		return;
	json_t *rep = report(20);
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(rep, "replicas"), i, r)
		if (strstr(rstr(r, "summary"), "next restart in"))
			snprintf(seen->summary, sizeof seen->summary, "%s", rstr(r, "summary"));
	json_decref(rep);
}

/* A restart loop says so while it waits, with the kubelet's back-off in the Pod's status. */
START_TEST(test_report_restart_loop)
{
	tfjob_local_free(local);
	tfjob_transport_free(tr);
	tr = NULL;
	tfjob_local_options opts = TFJOB_LOCAL_OPTIONS_INIT;
	opts.run_dir = run_dir;
	opts.backoff_initial_ms = 1500;
	ck_assert_int_eq(tfjob_local_new(&local, &opts, NULL), 0);
	tfjob_job *job = failing_job("OnFailure", "{backoffLimit: 1, cleanPodPolicy: None}");
	struct loop_seen seen = { "", 0 };
	tfjob_local_run_options ro = TFJOB_LOCAL_RUN_OPTIONS_INIT;
	ro.on_update = watch_restart_loop;
	ro.payload = &seen;
	tfjob_local_outcome outcome = TFJOB_LOCAL_SUCCEEDED;
	ck_assert_int_eq(tfjob_local_run(&outcome, local, job, &ro, NULL), 0);
	ck_assert_int_eq(outcome, TFJOB_LOCAL_FAILED);
	ck_assert_msg(!strcmp(seen.summary, "worker-1 exited 3 once, next restart in 2s") ||
	                  !strcmp(seen.summary, "worker-1 exited 3 once, next restart in 1s"),
	              "summary while waiting: '%s'", seen.summary);
	json_t *rep = report(20);
	const char *after = rstr(replica(rep, "worker-1"), "summary");
	ck_assert_msg(!strncmp(after, "worker-1 failed with exit 3", 27), "summary after the run: '%s'", after);
	json_decref(rep);
	tfjob_job_free(job);
}
END_TEST

/* Run directories: a fresh one per run under ./tfjob-runs, parents made, one holding a run refused. */
START_TEST(test_run_dir)
{
	char cwd[4096], *dir = NULL, *again = NULL;
	ck_assert_ptr_nonnull(getcwd(cwd, sizeof cwd));
	ck_assert_int_eq(chdir(run_dir), 0);
	ck_assert_int_eq(tfjob_local_run_dir(&dir, NULL, "gen-", NULL), 0);
	ck_assert_int_eq(tfjob_local_run_dir(&again, NULL, "gen-", NULL), 0);
	ck_assert_str_ne(dir, again);
	char prefix[512];
	snprintf(prefix, sizeof prefix, "%s/tfjob-runs/gen-", run_dir);
	ck_assert_msg(!strncmp(dir, prefix, strlen(prefix)), "%s", dir);
	tfjob_free(dir);
	tfjob_free(again);
	ck_assert_int_eq(tfjob_local_run_dir(&dir, "a/b/c", NULL, NULL), 0);
	snprintf(prefix, sizeof prefix, "%s/a/b/c", run_dir);
	ck_assert_str_eq(dir, prefix);
	tfjob_free(dir);
	FILE *f = fopen("a/b/c/job.json", "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_local_run_dir(&dir, "a/b/c", NULL, &err), TFJOB_EEXISTS);
	ck_assert_ptr_null(dir);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "already holds a run"));
	tfjob_error_free(err);
	err = NULL;
	ck_assert_int_eq(tfjob_local_run_dir(&dir, "a/b/c/job.json/x", NULL, &err), TFJOB_EIO);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "Not a directory"));
	tfjob_error_free(err);
	ck_assert_int_eq(tfjob_local_run_dir(&dir, NULL, "a/b", NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_local_run_dir(NULL, NULL, NULL, NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_local_report(&dir, "a/b", 20, NULL), TFJOB_ENOTFOUND);
	ck_assert_int_eq(chdir(cwd), 0);
}
END_TEST

/* A job of `workers` workers asking for `each` GPUs and one PS asking for none; each prints its
 * CUDA_VISIBLE_DEVICES. */
/* Each worker prints its devices, then waits (10 s at most) until every worker has printed: GPUs
 * are handed out again when a replica ends, so only replicas that overlap must get disjoint ones. */
static tfjob_job *gpu_job(int workers, int each)
{
	char text[4096];
	snprintf(text, sizeof text,
	         "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: g}\nspec:\n  tfReplicaSpecs:\n"
	         "    PS:\n      replicas: 1\n      template:\n        spec:\n          containers:\n"
	         "          - name: tensorflow\n            image: x\n            command: [sh, -c, 'echo \"[${CUDA_VISIBLE_DEVICES-unset}]\"; sleep 1']\n"
	         "    Worker:\n      replicas: %d\n      template:\n        spec:\n          containers:\n"
	         "          - name: tensorflow\n            image: x\n            command: [sh, -c, 'echo \"[${CUDA_VISIBLE_DEVICES-unset}]\"; "
	         "i=0; while [ $i -lt 200 ] && [ $(cat %s/g-worker-*.log 2>/dev/null | wc -l) -lt %d ]; do sleep 0.05; i=$((i+1)); done']\n"
	         "            resources: {limits: {nvidia.com/gpu: %d}}\n",
	         workers, run_dir, workers, each);
	return tu_parse(text);
}

static tfjob_local *gpu_engine(const char *gpus)
{
	tfjob_local_options opts = TFJOB_LOCAL_OPTIONS_INIT;
	opts.run_dir = run_dir;
	opts.gpus = gpus;
	tfjob_local *l = NULL;
	ck_assert_int_eq(tfjob_local_new(&l, &opts, NULL), 0);
	return l;
}

/* nvidia.com/gpu limits get disjoint CUDA_VISIBLE_DEVICES; no limit gets it empty; asking for more
 * GPUs than there are is refused before anything starts. */
START_TEST(test_gpus)
{
	tfjob_local *l = gpu_engine("0, 1,2,3");
	tfjob_job *job = gpu_job(2, 2);
	tfjob_local_outcome outcome = TFJOB_LOCAL_FAILED;
	tfjob_error *err = NULL;
	int rc = tfjob_local_run(&outcome, l, job, NULL, &err);
	ck_assert_msg(rc == 0, "run: %s", tfjob_error_message(err));
	ck_assert_int_eq(outcome, TFJOB_LOCAL_SUCCEEDED);
	char *w0 = strdup(read_log("g-worker-0")), *w1 = strdup(read_log("g-worker-1"));
	ck_assert_str_eq(read_log("g-ps-0"), "[]\n");
	ck_assert_msg((!strcmp(w0, "[0,1]\n") && !strcmp(w1, "[2,3]\n")) || (!strcmp(w0, "[2,3]\n") && !strcmp(w1, "[0,1]\n")),
	              "worker GPUs: %s %s", w0, w1);
	free(w0);
	free(w1);
	tfjob_local_free(l);
	tfjob_job_free(job);
	/* 3 x 2 > 4: refused, nothing started */
	char cmd[512];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'/*", run_dir);
	ck_assert_int_eq(system(cmd), 0);
	l = gpu_engine("0,1,2,3");
	job = gpu_job(3, 2);
	err = NULL;
	ck_assert_int_eq(tfjob_local_run(&outcome, l, job, NULL, &err), TFJOB_EINVAL);
	ck_assert_str_eq(tfjob_error_field(err), "spec.tfReplicaSpecs[Worker].template.spec.containers[0].resources.limits[nvidia.com/gpu]");
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "asks for 6 GPUs (Worker: 3 x 2) and 4 are available (0,1,2,3)"));
	tfjob_error_free(err);
	char path[512];
	snprintf(path, sizeof path, "%s/g-worker-0.log", run_dir);
	ck_assert_int_ne(access(path, F_OK), 0);
	tfjob_local_free(l);
	tfjob_job_free(job);
	/* "" is no GPU at all; a bad list is refused at once */
	l = gpu_engine("");
	job = gpu_job(1, 1);
	err = NULL;
	ck_assert_int_eq(tfjob_local_run(&outcome, l, job, NULL, &err), TFJOB_EINVAL);
	/* one GPU is "1 GPU", not "1 GPUs" */
	ck_assert_msg(strstr(tfjob_error_message(err), "asks for 1 GPU (Worker: 1 x 1) and 0 are available"), "%s",
	              tfjob_error_message(err));
	tfjob_error_free(err);
	tfjob_local_free(l);
	tfjob_job_free(job);
	tfjob_local_options opts = TFJOB_LOCAL_OPTIONS_INIT;
	opts.run_dir = run_dir;
	opts.gpus = "0,0";
	err = NULL;
	ck_assert_int_eq(tfjob_local_new(&l, &opts, &err), TFJOB_EINVAL);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "listed twice"));
	tfjob_error_free(err);
	/* A version 1 caller's struct ends before gpus: options_init writes nothing past it, and a
	 * version 1 struct means "this machine's GPUs". */
	unsigned char raw[sizeof(tfjob_local_options)];
	memset(raw, 0xAB, sizeof raw);
	ck_assert_int_eq(tfjob_local_options_init((tfjob_local_options *)(void *)raw, 1), 0);
	ck_assert_int_eq(raw[sizeof raw - 1], 0xAB);
	((tfjob_local_options *)(void *)raw)->run_dir = run_dir;
	ck_assert_int_eq(tfjob_local_new(&l, (tfjob_local_options *)(void *)raw, NULL), 0);
	tfjob_local_free(l);
}
END_TEST

/* A Pod whose GPUs are held by another stays Pending until they are free. */
START_TEST(test_gpus_wait_for_free_ones)
{
	tfjob_transport_free(tr);
	tfjob_local_free(local);
	local = gpu_engine("7");
	ck_assert_int_eq(tfjob_local_transport_new(&tr, local, NULL), 0);
	const char *res = ",\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"1\"}}";
	ck_assert_int_eq(create_pod("first", "Never", "[\"sh\",\"-c\",\"echo $CUDA_VISIBLE_DEVICES; sleep 0.5\"]", res, NULL, NULL), 0);
	ck_assert_int_eq(create_pod("second", "Never", "[\"sh\",\"-c\",\"echo $CUDA_VISIBLE_DEVICES\"]", res, NULL, NULL), 0);
	tfjob_local_poll(local, 100, NULL);
	json_t *pod = get_pod("second");
	ck_assert_str_eq(phase_of(pod), "Pending");
	json_decref(pod);
	json_decref(wait_phase("second", "Succeeded", 10000));
	ck_assert_str_eq(read_log("first"), "7\n");
	ck_assert_str_eq(read_log("second"), "7\n");
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("local");
	TCase *tc = tcase_create("engine");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_options);
	tcase_add_test(tc, test_spawn_succeeds_with_logs);
	tcase_add_test(tc, test_running_then_exit_code);
	tcase_add_test(tc, test_signal_is_128_plus_n);
	tcase_add_test(tc, test_missing_executable_is_127);
	tcase_add_test(tc, test_leftovers_die_with_the_replica);
	tcase_add_test(tc, test_strays_of_a_killed_supervisor_end_with_the_engine);
	tcase_add_test(tc, test_replica_outlives_the_thread_that_started_it);
	tcase_add_test(tc, test_supervisor_program_or_fork);
	tcase_add_test(tc, test_restart_backoff);
	tcase_add_test(tc, test_kubelet_backoff_by_default);
	tcase_add_test(tc, test_default_grace_period_is_30s);
	tcase_add_test(tc, test_run_refuses_job_it_would_never_run);
	tcase_add_test(tc, test_always_restarts_after_success);
	tcase_add_test(tc, test_sigterm_then_sigkill);
	tcase_add_test(tc, test_delete_terminates_with_143);
	tcase_add_test(tc, test_shutdown_keeps_final_state);
	tcase_add_test(tc, test_env_workdir_and_relative_paths);
	tcase_add_test(tc, test_variable_expansion);
	tcase_add_test(tc, test_refused_fields);
	tcase_add_test(tc, test_ignored_reported_once);
	tcase_add_test(tc, test_list_with_selector);
	tcase_add_test(tc, test_addresses);
	tcase_add_test(tc, test_interrupt_wakes_poll);
	tcase_add_test(tc, test_run_job);
	tcase_add_test(tc, test_run_tf_config_as_rendered);
	tcase_add_test(tc, test_run_refuses_job_without_command);
	tcase_add_test(tc, test_report_failed_then_deleted);
	tcase_add_test(tc, test_report_restart_loop);
	tcase_add_test(tc, test_run_dir);
	tcase_add_test(tc, test_gpus);
	tcase_add_test(tc, test_gpus_wait_for_free_ones);
	suite_add_tcase(s, tc);
	return s;
}

int main(void) { return tu_run(suite()); }
