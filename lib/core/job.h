/*
 * The tfjob_job handle and helpers to read its JSON tree.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_INTERNAL_JOB_H
#define TFJOB_INTERNAL_JOB_H

#include <jansson.h>

#include "util/common.h"

struct tfjob_job {
	json_t *root; /* the whole TFJob object (owned) */
	/*
	 * The CRD schema check (tfjob__schema_check) finds no error at all in root: set by
	 * tfjob_job_apply_defaults(), which runs that check, so that tfjob_job_validate() right after
	 * it does not walk the tree again. Whatever changes metadata or spec in a way that could
	 * change the verdict (a JSON type, a required field) must clear it; status does not count.
	 */
	bool schema_clean;
	/* With schema_clean: that check found fields the schema does not declare (not an error
	 * there; tfjob_job_validate() reports them when strict). */
	bool schema_unknown;
};

/* The five replica types, canonical spelling. */
#define TFJOB__TYPE_PS "PS"
#define TFJOB__TYPE_WORKER "Worker"
#define TFJOB__TYPE_CHIEF "Chief"
#define TFJOB__TYPE_MASTER "Master"
#define TFJOB__TYPE_EVALUATOR "Evaluator"

#define TFJOB__CONTAINER_NAME "tensorflow"
#define TFJOB__PORT_NAME "tfjob-port"
#define TFJOB__DEFAULT_PORT 2222

/* Canonical spelling of a replica type (case-insensitive match), or NULL for unknown types. */
const char *tfjob__canonical_type(const char *name);
/* Chief or Master, compared exactly (v1.9) or case-insensitively. */
bool tfjob__is_chief_or_master(const char *type, bool ignore_case);

/* Create a job handle around a value (takes the reference). Checks apiVersion/kind. */
int tfjob__job_wrap(tfjob_job **out, json_t *root, const char *filename, tfjob_error **err);

/* Borrowed lookups; NULL when absent or not of the expected JSON type. */
json_t *tfjob__obj(json_t *parent, const char *key);
json_t *tfjob__arr(json_t *parent, const char *key);
const char *tfjob__str(json_t *parent, const char *key);
json_t *tfjob__spec(const tfjob_job *job);
json_t *tfjob__run_policy(const tfjob_job *job);
json_t *tfjob__replica_specs(const tfjob_job *job);
json_t *tfjob__replica_spec(const tfjob_job *job, const char *type);
json_t *tfjob__status(const tfjob_job *job);
/* Integer field: 0 and *out set, or TFJOB_ENOTFOUND (absent, null, not an integer). */
int tfjob__int(int64_t *out, json_t *parent, const char *key);

/* The pod spec of a replica spec (template.spec), or NULL. */
json_t *tfjob__pod_spec(json_t *replica_spec);
/* Index of the container named "tensorflow" in a containers array, or -1. */
int tfjob__tensorflow_container_index(json_t *containers);

/*
 * tfjob_job_apply_defaults() on a job that nobody else sees (opts not NULL): the same checks,
 * errors and changes (applied in place, undone if memory runs out half-way), without first
 * copying a tree that is shared with its creator.
 */
int tfjob__job_apply_defaults_in_place(tfjob_job *job, const tfjob_default_options *opts, tfjob_error **err);

/* Dump a value with TFJOB_JSON_* flags into a new string (NULL when out of memory). */
char *tfjob__dump(const json_t *value, unsigned int flags);

#endif
