/*
 * The local backend behind the transport vtable (sys/transport.h): Pods are the engine's
 * processes; every other resource lives in an in-memory store (the memory backend).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/job.h"
#include "local/internal.h"
#include "tfjob/memstore.h"
#include "tfjob/sys/transport.h"
#include "transport/internal.h"

typedef struct lbackend {
	tfjob_local *local;
	tfjob_transport *mem;
} lbackend;

static bool is_pods(const tfjob_resource *res)
{
	return (!res->group || !res->group[0]) && res->resource && !strcmp(res->resource, "pods");
}

static int not_found(tfjob_error **err, const char *name)
{
	return tfjob__api_fail(err, TFJOB_ENOTFOUND, 404, NULL, "pods \"%s\" not found", name);
}

static int unsupported(tfjob_error **err, const char *what)
{
	return tfjob__api_fail(err, TFJOB_ESTATE, 405, NULL, "the local backend does not support %s of pods", what);
}

static int dump_out(char **out, json_t *v, tfjob_error **err)
{
	if (!v)
		return tfjob__oom(err);
	int rc = 0;
	if (out)
		rc = tfjob__tr_dump(out, v, err);
	json_decref(v);
	return rc;
}

static void lb_free(void *data)
{
	lbackend *b = data;
	tfjob_transport_free(b->mem);
	free(b);
}

static const char *lb_namespace(void *data)
{
	(void)data;
	return "default";
}

static int lb_get(void *data, char **out, const tfjob_resource *res, const char *ns, const char *name, tfjob_error **err)
{
	lbackend *b = data;
	if (!is_pods(res))
		return tfjob_transport_get(out, b->mem, res, ns, name, err);
	pthread_mutex_lock(&b->local->lock);
	lpod *p = tfjob__local_find(b->local, ns, name);
	json_t *pod = p ? tfjob__local_pod_json(p) : NULL;
	pthread_mutex_unlock(&b->local->lock);
	if (!p)
		return not_found(err, name);
	return dump_out(out, pod, err);
}

json_t *tfjob__local_pods_matching(tfjob_local *l, const char *ns, const struct tfjob__selector *sel,
                                   const struct tfjob__selector *fsel, bool full, uint64_t *generation)
{
	json_t *items = json_array();
	pthread_mutex_lock(&l->lock);
	if (generation)
		*generation = l->generation;
	for (lpod *p = l->pods; p && items; p = p->next) {
		if (ns && ns[0] && strcmp(ns, p->ns))
			continue;
		if (sel && !tfjob__selector_matches(sel, tfjob__obj(tfjob__obj(p->obj, "metadata"), "labels")))
			continue;
		if (fsel && !tfjob__field_selector_matches(fsel, p->obj))
			continue;
		json_t *pod = full ? tfjob__local_pod_json(p) : tfjob__local_pod_summary_json(p);
		if (!pod || json_array_append_new(items, pod)) {
			json_decref(items);
			items = NULL;
		}
	}
	pthread_mutex_unlock(&l->lock);
	return items;
}

static int lb_list(void *data, char **out, const tfjob_resource *res, const char *ns, const tfjob_list_options *opts,
                   tfjob_error **err)
{
	lbackend *b = data;
	if (!is_pods(res))
		return tfjob_transport_list(out, b->mem, res, ns, opts, err);
	tfjob__selector *sel = NULL, *fsel = NULL;
	int rc = 0;
	if (opts && opts->label_selector && (rc = tfjob__selector_parse(&sel, opts->label_selector, err)))
		return rc;
	if (opts && opts->field_selector && (rc = tfjob__field_selector_parse(&fsel, opts->field_selector, err))) {
		tfjob__selector_free(sel);
		return rc;
	}
	json_t *items = tfjob__local_pods_matching(b->local, ns, sel, fsel, true, NULL);
	tfjob__selector_free(sel);
	tfjob__selector_free(fsel);
	if (!items)
		return tfjob__oom(err);
	return dump_out(out, json_pack("{s:s, s:s, s:{}, s:o}", "kind", "PodList", "apiVersion", "v1", "metadata", "items", items),
	                err);
}

int tfjob__local_create_pod(tfjob_local *l, const char *ns, json_t *pod, json_t **created, tfjob_error **err)
{
	if (created)
		*created = NULL;
	if (!tfjob__str(tfjob__obj(pod, "metadata"), "name")) {
		json_decref(pod);
		return tfjob__fail(err, TFJOB_EINVAL, "pod: metadata.name is required by the local backend");
	}
	/* Shallow copies of what changes here: the caller's tree may share the rest (its spec). */
	json_t *mine = json_copy(pod), *meta = json_copy(tfjob__obj(pod, "metadata"));
	json_decref(pod);
	const char *name = tfjob__str(meta, "name");
	int rc = !mine || !meta || json_object_set(mine, "metadata", meta) ? tfjob__oom(err) : 0;
	if (rc) {
		json_decref(meta);
		json_decref(mine);
		return rc;
	}
	json_object_set_new(meta, "namespace", json_string(ns));
	char buf[64];
	pthread_mutex_lock(&l->lock);
	snprintf(buf, sizeof buf, "local-%llx-%llu", (unsigned long long)tfjob__monotonic_ms(), (unsigned long long)++l->uids);
	json_object_set_new(meta, "uid", json_string(buf));
	json_object_set_new(meta, "creationTimestamp", json_string(tfjob_time_format(buf, sizeof buf, tfjob__local_wall())));
	json_object_del(mine, "status");
	tfjob__launch launch;
	if (tfjob__local_find(l, ns, name))
		rc = tfjob__api_fail(err, TFJOB_EEXISTS, 409, NULL, "pods \"%s\" already exists", name);
	else if (!(rc = tfjob__launch_from_pod(&launch, l, mine, err)))
		rc = tfjob__local_add(l, ns, json_incref(mine), &launch, err);
	if (!rc && created) { /* the Pod as created: its whole spec is copied, only when asked for */
		lpod *p = tfjob__local_find(l, ns, name);
		*created = p ? tfjob__local_pod_json(p) : NULL;
		if (!*created)
			rc = tfjob__oom(err);
	}
	pthread_mutex_unlock(&l->lock);
	json_decref(meta);
	json_decref(mine);
	return rc;
}

static int lb_create(void *data, char **out, const tfjob_resource *res, const char *ns, const char *object_json,
                     tfjob_error **err)
{
	lbackend *b = data;
	if (!is_pods(res))
		return tfjob_transport_create(out, b->mem, res, ns, object_json, err);
	json_t *pod = NULL, *created = NULL;
	int rc = tfjob__parse_object(&pod, object_json, "pod", err);
	if (!rc)
		rc = tfjob__local_create_pod(b->local, ns, pod, out ? &created : NULL, err);
	return rc || !out ? rc : dump_out(out, created, err);
}

static int lb_update(void *data, char **out, const tfjob_resource *res, const char *ns, const char *name,
                     const char *object_json, tfjob_error **err)
{
	lbackend *b = data;
	(void)name;
	if (is_pods(res))
		return unsupported(err, "update");
	return tfjob_transport_update(out, b->mem, res, ns, object_json, err);
}

static int lb_update_status(void *data, char **out, const tfjob_resource *res, const char *ns, const char *name,
                            const char *object_json, tfjob_error **err)
{
	lbackend *b = data;
	(void)name;
	if (is_pods(res))
		return unsupported(err, "status updates");
	return tfjob_transport_update_status(out, b->mem, res, ns, object_json, err);
}

static int lb_patch(void *data, char **out, const tfjob_resource *res, const char *ns, const char *name,
                    const char *subresource, const char *patch, tfjob_error **err)
{
	lbackend *b = data;
	if (is_pods(res))
		return unsupported(err, "patch");
	return tfjob_transport_patch(out, b->mem, res, ns, name, subresource, patch, err);
}

static int lb_delete(void *data, char **out, const tfjob_resource *res, const char *ns, const char *name,
                     const tfjob_delete_options *opts, tfjob_error **err)
{
	lbackend *b = data;
	if (!is_pods(res))
		return tfjob_transport_delete(out, b->mem, res, ns, name, opts, err);
	int64_t grace = opts ? opts->grace_period_seconds : -1;
	pthread_mutex_lock(&b->local->lock);
	lpod *p = tfjob__local_find(b->local, ns, name);
	json_t *before = p ? tfjob__local_pod_json(p) : NULL;
	int rc = p ? tfjob__local_delete(b->local, ns, name, grace >= 0 ? grace * 1000 : -1) : TFJOB_ENOTFOUND;
	pthread_mutex_unlock(&b->local->lock);
	if (rc == TFJOB_ENOTFOUND) {
		json_decref(before);
		return not_found(err, name);
	}
	return dump_out(out, before, err);
}

static int lb_create_event(void *data, char **out, const char *ns, const char *event_json, tfjob_error **err)
{
	lbackend *b = data;
	tfjob_resource events = TFJOB_RESOURCE_EVENTS_INIT;
	return tfjob_transport_create(out, b->mem, &events, ns, event_json, err);
}

int tfjob_local_transport_new(tfjob_transport **out, tfjob_local *local, tfjob_error **err)
{
	if (!out || !local)
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_local_transport_new: out and local are required");
	*out = NULL;
	lbackend *b = calloc(1, sizeof *b);
	if (!b)
		return tfjob__oom(err);
	b->local = local;
	int rc = tfjob_memory_transport_new(&b->mem, NULL, err);
	if (rc) {
		free(b);
		return rc;
	}
	tfjob_transport_backend be;
	memset(&be, 0, sizeof be);
	be.version = TFJOB_TRANSPORT_BACKEND_VERSION;
	be.data = b;
	be.free = lb_free;
	be.default_namespace = lb_namespace;
	be.get = lb_get;
	be.list = lb_list;
	be.create = lb_create;
	be.update = lb_update;
	be.update_status = lb_update_status;
	be.patch = lb_patch;
	be.del = lb_delete;
	be.watch = NULL;
	be.create_event = lb_create_event;
	rc = tfjob_transport_new(out, &be, err);
	if (rc)
		lb_free(b);
	return rc;
}
