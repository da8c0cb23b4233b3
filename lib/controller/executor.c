/*
 * One reconcile of a job key: snapshot from the caches, expectations, adoption and release of
 * children, gang scheduling's PodGroup, the planner, then the plan's actions in order (children
 * created and deleted with expectations raised first, Events named as training-operator names
 * them), the status through /status with conflict retry (re-read, re-plan), TTL deletion and the
 * planner's requeue.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/ctrl.h"
#include "core/job.h"
#include "core/objects.h"

#define LABEL_JOB_NAME "training.kubeflow.org/job-name"
#define LABEL_OPERATOR "training.kubeflow.org/operator-name"
#define LABEL_REPLICA_TYPE "training.kubeflow.org/replica-type"
#define OPERATOR_NAME "tfjob-controller"
#define MANAGED_BY_US "kubeflow.org/training-operator"

static const tfjob_resource RES_TFJOBS = TFJOB_RESOURCE_TFJOBS_INIT;
static const tfjob_resource RES_PODS = TFJOB_RESOURCE_PODS_INIT;
static const tfjob_resource RES_SERVICES = TFJOB_RESOURCE_SERVICES_INIT;

typedef struct rctx {
	tfjob_controller *c;
	const char *key;
	char *ns, *name;
	json_t *job;      /* snapshot (reference) */
	char *job_text;   /* for the pod mutation hook, lazily */
	tfjob__event_batch events; /* recorded, posted when the reconcile has done its writes */
} rctx;

static const char *meta_str(json_t *obj, const char *field)
{
	return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

static const char *label_of(json_t *obj, const char *label)
{
	return json_string_value(json_object_get(json_object_get(json_object_get(obj, "metadata"), "labels"), label));
}

/* An Event about the job, held until the reconcile has done its writes (tfjob__reconcile()). */
static void record_event(rctx *r, const char *type, const char *reason, const char *message)
{
	if (r->c->o.no_events)
		return;
	const char *kind = json_string_value(json_object_get(r->job, "kind"));
	const char *api_version = json_string_value(json_object_get(r->job, "apiVersion"));
	tfjob__event_ref ref = { kind ? kind : "TFJob", api_version ? api_version : "kubeflow.org/v1",
		                     r->name, r->ns, meta_str(r->job, "uid"), meta_str(r->job, "resourceVersion") };
	if (tfjob__event_batch_add(&r->events, &ref, type, reason, message))
		atomic_fetch_add(&r->c->m.events_dropped, 1);
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
	const char *rt = label_of(obj, LABEL_REPLICA_TYPE);
	snprintf(buf, size, "%s/%s", rt ? rt : "", is_pod ? "pods" : "services");
}

/* ---- adoption and release (ClaimPods / ClaimServices) ---- */

static json_t *owner_ref(json_t *job)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:b,s:b}", "apiVersion", "kubeflow.org/v1", "kind", "TFJob", "name",
	                 meta_str(job, "name"), "uid", meta_str(job, "uid") ? meta_str(job, "uid") : "",
	                 "controller", 1, "blockOwnerDeletion", 1);
}

static json_t *patch_refs(rctx *r, const tfjob_resource *res, json_t *obj, json_t *refs)
{
	json_t *patch = json_pack("{s:{s:O,s:s}}", "metadata", "ownerReferences", refs, "uid",
	                          meta_str(obj, "uid") ? meta_str(obj, "uid") : "");
	char *text = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
	json_decref(patch);
	char *out = NULL;
	tfjob_error *err = NULL;
	int rc = text ? tfjob_transport_patch(&out, r->c->t, res, r->ns, meta_str(obj, "name"), NULL, text, &err)
	              : TFJOB_ENOMEM;
	tfjob__count(r->c, TFJOB_API_PATCH, rc);
	free(text);
	json_t *res_obj = NULL;
	if (rc == 0 && out)
		res_obj = json_loads(out, 0, NULL);
	else
		tfjob__log(r->c, TFJOB_LOG_WARN, "adopting or releasing a child failed", r->key, meta_str(obj, "name"),
		           tfjob_error_message(err));
	tfjob_free(out);
	tfjob_error_free(err);
	return res_obj;
}

/* Children owned by uid whose labels no longer match are released; orphans that match are adopted.
   Returns the new list (reference) of children to plan with. */
static json_t *claim(rctx *r, int kind, json_t *owned, json_t *orphans)
{
	tfjob_controller *c = r->c;
	const tfjob_resource *res = kind == INF_PODS ? &RES_PODS : &RES_SERVICES;
	json_t *outl = json_array();
	size_t i;
	json_t *o;
	json_array_foreach(owned, i, o) {
		const char *jn = label_of(o, LABEL_JOB_NAME);
		if (jn && !strcmp(jn, r->name)) {
			json_array_append(outl, o);
			continue;
		}
		/* release: drop our controller reference */
		json_t *refs = json_array();
		size_t k;
		json_t *ref;
		json_array_foreach(json_object_get(json_object_get(o, "metadata"), "ownerReferences"), k, ref) {
			const char *uid = json_string_value(json_object_get(ref, "uid"));
			if (!uid || !meta_str(r->job, "uid") || strcmp(uid, meta_str(r->job, "uid")))
				json_array_append(refs, ref);
		}
		json_t *p = patch_refs(r, res, o, refs);
		json_decref(refs);
		if (p) {
			pthread_mutex_lock(&c->cache_mu);
			tfjob__store_put(&c->stores[kind], p);
			pthread_mutex_unlock(&c->cache_mu);
		}
	}
	json_array_foreach(orphans, i, o) {
		const char *op = label_of(o, LABEL_OPERATOR);
		if (!op || strcmp(op, OPERATOR_NAME) || meta_str(o, "deletionTimestamp"))
			continue;
		json_t *refs = json_deep_copy(json_object_get(json_object_get(o, "metadata"), "ownerReferences"));
		if (!json_is_array(refs)) {
			json_decref(refs);
			refs = json_array();
		}
		json_array_append_new(refs, owner_ref(r->job));
		json_t *p = patch_refs(r, res, o, refs);
		json_decref(refs);
		if (p) {
			json_array_append(outl, p);
			pthread_mutex_lock(&c->cache_mu);
			tfjob__store_put(&c->stores[kind], p);
			pthread_mutex_unlock(&c->cache_mu);
			tfjob__log(c, TFJOB_LOG_INFO, "adopted a child", r->key, meta_str(o, "name"), NULL);
		}
	}
	return outl;
}

/* ---- gang scheduling ---- */

/* Create or update the PodGroup, as the PodGroup cache shows it; *delay = 1 when pods must wait
   (volcano, phase "" or Pending). The watch of PodGroups queues the job when the phase changes. */
static int sync_pod_group(rctx *r, const tfjob_job *job, int *delay)
{
	tfjob_controller *c = r->c;
	const tfjob_resource *res = &c->inf[INF_PODGROUPS].res;
	*delay = 0;
	char *want_text = NULL, *got = NULL;
	tfjob_error *err = NULL;
	json_t *want = NULL;
	int rc = tfjob_render_pod_group(&want_text, job, &c->ropts, 0, &err);
	if (rc)
		goto out;
	pthread_mutex_lock(&c->cache_mu);
	json_t *pg = json_incref(tfjob__map_get(&c->stores[INF_PODGROUPS].objs, r->key));
	pthread_mutex_unlock(&c->cache_mu);
	if (pg && meta_str(pg, "deletionTimestamp")) {
		*delay = 1; /* going away: wait for it to go, then create it again */
		json_decref(pg);
		goto out;
	}
	if (!pg) {
		rc = tfjob_transport_create(&got, c->t, res, r->ns, want_text, &err);
		tfjob__count(c, TFJOB_API_CREATE, rc);
		if (rc == TFJOB_EEXISTS) {
			/* there already, not in the cache yet: its watch event will queue the job */
			tfjob_error_free(err);
			err = NULL;
			*delay = c->o.gang_scheduler == TFJOB_GANG_VOLCANO;
			rc = 0;
			goto out;
		}
		if (rc)
			goto out;
		pg = json_loads(got, 0, NULL);
	} else {
		want = json_loads(want_text, 0, NULL);
		json_t *ws = json_object_get(want, "spec");
		/* volcano: a queue the PodGroup already has is kept (v1.9 does; an admission webhook or an
		   administrator may have set it) */
		const char *q = json_string_value(json_object_get(json_object_get(pg, "spec"), "queue"));
		if (ws && c->o.gang_scheduler == TFJOB_GANG_VOLCANO && q && *q && json_object_set_new(ws, "queue", json_string(q)))
			rc = TFJOB_ENOMEM;
		if (!rc && ws && !json_equal(ws, json_object_get(pg, "spec"))) {
			json_t *patch = json_pack("{s:O}", "spec", ws);
			char *pt = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
			char *np = NULL;
			rc = pt ? tfjob_transport_patch(&np, c->t, res, r->ns, r->name, NULL, pt, &err) : TFJOB_ENOMEM;
			tfjob__count(c, TFJOB_API_PATCH, rc);
			free(pt);
			json_decref(patch);
			if (rc == 0 && np) {
				json_decref(pg);
				pg = json_loads(np, 0, NULL);
			} else if (rc == TFJOB_ENOTFOUND) {
				rc = 0; /* deleted meanwhile: the watch brings that, and the next reconcile creates it */
				*delay = c->o.gang_scheduler == TFJOB_GANG_VOLCANO;
			}
			tfjob_free(np);
		}
	}
	if (pg) { /* what the server answered is newer than the cache (or the same) */
		pthread_mutex_lock(&c->cache_mu);
		tfjob__store_put(&c->stores[INF_PODGROUPS], json_incref(pg));
		pthread_mutex_unlock(&c->cache_mu);
	}
	if (rc == 0 && pg && c->o.gang_scheduler == TFJOB_GANG_VOLCANO) {
		const char *phase = json_string_value(json_object_get(json_object_get(pg, "status"), "phase"));
		*delay = !phase || !*phase || !strcmp(phase, "Pending");
	}
	json_decref(pg);
out:
	if (rc)
		tfjob__log(c, TFJOB_LOG_WARN, "syncing the PodGroup failed", r->key, NULL, tfjob_error_message(err));
	json_decref(want);
	tfjob_free(want_text);
	tfjob_free(got);
	tfjob_error_free(err);
	return rc;
}

static void delete_pod_group(rctx *r)
{
	tfjob_controller *c = r->c;
	const tfjob_resource *res = &c->inf[INF_PODGROUPS].res;
	tfjob_error *err = NULL;
	int rc = tfjob_transport_delete(NULL, c->t, res, r->ns, r->name, NULL, &err);
	tfjob__count(c, TFJOB_API_DELETE, rc);
	if (rc == 0) {
		char msg[512];
		snprintf(msg, sizeof(msg), "Deleted PodGroup: %s", r->name);
		record_event(r, "Normal", "SuccessfulDeletePodGroup", msg);
	} else if (rc != TFJOB_ENOTFOUND) {
		char msg[512];
		snprintf(msg, sizeof(msg), "Error deleting: %s", tfjob_error_message(err));
		record_event(r, "Warning", "FailedDeletePodGroup", msg);
	}
	tfjob_error_free(err);
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
	if (rc) {
		tfjob__exp_observed(c->exp, r->key, sub, 1, 0); /* it will never be observed */
		if (rc == TFJOB_EEXISTS) {
			/* Created by an earlier incarnation; the watch will bring it in. */
			rc = 0;
			goto out;
		}
	}
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

/* The cached children as the planner's input (summarised once here, never parsed). */
static tfjob_objects *wrap_objects(json_t *arr, const char *what)
{
	tfjob_objects *o = NULL;
	if (tfjob__objects_wrap(&o, json_incref(arr), what, NULL))
		return NULL;
	return o;
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

/* Returns 0 done, 1 re-plan (status conflict), or a negative error. */
static int reconcile_once(rctx *r)
{
	tfjob_controller *c = r->c;
	json_t *job = r->job;
	if (meta_str(job, "deletionTimestamp"))
		return 0; /* being deleted: leave it alone */
	if (!tfjob__exp_satisfied(c->exp, r->key)) {
		tfjob__log(c, TFJOB_LOG_DEBUG, "expectations not satisfied yet", r->key, NULL, NULL);
		/* the watch brings the rest; expired expectations are looked at again by then */
		tfjob__queue_add_after(c->q, r->key, c->o.expectations_timeout_ms);
		return 0;
	}
	const char *uid = meta_str(job, "uid");
	char okey[512], orph[512];
	snprintf(okey, sizeof(okey), "uid:%s", uid ? uid : "");
	snprintf(orph, sizeof(orph), "orphan:%s/%s", r->ns, r->name);
	pthread_mutex_lock(&c->cache_mu);
	json_t *pods = tfjob__store_children(&c->stores[INF_PODS], okey);
	json_t *svcs = tfjob__store_children(&c->stores[INF_SERVICES], okey);
	json_t *opods = tfjob__store_children(&c->stores[INF_PODS], orph);
	json_t *osvcs = tfjob__store_children(&c->stores[INF_SERVICES], orph);
	pthread_mutex_unlock(&c->cache_mu);

	const char *managed_by = json_string_value(
		json_object_get(json_object_get(json_object_get(job, "spec"), "runPolicy"), "managedBy"));
	int ours = !managed_by || !strcmp(managed_by, MANAGED_BY_US);
	if (ours && uid) {
		json_t *p2 = claim(r, INF_PODS, pods, opods), *s2 = claim(r, INF_SERVICES, svcs, osvcs);
		json_decref(pods);
		json_decref(svcs);
		pods = p2;
		svcs = s2;
	}
	json_decref(opods);
	json_decref(osvcs);

	int rc = 0;
	tfjob_error *err = NULL;
	tfjob_job *tj = NULL;
	tfjob_plan *plan = NULL;
	char *status_text = NULL;
	json_t *new_status = NULL;
	tfjob_objects *po = wrap_objects(pods, "pods"), *so = wrap_objects(svcs, "services");
	if (!po || !so) {
		rc = TFJOB_ENOMEM;
		goto out;
	}
	rc = tfjob__job_wrap(&tj, json_incref(job), NULL, &err);
	if (rc)
		goto out;
	tfjob_plan_options popts = TFJOB_PLAN_OPTIONS_INIT;
	popts.compat = c->o.compat;
	popts.now = tfjob__now_s(c);
	popts.requeues = tfjob__queue_num_requeues(c->q, r->key);
	popts.render = &c->ropts;
	rc = tfjob_plan_new_with_objects(&plan, tj, po, so, &popts, &err);
	if (rc)
		goto out;
	json_t *old_status = json_object_get(job, "status");
	if (tfjob_plan_status_changed(plan)) {
		rc = tfjob_plan_status_json(&status_text, plan, 0, &err);
		if (rc)
			goto out;
		new_status = json_loads(status_text, 0, NULL);
		if (!new_status) {
			rc = tfjob__oom(&err);
			goto out;
		}
	} else { /* unchanged: no need to print and parse it */
		new_status = old_status ? json_incref(old_status) : json_object();
	}
	int finished_now = cond_true(new_status, "Succeeded") == 1 || cond_true(new_status, "Failed") == 1;
	int finished_before = cond_true(old_status, "Succeeded") == 1 || cond_true(old_status, "Failed") == 1;

	int delay_pods = 0;
	if (ours && c->o.gang_scheduler != TFJOB_GANG_NONE && !finished_now && !tfjob_job_suspend(tj)) {
		rc = sync_pod_group(r, tj, &delay_pods);
		if (rc)
			goto out;
	}

	size_t n = tfjob_plan_action_count(plan);
	int deleted_job = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		tfjob_action_type at = tfjob_plan_action_type(plan, i);
		tfjob_object_kind kind = tfjob_plan_action_kind(plan, i);
		if (at == TFJOB_ACTION_EVENT) {
			record_event(r, tfjob_event_type_name(tfjob_plan_action_event_type(plan, i)),
			             tfjob_plan_action_reason(plan, i), tfjob_plan_action_message(plan, i));
		} else if (at == TFJOB_ACTION_CREATE) {
			if (kind == TFJOB_OBJECT_POD && delay_pods)
				continue;
			rc = do_create(r, plan, i, kind == TFJOB_OBJECT_POD);
		} else if (kind == TFJOB_OBJECT_TFJOB) {
			tfjob_delete_options dopts = TFJOB_DELETE_OPTIONS_INIT;
			dopts.propagation = TFJOB_PROPAGATION_BACKGROUND;
			dopts.precondition_uid = uid;
			int drc = tfjob_transport_delete(NULL, c->t, &RES_TFJOBS, r->ns, r->name, &dopts, &err);
			tfjob__count(c, TFJOB_API_DELETE, drc);
			if (drc == 0) {
				atomic_fetch_add(&c->m.jobs_deleted, 1);
				tfjob__log(c, TFJOB_LOG_INFO, "deleted the job (ttlSecondsAfterFinished)", r->key, NULL, NULL);
			} else if (drc != TFJOB_ENOTFOUND && drc != TFJOB_ECONFLICT) {
				rc = drc;
			}
			tfjob_error_free(err);
			err = NULL;
			deleted_job = 1;
		} else {
			rc = do_delete(r, plan, i, kind == TFJOB_OBJECT_POD, kind == TFJOB_OBJECT_POD ? pods : svcs);
		}
	}
	if (rc || deleted_job)
		goto out;

	if (tfjob_plan_status_changed(plan)) {
		json_t *obj = json_copy(job);
		json_object_set(obj, "status", new_status);
		char *text = json_dumps(obj, JSON_COMPACT);
		json_decref(obj);
		char *stored = NULL;
		rc = text ? tfjob_transport_update_status(&stored, c->t, &RES_TFJOBS, r->ns, text, &err) : TFJOB_ENOMEM;
		free(text);
		tfjob__count(c, TFJOB_API_UPDATE_STATUS, rc);
		if (rc == TFJOB_ECONFLICT) {
			atomic_fetch_add(&c->m.status_conflicts, 1);
			tfjob_error_free(err);
			err = NULL;
			char *fresh = NULL;
			int grc = tfjob_transport_get(&fresh, c->t, &RES_TFJOBS, r->ns, r->name, &err);
			tfjob__count(c, TFJOB_API_GET, grc);
			if (grc == 0) {
				json_t *f = json_loads(fresh, 0, NULL);
				if (f) {
					pthread_mutex_lock(&c->cache_mu);
					tfjob__store_put(&c->stores[INF_JOBS], f);
					pthread_mutex_unlock(&c->cache_mu);
				}
				rc = 1;
			} else if (grc == TFJOB_ENOTFOUND) {
				rc = 0;
			} else {
				rc = grc;
			}
			tfjob_free(fresh);
			goto out;
		}
		if (rc == TFJOB_ENOTFOUND) {
			rc = 0;
			goto out;
		}
		if (rc)
			goto out;
		/* Counted as soon as the write has succeeded, before the checks of what was stored. */
		if (cond_true(old_status, "Created") < 0 && cond_true(new_status, "Created") >= 0)
			atomic_fetch_add(&c->m.jobs_created, 1);
		if (cond_true(old_status, "Succeeded") != 1 && cond_true(new_status, "Succeeded") == 1)
			atomic_fetch_add(&c->m.jobs_succeeded, 1);
		if (cond_true(old_status, "Failed") != 1 && cond_true(new_status, "Failed") == 1)
			atomic_fetch_add(&c->m.jobs_failed, 1);
		if (cond_true(old_status, "Restarting") != 1 && cond_true(new_status, "Restarting") == 1)
			atomic_fetch_add(&c->m.jobs_restarted, 1);
		json_t *s = stored ? json_loads(stored, 0, NULL) : NULL;
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
	}
	if (ours && c->o.gang_scheduler != TFJOB_GANG_NONE && finished_now && !finished_before)
		delete_pod_group(r);

	int64_t after;
	if (tfjob_plan_requeue_after(&after, plan) == 0)
		tfjob__queue_add_after(c->q, r->key, after > 0 ? after * 1000 : 0);
out:
	if (rc < 0)
		tfjob__log(c, TFJOB_LOG_ERROR, "reconcile failed", r->key, NULL,
		           err ? tfjob_error_message(err) : tfjob_strerror(rc));
	tfjob_error_free(err);
	free(status_text);
	json_decref(new_status);
	tfjob_plan_free(plan);
	tfjob_job_free(tj);
	tfjob_objects_free(po);
	tfjob_objects_free(so);
	json_decref(pods);
	json_decref(svcs);
	return rc;
}

int tfjob__reconcile(tfjob_controller *c, const char *key)
{
	const char *slash = strchr(key, '/');
	if (!slash)
		return 0;
	rctx r = { c, key, strndup(key, (size_t)(slash - key)), strdup(slash + 1), NULL, NULL, { NULL, NULL } };
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
	tfjob__recorder_post(c->events, &r.events);
	free(r.ns);
	free(r.name);
	return rc;
}
