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

#include "controller/handle.h"
#include "core/job.h"
#include "core/objects.h"
#include "plan/planner.h"


static const tfjob_resource RES_TFJOBS = TFJOB_RESOURCE_TFJOBS_INIT;
static const tfjob_resource RES_PODS = TFJOB_RESOURCE_PODS_INIT;
static const tfjob_resource RES_SERVICES = TFJOB_RESOURCE_SERVICES_INIT;

/* The cached children of one kind a reconcile plans with (each referenced). */
typedef struct kid_list {
	tfjob__child **items;
	size_t n;
} kid_list;

typedef struct rctx {
	tfjob_controller *c;
	const char *key;
	char *ns, *name;
	json_t *job;      /* snapshot (reference) */
	char *job_text;   /* for the pod mutation hook, lazily */
	tfjob__event_batch events; /* recorded, posted when the reconcile has done its writes */
	/* one attempt (reconcile_once) */
	const char *uid;
	int ours;                  /* spec.runPolicy.managedBy is unset or ours */
	kid_list pods, svcs;
	tfjob_job *tj;
	tfjob_plan *plan;
	json_t *old_status;        /* borrowed from job */
	json_t *new_status;        /* reference */
	int finished_now, finished_before;
	tfjob_error *err;
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

/* "worker/pods": the expectations' key of a replica type's children. */
static void sub_key(char *buf, size_t size, const char *rtype, int is_pod)
{
	snprintf(buf, size, "%s/%s", rtype ? rtype : "", is_pod ? "pods" : "services");
}

/* ---- adoption and release (ClaimPods / ClaimServices) ---- */

static json_t *owner_ref(json_t *job)
{
	return json_pack("{s:s,s:s,s:s,s:s,s:b,s:b}", "apiVersion", "kubeflow.org/v1", "kind", "TFJob", "name",
	                 meta_str(job, "name"), "uid", meta_str(job, "uid") ? meta_str(job, "uid") : "",
	                 "controller", 1, "blockOwnerDeletion", 1);
}

/* PATCH a child's ownerReferences (with its uid as precondition); the stored child, or NULL. */
static tfjob__child *patch_refs(rctx *r, const tfjob_resource *res, const tfjob__child *ch, json_t *refs)
{
	json_t *patch = json_pack("{s:{s:O,s:s}}", "metadata", "ownerReferences", refs, "uid", ch->uid ? ch->uid : "");
	char *text = patch ? json_dumps(patch, JSON_COMPACT) : NULL;
	json_decref(patch);
	char *out = NULL;
	tfjob_error *err = NULL;
	int rc = text ? tfjob_transport_patch(&out, r->c->t, res, r->ns, ch->sum.name, NULL, text, &err) : TFJOB_ENOMEM;
	tfjob__count(r->c, TFJOB_API_PATCH, rc);
	free(text);
	tfjob__child *stored = NULL;
	json_t *obj = rc == 0 && out ? json_loads(out, 0, NULL) : NULL;
	if (rc)
		tfjob__log(r->c, TFJOB_LOG_WARN, "adopting or releasing a child failed", r->key, ch->sum.name,
		           tfjob_error_message(err));
	else if (obj)
		tfjob__child_new(&stored, obj);
	json_decref(obj);
	tfjob_free(out);
	tfjob_error_free(err);
	return stored;
}

/* A child's owner references (a new array; empty when it has none). */
static json_t *refs_of(const tfjob__child *ch)
{
	json_t *refs = ch->owner_refs ? json_loads(ch->owner_refs, 0, NULL) : NULL;
	if (!json_is_array(refs)) {
		json_decref(refs);
		refs = json_array();
	}
	return refs;
}

/* Put a child the server answered with into the cache (newer than, or the same as, the cached). */
static void cache_child(rctx *r, int kind, tfjob__child *ch)
{
	pthread_mutex_lock(&r->c->cache_mu);
	tfjob__child_store_put(&r->c->kids[kind], tfjob__child_ref(ch));
	pthread_mutex_unlock(&r->c->cache_mu);
}

/* Release: drop our controller reference from a child whose labels no longer match. */
static void release(rctx *r, int kind, const tfjob__child *ch)
{
	json_t *all = refs_of(ch), *keep = json_array(), *ref;
	size_t k;
	json_array_foreach(all, k, ref) {
		const char *uid = json_string_value(json_object_get(ref, "uid"));
		if (!uid || !r->uid || strcmp(uid, r->uid))
			json_array_append(keep, ref);
	}
	tfjob__child *p = patch_refs(r, kind == INF_PODS ? &RES_PODS : &RES_SERVICES, ch, keep);
	json_decref(all);
	json_decref(keep);
	if (p)
		cache_child(r, kind, p);
	tfjob__child_unref(p);
}

/* Adopt an orphan made by this operator: add our controller reference. The adopted child, or NULL. */
static tfjob__child *adopt(rctx *r, int kind, const tfjob__child *ch)
{
	if (!ch->operator_name || strcmp(ch->operator_name, TFJOB_OPERATOR_NAME) || ch->sum.deleting)
		return NULL;
	json_t *refs = refs_of(ch);
	json_array_append_new(refs, owner_ref(r->job));
	tfjob__child *p = patch_refs(r, kind == INF_PODS ? &RES_PODS : &RES_SERVICES, ch, refs);
	json_decref(refs);
	if (p) {
		cache_child(r, kind, p);
		tfjob__log(r->c, TFJOB_LOG_INFO, "adopted a child", r->key, ch->sum.name, NULL);
	}
	return p;
}

/* Children owned by uid whose labels no longer match are released; orphans that match are adopted.
   Replaces *owned with the children to plan with. */
static int claim(rctx *r, int kind, kid_list *owned, const kid_list *orphans)
{
	kid_list out = { malloc((owned->n + orphans->n + 1) * sizeof(tfjob__child *)), 0 };
	if (!out.items)
		return TFJOB_ENOMEM;
	for (size_t i = 0; i < owned->n; i++) {
		tfjob__child *ch = owned->items[i];
		if (ch->sum.job_name && !strcmp(ch->sum.job_name, r->name))
			out.items[out.n++] = tfjob__child_ref(ch);
		else
			release(r, kind, ch);
	}
	for (size_t i = 0; i < orphans->n; i++) {
		tfjob__child *p = adopt(r, kind, orphans->items[i]);
		if (p)
			out.items[out.n++] = p;
	}
	tfjob__children_free(owned->items, owned->n);
	*owned = out;
	return 0;
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

/* As v1.9: JobTerminated, then SuccessfulDeletePodGroup also when the PodGroup was gone already. */
static void delete_pod_group(rctx *r)
{
	tfjob_controller *c = r->c;
	const tfjob_resource *res = &c->inf[INF_PODGROUPS].res;
	tfjob_error *err = NULL;
	record_event(r, "Normal", "JobTerminated", "Job has been terminated. Deleting PodGroup");
	int rc = tfjob_transport_delete(NULL, c->t, res, r->ns, r->name, NULL, &err);
	tfjob__count(c, TFJOB_API_DELETE, rc);
	if (rc == 0 || rc == TFJOB_ENOTFOUND) {
		char msg[512];
		snprintf(msg, sizeof(msg), "Deleted PodGroup: %s", r->name);
		record_event(r, "Normal", "SuccessfulDeletePodGroup", msg);
	} else {
		char msg[512];
		snprintf(msg, sizeof(msg), "Error deleting: %s", tfjob_error_message(err));
		record_event(r, "Warning", "FailedDeletePodGroup", msg);
	}
	tfjob_error_free(err);
}

/* ---- actions ---- */

static const tfjob__child *find_by_name(const kid_list *kids, const char *name)
{
	for (size_t i = 0; name && i < kids->n; i++)
		if (kids->items[i]->sum.name && !strcmp(kids->items[i]->sum.name, name))
			return kids->items[i];
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
	json_t *obj = tfjob__child_loads(text); /* for its labels: the spec is not built */
	char sub[128];
	sub_key(sub, sizeof(sub), label_of(obj, TFJOB_LABEL_REPLICA_TYPE), is_pod);
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

static int do_delete(rctx *r, const tfjob_plan *plan, size_t i, int is_pod)
{
	tfjob_controller *c = r->c;
	const tfjob_resource *res = is_pod ? &RES_PODS : &RES_SERVICES;
	const char *name = tfjob_plan_action_name(plan, i);
	const tfjob__child *ch = find_by_name(is_pod ? &r->pods : &r->svcs, name);
	char sub[128];
	sub_key(sub, sizeof(sub), ch ? ch->sum.rtype : NULL, is_pod);
	tfjob__exp_expect(c->exp, r->key, sub, 0, 1);
	tfjob_error *err = NULL;
	tfjob_delete_options dopts = TFJOB_DELETE_OPTIONS_INIT;
	dopts.precondition_uid = ch ? ch->uid : NULL;
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

/* The cached children as the planner's input: their summaries, never the objects. */
static tfjob_objects *summaries_of(const kid_list *kids)
{
	const tfjob__summary **sums = malloc((kids->n ? kids->n : 1) * sizeof(*sums));
	tfjob_objects *o = NULL;
	for (size_t i = 0; sums && i < kids->n; i++)
		sums[i] = &kids->items[i]->sum;
	if (sums && tfjob__objects_from_summaries(&o, sums, kids->n, NULL))
		o = NULL;
	free(sums);
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

/* ---- one reconcile, step by step ---- */

/* A job being deleted, or whose children are not all observed yet, is left alone for now: 1. */
static int wait_for_now(rctx *r)
{
	tfjob_controller *c = r->c;
	if (meta_str(r->job, "deletionTimestamp"))
		return 1;
	if (!tfjob__exp_satisfied(c->exp, r->key)) {
		tfjob__log(c, TFJOB_LOG_DEBUG, "expectations not satisfied yet", r->key, NULL, NULL);
		/* the watch brings the rest; expired expectations are looked at again by then */
		tfjob__queue_add_after(c->q, r->key, c->o.expectations_timeout_ms);
		return 1;
	}
	return 0;
}

/* The job's children from the caches, adopted and released as ClaimPods/ClaimServices do. */
static int take_children(rctx *r)
{
	tfjob_controller *c = r->c;
	char okey[512], orph[512];
	snprintf(okey, sizeof(okey), "uid:%s", r->uid ? r->uid : "");
	snprintf(orph, sizeof(orph), "orphan:%s/%s", r->ns, r->name);
	kid_list opods = { NULL, 0 }, osvcs = { NULL, 0 };
	pthread_mutex_lock(&c->cache_mu);
	r->pods.n = tfjob__child_store_children(&c->kids[INF_PODS], okey, &r->pods.items);
	r->svcs.n = tfjob__child_store_children(&c->kids[INF_SERVICES], okey, &r->svcs.items);
	opods.n = tfjob__child_store_children(&c->kids[INF_PODS], orph, &opods.items);
	osvcs.n = tfjob__child_store_children(&c->kids[INF_SERVICES], orph, &osvcs.items);
	pthread_mutex_unlock(&c->cache_mu);
	int rc = !r->pods.items || !r->svcs.items || !opods.items || !osvcs.items ? TFJOB_ENOMEM : 0;
	if (!rc && r->ours && r->uid)
		rc = claim(r, INF_PODS, &r->pods, &opods) || claim(r, INF_SERVICES, &r->svcs, &osvcs) ? TFJOB_ENOMEM : 0;
	tfjob__children_free(opods.items, opods.n);
	tfjob__children_free(osvcs.items, osvcs.n);
	return rc;
}

/* Run the planner on the job and its children; the status it wants in r->new_status. */
static int plan_job(rctx *r)
{
	tfjob_controller *c = r->c;
	tfjob_objects *po = summaries_of(&r->pods), *so = summaries_of(&r->svcs);
	int rc = po && so ? tfjob__job_wrap(&r->tj, json_incref(r->job), NULL, &r->err) : TFJOB_ENOMEM;
	if (!rc) {
		tfjob_plan_options popts = TFJOB_PLAN_OPTIONS_INIT;
		popts.compat = c->o.compat;
		popts.now = tfjob__now_s(c);
		popts.requeues = tfjob__queue_num_requeues(c->q, r->key);
		popts.render = &c->ropts;
		rc = tfjob_plan_new_with_objects(&r->plan, r->tj, po, so, &popts, &r->err);
	}
	tfjob_objects_free(po);
	tfjob_objects_free(so);
	if (rc)
		return rc;
	r->old_status = json_object_get(r->job, "status");
	json_t *wanted = tfjob_plan_status_changed(r->plan) ? tfjob__plan_status(r->plan) : r->old_status;
	r->new_status = wanted ? json_incref(wanted) : json_object(); /* shared, never printed and parsed */
	if (!r->new_status)
		return tfjob__oom(&r->err);
	r->finished_now = cond_true(r->new_status, "Succeeded") == 1 || cond_true(r->new_status, "Failed") == 1;
	r->finished_before = cond_true(r->old_status, "Succeeded") == 1 || cond_true(r->old_status, "Failed") == 1;
	return 0;
}

/* TTL: delete the finished job (its children go with it, in the background). */
static int delete_job(rctx *r)
{
	tfjob_controller *c = r->c;
	tfjob_delete_options dopts = TFJOB_DELETE_OPTIONS_INIT;
	dopts.propagation = TFJOB_PROPAGATION_BACKGROUND;
	dopts.precondition_uid = r->uid;
	tfjob_error *err = NULL;
	int rc = tfjob_transport_delete(NULL, c->t, &RES_TFJOBS, r->ns, r->name, &dopts, &err);
	tfjob__count(c, TFJOB_API_DELETE, rc);
	tfjob_error_free(err);
	if (rc == 0) {
		atomic_fetch_add(&c->m.jobs_deleted, 1);
		tfjob__log(c, TFJOB_LOG_INFO, "deleted the job (ttlSecondsAfterFinished)", r->key, NULL, NULL);
	}
	return rc == TFJOB_ENOTFOUND || rc == TFJOB_ECONFLICT ? 0 : rc;
}

/* The plan's actions in order; *deleted_job = 1 when the job itself was deleted. */
static int carry_out_actions(rctx *r, int delay_pods, int *deleted_job)
{
	const tfjob_plan *plan = r->plan;
	size_t n = tfjob_plan_action_count(plan);
	int rc = 0;
	*deleted_job = 0;
	for (size_t i = 0; i < n && rc == 0; i++) {
		tfjob_action_type at = tfjob_plan_action_type(plan, i);
		tfjob_object_kind kind = tfjob_plan_action_kind(plan, i);
		if (at == TFJOB_ACTION_EVENT) {
			record_event(r, tfjob_event_type_name(tfjob_plan_action_event_type(plan, i)),
			             tfjob_plan_action_reason(plan, i), tfjob_plan_action_message(plan, i));
		} else if (at == TFJOB_ACTION_CREATE) {
			if (!(kind == TFJOB_OBJECT_POD && delay_pods))
				rc = do_create(r, plan, i, kind == TFJOB_OBJECT_POD);
		} else if (kind == TFJOB_OBJECT_TFJOB) {
			rc = delete_job(r);
			*deleted_job = 1;
		} else {
			rc = do_delete(r, plan, i, kind == TFJOB_OBJECT_POD);
		}
	}
	return rc;
}

/* Cache a job the server answered with (newer than, or the same as, the cached one). */
static void cache_job(tfjob_controller *c, json_t *job)
{
	pthread_mutex_lock(&c->cache_mu);
	tfjob__store_put(&c->stores[INF_JOBS], job);
	pthread_mutex_unlock(&c->cache_mu);
}

/* After a status conflict: the job as stored now into the cache; 1 (plan again), 0 (gone) or an error. */
static int reread_job(rctx *r)
{
	tfjob_controller *c = r->c;
	char *fresh = NULL;
	int rc = tfjob_transport_get(&fresh, c->t, &RES_TFJOBS, r->ns, r->name, &r->err);
	tfjob__count(c, TFJOB_API_GET, rc);
	json_t *f = rc == 0 ? json_loads(fresh, 0, NULL) : NULL;
	tfjob_free(fresh);
	if (f)
		cache_job(c, f);
	return rc == 0 ? 1 : rc == TFJOB_ENOTFOUND ? 0 : rc;
}

/* The job metrics a successful status write moves. */
static void count_transitions(rctx *r)
{
	tfjob__metrics *m = &r->c->m;
	json_t *o = r->old_status, *n = r->new_status;
	if (cond_true(o, "Created") < 0 && cond_true(n, "Created") >= 0)
		atomic_fetch_add(&m->jobs_created, 1);
	if (cond_true(o, "Succeeded") != 1 && cond_true(n, "Succeeded") == 1)
		atomic_fetch_add(&m->jobs_succeeded, 1);
	if (cond_true(o, "Failed") != 1 && cond_true(n, "Failed") == 1)
		atomic_fetch_add(&m->jobs_failed, 1);
	if (cond_true(o, "Restarting") != 1 && cond_true(n, "Restarting") == 1)
		atomic_fetch_add(&m->jobs_restarted, 1);
}

/* PUT the new status; returns 0 done, 1 re-plan (conflict), or a negative error. */
static int write_status(rctx *r)
{
	tfjob_controller *c = r->c;
	json_t *obj = json_copy(r->job);
	char *text = obj && !json_object_set(obj, "status", r->new_status) ? json_dumps(obj, JSON_COMPACT) : NULL;
	json_decref(obj);
	char *stored = NULL;
	int rc = text ? tfjob_transport_update_status(&stored, c->t, &RES_TFJOBS, r->ns, text, &r->err) : TFJOB_ENOMEM;
	free(text);
	tfjob__count(c, TFJOB_API_UPDATE_STATUS, rc);
	if (rc == TFJOB_ECONFLICT) {
		atomic_fetch_add(&c->m.status_conflicts, 1);
		tfjob_error_free(r->err);
		r->err = NULL;
		return reread_job(r);
	}
	if (rc) {
		tfjob_free(stored);
		return rc == TFJOB_ENOTFOUND ? 0 : rc;
	}
	/* Counted as soon as the write has succeeded, before the checks of what was stored. */
	count_transitions(r);
	json_t *s = stored ? json_loads(stored, 0, NULL) : NULL;
	tfjob_free(stored);
	char where[256] = "";
	if (s && status_lost(r->new_status, json_object_get(s, "status"), where, sizeof(where))) {
		/* The CRD's schema pruned or changed part of what we wrote: the next plan would
		   write it again at every event. Say so (a CRD without those status fields). */
		tfjob__log(c, TFJOB_LOG_WARN, "the stored status differs from the one written (pruned by the CRD's schema?)",
		           r->key, where, NULL);
	}
	if (s)
		cache_job(c, s);
	return 0;
}

/* Free what one attempt built. */
static void attempt_clear(rctx *r)
{
	tfjob_error_free(r->err);
	json_decref(r->new_status);
	tfjob_plan_free(r->plan);
	tfjob_job_free(r->tj);
	tfjob__children_free(r->pods.items, r->pods.n);
	tfjob__children_free(r->svcs.items, r->svcs.n);
	r->err = NULL;
	r->new_status = NULL;
	r->old_status = NULL;
	r->plan = NULL;
	r->tj = NULL;
	r->pods = (kid_list){ NULL, 0 };
	r->svcs = (kid_list){ NULL, 0 };
}

/* Returns 0 done, 1 re-plan (status conflict), or a negative error. */
static int reconcile_once(rctx *r)
{
	tfjob_controller *c = r->c;
	if (wait_for_now(r))
		return 0;
	r->uid = meta_str(r->job, "uid");
	const char *managed_by = json_string_value(
		json_object_get(json_object_get(json_object_get(r->job, "spec"), "runPolicy"), "managedBy"));
	r->ours = !managed_by || !strcmp(managed_by, TFJOB_MANAGED_BY_TRAINING_OPERATOR);
	int gang = r->ours && c->o.gang_scheduler != TFJOB_GANG_NONE;
	int rc = take_children(r);
	if (!rc)
		rc = plan_job(r);
	int delay_pods = 0, deleted_job = 0;
	if (!rc && gang && !r->finished_now && !tfjob_job_suspend(r->tj))
		rc = sync_pod_group(r, r->tj, &delay_pods);
	if (!rc)
		rc = carry_out_actions(r, delay_pods, &deleted_job);
	if (!rc && !deleted_job && tfjob_plan_status_changed(r->plan))
		rc = write_status(r);
	if (!rc && !deleted_job) {
		if (gang && r->finished_now && !r->finished_before)
			delete_pod_group(r);
		int64_t after;
		if (tfjob_plan_requeue_after(&after, r->plan) == 0)
			tfjob__queue_add_after(c->q, r->key, after > 0 ? after * 1000 : 0);
	}
	if (rc < 0)
		tfjob__log(c, TFJOB_LOG_ERROR, "reconcile failed", r->key, NULL,
		           r->err ? tfjob_error_message(r->err) : tfjob_strerror(rc));
	attempt_clear(r);
	return rc;
}

int tfjob__reconcile(tfjob_controller *c, const char *key)
{
	const char *slash = strchr(key, '/');
	if (!slash)
		return 0;
	rctx r = { .c = c, .key = key, .ns = strndup(key, (size_t)(slash - key)), .name = strdup(slash + 1) };
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
