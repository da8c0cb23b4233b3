/*
 * libtfjob - validation, as the training-operator admission webhook and the TFJob CRD schema do it.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Validation returns every problem at once, as Kubernetes field errors: a field path in
 * Kubernetes' form (`spec.tfReplicaSpecs[Worker].template.spec.containers[0].image`), a type
 * (FieldValueRequired, ...) and a detail. Thread-safety: the field error list is immutable once
 * returned and may be read from several threads.
 */
#ifndef TFJOB_VALIDATE_H
#define TFJOB_VALIDATE_H

#include "common.h"
#include "error.h"
#include "job.h"

TFJOB_BEGIN_DECLS

/** Kubernetes' field error types (k8s.io/apimachinery/pkg/util/validation/field). */
typedef enum tfjob_field_error_type {
	TFJOB_FIELD_VALUE_NOT_FOUND = 0,
	TFJOB_FIELD_VALUE_REQUIRED = 1,
	TFJOB_FIELD_VALUE_DUPLICATE = 2,
	TFJOB_FIELD_VALUE_INVALID = 3,
	TFJOB_FIELD_VALUE_NOT_SUPPORTED = 4,
	TFJOB_FIELD_VALUE_FORBIDDEN = 5,
	TFJOB_FIELD_VALUE_TOO_LONG = 6,
	TFJOB_FIELD_VALUE_TOO_MANY = 7,
	TFJOB_FIELD_VALUE_INTERNAL = 8,
	TFJOB_FIELD_VALUE_TYPE_INVALID = 9
} tfjob_field_error_type;

/** Kubernetes' name of a type: "FieldValueRequired", ...; "FieldValueUnknown" outside the enum. */
TFJOB_EXTERN const char *tfjob_field_error_type_name(tfjob_field_error_type type);

/** Opaque, immutable list of field errors. */
typedef struct tfjob_field_errors tfjob_field_errors;

#define TFJOB_VALIDATE_OPTIONS_VERSION 2

typedef struct tfjob_validate_options {
	unsigned int version;   /* TFJOB_VALIDATE_OPTIONS_VERSION */
	tfjob_compat compat;    /* TFJOB_COMPAT_DOCUMENTED */
	const tfjob_job *old;   /* the stored object for an update, or NULL for a create */
	/*
	 * Version 2. Non-zero (the default): a field the CRD schema does not declare is an error, as
	 * the API server refuses it under kubectl's fieldValidation=Strict (FieldValueNotSupported,
	 * value: the key, detail: `unknown field "spec.x.y"` and a "did you mean" suggestion).
	 * 0: unknown fields are allowed, as the API server prunes them otherwise (version 1 callers
	 * get this).
	 */
	int strict;
} tfjob_validate_options;

#define TFJOB_VALIDATE_OPTIONS_INIT { TFJOB_VALIDATE_OPTIONS_VERSION, TFJOB_COMPAT_DOCUMENTED, NULL, 1 }

/**
 * Initialise options of the given version to their defaults (only the fields that version has
 * are written). TFJOB_EVERSION for unknown versions.
 */
TFJOB_EXTERN int tfjob_validate_options_init(tfjob_validate_options *opts, unsigned int version);

/**
 * Validate a job as the API server would admit it (the CRD schema first: types, required fields,
 * allowed values and, when opts->strict, unknown fields; then the webhook's rules; with
 * opts->old set, also the update rules: managedBy and schedulingPolicy.queue are immutable).
 * opts may be NULL (the defaults: documented, create, strict).
 *
 * Returns 0 when validation ran, whatever its verdict: *out receives a list (possibly empty)
 * owned by the caller, released with tfjob_field_errors_free(). Errors: TFJOB_ENOMEM,
 * TFJOB_EVERSION, TFJOB_EINVAL.
 */
TFJOB_EXTERN int tfjob_job_validate(tfjob_field_errors **out, const tfjob_job *job,
                                    const tfjob_validate_options *opts, tfjob_error **err);

/** Number of errors in the list (0 for NULL). */
TFJOB_EXTERN size_t tfjob_field_errors_count(const tfjob_field_errors *errors);
/** Field path of the i-th error; NULL when out of range. Borrowed from the list. */
TFJOB_EXTERN const char *tfjob_field_errors_field(const tfjob_field_errors *errors, size_t i);
/** Type of the i-th error; TFJOB_FIELD_VALUE_INTERNAL when out of range. */
TFJOB_EXTERN tfjob_field_error_type tfjob_field_errors_type(const tfjob_field_errors *errors, size_t i);
/** Detail of the i-th error (may be ""); NULL when out of range. Borrowed. */
TFJOB_EXTERN const char *tfjob_field_errors_detail(const tfjob_field_errors *errors, size_t i);
/** The offending value of the i-th error as JSON text ("null" when none); NULL when out of range. Borrowed. */
TFJOB_EXTERN const char *tfjob_field_errors_value(const tfjob_field_errors *errors, size_t i);
/**
 * The i-th error formatted as Kubernetes prints it
 * ("spec.tfReplicaSpecs[Worker].replicas: Invalid value: \"x\": ..."); NULL when out of range. Borrowed.
 */
TFJOB_EXTERN const char *tfjob_field_errors_message(const tfjob_field_errors *errors, size_t i);

/**
 * The list as the tfjobctl contract's JSON:
 * {"valid":bool,"errors":[{"field":...,"type":...,"detail":...}]}.
 * *out owned by the caller (tfjob_free()). TFJOB_ENOMEM, TFJOB_EINVAL.
 */
TFJOB_EXTERN int tfjob_field_errors_to_json(char **out, const tfjob_field_errors *errors, unsigned int flags,
                                            tfjob_error **err);

/** Release a list. Accepts NULL. */
TFJOB_EXTERN void tfjob_field_errors_free(tfjob_field_errors *errors);

/**
 * Where a field of an error is written in the YAML or JSON text a job was parsed from: *line and
 * *column (1-based) of the field's key, or of the sequence item for a path ending in an index.
 * field is a path as tfjob_field_errors_field() gives it ("spec.tfReplicaSpecs[Worker].replica");
 * doc counts the text's documents that are not empty, from 0 (tfjob_job_parse_all()'s order for
 * a stream of TFJob documents). One pass over the text, keeping nothing but the path.
 * Errors: TFJOB_ENOTFOUND when the path is not written in the text (a field the defaults added,
 * a required field that is missing, a path through an alias or a merge key, a document that
 * is a List), TFJOB_ENOMEM, TFJOB_EINVAL (NULL argument). Thread-safe.
 */
TFJOB_EXTERN int tfjob_field_locate(unsigned int *line, unsigned int *column, const char *data, size_t len,
                                    size_t doc, const char *field, tfjob_error **err);
/* ---- Warnings: valid, but what the Kubeflow TFJob documentation advises against ---- */

/** Opaque, immutable list of warnings. */
typedef struct tfjob_warnings tfjob_warnings;

#define TFJOB_WARNING_OPTIONS_VERSION 1

typedef struct tfjob_warning_options {
	unsigned int version; /* TFJOB_WARNING_OPTIONS_VERSION */
	/* The namespace the job goes to injects the Istio sidecar (label istio-injection=enabled):
	 * warn about pod templates that do not opt out of it. 0: unknown or not. */
	int istio_injection;
} tfjob_warning_options;

#define TFJOB_WARNING_OPTIONS_INIT { TFJOB_WARNING_OPTIONS_VERSION, 0 }

/** Initialise options of the given version to their defaults. TFJOB_EVERSION for unknown versions. */
TFJOB_EXTERN int tfjob_warning_options_init(tfjob_warning_options *opts, unsigned int version);

/**
 * The warnings about a job, as an API server returns them next to an admitted object: what the
 * Kubeflow TFJob documentation advises against, which validation accepts (docs/api.md lists the
 * rules). Each has a reason (a stable CamelCase name), a field path and a message:
 *   RestartPolicyNever   a replica type sets restartPolicy Never: a pod that fails, or whose node
 *                        fails, is not restarted and the job fails;
 *   TemplateRestartPolicyIgnored
 *                        a pod template sets spec.restartPolicy to another value than the pods get
 *                        from the replica's restartPolicy (unset: Never; ExitCode: Never), which
 *                        overrides it;
 *   MultipleChiefReplicas a Chief or Master type (any case) with replicas > 1: TensorFlow expects
 *                        one chief (validation refuses only a Chief next to a Master);
 *   IstioSidecar         (opts->istio_injection) a pod template without the annotation or label
 *                        sidecar.istio.io/inject: "false": TFJob pods do not work with the sidecar;
 *   GPUWithoutRequests   a container with a GPU limit (a resource whose name ends in "/gpu") and no cpu or no
 *                        memory request (nor a limit the request would default to).
 * Works on the job as given (defaulted or not); never changes it. opts may be NULL.
 * Returns 0 and a list (possibly empty) owned by the caller in *out (tfjob_warnings_free()).
 * Errors: TFJOB_ENOMEM, TFJOB_EVERSION, TFJOB_EINVAL. Thread-safe for distinct or const jobs.
 */
TFJOB_EXTERN int tfjob_job_warnings(tfjob_warnings **out, const tfjob_job *job, const tfjob_warning_options *opts,
                                    tfjob_error **err);
/** Number of warnings in the list (0 for NULL). */
TFJOB_EXTERN size_t tfjob_warnings_count(const tfjob_warnings *warnings);
/** Reason of the i-th warning ("RestartPolicyNever", ...); NULL when out of range. Borrowed. */
TFJOB_EXTERN const char *tfjob_warnings_reason(const tfjob_warnings *warnings, size_t i);
/** Field path of the i-th warning; NULL when out of range. Borrowed. */
TFJOB_EXTERN const char *tfjob_warnings_field(const tfjob_warnings *warnings, size_t i);
/** The i-th warning as "FIELD: text", as kubectl prints after "Warning: "; NULL when out of range. Borrowed. */
TFJOB_EXTERN const char *tfjob_warnings_message(const tfjob_warnings *warnings, size_t i);
/** Release a list. Accepts NULL. */
TFJOB_EXTERN void tfjob_warnings_free(tfjob_warnings *warnings);

TFJOB_END_DECLS

#endif
