/*
 * The TFJob CRD's structural schema, for the fields the library reads: JSON types and the
 * schema's required fields, reported as the API server reports them (FieldValueTypeInvalid,
 * FieldValueRequired). Null counts as absent, as the API server prunes nulls of non-nullable fields.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/fielderr.h"

enum value_type { T_ANY, T_STRING, T_BOOL, T_INT32, T_INT64, T_OBJECT, T_ARRAY, T_INT_OR_STRING };

struct node_schema;

struct prop {
	const char *name;
	const struct node_schema *schema;
	bool required;
};

struct node_schema {
	enum value_type type;
	const struct prop *props; /* named fields of an object, terminated by a NULL name */
	const struct node_schema *values; /* map values (objects) or items (arrays) */
};

static const struct node_schema s_string = { T_STRING, NULL, NULL };
static const struct node_schema s_bool = { T_BOOL, NULL, NULL };
static const struct node_schema s_int32 = { T_INT32, NULL, NULL };
static const struct node_schema s_int64 = { T_INT64, NULL, NULL };
static const struct node_schema s_object = { T_OBJECT, NULL, NULL };
static const struct node_schema s_string_map = { T_OBJECT, NULL, &s_string };
static const struct node_schema s_string_list = { T_ARRAY, NULL, &s_string };
static const struct node_schema s_quantity_map = { T_OBJECT, NULL, &(const struct node_schema){ T_INT_OR_STRING, NULL, NULL } };

static const struct prop port_props[] = {
	{ "containerPort", &s_int32, true }, { "hostPort", &s_int32, false }, { "name", &s_string, false },
	{ "protocol", &s_string, false },    { "hostIP", &s_string, false },  { NULL, NULL, false },
};
static const struct node_schema s_port = { T_OBJECT, port_props, NULL };

static const struct prop env_props[] = {
	{ "name", &s_string, true }, { "value", &s_string, false }, { "valueFrom", &s_object, false }, { NULL, NULL, false },
};
static const struct node_schema s_env = { T_OBJECT, env_props, NULL };

static const struct prop resources_props[] = {
	{ "limits", &s_quantity_map, false }, { "requests", &s_quantity_map, false }, { NULL, NULL, false },
};
static const struct node_schema s_resources = { T_OBJECT, resources_props, NULL };

static const struct prop container_props[] = {
	{ "name", &s_string, true },
	{ "image", &s_string, false },
	{ "command", &s_string_list, false },
	{ "args", &s_string_list, false },
	{ "workingDir", &s_string, false },
	{ "ports", &(const struct node_schema){ T_ARRAY, NULL, &s_port }, false },
	{ "env", &(const struct node_schema){ T_ARRAY, NULL, &s_env }, false },
	{ "resources", &s_resources, false },
	{ NULL, NULL, false },
};
static const struct node_schema s_container = { T_OBJECT, container_props, NULL };
static const struct node_schema s_containers = { T_ARRAY, NULL, &s_container };

static const struct prop pod_spec_props[] = {
	{ "containers", &s_containers, true },
	{ "initContainers", &s_containers, false },
	{ "restartPolicy", &s_string, false },
	{ "schedulerName", &s_string, false },
	{ "priorityClassName", &s_string, false },
	{ NULL, NULL, false },
};

static const struct prop object_meta_props[] = {
	{ "name", &s_string, false },         { "generateName", &s_string, false }, { "namespace", &s_string, false },
	{ "uid", &s_string, false },          { "labels", &s_string_map, false },   { "annotations", &s_string_map, false },
	{ "resourceVersion", &s_string, false }, { NULL, NULL, false },
};
static const struct node_schema s_object_meta = { T_OBJECT, object_meta_props, NULL };

static const struct prop template_props[] = {
	{ "metadata", &s_object_meta, false },
	{ "spec", &(const struct node_schema){ T_OBJECT, pod_spec_props, NULL }, false },
	{ NULL, NULL, false },
};

static const struct prop replica_spec_props[] = {
	{ "replicas", &s_int32, false },
	{ "restartPolicy", &s_string, false },
	{ "template", &(const struct node_schema){ T_OBJECT, template_props, NULL }, false },
	{ NULL, NULL, false },
};
static const struct node_schema s_replica_spec = { T_OBJECT, replica_spec_props, NULL };

static const struct prop scheduling_props[] = {
	{ "minAvailable", &s_int32, false },  { "queue", &s_string, false },
	{ "minResources", &s_quantity_map, false }, { "priorityClass", &s_string, false },
	{ "scheduleTimeoutSeconds", &s_int32, false }, { NULL, NULL, false },
};

static const struct prop run_policy_props[] = {
	{ "cleanPodPolicy", &s_string, false },
	{ "ttlSecondsAfterFinished", &s_int32, false },
	{ "activeDeadlineSeconds", &s_int64, false },
	{ "backoffLimit", &s_int32, false },
	{ "schedulingPolicy", &(const struct node_schema){ T_OBJECT, scheduling_props, NULL }, false },
	{ "suspend", &s_bool, false },
	{ "managedBy", &s_string, false },
	{ NULL, NULL, false },
};

static const struct prop spec_props[] = {
	{ "runPolicy", &(const struct node_schema){ T_OBJECT, run_policy_props, NULL }, false },
	{ "successPolicy", &s_string, false },
	{ "tfReplicaSpecs", &(const struct node_schema){ T_OBJECT, NULL, &s_replica_spec }, true },
	{ "enableDynamicWorker", &s_bool, false },
	{ NULL, NULL, false },
};

static const struct prop root_props[] = {
	{ "apiVersion", &s_string, false },
	{ "kind", &s_string, false },
	{ "metadata", &s_object_meta, false },
	{ "spec", &(const struct node_schema){ T_OBJECT, spec_props, NULL }, false },
	{ NULL, NULL, false },
};
static const struct node_schema s_tfjob = { T_OBJECT, root_props, NULL };

static const char *type_word(enum value_type t)
{
	switch (t) {
	case T_STRING:
		return "string";
	case T_BOOL:
		return "boolean";
	case T_INT32:
	case T_INT64:
		return "integer";
	case T_OBJECT:
		return "object";
	case T_ARRAY:
		return "array";
	case T_INT_OR_STRING:
		return "integer or string";
	default:
		return "any";
	}
}

static const char *json_type_word(const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		return "object";
	case JSON_ARRAY:
		return "array";
	case JSON_STRING:
		return "string";
	case JSON_INTEGER:
		return "integer";
	case JSON_REAL:
		return "number";
	case JSON_TRUE:
	case JSON_FALSE:
		return "boolean";
	default:
		return "null";
	}
}

static bool type_matches(enum value_type t, const json_t *v)
{
	switch (t) {
	case T_STRING:
		return json_is_string(v);
	case T_BOOL:
		return json_is_boolean(v);
	case T_INT32:
	case T_INT64:
		return json_is_integer(v);
	case T_OBJECT:
		return json_is_object(v);
	case T_ARRAY:
		return json_is_array(v);
	case T_INT_OR_STRING:
		return json_is_integer(v) || json_is_string(v);
	default:
		return true;
	}
}

/*
 * Where a node is, kept as a chain of segments on the stack: the text of a path ("a.b[k][0]") is
 * only built for the nodes that have an error, not for every node walked.
 */
enum seg_kind { SEG_TOP, SEG_FIELD, SEG_KEY, SEG_INDEX };

struct path_seg {
	const struct path_seg *parent;
	enum seg_kind kind;
	const char *name; /* SEG_TOP, SEG_FIELD, SEG_KEY */
	size_t index;     /* SEG_INDEX */
};

/* The path as text (the tfjob__path_* spelling), or NULL when out of memory. */
static char *path_text(const struct path_seg *seg)
{
	if (seg->kind == SEG_TOP)
		return tfjob__strdup(seg->name);
	char *parent = path_text(seg->parent);
	char *out = NULL;
	if (seg->kind == SEG_FIELD)
		out = tfjob__path_child(parent, seg->name);
	else if (seg->kind == SEG_KEY)
		out = tfjob__path_key(parent, seg->name);
	else
		out = tfjob__path_index(parent, seg->index);
	free(parent);
	return out;
}

static void type_error(tfjob_field_errors *errs, json_t *v, const struct node_schema *schema,
                       const struct path_seg *at)
{
	char *path = path_text(at);
	if (!path) {
		errs->oom = true;
		return;
	}
	char *detail = tfjob__strdup_printf("%s in body must be of type %s: \"%s\"", path, type_word(schema->type),
	                                    json_type_word(v));
	tfjob__field_errors_add(errs, TFJOB_FIELD_VALUE_TYPE_INVALID, path, v, detail ? detail : "");
	free(detail);
	free(path);
}

static void error_at(tfjob_field_errors *errs, tfjob_field_error_type type, const struct path_seg *at, json_t *v,
                     const char *detail)
{
	char *path = path_text(at);
	if (!path)
		errs->oom = true;
	tfjob__field_errors_add(errs, type, path, v, detail);
	free(path);
}

/* The most fields a schema object lists (object_meta_props and container_props have 8). */
#define MAX_PROPS 8

/* Every table of fields fits check_node's found[]. */
#define PROPS_FIT(t) _Static_assert(TFJOB_ARRAY_LEN(t) - 1 <= MAX_PROPS, #t " has more than MAX_PROPS fields")
PROPS_FIT(port_props);
PROPS_FIT(env_props);
PROPS_FIT(resources_props);
PROPS_FIT(container_props);
PROPS_FIT(pod_spec_props);
PROPS_FIT(object_meta_props);
PROPS_FIT(template_props);
PROPS_FIT(replica_spec_props);
PROPS_FIT(scheduling_props);
PROPS_FIT(run_policy_props);
PROPS_FIT(spec_props);
PROPS_FIT(root_props);

/* Index of key among props (NULL-terminated), or -1. */
static int prop_index(const struct prop *props, const char *key)
{
	for (int i = 0; props[i].name; i++)
		if (props[i].name[0] == key[0] && !strcmp(props[i].name, key))
			return i;
	return -1;
}

static void check_node(tfjob_field_errors *errs, json_t *v, const struct node_schema *schema,
                       const struct path_seg *at)
{
	if (json_is_null(v) || schema->type == T_ANY)
		return;
	if (!type_matches(schema->type, v)) {
		type_error(errs, v, schema, at);
		return;
	}
	if (schema->type == T_INT32) {
		json_int_t n = json_integer_value(v);
		if (n < INT32_MIN || n > INT32_MAX)
			error_at(errs, TFJOB_FIELD_VALUE_INVALID, at, v, "must be a 32-bit integer (-2147483648 to 2147483647)");
		return;
	}
	if (schema->type == T_OBJECT) {
		/*
		 * One pass over the object's own keys finds the schema's fields (a few characters
		 * compared per key) instead of one hash lookup per field of the schema; errors still
		 * come in the schema's field order.
		 */
		json_t *found[MAX_PROPS] = { NULL };
		if (schema->props) {
			const char *key;
			json_t *child;
			json_object_foreach(v, key, child) {
				int i = prop_index(schema->props, key);
				if (i >= 0)
					found[i] = child;
			}
		}
		for (const struct prop *p = schema->props; p && p->name; p++) {
			json_t *child = found[p - schema->props];
			struct path_seg seg = { at, SEG_FIELD, p->name, 0 };
			if (!child || json_is_null(child)) {
				if (p->required)
					error_at(errs, TFJOB_FIELD_VALUE_REQUIRED, &seg, NULL, "");
			} else {
				check_node(errs, child, p->schema, &seg);
			}
		}
		if (schema->values) {
			const char *key;
			json_t *child;
			json_object_foreach(v, key, child) {
				struct path_seg seg = { at, SEG_KEY, key, 0 };
				check_node(errs, child, schema->values, &seg);
			}
		}
	} else if (schema->type == T_ARRAY && schema->values) {
		size_t i;
		json_t *child;
		json_array_foreach(v, i, child) {
			struct path_seg seg = { at, SEG_INDEX, NULL, i };
			check_node(errs, child, schema->values, &seg);
		}
	}
}

void tfjob__schema_check(tfjob_field_errors *errs, json_t *root)
{
	if (!json_is_object(root)) {
		tfjob__field_errors_add(errs, TFJOB_FIELD_VALUE_TYPE_INVALID, "<root>", root, "must be of type object");
		return;
	}
	const struct prop *p;
	/* The root path is empty, so children are "spec", "metadata", ... */
	for (p = s_tfjob.props; p->name; p++) {
		json_t *child = json_object_get(root, p->name);
		struct path_seg top = { NULL, SEG_TOP, p->name, 0 };
		if (child && !json_is_null(child))
			check_node(errs, child, p->schema, &top);
	}
}

/* ---- numbers as the API server reads them ---- */

/*
 * The API server reads JSON numbers into float64 unless they are integer literals, and its
 * schema check takes an integral float64 within +-(2^53 - 1) for an integer (kube-openapi's
 * isFloatInt), which it then stores as an integer: `"replicas": 2.0` is stored as 2. The same
 * here, at the schema's integer positions only: reals elsewhere (unknown fields) stay as written.
 */
/* v is a real the API server takes for an integer at a position of this schema: *out is its value. */
static bool integral_real(json_int_t *out, const json_t *v, const struct node_schema *schema)
{
	if (!json_is_real(v) || !(schema->type == T_INT32 || schema->type == T_INT64 || schema->type == T_INT_OR_STRING))
		return false;
	double d = json_real_value(v);
	if (!(d >= -9007199254740991.0 && d <= 9007199254740991.0) || d != trunc(d))
		return false;
	*out = (json_int_t)d;
	return true;
}

static int normalize_node(json_t *v, const struct node_schema *schema)
{
	json_int_t n;
	if (schema->type == T_OBJECT && json_is_object(v)) {
		for (void *it = json_object_iter(v); it; it = json_object_iter_next(v, it)) {
			const char *key = json_object_iter_key(it);
			json_t *child = json_object_iter_value(it);
			int i = schema->props ? prop_index(schema->props, key) : -1;
			const struct node_schema *cs = i >= 0 ? schema->props[i].schema : schema->values;
			if (!cs)
				continue;
			if (integral_real(&n, child, cs)) {
				json_t *value = json_integer(n);
				if (!value || json_object_iter_set_new(v, it, value))
					return TFJOB_ENOMEM;
			} else if (normalize_node(child, cs)) {
				return TFJOB_ENOMEM;
			}
		}
	} else if (schema->type == T_ARRAY && schema->values && json_is_array(v)) {
		size_t i;
		json_t *child;
		json_array_foreach(v, i, child) {
			if (integral_real(&n, child, schema->values)) {
				json_t *value = json_integer(n);
				if (!value || json_array_set_new(v, i, value))
					return TFJOB_ENOMEM;
			} else if (normalize_node(child, schema->values)) {
				return TFJOB_ENOMEM;
			}
		}
	}
	return 0;
}

int tfjob__schema_normalize_numbers(json_t *root) { return normalize_node(root, &s_tfjob); }
