/*
 * libtfjob - the TFJob object: parsing, serialisation, defaults and typed accessors.
 * SPDX-License-Identifier: Apache-2.0
 *
 * A tfjob_job owns a complete kubeflow.org/v1 TFJob document. Every field the library does not
 * interpret (the pod templates, unknown metadata and spec fields, status extras) is kept as it
 * was parsed and comes out of tfjob_job_to_json() unchanged.
 *
 * Thread-safety: a tfjob_job may be read from several threads at once (all const functions);
 * functions taking a non-const tfjob_job need exclusive access.
 */
#ifndef TFJOB_JOB_H
#define TFJOB_JOB_H

#include "common.h"
#include "error.h"

TFJOB_BEGIN_DECLS

typedef struct tfjob_job tfjob_job;

typedef enum tfjob_format {
	TFJOB_FORMAT_AUTO = 0, /* JSON when the first non-blank character is '{' or '[', else YAML */
	TFJOB_FORMAT_YAML = 1,
	TFJOB_FORMAT_JSON = 2
} tfjob_format;

/* Default input limits (docs/limits.md). */
#define TFJOB_DEFAULT_MAX_INPUT_BYTES ((size_t)16 * 1024 * 1024)
#define TFJOB_DEFAULT_MAX_DEPTH 128u
#define TFJOB_DEFAULT_MAX_ALIASES 1000u
#define TFJOB_DEFAULT_MAX_NODES 2000000u
#define TFJOB_DEFAULT_MAX_DOCUMENTS 10000u

#define TFJOB_PARSE_OPTIONS_VERSION 2

/**
 * Options for parsing. Initialise with TFJOB_PARSE_OPTIONS_INIT or tfjob_parse_options_init();
 * a zero limit means the default above.
 */
typedef struct tfjob_parse_options {
	unsigned int version;       /* TFJOB_PARSE_OPTIONS_VERSION */
	tfjob_format format;        /* TFJOB_FORMAT_AUTO */
	const char *filename;       /* used in error messages only; may be NULL */
	size_t max_input_bytes;     /* whole input */
	unsigned int max_depth;     /* nesting of mappings/sequences */
	unsigned int max_aliases;   /* YAML alias references in one document */
	unsigned int max_nodes;     /* values in one document after alias expansion */
	unsigned int max_documents; /* documents in one stream */
	/* Version 2: the line number of the text's first line, for text cut out of a larger file (a
	 * document of a stream): error messages and tfjob_error_line() count from it, and an error
	 * about a whole document ("not a TFJob") names this line. 0: 1, and no line in such errors. */
	unsigned int first_line;
} tfjob_parse_options;

#define TFJOB_PARSE_OPTIONS_INIT { TFJOB_PARSE_OPTIONS_VERSION, TFJOB_FORMAT_AUTO, NULL, 0, 0, 0, 0, 0, 0 }

/** Initialise options of the given version to their defaults. TFJOB_EVERSION for unknown versions. */
TFJOB_EXTERN int tfjob_parse_options_init(tfjob_parse_options *opts, unsigned int version);

/**
 * Parse exactly one TFJob from YAML or JSON text (`len` bytes; the text need not be
 * NUL-terminated). opts may be NULL for defaults.
 *
 * YAML is resolved as Kubernetes' decoder does (go-yaml v2 YAML 1.1 scalars, merge keys,
 * duplicate keys refused; docs/api.md); input limits are in docs/limits.md.
 *
 * Errors: TFJOB_EPARSE (syntax; line and column set, empty input, or more than one document),
 * TFJOB_ELIMIT, TFJOB_ESCHEMA (not a mapping, apiVersion is not kubeflow.org/v1 or kind is not
 * TFJob), TFJOB_ENOMEM, TFJOB_EVERSION, TFJOB_EINVAL. JSON types of individual fields are not
 * checked here: tfjob_job_validate() reports them as field errors.
 * On success *out is a new job owned by the caller (tfjob_job_free()).
 */
TFJOB_EXTERN int tfjob_job_parse(tfjob_job **out, const char *data, size_t len,
                                 const tfjob_parse_options *opts, tfjob_error **err);

/**
 * Parse every TFJob of a multi-document YAML stream (or of concatenated JSON values). Empty
 * documents are skipped; a JSON array or a Kubernetes List of TFJobs contributes its items.
 * On success *out is a new array of *out_count jobs, released with tfjob_job_array_free(); the
 * count may be 0 when the stream holds only empty documents. Errors as tfjob_job_parse(); on
 * error nothing is returned.
 */
TFJOB_EXTERN int tfjob_job_parse_all(tfjob_job ***out, size_t *out_count, const char *data, size_t len,
                                     const tfjob_parse_options *opts, tfjob_error **err);

/** Release an array from tfjob_job_parse_all() and every job in it. Accepts NULL. */
TFJOB_EXTERN void tfjob_job_array_free(tfjob_job **jobs, size_t count);

/** Deep copy. *out is owned by the caller. TFJOB_ENOMEM, TFJOB_EINVAL. */
TFJOB_EXTERN int tfjob_job_clone(tfjob_job **out, const tfjob_job *job, tfjob_error **err);

/** Release a job. Accepts NULL. */
TFJOB_EXTERN void tfjob_job_free(tfjob_job *job);

/* Flags for tfjob_job_to_json() and other JSON writers. */
#define TFJOB_JSON_COMPACT 0u     /* no white space */
#define TFJOB_JSON_PRETTY 1u      /* two-space indentation */
#define TFJOB_JSON_SORT_KEYS 2u   /* keys sorted (default: document order) */

/**
 * Serialise the whole job as JSON. *out is a NUL-terminated string owned by the caller
 * (tfjob_free()). TFJOB_ENOMEM, TFJOB_EINVAL.
 */
TFJOB_EXTERN int tfjob_job_to_json(char **out, const tfjob_job *job, unsigned int flags, tfjob_error **err);

/* ---- Defaults ---- */

#define TFJOB_DEFAULT_OPTIONS_VERSION 1

typedef struct tfjob_default_options {
	unsigned int version; /* TFJOB_DEFAULT_OPTIONS_VERSION */
	tfjob_compat compat;  /* TFJOB_COMPAT_DOCUMENTED */
} tfjob_default_options;

#define TFJOB_DEFAULT_OPTIONS_INIT { TFJOB_DEFAULT_OPTIONS_VERSION, TFJOB_COMPAT_DOCUMENTED }

/** Initialise options of the given version to their defaults. TFJOB_EVERSION for unknown versions. */
TFJOB_EXTERN int tfjob_default_options_init(tfjob_default_options *opts, unsigned int version);

/**
 * Apply the TFJob defaults in place: cleanPodPolicy (documented: Running; v1.9: None),
 * successPolicy "", replica type keys in canonical case, replicas 1, restartPolicy Never, and
 * the tfjob-port (2222) on the `tensorflow` container (else the first). Idempotent.
 * opts may be NULL. Errors: TFJOB_ESCHEMA when a field of the CRD schema has the wrong JSON
 * type or an out-of-range integer, as the Go operator could not decode such an object (the
 * error's field and message name the first such field; missing required fields are not an
 * error here, tfjob_job_validate() reports them), TFJOB_ENOMEM, TFJOB_EVERSION, TFJOB_EINVAL.
 * On error the job is left unchanged.
 */
TFJOB_EXTERN int tfjob_job_apply_defaults(tfjob_job *job, const tfjob_default_options *opts, tfjob_error **err);

/* ---- Typed accessors ----
 * Strings are borrowed from the job and valid until it is changed or freed. A field that is
 * absent, null or of the wrong JSON type reads as absent: NULL for strings, TFJOB_ENOTFOUND for
 * the int-returning getters (which leave *out untouched then).
 */

/** metadata.name, or NULL. */
TFJOB_EXTERN const char *tfjob_job_name(const tfjob_job *job);
/** metadata.namespace, or NULL (callers usually treat NULL as "default"). */
TFJOB_EXTERN const char *tfjob_job_namespace(const tfjob_job *job);
/** metadata.uid, or NULL. */
TFJOB_EXTERN const char *tfjob_job_uid(const tfjob_job *job);
/** metadata.generateName, or NULL. */
TFJOB_EXTERN const char *tfjob_job_generate_name(const tfjob_job *job);

/** Number of keys in spec.tfReplicaSpecs (0 when absent). */
TFJOB_EXTERN size_t tfjob_job_replica_type_count(const tfjob_job *job);
/** The i-th replica type key in document order, or NULL when i is out of range. */
TFJOB_EXTERN const char *tfjob_job_replica_type(const tfjob_job *job, size_t i);
/** spec.tfReplicaSpecs[type].replicas (exact key match). 0 or TFJOB_ENOTFOUND. */
TFJOB_EXTERN int tfjob_job_replicas(int64_t *out, const tfjob_job *job, const char *type);
/** spec.tfReplicaSpecs[type].restartPolicy, or NULL. */
TFJOB_EXTERN const char *tfjob_job_restart_policy(const tfjob_job *job, const char *type);

/** spec.runPolicy.cleanPodPolicy, or NULL. */
TFJOB_EXTERN const char *tfjob_job_clean_pod_policy(const tfjob_job *job);
/** spec.runPolicy.ttlSecondsAfterFinished. 0 or TFJOB_ENOTFOUND. */
TFJOB_EXTERN int tfjob_job_ttl_seconds_after_finished(int64_t *out, const tfjob_job *job);
/** spec.runPolicy.activeDeadlineSeconds. 0 or TFJOB_ENOTFOUND. */
TFJOB_EXTERN int tfjob_job_active_deadline_seconds(int64_t *out, const tfjob_job *job);
/** spec.runPolicy.backoffLimit. 0 or TFJOB_ENOTFOUND. */
TFJOB_EXTERN int tfjob_job_backoff_limit(int64_t *out, const tfjob_job *job);
/** 1 when spec.runPolicy.suspend is true, else 0 (absent reads as false). No errors; job may not be NULL. */
TFJOB_EXTERN int tfjob_job_is_suspended(const tfjob_job *job);
/** The old name of tfjob_job_is_suspended(): it reads, it does not suspend. Kept for the ABI. */
TFJOB_EXTERN TFJOB_DEPRECATED("use tfjob_job_is_suspended()") int tfjob_job_suspend(const tfjob_job *job);
/** spec.runPolicy.managedBy, or NULL. */
TFJOB_EXTERN const char *tfjob_job_managed_by(const tfjob_job *job);
/** spec.runPolicy.schedulingPolicy.minAvailable. 0 or TFJOB_ENOTFOUND. */
TFJOB_EXTERN int tfjob_job_min_available(int64_t *out, const tfjob_job *job);
/** spec.runPolicy.schedulingPolicy.queue, or NULL. */
TFJOB_EXTERN const char *tfjob_job_queue(const tfjob_job *job);
/** spec.runPolicy.schedulingPolicy.priorityClass, or NULL. */
TFJOB_EXTERN const char *tfjob_job_priority_class(const tfjob_job *job);
/** spec.runPolicy.schedulingPolicy.scheduleTimeoutSeconds. 0 or TFJOB_ENOTFOUND. */
TFJOB_EXTERN int tfjob_job_schedule_timeout_seconds(int64_t *out, const tfjob_job *job);
/** spec.successPolicy, or NULL when absent ("" is the default policy). */
TFJOB_EXTERN const char *tfjob_job_success_policy(const tfjob_job *job);
/** spec.enableDynamicWorker (absent reads as false). */
TFJOB_EXTERN int tfjob_job_enable_dynamic_worker(const tfjob_job *job);

/** Number of entries in status.conditions. */
TFJOB_EXTERN size_t tfjob_job_condition_count(const tfjob_job *job);
/** Type of the i-th condition, or NULL. */
TFJOB_EXTERN const char *tfjob_job_condition_type(const tfjob_job *job, size_t i);
/**
 * Status ("True", "False", "Unknown") of the condition of the given type, or NULL when the job
 * has no such condition.
 */
TFJOB_EXTERN const char *tfjob_job_condition_status(const tfjob_job *job, const char *type);
/** Reason of the condition of the given type, or NULL. */
TFJOB_EXTERN const char *tfjob_job_condition_reason(const tfjob_job *job, const char *type);
/** Message of the condition of the given type, or NULL. */
TFJOB_EXTERN const char *tfjob_job_condition_message(const tfjob_job *job, const char *type);
/** status.startTime (RFC 3339), or NULL. */
TFJOB_EXTERN const char *tfjob_job_start_time(const tfjob_job *job);
/** status.completionTime (RFC 3339), or NULL. */
TFJOB_EXTERN const char *tfjob_job_completion_time(const tfjob_job *job);
/** 1 when the Succeeded or Failed condition is True, else 0. */
TFJOB_EXTERN int tfjob_job_is_finished(const tfjob_job *job);

/**
 * The job's status as JSON ("{}" when it has none). *out owned by the caller (tfjob_free()).
 * TFJOB_ENOMEM, TFJOB_EINVAL.
 */
TFJOB_EXTERN int tfjob_job_status_json(char **out, const tfjob_job *job, unsigned int flags, tfjob_error **err);

/**
 * Replace the job's status with the given JSON object text ("null" removes it). TFJOB_EPARSE
 * when the text is not JSON, TFJOB_ESCHEMA when it is not an object, TFJOB_ENOMEM, TFJOB_EINVAL.
 * The job is unchanged on error.
 */
TFJOB_EXTERN int tfjob_job_set_status_json(tfjob_job *job, const char *json, tfjob_error **err);

TFJOB_END_DECLS

#endif
