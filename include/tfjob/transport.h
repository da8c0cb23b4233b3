/*
 * libtfjob - the transport: talking to a Kubernetes API (or a stand-in for one).
 * SPDX-License-Identifier: Apache-2.0
 *
 * A tfjob_transport is a handle on one backend: the Kubernetes REST backend (kube.h), the
 * in-memory fake API store (memory.h), or a backend of your own (sys/transport.h). The same
 * calls work on each. Objects cross as JSON text: what goes in is copied, what comes out through
 * `char **out` is owned by the caller and released with tfjob_free(). Every `char **out` may be
 * NULL when the caller does not want the result.
 *
 * Errors: 0 or a negative TFJOB_E* code. API errors map to specific codes and carry the HTTP
 * status (tfjob_error_http_status()) and the API server's own message:
 *   404 TFJOB_ENOTFOUND, 409 AlreadyExists TFJOB_EEXISTS, other 409 TFJOB_ECONFLICT,
 *   410 TFJOB_EGONE, 401 TFJOB_EUNAUTHORIZED, 403 TFJOB_EFORBIDDEN, 429 TFJOB_ETOOMANYREQUESTS,
 *   408/504 and client timeouts TFJOB_ETIMEOUT, other 5xx TFJOB_ESERVER,
 *   connection/DNS/TLS failures TFJOB_ENETWORK, 422 TFJOB_EINVALID (the causes come back through
 *   tfjob_error_details_json()), 400 TFJOB_EINVAL.
 *
 * Thread-safety: a tfjob_transport may be used from several threads at once (both built-in
 * backends are thread-safe; a custom backend must be too). Watch callbacks run on a thread the
 * library starts for the watch.
 */
#ifndef TFJOB_TRANSPORT_H
#define TFJOB_TRANSPORT_H

#include "common.h"
#include "error.h"

TFJOB_BEGIN_DECLS

/** Opaque transport handle. */
typedef struct tfjob_transport tfjob_transport;

/** Opaque handle of a running watch. */
typedef struct tfjob_watch tfjob_watch;

/**
 * A kind of object, named the way the API server's URLs name it. group "" is the core group
 * (/api/v1); otherwise /apis/GROUP/VERSION. resource is the lower-case plural ("tfjobs").
 * namespaced is 1 for namespaced resources, 0 for cluster-scoped ones.
 */
typedef struct tfjob_resource {
	const char *group;
	const char *version;
	const char *resource;
	int namespaced;
} tfjob_resource;

#define TFJOB_RESOURCE_TFJOBS_INIT { "kubeflow.org", "v1", "tfjobs", 1 }
#define TFJOB_RESOURCE_PODS_INIT { "", "v1", "pods", 1 }
#define TFJOB_RESOURCE_SERVICES_INIT { "", "v1", "services", 1 }
#define TFJOB_RESOURCE_EVENTS_INIT { "", "v1", "events", 1 }
#define TFJOB_RESOURCE_PODGROUPS_INIT { "scheduling.volcano.sh", "v1beta1", "podgroups", 1 }
#define TFJOB_RESOURCE_NAMESPACES_INIT { "", "v1", "namespaces", 0 }

/**
 * A built-in resource descriptor by plural or kind, case-insensitive: "tfjobs"/"tfjob"/"TFJob",
 * "pods"/"Pod", "services"/"Service"/"svc", "events"/"Event", "podgroups"/"PodGroup",
 * "namespaces"/"Namespace". Returns a static descriptor, or NULL when unknown. Thread-safe.
 */
TFJOB_EXTERN const tfjob_resource *tfjob_resource_lookup(const char *name);

/* ---- Options ---- */

#define TFJOB_LIST_OPTIONS_VERSION 1

/** Options of tfjob_transport_list(). Initialise with TFJOB_LIST_OPTIONS_INIT. */
typedef struct tfjob_list_options {
	unsigned int version;         /* TFJOB_LIST_OPTIONS_VERSION */
	const char *label_selector;   /* "app=x,tier!=db,env in (a,b),!legacy"; NULL: everything */
	const char *field_selector;   /* "metadata.name=x"; NULL: everything */
	int64_t limit;                /* page size; 0: no limit */
	const char *continue_token;   /* metadata.continue of the previous page, or NULL */
	const char *resource_version; /* NULL: most recent */
} tfjob_list_options;

#define TFJOB_LIST_OPTIONS_INIT { TFJOB_LIST_OPTIONS_VERSION, NULL, NULL, 0, NULL, NULL }

/** Initialise list options of the given version to their defaults. TFJOB_EVERSION for unknown versions. */
TFJOB_EXTERN int tfjob_list_options_init(tfjob_list_options *opts, unsigned int version);

/** Deletion propagation policies (deleteOptions.propagationPolicy). */
typedef enum tfjob_propagation {
	TFJOB_PROPAGATION_DEFAULT = 0, /* the resource's own default (Background for most) */
	TFJOB_PROPAGATION_BACKGROUND = 1,
	TFJOB_PROPAGATION_FOREGROUND = 2,
	TFJOB_PROPAGATION_ORPHAN = 3
} tfjob_propagation;

#define TFJOB_DELETE_OPTIONS_VERSION 1

/** Options of tfjob_transport_delete(). Initialise with TFJOB_DELETE_OPTIONS_INIT. */
typedef struct tfjob_delete_options {
	unsigned int version;             /* TFJOB_DELETE_OPTIONS_VERSION */
	tfjob_propagation propagation;    /* TFJOB_PROPAGATION_DEFAULT */
	const char *precondition_uid;     /* delete only when metadata.uid matches; NULL: any */
	const char *precondition_resource_version; /* delete only at this resourceVersion; NULL: any */
	int64_t grace_period_seconds;     /* -1: the resource's default */
} tfjob_delete_options;

#define TFJOB_DELETE_OPTIONS_INIT { TFJOB_DELETE_OPTIONS_VERSION, TFJOB_PROPAGATION_DEFAULT, NULL, NULL, -1 }

/** Initialise delete options of the given version to their defaults. TFJOB_EVERSION for unknown versions. */
TFJOB_EXTERN int tfjob_delete_options_init(tfjob_delete_options *opts, unsigned int version);

/* ---- Server-side apply ---- */

/** How the API server treats fields its schema does not declare (its fieldValidation parameter). */
typedef enum tfjob_field_validation {
	TFJOB_FIELD_VALIDATION_STRICT = 0, /* refuse the request (400, "strict decoding error: unknown field ...") */
	TFJOB_FIELD_VALIDATION_WARN = 1,   /* drop them, with a Warning header each */
	TFJOB_FIELD_VALIDATION_IGNORE = 2  /* drop them silently */
} tfjob_field_validation;

#define TFJOB_APPLY_OPTIONS_VERSION 1

/** Options of tfjob_transport_apply(). Initialise with TFJOB_APPLY_OPTIONS_INIT. */
typedef struct tfjob_apply_options {
	unsigned int version;                    /* TFJOB_APPLY_OPTIONS_VERSION */
	const char *field_manager;               /* the manager the applied fields belong to; required */
	int force;                               /* non-zero: take over fields other managers own */
	tfjob_field_validation field_validation; /* TFJOB_FIELD_VALIDATION_STRICT */
} tfjob_apply_options;

#define TFJOB_APPLY_OPTIONS_INIT { TFJOB_APPLY_OPTIONS_VERSION, NULL, 0, TFJOB_FIELD_VALIDATION_STRICT }

/** Initialise apply options of the given version to their defaults. TFJOB_EVERSION for unknown versions. */
TFJOB_EXTERN int tfjob_apply_options_init(tfjob_apply_options *opts, unsigned int version);

/**
 * Server-side apply: PATCH the object named by object_json's metadata.name with it as an apply
 * configuration (application/apply-patch+yaml, fieldManager, force, fieldValidation), creating it
 * when it does not exist. The server merges it with what it stores by field ownership, so
 * applying the same configuration again changes nothing (not even the resourceVersion), even
 * after the server or a controller added fields. ns NULL: the object's namespace, else the
 * transport's. *out: the stored object, caller frees. warnings may be NULL; else *warnings
 * receives the texts of the server's Warning headers, one per line (NULL when there were none),
 * caller frees with tfjob_free(). Errors as the other verbs: TFJOB_EINVALID (422), TFJOB_EINVAL
 * (400: an unknown field under TFJOB_FIELD_VALIDATION_STRICT, or a missing field manager or
 * name), TFJOB_ECONFLICT (fields owned by another manager, without force); the API server's
 * message is the error's message. TFJOB_ESTATE when the backend has no server-side apply (the
 * memory backend has none).
 */
TFJOB_EXTERN int tfjob_transport_apply(char **out, char **warnings, tfjob_transport *t, const tfjob_resource *res,
                                       const char *ns, const char *object_json, const tfjob_apply_options *opts,
                                       tfjob_error **err);

/* ---- Watches ---- */

/** The type of a watch event. */
typedef enum tfjob_watch_event {
	TFJOB_WATCH_ADDED = 1,
	TFJOB_WATCH_MODIFIED = 2,
	TFJOB_WATCH_DELETED = 3,
	TFJOB_WATCH_BOOKMARK = 4 /* object holds only kind, apiVersion and metadata.resourceVersion */
} tfjob_watch_event;

/** "ADDED", "MODIFIED", "DELETED", "BOOKMARK"; "UNKNOWN" otherwise. Static string. */
TFJOB_EXTERN const char *tfjob_watch_event_name(tfjob_watch_event type);

/**
 * Called once per event with the object as JSON text (borrowed for the duration of the call).
 * Return 0 to go on, non-zero to stop the watch (on_closed then gets code 0).
 */
typedef int (*tfjob_watch_event_cb)(tfjob_watch_event type, const char *object_json, void *payload);

/**
 * Called exactly once when the watch ends: code 0 when it was stopped (tfjob_watch_stop(), an
 * event callback returned non-zero, or the server-side timeout ended it and reconnect is off);
 * TFJOB_EGONE when the resourceVersion is too old and the caller must list again (relist);
 * another TFJOB_E* code on a failure that reconnecting could not cure. err (may be NULL) is
 * borrowed for the duration of the call.
 */
typedef void (*tfjob_watch_closed_cb)(int code, const tfjob_error *err, void *payload);

#define TFJOB_WATCH_OPTIONS_VERSION 1

/** Options of tfjob_transport_watch(). Initialise with TFJOB_WATCH_OPTIONS_INIT. */
typedef struct tfjob_watch_options {
	unsigned int version;          /* TFJOB_WATCH_OPTIONS_VERSION */
	const char *label_selector;    /* NULL: everything */
	const char *field_selector;    /* NULL: everything */
	const char *resource_version;  /* start after this version; NULL or "0": synthetic ADDED
	                                  events for what exists now, then changes */
	int allow_bookmarks;           /* 1: ask for BOOKMARK events (allowWatchBookmarks) */
	int64_t timeout_seconds;       /* server-side timeoutSeconds of each request; 0: backend default */
	int reconnect;                 /* 1 (default): reconnect from the last seen resourceVersion
	                                  with backoff when the stream ends or breaks */
	tfjob_watch_event_cb on_event; /* required */
	tfjob_watch_closed_cb on_closed; /* optional */
	void *payload;                 /* passed to both callbacks */
} tfjob_watch_options;

#define TFJOB_WATCH_OPTIONS_INIT { TFJOB_WATCH_OPTIONS_VERSION, NULL, NULL, NULL, 0, 0, 1, NULL, NULL, NULL }

/** Initialise watch options of the given version to their defaults. TFJOB_EVERSION for unknown versions. */
TFJOB_EXTERN int tfjob_watch_options_init(tfjob_watch_options *opts, unsigned int version);

/* ---- Calls ---- */

/**
 * The namespace the transport uses when a call passes ns = NULL: the kubeconfig context's
 * namespace, the in-cluster service account's namespace, or "default". Borrowed from the
 * transport. Thread-safe.
 */
TFJOB_EXTERN const char *tfjob_transport_namespace(const tfjob_transport *t);

/**
 * GET one object. *out: the object as JSON (caller frees with tfjob_free()). ns NULL: the
 * transport's namespace (ignored for cluster-scoped resources). TFJOB_ENOTFOUND when absent.
 */
TFJOB_EXTERN int tfjob_transport_get(char **out, tfjob_transport *t, const tfjob_resource *res,
                                     const char *ns, const char *name, tfjob_error **err);

/**
 * LIST objects. ns "" lists across all namespaces; NULL uses the transport's namespace.
 * *out: the List as JSON ({"kind":"...List","metadata":{"resourceVersion","continue"},"items":[...]}),
 * caller frees. opts may be NULL. TFJOB_EGONE when a continue token has expired.
 */
TFJOB_EXTERN int tfjob_transport_list(char **out, tfjob_transport *t, const tfjob_resource *res,
                                      const char *ns, const tfjob_list_options *opts, tfjob_error **err);

/**
 * CREATE (POST) an object given as JSON. metadata.name or metadata.generateName is required.
 * ns NULL: the object's metadata.namespace, else the transport's namespace (so for update
 * and update_status).
 * *out: the stored object (uid, resourceVersion, creationTimestamp set), caller frees.
 * TFJOB_EEXISTS when the name is taken; TFJOB_EINVALID (422) for an invalid object.
 * A create is never retried blindly: after an ambiguous failure the backend reads the object
 * back before trying again.
 */
TFJOB_EXTERN int tfjob_transport_create(char **out, tfjob_transport *t, const tfjob_resource *res,
                                        const char *ns, const char *object_json, tfjob_error **err);

/**
 * UPDATE (PUT) an object; the name comes from metadata.name. With metadata.resourceVersion set the
 * update only succeeds at that version (else TFJOB_ECONFLICT). Changes to status are ignored
 * for resources with a status subresource. *out: the stored object, caller frees.
 */
TFJOB_EXTERN int tfjob_transport_update(char **out, tfjob_transport *t, const tfjob_resource *res,
                                        const char *ns, const char *object_json, tfjob_error **err);

/**
 * UPDATE the status subresource (PUT .../status): only status changes are kept. Conflicts as
 * tfjob_transport_update(). *out: the stored object, caller frees.
 */
TFJOB_EXTERN int tfjob_transport_update_status(char **out, tfjob_transport *t, const tfjob_resource *res,
                                               const char *ns, const char *object_json, tfjob_error **err);

/**
 * PATCH an object with a JSON merge patch (RFC 7386, application/merge-patch+json).
 * subresource NULL patches the object, "status" the status subresource. A resourceVersion in the
 * patch's metadata acts as a precondition. *out: the stored object, caller frees.
 */
TFJOB_EXTERN int tfjob_transport_patch(char **out, tfjob_transport *t, const tfjob_resource *res,
                                       const char *ns, const char *name, const char *subresource,
                                       const char *merge_patch_json, tfjob_error **err);

/**
 * DELETE an object. opts may be NULL. Failed preconditions give TFJOB_ECONFLICT.
 * *out (may be NULL): what the server returned (the object, with deletionTimestamp when
 * finalizers keep it, or a Status), caller frees.
 */
TFJOB_EXTERN int tfjob_transport_delete(char **out, tfjob_transport *t, const tfjob_resource *res,
                                        const char *ns, const char *name,
                                        const tfjob_delete_options *opts, tfjob_error **err);

/**
 * Record a core/v1 Event about an object, as client-go's event recorder does: involved_json
 * is the object the event is about (its kind, apiVersion, name, namespace, uid and
 * resourceVersion are used); type is "Normal" or "Warning"; reason and message are free text.
 * source_component (may be NULL) fills source.component (default "tfjob-controller").
 * The Event is named NAME.HEX, HEX the wall clock's nanoseconds in hexadecimal (the last name's
 * plus one when the clock has not moved on), so the names of one process's Events never repeat
 * and sort in the order the Events were made, as the API server lists them.
 * *out (may be NULL) receives the created Event, caller frees.
 */
TFJOB_EXTERN int tfjob_transport_create_event(char **out, tfjob_transport *t, const char *ns,
                                              const char *involved_json, const char *type,
                                              const char *reason, const char *message,
                                              const char *source_component, tfjob_error **err);

/**
 * Start a WATCH. Events are delivered to opts->on_event on a thread the library starts; the
 * watch lives until it is stopped, a callback asks to stop, or it fails for good (then
 * on_closed tells why; TFJOB_EGONE means "list again"). *out is the caller's and must be
 * released with tfjob_watch_free() (after the transport is still alive). Errors at start
 * (bad options, out of memory) are returned directly and no callback runs.
 */
TFJOB_EXTERN int tfjob_transport_watch(tfjob_watch **out, tfjob_transport *t, const tfjob_resource *res,
                                       const char *ns, const tfjob_watch_options *opts, tfjob_error **err);

/**
 * Ask a watch to stop. Returns at once; callbacks may still run briefly (on_closed always runs
 * once). Thread-safe: may be called from any thread, including from inside a callback.
 * Accepts NULL.
 */
TFJOB_EXTERN void tfjob_watch_stop(tfjob_watch *w);

/**
 * Wait until the watch has ended (on_closed has returned), at most timeout_ms milliseconds
 * (negative: forever). Returns 0 when it ended, TFJOB_ETIMEOUT otherwise. Must not be called
 * from the watch's own callbacks. Thread-safe.
 */
TFJOB_EXTERN int tfjob_watch_wait(tfjob_watch *w, int64_t timeout_ms);

/**
 * Stop the watch, wait for it to end and release it. Must not be called from its callbacks.
 * Accepts NULL.
 */
TFJOB_EXTERN void tfjob_watch_free(tfjob_watch *w);

/** Release a transport and its backend. Watches must have been freed before. Accepts NULL. */
TFJOB_EXTERN void tfjob_transport_free(tfjob_transport *t);

TFJOB_END_DECLS

#endif
