/*
 * libtfjob - the in-memory backend: a faithful fake Kubernetes API store.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Behaves like a kube-apiserver over etcd for any resource: one global resourceVersion counter,
 * uid / creationTimestamp / generation, 409 Conflict on stale updates and AlreadyExists on
 * duplicate creates, generateName, label and field selectors (metadata.name,
 * metadata.namespace), pagination, a status subresource for every resource except "events"
 * (update ignores status, update_status ignores everything else), JSON merge patch,
 * deletion with finalizers (deletionTimestamp) and garbage collection of dependents through
 * ownerReferences (Background and Foreground delete them, Orphan removes the reference), deletion
 * of a Namespace's contents with it, 422 for updates of custom resources without a
 * resourceVersion, the API server's own error messages (checked against kube-apiserver), and
 * watches with bookmarks over a bounded event history (410 Gone, "too old resource version",
 * when a watch starts before it). Thread-safe. Used by unit tests, the simulator and anyone
 * testing a controller.
 *
 * Differences from a real API server: no schema validation, defaulting or admission; namespaces
 * need not exist; a continue token lists the current state after the previous page rather than
 * a snapshot; deletion of pods is immediate (no kubelet); garbage collection and Foreground
 * deletion happen synchronously.
 */
#ifndef TFJOB_MEMSTORE_H
#define TFJOB_MEMSTORE_H

#include "common.h"
#include "error.h"
#include "transport.h"

TFJOB_BEGIN_DECLS

/** A clock: the current time in seconds since the Unix epoch. */
typedef int64_t (*tfjob_clock_cb)(void *payload);

#define TFJOB_MEMORY_OPTIONS_VERSION 1

/** Options of the memory backend. Initialise with TFJOB_MEMORY_OPTIONS_INIT. */
typedef struct tfjob_memory_options {
	unsigned int version;         /* TFJOB_MEMORY_OPTIONS_VERSION */
	size_t history_limit;         /* watch events kept for resuming; 0: 1000 */
	int64_t bookmark_interval_ms; /* idle time after which a bookmark is sent; 0: 1000, <0: never */
	tfjob_clock_cb clock;         /* NULL: the system clock */
	void *clock_payload;
	uint64_t seed;                /* uid / generateName randomness; 0: seeded from the clock */
	const char *default_namespace; /* NULL: "default" */
} tfjob_memory_options;

#define TFJOB_MEMORY_OPTIONS_INIT { TFJOB_MEMORY_OPTIONS_VERSION, 0, 0, NULL, NULL, 0, NULL }

/** Initialise memory options of the given version to their defaults. TFJOB_EVERSION for unknown versions. */
TFJOB_EXTERN int tfjob_memory_options_init(tfjob_memory_options *opts, unsigned int version);

/**
 * A new, empty in-memory store as a transport. opts may be NULL. *out is the caller's
 * (tfjob_transport_free()). TFJOB_ENOMEM, TFJOB_EVERSION, TFJOB_EINVAL.
 */
TFJOB_EXTERN int tfjob_memory_transport_new(tfjob_transport **out, const tfjob_memory_options *opts,
                                            tfjob_error **err);

/** 1 when t is a memory transport, else 0. */
TFJOB_EXTERN int tfjob_memory_transport_is(const tfjob_transport *t);

/** The store's current resourceVersion: 1 before the first write (as a fresh etcd's revision, so that
    a list of an empty store names a version a watch resumes from exactly); each write adds 1. 0 for
    other transports. Thread-safe. */
TFJOB_EXTERN uint64_t tfjob_memory_resource_version(const tfjob_transport *t);

/**
 * Send a BOOKMARK now to every watch that asked for bookmarks (tests and simulations use this
 * instead of waiting). TFJOB_EINVAL for other transports. Thread-safe.
 */
TFJOB_EXTERN int tfjob_memory_bookmark(tfjob_transport *t);

/**
 * Forget the event history (as etcd compaction does): watches that resume from a version
 * before now get TFJOB_EGONE. TFJOB_EINVAL for other transports. Thread-safe.
 */
TFJOB_EXTERN int tfjob_memory_compact(tfjob_transport *t);

TFJOB_END_DECLS

#endif
