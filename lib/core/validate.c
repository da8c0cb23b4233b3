/*
 * Validation: the CRD schema first (as the API server does, its errors stop there), then the
 * training-operator webhook's rules, and the update rules when the old object is given.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stddef.h>
#include <stdint.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "core/fielderr.h"
#include "core/job.h"
#include "util/versioned_structs.h"

int tfjob_validate_options_init(tfjob_validate_options *opts, unsigned int version)
{
	return tfjob__versioned_init(&tfjob__validate_options_v, opts, version);
}

struct ctx {
	tfjob_field_errors *errs;
	bool documented;
};

static void add(struct ctx *c, tfjob_field_error_type type, const char *field, const json_t *value, const char *detail)
{
	tfjob__field_errors_add(c->errs, type, field, value, detail);
}

/* field.NotSupported with its list of supported values */
static void add_not_supported(struct ctx *c, const char *field, const json_t *value, const char *const *supported)
{
	char *detail = tfjob__supported_values_detail(supported);
	if (!detail) {
		c->errs->oom = true;
		return;
	}
	add(c, TFJOB_FIELD_VALUE_NOT_SUPPORTED, field, value, detail);
	free(detail);
}

static bool in_set(const char *s, const char *const *set)
{
	for (; *set; set++)
		if (!strcmp(s, *set))
			return true;
	return false;
}

/* ---- metadata.name: apimachinery's IsDNS1035Label ---- */

#define DNS1035_MAX 63
#define DNS1035_MSG                                                                                                  \
	"a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "       \
	"character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation " \
	"is '[a-z]([-a-z0-9]*[a-z0-9])?')"

static bool is_lower_alnum(char ch) { return (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9'); }

static bool matches_dns1035(const char *s, bool prefix)
{
	size_t n = strlen(s);
	if (n == 0 || !(s[0] >= 'a' && s[0] <= 'z'))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!is_lower_alnum(s[i]) && s[i] != '-')
			return false;
	/* A generateName prefix is followed by random characters, so it may end in '-'. */
	return prefix || is_lower_alnum(s[n - 1]);
}

static void validate_name(struct ctx *c, const tfjob_job *job)
{
	const char *name = tfjob_job_name(job);
	const char *generate = tfjob_job_generate_name(job);
	if ((!name || !name[0]) && generate && generate[0]) {
		/* The API server makes the name from generateName (cut to 58 characters) plus 5 characters. */
		char prefix[59];
		snprintf(prefix, sizeof(prefix), "%s", generate);
		if (!matches_dns1035(prefix, true)) {
			json_t *v = json_string(generate);
			add(c, TFJOB_FIELD_VALUE_INVALID, "metadata.generateName", v, "should match: " DNS1035_MSG);
			json_decref(v);
		}
		return;
	}
	if (!name || !name[0]) {
		add(c, TFJOB_FIELD_VALUE_REQUIRED, "metadata.name", NULL, "name or generateName is required");
		return;
	}
	const char *shown = name ? name : "";
	char detail[512];
	size_t n = strlen(shown);
	if (n > DNS1035_MAX && !matches_dns1035(shown, false))
		snprintf(detail, sizeof(detail), "should match: must be no more than 63 characters," DNS1035_MSG);
	else if (n > DNS1035_MAX)
		snprintf(detail, sizeof(detail), "should match: must be no more than 63 characters");
	else if (!matches_dns1035(shown, false))
		snprintf(detail, sizeof(detail), "should match: " DNS1035_MSG);
	else
		return;
	json_t *v = json_string(shown);
	add(c, TFJOB_FIELD_VALUE_INVALID, "metadata.name", v, detail);
	json_decref(v);
}

/* ---- metadata.namespace: apimachinery's IsDNS1123Label, as the API server checks it ---- */

#define DNS1123_LABEL_MSG                                                                                         \
	"a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "  \
	"end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "           \
	"'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"

static bool matches_dns1123_label(const char *s)
{
	size_t n = strlen(s);
	if (n == 0 || !is_lower_alnum(s[0]) || !is_lower_alnum(s[n - 1]))
		return false;
	for (size_t i = 1; i < n; i++)
		if (!is_lower_alnum(s[i]) && s[i] != '-')
			return false;
	return true;
}

/* In both modes: the API server refuses such an object before any webhook, and the local runner
 * must never make a path of it. Absent or empty: the default namespace. */
static void validate_namespace(struct ctx *c, const tfjob_job *job)
{
	const char *ns = tfjob_job_namespace(job);
	if (!ns || !ns[0])
		return;
	const char *detail = NULL;
	if (strlen(ns) > DNS1035_MAX)
		detail = "must be no more than 63 characters";
	else if (!matches_dns1123_label(ns))
		detail = DNS1123_LABEL_MSG;
	if (!detail)
		return;
	json_t *v = json_string(ns);
	add(c, TFJOB_FIELD_VALUE_INVALID, "metadata.namespace", v, detail);
	json_decref(v);
}

/* ---- child names (documented mode): {name}-{type}-{index} must fit in a DNS-1035 label ---- */

/* Characters the API server adds to a generateName prefix (cut to 58 characters). */
#define GENERATED_SUFFIX "xxxxx"
#define GENERATE_NAME_MAX 58

/*
 * A pod and its service are named {job}-{type}-{index}; a Service name is a DNS-1035 label, so a
 * job whose longest such name exceeds 63 characters can never get its children (v1.9 admits it
 * and fails at every creation). Reported at metadata.name with the name that would be too long.
 */
static void validate_child_names(struct ctx *c, const tfjob_job *job)
{
	const char *name = tfjob_job_name(job), *generate = tfjob_job_generate_name(job);
	char base[DNS1035_MAX + sizeof(GENERATED_SUFFIX) + 1];
	const char *field = "metadata.name";
	if (name && name[0]) {
		if (strlen(name) > DNS1035_MAX)
			return; /* reported by validate_name */
		snprintf(base, sizeof(base), "%s", name);
	} else if (generate && generate[0]) {
		snprintf(base, sizeof(base), "%.*s" GENERATED_SUFFIX, GENERATE_NAME_MAX, generate);
		field = "metadata.generateName";
		name = generate;
	} else {
		return;
	}
	char longest[DNS1035_MAX * 4 + 64] = "";
	const char *type;
	json_t *rspec;
	json_object_foreach(tfjob__replica_specs(job), type, rspec) {
		json_t *r = json_object_get(rspec, "replicas");
		json_int_t replicas = json_is_integer(r) ? json_integer_value(r) : 1;
		if (replicas <= 0 || strlen(type) > DNS1035_MAX)
			continue; /* no child; or a replica type refused by its own rule */
		char child[sizeof(longest)];
		snprintf(child, sizeof(child), "%s-%s-%lld", base, type, (long long)(replicas - 1));
		for (char *p = child + strlen(base); *p; p++)
			*p = (char)tolower((unsigned char)*p);
		if (strlen(child) > strlen(longest))
			snprintf(longest, sizeof(longest), "%s", child);
	}
	size_t n = strlen(longest);
	if (n <= DNS1035_MAX)
		return;
	char detail[sizeof(longest) + 256];
	snprintf(detail, sizeof(detail),
	         "the pod and service name \"%s\" would be %zu characters: must be no more than 63 characters "
	         "(a Service name is a DNS-1035 label)", longest, n);
	json_t *v = json_string(name);
	add(c, TFJOB_FIELD_VALUE_INVALID, field, v, detail);
	json_decref(v);
}

/* ---- runPolicy ---- */

static const char *const managed_by_values[] = { TFJOB_MANAGED_BY_TRAINING_OPERATOR, "kueue.x-k8s.io/multikueue", NULL };
static const char *const clean_pod_policies[] = { "All", "Running", "None", NULL };
static const char *const success_policies[] = { "", "AllWorkers", NULL };
static const char *const restart_policies[] = { "Always", "OnFailure", "Never", "ExitCode", NULL };
static const char *const replica_types[] = { "Chief", "Evaluator", "Master", "PS", "Worker", NULL };

static void validate_run_policy(struct ctx *c, const tfjob_job *job)
{
	json_t *rp = tfjob__run_policy(job);
	json_t *managed = json_object_get(rp, "managedBy");
	if (json_is_string(managed) && !in_set(json_string_value(managed), managed_by_values))
		add_not_supported(c, "spec.runPolicy.managedBy", managed, managed_by_values);
	if (!c->documented)
		return;
	json_t *clean = json_object_get(rp, "cleanPodPolicy");
	if (json_is_string(clean) && !in_set(json_string_value(clean), clean_pod_policies))
		add_not_supported(c, "spec.runPolicy.cleanPodPolicy", clean, clean_pod_policies);
	json_t *success = json_object_get(tfjob__spec(job), "successPolicy");
	if (json_is_string(success) && !in_set(json_string_value(success), success_policies))
		add_not_supported(c, "spec.successPolicy", success, success_policies);
}

/* ---- tfReplicaSpecs ---- */

/* "spec.tfReplicaSpecs[TYPE]" + suffix (a new string, NULL when out of memory): built only for an error. */
static char *rspec_path(const char *type, const char *suffix)
{
	return tfjob__strdup_printf("spec.tfReplicaSpecs[%s]%s", type, suffix);
}

/* An error at spec.tfReplicaSpecs[TYPE] + suffix. */
static void add_at(struct ctx *c, tfjob_field_error_type etype, const char *type, const char *suffix,
                   const json_t *value, const char *detail)
{
	char *path = rspec_path(type, suffix);
	if (!path)
		c->errs->oom = true;
	else
		add(c, etype, path, value, detail);
	free(path);
}

static void validate_containers(struct ctx *c, json_t *rspec, const char *type)
{
	static const char containers_suffix[] = ".template.spec.containers";
	json_t *containers = tfjob__arr(tfjob__pod_spec(rspec), "containers");
	if (json_array_size(containers) == 0)
		add_at(c, TFJOB_FIELD_VALUE_REQUIRED, type, containers_suffix, NULL, "must be specified");
	bool has_tensorflow = false;
	size_t i;
	json_t *container;
	json_array_foreach(containers, i, container) {
		const char *image = tfjob__str(container, "image");
		if (!image || !image[0]) {
			char suffix[sizeof(containers_suffix) + 32];
			snprintf(suffix, sizeof(suffix), "%s[%zu].image", containers_suffix, i);
			add_at(c, TFJOB_FIELD_VALUE_REQUIRED, type, suffix, NULL, "must be required");
		}
		const char *name = tfjob__str(container, "name");
		if (name && !strcmp(name, TFJOB__CONTAINER_NAME))
			has_tensorflow = true;
	}
	if (!has_tensorflow)
		add_at(c, TFJOB_FIELD_VALUE_REQUIRED, type, containers_suffix, NULL,
		       "must have at least one container with name " TFJOB__CONTAINER_NAME);
}

/* Documented mode only: enumerations, replica counts, and keys that differ only in case. */
static void validate_replica_values(struct ctx *c, json_t *specs, const char *type, json_t *rspec)
{
	if (!tfjob__canonical_type(type)) {
		json_t *v = json_string(type);
		char *path = rspec_path(type, "");
		if (!path)
			c->errs->oom = true;
		else
			add_not_supported(c, path, v, replica_types);
		free(path);
		json_decref(v);
	} else {
		const char *key;
		json_t *other;
		json_object_foreach(specs, key, other) {
			if (key == type || strcmp(key, type) == 0)
				break; /* only keys before this one count, so each clash is reported once */
			if (!strcasecmp(key, type)) {
				json_t *v = json_string(type);
				add_at(c, TFJOB_FIELD_VALUE_DUPLICATE, type, "", v, "");
				json_decref(v);
				break;
			}
		}
	}
	json_t *policy = json_object_get(rspec, "restartPolicy");
	if (json_is_string(policy) && json_string_value(policy)[0] && !in_set(json_string_value(policy), restart_policies)) {
		char *path = rspec_path(type, ".restartPolicy");
		if (!path)
			c->errs->oom = true;
		else
			add_not_supported(c, path, policy, restart_policies);
		free(path);
	}
	json_t *replicas = json_object_get(rspec, "replicas");
	if (json_is_integer(replicas) && json_integer_value(replicas) < 0)
		add_at(c, TFJOB_FIELD_VALUE_INVALID, type, ".replicas", replicas, "must be greater than or equal to 0");
}

/*
 * The library's bound on replicas (TFJOB_MAX_REPLICAS, docs/limits.md), in both modes: a job past
 * it can get no TF_CONFIG, children nor plan, so it is refused here, where the CLI, the webhook
 * and the operator (Failed, TFJobFailedValidation) all see it, not later as an error that only
 * a retry loop logs. Counted as tfjob_graph_new() counts: an absent or null count is 1; counts
 * that are not 32-bit integers or are negative have errors of their own and are left out.
 */
static void validate_replica_limits(struct ctx *c, json_t *specs)
{
	int64_t total = 0;
	bool one_over = false;
	const char *type;
	json_t *rspec;
	json_object_foreach(specs, type, rspec) {
		json_t *replicas = json_object_get(rspec, "replicas");
		if (!json_is_object(rspec))
			continue;
		if (!replicas || json_is_null(replicas)) {
			total++;
			continue;
		}
		if (!json_is_integer(replicas) || json_integer_value(replicas) < 0 ||
		    json_integer_value(replicas) > INT32_MAX)
			continue;
		total += json_integer_value(replicas);
		if (json_integer_value(replicas) > TFJOB_MAX_REPLICAS) {
			one_over = true;
			char detail[80];
			snprintf(detail, sizeof(detail), "must be less than or equal to %d (the limit of replicas of one type)",
			         TFJOB_MAX_REPLICAS);
			add_at(c, TFJOB_FIELD_VALUE_INVALID, type, ".replicas", replicas, detail);
		}
	}
	if (total > TFJOB_MAX_REPLICAS && !one_over) {
		json_t *value = json_integer(total);
		char detail[96];
		snprintf(detail, sizeof(detail), "the replicas of all types must add up to at most %d", TFJOB_MAX_REPLICAS);
		if (!value)
			c->errs->oom = true;
		else
			add(c, TFJOB_FIELD_VALUE_INVALID, "spec.tfReplicaSpecs", value, detail);
		json_decref(value);
	}
}

static void validate_replica_specs(struct ctx *c, const tfjob_job *job)
{
	json_t *specs = tfjob__replica_specs(job);
	if (!specs || (c->documented && json_object_size(specs) == 0)) {
		add(c, TFJOB_FIELD_VALUE_REQUIRED, "spec.tfReplicaSpecs", NULL, "must be required");
		return;
	}
	int chief_or_master = 0;
	const char *type;
	json_t *rspec;
	json_object_foreach(specs, type, rspec) {
		validate_containers(c, json_is_object(rspec) ? rspec : NULL, type);
		if (c->documented && json_is_object(rspec))
			validate_replica_values(c, specs, type, rspec);
		else if (c->documented && !tfjob__canonical_type(type))
			validate_replica_values(c, specs, type, NULL);
		if (tfjob__is_chief_or_master(type, c->documented))
			chief_or_master++;
	}
	if (chief_or_master > 1)
		add(c, TFJOB_FIELD_VALUE_FORBIDDEN, "spec.tfReplicaSpecs", NULL, "must not have more than 1 Chief or Master role");
	validate_replica_limits(c, specs);
}

/* ---- update ---- */

static void validate_update(struct ctx *c, const tfjob_job *job, const tfjob_job *old)
{
	/* managedBy: apimachinery's ValidateImmutableField (set/unset changes count too). */
	json_t *new_m = json_object_get(tfjob__run_policy(job), "managedBy");
	json_t *old_m = json_object_get(tfjob__run_policy(old), "managedBy");
	if (json_is_null(new_m))
		new_m = NULL;
	if (json_is_null(old_m))
		old_m = NULL;
	if ((new_m == NULL) != (old_m == NULL) || (new_m && !json_equal(new_m, old_m)))
		add(c, TFJOB_FIELD_VALUE_INVALID, "spec.runPolicy.managedBy", new_m, "field is immutable");
}

/* The CRD's transition rule on schedulingPolicy.queue (self == oldSelf) applies when both have it. */
static void validate_queue_update(struct ctx *c, const tfjob_job *job, const tfjob_job *old)
{
	json_t *new_q = json_object_get(tfjob__obj(tfjob__run_policy(job), "schedulingPolicy"), "queue");
	json_t *old_q = json_object_get(tfjob__obj(tfjob__run_policy(old), "schedulingPolicy"), "queue");
	if (json_is_string(new_q) && json_is_string(old_q) && !json_equal(new_q, old_q))
		add(c, TFJOB_FIELD_VALUE_INVALID, "spec.runPolicy.schedulingPolicy.queue", new_q,
		    "spec.runPolicy.schedulingPolicy.queue is immutable");
}

int tfjob_job_validate(tfjob_field_errors **out, const tfjob_job *job, const tfjob_validate_options *caller_opts,
                       tfjob_error **err)
{
	if (!out || !job)
		return tfjob__fail(err, TFJOB_EINVAL, "out or job is NULL");
	*out = NULL;
	tfjob_validate_options copy;
	int rc = tfjob__versioned_copy(&tfjob__validate_options_v, &copy, caller_opts, err);
	if (rc)
		return rc;
	const tfjob_validate_options *opts = &copy;
	if (opts->compat != TFJOB_COMPAT_DOCUMENTED && opts->compat != TFJOB_COMPAT_TRAINING_OPERATOR_1_9)
		return tfjob__fail(err, TFJOB_EINVAL, "unknown compat mode %d", (int)opts->compat);
	struct ctx c = { tfjob__field_errors_new(), opts->compat == TFJOB_COMPAT_DOCUMENTED };
	if (!c.errs)
		return tfjob__oom(err);

	/* Stage 1, the API server's schema check: its errors end the request before any webhook.
	 * Skipped when tfjob_job_apply_defaults() has just found nothing in this same tree. */
	/* A version 1 caller has no strict field: it gets the behaviour it was built for. */
	bool strict = opts->strict && (!caller_opts || caller_opts->version >= 2);
	if (!job->schema_clean || (strict && job->schema_unknown))
		tfjob__schema_check(c.errs, job->root, strict);
	validate_namespace(&c, job); /* the API server's own check, before any webhook */
	if (opts->old)
		validate_queue_update(&c, job, opts->old);
	if (c.errs->count == 0 && !c.errs->oom) {
		/* Stage 2, the training-operator webhook. */
		validate_name(&c, job);
		if (opts->old)
			validate_update(&c, job, opts->old);
		validate_run_policy(&c, job);
		validate_replica_specs(&c, job);
		if (c.documented)
			validate_child_names(&c, job);
	}
	if (c.errs->oom) {
		tfjob_field_errors_free(c.errs);
		return tfjob__oom(err);
	}
	*out = c.errs;
	return 0;
}
