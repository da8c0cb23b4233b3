/*
 * Loading YAML or JSON text into jansson values, with limits and precise syntax errors.
 * Used for TFJobs, pods, services, scenarios: anything the library reads.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_INTERNAL_DOC_H
#define TFJOB_INTERNAL_DOC_H

#include <jansson.h>

#include "util/common.h"

typedef struct tfjob__docs {
	json_t **items; /* owned references */
	size_t count;   /* empty YAML documents are not counted */
	bool integral_reals; /* may hold reals with integral values (JSON numbers written with a fraction
	                      * or an exponent): integer fields need normalising. Never for YAML: its
	                      * reader makes them integers. */
} tfjob__docs;

/* Effective limits of a parse (zero fields of the options replaced by defaults). */
typedef struct tfjob__limits {
	size_t max_input_bytes;
	unsigned int max_depth;
	unsigned int max_aliases;
	unsigned int max_nodes;
	unsigned int max_documents;
	const char *filename;
	tfjob_format format;
	unsigned int first_line; /* the caller's first_line (0: not given); errors count lines from it */
} tfjob__limits;

int tfjob__limits_from_options(tfjob__limits *out, const tfjob_parse_options *opts, tfjob_error **err);

/* Parse every document of the text. On error *out is left empty. */
int tfjob__docs_load(tfjob__docs *out, const char *data, size_t len, const tfjob__limits *limits,
                     tfjob_error **err);
void tfjob__docs_free(tfjob__docs *docs);

/* The two syntaxes; both append to out. */
int tfjob__yaml_load(tfjob__docs *out, const char *data, size_t len, const tfjob__limits *limits,
                     tfjob_error **err);
int tfjob__json_load(tfjob__docs *out, const char *data, size_t len, const tfjob__limits *limits,
                     tfjob_error **err);

/* Append a value (takes the reference). */
int tfjob__docs_push(tfjob__docs *docs, json_t *value, tfjob_error **err);

/*
 * JSON text from elsewhere (an API server) for jansson: integers beyond int64, which jansson
 * refuses, get ".0" so they read as float64, as Kubernetes' own JSON reader takes them.
 * 1 with a new NUL-terminated copy in *out (free()), 0 when the text needs no change (*out
 * NULL), TFJOB_ENOMEM.
 */
int tfjob__json_widen(char **out, const char *data, size_t len);

/*
 * Parse a JSON or YAML text that must hold exactly one value (used for objects passed as text
 * through the API: pods, status). Returns a new reference in *out.
 */
int tfjob__load_one(json_t **out, const char *data, size_t len, const char *what, tfjob_error **err);

/*
 * Items of a Kubernetes List or a plain array: for each document, an array contributes its
 * elements, an object with "items" (kind ending in "List") its items, any other object itself.
 * The result is a new array reference.
 */
int tfjob__docs_flatten_items(json_t **out, const tfjob__docs *docs, tfjob_error **err);

#endif
