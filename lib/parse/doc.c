/*
 * Format detection, limits and helpers around the YAML and JSON loaders.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdlib.h>
#include <string.h>

#include "parse/doc.h"
#include "util/versioned_structs.h"

int tfjob__limits_from_options(tfjob__limits *out, const tfjob_parse_options *caller_opts, tfjob_error **err)
{
	tfjob_parse_options copy;
	int rc = tfjob__versioned_copy(&tfjob__parse_options_v, &copy, caller_opts, err);
	if (rc)
		return rc;
	const tfjob_parse_options *opts = &copy;
	if (opts->format != TFJOB_FORMAT_AUTO && opts->format != TFJOB_FORMAT_YAML && opts->format != TFJOB_FORMAT_JSON)
		return tfjob__fail(err, TFJOB_EINVAL, "unknown input format %d", (int)opts->format);
	out->max_input_bytes = opts->max_input_bytes ? opts->max_input_bytes : TFJOB_DEFAULT_MAX_INPUT_BYTES;
	out->max_depth = opts->max_depth ? opts->max_depth : TFJOB_DEFAULT_MAX_DEPTH;
	out->max_aliases = opts->max_aliases ? opts->max_aliases : TFJOB_DEFAULT_MAX_ALIASES;
	out->max_nodes = opts->max_nodes ? opts->max_nodes : TFJOB_DEFAULT_MAX_NODES;
	out->max_documents = opts->max_documents ? opts->max_documents : TFJOB_DEFAULT_MAX_DOCUMENTS;
	out->filename = opts->filename;
	out->format = opts->format;
	out->first_line = opts->first_line; /* the copy has it: 0 (the default) for a version-1 caller */
	return 0;
}

int tfjob__docs_push(tfjob__docs *docs, json_t *value, tfjob_error **err)
{
	json_t **grown = realloc(docs->items, (docs->count + 1) * sizeof(*grown));
	if (!grown) {
		json_decref(value);
		return tfjob__oom(err);
	}
	docs->items = grown;
	docs->items[docs->count++] = value;
	return 0;
}

void tfjob__docs_free(tfjob__docs *docs)
{
	if (!docs)
		return;
	for (size_t i = 0; i < docs->count; i++)
		json_decref(docs->items[i]);
	free(docs->items);
	docs->items = NULL;
	docs->count = 0;
}

/* Kubernetes' YAMLOrJSONDecoder rule: JSON when the text starts with '{' or '[' (after blanks and a BOM). */
static bool looks_like_json(const char *data, size_t len)
{
	size_t i = 0;
	if (len >= 3 && (unsigned char)data[0] == 0xEF && (unsigned char)data[1] == 0xBB && (unsigned char)data[2] == 0xBF)
		i = 3;
	while (i < len && (data[i] == ' ' || data[i] == '\t' || data[i] == '\n' || data[i] == '\r'))
		i++;
	return i < len && (data[i] == '{' || data[i] == '[');
}

int tfjob__docs_load(tfjob__docs *out, const char *data, size_t len, const tfjob__limits *limits, tfjob_error **err)
{
	memset(out, 0, sizeof(*out));
	if (!data && len > 0)
		return tfjob__fail(err, TFJOB_EINVAL, "input text is NULL");
	if (len > limits->max_input_bytes)
		return tfjob__fail(err, TFJOB_ELIMIT, "%s: input is %zu bytes, more than the limit of %zu bytes",
		                   limits->filename ? limits->filename : "<input>", len, limits->max_input_bytes);
	if (len == 0)
		data = "";
	bool json = limits->format == TFJOB_FORMAT_JSON ||
	            (limits->format == TFJOB_FORMAT_AUTO && looks_like_json(data, len));
	int rc = json ? tfjob__json_load(out, data, len, limits, err) : tfjob__yaml_load(out, data, len, limits, err);
	if (rc)
		tfjob__docs_free(out);
	if (rc && err && limits->first_line > 1)
		tfjob__error_shift_line(*err, (int)limits->first_line - 1);
	return rc;
}

int tfjob__load_one(json_t **out, const char *data, size_t len, const char *what, tfjob_error **err)
{
	tfjob__limits limits;
	int rc = tfjob__limits_from_options(&limits, NULL, err);
	if (rc)
		return rc;
	limits.filename = what;
	tfjob__docs docs;
	rc = tfjob__docs_load(&docs, data, len, &limits, err);
	if (rc)
		return rc;
	if (docs.count != 1) {
		tfjob__docs_free(&docs);
		return tfjob__fail(err, TFJOB_EPARSE, "%s: expected exactly one value, found %zu", what, docs.count);
	}
	*out = docs.items[0];
	free(docs.items);
	return 0;
}

static bool is_list_object(const json_t *obj)
{
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	size_t n = kind ? strlen(kind) : 0;
	return json_is_array(json_object_get(obj, "items")) && (n == 0 || (n >= 4 && !strcmp(kind + n - 4, "List")));
}

int tfjob__docs_flatten_items(json_t **out, const tfjob__docs *docs, tfjob_error **err)
{
	json_t *all = json_array();
	if (!all)
		return tfjob__oom(err);
	for (size_t i = 0; i < docs->count; i++) {
		json_t *doc = docs->items[i];
		int rc = 0;
		if (json_is_array(doc))
			rc = json_array_extend(all, doc);
		else if (json_is_object(doc) && is_list_object(doc))
			rc = json_array_extend(all, json_object_get(doc, "items"));
		else
			rc = json_array_append(all, doc);
		if (rc) {
			json_decref(all);
			return tfjob__oom(err);
		}
	}
	*out = all;
	return 0;
}

int tfjob_parse_options_init(tfjob_parse_options *opts, unsigned int version)
{
	return tfjob__versioned_init(&tfjob__parse_options_v, opts, version);
}
