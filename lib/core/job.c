/*
 * The TFJob handle: parsing, serialisation and typed accessors.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "parse/doc.h"
#include "core/fielderr.h"
#include "core/job.h"
#include "util/sbuf.h"

static const char *const canonical_types[] = { TFJOB__TYPE_PS, TFJOB__TYPE_WORKER, TFJOB__TYPE_CHIEF,
	                                           TFJOB__TYPE_MASTER, TFJOB__TYPE_EVALUATOR };

const char *tfjob__canonical_type(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < TFJOB_ARRAY_LEN(canonical_types); i++)
		if (!strcasecmp(name, canonical_types[i]))
			return canonical_types[i];
	return NULL;
}

bool tfjob__is_chief_or_master(const char *type, bool ignore_case)
{
	if (!type)
		return false;
	if (ignore_case)
		return !strcasecmp(type, TFJOB__TYPE_CHIEF) || !strcasecmp(type, TFJOB__TYPE_MASTER);
	return !strcmp(type, TFJOB__TYPE_CHIEF) || !strcmp(type, TFJOB__TYPE_MASTER);
}

json_t *tfjob__obj(json_t *parent, const char *key)
{
	json_t *v = json_object_get(parent, key);
	return json_is_object(v) ? v : NULL;
}

json_t *tfjob__arr(json_t *parent, const char *key)
{
	json_t *v = json_object_get(parent, key);
	return json_is_array(v) ? v : NULL;
}

const char *tfjob__str(json_t *parent, const char *key) { return json_string_value(json_object_get(parent, key)); }

int tfjob__int(int64_t *out, json_t *parent, const char *key)
{
	json_t *v = json_object_get(parent, key);
	if (!json_is_integer(v))
		return TFJOB_ENOTFOUND;
	*out = (int64_t)json_integer_value(v);
	return 0;
}

json_t *tfjob__spec(const tfjob_job *job) { return job ? tfjob__obj(job->root, "spec") : NULL; }
json_t *tfjob__run_policy(const tfjob_job *job) { return tfjob__obj(tfjob__spec(job), "runPolicy"); }
json_t *tfjob__replica_specs(const tfjob_job *job) { return tfjob__obj(tfjob__spec(job), "tfReplicaSpecs"); }
json_t *tfjob__status(const tfjob_job *job) { return job ? tfjob__obj(job->root, "status") : NULL; }

json_t *tfjob__replica_spec(const tfjob_job *job, const char *type)
{
	return type ? tfjob__obj(tfjob__replica_specs(job), type) : NULL;
}

json_t *tfjob__pod_spec(json_t *replica_spec) { return tfjob__obj(tfjob__obj(replica_spec, "template"), "spec"); }

int tfjob__tensorflow_container_index(json_t *containers)
{
	size_t i;
	json_t *c;
	json_array_foreach(containers, i, c) {
		const char *name = tfjob__str(c, "name");
		if (name && !strcmp(name, TFJOB__CONTAINER_NAME))
			return (int)i;
	}
	return -1;
}

/*
 * Reals are written with the fewest digits that read back exactly (0.1, not
 * 0.10000000000000001), each on its own, as Go's encoder writes them; otherwise as jansson's
 * json_dumps() writes (JSON_COMPACT, or JSON_INDENT(2) for TFJOB_JSON_PRETTY).
 */
char *tfjob__dump(const json_t *value, unsigned int flags)
{
	tfjob__sbuf b = TFJOB__SBUF_INIT;
	tfjob__sbuf_add_json_ex(&b, value, (flags & TFJOB_JSON_PRETTY) ? 2 : 0, (flags & TFJOB_JSON_SORT_KEYS) != 0);
	if (b.oom) {
		tfjob__sbuf_free(&b);
		return NULL;
	}
	return tfjob__sbuf_take(&b);
}

/* ---- construction ---- */

/* normalize: make integral reals at integer fields integers (not needed for what the YAML reader made).
 * line: where the document starts, named in its errors (0: unknown). */
static int wrap(tfjob_job **out, json_t *root, const char *filename, int line, bool normalize, tfjob_error **err)
{
	if (!json_is_object(root)) {
		const char *found = json_is_array(root) ? "a sequence" : "a scalar";
		json_decref(root);
		return tfjob__fail_at(err, TFJOB_ESCHEMA, filename, line, 0, "a TFJob must be a mapping (object), found %s", found);
	}
	json_t *api = json_object_get(root, "apiVersion"), *kind = json_object_get(root, "kind");
	const char *api_s = json_string_value(api), *kind_s = json_string_value(kind);
	if (!api_s || strcmp(api_s, "kubeflow.org/v1") || !kind_s || strcmp(kind_s, "TFJob")) {
		char *a = api ? tfjob__dump(api, 0) : NULL, *k = kind ? tfjob__dump(kind, 0) : NULL;
		tfjob__fail_at(err, TFJOB_ESCHEMA, filename, line, 0, "not a TFJob: expected apiVersion \"kubeflow.org/v1\" and "
		               "kind \"TFJob\", found apiVersion %s and kind %s", a ? a : "(missing)", k ? k : "(missing)");
		free(a);
		free(k);
		json_decref(root);
		return TFJOB_ESCHEMA;
	}
	tfjob_job *job = calloc(1, sizeof(*job));
	if (!job || (normalize && tfjob__schema_normalize_numbers(root))) {
		free(job);
		json_decref(root);
		return tfjob__oom(err);
	}
	job->root = root;
	*out = job;
	return 0;
}

int tfjob__job_wrap(tfjob_job **out, json_t *root, const char *filename, tfjob_error **err)
{
	return wrap(out, root, filename, 0, true, err);
}

static int load_docs(tfjob__docs *docs, tfjob__limits *limits, const char *data, size_t len,
                     const tfjob_parse_options *opts, tfjob_error **err)
{
	int rc = tfjob__limits_from_options(limits, opts, err);
	if (rc)
		return rc;
	return tfjob__docs_load(docs, data, len, limits, err);
}

int tfjob_job_parse(tfjob_job **out, const char *data, size_t len, const tfjob_parse_options *opts, tfjob_error **err)
{
	if (!out)
		return tfjob__fail(err, TFJOB_EINVAL, "out is NULL");
	*out = NULL;
	tfjob__docs docs;
	tfjob__limits limits;
	int rc = load_docs(&docs, &limits, data, len, opts, err);
	if (rc)
		return rc;
	const char *where = limits.filename ? limits.filename : "<input>";
	if (docs.count != 1) {
		size_t n = docs.count;
		tfjob__docs_free(&docs);
		if (n == 0)
			return tfjob__fail(err, TFJOB_EPARSE, "%s: empty input: no TFJob document", where);
		return tfjob__fail(err, TFJOB_EPARSE, "%s: expected one TFJob document, found %zu", where, n);
	}
	json_t *root = docs.items[0];
	free(docs.items);
	return wrap(out, root, limits.filename, (int)limits.first_line, docs.integral_reals, err);
}

void tfjob_job_array_free(tfjob_job **jobs, size_t count)
{
	if (!jobs)
		return;
	for (size_t i = 0; i < count; i++)
		tfjob_job_free(jobs[i]);
	free(jobs);
}

int tfjob_job_parse_all(tfjob_job ***out, size_t *out_count, const char *data, size_t len,
                        const tfjob_parse_options *opts, tfjob_error **err)
{
	if (!out || !out_count)
		return tfjob__fail(err, TFJOB_EINVAL, "out or out_count is NULL");
	*out = NULL;
	*out_count = 0;
	tfjob__docs docs;
	tfjob__limits limits;
	int rc = load_docs(&docs, &limits, data, len, opts, err);
	if (rc)
		return rc;
	json_t *items = NULL;
	bool normalize = docs.integral_reals;
	rc = tfjob__docs_flatten_items(&items, &docs, err);
	tfjob__docs_free(&docs);
	if (rc)
		return rc;
	size_t n = json_array_size(items);
	tfjob_job **jobs = calloc(n ? n : 1, sizeof(*jobs));
	if (!jobs) {
		json_decref(items);
		return tfjob__oom(err);
	}
	for (size_t i = 0; i < n; i++) {
		rc = wrap(&jobs[i], json_incref(json_array_get(items, i)), limits.filename, (int)limits.first_line, normalize,
		          err);
		if (rc) {
			tfjob_job_array_free(jobs, i);
			json_decref(items);
			return rc;
		}
	}
	json_decref(items);
	*out = jobs;
	*out_count = n;
	return 0;
}

int tfjob_job_clone(tfjob_job **out, const tfjob_job *job, tfjob_error **err)
{
	if (!out || !job)
		return tfjob__fail(err, TFJOB_EINVAL, "out or job is NULL");
	json_t *copy = json_deep_copy(job->root);
	if (!copy)
		return tfjob__oom(err);
	tfjob_job *clone = calloc(1, sizeof(*clone));
	if (!clone) {
		json_decref(copy);
		return tfjob__oom(err);
	}
	clone->root = copy;
	clone->schema_clean = job->schema_clean;
	clone->schema_unknown = job->schema_unknown;
	*out = clone;
	return 0;
}

void tfjob_job_free(tfjob_job *job)
{
	if (!job)
		return;
	json_decref(job->root);
	free(job);
}

int tfjob_job_to_json(char **out, const tfjob_job *job, unsigned int flags, tfjob_error **err)
{
	if (!out || !job)
		return tfjob__fail(err, TFJOB_EINVAL, "out or job is NULL");
	*out = tfjob__dump(job->root, flags);
	return *out ? 0 : tfjob__oom(err);
}

/* ---- accessors ---- */

static json_t *metadata(const tfjob_job *job) { return job ? tfjob__obj(job->root, "metadata") : NULL; }

const char *tfjob_job_name(const tfjob_job *job) { return tfjob__str(metadata(job), "name"); }
const char *tfjob_job_namespace(const tfjob_job *job) { return tfjob__str(metadata(job), "namespace"); }
const char *tfjob_job_uid(const tfjob_job *job) { return tfjob__str(metadata(job), "uid"); }
const char *tfjob_job_generate_name(const tfjob_job *job) { return tfjob__str(metadata(job), "generateName"); }

size_t tfjob_job_replica_type_count(const tfjob_job *job) { return json_object_size(tfjob__replica_specs(job)); }

const char *tfjob_job_replica_type(const tfjob_job *job, size_t i)
{
	json_t *specs = tfjob__replica_specs(job);
	if (!specs || i >= json_object_size(specs))
		return NULL;
	const char *key;
	json_t *value;
	size_t n = 0;
	json_object_foreach(specs, key, value) {
		if (n++ == i)
			return key;
	}
	return NULL;
}

int tfjob_job_replicas(int64_t *out, const tfjob_job *job, const char *type)
{
	if (!out)
		return TFJOB_EINVAL;
	return tfjob__int(out, tfjob__replica_spec(job, type), "replicas");
}

const char *tfjob_job_restart_policy(const tfjob_job *job, const char *type)
{
	return tfjob__str(tfjob__replica_spec(job, type), "restartPolicy");
}

static json_t *scheduling_policy(const tfjob_job *job) { return tfjob__obj(tfjob__run_policy(job), "schedulingPolicy"); }

static int run_policy_int(int64_t *out, const tfjob_job *job, const char *key)
{
	return out ? tfjob__int(out, tfjob__run_policy(job), key) : TFJOB_EINVAL;
}

const char *tfjob_job_clean_pod_policy(const tfjob_job *job) { return tfjob__str(tfjob__run_policy(job), "cleanPodPolicy"); }
int tfjob_job_ttl_seconds_after_finished(int64_t *out, const tfjob_job *job) { return run_policy_int(out, job, "ttlSecondsAfterFinished"); }
int tfjob_job_active_deadline_seconds(int64_t *out, const tfjob_job *job) { return run_policy_int(out, job, "activeDeadlineSeconds"); }
int tfjob_job_backoff_limit(int64_t *out, const tfjob_job *job) { return run_policy_int(out, job, "backoffLimit"); }
int tfjob_job_is_suspended(const tfjob_job *job)
{
	return json_is_true(json_object_get(tfjob__run_policy(job), "suspend"));
}

int tfjob_job_suspend(const tfjob_job *job) { return tfjob_job_is_suspended(job); }
const char *tfjob_job_managed_by(const tfjob_job *job) { return tfjob__str(tfjob__run_policy(job), "managedBy"); }
int tfjob_job_min_available(int64_t *out, const tfjob_job *job)
{
	return out ? tfjob__int(out, scheduling_policy(job), "minAvailable") : TFJOB_EINVAL;
}
const char *tfjob_job_queue(const tfjob_job *job) { return tfjob__str(scheduling_policy(job), "queue"); }
const char *tfjob_job_priority_class(const tfjob_job *job) { return tfjob__str(scheduling_policy(job), "priorityClass"); }
int tfjob_job_schedule_timeout_seconds(int64_t *out, const tfjob_job *job)
{
	return out ? tfjob__int(out, scheduling_policy(job), "scheduleTimeoutSeconds") : TFJOB_EINVAL;
}
const char *tfjob_job_success_policy(const tfjob_job *job) { return tfjob__str(tfjob__spec(job), "successPolicy"); }
int tfjob_job_enable_dynamic_worker(const tfjob_job *job) { return json_is_true(json_object_get(tfjob__spec(job), "enableDynamicWorker")); }

static json_t *conditions(const tfjob_job *job) { return tfjob__arr(tfjob__status(job), "conditions"); }

static json_t *find_condition(const tfjob_job *job, const char *type)
{
	size_t i;
	json_t *c;
	if (!type)
		return NULL;
	json_array_foreach(conditions(job), i, c) {
		const char *t = tfjob__str(c, "type");
		if (t && !strcmp(t, type))
			return c;
	}
	return NULL;
}

size_t tfjob_job_condition_count(const tfjob_job *job) { return json_array_size(conditions(job)); }
const char *tfjob_job_condition_type(const tfjob_job *job, size_t i) { return tfjob__str(json_array_get(conditions(job), i), "type"); }
const char *tfjob_job_condition_status(const tfjob_job *job, const char *type) { return tfjob__str(find_condition(job, type), "status"); }
const char *tfjob_job_condition_reason(const tfjob_job *job, const char *type) { return tfjob__str(find_condition(job, type), "reason"); }
const char *tfjob_job_condition_message(const tfjob_job *job, const char *type) { return tfjob__str(find_condition(job, type), "message"); }
const char *tfjob_job_start_time(const tfjob_job *job) { return tfjob__str(tfjob__status(job), "startTime"); }
const char *tfjob_job_completion_time(const tfjob_job *job) { return tfjob__str(tfjob__status(job), "completionTime"); }

static bool condition_true(const tfjob_job *job, const char *type)
{
	const char *s = tfjob_job_condition_status(job, type);
	return s && !strcmp(s, "True");
}

int tfjob_job_is_finished(const tfjob_job *job) { return condition_true(job, "Succeeded") || condition_true(job, "Failed"); }

int tfjob_job_status_json(char **out, const tfjob_job *job, unsigned int flags, tfjob_error **err)
{
	if (!out || !job)
		return tfjob__fail(err, TFJOB_EINVAL, "out or job is NULL");
	json_t *status = tfjob__status(job);
	json_t *empty = status ? NULL : json_object();
	*out = tfjob__dump(status ? status : empty, flags);
	json_decref(empty);
	return *out ? 0 : tfjob__oom(err);
}

int tfjob_job_set_status_json(tfjob_job *job, const char *json, tfjob_error **err)
{
	if (!job || !json)
		return tfjob__fail(err, TFJOB_EINVAL, "job or json is NULL");
	json_error_t jerr;
	json_t *status = json_loads(json, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &jerr);
	if (!status)
		return tfjob__fail_at(err, TFJOB_EPARSE, "status", jerr.line, jerr.column, "JSON syntax error: %s", jerr.text);
	if (json_is_null(status)) {
		json_decref(status);
		json_object_del(job->root, "status");
		return 0;
	}
	if (!json_is_object(status)) {
		json_decref(status);
		return tfjob__fail(err, TFJOB_ESCHEMA, "status must be a JSON object");
	}
	return json_object_set_new(job->root, "status", status) ? tfjob__oom(err) : 0;
}
