/*
 * Helpers of the controller tests.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ctlutil.h"

_Atomic int64_t cu_now = 1700000000;

int64_t cu_clock(void *payload)
{
	(void)payload;
	return cu_now;
}

int64_t cu_mono(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void cu_sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };
	nanosleep(&ts, NULL);
}

#define RING_LINES 400

static pthread_mutex_t ring_mu = PTHREAD_MUTEX_INITIALIZER;
static char *ring[RING_LINES];
static size_t ring_next;
static int64_t ring_t0;

void cu_log_ring(tfjob_log_level level, const char *message, const char *fields_json, void *payload)
{
	(void)payload;
	char buf[1024];
	snprintf(buf, sizeof(buf), "%6lld ms [%d] %s %s", (long long)(cu_mono() - ring_t0), (int)level, message,
	         fields_json ? fields_json : "");
	char *line = strdup(buf);
	if (!line)
		return;
	pthread_mutex_lock(&ring_mu);
	free(ring[ring_next % RING_LINES]);
	ring[ring_next++ % RING_LINES] = line;
	pthread_mutex_unlock(&ring_mu);
}

void cu_log_ring_clear(void)
{
	pthread_mutex_lock(&ring_mu);
	for (size_t i = 0; i < RING_LINES; i++) {
		free(ring[i]);
		ring[i] = NULL;
	}
	ring_next = 0;
	ring_t0 = cu_mono();
	pthread_mutex_unlock(&ring_mu);
}

/* A wait that timed out prints the controller's last log lines (oldest first) on stderr. */
int cu_wait_impl(int ok)
{
	if (ok)
		return ok;
	pthread_mutex_lock(&ring_mu);
	size_t first = ring_next > RING_LINES ? ring_next - RING_LINES : 0;
	if (ring_next)
		fprintf(stderr, "--- a wait timed out at %lld ms; the controller's last %zu log lines:\n",
		        (long long)(cu_mono() - ring_t0), ring_next - first);
	for (size_t i = first; i < ring_next; i++)
		fprintf(stderr, "%s\n", ring[i % RING_LINES]);
	pthread_mutex_unlock(&ring_mu);
	return ok;
}

static const tfjob_resource TFJOBS = TFJOB_RESOURCE_TFJOBS_INIT;

char *cu_job(const char *name, const char *types, const char *extra_spec, const char *extra_run_policy)
{
	json_t *specs = json_object();
	char *copy = strdup(types);
	for (char *save = NULL, *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char type[32] = "", policy[32] = "Never";
		int n = 1;
		sscanf(tok, "%31[^:]:%d:%31s", type, &n, policy);
		json_object_set_new(specs, type, json_pack("{s:i,s:s,s:{s:{s:[{s:s,s:s}]}}}", "replicas", n,
		                                           "restartPolicy", policy, "template", "spec", "containers",
		                                           "name", "tensorflow", "image", "tensorflow/tensorflow:2.15.0"));
	}
	free(copy);
	char *specs_text = json_dumps(specs, JSON_COMPACT);
	json_decref(specs);
	size_t size = strlen(specs_text) + 1024 + (extra_spec ? strlen(extra_spec) : 0) +
	              (extra_run_policy ? strlen(extra_run_policy) : 0);
	char *out = malloc(size);
	snprintf(out, size,
	         "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"%s\",\"namespace\":\"default\"},"
	         "\"spec\":{\"runPolicy\":{%s%s%s},\"tfReplicaSpecs\":%s%s%s}}",
	         name, extra_run_policy && strstr(extra_run_policy, "cleanPodPolicy") ? "" : "\"cleanPodPolicy\":\"Running\"",
	         extra_run_policy && !strstr(extra_run_policy, "cleanPodPolicy") ? "," : "", extra_run_policy ? extra_run_policy : "", specs_text,
	         extra_spec ? "," : "", extra_spec ? extra_spec : "");
	free(specs_text);
	return out;
}

int cu_create_job(tfjob_transport *t, const char *json)
{
	return tfjob_transport_create(NULL, t, &TFJOBS, "default", json, NULL);
}

int cu_set_pod(tfjob_transport *t, const char *ns, const char *name, const char *phase, int exit_code, int restarts)
{
	static const tfjob_resource pods = TFJOB_RESOURCE_PODS_INIT;
	for (int attempt = 0; attempt < 20; attempt++) {
		char *text = NULL;
		int rc = tfjob_transport_get(&text, t, &pods, ns, name, NULL);
		if (rc)
			return rc;
		json_t *pod = json_loads(text, 0, NULL);
		tfjob_free(text);
		json_t *cs = json_pack("{s:s,s:i,s:{}}", "name", "tensorflow", "restartCount", restarts, "state");
		json_t *state = json_object_get(cs, "state");
		if (exit_code >= 0)
			json_object_set_new(state, "terminated", json_pack("{s:i,s:s}", "exitCode", exit_code, "reason",
			                                                   exit_code ? "Error" : "Completed"));
		else if (!strcmp(phase, "Running"))
			json_object_set_new(state, "running", json_object());
		json_object_set_new(pod, "status", json_pack("{s:s,s:[o]}", "phase", phase, "containerStatuses", cs));
		text = json_dumps(pod, JSON_COMPACT);
		json_decref(pod);
		rc = tfjob_transport_update_status(NULL, t, &pods, ns, text, NULL);
		free(text);
		if (rc != TFJOB_ECONFLICT)
			return rc;
	}
	return TFJOB_ECONFLICT;
}

char *cu_cond(tfjob_transport *t, const char *ns, const char *job, const char *type)
{
	char *text = NULL;
	if (tfjob_transport_get(&text, t, &TFJOBS, ns, job, NULL))
		return NULL;
	json_t *j = json_loads(text, 0, NULL);
	tfjob_free(text);
	char *res = NULL;
	size_t i;
	json_t *c;
	json_array_foreach(json_object_get(json_object_get(j, "status"), "conditions"), i, c) {
		const char *ct = json_string_value(json_object_get(c, "type"));
		if (ct && !strcmp(ct, type))
			res = strdup(json_string_value(json_object_get(c, "status")));
	}
	json_decref(j);
	return res;
}

int cu_cond_is(tfjob_transport *t, const char *ns, const char *job, const char *type, const char *status)
{
	char *s = cu_cond(t, ns, job, type);
	int ok = s && !strcmp(s, status);
	free(s);
	return ok;
}

int cu_count(tfjob_transport *t, const char *ns, const char *resource, const char *job)
{
	const tfjob_resource *res = tfjob_resource_lookup(resource);
	char sel[256];
	snprintf(sel, sizeof(sel), "training.kubeflow.org/job-name=%s", job);
	tfjob_list_options lo = TFJOB_LIST_OPTIONS_INIT;
	lo.label_selector = sel;
	char *text = NULL;
	if (tfjob_transport_list(&text, t, res, ns, &lo, NULL))
		return -1;
	json_t *l = json_loads(text, 0, NULL);
	tfjob_free(text);
	int n = (int)json_array_size(json_object_get(l, "items"));
	json_decref(l);
	return n;
}

int cu_exists(tfjob_transport *t, const char *ns, const char *resource, const char *name)
{
	return tfjob_transport_get(NULL, t, tfjob_resource_lookup(resource), ns, name, NULL) == 0;
}

int cu_job_exists(tfjob_transport *t, const char *ns, const char *name)
{
	return cu_exists(t, ns, "tfjobs", name);
}

char *cu_uid(tfjob_transport *t, const char *ns, const char *resource, const char *name)
{
	char *text = NULL;
	if (tfjob_transport_get(&text, t, tfjob_resource_lookup(resource), ns, name, NULL))
		return NULL;
	json_t *o = json_loads(text, 0, NULL);
	tfjob_free(text);
	const char *u = json_string_value(json_object_get(json_object_get(o, "metadata"), "uid"));
	char *res = u ? strdup(u) : NULL;
	json_decref(o);
	return res;
}

int cu_events(tfjob_transport *t, const char *ns, const char *reason)
{
	static const tfjob_resource ev = TFJOB_RESOURCE_EVENTS_INIT;
	char *text = NULL;
	if (tfjob_transport_list(&text, t, &ev, ns, NULL, NULL))
		return -1;
	json_t *l = json_loads(text, 0, NULL);
	tfjob_free(text);
	int n = 0;
	size_t i;
	json_t *e;
	json_array_foreach(json_object_get(l, "items"), i, e) {
		const char *r = json_string_value(json_object_get(e, "reason"));
		if (r && !strcmp(r, reason))
			n++;
	}
	json_decref(l);
	return n;
}
