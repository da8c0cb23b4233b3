/*
 * One reconcile step (ReconcileJobs): setup, the order of the paths, the requeue.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "plan/step.h"
#include "util/versioned_structs.h"

static int step_normal(ctx *c)
{
	int rc = tfjob__plan_gang_sync(c);
	if (rc)
		return rc;
	if (c->pods_wait && !c->documented) /* v1.9 reconciles no child and writes only this, to be called again */
		return tfjob__status_set_time(c->status, "lastReconcileTime", c->now) ? tfjob__oom(c->err) : 0;
	rc = tfjob__plan_warn_unlabelled(c, &c->pods, TFJOB_OBJECT_POD);
	if (!rc)
		rc = tfjob__plan_warn_unlabelled(c, &c->services, TFJOB_OBJECT_SERVICE);
	for (size_t t = 0; t < c->ntypes && !rc; t++) {
		rtype_state *rt = &c->types[t];
		rc = tfjob__plan_reconcile_children(c, rt, TFJOB_OBJECT_POD);
		if (!rc)
			rc = tfjob__plan_write_replica_status(c, rt);
		if (!rc)
			rc = tfjob__plan_reconcile_children(c, rt, TFJOB_OBJECT_SERVICE);
	}
	if (!rc)
		rc = tfjob__plan_update_status(c);
	return rc;
}

static int step_validation(ctx *c, const char *detail)
{
	char *msg = tfjob__strdup_printf("TFJob %s/%s failed validation: %s", c->ns, c->name, detail);
	if (!msg)
		return tfjob__oom(c->err);
	int rc = tfjob__plan_record_terminal(c, TFJOB_EVENT_WARNING, TFJOB__REASON_FAILED_VALIDATION, TFJOB__COND_FAILED, msg, true);
	free(msg);
	return rc;
}

/* ---- setup ---- */

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
	for (size_t i = 0; i < TFJOB_ARRAY_LEN(tfjob__plan_all_types); i++)
		if (!strcmp(tfjob__plan_all_types[i], key))
			return (int)i;
	return (int)TFJOB_ARRAY_LEN(tfjob__plan_all_types);
}

static int setup_types(ctx *c)
{
	size_t n = tfjob_job_replica_type_count(c->job);
	c->types = calloc(n ? n : 1, sizeof *c->types);
	if (!c->types)
		return tfjob__oom(c->err);
	/* canonical order (chief, evaluator, master, ps, worker), unknown types after them in document order */
	for (int pass = 0; pass <= (int)TFJOB_ARRAY_LEN(tfjob__plan_all_types); pass++) {
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
	/* The API server has already decided which fields it stores (refused or pruned the others);
	 * a field of a newer Kubernetes that the library's schema lacks must not fail a job. */
	vopts.strict = 0;
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

/* deadline − elapsed, saturated: activeDeadlineSeconds may be any int64 (elapsed is bounded by
 * the RFC 3339 years, so only the subtraction can overflow). */
static int64_t deadline_remaining(int64_t deadline, int64_t elapsed)
{
	if (elapsed < 0 && deadline > INT64_MAX + elapsed)
		return INT64_MAX;
	if (elapsed > 0 && deadline < INT64_MIN + elapsed)
		return INT64_MIN;
	return deadline - elapsed;
}

static void compute_requeue(ctx *c)
{
	if (c->job_deleted) {
		if (!c->documented)
			tfjob__plan_requeue(c, 0); /* v1.9 requeues an expired job at once */
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
			tfjob__plan_requeue(c, remaining);
			break;
		default: /* expired: 0; no completionTime: the reconcile errors and is retried at once */
			tfjob__plan_requeue(c, 0);
			break;
		}
		return;
	}
	if (tfjob__plan_finished(c)) {
		if (has_ttl && tfjob__status_get_time(&completion, c->status, "completionTime") == 0 &&
		    tfjob__ttl_check(&remaining, true, ttl, true, completion, c->now) == TFJOB__TTL_WAIT)
			tfjob__plan_requeue(c, remaining);
		else if (has_ttl)
			tfjob__plan_requeue(c, 0);
		return;
	}
	int64_t deadline = 0, start = 0;
	if (c->path == PATH_NORMAL && tfjob_job_active_deadline_seconds(&deadline, c->job) == 0 &&
	    tfjob__status_get_time(&start, c->status, "startTime") == 0)
		tfjob__plan_requeue(c, deadline_remaining(deadline, c->now - start));
}

/*
 * The job's warnings (tfjob_job_warnings() of the job as given, as tfjobctl and the webhook show
 * them) as Warning events with the rule's reason and the "FIELD: text" message. The Istio rule
 * needs the namespace's labels, which the plan does not see, and is left out.
 */
static int record_warnings(ctx *c)
{
	tfjob_warnings *ws = NULL;
	int rc = tfjob_job_warnings(&ws, c->given, NULL, c->err);
	size_t n = tfjob_warnings_count(ws);
	for (size_t i = 0; i < n && !rc; i++)
		rc = tfjob__plan_event(c, TFJOB_EVENT_WARNING, tfjob_warnings_reason(ws, i), tfjob_warnings_message(ws, i));
	tfjob_warnings_free(ws);
	return rc;
}

/*
 * The steps below are the rows of the table "One step, in order" of docs/semantics.md, named by
 * their number there ("row 8"): the rows are numbered as v1.9's ReconcileJobs orders them, and
 * Created (row 8) is set before the finished path (row 2), as v1.9 does it.
 */

/* Row 1: another controller manages the job, or it is being deleted: the step does nothing. */
static bool left_alone(const ctx *c)
{
	const char *mb = tfjob_job_managed_by(c->job);
	json_t *deleted = json_object_get(tfjob__obj(c->job->root, "metadata"), "deletionTimestamp");
	return (mb && strcmp(mb, TFJOB_MANAGED_BY_TRAINING_OPERATOR)) || (deleted && !json_is_null(deleted));
}

/* Row 8: Created, when the job is first seen (*first_seen then true). */
static int set_created(ctx *c, bool *first_seen)
{
	*first_seen = !tfjob__cond_find(c->status, TFJOB__COND_CREATED) && !tfjob__plan_finished(c);
	if (!*first_seen)
		return 0;
	char *msg = tfjob__strdup_printf("TFJob %s is created.", c->name);
	if (!msg)
		return tfjob__oom(c->err);
	int rc = tfjob__plan_cond_set(c, TFJOB__COND_CREATED, "True", TFJOB__REASON_CREATED, msg);
	free(msg);
	return rc;
}

/* The end of a path that went well (rc 0): its requeue. */
static int with_requeue(ctx *c, int rc)
{
	if (!rc)
		compute_requeue(c);
	return rc;
}

/* A spec that does not validate fails the job and creates no children; *failed then true. */
static int fail_invalid(ctx *c, const char *defaults_error, bool *failed)
{
	char *detail = NULL;
	int rc = 0;
	*failed = false;
	if (defaults_error) {
		if (!(detail = tfjob__strdup(defaults_error)))
			return tfjob__oom(c->err);
	} else if ((rc = validation_detail(c, &detail))) {
		return rc;
	}
	if (!detail)
		return 0;
	*failed = true;
	c->path = PATH_VALIDATION;
	rc = with_requeue(c, step_validation(c, detail));
	free(detail);
	return rc;
}

/* Rows 3 to 7, for a job that validates and is not finished. */
static int step_running_job(ctx *c)
{
	int rc = setup_types(c);
	if (!rc)
		rc = bucket_children(c);
	if (rc)
		return rc;
	/* row 3: suspended */
	if (tfjob_job_is_suspended(c->job)) {
		c->path = PATH_SUSPENDED;
		return tfjob__plan_step_suspended(c);
	}
	/* row 4: resumed */
	rc = tfjob__plan_resume_if_suspended(c);
	if (!rc)
		rc = tfjob__plan_record_abnormal_pods(c);
	if (rc)
		return rc;
	/* row 5: limits */
	char *limit_msg = NULL;
	if ((rc = tfjob__plan_check_limits(c, &limit_msg)))
		return rc;
	if (limit_msg) {
		c->path = PATH_LIMIT;
		rc = with_requeue(c, tfjob__plan_step_limit(c, limit_msg));
		free(limit_msg);
		return rc;
	}
	/* rows 6 and 7: children and status */
	c->path = PATH_NORMAL;
	return with_requeue(c, step_normal(c));
}

static int plan_step(ctx *c, const tfjob_objects *pods, const tfjob_objects *services, char *defaults_error)
{
	if (left_alone(c)) /* row 1 */
		return 0;
	/* the job's children, by their controller reference (adopted and released ones too) */
	c->all_services = services;
	int rc = tfjob__plan_claim_children(c, &c->pods, pods, TFJOB_OBJECT_POD);
	if (!rc)
		rc = tfjob__plan_claim_children(c, &c->services, services, TFJOB_OBJECT_SERVICE);
	bool first_seen = false, invalid = false;
	if (!rc)
		rc = set_created(c, &first_seen); /* row 8 */
	if (rc)
		return rc;
	/* row 2: finished: cleanup and TTL only (documented: even when suspended, defect 6) */
	if (tfjob__plan_finished(c)) {
		c->path = PATH_FINISHED;
		return with_requeue(c, tfjob__plan_step_finished(c));
	}
	if ((rc = fail_invalid(c, defaults_error, &invalid)) || invalid)
		return rc;
	/* documented: the warnings of an admitted job, once (with Created) */
	if (c->documented && first_seen && (rc = record_warnings(c)))
		return rc;
	return step_running_job(c);
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
	json_decref(c->pod_group);
	tfjob_job_free(c->job);
}

/* The plan options a step can run with; 0 or TFJOB_EINVAL naming what is wrong. */
static int check_options(const tfjob_plan_options *opts, const tfjob_job *job, tfjob_error **err)
{
	if (opts->compat != TFJOB_COMPAT_DOCUMENTED && opts->compat != TFJOB_COMPAT_TRAINING_OPERATOR_1_9)
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_plan_options: unknown compat %d", (int)opts->compat);
	/* the times a status can hold (RFC 3339, years 0000-9999): all time arithmetic stays in int64 */
	if (opts->now < TFJOB__TIME_MIN || opts->now > TFJOB__TIME_MAX)
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_plan_options: now %" PRId64 " is outside the years 0000-9999",
		                   opts->now);
	if (!tfjob_job_name(job))
		return tfjob__fail_field(err, TFJOB_EINVAL, "metadata.name", "the job has no metadata.name");
	return tfjob__status_check(json_object_get(job->root, "status"), err);
}

/* c->job: a copy of the job with the defaults of the step's compat. A spec the defaults cannot
 * read (TFJOB_ESCHEMA) is not an error of the step: *defaults_error says why, and the step fails
 * the job for it. */
static int defaulted_copy(ctx *c, const tfjob_job *job, char **defaults_error, tfjob_error **err)
{
	int rc = tfjob_job_clone(&c->job, job, err);
	if (rc)
		return rc;
	tfjob_default_options dopts = TFJOB_DEFAULT_OPTIONS_INIT;
	dopts.compat = c->compat;
	tfjob_error *derr = NULL;
	rc = tfjob__job_apply_defaults_in_place(c->job, &dopts, &derr); /* c->job is our own clone */
	if (rc == TFJOB_ESCHEMA) {
		*defaults_error = tfjob__strdup(tfjob_error_message(derr));
		rc = *defaults_error ? 0 : tfjob__oom(err);
	} else if (rc && err) {
		*err = derr;
		derr = NULL;
	}
	tfjob_error_free(derr);
	return rc;
}

/* The job's identity (name, uid, namespace) and the PodGroup the caller observed. */
static int read_identity(ctx *c, const tfjob_plan_options *opts, tfjob_error **err)
{
	c->name = tfjob_job_name(c->job);
	c->uid = tfjob__str(tfjob__obj(c->job->root, "metadata"), "uid");
	if (!c->uid)
		c->uid = "";
	c->ns = tfjob_job_namespace(c->job);
	if (!c->ns)
		c->ns = c->render->default_namespace && *c->render->default_namespace ? c->render->default_namespace
		                                                                      : "default";
	if (!opts->pod_group_json) /* the copy of a version-1 caller's options has NULL here */
		return 0;
	int rc = tfjob__load_one(&c->pod_group, opts->pod_group_json, strlen(opts->pod_group_json), "pod group", err);
	if (!rc && !json_is_object(c->pod_group))
		rc = tfjob__fail(err, TFJOB_ESCHEMA, "pod group: must be an object");
	return rc;
}

/* Run the step on a prepared context: the plan, its status and whether the status changed. */
static int make_plan(ctx *c, const tfjob_objects *pods, const tfjob_objects *services, char *defaults_error,
                     tfjob_error **err)
{
	c->plan = calloc(1, sizeof *c->plan);
	json_t *old = json_object_get(c->job->root, "status");
	c->status = json_is_object(old) ? json_deep_copy(old) : json_object();
	if (!c->plan || !c->status)
		return tfjob__oom(err);
	c->plan->status = c->status;
	int rc = plan_step(c, pods, services, defaults_error);
	if (rc)
		return rc;
	c->plan->status = c->status; /* the finished path may have replaced it */
	json_t *empty = json_object();
	if (!empty)
		return tfjob__oom(err);
	c->plan->changed = !json_equal(json_is_object(old) ? old : empty, c->status);
	json_decref(empty);
	return 0;
}

/* The step itself; the lists (NULL = none) are only read. */
int tfjob__plan_run(tfjob_plan **out, const tfjob_job *job, const tfjob_objects *pods,
                            const tfjob_objects *services, const tfjob_plan_options *caller_opts, tfjob_error **err)
{
	tfjob_plan_options opts;
	int rc = tfjob__versioned_copy(&tfjob__plan_options_v, &opts, caller_opts, err);
	if (!rc)
		rc = check_options(&opts, job, err);
	tfjob_render_options ropts;
	if (!rc)
		rc = tfjob__versioned_copy(&tfjob__render_options_v, &ropts, opts.render, err);
	if (rc)
		return rc;
	ctx c;
	memset(&c, 0, sizeof c);
	c.compat = opts.compat;
	c.documented = opts.compat != TFJOB_COMPAT_TRAINING_OPERATOR_1_9;
	c.now = opts.now;
	c.requeues = opts.requeues;
	ropts.compat = c.compat; /* one behaviour per step */
	c.render = &ropts;
	c.err = err;
	c.given = job;
	char *defaults_error = NULL;
	rc = defaulted_copy(&c, job, &defaults_error, err);
	if (!rc)
		rc = read_identity(&c, &opts, err);
	if (!rc)
		rc = make_plan(&c, pods, services, defaults_error, err);
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
