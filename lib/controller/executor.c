/*
 * One reconcile of a job key: snapshot from the caches, expectations, the planner (which decides
 * everything: children, their controller references, gang scheduling's PodGroup), then the
 * plan's actions carried out in order (children created and deleted with expectations raised
 * first, adoptions after re-reading the job, the outcome of every API call recorded as an Event
 * named as training-operator names it, posted when the reconcile has done its writes), the
 * status through /status with conflict retry (re-read, re-plan) and the planner's requeue. The
 * status write may go to the status writer (writer.c), which then ends the reconcile.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/internal.h"
#include "core/job.h"
#include "core/objects.h"
#include "parse/jscan.h"
#include "plan/execute.h"
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
	char *stored_text; /* the same job as the cache holds it (JSON text) */
	char *job_text;   /* for the pod mutation hook, lazily */
	tfjob__event_batch events; /* recorded, posted when the reconcile has done its writes */
	/* one attempt (reconcile_once) */
	const char *uid;
	kid_list pods, svcs;
	tfjob_job *tj;
	tfjob_plan *plan;
	json_t *old_status;        /* borrowed from job */
	json_t *new_status;        /* reference */
	tfjob_error *err;
	int may_adopt;             /* -1: not checked yet; 0/1: the job re-read from the server is this one, not being deleted */
	size_t actions_left;       /* actions not carried out because the controller is stopping */
	int64_t started_ns;        /* when the reconcile began */
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
	tfjob__involved ref = { kind ? kind : "TFJob", api_version ? api_version : "kubeflow.org/v1",
		                     r->name, r->ns, meta_str(r->job, "uid"), meta_str(r->job, "resourceVersion") };
	if (tfjob__event_batch_add(&r->events, &ref, type, reason, message))
		atomic_fetch_add(&r->c->m.events_dropped, 1);
}

/* "worker/pods": the expectations' key of a replica type's children. */
static void sub_key(char *buf, size_t size, const char *rtype, int is_pod)
{
	snprintf(buf, size, "%s/%s", rtype ? rtype : "", is_pod ? "pods" : "services");
}

/* ---- actions ---- */

/* Add references to `more`'s children to `kids`. */
static int kid_list_append(kid_list *kids, const kid_list *more)
{
	tfjob__child **items = realloc(kids->items, (kids->n + more->n + 1) * sizeof(*items));
	if (!items)
		return TFJOB_ENOMEM;
	kids->items = items;
	for (size_t i = 0; i < more->n; i++)
		items[kids->n++] = tfjob__child_ref(more->items[i]);
	return 0;
}

static const tfjob__child *find_by_name(const kid_list *kids, const char *name)
{
	for (size_t i = 0; name && i < kids->n; i++)
		if (kids->items[i]->sum.name && !strcmp(kids->items[i]->sum.name, name))
			return kids->items[i];
	return NULL;
}

/* Create a Pod or Service; the executor reports the outcome as an Event. */
static int do_create(void *ctx, const tfjob_plan *plan, size_t i, tfjob_error **errp)
{
	rctx *r = ctx;
	tfjob_controller *c = r->c;
	int is_pod = tfjob_plan_action_kind(plan, i) == TFJOB_OBJECT_POD;
	const tfjob_resource *res = is_pod ? &RES_PODS : &RES_SERVICES;
	const char *name = tfjob_plan_action_name(plan, i);
	char *text = NULL;
	tfjob_error *err = NULL;
	/* The planner's object itself (shared: only read), printed once for the request; its labels
	   are read from it, not parsed back from the text. */
	json_t *obj = NULL;
	int rc = tfjob__plan_action_object(&obj, plan, i, &err);
	if (!rc && !(text = tfjob__dump(obj, 0)))
		rc = tfjob__oom(&err);
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
		if (mutated) { /* the hook may have changed the labels too: read them from its text */
			tfjob_free(text);
			text = mutated;
			json_decref(obj);
			obj = tfjob__child_loads(text); /* the spec is not built */
		}
	}
	char sub[128];
	sub_key(sub, sizeof(sub), label_of(obj, TFJOB_LABEL_REPLICA_TYPE), is_pod);
	/* Raise the expectation before the call: the watch may see the object before we return. */
	tfjob__exp_expect(c->exp, r->key, sub, 1, 0);
	rc = tfjob_transport_create(NULL, c->t, res, r->ns, text, &err);
	tfjob__count(c, TFJOB_API_CREATE, rc);
	if (rc)
		tfjob__exp_observed(c->exp, r->key, sub, 1, 0); /* it will never be observed */
out:
	if (rc)
		tfjob__log(c, TFJOB_LOG_ERROR, is_pod ? "creating a pod failed" : "creating a service failed", r->key, name,
		           err ? tfjob_error_message(err) : tfjob_strerror(rc));
	json_decref(obj);
	tfjob_free(text);
	*errp = err;
	return rc;
}

/* Delete a Pod or Service; the executor reports the outcome as an Event. */
static int do_delete(void *ctx, const tfjob_plan *plan, size_t i, tfjob_error **errp)
{
	rctx *r = ctx;
	tfjob_controller *c = r->c;
	int is_pod = tfjob_plan_action_kind(plan, i) == TFJOB_OBJECT_POD;
	const tfjob_resource *res = is_pod ? &RES_PODS : &RES_SERVICES;
	const char *name = tfjob_plan_action_name(plan, i);
	const tfjob__child *ch = find_by_name(is_pod ? &r->pods : &r->svcs, name);
	/* Not in the cache: gone already (v1.9 reads it first and finds nothing), or made by someone
	   else and not seen yet (its ADDED event queues the job). No request, no Event. */
	if (!ch)
		return TFJOB__EXEC_SKIPPED;
	char sub[128];
	sub_key(sub, sizeof(sub), ch->sum.rtype, is_pod);
	tfjob__exp_expect(c->exp, r->key, sub, 0, 1);
	tfjob_error *err = NULL;
	tfjob_delete_options dopts = TFJOB_DELETE_OPTIONS_INIT;
	dopts.precondition_uid = ch->uid;
	int rc = tfjob_transport_delete(NULL, c->t, res, r->ns, name, &dopts, &err);
	tfjob__count(c, TFJOB_API_DELETE, rc);
	if (rc) /* failed, gone already or replaced: no DELETED event of ours will come */
		tfjob__exp_observed(c->exp, r->key, sub, 0, 1);
	*errp = err;
	return rc;
}

/* ---- controller references and the PodGroup ---- */

/* Put a child the server answered a write with into the cache (newer than, or the same as, the cached). */
static void cache_child(rctx *r, int kind, const char *text)
{
	json_t *obj = text ? tfjob__child_loads(text) : NULL;
	tfjob__child *ch = NULL;
	if (obj && tfjob__child_new(&ch, obj) == 0 && ch) {
		pthread_mutex_lock(&r->c->cache_mu);
		tfjob__child_store_put(&r->c->kids[kind], tfjob__child_ref(ch));
		pthread_mutex_unlock(&r->c->cache_mu);
	}
	tfjob__child_unref(ch);
	json_decref(obj);
}

/* Keep an object the server answered a write with (newer than the cache, or the same) in a store. */
static void store_answer(rctx *r, int kind, const char *text)
{
	json_t *obj = text ? tfjob__object_loads(text) : NULL;
	if (obj)
		tfjob__cache_put(r->c, kind, obj);
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
static int do_claim(void *ctx, const tfjob_plan *plan, size_t i, tfjob_error **errp)
{
	rctx *r = ctx;
	tfjob_controller *c = r->c;
	int is_pod = tfjob_plan_action_kind(plan, i) == TFJOB_OBJECT_POD;
	(void)errp; /* logged here: a claim that failed is retried, with no Event */
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
		cache_child(r, is_pod ? INF_PODS : INF_SERVICES, out);
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
static int do_write_pod_group(void *ctx, const tfjob_plan *plan, size_t i, tfjob_error **errp)
{
	rctx *r = ctx;
	tfjob_controller *c = r->c;
	(void)errp; /* logged here, with no Event */
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

/* Take the job's PodGroup `name` out of the cache (a new reference, or NULL when not cached). */
static json_t *take_pod_group(rctx *r, const char *name)
{
	json_t *id = json_pack("{s:{s:s,s:s}}", "metadata", "namespace", r->ns, "name", name);
	pthread_mutex_lock(&r->c->cache_mu);
	json_t *pg = NULL;
	if (id)
		tfjob__store_del(&r->c->stores[INF_PODGROUPS], id, &pg);
	pthread_mutex_unlock(&r->c->cache_mu);
	json_decref(id);
	return pg;
}

/* A DELETE's answer when it is the object that finalizers keep (new reference), else NULL. */
static json_t *still_there(const char *answer)
{
	json_t *obj = answer ? tfjob__object_loads(answer) : NULL;
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	if (obj && !(kind && !strcmp(kind, "Status")) && meta_str(obj, "deletionTimestamp"))
		return obj;
	json_decref(obj);
	return NULL;
}

/*
 * Delete the PodGroup; gone already counts as deleted (v1.9 says so either way). Compat mode plans
 * the delete at every reconcile of a finished job, as v1.9 does; v1.9 reads the PodGroup first
 * and deletes only one that exists, and so does this, from the cache (a PodGroup the cache has not
 * seen yet queues the job when its ADDED event comes). The PodGroup leaves the cache before the
 * call, so that its DELETED event, which changes nothing the planner reads, queues no reconcile
 * (informer.c); one that finalizers keep is cached as the server answered (its DELETED event
 * then brings the job back), one that a failed call left is put back.
 */
static int do_delete_pod_group(void *ctx, const tfjob_plan *plan, size_t i, tfjob_error **errp)
{
	rctx *r = ctx;
	tfjob_controller *c = r->c;
	const char *name = tfjob_plan_action_name(plan, i);
	tfjob_error *err = NULL;
	char *answer = NULL;
	int rc = 0;
	json_t *held = take_pod_group(r, name);
	if (held) {
		rc = tfjob_transport_delete(&answer, c->t, &c->inf[INF_PODGROUPS].res, r->ns, name, NULL, &err);
		tfjob__count(c, TFJOB_API_DELETE, rc);
		json_t *kept = rc == 0 ? still_there(answer) : NULL;
		if (kept)
			tfjob__cache_put(r->c, INF_PODGROUPS, kept);
		else if (rc && rc != TFJOB_ENOTFOUND)
			tfjob__cache_put(r->c, INF_PODGROUPS, json_incref(held));
		json_decref(held);
	}
	tfjob_free(answer);
	*errp = err;
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

/* The cached children the job controls and the orphans with its job-name label (the planner
   decides which are the job's, adopts and releases). */
static int take_children(rctx *r)
{
	tfjob_controller *c = r->c;
	char okey[TFJOB__KEY_MAX], orph[TFJOB__KEY_MAX];
	if (!tfjob__fits(snprintf(okey, sizeof(okey), "uid:%s", r->uid ? r->uid : ""), sizeof(okey)) ||
	    !tfjob__fits(snprintf(orph, sizeof(orph), "orphan:%s/%s", r->ns, r->name), sizeof(orph)))
		return TFJOB_EINVAL; /* a name beyond Kubernetes' limits: no child can be looked up */
	kid_list opods = { NULL, 0 }, osvcs = { NULL, 0 };
	pthread_mutex_lock(&c->cache_mu);
	r->pods.n = tfjob__child_store_children(&c->kids[INF_PODS], okey, &r->pods.items);
	r->svcs.n = tfjob__child_store_children(&c->kids[INF_SERVICES], okey, &r->svcs.items);
	opods.n = tfjob__child_store_children(&c->kids[INF_PODS], orph, &opods.items);
	osvcs.n = tfjob__child_store_children(&c->kids[INF_SERVICES], orph, &osvcs.items);
	pthread_mutex_unlock(&c->cache_mu);
	int rc = !r->pods.items || !r->svcs.items || !opods.items || !osvcs.items ? TFJOB_ENOMEM : 0;
	if (!rc)
		rc = kid_list_append(&r->pods, &opods) || kid_list_append(&r->svcs, &osvcs) ? TFJOB_ENOMEM : 0;
	tfjob__children_free(opods.items, opods.n);
	tfjob__children_free(osvcs.items, osvcs.n);
	return rc;
}

/* The cached PodGroup of the job as text (NULL: none, or no gang scheduling). */
static char *pod_group_text(rctx *r)
{
	if (r->c->o.gang_scheduler == TFJOB_GANG_NONE)
		return NULL;
	pthread_mutex_lock(&r->c->cache_mu);
	char *text = tfjob__store_text(&r->c->stores[INF_PODGROUPS], r->key);
	pthread_mutex_unlock(&r->c->cache_mu);
	return text;
}

/* Run the planner on the job and its children; the status it wants in r->new_status. */
static int plan_job(rctx *r)
{
	tfjob_controller *c = r->c;
	char *pg = pod_group_text(r);
	tfjob_objects *po = summaries_of(&r->pods), *so = summaries_of(&r->svcs);
	int rc = po && so ? tfjob__job_wrap(&r->tj, json_incref(r->job), NULL, &r->err) : TFJOB_ENOMEM;
	if (!rc) {
		tfjob_plan_options popts = TFJOB_PLAN_OPTIONS_INIT;
		popts.compat = c->o.compat;
		popts.now = tfjob__now_s(c);
		popts.requeues = tfjob__queue_num_requeues(c->q, r->key);
		popts.render = &c->ropts;
		popts.pod_group_json = pg;
		rc = tfjob_plan_new_with_objects(&r->plan, r->tj, po, so, &popts, &r->err);
	}
	free(pg);
	tfjob_objects_free(po);
	tfjob_objects_free(so);
	if (rc)
		return rc;
	r->old_status = json_object_get(r->job, "status");
	json_t *wanted = tfjob_plan_status_changed(r->plan) ? tfjob__plan_status(r->plan) : r->old_status;
	r->new_status = wanted ? json_incref(wanted) : json_object(); /* shared, never printed and parsed */
	if (!r->new_status)
		return tfjob__oom(&r->err);
	return 0;
}

/* TTL: delete the finished job (its children go with it, in the background). */
static int delete_job(void *ctx, tfjob_error **err)
{
	rctx *r = ctx;
	tfjob_controller *c = r->c;
	tfjob_delete_options dopts = TFJOB_DELETE_OPTIONS_INIT;
	dopts.propagation = TFJOB_PROPAGATION_BACKGROUND;
	dopts.precondition_uid = r->uid;
	int rc = tfjob_transport_delete(NULL, c->t, &RES_TFJOBS, r->ns, r->name, &dopts, err);
	tfjob__count(c, TFJOB_API_DELETE, rc);
	if (rc == 0) {
		atomic_fetch_add(&c->m.jobs_deleted, 1);
		tfjob__log(c, TFJOB_LOG_INFO, "deleted the job (ttlSecondsAfterFinished)", r->key, NULL, NULL);
	}
	return rc;
}

static void event_of_plan(void *ctx, const char *type, const char *reason, const char *message)
{
	record_event(ctx, type, reason, message);
}

static void log_wait(void *ctx, const tfjob_plan *plan, size_t i)
{
	rctx *r = ctx;
	if (tfjob_plan_action_type(plan, i) == TFJOB_ACTION_WAIT)
		tfjob__log(r->c, TFJOB_LOG_DEBUG, "pods wait for the PodGroup", r->key, tfjob_plan_action_name(plan, i), NULL);
}

/* Stop before the next action when the controller stops, or when a leader's Lease was not
   renewed within the renew deadline (fenced: another replica may lead by now). */
static bool controller_stopping(void *ctx)
{
	tfjob_controller *c = ((rctx *)ctx)->c;
	return tfjob__stopping(c) || tfjob__fenced(c);
}

/* The controller's writes, for the plan executor (lib/plan/execute.h). */
static const tfjob__exec_ops CONTROLLER_WRITES = {
	.event = event_of_plan,
	.before = log_wait,
	.create_child = do_create,
	.delete_child = do_delete,
	.claim = do_claim,
	.write_pod_group = do_write_pod_group,
	.delete_pod_group = do_delete_pod_group,
	.delete_job = delete_job,
	.stopping = controller_stopping,
	.child_events = true,
};

/* The plan's actions in order, until the controller stops (r->actions_left then counts the rest);
   *deleted_job = 1 when the job itself was deleted. */
static int carry_out_actions(rctx *r, int *deleted_job)
{
	tfjob__exec_result res;
	tfjob_error *err = NULL;
	int rc = tfjob__plan_execute(r->plan, &CONTROLLER_WRITES, r, &res, &err);
	tfjob_error_free(err); /* its Event is recorded, its log written */
	r->actions_left = res.left;
	*deleted_job = res.deleted_job;
	return rc;
}

/* A reconcile cut short by a stop writes no status: it would count children not created yet. */
static void log_actions_left(rctx *r)
{
	char what[64];
	snprintf(what, sizeof(what), "%zu of %zu actions left", r->actions_left, tfjob_plan_action_count(r->plan));
	tfjob__log(r->c, TFJOB_LOG_INFO,
	           tfjob__stopping(r->c) ? "controller stopping: reconcile cut short"
	                                 : "lease not renewed within the renew deadline: reconcile cut short",
	           r->key, what, NULL);
}

/* The cached text of the job with its "status" member's value replaced by (or, without one,
   appended as) status_text; NULL unless the text is certainly read as a parse reads it (plain,
   distinct keys: tfjob__jscan_certain()). */
static char *splice_status(const char *text, const char *status_text)
{
	size_t n = strlen(text), sn = strlen(status_text);
	const char *a, *b;
	if (!tfjob__jscan_certain(text, n))
		return NULL;
	if (!tfjob__jscan_member(text, "\"status\"", &a, &b)) {
		a = strrchr(text, '}'); /* the object's end: ,"status":X goes before it */
		const char *p = tfjob__jscan_ws(tfjob__jscan_ws(text) + 1);
		char *out = malloc(n + sn + sizeof(",\"status\":"));
		if (out)
			sprintf(out, "%.*s%s\"status\":%s%s", (int)(a - text), text, *p == '}' ? "" : ",", status_text, a);
		return out;
	}
	char *out = malloc(n - (size_t)(b - a) + sn + 1);
	if (out)
		sprintf(out, "%.*s%s%s", (int)(a - text), text, status_text, b);
	return out;
}

/* The job with its new status (status_text), JSON: the cached text with the status spliced in,
   or else the parsed job with the status set, written out. */
static char *job_with_status(rctx *r, const char *status_text)
{
	char *body = r->stored_text ? splice_status(r->stored_text, status_text) : NULL;
	if (body)
		return body;
	json_t *obj = json_copy(r->job);
	body = obj && !json_object_set(obj, "status", r->new_status) ? json_dumps(obj, JSON_COMPACT) : NULL;
	json_decref(obj);
	return body;
}

/* The status write this attempt decided, with the requeue and the Events that follow it (taken
   from r); NULL when memory is short. */
static tfjob__status_write *status_write_new(rctx *r)
{
	tfjob__status_write *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	/* keys sorted, as the API server writes them: the stored status is compared with this text */
	w->status_text = json_dumps(r->new_status, JSON_COMPACT | JSON_SORT_KEYS);
	w->body = w->status_text ? job_with_status(r, w->status_text) : NULL;
	w->key = strdup(r->key);
	w->ns = strdup(r->ns);
	w->name = strdup(r->name);
	w->new_status = json_incref(r->new_status);
	w->transitions = tfjob__status_transitions(r->old_status, r->new_status);
	int64_t after;
	w->requeue_after_ms = tfjob_plan_requeue_after(&after, r->plan) == 0 ? (after > 0 ? after * 1000 : 0) : -1;
	w->started_ns = r->started_ns;
	if (!w->body || !w->key || !w->ns || !w->name) {
		tfjob__status_write_free(r->c, w);
		return NULL;
	}
	w->events = r->events;
	r->events = (tfjob__event_batch){ NULL, NULL };
	return w;
}

/* Write the new status: here (0 done, TFJOB__RECONCILE_REPLAN, or a negative error), or by the
   status writer (TFJOB__RECONCILE_HANDED_OFF: it ends the reconcile). */
static int write_status(rctx *r)
{
	tfjob__status_write *w = status_write_new(r);
	if (!w)
		return TFJOB_ENOMEM;
	if (r->c->writer) {
		tfjob__writer_post(r->c->writer, w);
		return TFJOB__RECONCILE_HANDED_OFF;
	}
	int rc = tfjob__status_write_do(r->c, w, &r->err);
	r->events = w->events; /* posted by tfjob__reconcile(), after a re-plan's too */
	w->events = (tfjob__event_batch){ NULL, NULL };
	tfjob__status_write_free(r->c, w);
	return rc;
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
	r->actions_left = 0;
}

/* Returns 0 done, TFJOB__RECONCILE_REPLAN (status conflict), TFJOB__RECONCILE_HANDED_OFF, or a
   negative error. */
static int reconcile_once(rctx *r)
{
	tfjob_controller *c = r->c;
	if (wait_for_now(r))
		return 0;
	if (tfjob__fenced(c)) {
		tfjob__log(c, TFJOB_LOG_INFO, "lease not renewed within the renew deadline: reconcile put off", r->key,
		           NULL, NULL);
		tfjob__queue_add_after(c->q, r->key, tfjob__fence_retry_ms(c));
		return 0;
	}
	r->uid = meta_str(r->job, "uid");
	int rc = take_children(r);
	if (!rc)
		rc = plan_job(r);
	if (!rc && tfjob__log_enabled(c, TFJOB_LOG_DEBUG)) {
		char what[96];
		snprintf(what, sizeof(what), "%zu pods, %zu services cached; %zu actions; status %s", r->pods.n, r->svcs.n,
		         tfjob_plan_action_count(r->plan), tfjob_plan_status_changed(r->plan) ? "changed" : "unchanged");
		tfjob__log(c, TFJOB_LOG_DEBUG, "planned", r->key, what, NULL);
	}
	int deleted_job = 0;
	if (!rc)
		rc = carry_out_actions(r, &deleted_job);
	if (!rc && r->actions_left) {
		log_actions_left(r);
		if (!tfjob__stopping(c)) /* fenced: again once the Lease is renewed (or never: stopped) */
			tfjob__queue_add_after(c->q, r->key, tfjob__fence_retry_ms(c));
		attempt_clear(r);
		return 0;
	}
	int64_t after;
	if (!rc && !deleted_job && tfjob_plan_status_changed(r->plan))
		rc = write_status(r); /* the planner's requeue follows the write */
	else if (!rc && !deleted_job && tfjob_plan_requeue_after(&after, r->plan) == 0)
		tfjob__queue_add_after(c->q, r->key, after > 0 ? after * 1000 : 0);
	if (rc < 0)
		tfjob__log(c, TFJOB_LOG_ERROR, "reconcile failed", r->key, NULL,
		           r->err ? tfjob_error_message(r->err) : tfjob_strerror(rc));
	attempt_clear(r);
	return rc;
}

int tfjob__reconcile(tfjob_controller *c, const char *key, int64_t started_ns)
{
	const char *slash = strchr(key, '/');
	if (!slash)
		return 0;
	rctx r = { .c = c, .key = key, .ns = strndup(key, (size_t)(slash - key)), .name = strdup(slash + 1), .may_adopt = -1,
	           .started_ns = started_ns };
	int rc = 0;
	if (!r.ns || !r.name) {
		rc = TFJOB_ENOMEM;
		goto out;
	}
	for (int attempt = 0; attempt < 5; attempt++) {
		pthread_mutex_lock(&c->cache_mu);
		r.stored_text = tfjob__store_text(&c->stores[INF_JOBS], key);
		pthread_mutex_unlock(&c->cache_mu);
		r.job = r.stored_text ? json_loads(r.stored_text, 0, NULL) : NULL; /* parsed outside the lock */
		if (!r.job) {
			free(r.stored_text);
			r.stored_text = NULL;
			tfjob__exp_delete(c->exp, key);
			rc = 0;
			break;
		}
		rc = reconcile_once(&r);
		json_decref(r.job);
		r.job = NULL;
		free(r.job_text);
		r.job_text = NULL;
		free(r.stored_text);
		r.stored_text = NULL;
		if (rc != TFJOB__RECONCILE_REPLAN)
			break;
		tfjob__log(c, TFJOB_LOG_DEBUG, "status conflict, planning again", key, NULL, NULL);
	}
	if (rc == TFJOB__RECONCILE_REPLAN)
		rc = TFJOB_ECONFLICT;
out:
	tfjob__recorder_post(c->events, &r.events);
	free(r.ns);
	free(r.name);
	return rc;
}
