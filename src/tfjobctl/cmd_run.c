/*
 * tfjobctl run [--run-dir DIR] [--compat C] [--grace-period S] [--restart-backoff MS] FILE
 * Runs a TFJob's replicas as local processes (include/tfjob/local.h) with live progress.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#endif

#include "local_view.h"

static tfjob_local *g_local;

static void on_signal(int sig)
{
	(void)sig;
	tfjob_local_interrupt(g_local);
}

void usage_run(FILE *out)
{
	fprintf(out,
	        "usage: tfjobctl run [--run-dir DIR] [--compat C] [--grace-period S] [--restart-backoff MS] [--tail N] [--gpus LIST] FILE\n"
	        "       tfjobctl run [OPTIONS] -f FILE|DIR|- [-f ...]\n\n"
	        "Run a TFJob on this machine: each replica is a process (the tensorflow container's command\n"
	        "and args, its env and workingDir, TF_CONFIG with 127.0.0.1 addresses on free ports), driven by\n"
	        "the same planner as the operator: restart policies, exit codes, backoffLimit,\n"
	        "activeDeadlineSeconds, cleanPodPolicy, TTL and success rules (docs/local.md).\n"
	        "Shows live progress, stops cleanly on Ctrl-C, prints what kubectl describe would at the end.\n\n"
	        "  --run-dir DIR          keep the job, its status, pods, events and logs there (default: a\n"
	        "                         new directory under ./tfjob-runs/, else under $TMPDIR); made if\n"
	        "                         missing; one that already holds a run (job.json) is refused\n"
	        "  --compat C             'documented' (default) or 'training-operator-1.9'\n"
	        "  --grace-period S       seconds between SIGTERM and SIGKILL for every pod (default: the\n"
	        "                         pod's terminationGracePeriodSeconds, 30)\n"
	        "  --restart-backoff MS   first in-place restart delay of Always/OnFailure replicas\n"
	        "                         (default 10000, doubling up to 300000 as the kubelet does)\n"
	        "  --tail N               lines of a failed replica's output shown when it fails and in the\n"
	        "                         final report, with the log's path (default 20; 0: none)\n"
	        "  --gpus LIST            GPU ids to hand out, e.g. 0,1,3 ('' for none; default: the GPUs\n"
	        "                         nvidia-smi -L or /proc/driver/nvidia/gpus shows). A replica whose\n"
	        "                         container asks for nvidia.com/gpu: N gets N of its own in\n"
	        "                         CUDA_VISIBLE_DEVICES; one that asks for none gets it empty. A job\n"
	        "                         asking for more GPUs than there are is refused (exit 2)\n\n"
	        "  -f, --filename F       a file, a directory (its .yaml, .yml and .json files) or '-'; may be\n"
	        "                         repeated; together they must hold exactly one TFJob (a run is one\n"
	        "                         job in one run directory): several are refused, named, before\n"
	        "                         anything starts\n\n"
	        "Relative paths: the working directory of a replica is its workingDir resolved against the\n"
	        "directory of FILE, or of the file the -f input held it in (the current directory for '-'); a relative command path is resolved\n"
	        "against that working directory. Replicas see TFJOB_RUN_DIR and TFJOB_POD_NAME.\n\n"
	        "Exit status: 0 the job Succeeded, 1 it Failed, 2 usage or input error (invalid spec,\n"
	        "a replica without command), 130 interrupted (Ctrl-C, SIGTERM).\n");
}

/* ---- live progress ---- */

struct view {
	bool tty;
	int drawn;          /* lines of the redrawn block */
	json_t *pods;       /* last pods */
	json_t *status;     /* last status */
	json_t *phases;     /* pod name -> summary (plain mode) */
	char *conditions;   /* last condition line (plain mode) */
	const char *run_dir;
	int64_t tail;       /* lines of a failed replica's output to show */
	json_t *report;     /* last tfjob_local_report(): pod name -> replica entry */
	json_t *failures;   /* pod name -> exits shown so far */
};

static void clock_str(char *buf, size_t size)
{
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(buf, size, "%H:%M:%S", &tm);
}

static char *condition_line(const json_t *status)
{
	char buf[512] = "conditions:";
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(status, "conditions"), i, c) {
		if (strcmp(ctl_str(c, "status"), "True"))
			continue;
		size_t len = strlen(buf);
		snprintf(buf + len, sizeof buf - len, " %s", ctl_str(c, "type"));
	}
	if (!strcmp(buf, "conditions:"))
		strcat(buf, " (none)");
	return strdup(buf);
}

/* Print one line; on a terminal cut to its width, so that the redrawn block keeps its height. */
static void line_out(const struct view *v, const char *text)
{
	struct winsize ws;
	int cols = v->tty && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 1 ? ws.ws_col - 1 : 0;
	if (cols > 0 && (int)strlen(text) > cols)
		printf("%.*s\n", cols, text);
	else
		printf("%s\n", text);
}

static void erase(struct view *v)
{
	if (v->tty && v->drawn) {
		printf("\033[%dA", v->drawn);
		for (int i = 0; i < v->drawn; i++)
			printf("\033[2K\n");
		printf("\033[%dA", v->drawn);
	}
	v->drawn = 0;
}

/* Lines the redrawn block may take: it must fit the terminal, or moving the cursor up to redraw
 * it stops at the top of the screen and the old block is left behind. */
static size_t block_room(void)
{
	struct winsize ws;
	int rows = ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_row > 0 ? ws.ws_row : 24;
	return rows > 6 ? (size_t)rows - 3 : 3;
}

/* The replica entry of the report for a Pod, when it is waiting to restart in place. */
static const json_t *restarting(const struct view *v, const char *pod)
{
	const json_t *r = json_object_get(v->report, pod);
	return json_object_get(r, "restartAt") && !json_is_true(json_object_get(r, "finished")) ? r : NULL;
}

static void draw(struct view *v)
{
	if (!v->tty)
		return;
	size_t i, n = json_array_size(v->pods), room = block_room();
	size_t shown = n + 1 <= room ? n : room - 2; /* room for "... N more" and the conditions */
	json_t *p;
	json_array_foreach(v->pods, i, p) {
		if (i >= shown)
			break;
		char sum[160];
		ctl_pod_summary(sum, sizeof sum, p);
		const json_t *meta = json_object_get(p, "metadata");
		const json_t *loop = restarting(v, ctl_str(meta, "name"));
		char text[512];
		if (loop) /* "worker-0 exited 1 four times, next restart in 2m40s" */
			snprintf(text, sizeof text, "  %-28s %s", ctl_str(meta, "name"), ctl_str(loop, "summary"));
		else
			snprintf(text, sizeof text, "  %-28s %-40s restarts %lld", ctl_str(meta, "name"), sum,
			         (long long)json_integer_value(json_object_get(ctl_pod_tf_status(p), "restartCount")));
		printf("\033[2K");
		line_out(v, text);
		v->drawn++;
	}
	if (shown < n) {
		/* The rest, counted by phase. */
		static const char *const phases[] = { "Pending", "Running", "Succeeded", "Failed" };
		size_t counts[4] = { 0, 0, 0, 0 };
		for (i = shown; i < n; i++) {
			const char *phase = ctl_str(json_object_get(json_array_get(v->pods, i), "status"), "phase");
			for (size_t k = 0; k < 4; k++)
				counts[k] += !strcmp(phase, phases[k]);
		}
		char text[256];
		int len = snprintf(text, sizeof text, "  ... and %zu more pods:", n - shown);
		for (size_t k = 0; k < 4 && len > 0 && (size_t)len < sizeof text; k++)
			if (counts[k])
				len += snprintf(text + len, sizeof text - (size_t)len, " %zu %s", counts[k], phases[k]);
		printf("\033[2K");
		line_out(v, text);
		v->drawn++;
	}
	char *line = condition_line(v->status);
	printf("\033[2K  %s\n", line ? line : "");
	free(line);
	v->drawn++;
	fflush(stdout);
}

static void plain_pods(struct view *v)
{
	size_t i;
	json_t *p;
	char ts[16];
	clock_str(ts, sizeof ts);
	json_array_foreach(v->pods, i, p) {
		char sum[160];
		ctl_pod_summary(sum, sizeof sum, p);
		const char *name = ctl_str(json_object_get(p, "metadata"), "name");
		const char *prev = json_string_value(json_object_get(v->phases, name));
		if (!prev || strcmp(prev, sum)) {
			printf("%s pod %s: %s\n", ts, name, sum);
			json_object_set_new(v->phases, name, json_string(sum));
		}
	}
}

/* Read the report again; for each replica that failed since, say what happened, its last
 * lines and where its log is (once per exit). */
static void show_failures(struct view *v)
{
	json_t *report = ctl_run_report(v->run_dir, v->tail);
	if (!report)
		return;
	json_object_clear(v->report);
	char ts[16];
	clock_str(ts, sizeof ts);
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(report, "replicas"), i, r) {
		const char *pod = ctl_str(r, "pod");
		json_object_set(v->report, pod, r);
		json_int_t failures = json_integer_value(json_object_get(r, "failures"));
		json_int_t exits = json_integer_value(json_object_get(r, "exits"));
		if (failures == 0 || exits <= json_integer_value(json_object_get(v->failures, pod)))
			continue;
		json_object_set_new(v->failures, pod, json_integer(exits));
		char text[1024];
		snprintf(text, sizeof text, "%s %s", ts, ctl_str(r, "summary"));
		line_out(v, text);
		ctl_print_replica_failure(stdout, "    ", r);
	}
	json_decref(report);
}

static void on_update(tfjob_local_update what, const char *json, void *payload)
{
	struct view *v = payload;
	json_t *doc = json_loads(json, 0, NULL);
	if (!doc)
		return;
	erase(v);
	char ts[16];
	clock_str(ts, sizeof ts);
	if (what == TFJOB_LOCAL_UPDATE_EVENT) {
		char text[2048];
		snprintf(text, sizeof text, "%s %-7s %-20s %-24s %s", ts, ctl_str(doc, "type"),
		         ctl_str(doc, "reason"), ctl_str(doc, "object"),
		         ctl_str(doc, "message"));
		line_out(v, text);
		json_decref(doc);
	} else if (what == TFJOB_LOCAL_UPDATE_PODS) {
		json_decref(v->pods);
		v->pods = doc;
		if (!v->tty)
			plain_pods(v);
		show_failures(v);
	} else {
		json_decref(v->status);
		v->status = doc;
		char *line = condition_line(doc);
		if (!v->tty && line && (!v->conditions || strcmp(line, v->conditions)))
			printf("%s %s\n", ts, line);
		free(v->conditions);
		v->conditions = line;
	}
	draw(v);
	fflush(stdout);
}

/* ---- processes that left their process group ---- */

#ifdef __linux__
/* Processes a replica moved out of its process group (setsid, a daemon's double fork) are
 * stopped by the replica's supervisor, and, when the supervisor itself was killed, by
 * tfjob_local_free() (by their TFJOB_RUN_DIR marker, lib/local/strays.c). Those that also cleared
 * their environment are caught here: as this process is their subreaper
 * (PR_SET_CHILD_SUBREAPER), they become its children when their parents end. After the run they
 * are stopped, as a container's processes end with it, and reaped (the library's too). Returns
 * how many were running. */
static int stop_strays(void)
{
	int stopped = 0;
	pid_t self = getpid();
	for (int round = 0; round < 100; round++) {
		int found = 0;
		DIR *d = opendir("/proc");
		struct dirent *e;
		while (d && (e = readdir(d)) != NULL) {
			char *end;
			long pid = strtol(e->d_name, &end, 10);
			if (*end || pid <= 0)
				continue;
			char path[64], buf[512];
			snprintf(path, sizeof path, "/proc/%ld/stat", pid);
			FILE *f = fopen(path, "r");
			if (!f)
				continue;
			size_t n = fread(buf, 1, sizeof buf - 1, f);
			fclose(f);
			buf[n] = '\0';
			char *rp = strrchr(buf, ')'), state;
			long ppid;
			if (!rp || sscanf(rp + 1, " %c %ld", &state, &ppid) != 2 || ppid != (long)self)
				continue;
			found++;
			if (state != 'Z') {
				kill(-(pid_t)pid, SIGKILL); /* its own group, when it leads one (setsid) */
				kill((pid_t)pid, SIGKILL);
				stopped++;
			}
		}
		if (d)
			closedir(d);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
		if (!found)
			break;
		usleep(10 * 1000);
	}
	return stopped;
}
#endif

/* ---- run directory ---- */

static char *manifest_dir(const char *file)
{
	if (!strcmp(file, "-"))
		return NULL;
	char *copy = strdup(file);
	char *dir = copy ? strdup(dirname(copy)) : NULL;
	free(copy);
	return dir;
}

/*
 * The one TFJob to run and the file it came from ("-" for standard input): FILE, or -f
 * FILE|DIR|- (repeatable) holding exactly one TFJob. A run is one job in one run directory, so
 * inputs with several are refused, naming them, before anything starts.
 */
static int load_the_job(tfjob_job **job, char **file, struct ctl_sources *sources, int argc, char **argv)
{
	if (!sources->count) {
		if (optind != argc - 1)
			return ctl_fail("run: expected exactly one FILE (see tfjobctl run --help)");
		*file = strdup(argv[optind]);
		return *file ? ctl_load_job(job, argv[optind]) : ctl_fail("out of memory");
	}
	if (optind != argc) {
		free(sources->paths);
		*sources = (struct ctl_sources){ 0 };
		return ctl_fail("run: give FILE or -f, not both (see tfjobctl run --help)");
	}
	return ctl_inputs_one_job(job, file, sources, "run",
	                          "a run is one TFJob in one run directory: give one, and a tfjobctl run to each");
}

static int check_job(tfjob_job *job, tfjob_compat compat)
{
	tfjob_validate_options vopts = TFJOB_VALIDATE_OPTIONS_INIT;
	vopts.compat = compat;
	tfjob_field_errors *fe = NULL;
	tfjob_error *err = NULL;
	if (tfjob_job_validate(&fe, job, &vopts, &err))
		return ctl_fail_err(err);
	size_t n = tfjob_field_errors_count(fe);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "tfjobctl: invalid TFJob: %s\n", tfjob_field_errors_message(fe, i));
	tfjob_field_errors_free(fe);
	if (n)
		return EXIT_USAGE;
	tfjob_default_options dopts = TFJOB_DEFAULT_OPTIONS_INIT;
	dopts.compat = compat;
	if (tfjob_job_apply_defaults(job, &dopts, &err) || tfjob_local_check(job, &err))
		return ctl_fail_err(err);
	return 0;
}

static bool parse_int(int64_t *out, const char *s, int64_t max)
{
	char *end;
	errno = 0;
	long long v = strtoll(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max)
		return false;
	*out = v;
	return true;
}

/* What `tfjobctl run` was asked for. */
struct run_args {
	tfjob_local_options lopts;
	tfjob_local_run_options ropts;
	const char *run_dir;
	int64_t tail;
	struct ctl_sources sources;
};

/* One option into a; EXIT_OK or the exit status of a usage error. */
static int run_option(struct run_args *a, int ch, char **argv)
{
	int64_t v;
	switch (ch) {
	case 'f': return ctl_sources_add(&a->sources, optarg) ? EXIT_USAGE : EXIT_OK;
	case 'r': a->run_dir = optarg; return EXIT_OK;
	case 'c': return ctl_parse_compat(&a->ropts.compat, optarg) ? EXIT_OK : EXIT_USAGE;
	case 'g':
		if (!parse_int(&v, optarg, 86400))
			return ctl_fail("run: --grace-period needs seconds from 0 to 86400, got '%s'", optarg);
		a->lopts.grace_period_ms = v * 1000;
		return EXIT_OK;
	case 'b':
		if (!parse_int(&v, optarg, 3600000) || v == 0)
			return ctl_fail("run: --restart-backoff needs milliseconds from 1 to 3600000, got '%s'", optarg);
		a->lopts.backoff_initial_ms = v;
		if (v > 300000)
			a->lopts.backoff_max_ms = v;
		return EXIT_OK;
	case 't': return ctl_parse_tail(&a->tail, "run", optarg, false, CTL_REPORT_TAIL_MAX) ? EXIT_OK : EXIT_USAGE;
	case 'G': a->lopts.gpus = optarg; return EXIT_OK;
	case ':': return ctl_fail("run: option '%s' needs a value", argv[optind - 1]);
	default: return ctl_fail("run: unknown option '%s' (see tfjobctl run --help)", argv[optind - 1]);
	}
}

static int parse_run_args(struct run_args *a, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "run-dir", required_argument, NULL, 'r' },
		{ "compat", required_argument, NULL, 'c' },
		{ "grace-period", required_argument, NULL, 'g' },
		{ "restart-backoff", required_argument, NULL, 'b' },
		{ "tail", required_argument, NULL, 't' },
		{ "gpus", required_argument, NULL, 'G' },
		{ "filename", required_argument, NULL, 'f' },
		{ NULL, 0, NULL, 0 },
	};
	int ch, bad = EXIT_OK;
	opterr = 0;
	while (!bad && (ch = getopt_long(argc, argv, ":f:", longopts, NULL)) != -1)
		bad = run_option(a, ch, argv);
	if (bad)
		free(a->sources.paths);
	return bad;
}

/* Ctrl-C, SIGTERM and SIGHUP interrupt the run (it then stops its replicas and reports). */
static void catch_signals(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
	/* Output is only a view: a reader that goes away (tfjobctl run ... | head) must not kill the
	 * run and its replicas unsaved. Writes then fail with EPIPE; replicas get SIGPIPE back. */
	signal(SIGPIPE, SIG_IGN);
}

static void release_signals(void)
{
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
}

/* Run the job to its end with g_local, the view showing it; the engine is freed after. */
static int run_with_view(tfjob_local_outcome *outcome, tfjob_job *job, struct run_args *a, struct view *view,
                         tfjob_error **err)
{
	a->ropts.on_update = on_update;
	a->ropts.payload = view;
	catch_signals();
#ifdef __linux__
	prctl(PR_SET_CHILD_SUBREAPER, 1); /* see stop_strays() */
#endif
	int rc = tfjob_local_run(outcome, g_local, job, &a->ropts, err);
	erase(view);
	tfjob_local *done = g_local;
	g_local = NULL; /* the signal handler no longer touches it */
	tfjob_local_free(done); /* nothing is left running after this */
#ifdef __linux__
	int strays = stop_strays();
	if (strays > 0)
		printf("Stopped %d process%s the replicas had moved out of their process groups (setsid).\n", strays,
		       strays == 1 ? "" : "es");
#endif
	release_signals();
	return rc;
}

/* The final report and the exit status of a run that ended with rc and outcome. */
static int report_run(int rc, tfjob_local_outcome outcome, tfjob_error *err, const char *dir, int64_t tail)
{
	if (rc != TFJOB_EINVAL && rc != TFJOB_EINVALID) { /* else refused before anything started */
		printf("\n");
		ctl_run_describe(stdout, dir, tail);
	}
	if (rc) {
		fprintf(stderr, "tfjobctl: run: %s\n", tfjob_error_message(err));
		return rc == TFJOB_EINVAL || rc == TFJOB_EINVALID ? EXIT_USAGE : EXIT_NEGATIVE;
	}
	json_t *stored = ctl_run_load(dir, "job.json"); /* the name the store gave it (generateName) */
	printf("\nTFJob %s: %s. State and logs: %s (tfjobctl get --run-dir DIR, tfjobctl logs DIR POD)\n",
	       ctl_str(json_object_get(stored, "metadata"), "name"), tfjob_local_outcome_name(outcome), dir);
	json_decref(stored);
	return outcome == TFJOB_LOCAL_SUCCEEDED ? EXIT_OK : outcome == TFJOB_LOCAL_FAILED ? EXIT_NEGATIVE : EXIT_INTERRUPTED;
}

static void view_free(struct view *view)
{
	json_decref(view->pods);
	json_decref(view->status);
	json_decref(view->phases);
	json_decref(view->report);
	json_decref(view->failures);
	free(view->conditions);
}

/* Make the run directory and the engine for the job (g_local); EXIT_OK or an exit status. */
static int prepare_run(char **dir, char **base, struct run_args *a, const char *shown, const char *file)
{
	tfjob_error *err = NULL;
	if (tfjob_local_run_dir(dir, a->run_dir, shown, &err)) {
		fprintf(stderr, "tfjobctl: run: %s\n", tfjob_error_message(err));
		tfjob_error_free(err);
		return EXIT_USAGE;
	}
	*base = manifest_dir(file);
	a->lopts.run_dir = *dir;
	a->lopts.base_dir = *base;
	return tfjob_local_new(&g_local, &a->lopts, &err) ? ctl_fail_err(err) : EXIT_OK;
}

int cmd_run(int argc, char **argv)
{
	struct run_args a = { .tail = CTL_DEFAULT_TAIL };
	tfjob_local_options linit = TFJOB_LOCAL_OPTIONS_INIT;
	tfjob_local_run_options rinit = TFJOB_LOCAL_RUN_OPTIONS_INIT;
	a.lopts = linit;
	a.ropts = rinit;
	int rc = parse_run_args(&a, argc, argv);
	if (rc)
		return rc;
	char *file = NULL, *dir = NULL, *base = NULL;
	tfjob_job *job = NULL;
	rc = load_the_job(&job, &file, &a.sources, argc, argv);
	if (rc)
		return rc;
	rc = check_job(job, a.ropts.compat);
	/* metadata.generateName: the store picks the name; the run directory uses the prefix. */
	const char *shown = tfjob_job_name(job) ? tfjob_job_name(job) : tfjob_job_generate_name(job);
	if (!rc)
		rc = prepare_run(&dir, &base, &a, shown, file);
	if (rc) {
		tfjob_job_free(job);
		free(file);
		free(dir);
		free(base);
		return rc;
	}
	struct view view = { isatty(STDOUT_FILENO) == 1, 0, json_array(), json_object(), json_object(), NULL,
		                 dir, a.tail, json_object(), json_object() };
	printf("Running TFJob %s%s from %s\nRun directory: %s\n", shown ? shown : "", tfjob_job_name(job) ? "" : "*", file,
	       dir);
	fflush(stdout);
	tfjob_local_outcome outcome = TFJOB_LOCAL_FAILED;
	tfjob_error *err = NULL;
	rc = run_with_view(&outcome, job, &a, &view, &err);
	int status = report_run(rc, outcome, err, dir, a.tail);
	tfjob_error_free(err);
	view_free(&view);
	tfjob_job_free(job);
	free(file);
	free(dir);
	free(base);
	return status;
}
