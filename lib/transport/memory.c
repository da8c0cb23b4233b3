/*
 * The in-memory backend: a fake Kubernetes API store with apiserver semantics (memory.h).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tfjob/memstore.h"
#include "transport/memory_store.h"
#include "util/timedwait.h"
#include "util/versioned_structs.h"

#define DEFAULT_HISTORY 1000
#define DEFAULT_BOOKMARK_MS 1000

/* ---- Names, keys and errors ---- */

char *tfjob__mem_api_version(const tfjob_resource *res)
{
	if (!res->group || !res->group[0])
		return tfjob__strdup(res->version);
	return tfjob__strdup_printf("%s/%s", res->group, res->version);
}

char *tfjob__mem_prefix(const tfjob_resource *res, const char *ns)
{
	const char *g = res->group ? res->group : "";
	if (!res->namespaced || !ns || !ns[0])
		return tfjob__strdup_printf("%s/%s/%s", g, res->resource, res->namespaced ? "" : "/");
	return tfjob__strdup_printf("%s/%s/%s/", g, res->resource, ns);
}

static char *object_key(const tfjob_resource *res, const char *ns, const char *name)
{
	return tfjob__strdup_printf("%s/%s/%s/%s", res->group ? res->group : "", res->resource,
	                            res->namespaced ? ns : "", name);
}

/* "tfjobs.kubeflow.org" or "pods", as the API server names a resource in messages. */
static void qualified(char *buf, size_t size, const tfjob_resource *res)
{
	if (res->group && res->group[0])
		snprintf(buf, size, "%s.%s", res->resource, res->group);
	else
		snprintf(buf, size, "%s", res->resource);
}

/* An API error with the Status details {name, group, kind} the API server sends. */
static int api_error(tfjob_error **err, int code, int status, const tfjob_resource *res, const char *name,
                     const char *msg)
{
	json_t *d = json_pack("{s:s, s:s, s:s}", "name", name ? name : "", "group", res->group ? res->group : "",
	                      "kind", res->resource);
	char *dtext = d ? json_dumps(d, JSON_COMPACT) : NULL;
	json_decref(d);
	tfjob__api_fail(err, code, status, dtext, "%s", msg ? msg : "out of memory");
	free(dtext);
	return code;
}

/* An API error about one object, worded as the API server words it: PREFIX<resource> "<name>"SUFFIX. */
static int named_error(tfjob_error **err, int code, int status, const tfjob_resource *res, const char *name,
                       const char *prefix, const char *suffix)
{
	char q[256];
	qualified(q, sizeof(q), res);
	char *msg = tfjob__strdup_printf("%s%s \"%s\"%s", prefix, q, name, suffix);
	api_error(err, code, status, res, name, msg);
	free(msg);
	return code;
}

static int not_found(tfjob_error **err, const tfjob_resource *res, const char *name)
{
	return named_error(err, TFJOB_ENOTFOUND, 404, res, name, "", " not found");
}

static int already_exists(tfjob_error **err, const tfjob_resource *res, const char *name)
{
	return named_error(err, TFJOB_EEXISTS, 409, res, name, "", " already exists");
}

static int conflict_modified(tfjob_error **err, const tfjob_resource *res, const char *name)
{
	return named_error(err, TFJOB_ECONFLICT, 409, res, name, "Operation cannot be fulfilled on ",
	                   ": the object has been modified; please apply your changes to the latest version and try again");
}

/* An update whose uid does not match: the storage layer's message. */
static int update_uid_mismatch(tfjob_error **err, const tfjob_resource *res, const char *ns, const char *name,
                               const char *want, const char *have)
{
	char q[256];
	qualified(q, sizeof(q), res);
	const char *g = res->group && res->group[0] ? res->group : NULL;
	char *msg = tfjob__strdup_printf("Operation cannot be fulfilled on %s \"%s\": StorageError: invalid object, Code: 4, "
	                                 "Key: /registry/%s%s%s/%s%s%s, ResourceVersion: 0, AdditionalErrorMsg: "
	                                 "Precondition failed: UID in precondition: %s, UID in object meta: %s",
	                                 q, name, g ? g : "", g ? "/" : "", res->resource, ns[0] ? ns : "", ns[0] ? "/" : "",
	                                 name, want, have ? have : "");
	api_error(err, TFJOB_ECONFLICT, 409, res, name, msg);
	free(msg);
	return TFJOB_ECONFLICT;
}

/* A delete precondition that does not hold (named Kind.group, as the API server does). */
static int delete_precondition_failed(tfjob_error **err, const tfjob_resource *res, const char *name, const char *what,
                                      const char *want, const char *have)
{
	const char *kind = tfjob__resource_kind(res);
	char q[256];
	if (kind && res->group && res->group[0])
		snprintf(q, sizeof(q), "%s.%s", kind, res->group);
	else if (kind)
		snprintf(q, sizeof(q), "%s", kind);
	else
		qualified(q, sizeof(q), res);
	char *msg = tfjob__strdup_printf("Operation cannot be fulfilled on %s \"%s\": the %s in the precondition (%s) does "
	                                 "not match the %s in record (%s). The object might have been %s",
	                                 q, name, what, want, what, have ? have : "",
	                                 strcmp(what, "UID") ? "modified" : "deleted and then recreated");
	api_error(err, TFJOB_ECONFLICT, 409, res, name, msg);
	free(msg);
	return TFJOB_ECONFLICT;
}

/* ---- Store helpers (called with the lock held) ---- */

static int64_t store_now(struct mem_store *s)
{
	if (s->clock)
		return s->clock(s->clock_payload);
	return (int64_t)time(NULL);
}

static uint64_t store_rand(struct mem_store *s)
{
	uint64_t x = s->rng;
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	s->rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static json_t *new_uid(struct mem_store *s)
{
	uint64_t a = store_rand(s), b = store_rand(s);
	char buf[40];
	snprintf(buf, sizeof(buf), "%08llx-%04llx-4%03llx-%04llx-%012llx", (unsigned long long)(a >> 32),
	         (unsigned long long)((a >> 16) & 0xffff), (unsigned long long)(a & 0xfff),
	         (unsigned long long)(0x8000 | ((b >> 48) & 0x3fff)), (unsigned long long)(b & 0xffffffffffffULL));
	return json_string(buf);
}

static void event_clear(struct mem_event *e)
{
	free(e->key);
	json_decref(e->obj);
	json_decref(e->prev);
}

/* Append an event (takes references of obj and prev); forgets the oldest when full. */
static int push_event(struct mem_store *s, tfjob_watch_event type, const char *key, json_t *obj, json_t *prev)
{
	char *k = tfjob__strdup(key);
	if (!k) {
		json_decref(obj);
		json_decref(prev);
		return TFJOB_ENOMEM;
	}
	if (s->hist_len == s->hist_cap) {
		struct mem_event *old = &s->hist[s->hist_start];
		s->compacted_rv = old->rv;
		event_clear(old);
		s->hist_start = (s->hist_start + 1) % s->hist_cap;
		s->hist_len--;
	}
	struct mem_event *e = &s->hist[(s->hist_start + s->hist_len) % s->hist_cap];
	*e = (struct mem_event){ s->rv, type, k, obj, prev };
	s->hist_len++;
	pthread_cond_broadcast(&s->cond);
	return 0;
}

static void set_rv(json_t *obj, uint64_t rv)
{
	char buf[32];
	snprintf(buf, sizeof(buf), "%llu", (unsigned long long)rv);
	json_object_set_new(json_object_get(obj, "metadata"), "resourceVersion", json_string(buf));
}

static const char *meta_str(const json_t *obj, const char *field)
{
	return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

/* Store obj (a new object owned by the store from now on) at key with a new version, and record the event. */
static int commit(struct mem_store *s, const char *key, json_t *obj, tfjob_watch_event type, json_t *prev)
{
	s->rv++;
	set_rv(obj, s->rv);
	if (json_object_set(s->objects, key, obj))
		return TFJOB_ENOMEM;
	return push_event(s, type, key, json_incref(obj), prev ? json_incref(prev) : NULL);
}

/* Remove the object at key for good: a DELETED event carrying the deletion's version. */
static int remove_object(struct mem_store *s, const char *key, json_t *cur)
{
	json_t *gone = json_deep_copy(cur);
	if (!gone)
		return TFJOB_ENOMEM;
	s->rv++;
	set_rv(gone, s->rv);
	json_incref(cur);
	json_object_del(s->objects, key);
	return push_event(s, TFJOB_WATCH_DELETED, key, gone, cur);
}

static int has_status_subresource(const tfjob_resource *res) { return strcmp(res->resource, "events") != 0; }

/* Fill kind and apiVersion when the object lacks them. */
static void set_type_meta(json_t *obj, const tfjob_resource *res)
{
	const char *kind = tfjob__resource_kind(res);
	if (kind && !json_object_get(obj, "kind"))
		json_object_set_new(obj, "kind", json_string(kind));
	if (!json_object_get(obj, "apiVersion")) {
		char *av = tfjob__mem_api_version(res);
		if (av)
			json_object_set_new(obj, "apiVersion", json_string(av));
		free(av);
	}
}

/* ---- create ---- */

static int check_namespace(json_t *meta, const tfjob_resource *res, const char *ns, tfjob_error **err)
{
	const char *mns = json_string_value(json_object_get(meta, "namespace"));
	if (!res->namespaced) {
		json_object_del(meta, "namespace");
		return 0;
	}
	if (mns && mns[0] && strcmp(mns, ns))
		return tfjob__api_fail(err, TFJOB_EINVAL, 400, NULL,
		                       "the namespace of the provided object (%s) does not match the namespace sent on "
		                       "the request (%s)", mns, ns);
	json_object_set_new(meta, "namespace", json_string(ns));
	return 0;
}

static int choose_name(struct mem_store *s, json_t *meta, const tfjob_resource *res, const char *ns,
                       tfjob_error **err)
{
	const char *name = json_string_value(json_object_get(meta, "name"));
	if (name && name[0])
		return 0;
	const char *gen = json_string_value(json_object_get(meta, "generateName"));
	if (!gen || !gen[0]) {
		char q[256];
		qualified(q, sizeof(q), res);
		return tfjob__api_fail(err, TFJOB_EINVALID, 422, NULL,
		                       "%s is invalid: metadata.name: Required value: name or generateName is required", q);
	}
	static const char alphabet[] = "bcdfghjklmnpqrstvwxz2456789";
	for (int attempt = 0; attempt < 100; attempt++) {
		char suffix[6];
		for (int i = 0; i < 5; i++)
			suffix[i] = alphabet[store_rand(s) % (sizeof(alphabet) - 1)];
		suffix[5] = '\0';
		char *candidate = tfjob__strdup_printf("%s%s", gen, suffix);
		char *key = candidate ? object_key(res, ns, candidate) : NULL;
		int taken = key && json_object_get(s->objects, key);
		free(key);
		if (candidate && !taken) {
			json_object_set_new(meta, "name", json_string(candidate));
			free(candidate);
			return 0;
		}
		free(candidate);
	}
	return tfjob__api_fail(err, TFJOB_EEXISTS, 409, NULL, "could not generate a unique name from '%s'", gen);
}

static int prepare_create(struct mem_store *s, json_t *obj, const tfjob_resource *res, const char *ns,
                          tfjob_error **err)
{
	json_t *meta = json_object_get(obj, "metadata");
	if (!meta) {
		meta = json_object();
		json_object_set_new(obj, "metadata", meta);
	}
	if (!json_is_object(meta))
		return tfjob__api_fail(err, TFJOB_EINVAL, 400, NULL, "metadata must be an object");
	const char *rv = json_string_value(json_object_get(meta, "resourceVersion"));
	if (rv && rv[0])
		return tfjob__api_fail(err, TFJOB_EINVAL, 400, NULL, "resourceVersion should not be set on objects to be created");
	int rc = check_namespace(meta, res, ns, err);
	if (rc || (rc = choose_name(s, meta, res, ns, err)))
		return rc;
	char ts[32];
	tfjob_time_format(ts, sizeof(ts), store_now(s));
	json_object_set_new(meta, "uid", new_uid(s));
	json_object_set_new(meta, "creationTimestamp", json_string(ts));
	json_object_set_new(meta, "generation", json_integer(1));
	json_object_del(meta, "deletionTimestamp");
	json_object_del(meta, "deletionGracePeriodSeconds");
	set_type_meta(obj, res);
	if (has_status_subresource(res)) {
		json_object_del(obj, "status");
		if (!strcmp(res->resource, "pods") && (!res->group || !res->group[0]))
			json_object_set_new(obj, "status", json_pack("{s:s}", "phase", "Pending"));
	}
	return 0;
}

static int mem_create(void *data, char **out, const tfjob_resource *res, const char *ns, const char *object_json,
                      tfjob_error **err)
{
	struct mem_store *s = data;
	json_t *obj;
	int rc = tfjob__parse_object(&obj, object_json, "create", err);
	if (rc)
		return rc;
	pthread_mutex_lock(&s->mu);
	rc = prepare_create(s, obj, res, ns, err);
	char *key = rc ? NULL : object_key(res, ns, meta_str(obj, "name"));
	if (!rc && !key)
		rc = tfjob__oom(err);
	if (!rc && json_object_get(s->objects, key))
		rc = already_exists(err, res, meta_str(obj, "name"));
	if (!rc && commit(s, key, obj, TFJOB_WATCH_ADDED, NULL))
		rc = tfjob__oom(err);
	if (!rc)
		rc = tfjob__tr_dump(out, obj, err);
	pthread_mutex_unlock(&s->mu);
	free(key);
	json_decref(obj);
	return rc;
}

/* ---- get ---- */

static int mem_get(void *data, char **out, const tfjob_resource *res, const char *ns, const char *name,
                   tfjob_error **err)
{
	struct mem_store *s = data;
	char *key = object_key(res, ns, name);
	if (!key)
		return tfjob__oom(err);
	pthread_mutex_lock(&s->mu);
	json_t *obj = json_object_get(s->objects, key);
	int rc = obj ? tfjob__tr_dump(out, obj, err) : not_found(err, res, name);
	pthread_mutex_unlock(&s->mu);
	free(key);
	return rc;
}

/* ---- update, update_status, patch ---- */

/* Everything but metadata and status: a change there bumps metadata.generation. */
static int spec_changed(const json_t *a, const json_t *b)
{
	json_t *ca = json_copy((json_t *)a), *cb = json_copy((json_t *)b);
	int changed = 1;
	if (ca && cb) {
		const char *drop[] = { "metadata", "status", "kind", "apiVersion" };
		for (size_t i = 0; i < TFJOB_ARRAY_LEN(drop); i++) {
			json_object_del(ca, drop[i]);
			json_object_del(cb, drop[i]);
		}
		changed = !json_equal(ca, cb);
	}
	json_decref(ca);
	json_decref(cb);
	return changed;
}

/*
 * Check the resourceVersion and uid the caller sent against the stored object. Custom resources
 * (any group but the core one) do not allow unconditional updates, as the API server's CRD
 * strategy; patches carry the stored version and pass.
 */
static int check_preconditions(const json_t *incoming, const json_t *cur, const tfjob_resource *res, const char *ns,
                               const char *name, tfjob_error **err)
{
	const char *rv = meta_str(incoming, "resourceVersion");
	if (rv && rv[0] && strcmp(rv, meta_str(cur, "resourceVersion")))
		return conflict_modified(err, res, name);
	if ((!rv || !rv[0]) && res->group && res->group[0]) {
		char q[256];
		qualified(q, sizeof(q), res);
		char *msg = tfjob__strdup_printf("%s \"%s\" is invalid: metadata.resourceVersion: Invalid value: 0: must be "
		                                 "specified for an update", q, name);
		api_error(err, TFJOB_EINVALID, 422, res, name, msg);
		free(msg);
		return TFJOB_EINVALID;
	}
	const char *uid = meta_str(incoming, "uid");
	if (uid && uid[0] && strcmp(uid, meta_str(cur, "uid")))
		return update_uid_mismatch(err, res, ns, name, uid, meta_str(cur, "uid"));
	return 0;
}

/* The object an update stores: the caller's spec and metadata with the server's fields kept. */
static json_t *merge_update(const json_t *incoming, const json_t *cur, const tfjob_resource *res, int status)
{
	json_t *next;
	if (status) {
		next = json_deep_copy(cur);
		json_t *st = json_object_get(incoming, "status");
		if (next && st)
			json_object_set(next, "status", st);
		else if (next)
			json_object_del(next, "status");
		return next;
	}
	next = json_deep_copy(incoming);
	if (!next)
		return NULL;
	json_t *meta = json_object_get(next, "metadata");
	const json_t *cmeta = json_object_get(cur, "metadata");
	const char *keep[] = { "uid", "creationTimestamp", "generation", "deletionTimestamp",
	                       "deletionGracePeriodSeconds", "namespace", "name" };
	for (size_t i = 0; i < TFJOB_ARRAY_LEN(keep); i++) {
		json_t *v = json_object_get(cmeta, keep[i]);
		if (v)
			json_object_set(meta, keep[i], v);
		else
			json_object_del(meta, keep[i]);
	}
	if (has_status_subresource(res)) {
		json_t *st = json_object_get(cur, "status");
		if (st)
			json_object_set(next, "status", st);
		else
			json_object_del(next, "status");
	}
	set_type_meta(next, res);
	if (spec_changed(next, cur)) {
		json_int_t gen = json_integer_value(json_object_get(cmeta, "generation"));
		json_object_set_new(meta, "generation", json_integer(gen + 1));
	}
	return next;
}

static int finalizers_empty(const json_t *obj)
{
	return json_array_size(json_object_get(json_object_get(obj, "metadata"), "finalizers")) == 0;
}

/* Shared by update, update_status and patch: incoming is the full desired object (borrowed). */
static int store_update(struct mem_store *s, char **out, const tfjob_resource *res, const char *ns,
                        const char *name, const json_t *incoming, int status, tfjob_error **err)
{
	if (!json_is_object(json_object_get(incoming, "metadata")))
		return tfjob__api_fail(err, TFJOB_EINVAL, 400, NULL, "metadata must be an object");
	const char *mns = meta_str(incoming, "namespace");
	if (res->namespaced && mns && mns[0] && strcmp(mns, ns))
		return tfjob__api_fail(err, TFJOB_EINVAL, 400, NULL,
		                       "the namespace of the provided object (%s) does not match the namespace sent on "
		                       "the request (%s)", mns, ns);
	char *key = object_key(res, ns, name);
	if (!key)
		return tfjob__oom(err);
	json_t *cur = json_object_get(s->objects, key);
	int rc = cur ? check_preconditions(incoming, cur, res, ns, name, err) : not_found(err, res, name);
	json_t *next = rc ? NULL : merge_update(incoming, cur, res, status);
	if (!rc && !next)
		rc = tfjob__oom(err);
	if (!rc) {
		json_t *cmp = json_deep_copy(next);
		set_rv(cmp, json_is_string(json_object_get(json_object_get(cur, "metadata"), "resourceVersion"))
		              ? strtoull(meta_str(cur, "resourceVersion"), NULL, 10) : 0);
		int unchanged = cmp && json_equal(cmp, cur);
		json_decref(cmp);
		if (unchanged)
			rc = tfjob__tr_dump(out, cur, err);
		else if (meta_str(cur, "deletionTimestamp") && finalizers_empty(next))
			rc = remove_object(s, key, cur) ? tfjob__oom(err) : tfjob__tr_dump(out, next, err);
		else {
			json_t *prev = json_incref(cur);
			rc = commit(s, key, next, TFJOB_WATCH_MODIFIED, prev) ? tfjob__oom(err) : tfjob__tr_dump(out, next, err);
			json_decref(prev);
		}
	}
	json_decref(next);
	free(key);
	return rc;
}

static int update_common(void *data, char **out, const tfjob_resource *res, const char *ns, const char *name,
                         const char *object_json, int status, tfjob_error **err)
{
	struct mem_store *s = data;
	if (status && !has_status_subresource(res))
		return not_found(err, res, name);
	json_t *obj;
	int rc = tfjob__parse_object(&obj, object_json, status ? "update_status" : "update", err);
	if (rc)
		return rc;
	pthread_mutex_lock(&s->mu);
	rc = store_update(s, out, res, ns, name, obj, status, err);
	pthread_mutex_unlock(&s->mu);
	json_decref(obj);
	return rc;
}

static int mem_update(void *data, char **out, const tfjob_resource *res, const char *ns, const char *name,
                      const char *object_json, tfjob_error **err)
{
	return update_common(data, out, res, ns, name, object_json, 0, err);
}

static int mem_update_status(void *data, char **out, const tfjob_resource *res, const char *ns, const char *name,
                             const char *object_json, tfjob_error **err)
{
	return update_common(data, out, res, ns, name, object_json, 1, err);
}

static int mem_patch(void *data, char **out, const tfjob_resource *res, const char *ns, const char *name,
                     const char *subresource, const char *merge_patch_json, tfjob_error **err)
{
	struct mem_store *s = data;
	int status = subresource != NULL;
	if (status && !has_status_subresource(res))
		return not_found(err, res, name);
	json_t *patch;
	int rc = tfjob__parse_object(&patch, merge_patch_json, "patch", err);
	if (rc)
		return rc;
	char *key = object_key(res, ns, name);
	pthread_mutex_lock(&s->mu);
	json_t *cur = key ? json_object_get(s->objects, key) : NULL;
	if (!key)
		rc = tfjob__oom(err);
	else if (!cur)
		rc = not_found(err, res, name);
	else {
		json_t *merged = tfjob__merge_patch(cur, patch);
		if (!merged)
			rc = tfjob__oom(err);
		else if (!json_is_object(json_object_get(merged, "metadata")))
			rc = tfjob__api_fail(err, TFJOB_EINVAL, 400, NULL, "metadata must be an object");
		else {
			const char *pname = meta_str(merged, "name");
			if (!pname || strcmp(pname, name))
				json_object_set_new(json_object_get(merged, "metadata"), "name", json_string(name));
			rc = store_update(s, out, res, ns, name, merged, status, err);
		}
		json_decref(merged);
	}
	pthread_mutex_unlock(&s->mu);
	free(key);
	json_decref(patch);
	return rc;
}

/* ---- delete and garbage collection ---- */

static int owned_by(const json_t *obj, const char *uid)
{
	const json_t *refs = json_object_get(json_object_get(obj, "metadata"), "ownerReferences");
	size_t i;
	const json_t *ref;
	json_array_foreach(refs, i, ref) {
		const char *u = json_string_value(json_object_get(ref, "uid"));
		if (u && !strcmp(u, uid))
			return 1;
	}
	return 0;
}

/* Keys of the objects owned by uid (a new array of strings). */
static json_t *dependents(struct mem_store *s, const char *uid)
{
	json_t *keys = json_array();
	const char *key;
	json_t *obj;
	json_object_foreach(s->objects, key, obj) {
		if (keys && owned_by(obj, uid))
			json_array_append_new(keys, json_string(key));
	}
	return keys;
}

static int delete_key(struct mem_store *s, const char *key, tfjob_propagation policy, int depth);

/* Orphan: drop the owner reference from each dependent. */
static int orphan_dependents(struct mem_store *s, const char *uid)
{
	json_t *keys = dependents(s, uid);
	size_t i;
	json_t *k;
	int rc = keys ? 0 : TFJOB_ENOMEM;
	json_array_foreach(keys, i, k) {
		json_t *cur = json_object_get(s->objects, json_string_value(k));
		json_t *next = json_deep_copy(cur);
		json_t *refs = json_object_get(json_object_get(next, "metadata"), "ownerReferences");
		for (size_t j = json_array_size(refs); j-- > 0;)
		{
			const char *u = json_string_value(json_object_get(json_array_get(refs, j), "uid"));
			if (u && !strcmp(u, uid))
				json_array_remove(refs, j);
		}
		if (next && !rc)
			rc = commit(s, json_string_value(k), next, TFJOB_WATCH_MODIFIED, cur);
		json_decref(next);
	}
	json_decref(keys);
	return rc;
}

static int collect_dependents(struct mem_store *s, const char *uid, int depth)
{
	if (depth > 32)
		return 0;
	json_t *keys = dependents(s, uid);
	if (!keys)
		return TFJOB_ENOMEM;
	size_t i;
	json_t *k;
	int rc = 0;
	json_array_foreach(keys, i, k) {
		if (!rc && json_object_get(s->objects, json_string_value(k)))
			rc = delete_key(s, json_string_value(k), TFJOB_PROPAGATION_BACKGROUND, depth + 1);
	}
	json_decref(keys);
	return rc;
}

/* The namespace controller's job: everything in a deleted namespace goes too. */
static int delete_namespace_contents(struct mem_store *s, const char *name, int depth)
{
	json_t *keys = json_array();
	const char *key;
	json_t *obj;
	json_object_foreach(s->objects, key, obj) {
		/* key = group/resource/ns/name: the third component is the namespace */
		const char *p = strchr(key, '/');
		p = p ? strchr(p + 1, '/') : NULL;
		size_t n = strlen(name);
		if (keys && p && !strncmp(p + 1, name, n) && p[1 + n] == '/')
			json_array_append_new(keys, json_string(key));
	}
	if (!keys)
		return TFJOB_ENOMEM;
	size_t i;
	json_t *k;
	int rc = 0;
	json_array_foreach(keys, i, k) {
		if (!rc && json_object_get(s->objects, json_string_value(k)))
			rc = delete_key(s, json_string_value(k), TFJOB_PROPAGATION_BACKGROUND, depth + 1);
	}
	json_decref(keys);
	return rc;
}

/* Delete the object at key: finalizers make it terminate, otherwise it goes (and its dependents). */
static int delete_key(struct mem_store *s, const char *key, tfjob_propagation policy, int depth)
{
	json_t *cur = json_object_get(s->objects, key);
	if (!cur)
		return 0;
	if (!finalizers_empty(cur)) {
		if (meta_str(cur, "deletionTimestamp"))
			return 0;
		json_t *next = json_deep_copy(cur);
		char ts[32];
		tfjob_time_format(ts, sizeof(ts), store_now(s));
		json_object_set_new(json_object_get(next, "metadata"), "deletionTimestamp", json_string(ts));
		json_object_set_new(json_object_get(next, "metadata"), "deletionGracePeriodSeconds", json_integer(0));
		int rc = next ? commit(s, key, next, TFJOB_WATCH_MODIFIED, cur) : TFJOB_ENOMEM;
		json_decref(next);
		return rc;
	}
	char *uid = tfjob__strdup(meta_str(cur, "uid"));
	int rc = 0;
	if (uid && policy == TFJOB_PROPAGATION_ORPHAN)
		rc = orphan_dependents(s, uid);
	else if (uid && policy == TFJOB_PROPAGATION_FOREGROUND)
		rc = collect_dependents(s, uid, depth);
	int is_namespace = !strncmp(key, "/namespaces//", 13);
	char *ns_name = is_namespace ? tfjob__strdup(key + 13) : NULL;
	if (!rc && json_object_get(s->objects, key))
		rc = remove_object(s, key, json_object_get(s->objects, key));
	if (!rc && ns_name)
		rc = delete_namespace_contents(s, ns_name, depth);
	free(ns_name);
	if (!rc && uid && policy != TFJOB_PROPAGATION_ORPHAN && policy != TFJOB_PROPAGATION_FOREGROUND)
		rc = collect_dependents(s, uid, depth);
	free(uid);
	return rc;
}

static int mem_delete(void *data, char **out, const tfjob_resource *res, const char *ns, const char *name,
                      const tfjob_delete_options *opts, tfjob_error **err)
{
	struct mem_store *s = data;
	char *key = object_key(res, ns, name);
	if (!key)
		return tfjob__oom(err);
	pthread_mutex_lock(&s->mu);
	json_t *cur = json_object_get(s->objects, key);
	int rc = 0;
	if (!cur)
		rc = not_found(err, res, name);
	else if (opts->precondition_uid && strcmp(opts->precondition_uid, meta_str(cur, "uid")))
		rc = delete_precondition_failed(err, res, name, "UID", opts->precondition_uid, meta_str(cur, "uid"));
	else if (opts->precondition_resource_version &&
	         strcmp(opts->precondition_resource_version, meta_str(cur, "resourceVersion")))
		rc = delete_precondition_failed(err, res, name, "ResourceVersion", opts->precondition_resource_version,
		                         meta_str(cur, "resourceVersion"));
	if (!rc) {
		json_t *keep = json_incref(cur);
		if (delete_key(s, key, opts->propagation, 0))
			rc = tfjob__oom(err);
		json_t *now = json_object_get(s->objects, key);
		if (!rc)
			rc = tfjob__tr_dump(out, now ? now : keep, err);
		json_decref(keep);
	}
	pthread_mutex_unlock(&s->mu);
	free(key);
	return rc;
}

/* ---- list ---- */

static int cmp_str(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static char *hex_encode(const char *s)
{
	size_t n = strlen(s);
	char *h = malloc(2 * n + 1);
	if (!h)
		return NULL;
	for (size_t i = 0; i < n; i++)
		snprintf(h + 2 * i, 3, "%02x", (unsigned char)s[i]);
	h[2 * n] = '\0';
	return h;
}

static char *hex_decode(const char *h)
{
	size_t n = strlen(h);
	if (n % 2)
		return NULL;
	char *s = malloc(n / 2 + 1);
	if (!s)
		return NULL;
	for (size_t i = 0; i < n / 2; i++) {
		unsigned int v;
		if (sscanf(h + 2 * i, "%2x", &v) != 1) {
			free(s);
			return NULL;
		}
		s[i] = (char)v;
	}
	s[n / 2] = '\0';
	return s;
}

/* Sorted keys under prefix (borrowed from the store's objects while the lock is held). */
static const char **sorted_keys(struct mem_store *s, const char *prefix, size_t *count)
{
	size_t cap = json_object_size(s->objects) + 1, n = 0, plen = strlen(prefix);
	const char **keys = malloc(cap * sizeof(*keys));
	if (!keys)
		return NULL;
	const char *key;
	json_t *obj;
	json_object_foreach(s->objects, key, obj) {
		if (!strncmp(key, prefix, plen))
			keys[n++] = key;
	}
	qsort(keys, n, sizeof(*keys), cmp_str);
	*count = n;
	return keys;
}

static json_t *list_object(struct mem_store *s, const tfjob_resource *res, json_t *items, const char *cont,
                           size_t remaining)
{
	const char *kind = tfjob__resource_kind(res);
	char *list_kind = kind ? tfjob__strdup_printf("%sList", kind) : NULL;
	if (!list_kind) {
		const char *first = json_string_value(json_object_get(json_array_get(items, 0), "kind"));
		list_kind = tfjob__strdup_printf("%sList", first ? first : "");
	}
	char *av = tfjob__mem_api_version(res);
	char rv[32];
	snprintf(rv, sizeof(rv), "%llu", (unsigned long long)s->rv);
	json_t *meta = json_pack("{s:s}", "resourceVersion", rv);
	if (meta && cont) {
		json_object_set_new(meta, "continue", json_string(cont));
		json_object_set_new(meta, "remainingItemCount", json_integer((json_int_t)remaining));
	}
	json_t *list = (list_kind && av && meta) ? json_pack("{s:s, s:s, s:O, s:O}", "kind", list_kind, "apiVersion", av,
	                                                     "metadata", meta, "items", items) : NULL;
	free(list_kind);
	free(av);
	json_decref(meta);
	return list;
}

static int list_locked(struct mem_store *s, char **out, const tfjob_resource *res, const char *prefix,
                       const tfjob__selector *labels, const tfjob__selector *fields, const tfjob_list_options *opts,
                       tfjob_error **err)
{
	char *after = NULL;
	if (opts->continue_token && opts->continue_token[0]) {
		after = hex_decode(opts->continue_token);
		if (!after || strncmp(after, prefix, strlen(prefix))) {
			free(after);
			return tfjob__api_fail(err, TFJOB_EINVAL, 400, NULL, "continue key is not valid: invalid continue token");
		}
	}
	size_t n = 0, i = 0;
	const char **keys = sorted_keys(s, prefix, &n);
	json_t *items = json_array();
	const char *last = NULL;
	size_t remaining = 0;
	int rc = (!keys || !items) ? tfjob__oom(err) : 0;
	for (; !rc && i < n; i++) {
		if (after && strcmp(keys[i], after) <= 0)
			continue;
		json_t *obj = json_object_get(s->objects, keys[i]);
		if (!tfjob__selector_matches(labels, json_object_get(json_object_get(obj, "metadata"), "labels")) ||
		    !tfjob__field_selector_matches(fields, obj))
			continue;
		if (opts->limit > 0 && (int64_t)json_array_size(items) == opts->limit) {
			remaining++;
			continue;
		}
		json_array_append(items, obj);
		last = keys[i];
	}
	char *cont = (!rc && remaining && last) ? hex_encode(last) : NULL;
	json_t *list = rc ? NULL : list_object(s, res, items, cont, remaining);
	if (!rc)
		rc = list ? tfjob__tr_dump(out, list, err) : tfjob__oom(err);
	json_decref(list);
	json_decref(items);
	free(cont);
	free(keys);
	free(after);
	return rc;
}

static int mem_list(void *data, char **out, const tfjob_resource *res, const char *ns, const tfjob_list_options *opts,
                    tfjob_error **err)
{
	struct mem_store *s = data;
	tfjob__selector *labels = NULL, *fields = NULL;
	int rc = tfjob__selector_parse(&labels, opts->label_selector, err);
	if (rc || (rc = tfjob__field_selector_parse(&fields, opts->field_selector, err))) {
		tfjob__selector_free(labels);
		return rc;
	}
	char *prefix = tfjob__mem_prefix(res, ns);
	if (!prefix)
		rc = tfjob__oom(err);
	if (!rc) {
		pthread_mutex_lock(&s->mu);
		rc = list_locked(s, out, res, prefix, labels, fields, opts, err);
		pthread_mutex_unlock(&s->mu);
	}
	free(prefix);
	tfjob__selector_free(labels);
	tfjob__selector_free(fields);
	return rc;
}

/* ---- lifecycle ---- */

static const char *mem_default_namespace(void *data) { return ((struct mem_store *)data)->default_ns; }

static void mem_free(void *data)
{
	struct mem_store *s = data;
	if (!s)
		return;
	for (size_t i = 0; i < s->hist_len; i++)
		event_clear(&s->hist[(s->hist_start + i) % s->hist_cap]);
	free(s->hist);
	json_decref(s->objects);
	free(s->default_ns);
	pthread_mutex_destroy(&s->mu);
	pthread_cond_destroy(&s->cond);
	free(s);
}

int tfjob_memory_options_init(tfjob_memory_options *opts, unsigned int version)
{
	return tfjob__versioned_init(&tfjob__memory_options_v, opts, version);
}

static struct mem_store *store_new(const tfjob_memory_options *opts)
{
	struct mem_store *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	pthread_mutex_init(&s->mu, NULL);
	tfjob__cond_init_monotonic(&s->cond);
	/* A fresh store is at version 1, as a fresh etcd is at revision 1: the list of an empty store
	   then says "1", a version a watch resumes from. "0" would make that watch start "from any
	   version" with the objects as they are then, and creations and deletions made before its
	   thread runs would never be seen (an informer's expectations would wait for them). */
	s->rv = 1;
	s->hist_cap = opts->history_limit ? opts->history_limit : DEFAULT_HISTORY;
	s->hist = calloc(s->hist_cap, sizeof(*s->hist));
	s->objects = json_object();
	s->bookmark_ms = opts->bookmark_interval_ms ? opts->bookmark_interval_ms : DEFAULT_BOOKMARK_MS;
	s->clock = opts->clock;
	s->clock_payload = opts->clock_payload;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	s->rng = opts->seed ? opts->seed : ((uint64_t)ts.tv_sec * 1000000007ULL) ^ (uint64_t)ts.tv_nsec ^ (uint64_t)(uintptr_t)s;
	if (!s->rng)
		s->rng = 88172645463325252ULL;
	s->default_ns = tfjob__strdup(opts->default_namespace ? opts->default_namespace : "default");
	if (!s->hist || !s->objects || !s->default_ns) {
		mem_free(s);
		return NULL;
	}
	return s;
}

int tfjob_memory_transport_new(tfjob_transport **out, const tfjob_memory_options *caller_opts, tfjob_error **err)
{
	if (!out)
		return tfjob__fail(err, TFJOB_EINVAL, "memory transport: NULL out");
	tfjob_memory_options copy;
	int rc = tfjob__versioned_copy(&tfjob__memory_options_v, &copy, caller_opts, err);
	if (rc)
		return rc;
	const tfjob_memory_options *opts = &copy;
	struct mem_store *s = store_new(opts);
	if (!s)
		return tfjob__oom(err);
	tfjob_transport_backend be = {
		.version = TFJOB_TRANSPORT_BACKEND_VERSION,
		.data = s,
		.free = mem_free,
		.default_namespace = mem_default_namespace,
		.get = mem_get,
		.list = mem_list,
		.create = mem_create,
		.update = mem_update,
		.update_status = mem_update_status,
		.patch = mem_patch,
		.del = mem_delete,
		.watch = tfjob__mem_watch,
	};
	rc = tfjob_transport_new(out, &be, err);
	if (rc)
		mem_free(s);
	return rc;
}

int tfjob_memory_transport_is(const tfjob_transport *t) { return t && t->be.free == mem_free; }

uint64_t tfjob_memory_resource_version(const tfjob_transport *t)
{
	if (!tfjob_memory_transport_is(t))
		return 0;
	struct mem_store *s = t->be.data;
	pthread_mutex_lock(&s->mu);
	uint64_t rv = s->rv;
	pthread_mutex_unlock(&s->mu);
	return rv;
}

int tfjob_memory_bookmark(tfjob_transport *t)
{
	if (!tfjob_memory_transport_is(t))
		return TFJOB_EINVAL;
	struct mem_store *s = t->be.data;
	pthread_mutex_lock(&s->mu);
	s->bookmark_gen++;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->mu);
	return 0;
}

int tfjob_memory_compact(tfjob_transport *t)
{
	if (!tfjob_memory_transport_is(t))
		return TFJOB_EINVAL;
	struct mem_store *s = t->be.data;
	pthread_mutex_lock(&s->mu);
	for (size_t i = 0; i < s->hist_len; i++)
		event_clear(&s->hist[(s->hist_start + i) % s->hist_cap]);
	s->hist_start = s->hist_len = 0;
	s->compacted_rv = s->rv;
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->mu);
	return 0;
}
