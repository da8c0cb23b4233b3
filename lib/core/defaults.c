/*
 * TFJob defaults (SetDefaults_TFJob), applied to the JSON tree so that unknown fields survive.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <string.h>
#include <strings.h>

#include "core/fielderr.h"
#include "core/job.h"
#include "util/versioned_structs.h"

int tfjob_default_options_init(tfjob_default_options *opts, unsigned int version)
{
	return tfjob__versioned_init(&tfjob__default_options_v, opts, version);
}

/*
 * Defaults change the job in place, as a transaction: every change is logged with what it
 * replaced, and when memory runs out half-way the log is undone in reverse, so the job is left
 * exactly as it was (without copying the whole job first). Undoing cannot fail: an added key is
 * deleted, a replaced value is put back through an iterator (no allocation), an appended array
 * item is removed.
 */
struct change {
	json_t *parent;  /* object, or array for an append */
	const char *key; /* static text; NULL for an array append */
	json_t *old;     /* the replaced value (owned), NULL when the key was added */
};

struct txn {
	struct change *log;
	size_t n, cap;
	struct change local[24];
};

static void txn_init(struct txn *t)
{
	t->log = t->local;
	t->n = 0;
	t->cap = TFJOB_ARRAY_LEN(t->local);
}

/* Room for one more change; false when out of memory. */
static bool txn_reserve(struct txn *t)
{
	if (t->n < t->cap)
		return true;
	size_t cap = t->cap * 2;
	struct change *grown = t->log == t->local ? malloc(cap * sizeof(*grown)) : realloc(t->log, cap * sizeof(*grown));
	if (!grown)
		return false;
	if (t->log == t->local)
		memcpy(grown, t->local, sizeof(t->local));
	t->log = grown;
	t->cap = cap;
	return true;
}

/* parent[key] = value (takes the reference, also on failure). Every key is one of this file's
 * ASCII literals, so jansson's UTF-8 check of it is skipped. */
static int txn_set(struct txn *t, json_t *parent, const char *key, json_t *value)
{
	if (!value)
		return TFJOB_ENOMEM;
	if (!txn_reserve(t)) {
		json_decref(value);
		return TFJOB_ENOMEM;
	}
	void *it = json_object_iter_at(parent, key);
	json_t *old = NULL;
	if (it) {
		old = json_incref(json_object_iter_value(it));
		json_object_iter_set_new(parent, it, value);
	} else if (json_object_set_new_nocheck(parent, key, value)) {
		return TFJOB_ENOMEM;
	}
	t->log[t->n++] = (struct change){ parent, key, old };
	return 0;
}

/* array += value (takes the reference, also on failure). */
static int txn_append(struct txn *t, json_t *array, json_t *value)
{
	if (!value)
		return TFJOB_ENOMEM;
	if (!txn_reserve(t)) {
		json_decref(value);
		return TFJOB_ENOMEM;
	}
	if (json_array_append_new(array, value))
		return TFJOB_ENOMEM;
	t->log[t->n++] = (struct change){ array, NULL, NULL };
	return 0;
}

static void txn_end(struct txn *t, bool undo)
{
	for (size_t i = t->n; i-- > 0;) {
		struct change *c = &t->log[i];
		if (!undo) {
			json_decref(c->old);
		} else if (!c->key) {
			json_array_remove(c->parent, json_array_size(c->parent) - 1);
		} else if (c->old) {
			json_object_iter_set_new(c->parent, json_object_iter_at(c->parent, c->key), c->old);
		} else {
			json_object_del(c->parent, c->key);
		}
	}
	if (t->log != t->local)
		free(t->log);
	txn_init(t);
}

/* An object member, made (or a null replaced) when absent. NULL when out of memory. */
static json_t *ensure_object(struct txn *t, json_t *parent, const char *key)
{
	json_t *v = json_object_get(parent, key);
	if (json_is_object(v))
		return v;
	v = json_object();
	return txn_set(t, parent, key, v) ? NULL : v;
}

static bool is_absent(json_t *parent, const char *key)
{
	json_t *v = json_object_get(parent, key);
	return !v || json_is_null(v);
}

/* The first key (document order) spelled like canon in another case, or NULL. */
static const char *first_variant(json_t *specs, const char *canon)
{
	const char *key;
	json_t *value;
	json_object_foreach(specs, key, value) {
		if (!strcasecmp(key, canon) && strcmp(key, canon))
			return key;
	}
	return NULL;
}

/* Whether another key of specs equals key ignoring case. */
static bool has_case_twin(json_t *specs, const char *key)
{
	const char *other;
	json_t *value;
	json_object_foreach(specs, other, value) {
		if (strcmp(other, key) && !strcasecmp(other, key))
			return true;
	}
	return false;
}

/* Whether some key is a replica type spelled in a non-canonical case (else canonical_keys changes nothing). */
static bool has_variant_keys(json_t *specs)
{
	const char *key;
	json_t *value;
	json_object_foreach(specs, key, value) {
		const char *canon = tfjob__canonical_type(key);
		if (canon && strcmp(canon, key))
			return true;
	}
	return false;
}

/*
 * Rename replica type keys to their canonical case, keeping their position.
 * Documented mode: a key is renamed only when it is the one spelling of its type; keys that
 * differ only in case are all kept, for validation to reject (FieldValueDuplicate) instead of
 * silently losing one. v1.9 (setTypeNameToCamelCase): per type, one variant spelling is moved
 * to the canonical key, replacing a canonical entry if there is one; further variants stay.
 * (v1.9 picks the variant in Go's random map order; here it is the first in document order.)
 */
static json_t *canonical_keys(json_t *specs, bool compat)
{
	json_t *out = json_object();
	if (!out)
		return NULL;
	const char *key;
	json_t *value;
	json_object_foreach(specs, key, value) {
		const char *canon = tfjob__canonical_type(key);
		const char *target = key;
		if (canon && compat) {
			const char *variant = first_variant(specs, canon);
			if (variant && !strcmp(key, canon))
				continue; /* replaced by the variant */
			if (variant && !strcmp(key, variant))
				target = canon;
		} else if (canon && strcmp(canon, key) && !has_case_twin(specs, key)) {
			target = canon;
		}
		if (json_object_set(out, target, value)) {
			json_decref(out);
			return NULL;
		}
	}
	return out;
}

static int default_port(struct txn *t, json_t *rspec)
{
	json_t *containers = tfjob__arr(tfjob__pod_spec(rspec), "containers");
	if (json_array_size(containers) == 0)
		return 0; /* nothing to default (v1.9 would panic here); validation reports it */
	int idx = tfjob__tensorflow_container_index(containers);
	json_t *container = json_array_get(containers, idx < 0 ? 0 : (size_t)idx);
	if (!json_is_object(container))
		return 0;
	json_t *ports = json_object_get(container, "ports");
	size_t i;
	json_t *port;
	json_array_foreach(ports, i, port) {
		const char *name = tfjob__str(port, "name");
		if (name && !strcmp(name, TFJOB__PORT_NAME))
			return 0;
	}
	if (!json_is_array(ports)) {
		ports = json_array();
		if (txn_set(t, container, "ports", ports))
			return TFJOB_ENOMEM;
	}
	json_t *entry = json_object();
	if (!entry || json_object_set_new_nocheck(entry, "name", json_string_nocheck(TFJOB__PORT_NAME)) ||
	    json_object_set_new_nocheck(entry, "containerPort", json_integer(TFJOB__DEFAULT_PORT))) {
		json_decref(entry);
		return TFJOB_ENOMEM;
	}
	return txn_append(t, ports, entry);
}

static int default_replica_spec(struct txn *t, json_t *rspec)
{
	if (!json_is_object(rspec))
		return 0;
	if (is_absent(rspec, "replicas") && txn_set(t, rspec, "replicas", json_integer(1)))
		return TFJOB_ENOMEM;
	const char *policy = tfjob__str(rspec, "restartPolicy");
	if ((!policy || !policy[0]) && txn_set(t, rspec, "restartPolicy", json_string_nocheck("Never")))
		return TFJOB_ENOMEM;
	return default_port(t, rspec);
}

static int apply(struct txn *t, json_t *root, bool compat)
{
	json_t *spec = ensure_object(t, root, "spec");
	json_t *run_policy = spec ? ensure_object(t, spec, "runPolicy") : NULL;
	if (!run_policy)
		return TFJOB_ENOMEM;
	if (is_absent(run_policy, "cleanPodPolicy") &&
	    txn_set(t, run_policy, "cleanPodPolicy", json_string_nocheck(compat ? "None" : "Running")))
		return TFJOB_ENOMEM;
	if (is_absent(spec, "successPolicy") && txn_set(t, spec, "successPolicy", json_string_nocheck("")))
		return TFJOB_ENOMEM;
	json_t *specs = tfjob__obj(spec, "tfReplicaSpecs");
	if (!specs)
		return 0;
	if (has_variant_keys(specs)) {
		specs = canonical_keys(specs, compat);
		if (!specs || txn_set(t, spec, "tfReplicaSpecs", specs))
			return TFJOB_ENOMEM;
	}
	const char *type;
	json_t *rspec;
	json_object_foreach(specs, type, rspec) {
		int rc = default_replica_spec(t, rspec);
		if (rc)
			return rc;
	}
	return 0;
}

/*
 * Everything tfjob_job_apply_defaults() checks before it changes anything. *clean: the schema
 * check found nothing; *unknown: it found fields the schema does not declare.
 */
static int defaults_precheck(const tfjob_job *job, const tfjob_default_options *opts, bool *clean, bool *unknown,
                             tfjob_error **err)
{
	*clean = *unknown = false;
	int rc = 0;
	if (opts->compat != TFJOB_COMPAT_DOCUMENTED && opts->compat != TFJOB_COMPAT_TRAINING_OPERATOR_1_9)
		return tfjob__fail(err, TFJOB_EINVAL, "unknown compat mode %d", (int)opts->compat);

	/* Like the Go operator, which cannot decode a mistyped object, refuse to default one. */
	tfjob_field_errors *errs = tfjob__field_errors_new();
	if (!errs)
		return tfjob__oom(err);
	/* Unknown fields do not stop decoding either: they are kept, as the library keeps every field. */
	*unknown = tfjob__schema_check(errs, job->root, false) > 0;
	/* Missing required fields do not stop decoding (validation reports them); wrong types and
	 * out-of-range integers do. */
	const struct tfjob__field_error *bad = NULL;
	for (size_t i = 0; i < errs->count && !bad; i++)
		if (errs->items[i].type != TFJOB_FIELD_VALUE_REQUIRED)
			bad = &errs->items[i];
	*clean = !errs->oom && errs->count == 0;
	if (errs->oom || bad)
		rc = errs->oom ? tfjob__oom(err)
		               : tfjob__fail_field(err, TFJOB_ESCHEMA, bad->field, "%s", bad->message + strlen(bad->field) + 2);
	tfjob_field_errors_free(errs);
	return rc;
}

/*
 * Apply the defaults to the job's tree; on failure (out of memory) the tree is unchanged.
 * clean: the schema check before found nothing. The defaults only add values of the schema's
 * types (strings, small integers, port objects with their required containerPort), so the
 * verdict still holds after them unless they had to create spec, which then lacks its required
 * tfReplicaSpecs.
 */
static int apply_all(tfjob_job *job, const tfjob_default_options *opts, bool clean, bool unknown, tfjob_error **err)
{
	struct txn t;
	txn_init(&t);
	job->schema_clean = false;
	int rc = apply(&t, job->root, opts->compat == TFJOB_COMPAT_TRAINING_OPERATOR_1_9);
	txn_end(&t, rc != 0);
	if (rc)
		return tfjob__oom(err);
	job->schema_clean = clean && tfjob__replica_specs(job) != NULL;
	job->schema_unknown = unknown;
	return 0;
}

int tfjob__job_apply_defaults_in_place(tfjob_job *job, const tfjob_default_options *opts, tfjob_error **err)
{
	bool clean, unknown;
	int rc = defaults_precheck(job, opts, &clean, &unknown, err);
	return rc ? rc : apply_all(job, opts, clean, unknown, err);
}

int tfjob_job_apply_defaults(tfjob_job *job, const tfjob_default_options *caller_opts, tfjob_error **err)
{
	if (!job)
		return tfjob__fail(err, TFJOB_EINVAL, "job is NULL");
	tfjob_default_options opts;
	int rc = tfjob__versioned_copy(&tfjob__default_options_v, &opts, caller_opts, err);
	if (rc)
		return rc;
	bool clean, unknown;
	rc = defaults_precheck(job, &opts, &clean, &unknown, err);
	if (rc)
		return rc;
	if (job->root->refcount > 1) {
		/* The tree is shared with its creator (a handle wrapped around a cached object): default a copy. */
		json_t *copy = json_deep_copy(job->root);
		if (!copy)
			return tfjob__oom(err);
		json_decref(job->root);
		job->root = copy;
	}
	return apply_all(job, &opts, clean, unknown, err);
}
