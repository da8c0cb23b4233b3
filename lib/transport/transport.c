/*
 * The transport handle: the public calls, argument checks and the dispatch to a backend.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "transport/internal.h"
#include "util/versions.h"

static const tfjob_resource builtin_resources[] = {
	TFJOB_RESOURCE_TFJOBS_INIT,   TFJOB_RESOURCE_PODS_INIT,      TFJOB_RESOURCE_SERVICES_INIT,
	TFJOB_RESOURCE_EVENTS_INIT,   TFJOB_RESOURCE_PODGROUPS_INIT, TFJOB_RESOURCE_NAMESPACES_INIT,
};
static const char *const builtin_kinds[] = { "TFJob", "Pod", "Service", "Event", "PodGroup", "Namespace" };

const tfjob_resource *tfjob_resource_lookup(const char *name)
{
	if (!name)
		return NULL;
	for (size_t i = 0; i < TFJOB_ARRAY_LEN(builtin_resources); i++) {
		const char *plural = builtin_resources[i].resource;
		size_t n = strlen(plural);
		if (!strcasecmp(name, plural) || !strcasecmp(name, builtin_kinds[i]) ||
		    (strlen(name) == n - 1 && !strncasecmp(name, plural, n - 1)))
			return &builtin_resources[i];
	}
	if (!strcasecmp(name, "svc"))
		return &builtin_resources[2];
	if (!strcasecmp(name, "ev"))
		return &builtin_resources[3];
	return NULL;
}

const char *tfjob__resource_kind(const tfjob_resource *res)
{
	for (size_t i = 0; i < TFJOB_ARRAY_LEN(builtin_resources); i++)
		if (!strcmp(res->resource, builtin_resources[i].resource) &&
		    !strcmp(res->group ? res->group : "", builtin_resources[i].group))
			return builtin_kinds[i];
	return NULL;
}

int tfjob_list_options_init(tfjob_list_options *opts, unsigned int version)
{
	return tfjob__versioned_init(&tfjob__list_options_v, opts, version);
}

int tfjob_delete_options_init(tfjob_delete_options *opts, unsigned int version)
{
	return tfjob__versioned_init(&tfjob__delete_options_v, opts, version);
}

int tfjob_apply_options_init(tfjob_apply_options *opts, unsigned int version)
{
	return tfjob__versioned_init(&tfjob__apply_options_v, opts, version);
}

int tfjob_watch_options_init(tfjob_watch_options *opts, unsigned int version)
{
	return tfjob__versioned_init(&tfjob__watch_options_v, opts, version);
}

const char *tfjob_watch_event_name(tfjob_watch_event type)
{
	switch (type) {
	case TFJOB_WATCH_ADDED:
		return "ADDED";
	case TFJOB_WATCH_MODIFIED:
		return "MODIFIED";
	case TFJOB_WATCH_DELETED:
		return "DELETED";
	case TFJOB_WATCH_BOOKMARK:
		return "BOOKMARK";
	}
	return "UNKNOWN";
}

tfjob_error *tfjob_transport_error_new(int code, int http_status, const char *message, const char *details_json)
{
	tfjob_error *e = tfjob__error_new(code, message);
	if (!e)
		return NULL;
	e->http_status = http_status;
	if (details_json && !(e->details_json = tfjob__strdup(details_json))) {
		tfjob_error_free(e);
		return NULL;
	}
	return e;
}

int tfjob_transport_new(tfjob_transport **out, const tfjob_transport_backend *backend, tfjob_error **err)
{
	if (!out || !backend)
		return tfjob__fail(err, TFJOB_EINVAL, "transport: NULL argument");
	tfjob_transport_backend be;
	int rc = tfjob__versioned_copy(&tfjob__transport_backend_v, &be, backend, err);
	if (rc)
		return rc;
	if (!be.free)
		return tfjob__fail(err, TFJOB_EINVAL, "transport backend: the free slot is required");
	tfjob_transport *t = calloc(1, sizeof(*t));
	if (!t)
		return tfjob__oom(err);
	t->be = be;
	*out = t;
	return 0;
}

void *tfjob_transport_backend_data(const tfjob_transport *t) { return t ? t->be.data : NULL; }

void tfjob_transport_free(tfjob_transport *t)
{
	if (!t)
		return;
	t->be.free(t->be.data);
	free(t);
}

const char *tfjob_transport_namespace(const tfjob_transport *t)
{
	const char *ns = t && t->be.default_namespace ? t->be.default_namespace(t->be.data) : NULL;
	return ns && ns[0] ? ns : "default";
}

/* Check the common arguments; resolve ns (NULL -> the transport's, cluster-scoped -> ""). */
static int check_args(const char **ns, tfjob_transport *t, const tfjob_resource *res, const void *slot,
                      const char *verb, tfjob_error **err)
{
	if (!t || !res || !res->version || !res->resource || !res->resource[0])
		return tfjob__fail(err, TFJOB_EINVAL, "%s: NULL transport or incomplete resource", verb);
	if (!slot)
		return tfjob__fail(err, TFJOB_ESTATE, "%s: this transport backend does not support it", verb);
	if (!res->namespaced)
		*ns = "";
	else if (!*ns)
		*ns = tfjob_transport_namespace(t);
	return 0;
}

static int check_name(const char *name, const char *verb, tfjob_error **err)
{
	if (!name || !name[0])
		return tfjob__fail(err, TFJOB_EINVAL, "%s: a name is required", verb);
	if (strchr(name, '/') || !strcmp(name, ".") || !strcmp(name, ".."))
		return tfjob__fail(err, TFJOB_EINVAL, "%s: invalid name '%s'", verb, name);
	return 0;
}

/* ns for verbs on one object: "" (all namespaces) is not allowed. */
static int check_one_ns(const tfjob_resource *res, const char *ns, const char *verb, tfjob_error **err)
{
	if (res->namespaced && !ns[0])
		return tfjob__fail(err, TFJOB_EINVAL, "%s: a namespace is required for %s", verb, res->resource);
	return 0;
}

int tfjob_transport_get(char **out, tfjob_transport *t, const tfjob_resource *res, const char *ns,
                        const char *name, tfjob_error **err)
{
	int rc = check_args(&ns, t, res, t ? (const void *)t->be.get : NULL, "get", err);
	if (rc || (rc = check_name(name, "get", err)) || (rc = check_one_ns(res, ns, "get", err)))
		return rc;
	char *tmp = NULL;
	rc = t->be.get(t->be.data, &tmp, res, ns, name, err);
	if (rc == 0 && out)
		*out = tmp;
	else
		free(tmp);
	return rc;
}

int tfjob_transport_list(char **out, tfjob_transport *t, const tfjob_resource *res, const char *ns,
                         const tfjob_list_options *caller_opts, tfjob_error **err)
{
	tfjob_list_options copy;
	const tfjob_list_options *opts = &copy;
	int rc = check_args(&ns, t, res, t ? (const void *)t->be.list : NULL, "list", err);
	if (rc)
		return rc;
	if ((rc = tfjob__versioned_copy(&tfjob__list_options_v, &copy, caller_opts, err)))
		return rc;
	if (opts->limit < 0)
		return tfjob__fail(err, TFJOB_EINVAL, "list: negative limit");
	char *tmp = NULL;
	rc = t->be.list(t->be.data, &tmp, res, ns, opts, err);
	if (rc == 0 && out)
		*out = tmp;
	else
		free(tmp);
	return rc;
}

static int create_in(char **out, tfjob_transport *t, const tfjob_resource *res, const char *ns,
                     const char *object_json, tfjob_error **err);

/* metadata.namespace of an object given as JSON text, copied; NULL when absent or not JSON. */
static char *object_namespace(const char *object_json)
{
	char *ns = NULL;
	if (tfjob__object_meta(object_json, "namespace", NULL, &ns, NULL) == 0 && ns && !ns[0]) {
		free(ns);
		ns = NULL;
	}
	return ns;
}

int tfjob_transport_create(char **out, tfjob_transport *t, const tfjob_resource *res, const char *ns,
                           const char *object_json, tfjob_error **err)
{
	char *from_object = ns ? NULL : object_namespace(object_json);
	if (from_object)
		ns = from_object;
	int rc = create_in(out, t, res, ns, object_json, err);
	free(from_object);
	return rc;
}

static int create_in(char **out, tfjob_transport *t, const tfjob_resource *res, const char *ns,
                     const char *object_json, tfjob_error **err)
{
	int rc = check_args(&ns, t, res, t ? (const void *)t->be.create : NULL, "create", err);
	if (rc || (rc = check_one_ns(res, ns, "create", err)))
		return rc;
	if (!object_json)
		return tfjob__fail(err, TFJOB_EINVAL, "create: no object given");
	char *tmp = NULL;
	rc = t->be.create(t->be.data, &tmp, res, ns, object_json, err);
	if (rc == 0 && out)
		*out = tmp;
	else
		free(tmp);
	return rc;
}

/* metadata.name of an object given as JSON text, copied. */
static int object_name(char **name, const char *object_json, const char *verb, tfjob_error **err)
{
	int rc = tfjob__object_meta(object_json, verb, name, NULL, err);
	if (rc)
		return rc;
	if (!*name || !(*name)[0]) {
		free(*name);
		*name = NULL;
		return tfjob__fail(err, TFJOB_EINVAL, "%s: metadata.name is required", verb);
	}
	return 0;
}

static int update_in(char **out, tfjob_transport *t, const tfjob_resource *res, const char *ns,
                     const char *object_json, int status, tfjob_error **err);

static int update_common(char **out, tfjob_transport *t, const tfjob_resource *res, const char *ns,
                         const char *object_json, int status, tfjob_error **err)
{
	char *from_object = ns ? NULL : object_namespace(object_json);
	if (from_object)
		ns = from_object;
	int rc = update_in(out, t, res, ns, object_json, status, err);
	free(from_object);
	return rc;
}

static int update_in(char **out, tfjob_transport *t, const tfjob_resource *res, const char *ns,
                     const char *object_json, int status, tfjob_error **err)
{
	const char *verb = status ? "update_status" : "update";
	int rc = check_args(&ns, t, res, t ? (status ? (const void *)t->be.update_status : (const void *)t->be.update) : NULL,
	                    verb, err);
	if (rc || (rc = check_one_ns(res, ns, verb, err)))
		return rc;
	char *name = NULL;
	if ((rc = object_name(&name, object_json, verb, err)))
		return rc;
	if ((rc = check_name(name, verb, err))) {
		free(name);
		return rc;
	}
	char *tmp = NULL;
	rc = status ? t->be.update_status(t->be.data, &tmp, res, ns, name, object_json, err)
	            : t->be.update(t->be.data, &tmp, res, ns, name, object_json, err);
	free(name);
	if (rc == 0 && out)
		*out = tmp;
	else
		free(tmp);
	return rc;
}

int tfjob_transport_update(char **out, tfjob_transport *t, const tfjob_resource *res, const char *ns,
                           const char *object_json, tfjob_error **err)
{
	return update_common(out, t, res, ns, object_json, 0, err);
}

int tfjob_transport_update_status(char **out, tfjob_transport *t, const tfjob_resource *res, const char *ns,
                                  const char *object_json, tfjob_error **err)
{
	return update_common(out, t, res, ns, object_json, 1, err);
}

int tfjob_transport_patch(char **out, tfjob_transport *t, const tfjob_resource *res, const char *ns,
                          const char *name, const char *subresource, const char *merge_patch_json, tfjob_error **err)
{
	int rc = check_args(&ns, t, res, t ? (const void *)t->be.patch : NULL, "patch", err);
	if (rc || (rc = check_name(name, "patch", err)) || (rc = check_one_ns(res, ns, "patch", err)))
		return rc;
	if (subresource && strcmp(subresource, "status"))
		return tfjob__fail(err, TFJOB_EINVAL, "patch: unsupported subresource '%s'", subresource);
	json_t *patch;
	if ((rc = tfjob__parse_object(&patch, merge_patch_json, "patch", err)))
		return rc;
	json_decref(patch);
	char *tmp = NULL;
	rc = t->be.patch(t->be.data, &tmp, res, ns, name, subresource, merge_patch_json, err);
	if (rc == 0 && out)
		*out = tmp;
	else
		free(tmp);
	return rc;
}

static int apply_in(char **out, char **warnings, tfjob_transport *t, const tfjob_resource *res, const char *ns,
                    const char *object_json, const tfjob_apply_options *caller_opts, tfjob_error **err)
{
	int rc = check_args(&ns, t, res, t ? (const void *)t->be.apply : NULL, "apply", err);
	if (rc || (rc = check_one_ns(res, ns, "apply", err)))
		return rc;
	if (!caller_opts)
		return tfjob__fail(err, TFJOB_EINVAL, "apply: options with a field manager are required");
	tfjob_apply_options copy;
	if ((rc = tfjob__versioned_copy(&tfjob__apply_options_v, &copy, caller_opts, err)))
		return rc;
	const tfjob_apply_options *opts = &copy;
	if (!opts->field_manager || !opts->field_manager[0])
		return tfjob__fail(err, TFJOB_EINVAL, "apply: a field manager is required");
	if ((unsigned)opts->field_validation > TFJOB_FIELD_VALIDATION_IGNORE)
		return tfjob__fail(err, TFJOB_EINVAL, "apply: unknown field validation %d", (int)opts->field_validation);
	json_t *obj;
	if ((rc = tfjob__parse_object(&obj, object_json, "apply", err)))
		return rc;
	const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
	if (!(rc = check_name(name, "apply", err))) {
		char *tmp = NULL, *warn = NULL;
		rc = t->be.apply(t->be.data, &tmp, &warn, res, ns, name, object_json, opts, err);
		if (rc == 0 && out)
			*out = tmp;
		else
			free(tmp);
		if (rc == 0 && warnings)
			*warnings = warn;
		else
			free(warn);
	}
	json_decref(obj);
	return rc;
}

int tfjob_transport_apply(char **out, char **warnings, tfjob_transport *t, const tfjob_resource *res, const char *ns,
                          const char *object_json, const tfjob_apply_options *opts, tfjob_error **err)
{
	if (warnings)
		*warnings = NULL;
	char *from_object = ns ? NULL : object_namespace(object_json);
	if (from_object)
		ns = from_object;
	int rc = apply_in(out, warnings, t, res, ns, object_json, opts, err);
	free(from_object);
	return rc;
}

int tfjob_transport_delete(char **out, tfjob_transport *t, const tfjob_resource *res, const char *ns,
                           const char *name, const tfjob_delete_options *caller_opts, tfjob_error **err)
{
	tfjob_delete_options copy;
	const tfjob_delete_options *opts = &copy;
	int rc = check_args(&ns, t, res, t ? (const void *)t->be.del : NULL, "delete", err);
	if (rc || (rc = check_name(name, "delete", err)) || (rc = check_one_ns(res, ns, "delete", err)))
		return rc;
	if ((rc = tfjob__versioned_copy(&tfjob__delete_options_v, &copy, caller_opts, err)))
		return rc;
	if (opts->propagation < TFJOB_PROPAGATION_DEFAULT || opts->propagation > TFJOB_PROPAGATION_ORPHAN)
		return tfjob__fail(err, TFJOB_EINVAL, "delete: unknown propagation policy %d", (int)opts->propagation);
	char *tmp = NULL;
	rc = t->be.del(t->be.data, &tmp, res, ns, name, opts, err);
	if (rc == 0 && out)
		*out = tmp;
	else
		free(tmp);
	return rc;
}

/* ---- Events ---- */

static int set_str(json_t *obj, const char *key, const char *value)
{
	return value ? json_object_set_new(obj, key, json_string(value)) : 0;
}

/* A core/v1 Event about the involved object, named NAME.HEX as client-go's recorder names them. */
static int build_event(json_t **out, const char *ns, const json_t *involved, const char *type, const char *reason,
                       const char *message, const char *component, tfjob_error **err)
{
	const json_t *meta = json_object_get(involved, "metadata");
	const char *iname = json_string_value(json_object_get(meta, "name"));
	if (!iname)
		return tfjob__fail(err, TFJOB_EINVAL, "create_event: the involved object has no metadata.name");
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	char now[32];
	tfjob_time_format(now, sizeof(now), ts.tv_sec);
	uint64_t unique = ((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec) ^ (uint64_t)rand();
	char *name = tfjob__strdup_printf("%s.%016llx", iname, (unsigned long long)unique);
	json_t *ev = json_object(), *ref = json_object(), *src = json_object(), *evmeta = json_object();
	int bad = !name || !ev || !ref || !src || !evmeta;
	bad |= set_str(ref, "kind", json_string_value(json_object_get(involved, "kind")));
	bad |= set_str(ref, "apiVersion", json_string_value(json_object_get(involved, "apiVersion")));
	bad |= set_str(ref, "name", iname);
	const char *ins = json_string_value(json_object_get(meta, "namespace"));
	bad |= set_str(ref, "namespace", ins ? ins : ns);
	bad |= set_str(ref, "uid", json_string_value(json_object_get(meta, "uid")));
	bad |= set_str(ref, "resourceVersion", json_string_value(json_object_get(meta, "resourceVersion")));
	bad |= set_str(src, "component", component ? component : TFJOB_OPERATOR_NAME);
	bad |= set_str(evmeta, "name", name);
	bad |= set_str(evmeta, "namespace", ns);
	bad |= set_str(ev, "apiVersion", "v1") | set_str(ev, "kind", "Event");
	bad |= json_object_set(ev, "metadata", evmeta) | json_object_set(ev, "involvedObject", ref);
	bad |= set_str(ev, "type", type) | set_str(ev, "reason", reason) | set_str(ev, "message", message);
	bad |= json_object_set(ev, "source", src);
	bad |= set_str(ev, "firstTimestamp", now) | set_str(ev, "lastTimestamp", now);
	bad |= json_object_set_new(ev, "count", json_integer(1));
	bad |= set_str(ev, "reportingComponent", component ? component : TFJOB_OPERATOR_NAME);
	free(name);
	json_decref(ref);
	json_decref(src);
	json_decref(evmeta);
	if (bad) {
		json_decref(ev);
		return tfjob__oom(err);
	}
	*out = ev;
	return 0;
}

int tfjob_transport_create_event(char **out, tfjob_transport *t, const char *ns, const char *involved_json,
                                 const char *type, const char *reason, const char *message,
                                 const char *source_component, tfjob_error **err)
{
	static const tfjob_resource events = TFJOB_RESOURCE_EVENTS_INIT;
	int rc = check_args(&ns, t, &events, t ? (const void *)t->be.create : NULL, "create_event", err);
	if (rc)
		return rc;
	if (!type || (strcmp(type, "Normal") && strcmp(type, "Warning")))
		return tfjob__fail(err, TFJOB_EINVAL, "create_event: type must be Normal or Warning");
	if (!reason || !reason[0])
		return tfjob__fail(err, TFJOB_EINVAL, "create_event: a reason is required");
	json_t *involved, *ev = NULL;
	if ((rc = tfjob__parse_object(&involved, involved_json, "create_event", err)))
		return rc;
	const char *ins = json_string_value(json_object_get(json_object_get(involved, "metadata"), "namespace"));
	char *ns_copy = tfjob__strdup(ins && ins[0] ? ins : ns);
	rc = ns_copy ? build_event(&ev, ns_copy, involved, type, reason, message ? message : "", source_component, err)
	             : tfjob__oom(err);
	json_decref(involved);
	if (rc) {
		free(ns_copy);
		return rc;
	}
	ns = ns_copy;
	char *text = json_dumps(ev, JSON_COMPACT);
	json_decref(ev);
	char *tmp = NULL;
	if (!text)
		rc = tfjob__oom(err);
	else if (t->be.create_event)
		rc = t->be.create_event(t->be.data, &tmp, ns, text, err);
	else
		rc = t->be.create(t->be.data, &tmp, &events, ns, text, err);
	free(text);
	free(ns_copy);
	if (rc == 0 && out)
		*out = tmp;
	else
		free(tmp);
	return rc;
}
