/*
 * The tfjob_objects handle: a jansson array of objects.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_INTERNAL_OBJECTS_H
#define TFJOB_INTERNAL_OBJECTS_H

#include <jansson.h>

#include "internal/common.h"

struct tfjob_objects {
	json_t *items; /* array of objects (owned) */
};

/* Parse text (NULL = none) into a new array reference; what names the list in errors. */
int tfjob__objects_load(json_t **out, const char *data, size_t len, size_t max_bytes, const char *what,
                        tfjob_error **err);

#endif
