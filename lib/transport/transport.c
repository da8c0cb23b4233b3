/*
 * The transport handle: the public calls, argument checks and the dispatch to a backend.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "transport/event.h"
#include "transport/internal.h"
#include "util/sbuf.h"
#include "util/versioned_structs.h"

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

/* A member "key":"value" after sep ('{', ',', or '\0': none); 0 when value is not UTF-8. */
static int add_member(tfjob__sbuf *b, char sep, const char *key, const char *value)
{
	if (sep)
		tfjob__sbuf_addc(b, sep);
	tfjob__sbuf_addc(b, '"');
	tfjob__sbuf_adds(b, key);
	tfjob__sbuf_add(b, "\":", 2);
	return tfjob__sbuf_add_json_str(b, value);
}

/* The involvedObject's members that are there, in the order they were always written. */
static int add_involved(tfjob__sbuf *b, const tfjob__involved *inv, const char *ns)
{
	const char *keys[] = { "kind", "apiVersion", "name", "namespace", "uid", "resourceVersion" };
	const char *vals[] = { inv->kind, inv->api_version, inv->name, inv->ns ? inv->ns : ns, inv->uid, inv->rv };
	int ok = 1;
	char sep = '{';
	for (size_t i = 0; i < TFJOB_ARRAY_LEN(keys); i++) {
		if (!vals[i])
			continue;
		ok &= add_member(b, sep, keys[i], vals[i]);
		sep = ',';
	}
	tfjob__sbuf_adds(b, sep == '{' ? "{}" : "}");
	return ok;
}

/* A core/v1 Event about the involved object, named NAME.HEX as client-go's recorder names them. */
char *tfjob__event_text(const char *ns, const tfjob__involved *inv, const char *type, const char *reason,
                        const char *message, const char *component, int64_t now_s, uint64_t unique)
{
	char now[32], hex[20];
	tfjob_time_format(now, sizeof(now), now_s);
	snprintf(hex, sizeof(hex), ".%016llx", (unsigned long long)unique);
	component = component ? component : TFJOB_OPERATOR_NAME;
	tfjob__sbuf b = TFJOB__SBUF_INIT;
	tfjob__sbuf_reserve(&b, 512); /* what most Events take: one allocation, not four */
	tfjob__sbuf_adds(&b, "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":");
	/* the name is the involved object's and the suffix: its text, with the suffix inside the quotes */
	int ok = tfjob__sbuf_add_json_str(&b, inv->name);
	if (ok && !b.oom) {
		b.len--;
		tfjob__sbuf_adds(&b, hex);
		tfjob__sbuf_addc(&b, '"');
	}
	ok &= add_member(&b, ',', "namespace", ns);
	tfjob__sbuf_adds(&b, "},\"involvedObject\":");
	ok &= add_involved(&b, inv, ns);
	ok &= add_member(&b, ',', "type", type) & add_member(&b, ',', "reason", reason);
	ok &= add_member(&b, ',', "message", message ? message : "");
	tfjob__sbuf_adds(&b, ",\"source\":");
	ok &= add_member(&b, '{', "component", component);
	tfjob__sbuf_addc(&b, '}');
	ok &= add_member(&b, ',', "firstTimestamp", now) & add_member(&b, ',', "lastTimestamp", now);
	tfjob__sbuf_adds(&b, ",\"count\":1");
	ok &= add_member(&b, ',', "reportingComponent", component);
	tfjob__sbuf_addc(&b, '}');
	if (!ok)
		tfjob__sbuf_free(&b);
	return ok ? tfjob__sbuf_take(&b) : NULL;
}

/* The last suffix handed out: every process's Events are named in the order they were made. */
static _Atomic uint64_t last_event_unique;

uint64_t tfjob__event_unique(uint64_t now_ns)
{
	uint64_t last = atomic_load(&last_event_unique), next;
	do
		next = now_ns > last ? now_ns : last + 1;
	while (!atomic_compare_exchange_weak(&last_event_unique, &last, next));
	return next;
}

static const tfjob_resource RES_EVENTS = TFJOB_RESOURCE_EVENTS_INIT;

static int check_event_args(const char **ns, tfjob_transport *t, const char *type, const char *reason,
                            tfjob_error **err)
{
	int rc = check_args(ns, t, &RES_EVENTS, t ? (const void *)t->be.create : NULL, "create_event", err);
	if (rc)
		return rc;
	if (!type || (strcmp(type, "Normal") && strcmp(type, "Warning")))
		return tfjob__fail(err, TFJOB_EINVAL, "create_event: type must be Normal or Warning");
	if (!reason || !reason[0])
		return tfjob__fail(err, TFJOB_EINVAL, "create_event: a reason is required");
	return 0;
}

/* Write the Event (the arguments checked) in the involved object's namespace, else ns. */
static int send_event(char **out, tfjob_transport *t, const char *ns, const tfjob__involved *inv, const char *type,
                      const char *reason, const char *message, const char *component, tfjob_error **err)
{
	if (!inv->name)
		return tfjob__fail(err, TFJOB_EINVAL, "create_event: the involved object has no metadata.name");
	if (inv->ns && inv->ns[0])
		ns = inv->ns;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	uint64_t unique = tfjob__event_unique((uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec);
	/* not UTF-8: jansson refused to make such a string, which read as out of memory; still does */
	char *text = tfjob__event_text(ns, inv, type, reason, message, component, ts.tv_sec, unique);
	if (!text)
		return tfjob__oom(err);
	char *tmp = NULL;
	int rc = t->be.create_event ? t->be.create_event(t->be.data, &tmp, ns, text, err)
	                            : t->be.create(t->be.data, &tmp, &RES_EVENTS, ns, text, err);
	free(text);
	if (rc == 0 && out)
		*out = tmp;
	else
		free(tmp);
	return rc;
}

int tfjob__transport_create_event_of(char **out, tfjob_transport *t, const char *ns, const tfjob__involved *inv,
                                     const char *type, const char *reason, const char *message,
                                     const char *source_component, tfjob_error **err)
{
	int rc = check_event_args(&ns, t, type, reason, err);
	return rc ? rc : send_event(out, t, ns, inv, type, reason, message, source_component, err);
}

static const char *member_str(const json_t *obj, const char *key)
{
	return json_string_value(json_object_get(obj, key));
}

int tfjob_transport_create_event(char **out, tfjob_transport *t, const char *ns, const char *involved_json,
                                 const char *type, const char *reason, const char *message,
                                 const char *source_component, tfjob_error **err)
{
	int rc = check_event_args(&ns, t, type, reason, err);
	json_t *involved;
	if (rc || (rc = tfjob__parse_object(&involved, involved_json, "create_event", err)))
		return rc;
	const json_t *meta = json_object_get(involved, "metadata");
	const tfjob__involved inv = { member_str(involved, "kind"), member_str(involved, "apiVersion"),
		                          member_str(meta, "name"),     member_str(meta, "namespace"),
		                          member_str(meta, "uid"),      member_str(meta, "resourceVersion") };
	rc = send_event(out, t, ns, &inv, type, reason, message, source_component, err);
	json_decref(involved);
	return rc;
}
