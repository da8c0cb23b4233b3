/*
 * Building lists of Kubernetes field errors.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_INTERNAL_FIELDERR_H
#define TFJOB_INTERNAL_FIELDERR_H

#include <jansson.h>

#include "util/common.h"

struct tfjob__field_error {
	char *field;
	tfjob_field_error_type type;
	char *detail;
	char *value;   /* JSON text of the bad value */
	char *message; /* formatted as Kubernetes' field.Error.Error() */
};

struct tfjob_field_errors {
	struct tfjob__field_error *items;
	size_t count;
	size_t cap;
	bool oom; /* an append failed: the list is incomplete and the caller must report ENOMEM */
};

tfjob_field_errors *tfjob__field_errors_new(void);

/* Append an error; value may be NULL (no value). On allocation failure sets list->oom. */
void tfjob__field_errors_add(tfjob_field_errors *list, tfjob_field_error_type type, const char *field,
                             const json_t *value, const char *detail);

/* A path element: "parent.child", or "child" when parent is empty. NULL when out of memory. */
char *tfjob__path_child(const char *parent, const char *child);
/* "parent[key]" */
char *tfjob__path_key(const char *parent, const char *key);
/* "parent[index]" */
char *tfjob__path_index(const char *parent, size_t index);

/* "supported values: \"a\", \"b\"" (field.NotSupported's detail) of a NULL-terminated list; NULL when out of memory. */
char *tfjob__supported_values_detail(const char *const *supported);

/*
 * CRD structural schema check of a TFJob: JSON types, required fields, allowed values and, when
 * strict, unknown fields (FieldValueNotSupported naming the key, with the API server's
 * `unknown field "a.b"` and a "did you mean" suggestion in the detail). Returns the number of
 * unknown fields found, reported or not.
 */
size_t tfjob__schema_check(tfjob_field_errors *errs, const json_t *root, bool strict);

/*
 * Integral reals (within +-(2^53 - 1)) at the schema's integer positions become integers, in
 * place, as the API server stores them (`"replicas": 2.0` -> 2); other reals are left alone.
 * 0, or TFJOB_ENOMEM (the tree is then partly converted).
 */
int tfjob__schema_normalize_numbers(json_t *root);

#endif
