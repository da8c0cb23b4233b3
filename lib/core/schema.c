/*
 * The TFJob CRD's structural schema (lib/core/schema_table.c, generated with the CRD by
 * scripts/gen-schema.py): JSON types, the schema's required fields, the allowed values of a few
 * pod fields and, when strict, unknown fields, reported as the API server reports them
 * (FieldValueTypeInvalid, FieldValueRequired, FieldValueNotSupported). Null counts as absent, as
 * the API server prunes nulls of non-nullable fields.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <strings.h>

#include "core/fielderr.h"
#include "core/schema_table.h"
#include "util/sbuf.h"

typedef struct tfjob__schema_node schema_node;

static const schema_node *node_at(unsigned i) { return &tfjob__schema_nodes[i]; }

static const char *type_word(unsigned t)
{
	switch (t) {
	case TFJOB__SCHEMA_STRING:
		return "string";
	case TFJOB__SCHEMA_BOOL:
		return "boolean";
	case TFJOB__SCHEMA_INT32:
	case TFJOB__SCHEMA_INT64:
		return "integer";
	case TFJOB__SCHEMA_NUMBER:
		return "number";
	case TFJOB__SCHEMA_OBJECT:
		return "object";
	case TFJOB__SCHEMA_ARRAY:
		return "array";
	case TFJOB__SCHEMA_INT_OR_STRING:
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

static bool type_matches(unsigned t, const json_t *v)
{
	switch (t) {
	case TFJOB__SCHEMA_STRING:
		return json_is_string(v);
	case TFJOB__SCHEMA_BOOL:
		return json_is_boolean(v);
	case TFJOB__SCHEMA_INT32:
	case TFJOB__SCHEMA_INT64:
		return json_is_integer(v);
	case TFJOB__SCHEMA_NUMBER:
		return json_is_number(v);
	case TFJOB__SCHEMA_OBJECT:
		return json_is_object(v);
	case TFJOB__SCHEMA_ARRAY:
		return json_is_array(v);
	case TFJOB__SCHEMA_INT_OR_STRING:
		return json_is_integer(v) || json_is_string(v);
	default:
		return true;
	}
}

/* Index in tfjob__schema_props of the node's field named key (binary search), or -1. */
static long prop_lookup(const schema_node *node, const char *key)
{
	size_t lo = node->props, hi = (size_t)node->props + node->prop_count;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int c = strcmp(key, tfjob__schema_props[mid].name);
		if (c == 0)
			return (long)mid;
		if (c < 0)
			hi = mid;
		else
			lo = mid + 1;
	}
	return -1;
}

/* ---- "did you mean": the closest field name ---- */

/* Longest field name the suggestion compares; longer keys get no suggestion. */
#define SUGGEST_MAX_LEN 64

/* Edit distance with adjacent transpositions (optimal string alignment), case-insensitive. */
static size_t edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b);
	size_t d[3][SUGGEST_MAX_LEN + 1]; /* rows i-2, i-1, i */
	for (size_t j = 0; j <= lb; j++)
		d[0][j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t *cur = d[i % 3], *prev = d[(i - 1) % 3], *prev2 = d[(i + 1) % 3];
		cur[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t cost = tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]);
			size_t best = prev[j - 1] + cost;
			if (prev[j] + 1 < best)
				best = prev[j] + 1;
			if (cur[j - 1] + 1 < best)
				best = cur[j - 1] + 1;
			if (i > 1 && j > 1 && tolower((unsigned char)a[i - 1]) == tolower((unsigned char)b[j - 2]) &&
			    tolower((unsigned char)a[i - 2]) == tolower((unsigned char)b[j - 1]) && prev2[j - 2] + 1 < best)
				best = prev2[j - 2] + 1;
			cur[j] = best;
		}
	}
	return d[la % 3][lb];
}

/* The node's field name closest to key, when it is close enough to be a typo of it; else NULL. */
static const char *suggest_field(const schema_node *node, const char *key)
{
	size_t len = strlen(key);
	if (len > SUGGEST_MAX_LEN)
		return NULL;
	/* A typo of one character in short names, two in names of 8 characters or more. */
	size_t limit = len >= 8 ? 2 : 1, best_distance = limit + 1;
	const char *best = NULL;
	for (size_t i = node->props; i < (size_t)node->props + node->prop_count; i++) {
		const char *name = tfjob__schema_props[i].name;
		size_t name_len = strlen(name);
		if (name_len > SUGGEST_MAX_LEN || (name_len > len ? name_len - len : len - name_len) > limit)
			continue;
		size_t distance = strcasecmp(name, key) ? edit_distance(key, name) : 0;
		if (distance < best_distance) {
			best_distance = distance;
			best = name;
		}
	}
	return best;
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

/* The path as the API server's strict decoding error spells it: map keys as fields ("a.k[0].b"). */
static void decoder_path(tfjob__sbuf *b, const struct path_seg *seg)
{
	if (seg->kind != SEG_TOP)
		decoder_path(b, seg->parent);
	if (seg->kind == SEG_INDEX) {
		tfjob__sbuf_addc(b, '[');
		tfjob__sbuf_add_i64(b, (int64_t)seg->index);
		tfjob__sbuf_addc(b, ']');
		return;
	}
	if (seg->kind != SEG_TOP)
		tfjob__sbuf_addc(b, '.');
	tfjob__sbuf_adds(b, seg->name);
}

struct walk {
	tfjob_field_errors *errs;
	bool strict;     /* unknown fields are errors */
	size_t unknown;  /* unknown fields seen (reported or not) */
};

static void error_at(tfjob_field_errors *errs, tfjob_field_error_type type, const struct path_seg *at,
                     const json_t *v, const char *detail)
{
	char *path = path_text(at);
	if (!path)
		errs->oom = true;
	tfjob__field_errors_add(errs, type, path, v, detail);
	free(path);
}

static void type_error(tfjob_field_errors *errs, const json_t *v, const schema_node *node, const struct path_seg *at)
{
	char *path = path_text(at);
	if (!path) {
		errs->oom = true;
		return;
	}
	char *detail = tfjob__strdup_printf("%s in body must be of type %s: \"%s\"", path, type_word(node->type),
	                                    json_type_word(v));
	tfjob__field_errors_add(errs, TFJOB_FIELD_VALUE_TYPE_INVALID, path, v, detail ? detail : "");
	free(detail);
	free(path);
}

/* FieldValueNotSupported naming the key; the detail has the API server's words and a suggestion. */
static void unknown_field_error(tfjob_field_errors *errs, const schema_node *parent, const char *key,
                                const struct path_seg *at)
{
	tfjob__sbuf b = TFJOB__SBUF_INIT;
	tfjob__sbuf_adds(&b, "unknown field \"");
	decoder_path(&b, at);
	tfjob__sbuf_addc(&b, '"');
	const char *suggestion = suggest_field(parent, key);
	if (suggestion) {
		tfjob__sbuf_adds(&b, "; did you mean \"");
		tfjob__sbuf_adds(&b, suggestion);
		tfjob__sbuf_adds(&b, "\"?");
	}
	json_t *name = json_string(key);
	if (!name || b.oom)
		errs->oom = true;
	else
		error_at(errs, TFJOB_FIELD_VALUE_NOT_SUPPORTED, at, name, b.p);
	json_decref(name);
	tfjob__sbuf_free(&b);
}

static void enum_check(tfjob_field_errors *errs, const json_t *v, const schema_node *node, const struct path_seg *at)
{
	const char *const *allowed = &tfjob__schema_enum_values[node->enums];
	const char *s = json_string_value(v);
	for (const char *const *a = allowed; *a; a++)
		if (!strcmp(*a, s))
			return;
	char *detail = tfjob__supported_values_detail(allowed);
	if (!detail)
		errs->oom = true;
	else
		error_at(errs, TFJOB_FIELD_VALUE_NOT_SUPPORTED, at, v, detail);
	free(detail);
}

static void check_node(struct walk *w, const json_t *v, const schema_node *node, const struct path_seg *at);

static void check_object(struct walk *w, const json_t *v, const schema_node *node, const struct path_seg *at)
{
	const char *key;
	json_t *child;
	unsigned required_found = 0;
	json_object_foreach((json_t *)v, key, child) {
		long i = node->prop_count ? prop_lookup(node, key) : -1;
		if (i >= 0) {
			const struct tfjob__schema_prop *p = &tfjob__schema_props[i];
			struct path_seg seg = { at, SEG_FIELD, p->name, 0 };
			if (json_is_null(child))
				continue;
			required_found += p->required;
			check_node(w, child, node_at(p->node), &seg);
		} else if (node->values) {
			struct path_seg seg = { at, SEG_KEY, key, 0 };
			check_node(w, child, node_at(node->values), &seg);
		} else if (!node->preserve_unknown) {
			struct path_seg seg = { at, SEG_FIELD, key, 0 };
			w->unknown++;
			if (w->strict)
				unknown_field_error(w->errs, node, key, &seg);
		}
	}
	if (required_found == node->required_count)
		return;
	for (size_t i = node->props; i < (size_t)node->props + node->prop_count; i++) {
		const struct tfjob__schema_prop *p = &tfjob__schema_props[i];
		const json_t *value = p->required ? json_object_get(v, p->name) : NULL;
		if (p->required && (!value || json_is_null(value))) {
			struct path_seg seg = { at, SEG_FIELD, p->name, 0 };
			error_at(w->errs, TFJOB_FIELD_VALUE_REQUIRED, &seg, NULL, "");
		}
	}
}

static void check_node(struct walk *w, const json_t *v, const schema_node *node, const struct path_seg *at)
{
	if (json_is_null(v) || node->type == TFJOB__SCHEMA_ANY)
		return;
	if (!type_matches(node->type, v)) {
		type_error(w->errs, v, node, at);
		return;
	}
	switch (node->type) {
	case TFJOB__SCHEMA_INT32: {
		json_int_t n = json_integer_value(v);
		if (n < INT32_MIN || n > INT32_MAX)
			error_at(w->errs, TFJOB_FIELD_VALUE_INVALID, at, v, "must be a 32-bit integer (-2147483648 to 2147483647)");
		break;
	}
	case TFJOB__SCHEMA_STRING:
		if (node->enum_count)
			enum_check(w->errs, v, node, at);
		break;
	case TFJOB__SCHEMA_OBJECT:
		check_object(w, v, node, at);
		break;
	case TFJOB__SCHEMA_ARRAY:
		if (node->values) {
			size_t i;
			json_t *child;
			json_array_foreach((json_t *)v, i, child) {
				struct path_seg seg = { at, SEG_INDEX, NULL, i };
				check_node(w, child, node_at(node->values), &seg);
			}
		}
		break;
	default:
		break;
	}
}

size_t tfjob__schema_check(tfjob_field_errors *errs, const json_t *root, bool strict)
{
	if (!json_is_object(root)) {
		tfjob__field_errors_add(errs, TFJOB_FIELD_VALUE_TYPE_INVALID, "<root>", root, "must be of type object");
		return 0;
	}
	/* The root path is empty, so children are "spec", "metadata", ...; the root's own fields
	 * are walked here so that each starts a path of its own. */
	struct walk w = { errs, strict, 0 };
	const schema_node *root_node = node_at(tfjob__schema_root);
	const char *key;
	json_t *child;
	json_object_foreach((json_t *)root, key, child) {
		long i = prop_lookup(root_node, key);
		struct path_seg top = { NULL, SEG_TOP, i >= 0 ? tfjob__schema_props[i].name : key, 0 };
		if (i >= 0) {
			check_node(&w, child, node_at(tfjob__schema_props[i].node), &top);
		} else {
			w.unknown++;
			if (strict)
				unknown_field_error(errs, root_node, key, &top);
		}
	}
	return w.unknown;
}

/* ---- numbers as the API server reads them ---- */

/*
 * The API server reads JSON numbers into float64 unless they are integer literals, and its
 * schema check takes an integral float64 within +-(2^53 - 1) for an integer (kube-openapi's
 * isFloatInt), which it then stores as an integer: `"replicas": 2.0` is stored as 2. The same
 * here, at the schema's integer positions only: reals elsewhere (unknown fields) stay as written.
 */
/* v is a real the API server takes for an integer at a position of this schema: *out is its value. */
static bool integral_real(json_int_t *out, const json_t *v, const schema_node *node)
{
	if (!json_is_real(v) || !(node->type == TFJOB__SCHEMA_INT32 || node->type == TFJOB__SCHEMA_INT64 ||
	                          node->type == TFJOB__SCHEMA_INT_OR_STRING))
		return false;
	double d = json_real_value(v);
	if (!(d >= -9007199254740991.0 && d <= 9007199254740991.0) || d != trunc(d))
		return false;
	*out = (json_int_t)d;
	return true;
}

/* The schema node of an object's key: a field's, else the map values' (NULL for unknown keys). */
static const schema_node *child_node(const schema_node *node, const char *key)
{
	long i = node->prop_count ? prop_lookup(node, key) : -1;
	if (i >= 0)
		return node_at(tfjob__schema_props[i].node);
	return node->values ? node_at(node->values) : NULL;
}

static int normalize_node(json_t *v, const schema_node *node)
{
	json_int_t n;
	if (node->type == TFJOB__SCHEMA_OBJECT && json_is_object(v)) {
		for (void *it = json_object_iter(v); it; it = json_object_iter_next(v, it)) {
			json_t *child = json_object_iter_value(it);
			const schema_node *cs = child_node(node, json_object_iter_key(it));
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
	} else if (node->type == TFJOB__SCHEMA_ARRAY && node->values && json_is_array(v)) {
		size_t i;
		json_t *child;
		const schema_node *items = node_at(node->values);
		json_array_foreach(v, i, child) {
			if (integral_real(&n, child, items)) {
				json_t *value = json_integer(n);
				if (!value || json_array_set_new(v, i, value))
					return TFJOB_ENOMEM;
			} else if (normalize_node(child, items)) {
				return TFJOB_ENOMEM;
			}
		}
	}
	return 0;
}

int tfjob__schema_normalize_numbers(json_t *root) { return normalize_node(root, node_at(tfjob__schema_root)); }
