/*
 * libtfjob - lists of Kubernetes objects (the observed Pods and Services of a job).
 * SPDX-License-Identifier: Apache-2.0
 *
 * A tfjob_objects holds parsed objects so that they can be handed to the planner again and
 * again without being parsed each time (tfjob_plan_new_with_objects()): a controller keeps its
 * cache in this form. Thread-safety: a tfjob_objects may be read from several threads at once;
 * tfjob_objects_add_json() needs exclusive access.
 */
#ifndef TFJOB_OBJECTS_H
#define TFJOB_OBJECTS_H

#include "common.h"
#include "error.h"
#include "job.h"

TFJOB_BEGIN_DECLS

typedef struct tfjob_objects tfjob_objects;

/* Default limit on the text of a list of observed objects (a 1,000-worker job's pods are ~32 MB). */
#define TFJOB_DEFAULT_MAX_LIST_BYTES ((size_t)1024 * 1024 * 1024)

/** A new, empty list owned by the caller (tfjob_objects_free()). TFJOB_EINVAL, TFJOB_ENOMEM. */
TFJOB_EXTERN int tfjob_objects_new(tfjob_objects **out, tfjob_error **err);

/**
 * Parse YAML or JSON text holding objects: a JSON array, a Kubernetes List (its items), a
 * stream of documents, or a single object. opts may be NULL; a zero max_input_bytes means
 * TFJOB_DEFAULT_MAX_LIST_BYTES here. Every item must be an object whose metadata, when present,
 * is an object.
 * Errors: TFJOB_EPARSE (line and column set), TFJOB_ELIMIT, TFJOB_ESCHEMA (an item is not an
 * object; the message names its index), TFJOB_ENOMEM, TFJOB_EVERSION, TFJOB_EINVAL.
 * On success *out is owned by the caller (tfjob_objects_free()).
 */
TFJOB_EXTERN int tfjob_objects_parse(tfjob_objects **out, const char *data, size_t len,
                                     const tfjob_parse_options *opts, tfjob_error **err);

/**
 * Append one object given as JSON text (e.g. from a watch event). Errors as
 * tfjob_objects_parse() for a single object; the list is unchanged on error.
 */
TFJOB_EXTERN int tfjob_objects_add_json(tfjob_objects *objects, const char *json, tfjob_error **err);

/** Number of objects (0 for NULL). */
TFJOB_EXTERN size_t tfjob_objects_count(const tfjob_objects *objects);

/** The i-th object as JSON text, owned by the caller (tfjob_free()). TFJOB_EINVAL when out of range. */
TFJOB_EXTERN int tfjob_objects_item_json(char **out, const tfjob_objects *objects, size_t i, unsigned int flags,
                                         tfjob_error **err);

/** metadata.name of the i-th object, or NULL. Borrowed from the list. */
TFJOB_EXTERN const char *tfjob_objects_item_name(const tfjob_objects *objects, size_t i);

/** Release a list. Accepts NULL. */
TFJOB_EXTERN void tfjob_objects_free(tfjob_objects *objects);

TFJOB_END_DECLS

#endif
