/*
 * The reconcile planner: one step of the TFJob controller as a pure function.
 * SPDX-License-Identifier: Apache-2.0
 *
 * The structure follows training-operator v1.9's ReconcileJobs / ReconcilePods /
 * ReconcileServices / UpdateJobStatus (docs/semantics.md); the documented mode fixes the defects
 * listed in SEMANTICS.md, the training-operator-1.9 mode reproduces them.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal/cluster.h"
#include "internal/doc.h"
#include "internal/job.h"
#include "internal/objects.h"
#include "internal/plan.h"
#include "internal/render.h"

#define LABEL_REPLICA_TYPE TFJOB__LABEL_REPLICA_TYPE
#define LABEL_REPLICA_INDEX TFJOB__LABEL_REPLICA_INDEX
#define MANAGED_BY_US "kubeflow.org/training-operator"
/* v1.9 creates every missing index below the highest observed one; we stop this far above replicas. */
#define COMPAT_GAP_CAP 1024

struct tfjob__action {
	tfjob_action_type type;
	tfjob_object_kind kind;
	char *name;
	json_t *object;
	tfjob_event_type event_type;
	char *reason;
	char *message;
};

struct tfjob_plan {
	struct tfjob__action *actions;
	size_t count, cap;
	json_t *status;
	bool changed;
	bool has_requeue;
	int64_t requeue;
};

/* Summaries of observed objects, in list order. */
typedef struct sum_list {
	const tfjob__summary **items;
	size_t n;
} sum_list;

typedef struct rtype_state {
	const char *key;  /* spec key (canonical after defaults) */
	char *lower;      /* label value */
	int64_t replicas;
	const char *policy;
	int64_t active, succeeded, failed;
	sum_list pods, services; /* ours whose replica-type label is `lower` (borrowed from ctx's buckets) */
} rtype_state;

typedef struct entry {
	int64_t index;
	size_t pos;
	const tfjob__summary *sum;
} entry;

typedef enum path { PATH_NORMAL, PATH_FINISHED, PATH_SUSPENDED, PATH_LIMIT, PATH_VALIDATION } path;

typedef struct ctx {
	tfjob_plan *plan;
	tfjob_job *job;
	tfjob_compat compat;
	bool documented;
	int64_t now;
	int64_t requeues;
	const char *name;
	const char *ns;
	json_t *status;
	sum_list pods;     /* the observed pods that are not another job's (drop_foreign) */
	sum_list services; /* the same for services */
	const tfjob__summary **buckets; /* storage of the types' pod and service lists */
	rtype_state *types;
	size_t ntypes;
	const tfjob_render_options *render;
	tfjob_error **err;
	bool restart_started;
	char *restart_message;
	char **perm_failures; /* documented mode: permanent exit-code failures waiting for the status step */
	size_t nperm;
	bool worker0_completed;
	bool job_deleted;
	path path;
} ctx;

/* ---- plan building ---- */

static int push_action(ctx *c, struct tfjob__action *a)
{
	tfjob_plan *p = c->plan;
	if (p->count == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 16;
		struct tfjob__action *grown = realloc(p->actions, cap * sizeof *grown);
		if (!grown)
			return tfjob__oom(c->err);
		p->actions = grown;
		p->cap = cap;
	}
	p->actions[p->count++] = *a;
	return 0;
}

static void action_clear(struct tfjob__action *a)
{
	free(a->name);
	json_decref(a->object);
	free(a->reason);
	free(a->message);
}

static int add_event(ctx *c, tfjob_event_type type, const char *reason, const char *message)
{
	struct tfjob__action a = { TFJOB_ACTION_EVENT, TFJOB_OBJECT_NONE, NULL, NULL, type, NULL, NULL };
	a.reason = tfjob__strdup(reason ? reason : "");
	a.message = tfjob__strdup(message ? message : "");
	if (!a.reason || !a.message) {
		action_clear(&a);
		return tfjob__oom(c->err);
	}
	int rc = push_action(c, &a);
	if (rc)
		action_clear(&a);
	return rc;
}

static int add_eventf(ctx *c, tfjob_event_type type, const char *reason, const char *fmt, ...) TFJOB_PRINTF(4, 5);
static int add_eventf(ctx *c, tfjob_event_type type, const char *reason, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = tfjob__strdup_vprintf(fmt, ap);
	va_end(ap);
	if (!msg)
		return tfjob__oom(c->err);
	int rc = add_event(c, type, reason, msg);
	free(msg);
	return rc;
}

static int add_object_action(ctx *c, tfjob_action_type type, tfjob_object_kind kind, const char *name, json_t *obj)
{
	struct tfjob__action a = { type, kind, tfjob__strdup(name ? name : ""), obj, TFJOB_EVENT_NORMAL, NULL, NULL };
	if (!a.name) {
		action_clear(&a);
		return tfjob__oom(c->err);
	}
	int rc = push_action(c, &a);
	if (rc)
		action_clear(&a);
	return rc;
}

static void want_requeue(ctx *c, int64_t secs)
{
	if (secs < 0)
		secs = 0;
	if (!c->plan->has_requeue || secs < c->plan->requeue) {
		c->plan->has_requeue = true;
		c->plan->requeue = secs;
	}
}

/* ---- reading observed objects (their summaries, internal/objects.h) ---- */

static const char *name_of(json_t *obj) { return tfjob__str(tfjob__obj(obj, "metadata"), "name"); }

static const char *kind_word(tfjob_object_kind kind) { return kind == TFJOB_OBJECT_POD ? "Pod" : "Service"; }

/* Entries of one replica type, sorted by index (stable). Bad index labels give a Warning event. */
static int cmp_entry(const void *a, const void *b)
{
	const entry *x = a, *y = b;
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return x->pos < y->pos ? -1 : x->pos > y->pos;
}

static bool sorted_entries(const entry *list, size_t n)
{
	for (size_t i = 1; i < n; i++)
		if (cmp_entry(&list[i - 1], &list[i]) > 0)
			return false;
	return true;
}

static int collect(ctx *c, entry **out, size_t *count, const sum_list *objs, tfjob_object_kind kind)
{
	size_t n = objs->n, k = 0;
	entry *list = malloc((n ? n : 1) * sizeof *list); /* entries [0, k) are written below */
	if (!list)
		return tfjob__oom(c->err);
	for (size_t i = 0; i < n; i++) {
		const tfjob__summary *s = objs->items[i];
		if (!s->index_ok) {
			const char *idx = s->rindex;
			int rc = add_eventf(c, TFJOB_EVENT_WARNING, "InvalidReplicaIndex",
			                    "Error obtaining replica index from %s %s/%s: %s %s; ignored.", kind_word(kind),
			                    c->ns, s->name ? s->name : "(unnamed)", idx ? "bad label" : "missing label",
			                    idx ? idx : LABEL_REPLICA_INDEX);
			if (rc) {
				free(list);
				return rc;
			}
			continue;
		}
		list[k].index = s->index;
		list[k].pos = i;
		list[k].sum = s;
		k++;
	}
	if (!sorted_entries(list, k)) /* a steady cluster lists its children in order */
		qsort(list, k, sizeof *list, cmp_entry);
	*out = list;
	*count = k;
	return 0;
}

/* Pods and services without a replica-type label belong to no replica: warn once per object. */
static int warn_unlabelled(ctx *c, const sum_list *objs, tfjob_object_kind kind)
{
	for (size_t i = 0; i < objs->n; i++) {
		const tfjob__summary *s = objs->items[i];
		if (s->rtype)
			continue;
		int rc = add_eventf(c, TFJOB_EVENT_WARNING, "InvalidReplicaType",
		                    "%s %s/%s has no %s label; ignored.", kind_word(kind), c->ns,
		                    s->name ? s->name : "(unnamed)", LABEL_REPLICA_TYPE);
		if (rc)
			return rc;
	}
	return 0;
}

/* ---- status helpers ---- */

static json_t *replica_statuses(ctx *c)
{
	json_t *rs = json_object_get(c->status, "replicaStatuses");
	if (!json_is_object(rs)) {
		rs = json_object();
		if (!rs || json_object_set_new(c->status, "replicaStatuses", rs))
			return NULL;
	}
	return rs;
}

static int set_count(json_t *obj, const char *key, int64_t v)
{
	if (v == 0) {
		json_object_del(obj, key);
		return 0;
	}
	return json_object_set_new(obj, key, json_integer(v)) ? TFJOB_ENOMEM : 0;
}

static int64_t get_count(json_t *obj, const char *key)
{
	int64_t v = 0;
	tfjob__int(&v, obj, key);
	return v;
}

static int cond_set(ctx *c, const char *type, const char *cstatus, const char *reason, const char *message)
{
	if (tfjob__cond_set(c->status, type, cstatus, reason, message, c->now, c->compat))
		return tfjob__oom(c->err);
	return 0;
}

static bool finished(ctx *c)
{
	return tfjob__cond_true(c->status, TFJOB__COND_SUCCEEDED) || tfjob__cond_true(c->status, TFJOB__COND_FAILED);
}

static int set_completion_if_unset(ctx *c)
{
	json_t *v = json_object_get(c->status, "completionTime");
	if (v && !json_is_null(v))
		return 0;
	return tfjob__status_set_time(c->status, "completionTime", c->now) ? tfjob__oom(c->err) : 0;
}

/* ---- cleanup ---- */

/* DeletePodsAndServices: each selected pod and the service of the same name. */
static int delete_pods_and_services(ctx *c, bool is_finished)
{
	const char *policy = tfjob_job_clean_pod_policy(c->job);
	for (size_t i = 0; i < c->pods.n; i++) {
		const tfjob__summary *pod = c->pods.items[i];
		if (!tfjob__cleanup_deletes(policy, pod->phase, is_finished))
			continue;
		const char *n = pod->name;
		if (!n || pod->deleting)
			continue; /* already going away */
		int rc = add_object_action(c, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, n, NULL);
		if (!rc)
			rc = add_object_action(c, TFJOB_ACTION_DELETE, TFJOB_OBJECT_SERVICE, n, NULL);
		if (rc)
			return rc;
	}
	return 0;
}

static int delete_job(ctx *c)
{
	int rc = add_object_action(c, TFJOB_ACTION_DELETE, TFJOB_OBJECT_TFJOB, c->name, NULL);
	if (!rc)
		rc = add_eventf(c, TFJOB_EVENT_NORMAL, "SuccessfulDeleteJob", "Deleted job: %s", c->name);
	c->job_deleted = true;
	return rc;
}

/*
 * CleanupJob: TTL of a job whose status is (becoming) finished. Returns 1 when v1.9 would fail
 * the reconcile (TTL set, no completionTime), else 0 or an error code.
 */
static int cleanup_job(ctx *c)
{
	int64_t ttl = 0, completion = 0, remaining = 0;
	bool has_ttl = tfjob_job_ttl_seconds_after_finished(&ttl, c->job) == 0;
	if (!has_ttl)
		return 0;
	if (!c->documented && tfjob_job_suspend(c->job))
		return 0; /* defect 6: v1.9 never deletes a suspended finished job */
	bool has_completion = tfjob__status_get_time(&completion, c->status, "completionTime") == 0;
	if (!has_completion && c->documented) {
		/* never leave completionTime unset on a finished job */
		int rc = set_completion_if_unset(c);
		if (rc)
			return rc;
		completion = c->now;
		has_completion = true;
	}
	switch (tfjob__ttl_check(&remaining, has_ttl, ttl, has_completion, completion, c->now)) {
	case TFJOB__TTL_NO_COMPLETION:
		return 1;
	case TFJOB__TTL_EXPIRED:
		return delete_job(c);
	case TFJOB__TTL_WAIT:
		if (c->documented)
			want_requeue(c, remaining); /* v1.9's AddAfter goes to a queue that drops it */
		return 0;
	default:
		return 0;
	}
}

/* ---- the paths of one step ---- */

static int step_finished(ctx *c)
{
	int rc = delete_pods_and_services(c, true);
	if (rc)
		return rc;
	rc = cleanup_job(c);
	if (rc < 0)
		return rc;
	if (rc == 1) {
		/* v1.9: the reconcile fails before the status is written, and is retried at once */
		json_t *old = json_deep_copy(tfjob__status(c->job));
		if (!old)
			old = json_object();
		if (!old)
			return tfjob__oom(c->err);
		json_decref(c->status);
		c->status = old;
		want_requeue(c, 0);
		return 0;
	}
	if (tfjob__cond_true(c->status, TFJOB__COND_SUCCEEDED)) {
		json_t *rs = json_object_get(c->status, "replicaStatuses");
		const char *key;
		json_t *v;
		json_object_foreach(rs, key, v) {
			if (!json_is_object(v))
				continue;
			if (set_count(v, "succeeded", get_count(v, "succeeded") + get_count(v, "active")) ||
			    set_count(v, "active", 0))
				return tfjob__oom(c->err);
		}
	}
	return 0;
}

static int step_suspended(ctx *c)
{
	int rc = delete_pods_and_services(c, false);
	if (rc)
		return rc;
	json_t *rs = json_object_get(c->status, "replicaStatuses");
	const char *key;
	json_t *v;
	json_object_foreach(rs, key, v) {
		if (json_is_object(v) && set_count(v, "active", 0))
			return tfjob__oom(c->err);
	}
	char *msg = tfjob__strdup_printf("TFJob %s is suspended.", c->name);
	if (!msg)
		return tfjob__oom(c->err);
	if (tfjob__cond_true(c->status, TFJOB__COND_RUNNING))
		rc = cond_set(c, TFJOB__COND_RUNNING, "False", TFJOB__REASON_SUSPENDED, msg);
	if (!rc && !tfjob__cond_true(c->status, TFJOB__COND_SUSPENDED))
		rc = cond_set(c, TFJOB__COND_SUSPENDED, "True", TFJOB__REASON_SUSPENDED, msg);
	if (!rc)
		rc = add_event(c, TFJOB_EVENT_NORMAL, TFJOB__REASON_SUSPENDED, msg);
	free(msg);
	return rc;
}

static int resume_if_suspended(ctx *c)
{
	if (!tfjob__cond_true(c->status, TFJOB__COND_SUSPENDED))
		return 0;
	char *msg = tfjob__strdup_printf("TFJob %s is resumed.", c->name);
	if (!msg)
		return tfjob__oom(c->err);
	int rc = cond_set(c, TFJOB__COND_SUSPENDED, "False", TFJOB__REASON_RESUMED, msg);
	if (!rc && tfjob__status_set_time(c->status, "startTime", c->now))
		rc = tfjob__oom(c->err);
	if (!rc)
		rc = add_event(c, TFJOB_EVENT_NORMAL, TFJOB__REASON_RESUMED, msg);
	free(msg);
	return rc;
}

static bool active_pod(const tfjob__summary *pod)
{
	return pod->phase_kind != TFJOB__PHASE_SUCCEEDED && pod->phase_kind != TFJOB__PHASE_FAILED && !pod->deleting;
}

/* RecordAbnormalPods: Warning events for active pods whose containers or conditions look wrong. */
static int container_events(ctx *c, const tfjob__summary *pod, json_t *statuses)
{
	size_t i;
	json_t *st;
	const char *pn = pod->name ? pod->name : "";
	json_array_foreach(statuses, i, st) {
		json_t *state = tfjob__obj(st, "state");
		json_t *term = tfjob__obj(state, "terminated");
		json_t *wait = tfjob__obj(state, "waiting");
		const char *cn = tfjob__str(st, "name") ? tfjob__str(st, "name") : "";
		int64_t code = 0;
		tfjob__int(&code, term, "exitCode");
		int rc = 0;
		if (term && code != 0) {
			const char *m = tfjob__str(term, "message");
			rc = add_eventf(c, TFJOB_EVENT_WARNING, tfjob__str(term, "reason"),
			                "Error pod %s container %s exitCode: %" PRId64 " terminated message: %s", pn, cn, code,
			                m ? m : "");
		}
		const char *wm = tfjob__str(wait, "message");
		if (!rc && wait && wm && *wm)
			rc = add_eventf(c, TFJOB_EVENT_WARNING, tfjob__str(wait, "reason"),
			                "Error pod %s container %s waiting message: %s", pn, cn, wm);
		if (rc)
			return rc;
	}
	return 0;
}

static int record_abnormal_pods(ctx *c)
{
	for (size_t i = 0; i < c->pods.n; i++) {
		const tfjob__summary *pod = c->pods.items[i];
		if (!active_pod(pod) || !pod->maybe_abnormal)
			continue; /* the summary says there is nothing to report */
		json_t *st = tfjob__obj(pod->obj, "status");
		json_t *cs = tfjob__arr(st, "containerStatuses"), *ics = tfjob__arr(st, "initContainerStatuses");
		int rc;
		if (json_array_size(cs)) {
			rc = container_events(c, pod, cs);
		} else if (json_array_size(ics)) {
			rc = container_events(c, pod, ics);
		} else {
			json_t *conds = tfjob__arr(st, "conditions"), *latest = NULL, *cond;
			int64_t best = INT64_MIN;
			size_t k;
			json_array_foreach(conds, k, cond) {
				int64_t t = INT64_MIN + 1;
				tfjob__status_get_time(&t, cond, "lastTransitionTime");
				if (!latest || t > best) {
					latest = cond;
					best = t;
				}
			}
			const char *s = tfjob__str(latest, "status");
			if (!latest || (s && !strcmp(s, "True")))
				continue;
			const char *m = tfjob__str(latest, "message");
			rc = add_eventf(c, TFJOB_EVENT_WARNING, tfjob__str(latest, "reason"),
			                "Error pod %s condition message: %s", pod->name ? pod->name : "", m ? m : "");
		}
		if (rc)
			return rc;
	}
	return 0;
}

static bool counts_for_backoff(const char *policy)
{
	return policy && (!strcmp(policy, "OnFailure") || !strcmp(policy, "Always") || !strcmp(policy, "ExitCode"));
}

/* Restarts of the Running pods of the types whose restart policy counts for the backoff limit. */
static int64_t backoff_restarts(ctx *c)
{
	uint64_t restarts = 0; /* wraps like the sum of int64 restart counts it stands for */
	for (size_t t = 0; t < c->ntypes; t++) {
		if (!counts_for_backoff(c->types[t].policy))
			continue;
		const sum_list *pods = &c->types[t].pods;
		for (size_t i = 0; i < pods->n; i++)
			if (pods->items[i]->phase_kind == TFJOB__PHASE_RUNNING)
				restarts += (uint64_t)pods->items[i]->restarts;
	}
	return (int64_t)restarts;
}

/* The limits of step 5; *message is set (owned) when the job has to fail. */
static int check_limits(ctx *c, char **message)
{
	*message = NULL;
	int64_t limit = 0;
	if (tfjob_job_backoff_limit(&limit, c->job) == 0) {
		int64_t active = 0, failed = 0, total = 0, prev_failed = 0;
		for (size_t i = 0; i < c->pods.n; i++) {
			active += active_pod(c->pods.items[i]);
			failed += c->pods.items[i]->phase_kind == TFJOB__PHASE_FAILED;
		}
		for (size_t t = 0; t < c->ntypes; t++)
			total += c->types[t].replicas;
		json_t *rs = json_object_get(c->status, "replicaStatuses");
		const char *key;
		json_t *v;
		json_object_foreach(rs, key, v)
			prev_failed += get_count(v, "failed");
		bool exceeds = failed > prev_failed && active != total && c->requeues + 1 > limit;

		int64_t restarts = backoff_restarts(c);
		bool past = limit == 0 ? restarts > 0 : restarts >= limit;
		if (exceeds || past) {
			*message = tfjob__strdup_printf("Job %s has failed because it has reached the specified backoff limit",
			                                c->name);
			return *message ? 0 : tfjob__oom(c->err);
		}
	}
	int64_t deadline = 0, start = 0;
	if (tfjob_job_active_deadline_seconds(&deadline, c->job) == 0 &&
	    tfjob__status_get_time(&start, c->status, "startTime") == 0 && c->now - start >= deadline) {
		*message = tfjob__strdup_printf("Job %s has failed because it was active longer than specified deadline",
		                                c->name);
		return *message ? 0 : tfjob__oom(c->err);
	}
	return 0;
}

static int step_limit(ctx *c, const char *message)
{
	int rc = set_completion_if_unset(c);
	if (!rc)
		rc = delete_pods_and_services(c, false);
	if (!rc) {
		rc = cleanup_job(c);
		if (rc == 1)
			rc = 0; /* cannot happen: completionTime was just set */
	}
	if (!rc)
		rc = add_event(c, TFJOB_EVENT_NORMAL, TFJOB__REASON_FAILED, message);
	if (!rc)
		rc = cond_set(c, TFJOB__COND_FAILED, "True", TFJOB__REASON_FAILED, message);
	return rc;
}

/* ---- ReconcilePods / ReconcileServices ---- */

/*
 * A pod rendered from the widened copy lists the extra index in its TF_CONFIG; v1.9 writes the
 * TF_CONFIG of the real spec (the task index beyond the cluster's list), or none when the real
 * job is not distributed. Put that one in the tensorflow container's env.
 */
static int set_beyond_tf_config(ctx *c, rtype_state *rt, int64_t index, json_t *pod)
{
	tfjob_render_options ro;
	tfjob_graph *g = NULL;
	size_t t = 0;
	char *cfg = NULL;
	int rc = tfjob__render_options_resolve(&ro, c->render, c->err);
	if (!rc)
		rc = tfjob__graph_build(&g, c->job, &ro, true, c->err);
	if (!rc)
		rc = tfjob__graph_lookup(&t, g, rt->key, c->err);
	tfjob_error *beyond_err = NULL;
	if (!rc)
		rc = tfjob__graph_tf_config_beyond(&cfg, g, t, index, &beyond_err);
	tfjob_graph_free(g);
	if (rc == TFJOB_ESTATE) {
		/* Where v1.9 panics (a sparse PS/worker address beyond replicas), keep the widened render. */
		tfjob_error_free(beyond_err);
		return 0;
	}
	if (rc) {
		if (c->err)
			*c->err = beyond_err;
		else
			tfjob_error_free(beyond_err);
		return rc;
	}
	json_t *containers = tfjob__arr(tfjob__obj(pod, "spec"), "containers");
	int ci = tfjob__tensorflow_container_index(containers);
	json_t *container = json_array_get(containers, ci < 0 ? 0 : (size_t)ci);
	json_t *env = tfjob__arr(container, "env");
	bool found = false;
	for (size_t i = json_array_size(env); i-- > 0 && !found;) {
		const char *name = tfjob__str(json_array_get(env, i), "name");
		if (!name || strcmp(name, "TF_CONFIG"))
			continue;
		found = true;
		if (*cfg)
			rc = json_object_set_new(json_array_get(env, i), "value", json_string(cfg)) ? tfjob__oom(c->err) : 0;
		else
			rc = json_array_remove(env, i) ? tfjob__oom(c->err) : 0;
	}
	if (!found && *cfg && json_is_object(container)) {
		/* appended last, where the renderer puts it */
		if (!env && (!(env = json_array()) || json_object_set_new(container, "env", env)))
			rc = tfjob__oom(c->err);
		else if (json_array_append_new(env, json_pack("{s:s,s:s}", "name", "TF_CONFIG", "value", cfg)))
			rc = tfjob__oom(c->err);
	}
	free(cfg);
	return rc;
}

static int create_child(ctx *c, rtype_state *rt, int64_t index, tfjob_object_kind kind)
{
	json_t *obj = NULL;
	int rc;
	if (kind == TFJOB_OBJECT_POD) {
		const char *pol = tfjob__str(tfjob__pod_spec(tfjob__replica_spec(c->job, rt->key)), "restartPolicy");
		if (pol && *pol) {
			rc = add_event(c, TFJOB_EVENT_WARNING, "SetPodTemplateRestartPolicy",
			               "Restart policy in pod template will be overwritten by restart policy in replica spec");
			if (rc)
				return rc;
		}
	}
	const tfjob_job *job = c->job;
	tfjob_job *widened = NULL;
	if (index >= rt->replicas) {
		/* v1.9 creates indices at and above replicas (defect 7, gaps below a stray pod); the
		 * renderer only renders existing replicas, so render from a copy with the type widened
		 * to index + 1 replicas (its TF_CONFIG then also lists the extra addresses). */
		rc = tfjob_job_clone(&widened, c->job, c->err);
		if (rc)
			return rc;
		json_t *spec = tfjob__replica_spec(widened, rt->key);
		if (!spec || json_object_set_new(spec, "replicas", json_integer(index + 1))) {
			tfjob_job_free(widened);
			return tfjob__oom(c->err);
		}
		job = widened;
	}
	if (kind == TFJOB_OBJECT_POD)
		rc = tfjob__render_pod(&obj, job, rt->key, index, c->render, c->err);
	else
		rc = tfjob__render_service(&obj, job, rt->key, index, c->render, c->err);
	if (!rc && widened && kind == TFJOB_OBJECT_POD)
		rc = set_beyond_tf_config(c, rt, index, obj);
	tfjob_job_free(widened);
	if (rc) {
		json_decref(obj);
		return rc;
	}
	return add_object_action(c, TFJOB_ACTION_CREATE, kind, name_of(obj), obj);
}

static int handle_failed_pod(ctx *c, rtype_state *rt, const tfjob__summary *pod, int64_t code)
{
	const char *pol = rt->policy ? rt->policy : "";
	bool exitcode = !strcmp(pol, "ExitCode");
	bool retryable = tfjob_exit_code_classify((int)code, c->compat) == TFJOB_EXIT_RETRYABLE;
	if ((exitcode && retryable) || !strcmp(pol, "OnFailure") || !strcmp(pol, "Always")) {
		int rc = 0;
		if (!pod->deleting && pod->name)
			rc = add_object_action(c, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, pod->name, NULL);
		char *msg = tfjob__strdup_printf("job %s is restarting because %s replica(s) failed.", c->name, rt->key);
		if (!msg)
			return tfjob__oom(c->err);
		if (!rc)
			rc = add_event(c, TFJOB_EVENT_WARNING, TFJOB__REASON_RESTARTING, msg);
		if (!rc)
			rc = cond_set(c, TFJOB__COND_RESTARTING, "True", TFJOB__REASON_RESTARTING, msg);
		c->restart_started = true;
		free(c->restart_message);
		c->restart_message = msg;
		return rc;
	}
	if (exitcode) {
		char *msg = tfjob__strdup_printf("job \"%s\" is failing because \"%s\" replica(s) failed.", c->name, rt->key);
		if (!msg)
			return tfjob__oom(c->err);
		if (c->documented) {
			/* decided in the status step, after the success rule (defect 1) */
			char **grown = realloc(c->perm_failures, (c->nperm + 1) * sizeof *grown);
			if (!grown) {
				free(msg);
				return tfjob__oom(c->err);
			}
			c->perm_failures = grown;
			c->perm_failures[c->nperm++] = msg;
			return 0;
		}
		int rc = add_event(c, TFJOB_EVENT_WARNING, TFJOB__REASON_FAILED, msg);
		if (!rc)
			rc = cond_set(c, TFJOB__COND_FAILED, "True", TFJOB__REASON_FAILED, msg);
		free(msg);
		return rc;
	}
	return 0; /* Never: counted as failed below */
}

static int handle_pod(ctx *c, rtype_state *rt, int64_t index, const tfjob__summary *pod)
{
	int rc = 0;
	if (index >= rt->replicas && !pod->deleting && pod->name)
		rc = add_object_action(c, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, pod->name, NULL);
	int64_t code = pod->exit_code;
	if (!rc && pod->exit_found)
		rc = add_eventf(c, TFJOB_EVENT_NORMAL, "ExitedWithCode", "Pod: %s.%s exited with code %" PRId64, c->ns,
		                pod->name ? pod->name : "", code);
	if (!rc && !strcmp(rt->key, TFJOB__TYPE_WORKER) && index == 0 && code == 0 &&
	    pod->phase_kind == TFJOB__PHASE_SUCCEEDED)
		c->worker0_completed = true;
	if (!rc && pod->phase_kind == TFJOB__PHASE_FAILED)
		rc = handle_failed_pod(c, rt, pod, code);
	if (rc)
		return rc;
	switch (pod->phase_kind) {
	case TFJOB__PHASE_RUNNING:
		if (pod->deleting)
			rt->failed++;
		else
			rt->active++;
		break;
	case TFJOB__PHASE_SUCCEEDED:
		rt->succeeded++;
		break;
	case TFJOB__PHASE_FAILED:
		rt->failed++;
		break;
	default:
		break;
	}
	return 0;
}

/* Walk the slots of a type: every index below `upper` and every observed index. */
static int reconcile_children(ctx *c, rtype_state *rt, tfjob_object_kind kind)
{
	entry *list = NULL;
	size_t n = 0;
	int rc = collect(c, &list, &n, kind == TFJOB_OBJECT_POD ? &rt->pods : &rt->services, kind);
	if (rc)
		return rc;
	int64_t upper = rt->replicas;
	if (!c->documented) {
		/* v1.9: max(highest index + 1, replicas), at least 1 (defect 7) */
		int64_t size = n ? list[n - 1].index + 1 : 1;
		if (size < rt->replicas)
			size = rt->replicas;
		if (size > rt->replicas + COMPAT_GAP_CAP)
			size = rt->replicas + COMPAT_GAP_CAP;
		upper = size;
	}
	size_t j = 0;
	int64_t idx = 0;
	while (!rc) {
		int64_t next;
		if (idx < upper)
			next = idx;
		else if (j < n)
			next = list[j].index;
		else
			break;
		if (j < n && list[j].index < next)
			next = list[j].index;
		size_t k = 0;
		while (j + k < n && list[j + k].index == next)
			k++;
		if (k > 1) {
			rc = add_eventf(c, TFJOB_EVENT_WARNING, kind == TFJOB_OBJECT_POD ? "TooManyPods" : "TooManyServices",
			                "We have too many %s for %s %" PRId64, kind == TFJOB_OBJECT_POD ? "pods" : "services",
			                kind == TFJOB_OBJECT_POD ? rt->lower : rt->key, next);
		} else if (k == 0) {
			rc = create_child(c, rt, next, kind);
		} else if (kind == TFJOB_OBJECT_POD) {
			rc = handle_pod(c, rt, next, list[j].sum);
		} else if (next >= rt->replicas && !list[j].sum->deleting && list[j].sum->name) {
			rc = add_object_action(c, TFJOB_ACTION_DELETE, TFJOB_OBJECT_SERVICE, list[j].sum->name, NULL);
		}
		j += k;
		idx = next + 1;
	}
	free(list);
	return rc;
}

static int write_replica_status(ctx *c, rtype_state *rt)
{
	json_t *rs = replica_statuses(c);
	json_t *st = json_object();
	if (!rs || !st || set_count(st, "active", rt->active) || set_count(st, "succeeded", rt->succeeded) ||
	    set_count(st, "failed", rt->failed)) {
		json_decref(st);
		return tfjob__oom(c->err);
	}
	if (c->documented) {
		/* the label selector of the type's pods, as the scale subresource reads it */
		char *sel = tfjob__strdup_printf("training.kubeflow.org/job-name=%s,training.kubeflow.org/operator-name="
		                                 "tfjob-controller,training.kubeflow.org/replica-type=%s",
		                                 c->name, rt->lower);
		if (!sel || json_object_set_new(st, "selector", json_string(sel))) {
			free(sel);
			json_decref(st);
			return tfjob__oom(c->err);
		}
		free(sel);
	}
	return json_object_set_new(rs, rt->key, st) ? tfjob__oom(c->err) : 0;
}

/* ---- UpdateJobStatus ---- */

static const char *const all_types[] = { TFJOB__TYPE_CHIEF, TFJOB__TYPE_EVALUATOR, TFJOB__TYPE_MASTER,
	                                 TFJOB__TYPE_PS, TFJOB__TYPE_WORKER };

static rtype_state *find_type(ctx *c, const char *key)
{
	for (size_t i = 0; i < c->ntypes; i++)
		if (!strcmp(c->types[i].key, key))
			return &c->types[i];
	return NULL;
}

static bool has_chief(ctx *c) { return find_type(c, TFJOB__TYPE_CHIEF) || find_type(c, TFJOB__TYPE_MASTER); }

/* A terminal transition: its event, completionTime (when asked), then the condition True. */
static int record_terminal(ctx *c, tfjob_event_type event_type, const char *reason, const char *cond,
                           const char *msg, bool set_completion)
{
	int rc = add_event(c, event_type, reason, msg);
	if (!rc && set_completion)
		rc = set_completion_if_unset(c);
	if (!rc)
		rc = cond_set(c, cond, "True", reason, msg);
	return rc;
}

static int succeed(ctx *c)
{
	char *msg = tfjob__strdup_printf("TFJob %s/%s successfully completed.", c->ns, c->name);
	if (!msg)
		return tfjob__oom(c->err);
	int rc = record_terminal(c, TFJOB_EVENT_NORMAL, TFJOB__REASON_SUCCEEDED, TFJOB__COND_SUCCEEDED, msg, true);
	free(msg);
	return rc;
}

static int running(ctx *c)
{
	char *msg = tfjob__strdup_printf("TFJob %s/%s is running.", c->ns, c->name);
	if (!msg)
		return tfjob__oom(c->err);
	int rc = cond_set(c, TFJOB__COND_RUNNING, "True", TFJOB__REASON_RUNNING, msg);
	free(msg);
	return rc;
}

static int fail_type(ctx *c, rtype_state *rt, bool set_completion)
{
	char *msg = tfjob__strdup_printf("TFJob %s/%s has failed because %" PRId64 " %s replica(s) failed.", c->ns,
	                                 c->name, rt->failed, rt->key);
	if (!msg)
		return tfjob__oom(c->err);
	int rc = record_terminal(c, TFJOB_EVENT_NORMAL, TFJOB__REASON_FAILED, TFJOB__COND_FAILED, msg, set_completion);
	free(msg);
	return rc;
}

/* Restarting condition as found at the start of UpdateJobStatus (v1.9: any status; documented: True). */
static int existing_restarting(ctx *c, char **reason, char **message)
{
	*reason = *message = NULL;
	json_t *cond = tfjob__cond_find(c->status, TFJOB__COND_RESTARTING);
	if (!cond)
		return 0;
	if (c->documented && !tfjob__cond_true(c->status, TFJOB__COND_RESTARTING))
		return 0;
	*reason = tfjob__strdup(tfjob__str(cond, "reason") ? tfjob__str(cond, "reason") : "");
	*message = tfjob__strdup(tfjob__str(cond, "message") ? tfjob__str(cond, "message") : "");
	if (!*reason || !*message) {
		free(*reason);
		free(*message);
		*reason = *message = NULL;
		return tfjob__oom(c->err);
	}
	return 1;
}

static int update_status(ctx *c)
{
	int rc = 0;
	json_t *st = json_object_get(c->status, "startTime");
	if (!st || json_is_null(st)) {
		if (tfjob__status_set_time(c->status, "startTime", c->now))
			return tfjob__oom(c->err);
	}
	char *rreason, *rmessage;
	int has_restarting = existing_restarting(c, &rreason, &rmessage);
	if (has_restarting < 0)
		return has_restarting;
	const char *sp = tfjob_job_success_policy(c->job);
	bool all_workers = sp && !strcmp(sp, "AllWorkers");
	bool chief = has_chief(c);
	bool dynamic = tfjob_job_enable_dynamic_worker(c->job);

	if (!c->documented) {
		/* v1.9's loop, defects included */
		for (size_t i = 0; i < TFJOB_ARRAY_LEN(all_types) && !rc; i++) {
			rtype_state *rt = find_type(c, all_types[i]);
			if (!rt)
				continue;
			int64_t expected = rt->replicas - rt->succeeded;
			if (chief) {
				if (tfjob__is_chief_or_master(rt->key, false)) {
					if (rt->active > 0)
						rc = running(c);
					if (!rc && expected == 0)
						rc = succeed(c);
				}
			} else if (!strcmp(rt->key, TFJOB__TYPE_WORKER)) {
				if (expected == 0 || (c->worker0_completed && !all_workers))
					rc = succeed(c);
				else if (rt->active > 0)
					rc = running(c);
			}
			if (rc || rt->failed == 0)
				continue;
			if (has_restarting)
				rc = cond_set(c, TFJOB__COND_RESTARTING, "True", rreason, rmessage);
			else if (dynamic && !strcmp(rt->key, TFJOB__TYPE_WORKER))
				continue;
			else
				rc = fail_type(c, rt, true);
		}
		free(rreason);
		free(rmessage);
		return rc;
	}

	/* documented: success first; a step that succeeds does not also fail (defect 1) */
	bool success = false;
	for (size_t i = 0; i < TFJOB_ARRAY_LEN(all_types) && !rc; i++) {
		rtype_state *rt = find_type(c, all_types[i]);
		if (!rt)
			continue;
		int64_t expected = rt->replicas - rt->succeeded;
		if (chief) {
			if (tfjob__is_chief_or_master(rt->key, false)) {
				if (rt->active > 0 && !c->restart_started)
					rc = running(c);
				if (expected == 0)
					success = true;
			}
		} else if (!strcmp(rt->key, TFJOB__TYPE_WORKER)) {
			if (expected == 0 || (c->worker0_completed && !all_workers))
				success = true;
			else if (rt->active > 0 && !c->restart_started)
				rc = running(c);
		}
	}
	if (!rc && success && !finished(c))
		rc = succeed(c);
	if (!rc && !success) {
		for (size_t i = 0; i < c->nperm && !rc; i++) {
			/* completionTime too (defect 3) */
			rc = record_terminal(c, TFJOB_EVENT_WARNING, TFJOB__REASON_FAILED, TFJOB__COND_FAILED,
			                     c->perm_failures[i], true);
		}
		for (size_t i = 0; i < TFJOB_ARRAY_LEN(all_types) && !rc; i++) {
			rtype_state *rt = find_type(c, all_types[i]);
			if (!rt || rt->failed == 0 || finished(c))
				continue;
			if (has_restarting)
				rc = cond_set(c, TFJOB__COND_RESTARTING, "True", rreason, rmessage);
			else if (dynamic && !strcmp(rt->key, TFJOB__TYPE_WORKER))
				continue;
			else
				rc = fail_type(c, rt, true);
		}
		/* defect 4: a restart started in this step leaves Restarting True */
		if (!rc && c->restart_started && !finished(c))
			rc = cond_set(c, TFJOB__COND_RESTARTING, "True", TFJOB__REASON_RESTARTING, c->restart_message);
	}
	free(rreason);
	free(rmessage);
	return rc;
}

static int step_normal(ctx *c)
{
	int rc = warn_unlabelled(c, &c->pods, TFJOB_OBJECT_POD);
	if (!rc)
		rc = warn_unlabelled(c, &c->services, TFJOB_OBJECT_SERVICE);
	for (size_t t = 0; t < c->ntypes && !rc; t++) {
		rtype_state *rt = &c->types[t];
		rc = reconcile_children(c, rt, TFJOB_OBJECT_POD);
		if (!rc)
			rc = write_replica_status(c, rt);
		if (!rc)
			rc = reconcile_children(c, rt, TFJOB_OBJECT_SERVICE);
	}
	if (!rc)
		rc = update_status(c);
	return rc;
}

static int step_validation(ctx *c, const char *detail)
{
	char *msg = tfjob__strdup_printf("TFJob %s/%s failed validation: %s", c->ns, c->name, detail);
	if (!msg)
		return tfjob__oom(c->err);
	int rc = record_terminal(c, TFJOB_EVENT_WARNING, TFJOB__REASON_FAILED_VALIDATION, TFJOB__COND_FAILED, msg, true);
	free(msg);
	return rc;
}

/* ---- setup ---- */

/* The objects of a list that are ours: those labelled as another job's children (job-name label of another name) are not. */
static int drop_foreign(ctx *c, sum_list *out, const tfjob_objects *objects)
{
	size_t n = tfjob__objects_size(objects);
	out->n = 0;
	out->items = malloc((n ? n : 1) * sizeof *out->items);
	if (!out->items)
		return tfjob__oom(c->err);
	for (size_t i = 0; i < n; i++) {
		const tfjob__summary *s = &objects->sums[i];
		if (!s->job_name || !strcmp(s->job_name, c->name))
			out->items[out->n++] = s;
	}
	return 0;
}

/* The index of the first type whose label value is `rtype`, or ntypes. */
static size_t type_of_label(ctx *c, const char *rtype)
{
	size_t t = 0;
	while (t < c->ntypes && (rtype[0] != c->types[t].lower[0] || strcmp(rtype, c->types[t].lower)))
		t++;
	return t;
}

/*
 * Hand each type its pods (or services) in list order, in one pass over the list: an object
 * belongs to the first type with its label value; a later type with the same value shares the
 * first one's list.
 */
static void bucket_by_type(ctx *c, const sum_list *objs, const tfjob__summary **storage, size_t *counts,
                           bool pods)
{
	size_t *types = counts + c->ntypes + 1; /* per object: its type (ntypes: none) */
	for (size_t t = 0; t <= c->ntypes; t++)
		counts[t] = 0;
	for (size_t i = 0; i < objs->n; i++) {
		types[i] = objs->items[i]->rtype ? type_of_label(c, objs->items[i]->rtype) : c->ntypes;
		counts[types[i]]++;
	}
	size_t off = 0;
	for (size_t t = 0; t < c->ntypes; t++) {
		sum_list *l = pods ? &c->types[t].pods : &c->types[t].services;
		l->items = storage + off;
		l->n = 0;
		off += counts[t];
	}
	for (size_t i = 0; i < objs->n; i++) {
		if (types[i] == c->ntypes)
			continue;
		sum_list *l = pods ? &c->types[types[i]].pods : &c->types[types[i]].services;
		l->items[l->n++] = objs->items[i];
	}
	for (size_t t = 0; t < c->ntypes; t++) {
		size_t first = type_of_label(c, c->types[t].lower);
		if (first != t) {
			if (pods)
				c->types[t].pods = c->types[first].pods;
			else
				c->types[t].services = c->types[first].services;
		}
	}
}

static int bucket_children(ctx *c)
{
	size_t n = c->pods.n + c->services.n;
	size_t most = c->pods.n > c->services.n ? c->pods.n : c->services.n;
	c->buckets = malloc((n ? n : 1) * sizeof *c->buckets);
	size_t *scratch = malloc((c->ntypes + 1 + most) * sizeof *scratch);
	if (!c->buckets || !scratch) {
		free(scratch);
		return tfjob__oom(c->err);
	}
	bucket_by_type(c, &c->pods, c->buckets, scratch, true);
	bucket_by_type(c, &c->services, c->buckets + c->pods.n, scratch, false);
	free(scratch);
	return 0;
}

static int type_order(const char *key)
{
	for (size_t i = 0; i < TFJOB_ARRAY_LEN(all_types); i++)
		if (!strcmp(all_types[i], key))
			return (int)i;
	return (int)TFJOB_ARRAY_LEN(all_types);
}

static int setup_types(ctx *c)
{
	size_t n = tfjob_job_replica_type_count(c->job);
	c->types = calloc(n ? n : 1, sizeof *c->types);
	if (!c->types)
		return tfjob__oom(c->err);
	/* canonical order (chief, evaluator, master, ps, worker), unknown types after them in document order */
	for (int pass = 0; pass <= (int)TFJOB_ARRAY_LEN(all_types); pass++) {
		for (size_t i = 0; i < n; i++) {
			const char *key = tfjob_job_replica_type(c->job, i);
			if (!key || type_order(key) != pass)
				continue;
			rtype_state *rt = &c->types[c->ntypes++];
			rt->key = key;
			rt->lower = tfjob__strdup(key);
			if (!rt->lower)
				return tfjob__oom(c->err);
			for (char *p = rt->lower; *p; p++)
				*p = (char)((*p >= 'A' && *p <= 'Z') ? *p - 'A' + 'a' : *p);
			rt->replicas = 1;
			tfjob_job_replicas(&rt->replicas, c->job, key);
			if (rt->replicas < 0)
				rt->replicas = 0;
			rt->policy = tfjob_job_restart_policy(c->job, key);
		}
	}
	return 0;
}

/* Validation problems as one message: every field error, "; "-separated. NULL detail = valid. */
static int validation_detail(ctx *c, char **detail)
{
	*detail = NULL;
	tfjob_validate_options vopts = TFJOB_VALIDATE_OPTIONS_INIT;
	vopts.compat = c->compat;
	tfjob_field_errors *errs = NULL;
	int rc = tfjob_job_validate(&errs, c->job, &vopts, c->err);
	if (rc)
		return rc;
	size_t n = tfjob_field_errors_count(errs);
	char *acc = NULL;
	for (size_t i = 0; i < n; i++) {
		char *next = tfjob__strdup_printf("%s%s%s", acc ? acc : "", acc ? "; " : "", tfjob_field_errors_message(errs, i));
		free(acc);
		if (!next) {
			tfjob_field_errors_free(errs);
			return tfjob__oom(c->err);
		}
		acc = next;
	}
	tfjob_field_errors_free(errs);
	*detail = acc;
	return 0;
}

static void compute_requeue(ctx *c)
{
	if (c->job_deleted) {
		if (!c->documented)
			want_requeue(c, 0); /* v1.9 requeues an expired job at once */
		return;
	}
	int64_t ttl = 0, completion = 0, remaining = 0;
	bool has_ttl = tfjob_job_ttl_seconds_after_finished(&ttl, c->job) == 0;
	if (!c->documented) {
		/* DurationUntilExpireTime on tfjob.Status: the old status on the finished, suspended and
		 * limit paths, the new one otherwise; every other timed requeue of v1.9 is dropped. */
		json_t *st = (c->path == PATH_NORMAL || c->path == PATH_VALIDATION) ? c->status : tfjob__status(c->job);
		bool fin = tfjob__cond_true(st, TFJOB__COND_SUCCEEDED) || tfjob__cond_true(st, TFJOB__COND_FAILED);
		if (!fin || !has_ttl)
			return;
		bool has_completion = tfjob__status_get_time(&completion, st, "completionTime") == 0;
		switch (tfjob__ttl_check(&remaining, true, ttl, has_completion, completion, c->now)) {
		case TFJOB__TTL_WAIT:
			want_requeue(c, remaining);
			break;
		default: /* expired: 0; no completionTime: the reconcile errors and is retried at once */
			want_requeue(c, 0);
			break;
		}
		return;
	}
	if (finished(c)) {
		if (has_ttl && tfjob__status_get_time(&completion, c->status, "completionTime") == 0 &&
		    tfjob__ttl_check(&remaining, true, ttl, true, completion, c->now) == TFJOB__TTL_WAIT)
			want_requeue(c, remaining);
		else if (has_ttl)
			want_requeue(c, 0);
		return;
	}
	int64_t deadline = 0, start = 0;
	if (c->path == PATH_NORMAL && tfjob_job_active_deadline_seconds(&deadline, c->job) == 0 &&
	    tfjob__status_get_time(&start, c->status, "startTime") == 0)
		want_requeue(c, start + deadline - c->now);
}

static int plan_step(ctx *c, char *defaults_error)
{
	/* 1. another controller manages the job, or it is being deleted: nothing to do */
	const char *mb = tfjob_job_managed_by(c->job);
	if ((mb && strcmp(mb, MANAGED_BY_US)) ||
	    (json_object_get(tfjob__obj(c->job->root, "metadata"), "deletionTimestamp") &&
	     !json_is_null(json_object_get(tfjob__obj(c->job->root, "metadata"), "deletionTimestamp"))))
		return 0;

	/* 8. Created, when the job is first seen */
	int rc = 0;
	if (!tfjob__cond_find(c->status, TFJOB__COND_CREATED) && !finished(c)) {
		char *msg = tfjob__strdup_printf("TFJob %s is created.", c->name);
		if (!msg)
			return tfjob__oom(c->err);
		rc = cond_set(c, TFJOB__COND_CREATED, "True", TFJOB__REASON_CREATED, msg);
		free(msg);
		if (rc)
			return rc;
	}

	/* 2. finished: cleanup and TTL only (documented: even when suspended, defect 6) */
	if (finished(c)) {
		c->path = PATH_FINISHED;
		rc = step_finished(c);
		if (!rc)
			compute_requeue(c);
		return rc;
	}

	/* a spec that does not validate fails the job; no children are created */
	char *detail = NULL;
	if (defaults_error) {
		detail = tfjob__strdup(defaults_error);
		if (!detail)
			return tfjob__oom(c->err);
	} else if ((rc = validation_detail(c, &detail))) {
		return rc;
	}
	if (detail) {
		c->path = PATH_VALIDATION;
		rc = step_validation(c, detail);
		free(detail);
		if (!rc)
			compute_requeue(c);
		return rc;
	}

	rc = setup_types(c);
	if (!rc)
		rc = bucket_children(c);
	if (rc)
		return rc;

	/* 3. suspended */
	if (tfjob_job_suspend(c->job)) {
		c->path = PATH_SUSPENDED;
		return step_suspended(c);
	}
	/* 4. resumed */
	rc = resume_if_suspended(c);
	if (!rc)
		rc = record_abnormal_pods(c);
	if (rc)
		return rc;

	/* 5. limits */
	char *limit_msg = NULL;
	rc = check_limits(c, &limit_msg);
	if (rc)
		return rc;
	if (limit_msg) {
		c->path = PATH_LIMIT;
		rc = step_limit(c, limit_msg);
		free(limit_msg);
		if (!rc)
			compute_requeue(c);
		return rc;
	}

	/* 6, 7. children and status */
	c->path = PATH_NORMAL;
	rc = step_normal(c);
	if (!rc)
		compute_requeue(c);
	return rc;
}

static void ctx_free(ctx *c)
{
	for (size_t i = 0; i < c->ntypes; i++)
		free(c->types[i].lower);
	free(c->types);
	for (size_t i = 0; i < c->nperm; i++)
		free(c->perm_failures[i]);
	free(c->perm_failures);
	free(c->restart_message);
	free(c->pods.items);
	free(c->services.items);
	free(c->buckets);
	tfjob_job_free(c->job);
}

int tfjob_plan_options_init(tfjob_plan_options *opts, unsigned int version)
{
	if (!opts)
		return TFJOB_EINVAL;
	if (version == 0 || version > TFJOB_PLAN_OPTIONS_VERSION)
		return TFJOB_EVERSION;
	tfjob_plan_options init = TFJOB_PLAN_OPTIONS_INIT;
	init.version = version;
	*opts = init;
	return 0;
}

/* The step itself; the lists (NULL = none) are only read. */
static int plan_new_objects(tfjob_plan **out, const tfjob_job *job, const tfjob_objects *pods,
                            const tfjob_objects *services, const tfjob_plan_options *opts, tfjob_error **err)
{
	int rc = tfjob__check_version(err, opts->version, TFJOB_PLAN_OPTIONS_VERSION, "tfjob_plan_options");
	if (rc)
		return rc;
	if (opts->compat != TFJOB_COMPAT_DOCUMENTED && opts->compat != TFJOB_COMPAT_TRAINING_OPERATOR_1_9)
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_plan_options: unknown compat %d", (int)opts->compat);
	if (!tfjob_job_name(job))
		return tfjob__fail_field(err, TFJOB_EINVAL, "metadata.name", "the job has no metadata.name");
	rc = tfjob__status_check(json_object_get(job->root, "status"), err);
	if (rc)
		return rc;

	ctx c;
	memset(&c, 0, sizeof c);
	c.compat = opts->compat;
	c.documented = opts->compat != TFJOB_COMPAT_TRAINING_OPERATOR_1_9;
	c.now = opts->now;
	c.requeues = opts->requeues;
	tfjob_render_options ropts = TFJOB_RENDER_OPTIONS_INIT;
	if (opts->render)
		ropts = *opts->render;
	ropts.compat = c.compat; /* one behaviour per step */
	c.render = &ropts;
	c.err = err;

	rc = tfjob_job_clone(&c.job, job, err);
	if (rc) {
		ctx_free(&c);
		return rc;
	}
	tfjob_default_options dopts = TFJOB_DEFAULT_OPTIONS_INIT;
	dopts.compat = c.compat;
	tfjob_error *derr = NULL;
	char *defaults_error = NULL;
	rc = tfjob__job_apply_defaults_in_place(c.job, &dopts, &derr); /* c.job is our own clone */
	if (rc == TFJOB_ESCHEMA) {
		defaults_error = tfjob__strdup(tfjob_error_message(derr));
		rc = defaults_error ? 0 : tfjob__oom(err);
	} else if (rc && err) {
		*err = derr;
		derr = NULL;
	}
	tfjob_error_free(derr);
	if (rc) {
		ctx_free(&c);
		return rc;
	}
	c.name = tfjob_job_name(c.job);
	c.ns = tfjob_job_namespace(c.job);
	if (!c.ns)
		c.ns = ropts.default_namespace && *ropts.default_namespace ? ropts.default_namespace : "default";

	c.plan = calloc(1, sizeof *c.plan);
	json_t *old = json_object_get(c.job->root, "status");
	c.status = json_is_object(old) ? json_deep_copy(old) : json_object();
	if (!c.plan || !c.status) {
		rc = tfjob__oom(err);
		goto out;
	}
	c.plan->status = c.status;
	rc = drop_foreign(&c, &c.pods, pods);
	if (!rc)
		rc = drop_foreign(&c, &c.services, services);
	if (!rc)
		rc = plan_step(&c, defaults_error);
	if (!rc) {
		c.plan->status = c.status; /* the finished path may have replaced it */
		json_t *before = json_is_object(old) ? old : NULL;
		json_t *empty = json_object();
		if (!empty) {
			rc = tfjob__oom(err);
		} else {
			c.plan->changed = !json_equal(before ? before : empty, c.status);
			json_decref(empty);
		}
	}
out:
	free(defaults_error);
	if (rc) {
		if (c.plan)
			c.plan->status = c.status;
		else
			json_decref(c.status);
		tfjob_plan_free(c.plan);
	} else {
		*out = c.plan;
	}
	ctx_free(&c);
	return rc;
}

static int check_plan_args(tfjob_plan **out, const tfjob_job *job, const tfjob_plan_options *opts, tfjob_error **err)
{
	if (!out || !job || !opts)
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_plan_new: out, job and opts are required");
	*out = NULL;
	return 0;
}

int tfjob_plan_new(tfjob_plan **out, const tfjob_job *job, const char *pods_json, const char *services_json,
                   const tfjob_plan_options *opts, tfjob_error **err)
{
	int rc = check_plan_args(out, job, opts, err);
	if (rc)
		return rc;
	tfjob_objects *pods = NULL, *services = NULL;
	rc = tfjob__objects_load(&pods, pods_json, pods_json ? strlen(pods_json) : 0, 0, "pods", err);
	if (!rc)
		rc = tfjob__objects_load(&services, services_json, services_json ? strlen(services_json) : 0, 0, "services",
		                         err);
	if (!rc)
		rc = plan_new_objects(out, job, pods, services, opts, err);
	tfjob_objects_free(pods);
	tfjob_objects_free(services);
	return rc;
}

int tfjob_plan_new_with_objects(tfjob_plan **out, const tfjob_job *job, const tfjob_objects *pods,
                                const tfjob_objects *services, const tfjob_plan_options *opts, tfjob_error **err)
{
	int rc = check_plan_args(out, job, opts, err);
	if (rc)
		return rc;
	return plan_new_objects(out, job, pods, services, opts, err);
}

void tfjob_plan_free(tfjob_plan *plan)
{
	if (!plan)
		return;
	for (size_t i = 0; i < plan->count; i++)
		action_clear(&plan->actions[i]);
	free(plan->actions);
	json_decref(plan->status);
	free(plan);
}

/* ---- accessors ---- */

static const struct tfjob__action *action_at(const tfjob_plan *plan, size_t i)
{
	return plan && i < plan->count ? &plan->actions[i] : NULL;
}

size_t tfjob_plan_action_count(const tfjob_plan *plan) { return plan ? plan->count : 0; }

tfjob_action_type tfjob_plan_action_type(const tfjob_plan *plan, size_t i)
{
	const struct tfjob__action *a = action_at(plan, i);
	return a ? a->type : TFJOB_ACTION_EVENT;
}

tfjob_object_kind tfjob_plan_action_kind(const tfjob_plan *plan, size_t i)
{
	const struct tfjob__action *a = action_at(plan, i);
	return a ? a->kind : TFJOB_OBJECT_NONE;
}

const char *tfjob_plan_action_name(const tfjob_plan *plan, size_t i)
{
	const struct tfjob__action *a = action_at(plan, i);
	return a && a->type != TFJOB_ACTION_EVENT ? a->name : NULL;
}

int tfjob_plan_action_object_json(char **out, const tfjob_plan *plan, size_t i, unsigned int flags, tfjob_error **err)
{
	const struct tfjob__action *a = action_at(plan, i);
	if (!out || !a || a->type != TFJOB_ACTION_CREATE || !a->object)
		return tfjob__fail(err, TFJOB_EINVAL, "action %zu is not a create action", i);
	*out = tfjob__dump(a->object, flags);
	return *out ? 0 : tfjob__oom(err);
}

tfjob_event_type tfjob_plan_action_event_type(const tfjob_plan *plan, size_t i)
{
	const struct tfjob__action *a = action_at(plan, i);
	return a && a->type == TFJOB_ACTION_EVENT ? a->event_type : TFJOB_EVENT_NORMAL;
}

const char *tfjob_plan_action_reason(const tfjob_plan *plan, size_t i)
{
	const struct tfjob__action *a = action_at(plan, i);
	return a && a->type == TFJOB_ACTION_EVENT ? a->reason : NULL;
}

const char *tfjob_plan_action_message(const tfjob_plan *plan, size_t i)
{
	const struct tfjob__action *a = action_at(plan, i);
	return a && a->type == TFJOB_ACTION_EVENT ? a->message : NULL;
}

int tfjob_plan_status_json(char **out, const tfjob_plan *plan, unsigned int flags, tfjob_error **err)
{
	if (!out || !plan)
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_plan_status_json: NULL argument");
	*out = tfjob__dump(plan->status, flags);
	return *out ? 0 : tfjob__oom(err);
}

int tfjob_plan_status_changed(const tfjob_plan *plan) { return plan && plan->changed; }

int tfjob_plan_requeue_after(int64_t *out, const tfjob_plan *plan)
{
	if (!out || !plan)
		return TFJOB_EINVAL;
	if (!plan->has_requeue)
		return TFJOB_ENOTFOUND;
	*out = plan->requeue;
	return 0;
}

const char *tfjob_action_type_name(tfjob_action_type type)
{
	switch (type) {
	case TFJOB_ACTION_CREATE: return "create";
	case TFJOB_ACTION_DELETE: return "delete";
	case TFJOB_ACTION_EVENT: return "event";
	}
	return "unknown";
}

const char *tfjob_object_kind_name(tfjob_object_kind kind)
{
	switch (kind) {
	case TFJOB_OBJECT_POD: return "Pod";
	case TFJOB_OBJECT_SERVICE: return "Service";
	case TFJOB_OBJECT_TFJOB: return "TFJob";
	case TFJOB_OBJECT_NONE: break;
	}
	return "";
}

const char *tfjob_event_type_name(tfjob_event_type type) { return type == TFJOB_EVENT_WARNING ? "Warning" : "Normal"; }

static json_t *action_json(const struct tfjob__action *a)
{
	json_t *o = json_object();
	if (!o)
		return NULL;
	int bad = json_object_set_new(o, "action", json_string(tfjob_action_type_name(a->type)));
	if (a->type == TFJOB_ACTION_EVENT) {
		bad |= json_object_set_new(o, "type", json_string(tfjob_event_type_name(a->event_type)));
		bad |= json_object_set_new(o, "reason", json_string(a->reason));
		bad |= json_object_set_new(o, "message", json_string(a->message));
	} else {
		bad |= json_object_set_new(o, "kind", json_string(tfjob_object_kind_name(a->kind)));
		bad |= json_object_set_new(o, "name", json_string(a->name));
		if (a->type == TFJOB_ACTION_CREATE)
			bad |= json_object_set(o, "object", a->object ? a->object : json_null());
	}
	if (bad) {
		json_decref(o);
		return NULL;
	}
	return o;
}

int tfjob_plan_to_json(char **out, const tfjob_plan *plan, unsigned int flags, tfjob_error **err)
{
	if (!out || !plan)
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_plan_to_json: NULL argument");
	json_t *root = json_object(), *actions = json_array();
	int bad = !root || !actions;
	for (size_t i = 0; i < plan->count && !bad; i++)
		bad = json_array_append_new(actions, action_json(&plan->actions[i]));
	if (!bad) {
		bad = json_object_set_new(root, "actions", actions);
		actions = NULL;
	}
	bad = bad || json_object_set(root, "status", plan->status) ||
	      json_object_set_new(root, "statusChanged", json_boolean(plan->changed)) ||
	      json_object_set_new(root, "requeueAfterSeconds",
	                          plan->has_requeue ? json_integer(plan->requeue) : json_null());
	if (bad) {
		json_decref(actions);
		json_decref(root);
		return tfjob__oom(err);
	}
	*out = tfjob__dump(root, flags);
	json_decref(root);
	return *out ? 0 : tfjob__oom(err);
}
