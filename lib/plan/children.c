/*
 * ReconcilePods / ReconcileServices: the children of each replica type.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "plan/step.h"

/* ---- reading observed objects (their summaries, core/objects.h) ---- */

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
			int rc = tfjob__plan_eventf(c, TFJOB_EVENT_WARNING, "InvalidReplicaIndex",
			                    "Error obtaining replica index from %s %s/%s: %s %s; ignored.", kind_word(kind),
			                    c->ns, s->name ? s->name : "(unnamed)", idx ? "bad label" : "missing label",
			                    idx ? idx : TFJOB_LABEL_REPLICA_INDEX);
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
int tfjob__plan_warn_unlabelled(ctx *c, const sum_list *objs, tfjob_object_kind kind)
{
	for (size_t i = 0; i < objs->n; i++) {
		const tfjob__summary *s = objs->items[i];
		if (s->rtype)
			continue;
		int rc = tfjob__plan_eventf(c, TFJOB_EVENT_WARNING, "InvalidReplicaType",
		                    "%s %s/%s has no %s label; ignored.", kind_word(kind), c->ns,
		                    s->name ? s->name : "(unnamed)", TFJOB_LABEL_REPLICA_TYPE);
		if (rc)
			return rc;
	}
	return 0;
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

/* With gang scheduling: some replica's template names a scheduler other than the gang scheduler. */
static bool custom_scheduler_set(ctx *c)
{
	if (c->render->gang_scheduler == TFJOB_GANG_NONE)
		return false;
	const char *gang = c->render->scheduler_name && *c->render->scheduler_name ? c->render->scheduler_name
	                   : c->render->gang_scheduler == TFJOB_GANG_VOLCANO ? "volcano" : "scheduler-plugins-scheduler";
	const char *key;
	json_t *spec;
	json_object_foreach(tfjob__replica_specs(c->job), key, spec) {
		const char *sn = tfjob__str(tfjob__pod_spec(spec), "schedulerName");
		if (sn && *sn && strcmp(sn, gang))
			return true;
	}
	return false;
}

static int create_child(ctx *c, rtype_state *rt, int64_t index, tfjob_object_kind kind)
{
	json_t *obj = NULL;
	int rc;
	if (kind == TFJOB_OBJECT_POD) {
		const char *pol = tfjob__str(tfjob__pod_spec(tfjob__replica_spec(c->job, rt->key)), "restartPolicy");
		if (pol && *pol) {
			rc = tfjob__plan_event(c, TFJOB_EVENT_WARNING, "SetPodTemplateRestartPolicy",
			               "Restart policy in pod template will be overwritten by restart policy in replica spec");
			if (rc)
				return rc;
		}
		/* v1.9 warns on every pod it creates; the template's scheduler is kept */
		if (custom_scheduler_set(c)) {
			rc = tfjob__plan_event(c, TFJOB_EVENT_WARNING, "SetPodTemplateSchedulerName",
			                       "Another scheduler is specified when gang-scheduling is enabled and it will not be "
			                       "overwritten");
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
	return tfjob__plan_object_action(c, TFJOB_ACTION_CREATE, kind, name_of(obj), obj);
}

static int handle_failed_pod(ctx *c, rtype_state *rt, const tfjob__summary *pod, int64_t code)
{
	const char *pol = rt->policy ? rt->policy : "";
	bool exitcode = !strcmp(pol, "ExitCode");
	bool retryable = tfjob_exit_code_classify((int)code, c->compat) == TFJOB_EXIT_RETRYABLE;
	if ((exitcode && retryable) || !strcmp(pol, "OnFailure") || !strcmp(pol, "Always")) {
		int rc = 0;
		if (!pod->deleting && pod->name)
			rc = tfjob__plan_object_action(c, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, pod->name, NULL);
		char *msg = tfjob__strdup_printf("job %s is restarting because %s replica(s) failed.", c->name, rt->key);
		if (!msg)
			return tfjob__oom(c->err);
		if (!rc)
			rc = tfjob__plan_event(c, TFJOB_EVENT_WARNING, TFJOB__REASON_RESTARTING, msg);
		if (!rc)
			rc = tfjob__plan_cond_set(c, TFJOB__COND_RESTARTING, "True", TFJOB__REASON_RESTARTING, msg);
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
		int rc = tfjob__plan_event(c, TFJOB_EVENT_WARNING, TFJOB__REASON_FAILED, msg);
		if (!rc)
			rc = tfjob__plan_cond_set(c, TFJOB__COND_FAILED, "True", TFJOB__REASON_FAILED, msg);
		free(msg);
		return rc;
	}
	return 0; /* Never: counted as failed below */
}

static int handle_pod(ctx *c, rtype_state *rt, int64_t index, const tfjob__summary *pod)
{
	int rc = 0;
	if (index >= rt->replicas && !pod->deleting && pod->name)
		rc = tfjob__plan_object_action(c, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, pod->name, NULL);
	int64_t code = pod->exit_code;
	if (!rc && pod->exit_found)
		rc = tfjob__plan_eventf(c, TFJOB_EVENT_NORMAL, "ExitedWithCode", "Pod: %s.%s exited with code %" PRId64, c->ns,
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
int tfjob__plan_reconcile_children(ctx *c, rtype_state *rt, tfjob_object_kind kind)
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
			rc = tfjob__plan_eventf(c, TFJOB_EVENT_WARNING, kind == TFJOB_OBJECT_POD ? "TooManyPods" : "TooManyServices",
			                "We have too many %s for %s %" PRId64, kind == TFJOB_OBJECT_POD ? "pods" : "services",
			                kind == TFJOB_OBJECT_POD ? rt->lower : rt->key, next);
		} else if (k == 0) {
			rc = create_child(c, rt, next, kind);
		} else if (kind == TFJOB_OBJECT_POD) {
			rc = handle_pod(c, rt, next, list[j].sum);
		} else if (next >= rt->replicas && !list[j].sum->deleting && list[j].sum->name) {
			rc = tfjob__plan_object_action(c, TFJOB_ACTION_DELETE, TFJOB_OBJECT_SERVICE, list[j].sum->name, NULL);
		}
		j += k;
		idx = next + 1;
	}
	free(list);
	return rc;
}

int tfjob__plan_write_replica_status(ctx *c, rtype_state *rt)
{
	json_t *rs = tfjob__plan_replica_statuses(c);
	json_t *st = json_object();
	if (!rs || !st || tfjob__plan_set_count(st, "active", rt->active) || tfjob__plan_set_count(st, "succeeded", rt->succeeded) ||
	    tfjob__plan_set_count(st, "failed", rt->failed)) {
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
