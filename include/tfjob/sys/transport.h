/*
 * libtfjob - writing a transport backend of your own.
 * SPDX-License-Identifier: Apache-2.0
 *
 * A backend is a versioned table of functions plus a user data pointer. The library calls the
 * slots from any thread (a backend must be thread-safe) and never calls two slots for the same
 * request. Every slot receives the backend's `data` first. Out-parameters are set only on
 * success; strings returned through `char **out` must be allocated with malloc() (the library
 * releases them with free() or hands them to its caller, who uses tfjob_free()).
 * Errors: return 0 or a negative TFJOB_E* code and fill *err (which may be NULL) with
 * tfjob_transport_error_new().
 *
 * Versioning: `version` comes first; slots are only ever appended. Optional slots may be NULL
 * (the call then fails with TFJOB_ESTATE, or the library supplies a default where noted);
 * `free` is required.
 */
#ifndef TFJOB_SYS_TRANSPORT_H
#define TFJOB_SYS_TRANSPORT_H

#include "../transport.h"

TFJOB_BEGIN_DECLS

#define TFJOB_TRANSPORT_BACKEND_VERSION 2

/** Opaque sink a backend's watch slot delivers events to. */
typedef struct tfjob_watch_sink tfjob_watch_sink;

typedef struct tfjob_transport_backend {
	unsigned int version; /* TFJOB_TRANSPORT_BACKEND_VERSION */
	void *data;           /* user data, passed to every slot */

	/* Required: release data. Called once by tfjob_transport_free(). */
	void (*free)(void *data);

	/* Optional: the default namespace (borrowed, lives as long as data). NULL slot: "default". */
	const char *(*default_namespace)(void *data);

	/* The verbs. ns is never NULL for namespaced resources ("" = all namespaces, list/watch only). */
	int (*get)(void *data, char **out, const tfjob_resource *res, const char *ns, const char *name,
	           tfjob_error **err);
	int (*list)(void *data, char **out, const tfjob_resource *res, const char *ns,
	            const tfjob_list_options *opts, tfjob_error **err);
	int (*create)(void *data, char **out, const tfjob_resource *res, const char *ns,
	              const char *object_json, tfjob_error **err);
	/* name is the object's metadata.name, extracted by the library. */
	int (*update)(void *data, char **out, const tfjob_resource *res, const char *ns, const char *name,
	              const char *object_json, tfjob_error **err);
	int (*update_status)(void *data, char **out, const tfjob_resource *res, const char *ns,
	                     const char *name, const char *object_json, tfjob_error **err);
	int (*patch)(void *data, char **out, const tfjob_resource *res, const char *ns, const char *name,
	             const char *subresource, const char *merge_patch_json, tfjob_error **err);
	int (*del)(void *data, char **out, const tfjob_resource *res, const char *ns, const char *name,
	           const tfjob_delete_options *opts, tfjob_error **err);

	/*
	 * Run one watch to its end, on a thread the library provides: deliver events with
	 * tfjob_watch_sink_emit(), return when tfjob_watch_sink_stopped() says so (poll it at least
	 * every 100 ms while waiting), when emit returns non-zero (return 0 then), or on a failure
	 * (TFJOB_EGONE: relist). Reconnecting, when opts->reconnect is set, is the backend's job.
	 * The options and their strings stay valid until the slot returns.
	 */
	int (*watch)(void *data, tfjob_watch_sink *sink, const tfjob_resource *res, const char *ns,
	             const tfjob_watch_options *opts, tfjob_error **err);

	/*
	 * Optional: create an Event (event_json is a complete core/v1 Event built by the library).
	 * NULL slot: the library calls create with the events resource.
	 */
	int (*create_event)(void *data, char **out, const char *ns, const char *event_json, tfjob_error **err);

	/*
	 * Version 2. Optional: server-side apply (tfjob_transport_apply()); name is the object's
	 * metadata.name, opts has a field manager. *warnings (malloc'd, one text a line) may be left
	 * NULL. NULL slot: tfjob_transport_apply() fails with TFJOB_ESTATE.
	 */
	int (*apply)(void *data, char **out, char **warnings, const tfjob_resource *res, const char *ns,
	             const char *name, const char *object_json, const tfjob_apply_options *opts, tfjob_error **err);
} tfjob_transport_backend;

/** A backend with every slot NULL and the current version: set data, free and the verbs you serve. */
#define TFJOB_TRANSPORT_BACKEND_INIT { .version = TFJOB_TRANSPORT_BACKEND_VERSION }


/**
 * Make a transport from a backend table (copied; the table need not outlive the call).
 * On success the transport owns backend->data and calls backend->free(data) when freed; on
 * failure data is not freed. TFJOB_EVERSION for an unknown table version, TFJOB_EINVAL when
 * free is NULL.
 */
TFJOB_EXTERN int tfjob_transport_new(tfjob_transport **out, const tfjob_transport_backend *backend,
                                     tfjob_error **err);

/** The data pointer of a transport's backend (borrowed). NULL for NULL. Thread-safe. */
TFJOB_EXTERN void *tfjob_transport_backend_data(const tfjob_transport *t);

/**
 * Deliver one event to the watch's callback. Returns non-zero when the watch should end
 * (the callback asked to stop, or tfjob_watch_stop() was called). Call only from the watch slot.
 */
TFJOB_EXTERN int tfjob_watch_sink_emit(tfjob_watch_sink *sink, tfjob_watch_event type, const char *object_json);

/** Non-zero once the watch was asked to stop. Thread-safe. */
TFJOB_EXTERN int tfjob_watch_sink_stopped(const tfjob_watch_sink *sink);

/**
 * A new error for a backend to return through its err argument: code, HTTP status (0 when
 * none), message (copied), details_json (copied, may be NULL). NULL when out of memory.
 * The caller of the slot owns it (tfjob_error_free()).
 */
TFJOB_EXTERN tfjob_error *tfjob_transport_error_new(int code, int http_status, const char *message,
                                                    const char *details_json);

TFJOB_END_DECLS

#endif
