/*
 * The TFJob structural schema as flat tables (generated into schema_table.c by
 * scripts/gen-schema.py, from the same run as examples/deploy/crd-tfjob.yaml).
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_INTERNAL_SCHEMA_TABLE_H
#define TFJOB_INTERNAL_SCHEMA_TABLE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum tfjob__schema_type {
	TFJOB__SCHEMA_ANY,
	TFJOB__SCHEMA_STRING,
	TFJOB__SCHEMA_BOOL,
	TFJOB__SCHEMA_INT32,
	TFJOB__SCHEMA_INT64,
	TFJOB__SCHEMA_NUMBER,
	TFJOB__SCHEMA_OBJECT,
	TFJOB__SCHEMA_ARRAY,
	TFJOB__SCHEMA_INT_OR_STRING,
};

/* One schema node. Nodes are shared: equal subtrees (a Container, an EnvVar) appear once. */
struct tfjob__schema_node {
	uint8_t type;           /* enum tfjob__schema_type */
	bool preserve_unknown;  /* x-kubernetes-preserve-unknown-fields: keys outside props are kept */
	uint8_t required_count; /* props with required set */
	uint16_t props;         /* first of prop_count entries of tfjob__schema_props, sorted by name */
	uint16_t prop_count;
	uint16_t values;        /* node of the map values (additionalProperties) or array items; 0: none */
	uint16_t enums;         /* first of enum_count allowed values in tfjob__schema_enum_values (then NULL) */
	uint16_t enum_count;
};

struct tfjob__schema_prop {
	const char *name;
	uint16_t node;
	bool required;
};

extern const char *const tfjob__schema_enum_values[];
extern const struct tfjob__schema_prop tfjob__schema_props[];
extern const struct tfjob__schema_node tfjob__schema_nodes[];
extern const unsigned tfjob__schema_root;
extern const unsigned tfjob__schema_node_count;
extern const unsigned tfjob__schema_max_props; /* the most props of one node */

#endif
