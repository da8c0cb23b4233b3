/*
 * The paths that end a step early (finished, suspended, limits), resume, and the abnormal pods.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "plan/step.h"

/* ---- cleanup ---- */

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/*
 * DeletePodsAndServices: each selected pod and the service of the same name. An object already
 * being deleted is not deleted again, but the service of a pod being deleted still is (v1.9
 * deletes it by the pod's name, whoever owns it; it would otherwise stay until the TFJob goes).
 */
static int delete_pods_and_services(ctx *c, bool is_finished)
{
	const char *policy = tfjob_job_clean_pod_policy(c->job);
	const char **going = NULL; /* names of the observed services being deleted, sorted */
	size_t ngoing = 0, nall = tfjob__objects_size(c->all_services);
	const tfjob__summary *all = nall ? c->all_services->sums : NULL;
	for (size_t i = 0; i < nall; i++)
		if (all[i].deleting && all[i].name)
			ngoing++;
	if (ngoing) {
		going = malloc(ngoing * sizeof *going);
		if (!going)
			return tfjob__oom(c->err);
		ngoing = 0;
		for (size_t i = 0; i < nall; i++)
			if (all[i].deleting && all[i].name)
				going[ngoing++] = all[i].name;
		qsort(going, ngoing, sizeof *going, cmp_name);
	}
	int rc = 0;
	for (size_t i = 0; i < c->pods.n && !rc; i++) {
		const tfjob__summary *pod = c->pods.items[i];
		if (!tfjob__cleanup_deletes(policy, pod->phase, is_finished))
			continue;
		const char *n = pod->name;
		if (!n)
			continue;
		if (!pod->deleting)
			rc = tfjob__plan_object_action(c, TFJOB_ACTION_DELETE, TFJOB_OBJECT_POD, n, NULL);
		if (!rc && !(ngoing && bsearch(&n, going, ngoing, sizeof *going, cmp_name)))
			rc = tfjob__plan_object_action(c, TFJOB_ACTION_DELETE, TFJOB_OBJECT_SERVICE, n, NULL);
	}
	free(going);
	return rc;
}

static int delete_job(ctx *c)
{
	int rc = tfjob__plan_object_action(c, TFJOB_ACTION_DELETE, TFJOB_OBJECT_TFJOB, c->name, NULL);
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
	if (!c->documented && tfjob_job_is_suspended(c->job))
		return 0; /* defect 6: v1.9 never deletes a suspended finished job */
	bool has_completion = tfjob__status_get_time(&completion, c->status, "completionTime") == 0;
	if (!has_completion && c->documented) {
		/* never leave completionTime unset on a finished job */
		int rc = tfjob__plan_set_completion(c);
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
			tfjob__plan_requeue(c, remaining); /* v1.9's AddAfter goes to a queue that drops it */
		return 0;
	default:
		return 0;
	}
}

/* ---- finished, suspended, resumed ---- */

/* The pod's replica-type label names the spec key `type` (the label is the key in lower case). */
static bool label_names(const char *label, const char *type)
{
	for (; *label && *type; label++, type++) {
		char t = (char)((*type >= 'A' && *type <= 'Z') ? *type - 'A' + 'a' : *type);
		if (*label != t)
			return false;
	}
	return !*label && !*type;
}

/*
 * Documented replicaStatuses of a finished job (the Kubeflow docs: active = running pods,
 * succeeded / failed = pods that completed so), not v1.9's (which moves `active` into `succeeded`
 * when the job succeeded, and leaves `active` alone when it failed, pods deleted or not).
 * active: the type's Running pods that stay (not being deleted, not deleted by this step's
 * cleanup); succeeded / failed: the larger of the recorded count and the pods now in that phase
 * (the cleanup may have deleted the pods counted before; a pod kept running may complete later).
 */
static int recount_finished(ctx *c)
{
	const char *policy = tfjob_job_clean_pod_policy(c->job);
	size_t ntypes = tfjob_job_replica_type_count(c->job);
	for (size_t t = 0; t < ntypes; t++) {
		const char *type = tfjob_job_replica_type(c->job, t);
		if (!type)
			continue;
		int64_t active = 0, succeeded = 0, failed = 0;
		for (size_t i = 0; i < c->pods.n; i++) {
			const tfjob__summary *pod = c->pods.items[i];
			if (!pod->rtype || !label_names(pod->rtype, type))
				continue;
			if (pod->phase_kind == TFJOB__PHASE_SUCCEEDED)
				succeeded++;
			else if (pod->phase_kind == TFJOB__PHASE_FAILED)
				failed++;
			else if (pod->phase_kind == TFJOB__PHASE_RUNNING && !pod->deleting &&
			         !tfjob__cleanup_deletes(policy, pod->phase, true))
				active++;
		}
		json_t *rs = json_object_get(c->status, "replicaStatuses");
		json_t *old = json_is_object(rs) ? json_object_get(rs, type) : NULL;
		if (!json_is_object(old) && !active && !succeeded && !failed)
			continue; /* nothing to say: no entry is made for it */
		int64_t was_succeeded = json_is_object(old) ? tfjob__plan_get_count(old, "succeeded") : 0;
		int64_t was_failed = json_is_object(old) ? tfjob__plan_get_count(old, "failed") : 0;
		json_t *st = old;
		if (!json_is_object(st)) {
			rs = tfjob__plan_replica_statuses(c);
			if (!rs || json_object_set_new(rs, type, st = json_object()))
				return tfjob__oom(c->err);
		}
		if (tfjob__plan_set_count(st, "active", active) ||
		    tfjob__plan_set_count(st, "succeeded", succeeded > was_succeeded ? succeeded : was_succeeded) ||
		    tfjob__plan_set_count(st, "failed", failed > was_failed ? failed : was_failed))
			return tfjob__oom(c->err);
	}
	return 0;
}

int tfjob__plan_step_finished(ctx *c)
{
	int rc = delete_pods_and_services(c, true);
	if (!rc)
		rc = tfjob__plan_gang_delete(c);
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
		tfjob__plan_requeue(c, 0);
		return 0;
	}
	if (c->documented)
		return recount_finished(c);
	if (tfjob__cond_true(c->status, TFJOB__COND_SUCCEEDED)) {
		json_t *rs = json_object_get(c->status, "replicaStatuses");
		const char *key;
		json_t *v;
		json_object_foreach(rs, key, v) {
			if (!json_is_object(v))
				continue;
			if (tfjob__plan_set_count(v, "succeeded", tfjob__plan_get_count(v, "succeeded") + tfjob__plan_get_count(v, "active")) ||
			    tfjob__plan_set_count(v, "active", 0))
				return tfjob__oom(c->err);
		}
	}
	return 0;
}

int tfjob__plan_step_suspended(ctx *c)
{
	int rc = delete_pods_and_services(c, false);
	if (!rc)
		rc = tfjob__plan_gang_delete(c);
	if (rc)
		return rc;
	json_t *rs = json_object_get(c->status, "replicaStatuses");
	const char *key;
	json_t *v;
	json_object_foreach(rs, key, v) {
		if (json_is_object(v) && tfjob__plan_set_count(v, "active", 0))
			return tfjob__oom(c->err);
	}
	char *msg = tfjob__strdup_printf("TFJob %s is suspended.", c->name);
	if (!msg)
		return tfjob__oom(c->err);
	if (tfjob__cond_true(c->status, TFJOB__COND_RUNNING))
		rc = tfjob__plan_cond_set(c, TFJOB__COND_RUNNING, "False", TFJOB__REASON_SUSPENDED, msg);
	if (!rc && !tfjob__cond_true(c->status, TFJOB__COND_SUSPENDED))
		rc = tfjob__plan_cond_set(c, TFJOB__COND_SUSPENDED, "True", TFJOB__REASON_SUSPENDED, msg);
	if (!rc)
		rc = tfjob__plan_event(c, TFJOB_EVENT_NORMAL, TFJOB__REASON_SUSPENDED, msg);
	free(msg);
	return rc;
}

int tfjob__plan_resume_if_suspended(ctx *c)
{
	if (!tfjob__cond_true(c->status, TFJOB__COND_SUSPENDED))
		return 0;
	char *msg = tfjob__strdup_printf("TFJob %s is resumed.", c->name);
	if (!msg)
		return tfjob__oom(c->err);
	int rc = tfjob__plan_cond_set(c, TFJOB__COND_SUSPENDED, "False", TFJOB__REASON_RESUMED, msg);
	if (!rc && tfjob__status_set_time(c->status, "startTime", c->now))
		rc = tfjob__oom(c->err);
	if (!rc)
		rc = tfjob__plan_event(c, TFJOB_EVENT_NORMAL, TFJOB__REASON_RESUMED, msg);
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
			rc = tfjob__plan_eventf(c, TFJOB_EVENT_WARNING, tfjob__str(term, "reason"),
			                "Error pod %s container %s exitCode: %" PRId64 " terminated message: %s", pn, cn, code,
			                m ? m : "");
		}
		const char *wm = tfjob__str(wait, "message");
		if (!rc && wait && wm && *wm)
			rc = tfjob__plan_eventf(c, TFJOB_EVENT_WARNING, tfjob__str(wait, "reason"),
			                "Error pod %s container %s waiting message: %s", pn, cn, wm);
		if (rc)
			return rc;
	}
	return 0;
}

int tfjob__plan_record_abnormal_pods(ctx *c)
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
			rc = tfjob__plan_eventf(c, TFJOB_EVENT_WARNING, tfjob__str(latest, "reason"),
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
int tfjob__plan_check_limits(ctx *c, char **message)
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
			prev_failed += tfjob__plan_get_count(v, "failed");
		bool exceeds = failed > prev_failed && active != total && c->requeues >= limit; /* requeues + 1 > limit, without overflow */

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

/*
 * A limit failure, as v1.9.4 (kubeflow/trainer #3419) and the documented mode: the job is Failed
 * before its children are cleaned up, so cleanPodPolicy decides which pods go (None: none,
 * Running: the Running and Pending ones), as on every later step of the finished job.
 */
int tfjob__plan_step_limit(ctx *c, const char *message)
{
	int rc = tfjob__plan_set_completion(c);
	if (!rc)
		rc = tfjob__plan_event(c, TFJOB_EVENT_NORMAL, TFJOB__REASON_FAILED, message);
	if (!rc)
		rc = tfjob__plan_cond_set(c, TFJOB__COND_FAILED, "True", TFJOB__REASON_FAILED, message);
	if (!rc)
		rc = delete_pods_and_services(c, true);
	if (!rc) {
		rc = cleanup_job(c);
		if (rc == 1)
			rc = 0; /* cannot happen: completionTime was just set */
	}
	if (!rc)
		rc = tfjob__plan_gang_delete(c);
	if (!rc && c->documented)
		rc = recount_finished(c); /* v1.9 writes the counts of the last step again */
	return rc;
}
