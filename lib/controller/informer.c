/*
 * List+watch of TFJobs, of the Pods and Services carrying the job-name label and (with gang
 * scheduling) of PodGroups, into the controller's stores; observed children lower the
 * expectations; every change queues the job (a PodGroup only when its spec or status changed).
 * Watches do not reconnect inside the transport: when a stream ends, the reflector thread
 * (tfjob__informer_tick) watches again from the last resourceVersion seen, or lists again after
 * 410 Gone or an error that is not a network one, with backoff, as client-go's reflector does.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/internal.h"


static const char *meta_str(json_t *obj, const char *field)
{
	return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

static int is_child_kind(int kind)
{
	return kind == INF_PODS || kind == INF_SERVICES;
}

/* The job key a child belongs to (controller TFJob ref, else the job-name label), into buf. */
static const char *child_job_key(char *buf, size_t size, const tfjob__child *ch, int *owned)
{
	const char *ns = ch->ns ? ch->ns : "";
	*owned = 0;
	if (ch->controlled) {
		if (!ch->ctrl_kind || strcmp(ch->ctrl_kind, "TFJob") || !ch->ctrl_name)
			return NULL;
		*owned = 1;
		return tfjob__fits(snprintf(buf, size, "%s/%s", ns, ch->ctrl_name), size) ? buf : NULL;
	}
	if (!ch->sum.job_name)
		return NULL;
	return tfjob__fits(snprintf(buf, size, "%s/%s", ns, ch->sum.job_name), size) ? buf : NULL;
}

/* Creations (adds) or deletions (dels) of a child seen: its job's expectations are lowered. */
static void observe(tfjob_controller *c, int kind, const tfjob__child *ch, int adds, int dels)
{
	char jk[TFJOB__KEY_MAX], sub[128];
	int owned = 0;
	const char *job_key = child_job_key(jk, sizeof(jk), ch, &owned);
	if (!job_key || !owned)
		return;
	snprintf(sub, sizeof(sub), "%s/%s", ch->sum.rtype ? ch->sum.rtype : "", kind == INF_PODS ? "pods" : "services");
	tfjob__exp_observed(c->exp, job_key, sub, adds, dels);
}

/* Remember where the stream is (the resume point of the next watch). */
static void note_rv(tfjob__informer *inf, const char *rv)
{
	if (!rv || !*rv)
		return;
	char *copy = strdup(rv);
	if (!copy)
		return;
	pthread_mutex_lock(&inf->c->cache_mu);
	free(inf->rv);
	inf->rv = copy;
	pthread_mutex_unlock(&inf->c->cache_mu);
}

/* A PodGroup changed: store it; queue its TFJob when its spec or status is new to us, or when
   it is deleted while the cache still has it. */
static void on_pod_group(tfjob__informer *inf, tfjob_watch_event type, json_t *obj)
{
	tfjob_controller *c = inf->c;
	char jk[TFJOB__KEY_MAX];
	const char *ns = meta_str(obj, "namespace"), *job = meta_str(obj, "name");
	size_t i;
	json_t *r;
	json_array_foreach(json_object_get(json_object_get(obj, "metadata"), "ownerReferences"), i, r) {
		if (json_is_true(json_object_get(r, "controller"))) {
			const char *kind = json_string_value(json_object_get(r, "kind"));
			job = kind && !strcmp(kind, "TFJob") ? json_string_value(json_object_get(r, "name")) : NULL;
			break;
		}
	}
	pthread_mutex_lock(&c->cache_mu);
	char *key = tfjob__object_key(obj);
	json_t *old = key ? tfjob__store_get(&c->stores[INF_PODGROUPS], key) : NULL;
	/* A DELETED event of a PodGroup the cache no longer has is our own delete (executor.c
	   takes it out of the cache before the call): the reconcile that deleted it knew. */
	int changed = type == TFJOB_WATCH_DELETED ? old != NULL
	              : !old || !json_equal(json_object_get(old, "spec"), json_object_get(obj, "spec")) ||
	                !json_equal(json_object_get(old, "status"), json_object_get(obj, "status"));
	if (type == TFJOB_WATCH_DELETED)
		tfjob__store_del(&c->stores[INF_PODGROUPS], obj, NULL);
	else
		tfjob__store_put(&c->stores[INF_PODGROUPS], json_incref(obj));
	pthread_mutex_unlock(&c->cache_mu);
	json_decref(old);
	free(key);
	if (changed && job && tfjob__fits(snprintf(jk, sizeof(jk), "%s/%s", ns ? ns : "", job), sizeof(jk))) {
		tfjob__queue_add(c->q, jk);
		atomic_fetch_add(&c->m.queue_adds, 1);
	}
}

static int same_str(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/*
 * Whether two versions of a child look the same to the planner and to the job lookup: every
 * field of the summary (the planner's whole view of a child, core/objects.h) and the owner
 * fields. A pod's binding to a node, say, changes neither.
 */
static int same_for_planner(const tfjob__child *a, const tfjob__child *b)
{
	const tfjob__summary *x = &a->sum, *y = &b->sum;
	return same_str(x->name, y->name) && same_str(x->uid, y->uid) && same_str(x->controller_uid, y->controller_uid) &&
	       same_str(x->operator_name, y->operator_name) && same_str(x->owner_refs, y->owner_refs) &&
	       same_str(x->job_name, y->job_name) && same_str(x->rtype, y->rtype) && same_str(x->rindex, y->rindex) &&
	       same_str(x->phase, y->phase) && x->index == y->index && x->exit_code == y->exit_code &&
	       x->restarts == y->restarts && x->phase_kind == y->phase_kind && x->index_ok == y->index_ok &&
	       x->deleting == y->deleting && x->exit_found == y->exit_found && x->maybe_abnormal == y->maybe_abnormal &&
	       ((!x->obj && !y->obj) || (x->obj && y->obj && json_equal(x->obj, y->obj))) && same_str(a->ns, b->ns) &&
	       a->controlled == b->controlled && same_str(a->ctrl_kind, b->ctrl_kind) &&
	       same_str(a->ctrl_name, b->ctrl_name) && same_str(a->ctrl_uid, b->ctrl_uid);
}

static const char *watch_event_word(tfjob_watch_event type)
{
	return type == TFJOB_WATCH_ADDED ? "ADDED" : type == TFJOB_WATCH_MODIFIED ? "MODIFIED" : "DELETED";
}

/* A Pod or Service changed: keep its compact form; lower expectations; queue its job unless the
   change is one the planner cannot see (an update whose summary equals the cached one's). */
static void on_child(tfjob__informer *inf, tfjob_watch_event type, json_t *obj)
{
	tfjob_controller *c = inf->c;
	tfjob__child *ch = NULL;
	if (tfjob__child_new(&ch, obj))
		return;
	char jk[TFJOB__KEY_MAX];
	int owned = 0;
	const char *job_key = child_job_key(jk, sizeof(jk), ch, &owned);
	pthread_mutex_lock(&c->cache_mu);
	const tfjob__child *old = tfjob__map_get(&c->kids[inf->kind].objs, ch->key);
	int unseen = type == TFJOB_WATCH_MODIFIED && old && same_for_planner(old, ch);
	if (type == TFJOB_WATCH_DELETED)
		tfjob__child_unref(tfjob__child_store_del(&c->kids[inf->kind], ch->key));
	else
		tfjob__child_store_put(&c->kids[inf->kind], tfjob__child_ref(ch));
	pthread_mutex_unlock(&c->cache_mu);
	if (tfjob__log_enabled(c, TFJOB_LOG_DEBUG)) {
		char what[TFJOB__KEY_MAX + 64];
		snprintf(what, sizeof(what), "%s %s %s rv %s", watch_event_word(type), inf->res.resource, ch->key,
		         ch->rv ? ch->rv : "");
		tfjob__log(c, TFJOB_LOG_DEBUG, "child event", job_key, what, NULL);
	}
	if (type == TFJOB_WATCH_ADDED)
		observe(c, inf->kind, ch, 1, 0);
	else if (type == TFJOB_WATCH_DELETED)
		observe(c, inf->kind, ch, 0, 1);
	if (job_key && !unseen) {
		tfjob__queue_add(c->q, job_key);
		atomic_fetch_add(&c->m.queue_adds, 1);
	}
	tfjob__child_unref(ch);
}

/* A TFJob added or changed, stored as its text came, without a parse (tfjob__stored_from_text);
   0 when the text needs parsing. */
static int on_job_text(tfjob__informer *inf, const char *text)
{
	tfjob_controller *c = inf->c;
	char *key = NULL;
	tfjob__stored *so = tfjob__stored_from_text(text, &key);
	char *queued = so ? strdup(key) : NULL;
	if (!queued) {
		free(so);
		free(key);
		return 0;
	}
	note_rv(inf, tfjob__stored_rv(so));
	pthread_mutex_lock(&c->cache_mu);
	tfjob__store_put_stored(&c->stores[INF_JOBS], key, so);
	pthread_mutex_unlock(&c->cache_mu);
	tfjob__queue_add(c->q, queued);
	atomic_fetch_add(&c->m.queue_adds, 1);
	free(queued);
	return 1;
}

static int on_event(tfjob_watch_event type, const char *object_json, void *payload)
{
	tfjob__informer *inf = payload;
	tfjob_controller *c = inf->c;
	inf->connected = 1;
	if (inf->kind == INF_JOBS && (type == TFJOB_WATCH_ADDED || type == TFJOB_WATCH_MODIFIED) &&
	    on_job_text(inf, object_json))
		return 0;
	json_t *obj = is_child_kind(inf->kind) ? tfjob__child_loads(object_json) : tfjob__object_loads(object_json);
	if (!json_is_object(obj)) {
		json_decref(obj);
		return 0;
	}
	note_rv(inf, meta_str(obj, "resourceVersion"));
	if (type == TFJOB_WATCH_BOOKMARK) {
		json_decref(obj);
		return 0;
	}
	if (inf->kind == INF_PODGROUPS) {
		on_pod_group(inf, type, obj);
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
			tfjob__store_del(&c->stores[INF_JOBS], obj, NULL);
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
	on_child(inf, type, obj);
	json_decref(obj);
	return 0;
}

/* Errors after which the same stream can be resumed: the server was unreachable or busy. */
static int resumable(int code)
{
	return code == TFJOB_ENETWORK || code == TFJOB_ETIMEOUT || code == TFJOB_ESERVER ||
	       code == TFJOB_ETOOMANYREQUESTS;
}

static void on_closed(int code, const tfjob_error *err, void *payload)
{
	tfjob__informer *inf = payload;
	tfjob_controller *c = inf->c;
	inf->watch_open = 0;
	pthread_mutex_lock(&c->mu);
	int stopping = c->stopping || !c->running;
	pthread_mutex_unlock(&c->mu);
	if (stopping)
		return;
	if (code == 0) {
		/* the server ended the stream (its timeout): resume at once, still connected */
		tfjob__log(c, TFJOB_LOG_DEBUG, "watch ended, watching again", NULL, inf->res.resource, NULL);
		inf->need_rewatch = 1;
	} else {
		inf->connected = 0;
		atomic_fetch_add(&c->m.watch_errors, 1);
		if (resumable(code)) {
			tfjob__log(c, TFJOB_LOG_WARN, "watch broken, watching again", NULL, inf->res.resource,
			           err ? tfjob_error_message(err) : tfjob_strerror(code));
			inf->need_rewatch = 1;
		} else {
			tfjob__log(c, code == TFJOB_EGONE ? TFJOB_LOG_INFO : TFJOB_LOG_WARN, "watch ended, listing again", NULL,
			           inf->res.resource, err ? tfjob_error_message(err) : tfjob_strerror(code));
			inf->need_relist = 1;
		}
	}
	pthread_mutex_lock(&c->mu);
	c->reflector_kick = 1;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->mu);
}

static int same_child(const tfjob__child *a, const tfjob__child *b)
{
	return a && b && (!a->uid || !b->uid || !strcmp(a->uid, b->uid));
}

/* A relist stands for the events the broken watch did not deliver (client-go's Replace):
   children that appeared count as observed creations, children that went as observed deletions,
   so expectations raised before the watch broke are met. */
static void observe_diff(tfjob_controller *c, int kind, tfjob__child_store *old, tfjob__child_store *fresh)
{
	size_t b = 0;
	for (tfjob__map_node *n = tfjob__map_next(&fresh->objs, &b, NULL); n; n = tfjob__map_next(&fresh->objs, &b, n))
		if (!same_child(tfjob__map_get(&old->objs, n->key), n->val))
			observe(c, kind, n->val, 1, 0);
	b = 0;
	for (tfjob__map_node *n = tfjob__map_next(&old->objs, &b, NULL); n; n = tfjob__map_next(&old->objs, &b, n))
		if (!same_child(tfjob__map_get(&fresh->objs, n->key), n->val))
			observe(c, kind, n->val, 0, 1);
}

/* The stores a list fills before they replace the informer's. */
struct fresh_stores {
	int kind;
	tfjob__store *objs;
	tfjob__child_store *kids;
};

/* One item of a list page into the fresh stores. */
static int store_item(json_t *item, void *payload)
{
	struct fresh_stores *fs = payload;
	if (!json_is_object(item))
		return 0;
	if (fs->kind == INF_JOBS) { /* list items may lack kind/apiVersion */
		json_object_set_new(item, "apiVersion", json_string("kubeflow.org/v1"));
		json_object_set_new(item, "kind", json_string("TFJob"));
	}
	tfjob__child *ch = NULL;
	if (!is_child_kind(fs->kind))
		tfjob__store_put(fs->objs, json_incref(item));
	else if (tfjob__child_new(&ch, item) == 0)
		tfjob__child_store_put(fs->kids, ch);
	return 0;
}

/* List the informer's resource, page by page (500 objects each), into fresh stores; *rv gets the
 * list's resourceVersion, the resume point of the watch. */
static int list_all(tfjob__informer *inf, tfjob__store *fresh, tfjob__child_store *fresh_kids, char **rv,
                    tfjob_error **err)
{
	tfjob_controller *c = inf->c;
	tfjob_list_options lo = TFJOB_LIST_OPTIONS_INIT;
	int children = is_child_kind(inf->kind);
	lo.label_selector = children ? TFJOB_LABEL_JOB_NAME : NULL;
	lo.limit = 500;
	char *cont = NULL;
	int rc = 0;
	do {
		char *out = NULL;
		if (tfjob__stopping(c)) { /* a long paged list must not hold up a stop */
			rc = tfjob__fail(err, TFJOB_ESTATE, "the controller is stopping");
			break;
		}
		lo.continue_token = cont;
		rc = tfjob_transport_list(&out, c->t, &inf->res, c->ns ? c->ns : "", &lo, err);
		tfjob__count(c, TFJOB_API_LIST, rc);
		free(cont);
		cont = NULL;
		if (rc)
			break;
		struct fresh_stores fs = { inf->kind, fresh, fresh_kids };
		json_t *md = NULL;
		int prc = tfjob__list_parse(out, children, &md, store_item, &fs);
		tfjob_free(out);
		if (prc) {
			rc = tfjob__fail(err, TFJOB_EPARSE, "the %s list is not JSON", inf->res.resource);
			break;
		}
		free(*rv);
		*rv = tfjob__strdup(json_string_value(json_object_get(md, "resourceVersion")));
		const char *ct = json_string_value(json_object_get(md, "continue"));
		if (ct && *ct)
			cont = strdup(ct);
		json_decref(md);
	} while (cont);
	free(cont); /* a list cut short by a stop */
	return rc;
}

/* The keys of every cached job, and (a relist of the jobs) of the jobs gone from old: all are
 * queued after a relist (level-triggered: it re-examines everything). Cache lock held. */
static json_t *jobs_to_queue(tfjob_controller *c, int kind, const tfjob__store *old)
{
	json_t *keys = json_array();
	tfjob__map *jm = &c->stores[INF_JOBS].objs;
	size_t b = 0;
	for (tfjob__map_node *n = tfjob__map_next(jm, &b, NULL); n; n = tfjob__map_next(jm, &b, n))
		json_array_append_new(keys, json_string(n->key));
	if (kind == INF_JOBS) { /* jobs gone while we were not watching */
		b = 0;
		for (tfjob__map_node *n = tfjob__map_next(&old->objs, &b, NULL); n; n = tfjob__map_next(&old->objs, &b, n))
			if (!tfjob__map_get(jm, n->key))
				json_array_append_new(keys, json_string(n->key));
	}
	return keys;
}

int tfjob__informer_list_watch(tfjob__informer *inf, tfjob_error **err)
{
	tfjob_controller *c = inf->c;
	tfjob__store fresh;
	tfjob__child_store fresh_kids;
	tfjob__store_init(&fresh);
	tfjob__child_store_init(&fresh_kids);
	char *rv = NULL;
	int rc = list_all(inf, &fresh, &fresh_kids, &rv, err);
	if (rc) {
		tfjob__store_clear(&fresh);
		tfjob__child_store_clear(&fresh_kids);
		free(rv);
		return rc;
	}
	/* swap the store; queue every job */
	pthread_mutex_lock(&c->cache_mu);
	tfjob__store old = c->stores[inf->kind];
	tfjob__child_store old_kids = c->kids[inf->kind];
	c->stores[inf->kind] = fresh;
	c->kids[inf->kind] = fresh_kids;
	json_t *keys = jobs_to_queue(c, inf->kind, &old);
	if (is_child_kind(inf->kind))
		observe_diff(c, inf->kind, &old_kids, &c->kids[inf->kind]);
	free(inf->rv);
	inf->rv = rv;
	pthread_mutex_unlock(&c->cache_mu);
	tfjob__store_clear(&old);
	tfjob__child_store_clear(&old_kids);
	size_t i;
	json_t *k;
	json_array_foreach(keys, i, k) {
		tfjob__queue_add(c->q, json_string_value(k));
		atomic_fetch_add(&c->m.queue_adds, 1);
	}
	json_decref(keys);
	inf->need_relist = 0;
	inf->connected = 1; /* the list just succeeded */
	rc = tfjob__informer_rewatch(inf, err);
	if (rc == 0)
		inf->synced = 1;
	return rc;
}

int tfjob__informer_rewatch(tfjob__informer *inf, tfjob_error **err)
{
	tfjob_controller *c = inf->c;
	tfjob__informer_stop(inf);
	pthread_mutex_lock(&c->cache_mu);
	char *rv = inf->rv ? strdup(inf->rv) : NULL;
	pthread_mutex_unlock(&c->cache_mu);
	tfjob_watch_options wo = TFJOB_WATCH_OPTIONS_INIT;
	wo.label_selector = is_child_kind(inf->kind) ? TFJOB_LABEL_JOB_NAME : NULL;
	wo.resource_version = rv;
	wo.allow_bookmarks = 1;
	wo.reconnect = 0; /* tfjob__informer_tick resumes it: it must know when the stream is down */
	wo.on_event = on_event;
	wo.on_closed = on_closed;
	wo.payload = inf;
	inf->need_rewatch = 0;
	inf->watch_open = 1;
	inf->watch_started_ms = tfjob__monotonic_ms();
	int rc = tfjob_transport_watch(&inf->watch, c->t, &inf->res, c->ns ? c->ns : "", &wo, err);
	tfjob__count(c, TFJOB_API_WATCH, rc);
	if (rc)
		inf->watch_open = 0;
	free(rv);
	return rc;
}

void tfjob__informer_stop(tfjob__informer *inf)
{
	tfjob_watch *w = inf->watch;
	inf->watch = NULL;
	tfjob_watch_free(w);
}

/* A resumed stream that has stayed up this long without an event counts as connected. */
#define CONNECTED_AFTER_MS 1000

/* Backoff of failed relists and rewatches: 200 ms doubling to 5 s (the server's own Retry-After
   and the transport's request retries come on top). */
static int64_t retry_delay_ms(int failures)
{
	int64_t ms = 200;
	for (int i = 1; i < failures && ms < 5000; i++)
		ms *= 2;
	return ms > 5000 ? 5000 : ms;
}

/* When the informer has something to do next (monotonic ms), or INT64_MAX: nothing until its
   stream closes (on_closed then wakes the reflector). */
static int64_t next_due(const tfjob__informer *inf)
{
	if (inf->need_relist || inf->need_rewatch)
		return inf->next_try_ms;
	if (inf->watch_open && (!inf->connected || inf->failures))
		return inf->watch_started_ms + CONNECTED_AFTER_MS; /* to count it connected, or reset failures */
	return INT64_MAX;
}

int64_t tfjob__informer_tick(tfjob__informer *inf, int64_t now)
{
	tfjob_controller *c = inf->c;
	if (!inf->enabled)
		return INT64_MAX;
	if (!inf->connected && inf->watch_open && !inf->need_rewatch && !inf->need_relist &&
	    now - inf->watch_started_ms >= CONNECTED_AFTER_MS)
		inf->connected = 1; /* a resumed stream that stays up counts as connected without events */
	if (inf->connected && inf->watch_open)
		inf->failures = 0;
	if ((!inf->need_relist && !inf->need_rewatch) || now < inf->next_try_ms)
		return next_due(inf);
	tfjob_error *err = NULL;
	int rc;
	if (inf->need_relist) {
		tfjob__informer_stop(inf);
		inf->synced = 0;
		atomic_fetch_add(&c->m.relists, 1);
		rc = tfjob__informer_list_watch(inf, &err);
	} else {
		atomic_fetch_add(&c->m.watch_restarts, 1);
		rc = tfjob__informer_rewatch(inf, &err);
	}
	/* The next attempt, should this one fail now or its stream break soon, waits longer; a
	   stream that turns out healthy resets the count (above). */
	inf->failures++;
	inf->next_try_ms = tfjob__monotonic_ms() + retry_delay_ms(inf->failures);
	if (rc) {
		tfjob__log(c, TFJOB_LOG_WARN, inf->need_relist ? "relist failed, retrying" : "watch failed, retrying", NULL,
		           inf->res.resource, tfjob_error_message(err));
		if (!inf->need_relist)
			inf->need_rewatch = 1;
	}
	tfjob_error_free(err);
	return next_due(inf);
}

int tfjob__informer_ready(const tfjob__informer *inf)
{
	return !inf->enabled || (inf->synced && inf->connected && !inf->need_relist);
}
