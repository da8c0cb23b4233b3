/*
 * Helpers for the planner tests.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "planutil.h"

static void lower(char *out, const char *in)
{
	for (; *in; in++)
		*out++ = (char)((*in >= 'A' && *in <= 'Z') ? *in - 'A' + 'a' : *in);
	*out = 0;
}

tfjob_job *pu_job(const pu_replica *replicas, const char *run_policy, const char *extra_spec, const char *status)
{
	char specs[8192] = "";
	for (const pu_replica *r = replicas; r && r->type; r++) {
		char one[1024];
		char pol[64] = "";
		if (r->policy)
			snprintf(pol, sizeof pol, "\"restartPolicy\":\"%s\",", r->policy);
		snprintf(one, sizeof one,
		         "%s\"%s\":{\"replicas\":%d,%s\"template\":{\"spec\":{\"containers\":[{\"name\":\"tensorflow\","
		         "\"image\":\"tf:2\"}]}}}",
		         specs[0] ? "," : "", r->type, r->replicas, pol);
		strcat(specs, one);
	}
	size_t cap = strlen(specs) + 4096 + (status ? strlen(status) : 0);
	char *text = malloc(cap);
	ck_assert_ptr_nonnull(text);
	snprintf(text, cap,
	         "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"job\",\"namespace\":\"ns\","
	         "\"uid\":\"u-1\"},\"spec\":{%s%s\"runPolicy\":{%s},\"tfReplicaSpecs\":{%s}}%s%s}",
	         extra_spec ? extra_spec : "", extra_spec ? "," : "", run_policy ? run_policy : "", specs,
	         status ? ",\"status\":" : "", status ? status : "");
	tfjob_job *job = tu_parse(text);
	free(text);
	return job;
}

/* The controller reference of pu_job()'s job, as the children it creates carry it. */
static json_t *job_owner_refs(void)
{
	return json_pack("[{s:s,s:s,s:s,s:s,s:b,s:b}]", "apiVersion", "kubeflow.org/v1", "kind", "TFJob", "name", "job",
	                 "uid", "u-1", "controller", 1, "blockOwnerDeletion", 1);
}

static json_t *pod_json(const pu_pod *p)
{
	char lt[64], name[128], idx[16];
	lower(lt, p->type);
	snprintf(name, sizeof name, "job-%s-%d", lt, p->index);
	snprintf(idx, sizeof idx, "%d", p->index);
	json_t *pod = json_pack("{s:s,s:s,s:{s:s,s:s,s:{s:s,s:s,s:s,s:s}},s:{s:s}}", "apiVersion", "v1", "kind", "Pod",
	                        "metadata", "name", name, "namespace", "ns", "labels", "training.kubeflow.org/operator-name",
	                        "tfjob-controller", "training.kubeflow.org/job-name", "job",
	                        "training.kubeflow.org/replica-type", lt, "training.kubeflow.org/replica-index", idx,
	                        "status", "phase", p->phase);
	json_t *cs = json_pack("{s:s,s:i,s:{}}", "name", "tensorflow", "restartCount", p->restarts, "state");
	if (p->exit_code >= 0)
		json_object_set_new(json_object_get(cs, "state"), "terminated", json_pack("{s:i}", "exitCode", p->exit_code));
	else if (!strcmp(p->phase, "Running"))
		json_object_set_new(json_object_get(cs, "state"), "running", json_object());
	json_object_set_new(json_object_get(pod, "status"), "containerStatuses", json_pack("[o]", cs));
	if (p->deleting)
		json_object_set_new(json_object_get(pod, "metadata"), "deletionTimestamp", json_string("2024-01-01T00:00:00Z"));
	json_object_set_new(json_object_get(pod, "metadata"), "ownerReferences", job_owner_refs());
	return pod;
}

char *pu_pods(const pu_pod *pods, size_t count)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < count; i++)
		json_array_append_new(arr, pod_json(&pods[i]));
	char *s = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	return s;
}

char *pu_services_for(const pu_replica *replicas)
{
	json_t *arr = json_array();
	for (const pu_replica *r = replicas; r && r->type; r++) {
		for (int i = 0; i < r->replicas; i++) {
			char lt[64], name[128], idx[16];
			lower(lt, r->type);
			snprintf(name, sizeof name, "job-%s-%d", lt, i);
			snprintf(idx, sizeof idx, "%d", i);
			json_array_append_new(arr, json_pack("{s:s,s:s,s:{s:s,s:o,s:{s:s,s:s,s:s,s:s}}}", "apiVersion", "v1",
			                                     "kind", "Service", "metadata", "name", name, "ownerReferences",
			                                     job_owner_refs(), "labels", "training.kubeflow.org/operator-name",
			                                     "tfjob-controller", "training.kubeflow.org/job-name", "job",
			                                     "training.kubeflow.org/replica-type", lt,
			                                     "training.kubeflow.org/replica-index", idx));
		}
	}
	char *s = json_dumps(arr, JSON_COMPACT);
	json_decref(arr);
	return s;
}

tfjob_plan *pu_plan(const tfjob_job *job, const char *pods, const char *services, tfjob_compat compat, int64_t now,
                    int64_t requeues)
{
	tfjob_plan_options opts = TFJOB_PLAN_OPTIONS_INIT;
	opts.compat = compat;
	opts.now = now;
	opts.requeues = requeues;
	tfjob_plan *plan = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_plan_new(&plan, job, pods, services, &opts, &err);
	ck_assert_msg(rc == 0, "tfjob_plan_new: %s", tfjob_error_message(err));
	tfjob_error_free(err);
	return plan;
}

json_t *pu_status(const tfjob_plan *plan)
{
	char *text = NULL;
	ck_assert_int_eq(tfjob_plan_status_json(&text, plan, 0, NULL), 0);
	json_t *v = json_loads(text, 0, NULL);
	tfjob_free(text);
	ck_assert_ptr_nonnull(v);
	return v;
}

static char buf[4096];

static const char *cond_field(const tfjob_plan *plan, const char *type, const char *field)
{
	json_t *st = pu_status(plan);
	json_t *conds = json_object_get(st, "conditions");
	size_t i;
	json_t *c;
	const char *res = NULL;
	json_array_foreach(conds, i, c) {
		if (!strcmp(json_string_value(json_object_get(c, "type")), type)) {
			const char *v = json_string_value(json_object_get(c, field));
			if (v) {
				snprintf(buf, sizeof buf, "%s", v);
				res = buf;
			}
		}
	}
	json_decref(st);
	return res;
}

const char *pu_cond(const tfjob_plan *plan, const char *type) { return cond_field(plan, type, "status"); }
const char *pu_cond_reason(const tfjob_plan *plan, const char *type) { return cond_field(plan, type, "reason"); }

int64_t pu_count(const tfjob_plan *plan, const char *type, const char *key)
{
	json_t *st = pu_status(plan);
	json_int_t v = json_integer_value(json_object_get(json_object_get(json_object_get(st, "replicaStatuses"), type), key));
	json_decref(st);
	return v;
}

const char *pu_time(const tfjob_plan *plan, const char *key)
{
	json_t *st = pu_status(plan);
	const char *v = json_string_value(json_object_get(st, key));
	const char *res = NULL;
	if (v) {
		snprintf(buf, sizeof buf, "%s", v);
		res = buf;
	}
	json_decref(st);
	return res;
}

int pu_actions(const tfjob_plan *plan, tfjob_action_type type, tfjob_object_kind kind, const char *what)
{
	int n = 0;
	for (size_t i = 0; i < tfjob_plan_action_count(plan); i++) {
		if (tfjob_plan_action_type(plan, i) != type)
			continue;
		if (type == TFJOB_ACTION_EVENT) {
			if (!what || !strcmp(tfjob_plan_action_reason(plan, i), what))
				n++;
		} else if (tfjob_plan_action_kind(plan, i) == kind &&
		           (!what || !strcmp(tfjob_plan_action_name(plan, i), what))) {
			n++;
		}
	}
	return n;
}

int pu_event(const tfjob_plan *plan, const char *reason)
{
	for (size_t i = 0; i < tfjob_plan_action_count(plan); i++)
		if (tfjob_plan_action_type(plan, i) == TFJOB_ACTION_EVENT && !strcmp(tfjob_plan_action_reason(plan, i), reason))
			return (int)i;
	return -1;
}

int64_t pu_requeue(const tfjob_plan *plan)
{
	int64_t v;
	return tfjob_plan_requeue_after(&v, plan) == 0 ? v : -1;
}
