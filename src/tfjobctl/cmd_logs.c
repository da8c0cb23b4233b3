/*
 * tfjobctl logs RUN POD|--all [-f] [--tail N] [--prefix]: print (and follow) replicas' logs of a local run.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "local_view.h"
#include "log_times.h"
#include "logs_cluster.h"

/* The one container of a pod the local runner runs, as kubectl logs -c and --prefix name it. */
#define LOCAL_CONTAINER "tensorflow"

static volatile sig_atomic_t stop_following;

static void on_signal(int sig)
{
	(void)sig;
	stop_following = 1;
}

void usage_logs(FILE *out)
{
	fprintf(out, "usage: tfjobctl logs [-f] [--tail N] [--since D|--since-time T] [--timestamps] [--prefix]\n"
	             "                     JOB [REPLICA] [--replica-type T] [--replica-index I] [--all] [--previous]\n"
	             "                     [-c C] [--kubeconfig F] [--context C] [-n NS]\n"
	             "       tfjobctl logs [same options] RUN POD|--all\n\n"
	             "Print the log of replicas of TFJob JOB in the cluster, read through the API server\n"
	             "(GET pods/NAME/log, as kubectl logs), or of the local run in directory RUN (tfjobctl run).\n"
	             "The first argument is a local run when it is a directory and no cluster flag is given.\n"
	             "REPLICA is TYPE-INDEX (worker-1, chief-0) or the pod's name (JOB-worker-1); without\n"
	             "it, the job's one pod, or those --replica-type/--replica-index select (several: --all).\n"
	             "POD of a local run is the pod name (dist-worker-0) or its type-index (worker-0).\n\n"
	             "  -f, --follow    keep printing what the replica writes until it has ended (its pod is\n"
	             "                  Succeeded, Failed or gone, or its process is; in the cluster: its\n"
	             "                  container) or Ctrl-C (exit 130)\n"
	             "  --all           every replica's log, in pod name order (with -f: as they write,\n"
	             "                  line by line); implies --prefix\n"
	             "  --replica-type T, --replica-index I  (cluster) the replicas of type T (worker, ps,\n"
	             "                  chief, ...), of index I\n"
	             "  --previous      (cluster) the log of the container's previous instance, before its\n"
	             "                  last restart\n"
	             "  --tail N        only the last N lines of each log (then what follows, with -f);\n"
	             "                  -1 (default): all\n"
	             "  --since D       only the lines written in the last D (10s, 5m, 1h30m; a number: seconds)\n"
	             "  --since-time T  only the lines written at or after T (RFC 3339, 2026-05-01T10:00:00Z)\n"
	             "  --timestamps    begin each line with the time it was written (RFC 3339, UTC), after\n"
	             "                  the prefix. Local: ms, from the run's index of the log, <pod>.log.times\n"
	             "                  (docs/local.md), within about 0.1 s; cluster: the container runtime's\n"
	             "  --prefix        begin each line with [pod/NAME/CONTAINER], as kubectl logs --prefix\n"
	             "  -c, --container C  the container (default tensorflow, the one TensorFlow runs in);\n"
	             "                  a local run has only tensorflow\n"
	             CTL_CLUSTER_USAGE
	             "                  (--compat is accepted, as by every command; a log does not depend on it)\n\n"
	             "Exit status: 0 ok, 1 the server answered with an error (no such TFJob or pod, a\n"
	             "container not started), 2 usage error, no such log or connection error, 130 interrupted.\n");
}

/* The pod is still running (or about to) according to pods.json. */
static bool pod_alive(const char *run, const char *pod)
{
	json_t *pods = ctl_run_load(run, "pods.json");
	bool alive = false;
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(pods, "items"), i, p) {
		const char *name = json_string_value(json_object_get(json_object_get(p, "metadata"), "name"));
		const char *phase = json_string_value(json_object_get(json_object_get(p, "status"), "phase"));
		if (name && !strcmp(name, pod)) {
			alive = phase && (!strcmp(phase, "Running") || !strcmp(phase, "Pending"));
			/* Its process is gone although pods.json says Running: the run itself ended without
			 * saving (killed); the pod will not write any more. */
			const char *pid = json_string_value(json_object_get(
				json_object_get(json_object_get(p, "metadata"), "annotations"), TFJOB_LOCAL_PID_ANNOTATION));
			if (alive && pid && atoi(pid) > 0 && kill((pid_t)atoi(pid), 0) != 0 && errno == ESRCH)
				alive = false;
		}
	}
	json_decref(pods);
	return alive;
}

/*
 * A pod name as the API server allows it (a DNS-1123 subdomain): lowercase letters, digits, '-'
 * and '.', starting and ending with a letter or digit. Anything else (a '/', "..") could name a
 * file outside the run directory.
 */
static bool is_pod_name(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || n > 253 || !isalnum((unsigned char)s[0]) || !isalnum((unsigned char)s[n - 1]))
		return false;
	for (size_t i = 0; i < n; i++)
		if (!(islower((unsigned char)s[i]) || isdigit((unsigned char)s[i]) || s[i] == '-' || s[i] == '.'))
			return false;
	return true;
}

/* POD as given, else "<job>-POD". */
static FILE *open_log(char *name, size_t size, const char *run, const char *pod)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s.log", run, pod);
	FILE *f = fopen(path, "r");
	snprintf(name, size, "%s", pod);
	if (f)
		return f;
	json_t *job = ctl_run_load(run, "job.json");
	const char *jn = json_string_value(json_object_get(json_object_get(job, "metadata"), "name"));
	if (jn) {
		snprintf(name, size, "%s-%s", jn, pod);
		snprintf(path, sizeof path, "%s/%s.log", run, name);
		f = fopen(path, "r");
	}
	json_decref(job);
	return f;
}

/* One log being printed: its file and time index, the pod's name, and (line mode) a line not
 * yet complete, which starts at byte `pos` of the log. */
struct source {
	FILE *f;
	struct log_times times;
	char name[1024];
	char *partial;
	size_t partial_len;
	int64_t pos;
	bool done;
};

struct log_flags {
	bool follow, prefix, timestamps;
	int64_t tail;     /* -1: all */
	int64_t since_ms; /* Unix ms; -1: from the start */
};

/* Printed line by line (a prefix or a time before each), rather than as the bytes are. */
static bool line_mode(const struct log_flags *lf)
{
	return lf->prefix || lf->timestamps;
}

static int64_t mtime_ms(FILE *f)
{
	struct stat st;
	if (fstat(fileno(f), &st) != 0)
		return 0;
	return (int64_t)st.st_mtim.tv_sec * 1000 + st.st_mtim.tv_nsec / 1000000;
}

/* pos when a line starts there, else the start of the next line (or the end of f). */
static int64_t line_start_from(FILE *f, int64_t pos)
{
	if (pos == 0 || fseeko(f, (off_t)(pos - 1), SEEK_SET) != 0)
		return pos;
	int c = getc(f); /* the byte before pos */
	while (c != EOF && c != '\n') {
		c = getc(f);
		if (c != EOF)
			pos++;
	}
	return pos;
}

/* The first line of f written at or after since_ms. */
static int64_t since_start(struct source *s, int64_t since_ms)
{
	if (fseeko(s->f, 0, SEEK_END) != 0)
		return 0;
	int64_t size = (int64_t)ftello(s->f);
	int64_t at = log_times_since(&s->times, since_ms, size, mtime_ms(s->f));
	return at < size ? line_start_from(s->f, at) : size;
}

/* Seek f to the start of its last n lines (n >= 0) that begin at or after byte floor. */
static void seek_tail(FILE *f, long long n, off_t floor)
{
	if (fseeko(f, 0, SEEK_END) != 0)
		return;
	off_t end = ftello(f), pos = end;
	long long newlines = 0;
	if (n == 0)
		return; /* at the end: nothing of what is there */
	char buf[8192];
	/* A final newline ends the last line; it does not start another. */
	while (pos > floor) {
		size_t chunk = pos - floor > (off_t)sizeof buf ? sizeof buf : (size_t)(pos - floor);
		pos -= (off_t)chunk;
		if (fseeko(f, pos, SEEK_SET) != 0 || fread(buf, 1, chunk, f) != chunk)
			break;
		for (size_t i = chunk; i-- > 0;) {
			if (buf[i] != '\n' || pos + (off_t)i == end - 1)
				continue;
			if (++newlines == n) {
				fseeko(f, pos + (off_t)i + 1, SEEK_SET);
				return;
			}
		}
	}
	fseeko(f, floor, SEEK_SET);
}

/* Where printing starts: --since, then --tail within what is left. */
static void seek_start(struct source *s, const struct log_flags *lf)
{
	off_t floor = lf->since_ms >= 0 ? (off_t)since_start(s, lf->since_ms) : 0;
	if (lf->tail >= 0)
		seek_tail(s->f, lf->tail, floor);
	else
		fseeko(s->f, floor, SEEK_SET);
	s->pos = (int64_t)ftello(s->f);
}

static void print_line(struct source *s, const struct log_flags *lf, const char *text, size_t len, int64_t mtime)
{
	if (lf->prefix)
		printf("[pod/%s/%s] ", s->name, LOCAL_CONTAINER);
	if (lf->timestamps) {
		char when[40];
		log_times_format(when, sizeof when, log_times_of(&s->times, s->pos, mtime));
		printf("%s ", when);
	}
	printf("%.*s\n", (int)len, text);
	s->pos += (int64_t)len + 1;
}

/* Print what the source has now: whole lines with their prefix or time (the rest kept until its
 * newline, or printed when `last`), or everything as it is in plain mode. Returns the bytes read. */
static size_t drain(struct source *s, const struct log_flags *lf, bool last)
{
	char buf[8192];
	size_t n, total = 0;
	if (lf->timestamps)
		log_times_refresh(&s->times);
	int64_t mtime = lf->timestamps ? mtime_ms(s->f) : 0;
	while ((n = fread(buf, 1, sizeof buf, s->f)) > 0) {
		total += n;
		if (!line_mode(lf)) {
			fwrite(buf, 1, n, stdout);
			continue;
		}
		char *grown = realloc(s->partial, s->partial_len + n);
		if (!grown)
			break;
		s->partial = grown;
		memcpy(s->partial + s->partial_len, buf, n);
		s->partial_len += n;
		char *start = s->partial, *end = s->partial + s->partial_len, *nl;
		while ((nl = memchr(start, '\n', (size_t)(end - start)))) {
			print_line(s, lf, start, (size_t)(nl - start), mtime);
			start = nl + 1;
		}
		s->partial_len = (size_t)(end - start);
		memmove(s->partial, start, s->partial_len);
	}
	clearerr(s->f);
	if (last && line_mode(lf) && s->partial_len) {
		print_line(s, lf, s->partial, s->partial_len, mtime);
		s->partial_len = 0;
	}
	fflush(stdout);
	return total;
}

static bool open_times(struct source *s, const char *run)
{
	char path[4096];
	snprintf(path, sizeof path, "%s/%s.log", run, s->name);
	return log_times_open(&s->times, path);
}

/* --since D (a duration before now) or --since-time T (RFC 3339): Unix ms. */
static bool parse_since(int64_t *out, const char *flag, const char *value)
{
	if (!strcmp(flag, "--since")) {
		long ms;
		struct timespec now;
		if (!ctl_parse_duration_ms(&ms, value) || ms <= 0) {
			ctl_fail("logs: --since needs a positive duration (10s, 5m, 1h30m), got '%s'", value);
			return false;
		}
		clock_gettime(CLOCK_REALTIME, &now);
		*out = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 - ms;
		return true;
	}
	int64_t s;
	if (tfjob_time_parse(&s, value)) {
		ctl_fail("logs: --since-time needs an RFC 3339 time (2026-05-01T10:00:00Z), got '%s'", value);
		return false;
	}
	*out = s * 1000;
	return true;
}

/* The pods of the run with a log, in name order ("<pod>.log" in RUN). */
static int all_pods(char ***out, size_t *count, const char *run)
{
	static const char *const logs[] = { ".log", NULL };
	if (ctl_list_dir(out, count, run, logs))
		return EXIT_USAGE;
	for (size_t i = 0; i < *count; i++)
		(*out)[i][strlen((*out)[i]) - 4] = '\0';
	return *count ? 0 : ctl_fail("logs: no replica log in %s", run);
}

static int print_logs(struct source *src, size_t n, const char *run, const struct log_flags *lf)
{
	for (size_t i = 0; i < n; i++) {
		seek_start(&src[i], lf);
		drain(&src[i], lf, !lf->follow);
	}
	if (!lf->follow)
		return EXIT_OK;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	size_t open_sources = n;
	while (!stop_following && open_sources > 0) {
		size_t read = 0;
		for (size_t i = 0; i < n; i++) {
			if (src[i].done)
				continue;
			bool alive = pod_alive(run, src[i].name); /* first: what it wrote before ending is read next */
			size_t got = drain(&src[i], lf, !alive);
			read += got;
			if (!alive && got == 0) {
				drain(&src[i], lf, true);
				src[i].done = true;
				open_sources--;
			}
		}
		if (read == 0 && open_sources > 0)
			usleep(200 * 1000);
	}
	return stop_following ? EXIT_INTERRUPTED : EXIT_OK;
}

/* Whether path is a directory (a local run). */
static bool is_dir(const char *path)
{
	struct stat st;
	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

enum { OPT_PREVIOUS = 0x2000, OPT_REPLICA_TYPE, OPT_REPLICA_INDEX };

int cmd_logs(int argc, char **argv)
{
	static const struct option longopts[] = {
		CTL_CLUSTER_LONGOPTS,
		{ "follow", no_argument, NULL, 'f' },
		{ "container", required_argument, NULL, 'c' },
		{ "all", no_argument, NULL, 'A' },
		{ "prefix", no_argument, NULL, 'P' },
		{ "tail", required_argument, NULL, 'T' },
		{ "since", required_argument, NULL, 'S' },
		{ "since-time", required_argument, NULL, 'U' },
		{ "timestamps", no_argument, NULL, 't' },
		{ "previous", no_argument, NULL, OPT_PREVIOUS },
		{ "replica-type", required_argument, NULL, OPT_REPLICA_TYPE },
		{ "replica-index", required_argument, NULL, OPT_REPLICA_INDEX },
		{ NULL, 0, NULL, 0 },
	};
	struct log_flags lf = { .tail = -1, .since_ms = -1 };
	struct ctl_cluster cl = { 0 };
	struct ctl_logs_args ca = { .tail = -1 };
	bool all = false, cluster_only = false;
	const char *container = NULL;
	int ch;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":fc:n:", longopts, NULL)) != -1) {
		if (ctl_cluster_option(&cl, ch, optarg)) {
			cluster_only = cluster_only || ch != CTL_OPT_COMPAT;
			continue;
		}
		if (ch == 'f')
			lf.follow = true;
		else if (ch == 'A')
			all = lf.prefix = true;
		else if (ch == 'P')
			lf.prefix = true;
		else if (ch == 'T') {
			if (!ctl_parse_tail(&lf.tail, "logs", optarg, true, INT64_MAX))
				return EXIT_USAGE;
		} else if (ch == 'S' || ch == 'U') {
			if (!parse_since(&lf.since_ms, ch == 'S' ? "--since" : "--since-time", optarg))
				return EXIT_USAGE;
			long ms = 0;
			ca.since_seconds = ch == 'S' && ctl_parse_duration_ms(&ms, optarg) ? (ms + 999) / 1000 : 0;
			ca.since_time = ch == 'U' ? optarg : NULL;
		} else if (ch == 't') {
			lf.timestamps = true;
		} else if (ch == 'c') {
			container = ctl_flag_value(optarg);
		} else if (ch == OPT_PREVIOUS) {
			ca.previous = cluster_only = true;
		} else if (ch == OPT_REPLICA_TYPE) {
			ca.replica_type = optarg;
			cluster_only = true;
		} else if (ch == OPT_REPLICA_INDEX) {
			ca.replica_index = optarg;
			cluster_only = true;
		} else if (ch == ':')
			return ctl_fail("logs: option '%s' needs a value", argv[optind - 1]);
		else
			return ctl_fail("logs: unknown option '%s' (see tfjobctl logs --help)", argv[optind - 1]);
	}
	if (cl.bad)
		return EXIT_USAGE;
	if (optind < argc && (cluster_only || !is_dir(argv[optind]))) {
		/* A TFJob of the cluster. */
		if (strchr(argv[optind], '/') && strncmp(argv[optind], "tfjob", 5) && is_dir(argv[optind]))
			return ctl_fail("logs: '%s' is a local run directory: --previous, --replica-type, --replica-index "
			                "and the cluster flags are for a TFJob in the cluster", argv[optind]);
		if (strchr(argv[optind], '/') && strncmp(argv[optind], "tfjob", 5))
			return ctl_fail("logs: no local run directory '%s' (tfjobctl run makes one), and it is not a "
			                "TFJob (NAME or tfjob.kubeflow.org/NAME)", argv[optind]);
		if (optind + (all ? 1 : 2) < argc || (all && optind + 1 != argc))
			return ctl_fail(all ? "logs: expected JOB with --all, no REPLICA (see tfjobctl logs --help)"
			                    : "logs: expected JOB [REPLICA] (see tfjobctl logs --help)");
		ca.job = argv[optind];
		ca.replica = optind + 1 < argc ? argv[optind + 1] : NULL;
		ca.container = container;
		ca.all = all || ((ca.replica_type || ca.replica_index) && !ca.replica);
		ca.follow = lf.follow;
		ca.timestamps = lf.timestamps;
		ca.prefix = lf.prefix;
		ca.tail = lf.tail;
		return ctl_logs_cluster(&cl, &ca);
	}
	if (container && strcmp(container, LOCAL_CONTAINER))
		return ctl_fail("logs: container '%s' is not run locally: a local replica is its pod's "
		                "%s container (docs/local.md)", container, LOCAL_CONTAINER);
	if (optind != argc - (all ? 1 : 2))
		return ctl_fail(all ? "logs: expected RUN with --all (see tfjobctl logs --help)"
		                    : "logs: expected RUN and POD (see tfjobctl logs --help)");
	const char *run = argv[optind];
	char **pods = NULL;
	size_t n = 1;
	if (all && all_pods(&pods, &n, run)) {
		return EXIT_USAGE;
	}
	struct source *src = calloc(n, sizeof(*src));
	int status = src ? EXIT_OK : ctl_fail("out of memory");
	for (size_t i = 0; i < n && status == EXIT_OK; i++) {
		const char *pod = all ? pods[i] : argv[optind + 1];
		if (!is_pod_name(pod)) {
			status = ctl_fail("logs: '%s' is not a pod name (lowercase letters, digits, '-' and '.'; "
			                  "only the pods of %s can be named)", pod, run);
			break;
		}
		src[i].f = open_log(src[i].name, sizeof src[i].name, run, pod);
		if (!src[i].f)
			status = ctl_fail("logs: no log of pod '%s' in %s: %s", pod, run, strerror(errno));
		else if (!open_times(&src[i], run))
			status = ctl_fail("out of memory");
	}
	if (status == EXIT_OK)
		status = print_logs(src, n, run, &lf);
	for (size_t i = 0; src && i < n; i++) {
		if (src[i].f)
			fclose(src[i].f);
		log_times_close(&src[i].times);
		free(src[i].partial);
	}
	free(src);
	ctl_free_names(pods, all ? n : 0);
	return status;
}
