/*
 * tfjobctl logs RUN POD|--all [-f] [--tail N] [--prefix]: print (and follow) replicas' logs of a local run.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "local_view.h"

static volatile sig_atomic_t stop_following;

static void on_signal(int sig)
{
	(void)sig;
	stop_following = 1;
}

void usage_logs(FILE *out)
{
	fprintf(out, "usage: tfjobctl logs [--compat C] [-f] [--tail N] [--prefix] RUN POD\n"
	             "       tfjobctl logs [--compat C] [-f] [--tail N] [--prefix] RUN --all\n\n"
	             "Print the log (stdout and stderr) of replica POD of the local run in directory RUN\n"
	             "(tfjobctl run). POD is the pod name (dist-worker-0) or its type-index (worker-0).\n\n"
	             "  -f, --follow  keep printing what the replica writes until it has ended (its pod is\n"
	             "                Succeeded, Failed or gone, or its process is) or Ctrl-C (exit 130)\n"
	             "  --all         every replica's log, in pod name order (with -f: as they write,\n"
	             "                line by line); implies --prefix\n"
	             "  --tail N      only the last N lines of each log (then what follows, with -f);\n"
	             "                -1 (default): all\n"
	             "  --prefix      begin each line with [pod/NAME/tensorflow], as kubectl logs --prefix\n"
	             "  --compat C    'documented' or 'training-operator-1.9': accepted as by every command;\n"
	             "                a log does not depend on it\n\n"
	             "Exit status: 0 ok, 2 usage error or no such log.\n");
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

/* One log being printed: its file, the pod's name, and a line not yet complete (prefix mode). */
struct source {
	FILE *f;
	char name[1024];
	char *partial;
	size_t partial_len;
	bool done;
};

struct log_flags {
	bool follow, prefix;
	long long tail; /* -1: all */
};

/* Seek f to the start of its last n lines (n >= 0). */
static void seek_tail(FILE *f, long long n)
{
	if (fseeko(f, 0, SEEK_END) != 0)
		return;
	off_t end = ftello(f), pos = end;
	long long newlines = 0;
	if (n == 0)
		return; /* at the end: nothing of what is there */
	char buf[8192];
	/* A final newline ends the last line; it does not start another. */
	while (pos > 0) {
		size_t chunk = pos > (off_t)sizeof buf ? sizeof buf : (size_t)pos;
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
	fseeko(f, 0, SEEK_SET);
}

/* Print what the source has now: whole lines with the prefix (the rest kept until its newline,
 * or printed when `last`), or everything as it is without one. Returns the bytes read. */
static size_t drain(struct source *s, bool prefix, bool last)
{
	char buf[8192];
	size_t n, total = 0;
	while ((n = fread(buf, 1, sizeof buf, s->f)) > 0) {
		total += n;
		if (!prefix) {
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
			printf("[pod/%s/tensorflow] %.*s\n", s->name, (int)(nl - start), start);
			start = nl + 1;
		}
		s->partial_len = (size_t)(end - start);
		memmove(s->partial, start, s->partial_len);
	}
	clearerr(s->f);
	if (last && prefix && s->partial_len) {
		printf("[pod/%s/tensorflow] %.*s\n", s->name, (int)s->partial_len, s->partial);
		s->partial_len = 0;
	}
	fflush(stdout);
	return total;
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
		if (lf->tail >= 0)
			seek_tail(src[i].f, lf->tail);
		drain(&src[i], lf->prefix, !lf->follow);
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
			size_t got = drain(&src[i], lf->prefix, !alive);
			read += got;
			if (!alive && got == 0) {
				drain(&src[i], lf->prefix, true);
				src[i].done = true;
				open_sources--;
			}
		}
		if (read == 0 && open_sources > 0)
			usleep(200 * 1000);
	}
	return stop_following ? EXIT_INTERRUPTED : EXIT_OK;
}

int cmd_logs(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "follow", no_argument, NULL, 'f' },
		{ "compat", required_argument, NULL, 'c' },
		{ "all", no_argument, NULL, 'A' },
		{ "prefix", no_argument, NULL, 'P' },
		{ "tail", required_argument, NULL, 'T' },
		{ NULL, 0, NULL, 0 },
	};
	struct log_flags lf = { false, false, -1 };
	bool all = false;
	tfjob_compat compat;
	int ch;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":f", longopts, NULL)) != -1) {
		char *end;
		if (ch == 'f')
			lf.follow = true;
		else if (ch == 'A')
			all = lf.prefix = true;
		else if (ch == 'P')
			lf.prefix = true;
		else if (ch == 'T') {
			errno = 0;
			lf.tail = strtoll(optarg, &end, 10);
			if (!optarg[0] || *end || errno || lf.tail < -1)
				return ctl_fail("logs: --tail needs a number of lines, 0 or more (-1: all), got '%s'", optarg);
		} else if (ch == 'c') {
			if (!ctl_parse_compat(&compat, optarg))
				return EXIT_USAGE;
		} else if (ch == ':')
			return ctl_fail("logs: option '%s' needs a value", argv[optind - 1]);
		else
			return ctl_fail("logs: unknown option '%s' (see tfjobctl logs --help)", argv[optind - 1]);
	}
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
		src[i].f = open_log(src[i].name, sizeof src[i].name, run, pod);
		if (!src[i].f)
			status = ctl_fail("logs: no log of pod '%s' in %s: %s", pod, run, strerror(errno));
	}
	if (status == EXIT_OK)
		status = print_logs(src, n, run, &lf);
	for (size_t i = 0; src && i < n; i++) {
		if (src[i].f)
			fclose(src[i].f);
		free(src[i].partial);
	}
	free(src);
	ctl_free_names(pods, all ? n : 0);
	return status;
}
