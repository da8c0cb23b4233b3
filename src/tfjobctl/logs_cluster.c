/*
 * tfjobctl logs JOB [REPLICA] ...: the logs of a TFJob's replicas in the cluster, read through the
 * API server's pods/NAME/log subresource (streamed with -f), with the options of the local path.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <ctype.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connection.h"
#include "logs_cluster.h"

/* The container the operator's pods run TensorFlow in (the one a TFJob's template must have). */
#define TF_CONTAINER "tensorflow"

static atomic_int interrupted;

static void on_signal(int sig)
{
	(void)sig;
	atomic_store(&interrupted, 1);
}

/* Lines of several logs printed whole, one at a time. */
static pthread_mutex_t out_mu = PTHREAD_MUTEX_INITIALIZER;

/* One pod's log being read. */
struct pod_log {
	char name[256];
	char container[256]; /* "" when the server picks the pod's only container */
	const struct ctl_logs_args *a;
	bool prefix; /* [pod/NAME/CONTAINER] before each line: --prefix, --all or several pods */
	char *partial; /* a line not yet ended (prefix mode) */
	size_t partial_len;
	int rc; /* EXIT_* */
	pthread_t thread;
};

static void print_prefixed(struct pod_log *p, const char *text, size_t len)
{
	pthread_mutex_lock(&out_mu);
	printf("[pod/%s/%s] %.*s\n", p->name, p->container[0] ? p->container : "-", (int)len, text);
	fflush(stdout);
	pthread_mutex_unlock(&out_mu);
}

static int on_log(const char *data, size_t len, void *payload)
{
	struct pod_log *p = payload;
	if (atomic_load(&interrupted))
		return 1;
	if (!len)
		return 0;
	if (!p->prefix) {
		pthread_mutex_lock(&out_mu);
		fwrite(data, 1, len, stdout);
		fflush(stdout);
		pthread_mutex_unlock(&out_mu);
		return 0;
	}
	char *grown = realloc(p->partial, p->partial_len + len);
	if (!grown)
		return 1;
	p->partial = grown;
	memcpy(p->partial + p->partial_len, data, len);
	p->partial_len += len;
	char *start = p->partial, *end = p->partial + p->partial_len, *nl;
	while ((nl = memchr(start, '\n', (size_t)(end - start)))) {
		print_prefixed(p, start, (size_t)(nl - start));
		start = nl + 1;
	}
	p->partial_len = (size_t)(end - start);
	memmove(p->partial, start, p->partial_len);
	return 0;
}

static void read_pod(tfjob_transport *t, struct pod_log *p)
{
	const struct ctl_logs_args *a = p->a;
	tfjob_pod_log_options o = TFJOB_POD_LOG_OPTIONS_INIT;
	o.container = p->container[0] ? p->container : NULL;
	o.follow = a->follow;
	o.previous = a->previous;
	o.timestamps = a->timestamps;
	o.tail_lines = a->tail;
	o.since_seconds = a->since_seconds;
	o.since_time = a->since_time;
	tfjob_error *err = NULL;
	if (tfjob_kube_pod_log(t, NULL, p->name, &o, on_log, p, &err)) {
		pthread_mutex_lock(&out_mu);
		p->rc = ctl_api_fail(err);
		pthread_mutex_unlock(&out_mu);
	}
	if (p->partial_len) /* the last line, without its newline */
		print_prefixed(p, p->partial, p->partial_len);
	p->partial_len = 0;
}

struct thread_arg {
	tfjob_transport *t;
	struct pod_log *p;
};

static void *read_pod_thread(void *arg)
{
	struct thread_arg *ta = arg;
	read_pod(ta->t, ta->p);
	return NULL;
}

/* "worker-1" -> type "worker", index "1"; false when REPLICA is not TYPE-INDEX. */
static bool split_replica(char *type, size_t tsize, char *index, size_t isize, const char *replica)
{
	const char *dash = strrchr(replica, '-');
	if (!dash || dash == replica || !dash[1] || (size_t)(dash - replica) >= tsize || strlen(dash + 1) >= isize)
		return false;
	for (const char *c = dash + 1; *c; c++)
		if (!isdigit((unsigned char)*c))
			return false;
	for (size_t i = 0; i < (size_t)(dash - replica); i++)
		type[i] = (char)tolower((unsigned char)replica[i]);
	type[dash - replica] = '\0';
	snprintf(index, isize, "%s", dash + 1);
	return true;
}

static int by_name(const void *x, const void *y)
{
	const json_t *a = *(json_t *const *)x, *b = *(json_t *const *)y;
	return strcmp(ctl_str(json_object_get(a, "metadata"), "name"), ctl_str(json_object_get(b, "metadata"), "name"));
}

/* The container to read: -c, else the one the operator runs TensorFlow in when the pod has
 * it, else "" (the server picks the only one, or says which there are). */
static void pick_container(char *out, size_t size, const json_t *pod, const char *wanted)
{
	if (wanted) {
		snprintf(out, size, "%s", wanted);
		return;
	}
	out[0] = '\0';
	const json_t *containers = json_object_get(json_object_get(pod, "spec"), "containers");
	size_t i;
	json_t *c;
	json_array_foreach(containers, i, c)
		if (!strcmp(ctl_str(c, "name"), TF_CONTAINER) || json_array_size(containers) == 1)
			snprintf(out, size, "%s", ctl_str(c, "name"));
}

/* The replicas of the job: "chief-0, worker-0, worker-1" (from the pods' labels), for messages. */
static void replica_names(char *buf, size_t size, json_t *const *pods, size_t n)
{
	buf[0] = '\0';
	for (size_t i = 0; i < n; i++) {
		const json_t *labels = json_object_get(json_object_get(pods[i], "metadata"), "labels");
		size_t len = strlen(buf);
		snprintf(buf + len, size - len, "%s%s-%s", i ? ", " : "", ctl_str(labels, TFJOB_LABEL_REPLICA_TYPE),
		         ctl_str(labels, TFJOB_LABEL_REPLICA_INDEX));
	}
}

/* The replica type and index asked for: --replica-type/--replica-index, or REPLICA (TYPE-INDEX
 * or the pod's own name, JOB-TYPE-INDEX). EXIT_OK or a usage error. */
static int replica_asked(char *type, size_t tsize, char *index, size_t isize, const char *job,
                         const struct ctl_logs_args *a)
{
	if (a->replica_type)
		for (size_t i = 0; a->replica_type[i] && i + 1 < tsize; i++, type[i] = '\0')
			type[i] = (char)tolower((unsigned char)a->replica_type[i]);
	if (a->replica_index)
		snprintf(index, isize, "%s", a->replica_index);
	if (!a->replica)
		return EXIT_OK;
	size_t jl = strlen(job);
	if (!strncmp(a->replica, job, jl) && a->replica[jl] == '-' &&
	    split_replica(type, tsize, index, isize, a->replica + jl + 1))
		return EXIT_OK;
	if (split_replica(type, tsize, index, isize, a->replica))
		return EXIT_OK;
	return ctl_fail("logs: '%s' is not a replica of TFJob %s: give TYPE-INDEX (worker-0, chief-0) or the pod's name",
	                a->replica, job);
}

/* The job's pods of that type and index (either may be ""), as a list; EXIT_OK or a failure. The
 * job is read first, so that "not found" names the TFJob, not an empty list of pods. */
static int list_pods(json_t **list, tfjob_transport *t, const char *job, const char *type, const char *index)
{
	char *text = NULL;
	tfjob_error *err = NULL;
	if (tfjob_transport_get(&text, t, &ctl_tfjobs, NULL, job, &err))
		return ctl_api_fail(err);
	tfjob_free(text);
	text = NULL;
	char selector[600];
	int len = snprintf(selector, sizeof(selector), "%s=%s", TFJOB_LABEL_JOB_NAME, job);
	if (type[0])
		len += snprintf(selector + len, sizeof(selector) - (size_t)len, ",%s=%s", TFJOB_LABEL_REPLICA_TYPE, type);
	if (index[0])
		snprintf(selector + len, sizeof(selector) - (size_t)len, ",%s=%s", TFJOB_LABEL_REPLICA_INDEX, index);
	tfjob_list_options lo = TFJOB_LIST_OPTIONS_INIT;
	lo.label_selector = selector;
	int rc = EXIT_OK;
	if (tfjob_transport_list(&text, t, tfjob_resource_lookup("pods"), NULL, &lo, &err))
		rc = ctl_api_fail(err);
	else if (!(*list = ctl_parse_json(text)))
		rc = EXIT_USAGE;
	tfjob_free(text);
	return rc;
}

/* EXIT_OK when the n pods found are what was asked for: one, or any number with --all. */
static int pods_as_asked(json_t **pods, size_t n, tfjob_transport *t, const char *job, const char *type,
                         const char *index, const struct ctl_logs_args *a)
{
	if (n == 0) {
		if (type[0] || index[0])
			ctl_fail("logs: TFJob %s has no pod %s%s%s in namespace %s (tfjobctl describe %s lists its "
			         "replicas)", job, type[0] ? type : "of any type", index[0] ? "-" : "", index,
			         tfjob_transport_namespace(t), job);
		else
			ctl_fail("logs: TFJob %s has no pods in namespace %s (yet?): tfjobctl describe %s says why", job,
			         tfjob_transport_namespace(t), job);
		return EXIT_NEGATIVE;
	}
	if (!pods)
		return ctl_fail("out of memory");
	if (n > 1 && !a->all) {
		char names[2048];
		replica_names(names, sizeof(names), pods, n);
		const json_t *labels = json_object_get(json_object_get(pods[0], "metadata"), "labels");
		return ctl_fail("logs: TFJob %s has %zu pods (%s): name one (tfjobctl logs %s %s-%s) or give --all", job, n,
		                names, job, ctl_str(labels, TFJOB_LABEL_REPLICA_TYPE), ctl_str(labels, TFJOB_LABEL_REPLICA_INDEX));
	}
	return EXIT_OK;
}

/* Read the logs of the n pods: one after the other, or (following several) all at once, line by
 * line as they write. The worst status of them, or EXIT_INTERRUPTED. */
static int read_logs(tfjob_transport *t, struct pod_log *logs, size_t n, bool follow)
{
	int rc = EXIT_OK;
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	if (follow && n > 1) {
		struct thread_arg *ta = calloc(n, sizeof(*ta));
		size_t started = 0;
		for (size_t i = 0; ta && i < n; i++, started++) {
			ta[i] = (struct thread_arg){ t, &logs[i] };
			if (pthread_create(&logs[i].thread, NULL, read_pod_thread, &ta[i]))
				break;
		}
		if (started < n)
			rc = ctl_fail("logs: cannot start a thread per pod");
		for (size_t i = 0; i < started; i++)
			pthread_join(logs[i].thread, NULL);
		free(ta);
	} else {
		for (size_t i = 0; i < n && !atomic_load(&interrupted); i++)
			read_pod(t, &logs[i]);
	}
	for (size_t i = 0; i < n; i++) {
		if (logs[i].rc > rc)
			rc = logs[i].rc;
		free(logs[i].partial);
	}
	return atomic_load(&interrupted) ? EXIT_INTERRUPTED : rc;
}

/* The pods sorted by name (borrowed from items), or NULL when there are none or no memory. */
static json_t **sorted_pods(const json_t *items, size_t n)
{
	json_t **pods = n ? calloc(n, sizeof(*pods)) : NULL;
	for (size_t i = 0; pods && i < n; i++)
		pods[i] = json_array_get(items, i);
	if (pods)
		qsort(pods, n, sizeof(*pods), by_name);
	return pods;
}

int ctl_logs_cluster(const struct ctl_cluster *cl, const struct ctl_logs_args *a)
{
	const char *job = ctl_object_name(a->job, "logs");
	if (!job)
		return EXIT_USAGE;
	char type[128] = "", index[32] = "";
	int rc = replica_asked(type, sizeof(type), index, sizeof(index), job, a);
	tfjob_transport *t;
	if (rc || (rc = ctl_connect(&t, cl)))
		return rc;
	json_t *list = NULL;
	rc = list_pods(&list, t, job, type, index);
	const json_t *items = json_object_get(list, "items");
	size_t n = json_array_size(items);
	json_t **pods = sorted_pods(items, n);
	if (!rc)
		rc = pods_as_asked(pods, n, t, job, type, index, a);
	struct pod_log *logs = !rc ? calloc(n, sizeof(*logs)) : NULL;
	if (!rc && !logs)
		rc = ctl_fail("out of memory");
	if (!rc) {
		for (size_t i = 0; i < n; i++) {
			snprintf(logs[i].name, sizeof(logs[i].name), "%s", ctl_str(json_object_get(pods[i], "metadata"), "name"));
			pick_container(logs[i].container, sizeof(logs[i].container), pods[i], a->container);
			logs[i].a = a;
			logs[i].prefix = a->prefix || n > 1;
		}
		rc = read_logs(t, logs, n, a->follow);
	}
	free(logs);
	free(pods);
	json_decref(list);
	ctl_disconnect(t);
	return rc;
}
