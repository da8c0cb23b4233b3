/*
 * Lists of observed Kubernetes objects, parsed once and reused by the planner.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdlib.h>
#include <string.h>

#include "internal/doc.h"
#include "internal/job.h"
#include "internal/objects.h"

static int check_items(json_t *items, const char *what, tfjob_error **err)
{
	size_t i;
	json_t *item;
	json_array_foreach(items, i, item) {
		if (!json_is_object(item) || (json_object_get(item, "metadata") && !tfjob__obj(item, "metadata")))
			return tfjob__fail(err, TFJOB_ESCHEMA, "%s[%zu]: must be an object with an object metadata", what, i);
	}
	return 0;
}

static int load_with_limits(json_t **out, const char *data, size_t len, const tfjob__limits *limits, const char *what,
                            tfjob_error **err)
{
	tfjob__docs docs;
	int rc = tfjob__docs_load(&docs, data, len, limits, err);
	if (rc)
		return rc;
	rc = tfjob__docs_flatten_items(out, &docs, err);
	tfjob__docs_free(&docs);
	if (rc)
		return rc;
	rc = check_items(*out, what, err);
	if (rc) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}

int tfjob__objects_load(json_t **out, const char *data, size_t len, size_t max_bytes, const char *what,
                        tfjob_error **err)
{
	if (!data) {
		*out = json_array();
		return *out ? 0 : tfjob__oom(err);
	}
	tfjob__limits limits;
	int rc = tfjob__limits_from_options(&limits, NULL, err);
	if (rc)
		return rc;
	limits.filename = what;
	limits.max_input_bytes = max_bytes ? max_bytes : TFJOB_DEFAULT_MAX_LIST_BYTES;
	return load_with_limits(out, data, len, &limits, what, err);
}

int tfjob_objects_new(tfjob_objects **out, tfjob_error **err)
{
	if (!out)
		return tfjob__fail(err, TFJOB_EINVAL, "out is NULL");
	tfjob_objects *objs = calloc(1, sizeof(*objs));
	if (objs)
		objs->items = json_array();
	if (!objs || !objs->items) {
		free(objs);
		return tfjob__oom(err);
	}
	*out = objs;
	return 0;
}

int tfjob_objects_parse(tfjob_objects **out, const char *data, size_t len, const tfjob_parse_options *opts,
                        tfjob_error **err)
{
	if (!out || (!data && len))
		return tfjob__fail(err, TFJOB_EINVAL, "out or data is NULL");
	*out = NULL;
	tfjob__limits limits;
	int rc = tfjob__limits_from_options(&limits, opts, err);
	if (rc)
		return rc;
	if (!opts || !opts->max_input_bytes)
		limits.max_input_bytes = TFJOB_DEFAULT_MAX_LIST_BYTES;
	json_t *items = NULL;
	rc = load_with_limits(&items, data ? data : "", len, &limits, limits.filename ? limits.filename : "objects", err);
	if (rc)
		return rc;
	tfjob_objects *objs = calloc(1, sizeof(*objs));
	if (!objs) {
		json_decref(items);
		return tfjob__oom(err);
	}
	objs->items = items;
	*out = objs;
	return 0;
}

int tfjob_objects_add_json(tfjob_objects *objects, const char *json, tfjob_error **err)
{
	if (!objects || !json)
		return tfjob__fail(err, TFJOB_EINVAL, "objects or json is NULL");
	json_t *item = NULL;
	int rc = tfjob__load_one(&item, json, strlen(json), "object", err);
	if (rc)
		return rc;
	json_t *one = json_pack("[o]", item);
	rc = one ? check_items(one, "object", err) : tfjob__oom(err);
	if (!rc && json_array_append(objects->items, json_array_get(one, 0)))
		rc = tfjob__oom(err);
	json_decref(one);
	return rc;
}

size_t tfjob_objects_count(const tfjob_objects *objects) { return objects ? json_array_size(objects->items) : 0; }

int tfjob_objects_item_json(char **out, const tfjob_objects *objects, size_t i, unsigned int flags, tfjob_error **err)
{
	if (!out || !objects || i >= json_array_size(objects->items))
		return tfjob__fail(err, TFJOB_EINVAL, "out or objects is NULL, or index %zu out of range", i);
	*out = tfjob__dump(json_array_get(objects->items, i), flags);
	return *out ? 0 : tfjob__oom(err);
}

const char *tfjob_objects_item_name(const tfjob_objects *objects, size_t i)
{
	if (!objects)
		return NULL;
	return tfjob__str(tfjob__obj(json_array_get(objects->items, i), "metadata"), "name");
}

void tfjob_objects_free(tfjob_objects *objects)
{
	if (!objects)
		return;
	json_decref(objects->items);
	free(objects);
}
