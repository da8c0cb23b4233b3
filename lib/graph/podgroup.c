/*
 * The PodGroup of a TFJob for gang scheduling (volcano or scheduler-plugins).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph/graph.h"
#include "core/job.h"
#include "util/quantity.h"

typedef struct resource {
	char *name;
	tfjob__quantity q;
} resource;

typedef struct resources {
	resource *items;
	size_t count, cap;
} resources;

static void resources_free(resources *r)
{
	for (size_t i = 0; i < r->count; i++)
		free(r->items[i].name);
	free(r->items);
}

/* Parse a quantity value (string or number) at path. */
static int parse_value(tfjob__quantity *out, json_t *v, const char *path, tfjob_error **err)
{
	char num[64];
	const char *text = NULL;
	if (json_is_string(v)) {
		text = json_string_value(v);
	} else if (json_is_integer(v)) {
		snprintf(num, sizeof(num), "%lld", (long long)json_integer_value(v));
		text = num;
	} else if (json_is_real(v)) {
		snprintf(num, sizeof(num), "%.15g", json_real_value(v));
		text = num;
	} else {
		return tfjob__fail_field(err, TFJOB_ESCHEMA, path, "a quantity must be a string or a number");
	}
	int rc = tfjob__quantity_parse(out, text);
	if (rc == TFJOB_ELIMIT)
		return tfjob__fail_field(err, TFJOB_ELIMIT, path, "quantity \"%s\" is too large", text);
	if (rc)
		return tfjob__fail_field(err, TFJOB_ESCHEMA, path, "\"%s\" is not a valid quantity", text);
	return 0;
}

/* list[name] += q * times; a new entry takes q's format (k8s: DeepCopy, then Add keeps the receiver's). */
static int resources_add(resources *list, const char *name, const tfjob__quantity *q, int64_t times, const char *path,
                         tfjob_error **err)
{
	for (size_t i = 0; i < list->count; i++)
		if (!strcmp(list->items[i].name, name)) {
			if (tfjob__quantity_add(&list->items[i].q, q, times))
				return tfjob__fail_field(err, TFJOB_ELIMIT, path, "the sum of %s overflows", name);
			return 0;
		}
	if (list->count == list->cap) {
		size_t cap = list->cap ? list->cap * 2 : 8;
		resource *items = realloc(list->items, cap * sizeof(*items));
		if (!items)
			return tfjob__oom(err);
		list->items = items;
		list->cap = cap;
	}
	resource *r = &list->items[list->count];
	r->name = tfjob__strdup(name);
	if (!r->name)
		return tfjob__oom(err);
	r->q.nanos = 0;
	r->q.format = q->format;
	list->count++;
	if (tfjob__quantity_add(&r->q, q, times))
		return tfjob__fail_field(err, TFJOB_ELIMIT, path, "the sum of %s overflows", name);
	return 0;
}

/* Add every quantity of a ResourceList object at path, times times. */
static int add_list(resources *list, json_t *obj, int64_t times, const char *path, tfjob_error **err)
{
	if (!json_is_object(obj))
		return tfjob__fail_field(err, TFJOB_ESCHEMA, path, "must be an object");
	const char *key;
	json_t *v;
	json_object_foreach(obj, key, v) {
		char vpath[768];
		snprintf(vpath, sizeof(vpath), "%s.%s", path, key);
		tfjob__quantity q;
		int rc = parse_value(&q, v, vpath, err);
		if (!rc)
			rc = resources_add(list, key, &q, times, vpath, err);
		if (rc)
			return rc;
	}
	return 0;
}

static int cmp_resource(const void *a, const void *b)
{
	return strcmp(((const resource *)a)->name, ((const resource *)b)->name);
}

static int resources_json(json_t **out, resources *list, tfjob_error **err)
{
	if (list->count > 1) /* qsort must not see a NULL array, even when empty */
		qsort(list->items, list->count, sizeof(*list->items), cmp_resource); /* Go marshals maps sorted */
	json_t *obj = json_object();
	if (!obj)
		return tfjob__oom(err);
	for (size_t i = 0; i < list->count; i++) {
		char buf[96];
		if (json_object_set_new(obj, list->items[i].name, json_string(tfjob__quantity_format(&list->items[i].q, buf,
		                                                                                     sizeof(buf))))) {
			json_decref(obj);
			return tfjob__oom(err);
		}
	}
	*out = obj;
	return 0;
}

typedef struct prio_type {
	size_t t;
	int32_t priority;
} prio_type;

static int cmp_prio(const void *a, const void *b)
{
	const prio_type *x = a, *y = b;
	if (x->priority != y->priority)
		return x->priority > y->priority ? -1 : 1;
	return x->t < y->t ? -1 : x->t > y->t;
}

/* v1.9 CalcPGMinResources: requests (else limits) of the first minMember replicas by descending priority. */
static int calc_min_resources(resources *list, const tfjob_job *job, const tfjob_graph *g,
                              const tfjob_render_options *opts, int64_t min_member, tfjob_error **err)
{
	prio_type *order = calloc(g->ntypes ? g->ntypes : 1, sizeof(*order));
	if (!order)
		return tfjob__oom(err);
	for (size_t t = 0; t < g->ntypes; t++) {
		order[t].t = t;
		const char *pc = tfjob__str(tfjob__pod_spec(tfjob__replica_spec(job, g->types[t].key)), "priorityClassName");
		int32_t value = 0;
		if (opts->priority_cb && opts->priority_cb(&value, pc ? pc : "", opts->priority_payload) != 0)
			value = 0;
		order[t].priority = value;
	}
	qsort(order, g->ntypes, sizeof(*order), cmp_prio);
	int64_t count = 0;
	int rc = 0;
	for (size_t k = 0; k < g->ntypes && !rc && count < min_member; k++) {
		const tfjob__rtype *r = &g->types[order[k].t];
		int64_t take = r->replicas < min_member - count ? r->replicas : min_member - count;
		count += take;
		if (take <= 0)
			continue;
		json_t *containers = json_object_get(tfjob__pod_spec(tfjob__replica_spec(job, r->key)), "containers");
		size_t ci;
		json_t *c;
		json_array_foreach(containers, ci, c) {
			json_t *res = json_object_get(c, "resources");
			char path[512], suffix[128];
			if (!res || json_is_null(res))
				continue;
			if (!json_is_object(res)) {
				snprintf(suffix, sizeof(suffix), ".template.spec.containers[%zu].resources", ci);
				rc = tfjob__fail_field(err, TFJOB_ESCHEMA, tfjob__rspec_path(path, sizeof(path), r->key, suffix),
				                       "must be an object");
				break;
			}
			json_t *req = json_object_get(res, "requests"), *lim = json_object_get(res, "limits");
			bool use_req = req && !json_is_null(req);
			json_t *list_obj = use_req ? req : lim;
			if (!list_obj || json_is_null(list_obj))
				continue;
			snprintf(suffix, sizeof(suffix), ".template.spec.containers[%zu].resources.%s", ci,
			         use_req ? "requests" : "limits");
			rc = add_list(list, list_obj, take, tfjob__rspec_path(path, sizeof(path), r->key, suffix), err);
			if (rc)
				break;
		}
	}
	free(order);
	return rc;
}

static int set_new(json_t *obj, const char *key, json_t *value)
{
	return value ? json_object_set_new(obj, key, value) : -1;
}

static int build_pod_group(json_t **out, const tfjob_job *job, const tfjob_graph *g, const tfjob_render_options *opts,
                           tfjob_error **err)
{
	json_t *sp = tfjob__obj(tfjob__run_policy(job), "schedulingPolicy");
	json_t *rp = json_object_get(tfjob__spec(job), "runPolicy");
	json_t *spv = json_object_get(rp, "schedulingPolicy");
	if (spv && !json_is_null(spv) && !json_is_object(spv))
		return tfjob__fail_field(err, TFJOB_ESCHEMA, "spec.runPolicy.schedulingPolicy",
		                         "must be an object");
	int64_t min_member = g->total;
	json_t *ma = json_object_get(sp, "minAvailable");
	if (ma && !json_is_null(ma)) {
		if (!json_is_integer(ma) || json_integer_value(ma) < 0 || json_integer_value(ma) > INT32_MAX)
			return tfjob__fail_field(err, TFJOB_ESCHEMA, "spec.runPolicy.schedulingPolicy.minAvailable",
			                         "must be a non-negative integer");
		min_member = (int64_t)json_integer_value(ma);
	}
	static const char *const str_fields[] = { "queue", "priorityClass" };
	for (size_t i = 0; i < 2; i++) {
		json_t *v = json_object_get(sp, str_fields[i]);
		if (v && !json_is_null(v) && !json_is_string(v)) {
			char path[96];
			snprintf(path, sizeof(path), "spec.runPolicy.schedulingPolicy.%s", str_fields[i]);
			return tfjob__fail_field(err, TFJOB_ESCHEMA, path, "must be a string");
		}
	}
	const char *queue = tfjob__str(sp, "queue"), *pclass = tfjob__str(sp, "priorityClass");
	json_t *timeout = json_object_get(sp, "scheduleTimeoutSeconds");
	if (timeout && !json_is_null(timeout) && !json_is_integer(timeout))
		return tfjob__fail_field(err, TFJOB_ESCHEMA, "spec.runPolicy.schedulingPolicy.scheduleTimeoutSeconds",
		                         "must be an integer");
	resources list = { NULL, 0, 0 };
	json_t *given = json_object_get(sp, "minResources");
	int rc = (given && !json_is_null(given))
	                 ? add_list(&list, given, 1, "spec.runPolicy.schedulingPolicy.minResources", err)
	                 : calc_min_resources(&list, job, g, opts, min_member, err);
	json_t *minres = NULL;
	if (!rc)
		rc = resources_json(&minres, &list, err);
	resources_free(&list);
	if (rc)
		return rc;

	bool volcano = opts->gang_scheduler == TFJOB_GANG_VOLCANO;
	json_t *pg = json_object(), *meta = json_object(), *spec = json_object(), *owners = json_array();
	json_t *annotations = tfjob__obj(json_object_get(job->root, "metadata"), "annotations");
	bool oom = !pg || !meta || !spec || !owners;
	oom = oom || set_new(pg, "apiVersion", json_string(volcano ? "scheduling.volcano.sh/v1beta1" : "scheduling.x-k8s.io/v1alpha1"));
	oom = oom || set_new(pg, "kind", json_string("PodGroup"));
	oom = oom || set_new(meta, "name", json_string(g->name)) || set_new(meta, "namespace", json_string(g->namespace));
	if (!oom && json_object_size(annotations))
		oom = set_new(meta, "annotations", json_copy(annotations));
	oom = oom || json_array_append_new(owners, tfjob__owner_reference(g)) ||
	      json_object_set(meta, "ownerReferences", owners);
	oom = oom || json_object_set(pg, "metadata", meta);
	oom = oom || set_new(spec, "minMember", json_integer(min_member));
	if (volcano) {
		oom = oom || set_new(spec, "queue", json_string(queue && *queue ? queue : "default"));
		if (pclass && *pclass)
			oom = oom || set_new(spec, "priorityClassName", json_string(pclass));
		oom = oom || json_object_set(spec, "minResources", minres);
	} else {
		if (json_object_size(minres))
			oom = oom || json_object_set(spec, "minResources", minres);
		if (json_is_integer(timeout))
			oom = oom || json_object_set(spec, "scheduleTimeoutSeconds", timeout);
	}
	oom = oom || json_object_set(pg, "spec", spec);
	json_decref(meta);
	json_decref(spec);
	json_decref(owners);
	json_decref(minres);
	if (oom) {
		json_decref(pg);
		return tfjob__oom(err);
	}
	*out = pg;
	return 0;
}

int tfjob_render_pod_group(char **out, const tfjob_job *job, const tfjob_render_options *opts, unsigned int flags,
                           tfjob_error **err)
{
	if (!out || !job)
		return tfjob__fail(err, TFJOB_EINVAL, "out or job is NULL");
	*out = NULL;
	tfjob_render_options ro;
	int rc = tfjob__render_options_resolve(&ro, opts, err);
	if (rc)
		return rc;
	if (ro.gang_scheduler == TFJOB_GANG_NONE)
		return tfjob__fail(err, TFJOB_EINVAL, "no gang scheduler selected: a PodGroup needs volcano or scheduler-plugins");
	tfjob_graph *g = NULL;
	rc = tfjob__graph_build(&g, job, &ro, false, err);
	json_t *pg = NULL;
	if (!rc)
		rc = build_pod_group(&pg, job, g, &ro, err);
	tfjob_graph_free(g);
	if (rc)
		return rc;
	*out = tfjob__dump(pg, flags);
	json_decref(pg);
	return *out ? 0 : tfjob__oom(err);
}
