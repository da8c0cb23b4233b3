/*
 * List+watch of TFJobs and of the Pods and Services carrying the job-name label, into the
 * controller's stores; observed children lower the expectations; every change queues the job.
 * A watch that ends with 410 Gone (or fails for good) is marked for a relist, done by the
 * controller's manager thread.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/ctrl.h"

#define LABEL_JOB_NAME "training.kubeflow.org/job-name"
#define LABEL_REPLICA_TYPE "training.kubeflow.org/replica-type"

static const char *meta_str(json_t *obj, const char *field)
{
	return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

/* The job key a child belongs to (controller TFJob ref, else the job-name label), into buf. */
static const char *child_job_key(char *buf, size_t size, json_t *obj, int *owned)
{
	json_t *md = json_object_get(obj, "metadata");
	const char *ns = meta_str(obj, "namespace");
	size_t i;
	json_t *r;
	*owned = 0;
	json_array_foreach(json_object_get(md, "ownerReferences"), i, r) {
		if (json_is_true(json_object_get(r, "controller"))) {
			const char *kind = json_string_value(json_object_get(r, "kind"));
			const char *name = json_string_value(json_object_get(r, "name"));
			if (!kind || strcmp(kind, "TFJob") || !name)
				return NULL;
			*owned = 1;
			snprintf(buf, size, "%s/%s", ns ? ns : "", name);
			return buf;
		}
	}
	const char *job = json_string_value(json_object_get(json_object_get(md, "labels"), LABEL_JOB_NAME));
	if (!job)
		return NULL;
	snprintf(buf, size, "%s/%s", ns ? ns : "", job);
	return buf;
}

static int on_event(tfjob_watch_event type, const char *object_json, void *payload)
{
	tfjob__informer *inf = payload;
	tfjob_controller *c = inf->c;
	if (type == TFJOB_WATCH_BOOKMARK)
		return 0;
	json_t *obj = json_loads(object_json, 0, NULL);
	if (!json_is_object(obj)) {
		json_decref(obj);
		return 0;
	}
	if (inf->kind == INF_JOBS) {
		char *key = tfjob__object_key(obj);
		if (!key) {
			json_decref(obj);
			return 0;
		}
		pthread_mutex_lock(&c->cache_mu);
		if (type == TFJOB_WATCH_DELETED) {
			json_decref(tfjob__store_del(&c->stores[INF_JOBS], obj));
			json_decref(obj);
		} else {
			tfjob__store_put(&c->stores[INF_JOBS], obj);
		}
		pthread_mutex_unlock(&c->cache_mu);
		if (type == TFJOB_WATCH_DELETED)
			tfjob__exp_delete(c->exp, key);
		tfjob__queue_add(c->q, key);
		atomic_fetch_add(&c->m.queue_adds, 1);
		free(key);
		return 0;
	}
	char jk[512], sub[128];
	int owned = 0;
	const char *job_key = child_job_key(jk, sizeof(jk), obj, &owned);
	const char *rt = json_string_value(
		json_object_get(json_object_get(json_object_get(obj, "metadata"), "labels"), LABEL_REPLICA_TYPE));
	snprintf(sub, sizeof(sub), "%s/%s", rt ? rt : "", inf->kind == INF_PODS ? "pods" : "services");
	pthread_mutex_lock(&c->cache_mu);
	json_t *old = NULL;
	if (type == TFJOB_WATCH_DELETED) {
		old = tfjob__store_del(&c->stores[inf->kind], obj);
	} else {
		tfjob__store_put(&c->stores[inf->kind], json_incref(obj));
	}
	pthread_mutex_unlock(&c->cache_mu);
	json_decref(old);
	if (job_key && owned) {
		if (type == TFJOB_WATCH_ADDED)
			tfjob__exp_observed(c->exp, job_key, sub, 1, 0);
		else if (type == TFJOB_WATCH_DELETED)
			tfjob__exp_observed(c->exp, job_key, sub, 0, 1);
	}
	if (job_key) {
		tfjob__queue_add(c->q, job_key);
		atomic_fetch_add(&c->m.queue_adds, 1);
	}
	json_decref(obj);
	return 0;
}

static void on_closed(int code, const tfjob_error *err, void *payload)
{
	tfjob__informer *inf = payload;
	tfjob_controller *c = inf->c;
	pthread_mutex_lock(&c->mu);
	int stopping = c->stopping || !c->running;
	pthread_mutex_unlock(&c->mu);
	if (stopping)
		return;
	tfjob__log(c, code == TFJOB_EGONE ? TFJOB_LOG_INFO : TFJOB_LOG_WARN, "watch ended, listing again", NULL,
	           inf->res.resource, err ? tfjob_error_message(err) : tfjob_strerror(code));
	inf->need_relist = 1;
	pthread_mutex_lock(&c->mu);
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->mu);
}

static const char *uid_of(json_t *obj)
{
	return meta_str(obj, "uid");
}

static int same_object(json_t *a, json_t *b)
{
	const char *ua = uid_of(a), *ub = uid_of(b);
	return a && b && (!ua || !ub || !strcmp(ua, ub));
}

static void observe(tfjob_controller *c, int kind, json_t *obj, int adds, int dels)
{
	char jk[512], sub[128];
	int owned = 0;
	const char *job_key = child_job_key(jk, sizeof(jk), obj, &owned);
	if (!job_key || !owned)
		return;
	const char *rt = json_string_value(
		json_object_get(json_object_get(json_object_get(obj, "metadata"), "labels"), LABEL_REPLICA_TYPE));
	snprintf(sub, sizeof(sub), "%s/%s", rt ? rt : "", kind == INF_PODS ? "pods" : "services");
	tfjob__exp_observed(c->exp, job_key, sub, adds, dels);
}

/* A relist stands for the events the broken watch did not deliver (client-go's Replace):
   children that appeared count as observed creations, children that went as observed deletions,
   so expectations raised before the watch broke are met. */
static void observe_diff(tfjob_controller *c, int kind, tfjob__store *old, tfjob__store *fresh)
{
	size_t b = 0;
	for (tfjob__map_node *n = tfjob__map_next(&fresh->objs, &b, NULL); n; n = tfjob__map_next(&fresh->objs, &b, n))
		if (!same_object(tfjob__map_get(&old->objs, n->key), n->val))
			observe(c, kind, n->val, 1, 0);
	b = 0;
	for (tfjob__map_node *n = tfjob__map_next(&old->objs, &b, NULL); n; n = tfjob__map_next(&old->objs, &b, n))
		if (!same_object(tfjob__map_get(&fresh->objs, n->key), n->val))
			observe(c, kind, n->val, 0, 1);
}

int tfjob__informer_list_watch(tfjob__informer *inf, tfjob_error **err)
{
	tfjob_controller *c = inf->c;
	const char *ns = c->ns ? c->ns : "";
	tfjob_list_options lo = TFJOB_LIST_OPTIONS_INIT;
	lo.label_selector = inf->kind == INF_JOBS ? NULL : LABEL_JOB_NAME;
	lo.limit = 500;
	tfjob__store fresh;
	tfjob__store_init(&fresh, inf->kind != INF_JOBS);
	char *rv = NULL, *cont = NULL;
	int rc = 0;
	for (;;) {
		char *out = NULL;
		lo.continue_token = cont;
		rc = tfjob_transport_list(&out, c->t, &inf->res, ns, &lo, err);
		tfjob__count(c, TFJOB_API_LIST, rc);
		free(cont);
		cont = NULL;
		if (rc)
			break;
		json_t *list = json_loads(out, 0, NULL);
		tfjob_free(out);
		if (!list) {
			rc = tfjob__fail(err, TFJOB_EPARSE, "the %s list is not JSON", inf->res.resource);
			break;
		}
		json_t *md = json_object_get(list, "metadata");
		free(rv);
		rv = tfjob__strdup(json_string_value(json_object_get(md, "resourceVersion")));
		const char *ct = json_string_value(json_object_get(md, "continue"));
		if (ct && *ct)
			cont = strdup(ct);
		size_t i;
		json_t *item;
		json_array_foreach(json_object_get(list, "items"), i, item) {
			if (!json_is_object(item))
				continue;
			if (inf->kind == INF_JOBS) { /* list items may lack kind/apiVersion */
				json_object_set_new(item, "apiVersion", json_string("kubeflow.org/v1"));
				json_object_set_new(item, "kind", json_string("TFJob"));
			}
			tfjob__store_put(&fresh, json_incref(item));
		}
		json_decref(list);
		if (!cont)
			break;
	}
	if (rc) {
		tfjob__store_clear(&fresh);
		free(rv);
		free(cont);
		return rc;
	}
	/* swap the store; queue every job (level-triggered: a relist re-examines everything) */
	pthread_mutex_lock(&c->cache_mu);
	tfjob__store old = c->stores[inf->kind];
	c->stores[inf->kind] = fresh;
	json_t *keys = json_array();
	tfjob__map *jm = &c->stores[INF_JOBS].objs;
	size_t b = 0;
	for (tfjob__map_node *n = tfjob__map_next(jm, &b, NULL); n; n = tfjob__map_next(jm, &b, n))
		json_array_append_new(keys, json_string(n->key));
	if (inf->kind == INF_JOBS) { /* jobs gone while we were not watching */
		b = 0;
		for (tfjob__map_node *n = tfjob__map_next(&old.objs, &b, NULL); n; n = tfjob__map_next(&old.objs, &b, n))
			if (!tfjob__map_get(jm, n->key))
				json_array_append_new(keys, json_string(n->key));
	}
	if (inf->kind != INF_JOBS)
		observe_diff(c, inf->kind, &old, &c->stores[inf->kind]);
	pthread_mutex_unlock(&c->cache_mu);
	tfjob__store_clear(&old);
	size_t i;
	json_t *k;
	json_array_foreach(keys, i, k) {
		tfjob__queue_add(c->q, json_string_value(k));
		atomic_fetch_add(&c->m.queue_adds, 1);
	}
	json_decref(keys);

	tfjob_watch_options wo = TFJOB_WATCH_OPTIONS_INIT;
	wo.label_selector = lo.label_selector;
	wo.resource_version = rv;
	wo.allow_bookmarks = 1;
	wo.reconnect = 1;
	wo.on_event = on_event;
	wo.on_closed = on_closed;
	wo.payload = inf;
	inf->need_relist = 0;
	rc = tfjob_transport_watch(&inf->watch, c->t, &inf->res, ns, &wo, err);
	tfjob__count(c, TFJOB_API_WATCH, rc);
	free(rv);
	if (rc == 0)
		inf->synced = 1;
	return rc;
}

void tfjob__informer_stop(tfjob__informer *inf)
{
	tfjob_watch *w = inf->watch;
	inf->watch = NULL;
	tfjob_watch_free(w);
}
