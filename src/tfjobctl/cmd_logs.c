/*
 * tfjobctl logs RUN POD [-f]: print (and follow) a replica's log of a local run.
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
	fprintf(out, "usage: tfjobctl logs [--compat C] RUN POD [-f]\n\n"
	             "Print the log (stdout and stderr) of replica POD of the local run in directory RUN\n"
	             "(tfjobctl run). POD is the pod name (dist-worker-0) or its type-index (worker-0).\n\n"
	             "  -f, --follow  keep printing what the replica writes until it has ended (its pod is\n"
	             "                Succeeded, Failed or gone, or its process is) or Ctrl-C\n"
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

static size_t copy(FILE *in)
{
	char buf[8192];
	size_t n, total = 0;
	while ((n = fread(buf, 1, sizeof buf, in)) > 0) {
		fwrite(buf, 1, n, stdout);
		total += n;
	}
	clearerr(in);
	fflush(stdout);
	return total;
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

int cmd_logs(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "follow", no_argument, NULL, 'f' },
		{ "compat", required_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	bool follow = false;
	tfjob_compat compat;
	int ch;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":f", longopts, NULL)) != -1) {
		if (ch == 'f')
			follow = true;
		else if (ch == 'c') {
			if (!ctl_parse_compat(&compat, optarg))
				return EXIT_USAGE;
		} else if (ch == ':')
			return ctl_fail("logs: option '%s' needs a value", argv[optind - 1]);
		else
			return ctl_fail("logs: unknown option '%s' (see tfjobctl logs --help)", argv[optind - 1]);
	}
	if (optind != argc - 2)
		return ctl_fail("logs: expected RUN and POD (see tfjobctl logs --help)");
	const char *run = argv[optind], *pod = argv[optind + 1];
	char name[1024];
	FILE *f = open_log(name, sizeof name, run, pod);
	if (!f)
		return ctl_fail("logs: no log of pod '%s' in %s: %s", pod, run, strerror(errno));
	copy(f);
	if (follow) {
		signal(SIGINT, on_signal);
		signal(SIGTERM, on_signal);
		while (!stop_following) {
			bool alive = pod_alive(run, name);
			size_t n = copy(f);
			if (!alive && n == 0)
				break;
			if (n == 0)
				usleep(200 * 1000);
		}
	}
	fclose(f);
	return EXIT_OK;
}
