/*
 * One reconcile of a job key: snapshot from the caches, expectations, the planner (which decides
 * everything: children, their controller references, gang scheduling's PodGroup), then the
 * plan's actions carried out in order (children created and deleted with expectations raised
 * first, adoptions after re-reading the job, the outcome of every API call recorded as an Event
 * named as training-operator names it), the status through /status with conflict retry
 * (re-read, re-plan) and the planner's requeue.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/ctrl.h"
#include "core/job.h"
#include "core/objects.h"


static const tfjob_resource RES_TFJOBS = TFJOB_RESOURCE_TFJOBS_INIT;
static const tfjob_resource RES_PODS = TFJOB_RESOURCE_PODS_INIT;
static const tfjob_resource RES_SERVICES = TFJOB_RESOURCE_SERVICES_INIT;

typedef struct rctx {
	tfjob_controller *c;
	const char *key;
	char *ns, *name;
	json_t *job;      /* snapshot (reference) */
	char *job_text;   /* for events, lazily */
	int may_adopt;    /* -1: not checked yet; 0/1: the job re-read from the server is this one, not being deleted */
} rctx;

static const char *meta_str(json_t *obj, const char *field)
{
	return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

static const char *label_of(json_t *obj, const char *label)
{
	return json_string_value(json_object_get(json_object_get(json_object_get(obj, "metadata"), "labels"), label));
}

static void record_event(rctx *r, const char *type, const char *reason, const char *message)
{
	tfjob_controller *c = r->c;
	if (c->o.no_events)
		return;
	if (!r->job_text)
		r->job_text = json_dumps(r->job, JSON_COMPACT);
	if (!r->job_text)
		return;
	tfjob_error *err = NULL;
	int rc = tfjob_transport_create_event(NULL, c->t, r->ns, r->job_text, type, reason, message, TFJOB_OPERATOR_NAME, &err);
	tfjob__count(c, TFJOB_API_CREATE_EVENT, rc);
	if (rc)
		tfjob__log(c, TFJOB_LOG_WARN, "recording an event failed", r->key, reason, tfjob_error_message(err));
	tfjob_error_free(err);
}

static int cond_true(json_t *status, const char *type)
{
	size_t i;
	json_t *cnd;
	json_array_foreach(json_object_get(status, "conditions"), i, cnd) {
		const char *t = json_string_value(json_object_get(cnd, "type"));
		const char *s = json_string_value(json_object_get(cnd, "status"));
		if (t && s && !strcmp(t, type))
			return !strcmp(s, "True") ? 1 : 0;
	}
	return -1; /* absent */
}

/* "worker/pods" for a child object. */
static void sub_key(char *buf, size_t size, json_t *obj, int is_pod)
{
	const char *rt = label_of(obj, TFJOB_LABEL_REPLICA_TYPE);
	snprintf(buf, size, "%s/%s", rt ? rt : "", is_pod ? "pods" : "services");
}

/* ---- actions ---- */

static json_t *find_by_name(json_t *arr, const char *name)
{
	size_t i;
	json_t *o;
	json_array_foreach(arr, i, o) {
		const char *n = meta_str(o, "name");
		if (n && name && !strcmp(n, name))
			return o;
	}
	return NULL;
}

static int do_create(rctx *r, const tfjob_plan *plan, size_t i, int is_pod)
{
	tfjob_controller *c = r->c;
	const tfjob_resource *res = is_pod ? &RES_PODS : &RES_SERVICES;
	const char *name = tfjob_plan_action_name(plan, i);
	char *text = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_plan_action_object_json(&text, plan, i, 0, &err);
	if (rc)
		goto out;
	if (is_pod && c->hooks.mutate_pod) {
		char *mutated = NULL;
		if (!r->job_text)
			r->job_text = json_dumps(r->job, JSON_COMPACT);
		rc = c->hooks.mutate_pod(&mutated, text, r->job_text ? r->job_text : "{}", c->hooks.payload);
		if (rc) {
			free(mutated);
			tfjob__fail(&err, rc, "the pod mutation hook failed (%s)", tfjob_strerror(rc));
			goto out;
		}
		if (mutated) {
			tfjob_free(text);
			text = mutated;
		}
	}
	json_t *obj = json_loads(text, 0, NULL);
	char sub[128];
	sub_key(sub, sizeof(sub), obj, is_pod);
	json_decref(obj);
	/* Raise the expectation before the call: the watch may see the object before we return. */
	tfjob__exp_expect(c->exp, r->key, sub, 1, 0);
	rc = tfjob_transport_create(NULL, c->t, res, r->ns, text, &err);
	tfjob__count(c, TFJOB_API_CREATE, rc);
	/* AlreadyExists too is a failure, as in v1.9: the name is taken by an object that is not the
	   job's (another owner's, or an orphan the job does not adopt), or the cache is behind. */
	if (rc)
		tfjob__exp_observed(c->exp, r->key, sub, 1, 0); /* it will never be observed */
out:;
	char msg[1024];
	if (rc) {
		snprintf(msg, sizeof(msg), "Error creating: %s", err ? tfjob_error_message(err) : tfjob_strerror(rc));
		record_event(r, "Warning", is_pod ? "FailedCreatePod" : "FailedCreateService", msg);
		tfjob__log(c, TFJOB_LOG_ERROR, is_pod ? "creating a pod failed" : "creating a service failed", r->key, name,
		           msg);
	} else if (!err) {
		snprintf(msg, sizeof(msg), "Created %s: %s", is_pod ? "pod" : "service", name ? name : "");
		record_event(r, "Normal", is_pod ? "SuccessfulCreatePod" : "SuccessfulCreateService", msg);
	}
	tfjob_free(text);
	tfjob_error_free(err);
	return rc;
}

static int do_delete(rctx *r, const tfjob_plan *plan, size_t i, int is_pod, json_t *children)
{
	tfjob_controller *c = r->c;
	const tfjob_resource *res = is_pod ? &RES_PODS : &RES_SERVICES;
	const char *name = tfjob_plan_action_name(plan, i);
	json_t *obj = find_by_name(children, name);
	char sub[128];
	sub_key(sub, sizeof(sub), obj, is_pod);
	tfjob__exp_expect(c->exp, r->key, sub, 0, 1);
	tfjob_error *err = NULL;
	tfjob_delete_options dopts = TFJOB_DELETE_OPTIONS_INIT;
	dopts.precondition_uid = obj ? meta_str(obj, "uid") : NULL;
	int rc = tfjob_transport_delete(NULL, c->t, res, r->ns, name, &dopts, &err);
	tfjob__count(c, TFJOB_API_DELETE, rc);
	char msg[1024];
	if (rc == TFJOB_ENOTFOUND || rc == TFJOB_ECONFLICT) { /* already gone (or replaced): done */
		tfjob__exp_observed(c->exp, r->key, sub, 0, 1);
		rc = 0;
	} else if (rc) {
		tfjob__exp_observed(c->exp, r->key, sub, 0, 1);
		snprintf(msg, sizeof(msg), "Error deleting: %s", tfjob_error_message(err));
		record_event(r, "Warning", is_pod ? "FailedDeletePod" : "FailedDeleteService", msg);
	} else {
		snprintf(msg, sizeof(msg), "Deleted %s: %s", is_pod ? "pod" : "service", name ? name : "");
		record_event(r, "Normal", is_pod ? "SuccessfulDeletePod" : "SuccessfulDeleteService", msg);
	}
	tfjob_error_free(err);
	return rc;
}

/* ---- controller references and the PodGroup ---- */

/* Keep what the server answered a write with (newer than the cache, or the same) in a store. */
static void store_answer(rctx *r, int kind, const char *text)
{
	json_t *obj = text ? json_loads(text, 0, NULL) : NULL;
	if (!obj)
		return;
	pthread_mutex_lock(&r->c->cache_mu);
	tfjob__store_put(&r->c->stores[kind], obj);
	pthread_mutex_unlock(&r->c->cache_mu);
}

/* Adopt only a job that the server still has under this uid, not being deleted (the controller-ref
   manager's RecheckDeletionTimestamp): read it once per reconcile, past the cache. */
static int job_may_adopt(rctx *r)
{
	if (r->may_adopt >= 0)
		return r->may_adopt;
	char *fresh = NULL;
	int rc = tfjob_transport_get(&fresh, r->c->t, &RES_TFJOBS, r->ns, r->name, NULL);
	tfjob__count(r->c, TFJOB_API_GET, rc);
	json_t *job = rc == 0 && fresh ? json_loads(fresh, 0, NULL) : NULL;
	const char *uid = meta_str(job, "uid"), *want = meta_str(r->job, "uid");
	r->may_adopt = job && uid && want && !strcmp(uid, want) && !meta_str(job, "deletionTimestamp");
	json_decref(job);
	tfjob_free(fresh);
	return r->may_adopt;
}

/* Adopt or release a child (a merge patch of its owner references); NotFound: nothing to claim. */
static int do_claim(rctx *r, const tfjob_plan *plan, size_t i, int is_pod)
{
	tfjob_controller *c = r->c;
	const char *name = tfjob_plan_action_name(plan, i);
	int adopt = tfjob_plan_action_type(plan, i) == TFJOB_ACTION_ADOPT;
	if (adopt && !job_may_adopt(r)) {
		tfjob__log(c, TFJOB_LOG_INFO, "not adopting: the job is gone or being deleted", r->key, name, NULL);
		return 0;
	}
	char *patch = NULL, *out = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_plan_action_object_json(&patch, plan, i, TFJOB_JSON_COMPACT, &err);
	if (!rc) {
		rc = tfjob_transport_patch(&out, c->t, is_pod ? &RES_PODS : &RES_SERVICES, r->ns, name, NULL, patch, &err);
		tfjob__count(c, TFJOB_API_PATCH, rc);
	}
	if (rc == 0) {
		store_answer(r, is_pod ? INF_PODS : INF_SERVICES, out);
		tfjob__log(c, TFJOB_LOG_INFO, adopt ? "adopted a child" : "released a child", r->key, name, NULL);
	} else if (rc == TFJOB_ENOTFOUND) {
		rc = 0;
	} else {
		tfjob__log(c, TFJOB_LOG_WARN, adopt ? "adopting a child failed" : "releasing a child failed", r->key, name,
		           tfjob_error_message(err));
	}
	tfjob_free(patch);
	tfjob_free(out);
	tfjob_error_free(err);
	return rc;
}

/* Create or patch the PodGroup. v1.9 only logs a failure; the reconcile is retried. */
static int do_write_pod_group(rctx *r, const tfjob_plan *plan, size_t i)
{
	tfjob_controller *c = r->c;
	const tfjob_resource *res = &c->inf[INF_PODGROUPS].res;
	const char *name = tfjob_plan_action_name(plan, i);
	int create = tfjob_plan_action_type(plan, i) == TFJOB_ACTION_CREATE;
	char *text = NULL, *out = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_plan_action_object_json(&text, plan, i, TFJOB_JSON_COMPACT, &err);
	if (!rc && create) {
		rc = tfjob_transport_create(&out, c->t, res, r->ns, text, &err);
		tfjob__count(c, TFJOB_API_CREATE, rc);
	} else if (!rc) {
		rc = tfjob_transport_patch(&out, c->t, res, r->ns, name, NULL, text, &err);
		tfjob__count(c, TFJOB_API_PATCH, rc);
	}
	if (rc == 0)
		store_answer(r, INF_PODGROUPS, out);
	else if (rc == TFJOB_EEXISTS || rc == TFJOB_ENOTFOUND)
		rc = 0; /* there already, or deleted meanwhile: its watch event queues the job */
	else
		tfjob__log(c, TFJOB_LOG_WARN, "syncing the PodGroup failed", r->key, name, tfjob_error_message(err));
	tfjob_free(text);
	tfjob_free(out);
	tfjob_error_free(err);
	return rc;
}

/* Delete the PodGroup; gone already counts as deleted (v1.9 says so either way). */
static int do_delete_pod_group(rctx *r, const char *name)
{
	tfjob_controller *c = r->c;
	tfjob_error *err = NULL;
	int rc = tfjob_transport_delete(NULL, c->t, &c->inf[INF_PODGROUPS].res, r->ns, name, NULL, &err);
	tfjob__count(c, TFJOB_API_DELETE, rc);
	char msg[1024];
	if (rc == 0 || rc == TFJOB_ENOTFOUND) {
		rc = 0;
		snprintf(msg, sizeof(msg), "Deleted PodGroup: %s", name);
		record_event(r, "Normal", "SuccessfulDeletePodGroup", msg);
	} else {
		snprintf(msg, sizeof(msg), "Error deleting: %s", tfjob_error_message(err));
		record_event(r, "Warning", "FailedDeletePodGroup", msg);
	}
	tfjob_error_free(err);
	return rc;
}

/* The TTL's deletion of the job itself. */
static int do_delete_job(rctx *r)
{
	tfjob_controller *c = r->c;
	tfjob_delete_options dopts = TFJOB_DELETE_OPTIONS_INIT;
	dopts.propagation = TFJOB_PROPAGATION_BACKGROUND;
	dopts.precondition_uid = meta_str(r->job, "uid");
	tfjob_error *err = NULL;
	int rc = tfjob_transport_delete(NULL, c->t, &RES_TFJOBS, r->ns, r->name, &dopts, &err);
	tfjob__count(c, TFJOB_API_DELETE, rc);
	char msg[1024];
	if (rc == 0) {
		atomic_fetch_add(&c->m.jobs_deleted, 1);
		tfjob__log(c, TFJOB_LOG_INFO, "deleted the job (ttlSecondsAfterFinished)", r->key, NULL, NULL);
		snprintf(msg, sizeof(msg), "Deleted job: %s", r->name);
		record_event(r, "Normal", "SuccessfulDeleteJob", msg);
	} else if (rc == TFJOB_ENOTFOUND || rc == TFJOB_ECONFLICT) {
		rc = 0; /* gone, or replaced by another job of that name */
	} else {
		snprintf(msg, sizeof(msg), "Error deleting: %s", tfjob_error_message(err));
		record_event(r, "Warning", "FailedDeleteJob", msg);
	}
	tfjob_error_free(err);
	return rc;
}

/* Carry out action i. */
static int do_action(rctx *r, const tfjob_plan *plan, size_t i, json_t *pods, json_t *svcs)
{
	tfjob_action_type at = tfjob_plan_action_type(plan, i);
	tfjob_object_kind kind = tfjob_plan_action_kind(plan, i);
	int is_pod = kind == TFJOB_OBJECT_POD;
	switch (at) {
	case TFJOB_ACTION_EVENT:
		record_event(r, tfjob_event_type_name(tfjob_plan_action_event_type(plan, i)),
		             tfjob_plan_action_reason(plan, i), tfjob_plan_action_message(plan, i));
		return 0;
	case TFJOB_ACTION_ADOPT:
	case TFJOB_ACTION_RELEASE:
		return do_claim(r, plan, i, is_pod);
	case TFJOB_ACTION_PATCH:
		return do_write_pod_group(r, plan, i);
	case TFJOB_ACTION_WAIT:
		tfjob__log(r->c, TFJOB_LOG_DEBUG, "pods wait for the PodGroup", r->key, tfjob_plan_action_name(plan, i), NULL);
		return 0;
	case TFJOB_ACTION_CREATE:
		return kind == TFJOB_OBJECT_PODGROUP ? do_write_pod_group(r, plan, i) : do_create(r, plan, i, is_pod);
	case TFJOB_ACTION_DELETE:
		if (kind == TFJOB_OBJECT_TFJOB)
			return do_delete_job(r);
		if (kind == TFJOB_OBJECT_PODGROUP)
			return do_delete_pod_group(r, tfjob_plan_action_name(plan, i));
		return do_delete(r, plan, i, is_pod, is_pod ? pods : svcs);
	}
	return 0;
}

/* ---- the steps of one reconcile ---- */

/* The cached children as the planner's input (summarised once here, never parsed). */
static tfjob_objects *wrap_objects(json_t *arr, const char *what)
{
	tfjob_objects *o = NULL;
	if (tfjob__objects_wrap(&o, json_incref(arr), what, NULL))
		return NULL;
	return o;
}

/* The cached children the job controls and the orphans with its job-name label (the planner
   decides which are the job's). New reference. */
static json_t *children_of(rctx *r, int kind)
{
	const char *uid = meta_str(r->job, "uid");
	char okey[512], orph[512];
	snprintf(okey, sizeof(okey), "uid:%s", uid ? uid : "");
	snprintf(orph, sizeof(orph), "orphan:%s/%s", r->ns, r->name);
	pthread_mutex_lock(&r->c->cache_mu);
	json_t *owned = tfjob__store_children(&r->c->stores[kind], okey);
	json_t *orphans = tfjob__store_children(&r->c->stores[kind], orph);
	pthread_mutex_unlock(&r->c->cache_mu);
	json_t *all = owned && orphans && !json_array_extend(owned, orphans) ? owned : NULL;
	if (!all)
		json_decref(owned);
	json_decref(orphans);
	return all;
}

/* The cached PodGroup of the job as text (NULL: none, or no gang scheduling). */
static char *pod_group_text(rctx *r)
{
	if (r->c->o.gang_scheduler == TFJOB_GANG_NONE)
		return NULL;
	pthread_mutex_lock(&r->c->cache_mu);
	json_t *pg = json_incref(tfjob__map_get(&r->c->stores[INF_PODGROUPS].objs, r->key));
	pthread_mutex_unlock(&r->c->cache_mu);
	char *text = pg ? json_dumps(pg, JSON_COMPACT) : NULL;
	json_decref(pg);
	return text;
}

/* Plan one step from the snapshot. */
static int plan_step(tfjob_plan **plan, rctx *r, json_t *pods, json_t *svcs, tfjob_error **err)
{
	tfjob_controller *c = r->c;
	tfjob_job *tj = NULL;
	char *pg = pod_group_text(r);
	tfjob_objects *po = wrap_objects(pods, "pods"), *so = wrap_objects(svcs, "services");
	int rc = po && so ? tfjob__job_wrap(&tj, json_incref(r->job), NULL, err) : TFJOB_ENOMEM;
	if (!rc) {
		tfjob_plan_options popts = TFJOB_PLAN_OPTIONS_INIT;
		popts.compat = c->o.compat;
		popts.now = tfjob__now_s(c);
		popts.requeues = tfjob__queue_num_requeues(c->q, r->key);
		popts.render = &c->ropts;
		popts.pod_group_json = pg;
		rc = tfjob_plan_new_with_objects(plan, tj, po, so, &popts, err);
	}
	free(pg);
	tfjob_job_free(tj);
	tfjob_objects_free(po);
	tfjob_objects_free(so);
	return rc;
}

/*
 * Whether `stored` (the status the server answered a status write with) lost or changed part of
 * `sent`; `where` gets the path of the first difference, as status.a.b[i].
 */
static int status_lost_at(const json_t *sent, const json_t *stored, char *where, size_t size, size_t len)
{
	if (json_is_object(sent) && json_is_object(stored)) {
		const char *k;
		json_t *v;
		json_object_foreach((json_t *)sent, k, v) {
			if (json_is_null(v))
				continue;
			snprintf(where + len, size - len, ".%s", k);
			if (status_lost_at(v, json_object_get(stored, k), where, size, strlen(where)))
				return 1;
		}
		where[len] = '\0';
		return 0;
	}
	if (json_is_array(sent) && json_is_array(stored) && json_array_size(sent) == json_array_size(stored)) {
		for (size_t i = 0; i < json_array_size(sent); i++) {
			snprintf(where + len, size - len, "[%zu]", i);
			if (status_lost_at(json_array_get(sent, i), json_array_get(stored, i), where, size, strlen(where)))
				return 1;
		}
		where[len] = '\0';
		return 0;
	}
	return !json_equal(sent, stored);
}

static int status_lost(const json_t *sent, const json_t *stored, char *where, size_t size)
{
	snprintf(where, size, "status");
	return status_lost_at(sent, stored, where, size, strlen(where));
}

/* A status write lost a conflict: re-read the job into the cache. 1: plan again; 0: gone; or an error. */
static int refresh_after_conflict(rctx *r, tfjob_error **err)
{
	tfjob_controller *c = r->c;
	atomic_fetch_add(&c->m.status_conflicts, 1);
	tfjob_error_free(*err);
	*err = NULL;
	char *fresh = NULL;
	int rc = tfjob_transport_get(&fresh, c->t, &RES_TFJOBS, r->ns, r->name, err);
	tfjob__count(c, TFJOB_API_GET, rc);
	if (rc == 0)
		store_answer(r, INF_JOBS, fresh);
	tfjob_free(fresh);
	return rc == 0 ? 1 : rc == TFJOB_ENOTFOUND ? 0 : rc;
}

/* Job metrics of a status that was written (counted as soon as the write succeeded). */
static void count_transitions(tfjob_controller *c, json_t *old_status, json_t *new_status)
{
	if (cond_true(old_status, "Created") < 0 && cond_true(new_status, "Created") >= 0)
		atomic_fetch_add(&c->m.jobs_created, 1);
	if (cond_true(old_status, "Succeeded") != 1 && cond_true(new_status, "Succeeded") == 1)
		atomic_fetch_add(&c->m.jobs_succeeded, 1);
	if (cond_true(old_status, "Failed") != 1 && cond_true(new_status, "Failed") == 1)
		atomic_fetch_add(&c->m.jobs_failed, 1);
	if (cond_true(old_status, "Restarting") != 1 && cond_true(new_status, "Restarting") == 1)
		atomic_fetch_add(&c->m.jobs_restarted, 1);
}

/* Write the plan's status through /status. Returns 0, 1 (conflict: plan again) or an error. */
static int write_status(rctx *r, const tfjob_plan *plan, tfjob_error **err)
{
	tfjob_controller *c = r->c;
	char *status_text = NULL;
	int rc = tfjob_plan_status_json(&status_text, plan, 0, err);
	json_t *new_status = rc ? NULL : json_loads(status_text, 0, NULL);
	free(status_text);
	if (!new_status)
		return rc ? rc : tfjob__oom(err);
	json_t *obj = json_copy(r->job);
	json_object_set(obj, "status", new_status);
	char *text = json_dumps(obj, JSON_COMPACT);
	json_decref(obj);
	char *stored = NULL;
	rc = text ? tfjob_transport_update_status(&stored, c->t, &RES_TFJOBS, r->ns, text, err) : TFJOB_ENOMEM;
	free(text);
	tfjob__count(c, TFJOB_API_UPDATE_STATUS, rc);
	if (rc == TFJOB_ECONFLICT)
		rc = refresh_after_conflict(r, err);
	else if (rc == TFJOB_ENOTFOUND)
		rc = 0;
	else if (rc == 0)
		count_transitions(c, json_object_get(r->job, "status"), new_status);
	json_t *s = rc == 0 && stored ? json_loads(stored, 0, NULL) : NULL;
	tfjob_free(stored);
	char where[256] = "";
	if (s && status_lost(new_status, json_object_get(s, "status"), where, sizeof(where))) {
		/* The CRD's schema pruned or changed part of what we wrote: the next plan would
		   write it again at every event. Say so (a CRD without those status fields). */
		tfjob__log(c, TFJOB_LOG_WARN, "the stored status differs from the one written (pruned by the CRD's schema?)",
		           r->key, where, NULL);
	}
	if (s) {
		pthread_mutex_lock(&c->cache_mu);
		tfjob__store_put(&c->stores[INF_JOBS], s);
		pthread_mutex_unlock(&c->cache_mu);
	}
	json_decref(new_status);
	return rc;
}

/* Whether the plan deletes the job itself (the TTL): then there is no status to write. */
static int deletes_job(const tfjob_plan *plan)
{
	for (size_t i = 0; i < tfjob_plan_action_count(plan); i++)
		if (tfjob_plan_action_type(plan, i) == TFJOB_ACTION_DELETE && tfjob_plan_action_kind(plan, i) == TFJOB_OBJECT_TFJOB)
			return 1;
	return 0;
}

/* Returns 0 done, 1 re-plan (status conflict), or a negative error. */
static int reconcile_once(rctx *r)
{
	tfjob_controller *c = r->c;
	if (meta_str(r->job, "deletionTimestamp"))
		return 0; /* being deleted: leave it alone */
	if (!tfjob__exp_satisfied(c->exp, r->key)) {
		tfjob__log(c, TFJOB_LOG_DEBUG, "expectations not satisfied yet", r->key, NULL, NULL);
		/* the watch brings the rest; expired expectations are looked at again by then */
		tfjob__queue_add_after(c->q, r->key, c->o.expectations_timeout_ms);
		return 0;
	}
	tfjob_error *err = NULL;
	tfjob_plan *plan = NULL;
	json_t *pods = children_of(r, INF_PODS), *svcs = children_of(r, INF_SERVICES);
	int rc = pods && svcs ? plan_step(&plan, r, pods, svcs, &err) : TFJOB_ENOMEM;
	size_t n = tfjob_plan_action_count(plan);
	for (size_t i = 0; i < n && rc == 0; i++)
		rc = do_action(r, plan, i, pods, svcs);
	if (!rc && !deletes_job(plan) && tfjob_plan_status_changed(plan))
		rc = write_status(r, plan, &err);
	int64_t after;
	if (!rc && !deletes_job(plan) && tfjob_plan_requeue_after(&after, plan) == 0)
		tfjob__queue_add_after(c->q, r->key, after > 0 ? after * 1000 : 0);
	if (rc < 0)
		tfjob__log(c, TFJOB_LOG_ERROR, "reconcile failed", r->key, NULL,
		           err ? tfjob_error_message(err) : tfjob_strerror(rc));
	tfjob_error_free(err);
	tfjob_plan_free(plan);
	json_decref(pods);
	json_decref(svcs);
	return rc;
}

int tfjob__reconcile(tfjob_controller *c, const char *key)
{
	const char *slash = strchr(key, '/');
	if (!slash)
		return 0;
	rctx r = { c, key, strndup(key, (size_t)(slash - key)), strdup(slash + 1), NULL, NULL, -1 };
	int rc = 0;
	if (!r.ns || !r.name) {
		rc = TFJOB_ENOMEM;
		goto out;
	}
	for (int attempt = 0; attempt < 5; attempt++) {
		pthread_mutex_lock(&c->cache_mu);
		r.job = json_incref(tfjob__map_get(&c->stores[INF_JOBS].objs, key));
		pthread_mutex_unlock(&c->cache_mu);
		if (!r.job) {
			tfjob__exp_delete(c->exp, key);
			rc = 0;
			break;
		}
		rc = reconcile_once(&r);
		json_decref(r.job);
		r.job = NULL;
		free(r.job_text);
		r.job_text = NULL;
		if (rc != 1)
			break;
		tfjob__log(c, TFJOB_LOG_DEBUG, "status conflict, planning again", key, NULL, NULL);
	}
	if (rc == 1)
		rc = TFJOB_ECONFLICT;
out:
	free(r.ns);
	free(r.name);
	return rc;
}
