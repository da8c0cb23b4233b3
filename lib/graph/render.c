/*
 * Rendering of the Pods and headless Services of a TFJob's replicas, and of the children at
 * indices at or beyond a type's replicas as training-operator v1.9 creates them: index 0 of a
 * type with replicas: 0 (its pod slice is max(highest index + 1, replicas) long, never empty)
 * and the gaps below a stray child's index (defect 7 in docs/semantics.md). One code path for
 * the planner (the children it creates) and tfjob_render_all() (what a job renders to).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "core/job.h"
#include "graph/render.h"
#include "util/sbuf.h"
#include "util/sink.h"

#define PLUGINS_POD_GROUP_LABEL "scheduling.x-k8s.io/pod-group"

static int set_str(json_t *obj, const char *key, const char *value)
{
	return json_object_set_new(obj, key, json_string(value));
}

json_t *tfjob__owner_reference(const tfjob_graph *g) { return tfjob__owner_reference_to(g->name, g->uid); }

json_t *tfjob__owner_reference_to(const char *name, const char *uid)
{
	json_t *o = json_object();
	if (!o || set_str(o, "apiVersion", "kubeflow.org/v1") || set_str(o, "kind", "TFJob") ||
	    set_str(o, "name", name) || set_str(o, "uid", uid) ||
	    json_object_set_new(o, "controller", json_true()) || json_object_set_new(o, "blockOwnerDeletion", json_true())) {
		json_decref(o);
		return NULL;
	}
	return o;
}

/* The four labels every child carries (v1.9: GenLabels + replica type and index). */
static int add_child_labels(json_t *labels, const tfjob_graph *g, size_t t, int64_t index)
{
	char idx[24];
	snprintf(idx, sizeof(idx), "%lld", (long long)index);
	return set_str(labels, TFJOB_LABEL_OPERATOR, TFJOB_OPERATOR_NAME) || set_str(labels, TFJOB_LABEL_JOB_NAME, g->label_name) ||
	       set_str(labels, TFJOB_LABEL_REPLICA_TYPE, g->types[t].lower) || set_str(labels, TFJOB_LABEL_REPLICA_INDEX, idx);
}

static int child_meta(json_t **out, const tfjob_graph *g, size_t t, int64_t index)
{
	json_t *meta = json_object();
	if (!meta || set_str(meta, "name", TFJOB__RT_NAME(&g->types[t], index)) || set_str(meta, "namespace", g->namespace)) {
		json_decref(meta);
		return TFJOB_ENOMEM;
	}
	*out = meta;
	return 0;
}

static int add_owner(json_t *meta, const tfjob_graph *g)
{
	json_t *owners = json_array();
	if (!owners || json_array_append_new(owners, tfjob__owner_reference(g))) {
		json_decref(owners);
		return TFJOB_ENOMEM;
	}
	return json_object_set_new(meta, "ownerReferences", owners) ? TFJOB_ENOMEM : 0;
}

/* A copy of template.metadata[key] (object), or a new empty object. */
static int copy_map(json_t **out, json_t *tmeta, const char *key, const char *rkey, tfjob_error **err)
{
	json_t *v = json_object_get(tmeta, key);
	if (v && !json_is_null(v) && !json_is_object(v)) {
		char path[512], suffix[64];
		snprintf(suffix, sizeof(suffix), ".template.metadata.%s", key);
		tfjob__rspec_path(path, sizeof(path), rkey, suffix);
		return tfjob__fail_field(err, TFJOB_ESCHEMA, path, "must be an object");
	}
	*out = json_is_object(v) ? json_copy(v) : json_object();
	return *out ? 0 : tfjob__oom(err);
}

static int schema_fail(tfjob_error **err, const char *rkey, const char *suffix, const char *what)
{
	char path[512];
	tfjob__rspec_path(path, sizeof(path), rkey, suffix);
	return tfjob__fail_field(err, TFJOB_ESCHEMA, path, "%s", what);
}

static int pod_metadata(json_t *meta, json_t *tmeta, const tfjob_graph *g, const tfjob_render_options *opts, size_t t,
                        int64_t index, tfjob_error **err)
{
	const tfjob__rtype *r = &g->types[t];
	json_t *labels = NULL, *annotations = NULL;
	int rc = copy_map(&labels, tmeta, "labels", r->key, err);
	if (!rc)
		rc = copy_map(&annotations, tmeta, "annotations", r->key, err);
	if (rc) {
		json_decref(labels);
		return rc;
	}
	bool oom = add_child_labels(labels, g, t, index) != 0;
	if (tfjob_graph_is_master(g, t, index))
		oom |= set_str(labels, TFJOB_LABEL_JOB_ROLE, "master") != 0;
	if (opts->gang_scheduler == TFJOB_GANG_VOLCANO) {
		oom |= set_str(annotations, TFJOB_ANNOTATION_GROUP_NAME, g->name) != 0;
		oom |= set_str(annotations, TFJOB_ANNOTATION_VOLCANO_TASK, r->lower) != 0;
	} else if (opts->gang_scheduler == TFJOB_GANG_SCHEDULER_PLUGINS) {
		oom |= set_str(labels, PLUGINS_POD_GROUP_LABEL, g->name) != 0;
	}
	oom |= json_object_set_new(meta, "labels", labels) != 0;
	if (json_object_size(annotations))
		oom |= json_object_set_new(meta, "annotations", annotations) != 0;
	else
		json_decref(annotations);
	json_t *fin = json_object_get(tmeta, "finalizers");
	if (fin && !json_is_null(fin) && !json_is_array(fin))
		return schema_fail(err, r->key, ".template.metadata.finalizers", "must be an array");
	if (json_array_size(fin))
		oom |= json_object_set_new(meta, "finalizers", json_copy(fin)) != 0;
	return oom ? tfjob__oom(err) : 0;
}

/* Append TF_CONFIG to the env of the container named tensorflow (v1.9: SetClusterSpec). */
static int add_tf_config(json_t *spec, const tfjob_graph *g, size_t t, int64_t index, tfjob_error **err)
{
	if (!g->distributed)
		return 0;
	const tfjob__rtype *r = &g->types[t];
	json_t *containers = json_object_get(spec, "containers");
	int ci = tfjob__tensorflow_container_index(containers);
	if (ci < 0)
		return 0;
	json_t *c = json_array_get(containers, (size_t)ci);
	json_t *env = json_object_get(c, "env");
	if (env && !json_is_null(env) && !json_is_array(env)) {
		char suffix[96];
		snprintf(suffix, sizeof(suffix), ".template.spec.containers[%d].env", ci);
		return schema_fail(err, r->key, suffix, "must be an array");
	}
	if (!json_is_array(env)) {
		env = json_array();
		if (!env || json_object_set_new(c, "env", env))
			return tfjob__oom(err);
	}
	char *text = NULL;
	size_t len = 0;
	int rc = tfjob__graph_tf_config(&text, &len, g, t, index, err);
	if (rc)
		return rc;
	json_t *var = json_object();
	json_t *value = json_stringn_nocheck(text, len);
	free(text);
	if (!var || !value || set_str(var, "name", "TF_CONFIG") || json_object_set_new(var, "value", value) ||
	    json_array_append_new(env, var)) {
		if (!var)
			json_decref(value);
		json_decref(var);
		return tfjob__oom(err);
	}
	return 0;
}

static int pod_spec(json_t **out, json_t *tspec, const tfjob_graph *g, const tfjob_render_options *opts, size_t t,
                    int64_t index, tfjob_error **err)
{
	const tfjob__rtype *r = &g->types[t];
	json_t *spec = json_is_object(tspec) ? json_deep_copy(tspec) : json_object();
	if (!spec)
		return tfjob__oom(err);
	int rc = add_tf_config(spec, g, t, index, err);
	if (rc) {
		json_decref(spec);
		return rc;
	}
	bool oom = false;
	/* v1.9 SetRestartPolicy: ExitCode -> Never, otherwise the replica's policy (an empty one drops the field). */
	if (!r->restart_policy || !*r->restart_policy)
		json_object_del(spec, "restartPolicy");
	else
		oom |= set_str(spec, "restartPolicy", strcmp(r->restart_policy, "ExitCode") ? r->restart_policy : "Never") != 0;
	if (opts->gang_scheduler != TFJOB_GANG_NONE) {
		const char *sn = tfjob__str(spec, "schedulerName");
		if (!sn || !*sn)
			oom |= set_str(spec, "schedulerName", opts->scheduler_name) != 0;
	}
	if (oom) {
		json_decref(spec);
		return tfjob__oom(err);
	}
	*out = spec;
	return 0;
}

int tfjob__render_pod_graph(json_t **out, const tfjob_job *job, const tfjob_graph *g, const tfjob_render_options *opts,
                            size_t t, int64_t index, tfjob_error **err)
{
	int rc = tfjob__graph_check(g, t, index, err);
	if (rc)
		return rc;
	const tfjob__rtype *r = &g->types[t];
	json_t *rspec = tfjob__replica_spec(job, r->key);
	json_t *tmpl = json_object_get(rspec, "template");
	json_t *tmeta = json_object_get(tmpl, "metadata");
	if (tmeta && !json_is_null(tmeta) && !json_is_object(tmeta))
		return schema_fail(err, r->key, ".template.metadata", "must be an object");
	json_t *pod = json_object(), *meta = NULL, *spec = NULL;
	if (!pod || set_str(pod, "apiVersion", "v1") || set_str(pod, "kind", "Pod") || child_meta(&meta, g, t, index) ||
	    json_object_set_new(pod, "metadata", meta)) {
		json_decref(pod);
		return tfjob__oom(err);
	}
	rc = pod_metadata(meta, tmeta, g, opts, t, index, err);
	if (!rc && add_owner(meta, g))
		rc = tfjob__oom(err);
	if (!rc)
		rc = pod_spec(&spec, json_object_get(tmpl, "spec"), g, opts, t, index, err);
	if (!rc && json_object_set_new(pod, "spec", spec))
		rc = tfjob__oom(err);
	if (rc) {
		json_decref(pod);
		return rc;
	}
	*out = pod;
	return 0;
}

/* Service ports: every port of the tensorflow container, by name (v1.9: GetPortsFromJob). */
static int service_ports(json_t **out, json_t *rspec, const tfjob_graph *g, size_t t, tfjob_error **err)
{
	const tfjob__rtype *r = &g->types[t];
	json_t *containers = json_object_get(tfjob__pod_spec(rspec), "containers");
	int ci = tfjob__tensorflow_container_index(containers);
	if (ci < 0)
		return schema_fail(err, r->key, ".template.spec.containers", "has no container named tensorflow");
	json_t *ports = json_object_get(json_array_get(containers, (size_t)ci), "ports");
	json_t *list = json_array();
	if (!list)
		return tfjob__oom(err);
	bool compat = g->compat == TFJOB_COMPAT_TRAINING_OPERATOR_1_9;
	size_t pi;
	json_t *p;
	json_array_foreach(ports, pi, p) {
		json_t *name = json_object_get(p, "name"), *cp = json_object_get(p, "containerPort");
		char suffix[128];
		if (name && !json_is_null(name) && !json_is_string(name)) {
			snprintf(suffix, sizeof(suffix), ".template.spec.containers[%d].ports[%zu].name", ci, pi);
			json_decref(list);
			return schema_fail(err, r->key, suffix, "must be a string");
		}
		if (!json_is_integer(cp)) {
			snprintf(suffix, sizeof(suffix), ".template.spec.containers[%d].ports[%zu].containerPort", ci, pi);
			json_decref(list);
			return schema_fail(err, r->key, suffix, "must be an integer");
		}
		const char *n = json_is_string(name) ? json_string_value(name) : "";
		if (!*n && !compat)
			continue; /* documented: only named ports */
		/* Same name twice: the later port wins, in the place of the first (v1.9 builds a map). */
		json_t *existing = NULL, *sp;
		size_t k;
		json_array_foreach(list, k, sp) {
			if (!strcmp(tfjob__str(sp, "name"), n)) {
				existing = sp;
				break;
			}
		}
		if (existing) {
			if (json_object_set(existing, "port", cp)) {
				json_decref(list);
				return tfjob__oom(err);
			}
			continue;
		}
		sp = json_object();
		if (!sp || set_str(sp, "name", n) || json_object_set(sp, "port", cp) || json_array_append_new(list, sp)) {
			json_decref(sp);
			json_decref(list);
			return tfjob__oom(err);
		}
	}
	*out = list;
	return 0;
}

int tfjob__render_service_graph(json_t **out, const tfjob_job *job, const tfjob_graph *g, size_t t, int64_t index,
                                tfjob_error **err)
{
	int rc = tfjob__graph_check(g, t, index, err);
	if (rc)
		return rc;
	json_t *ports = NULL;
	rc = service_ports(&ports, tfjob__replica_spec(job, g->types[t].key), g, t, err);
	if (rc)
		return rc;
	json_t *svc = json_object(), *meta = NULL, *labels = json_object(), *spec = json_object();
	bool oom = !svc || !labels || !spec || set_str(svc, "apiVersion", "v1") || set_str(svc, "kind", "Service") ||
	           child_meta(&meta, g, t, index) || json_object_set_new(svc, "metadata", meta) ||
	           add_child_labels(labels, g, t, index) || json_object_set(meta, "labels", labels) || add_owner(meta, g) ||
	           set_str(spec, "clusterIP", "None") || json_object_set_new(spec, "selector", json_copy(labels));
	if (!oom && json_array_size(ports))
		oom = json_object_set(spec, "ports", ports) != 0;
	if (!oom)
		oom = json_object_set(svc, "spec", spec) != 0;
	json_decref(ports);
	json_decref(labels);
	json_decref(spec);
	if (oom) {
		json_decref(svc);
		return tfjob__oom(err);
	}
	*out = svc;
	return 0;
}

/* ---- entry points ---- */

typedef int (*render_fn)(json_t **out, const tfjob_job *job, const tfjob_graph *g, const tfjob_render_options *opts,
                         size_t t, int64_t index, tfjob_error **err);

static int render_service_fn(json_t **out, const tfjob_job *job, const tfjob_graph *g, const tfjob_render_options *opts,
                             size_t t, int64_t index, tfjob_error **err)
{
	(void)opts;
	return tfjob__render_service_graph(out, job, g, t, index, err);
}

static int render_one(json_t **out, render_fn fn, const tfjob_job *job, const char *type, int64_t index,
                      const tfjob_render_options *opts, tfjob_error **err)
{
	if (!out || !job || !type)
		return tfjob__fail(err, TFJOB_EINVAL, "out, job or type is NULL");
	*out = NULL;
	tfjob_render_options ro;
	int rc = tfjob__render_options_resolve(&ro, opts, err);
	tfjob_graph *g = NULL;
	if (!rc)
		rc = tfjob__graph_build(&g, job, &ro, false, err);
	size_t t = 0;
	if (!rc)
		rc = tfjob__graph_lookup(&t, g, type, err);
	if (!rc)
		rc = fn(out, job, g, &ro, t, index, err);
	tfjob_graph_free(g);
	return rc;
}

int tfjob__render_pod(json_t **out, const tfjob_job *job, const char *type, int64_t index,
                      const tfjob_render_options *opts, tfjob_error **err)
{
	return render_one(out, tfjob__render_pod_graph, job, type, index, opts, err);
}

int tfjob__render_service(json_t **out, const tfjob_job *job, const char *type, int64_t index,
                          const tfjob_render_options *opts, tfjob_error **err)
{
	return render_one(out, render_service_fn, job, type, index, opts, err);
}

static int dump_to(char **out, json_t *value, unsigned int flags, tfjob_error **err)
{
	if (flags == TFJOB_JSON_COMPACT) {
		tfjob__sbuf b = TFJOB__SBUF_INIT;
		tfjob__sbuf_add_json(&b, value);
		*out = tfjob__sbuf_take(&b);
	} else {
		*out = tfjob__dump(value, flags);
	}
	json_decref(value);
	return *out ? 0 : tfjob__oom(err);
}

int tfjob_render_pod(char **out, const tfjob_job *job, const char *type, int64_t index,
                     const tfjob_render_options *opts, unsigned int flags, tfjob_error **err)
{
	json_t *v = NULL;
	if (out)
		*out = NULL;
	int rc = tfjob__render_pod(&v, job, type, index, opts, err);
	return rc ? rc : dump_to(out, v, flags, err);
}

int tfjob_render_service(char **out, const tfjob_job *job, const char *type, int64_t index,
                         const tfjob_render_options *opts, unsigned int flags, tfjob_error **err)
{
	json_t *v = NULL;
	if (out)
		*out = NULL;
	int rc = tfjob__render_service(&v, job, type, index, opts, err);
	return rc ? rc : dump_to(out, v, flags, err);
}

/* ---- every child, streamed ---- */

static const render_fn child_renderers[2] = { tfjob__render_pod_graph, render_service_fn };

/* Render and drop child 0 of type t: what can fail in rendering depends on the type's template, not the index. */
/*
 * Child i of type t, kind k (0 pods, 1 services): within replicas from the graph; beyond (compat:
 * index 0 of replicas: 0, as the planner creates it) as tfjob__render_child() renders it.
 */
static int render_slot(json_t **out, size_t k, const tfjob_job *job, const tfjob_graph *g,
                       const tfjob_render_options *ro, size_t t, int64_t i, tfjob_error **err)
{
	if (i < g->types[t].replicas)
		return child_renderers[k](out, job, g, ro, t, i, err);
	return tfjob__render_child(out, job, g->types[t].key, i, g->types[t].replicas, k == 0, ro, err);
}

static int64_t slots(const tfjob_graph *g, size_t t) { return tfjob__graph_min_slots(g->compat, g->types[t].replicas); }

static int check_child(size_t k, const tfjob_job *job, const tfjob_graph *g, const tfjob_render_options *ro,
                       size_t t, tfjob_error **err)
{
	if (slots(g, t) <= 0)
		return 0;
	json_t *v = NULL;
	int rc = render_slot(&v, k, job, g, ro, t, 0, err);
	json_decref(v);
	return rc;
}

/*
 * Render one child of each type and kind before a byte is written, so a job that cannot be
 * rendered writes nothing. The order is that of the errors of the earlier whole-tree writers:
 * pods then services for compact output, pod and service per type otherwise.
 */
static int check_children(const tfjob_job *job, const tfjob_graph *g, const tfjob_render_options *ro,
                          unsigned int flags, tfjob_error **err)
{
	bool per_type = flags != TFJOB_JSON_COMPACT;
	int rc = 0;
	for (size_t t = 0; t < g->ntypes && !rc; t++) {
		rc = check_child(0, job, g, ro, t, err);
		if (!rc && per_type)
			rc = check_child(1, job, g, ro, t, err);
	}
	for (size_t t = 0; t < g->ntypes && !rc && !per_type; t++)
		rc = check_child(1, job, g, ro, t, err);
	return rc;
}

/* The array of one kind of child, each rendered, written and released in turn (depth 1). */
static int write_children(tfjob__sink *s, size_t k, const tfjob_job *job, const tfjob_graph *g,
                          const tfjob_render_options *ro, unsigned int flags, tfjob_error **err)
{
	bool first = true;
	tfjob__sink_adds(s, "[");
	for (size_t t = 0; t < g->ntypes; t++) {
		for (int64_t i = 0; i < slots(g, t) && !s->failed; i++) {
			json_t *v = NULL;
			int rc = render_slot(&v, k, job, g, ro, t, i, err);
			if (rc)
				return rc;
			if (!first)
				tfjob__sink_adds(s, ",");
			first = false;
			tfjob__sink_newline(s, flags, 2);
			tfjob__sink_add_json(s, v, flags, 2);
			json_decref(v);
		}
	}
	if (!first)
		tfjob__sink_newline(s, flags, 1);
	tfjob__sink_adds(s, "]");
	return 0;
}

/* {"pods":[...],"services":[...]} into s, byte for byte as a dump of the whole tree (flags). */
static int write_all(tfjob__sink *s, const tfjob_job *job, const tfjob_render_options *opts, unsigned int flags,
                     tfjob_error **err)
{
	tfjob_render_options ro;
	int rc = tfjob__render_options_resolve(&ro, opts, err);
	tfjob_graph *g = NULL;
	if (!rc)
		rc = tfjob__graph_build(&g, job, &ro, false, err);
	if (!rc)
		rc = check_children(job, g, &ro, flags, err);
	static const char *const keys[2] = { "pods", "services" };
	if (!rc)
		tfjob__sink_adds(s, "{");
	for (size_t k = 0; k < 2 && !rc; k++) {
		tfjob__sink_key(s, keys[k], k == 0, flags, 1);
		rc = write_children(s, k, job, g, &ro, flags, err);
	}
	if (!rc) {
		tfjob__sink_newline(s, flags, 0);
		tfjob__sink_adds(s, "}");
	}
	tfjob_graph_free(g);
	return rc;
}

int tfjob_render_all(char **out, const tfjob_job *job, const tfjob_render_options *opts, unsigned int flags,
                     tfjob_error **err)
{
	if (!out || !job)
		return tfjob__fail(err, TFJOB_EINVAL, "out or job is NULL");
	*out = NULL;
	tfjob__sink s;
	tfjob__sink_init(&s, NULL, NULL);
	return tfjob__sink_end(&s, write_all(&s, job, opts, flags, err), out, err);
}

int tfjob_render_all_write(const tfjob_job *job, const tfjob_render_options *opts, unsigned int flags,
                           tfjob_write_cb write, void *payload, tfjob_error **err)
{
	if (!job || !write)
		return tfjob__fail(err, TFJOB_EINVAL, "job or write is NULL");
	tfjob__sink s;
	tfjob__sink_init(&s, write, payload);
	return tfjob__sink_end(&s, write_all(&s, job, opts, flags, err), NULL, err);
}

/* ---- children at or beyond a type's replicas ---- */

int64_t tfjob__graph_min_slots(tfjob_compat compat, int64_t replicas)
{
	return compat == TFJOB_COMPAT_TRAINING_OPERATOR_1_9 && replicas < 1 ? 1 : replicas;
}

/* Set (or remove, when cfg is "") TF_CONFIG in the env of the pod's tensorflow container. */
static int set_tf_config(json_t *pod, const char *cfg, tfjob_error **err)
{
	json_t *containers = tfjob__arr(tfjob__obj(pod, "spec"), "containers");
	int ci = tfjob__tensorflow_container_index(containers);
	json_t *container = json_array_get(containers, ci < 0 ? 0 : (size_t)ci);
	json_t *env = tfjob__arr(container, "env");
	for (size_t i = json_array_size(env); i-- > 0;) {
		const char *name = tfjob__str(json_array_get(env, i), "name");
		if (!name || strcmp(name, "TF_CONFIG"))
			continue;
		if (*cfg)
			return json_object_set_new(json_array_get(env, i), "value", json_string(cfg)) ? tfjob__oom(err) : 0;
		return json_array_remove(env, i) ? tfjob__oom(err) : 0;
	}
	if (!*cfg || !json_is_object(container))
		return 0;
	/* appended last, where the renderer puts it */
	if (!env && (!(env = json_array()) || json_object_set_new(container, "env", env)))
		return tfjob__oom(err);
	return json_array_append_new(env, json_pack("{s:s,s:s}", "name", "TF_CONFIG", "value", cfg)) ? tfjob__oom(err) : 0;
}

/*
 * A pod rendered from the widened copy lists the extra index in its TF_CONFIG; v1.9 writes the
 * TF_CONFIG of the real spec (the task index beyond the cluster's list), or none when the real
 * job is not distributed.
 */
static int set_beyond_tf_config(json_t *pod, const tfjob_job *job, const char *key, int64_t index,
                                const tfjob_render_options *opts, tfjob_error **err)
{
	tfjob_render_options ro;
	tfjob_graph *g = NULL;
	size_t t = 0;
	char *cfg = NULL;
	int rc = tfjob__render_options_resolve(&ro, opts, err);
	if (!rc)
		rc = tfjob__graph_build(&g, job, &ro, true, err);
	if (!rc)
		rc = tfjob__graph_lookup(&t, g, key, err);
	tfjob_error *beyond_err = NULL;
	if (!rc)
		rc = tfjob__graph_tf_config_beyond(&cfg, g, t, index, &beyond_err);
	tfjob_graph_free(g);
	if (rc == TFJOB_ESTATE) {
		/* Where v1.9 panics (a sparse PS/worker address beyond replicas), keep the widened render. */
		tfjob_error_free(beyond_err);
		return 0;
	}
	if (rc) {
		if (err && beyond_err)
			*err = beyond_err;
		else
			tfjob_error_free(beyond_err);
		return rc;
	}
	rc = set_tf_config(pod, cfg, err);
	free(cfg);
	return rc;
}

int tfjob__render_child(json_t **out, const tfjob_job *job, const char *key, int64_t index, int64_t replicas, bool pod,
                        const tfjob_render_options *opts, tfjob_error **err)
{
	*out = NULL;
	if (index < replicas)
		return pod ? tfjob__render_pod(out, job, key, index, opts, err)
		           : tfjob__render_service(out, job, key, index, opts, err);
	/* The renderer only renders existing replicas: render from a copy with the type widened to
	 * index + 1 replicas (its TF_CONFIG then also lists the extra addresses). */
	tfjob_job *widened = NULL;
	int rc = tfjob_job_clone(&widened, job, err);
	if (rc)
		return rc;
	json_t *spec = tfjob__replica_spec(widened, key);
	if (!spec || json_object_set_new(spec, "replicas", json_integer(index + 1))) {
		tfjob_job_free(widened);
		return tfjob__oom(err);
	}
	rc = pod ? tfjob__render_pod(out, widened, key, index, opts, err)
	         : tfjob__render_service(out, widened, key, index, opts, err);
	tfjob_job_free(widened);
	if (!rc && pod)
		rc = set_beyond_tf_config(*out, job, key, index, opts, err);
	if (rc) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}
