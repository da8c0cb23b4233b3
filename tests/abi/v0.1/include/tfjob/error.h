/*
 * libtfjob - error codes and error details.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Every function that can fail returns 0 or one of the negative codes below. Codes are never
 * renumbered; new ones are only appended. Details come back through an optional last argument
 * `tfjob_error **err`: when it is non-NULL and the call fails, *err receives a new error object
 * that the caller releases with tfjob_error_free(). No state is kept per thread.
 */
#ifndef TFJOB_ERROR_H
#define TFJOB_ERROR_H

#include "common.h"

TFJOB_BEGIN_DECLS

typedef enum tfjob_error_code {
	TFJOB_OK = 0,
	TFJOB_ERROR = -1,          /* unexpected internal failure */
	TFJOB_ENOMEM = -2,         /* out of memory */
	TFJOB_EINVAL = -3,         /* bad argument (NULL handle, unknown enum value, bad index) */
	TFJOB_EVERSION = -4,       /* options struct or vtable of a version this library does not know */
	TFJOB_EPARSE = -5,         /* YAML or JSON syntax error; file/line/column are set */
	TFJOB_ELIMIT = -6,         /* an input limit was exceeded (size, depth, aliases, replicas) */
	TFJOB_ESCHEMA = -7,        /* well-formed input of the wrong shape (kind, apiVersion, JSON types) */
	TFJOB_EINVALID = -8,       /* the object failed validation; field errors explain why */
	TFJOB_ENOTFOUND = -9,      /* the thing asked for does not exist (404 from an API server) */
	TFJOB_EEXISTS = -10,       /* already exists (409 AlreadyExists) */
	TFJOB_ECONFLICT = -11,     /* stale resourceVersion or failed precondition (409 Conflict) */
	TFJOB_EGONE = -12,         /* resourceVersion too old (410 Expired/Gone) */
	TFJOB_EUNAUTHORIZED = -13, /* 401 */
	TFJOB_EFORBIDDEN = -14,    /* 403 */
	TFJOB_ETOOMANYREQUESTS = -15, /* 429 */
	TFJOB_ETIMEOUT = -16,      /* request or server-side timeout (504, curl timeout) */
	TFJOB_ESERVER = -17,       /* 5xx */
	TFJOB_ENETWORK = -18,      /* connection, DNS or TLS failure */
	TFJOB_EIO = -19,           /* local I/O failure (files, processes) */
	TFJOB_ESTATE = -20         /* the call is not valid in the object's current state */
} tfjob_error_code;

/** Opaque error details. */
typedef struct tfjob_error tfjob_error;

/** A short static description of a code ("syntax error", ...); "unknown error" for others. Thread-safe. */
TFJOB_EXTERN const char *tfjob_strerror(int code);

/** The stable symbolic name of a code ("TFJOB_EPARSE"); "TFJOB_UNKNOWN" for others. Thread-safe. */
TFJOB_EXTERN const char *tfjob_error_code_name(int code);

/** The code of an error (a negative TFJOB_E* value). */
TFJOB_EXTERN int tfjob_error_code_of(const tfjob_error *err);

/**
 * The human-readable message. Never NULL (an empty string for a NULL error). Borrowed from the
 * error: valid until tfjob_error_free(). The message already names the file, line, column and
 * field where those apply.
 */
TFJOB_EXTERN const char *tfjob_error_message(const tfjob_error *err);

/** The Kubernetes field path the error is about ("spec.tfReplicaSpecs[Worker].replicas"), or NULL. Borrowed. */
TFJOB_EXTERN const char *tfjob_error_field(const tfjob_error *err);

/** The file name given through the parse options, or NULL. Borrowed. */
TFJOB_EXTERN const char *tfjob_error_file(const tfjob_error *err);

/** 1-based line of a syntax error (or of a limit error in YAML/JSON text), 0 when not applicable. */
TFJOB_EXTERN int tfjob_error_line(const tfjob_error *err);

/** 1-based column (in characters) of a syntax or limit error, 0 when not applicable. */
TFJOB_EXTERN int tfjob_error_column(const tfjob_error *err);

/** The HTTP status of a transport error, 0 when not applicable. */
TFJOB_EXTERN int tfjob_error_http_status(const tfjob_error *err);

/**
 * Structured details of an API error as JSON text: the API server's status.details
 * ({"name":...,"kind":...,"causes":[{"reason":...,"message":...,"field":...}]}), e.g. the causes
 * of a 422 Invalid answer; NULL when the error has none. Borrowed from the error.
 */
TFJOB_EXTERN const char *tfjob_error_details_json(const tfjob_error *err);

/**
 * The machine-readable reason the API server gave for a transport error: its Status.reason
 * ("NotFound", "AlreadyExists", "Conflict", "Invalid", "Expired", "Gone", "Forbidden", ...), as
 * sent; NULL when the answer had none (not a Status, a network error, a backend that does not
 * report one). Borrowed from the error. Callers that need a reason anyway derive it from the
 * HTTP status as client-go does (the bindings do).
 */
TFJOB_EXTERN const char *tfjob_error_reason(const tfjob_error *err);

/** Release an error. Accepts NULL. */
TFJOB_EXTERN void tfjob_error_free(tfjob_error *err);

TFJOB_END_DECLS

#endif
