/*
 * The in-memory API store shared by memory.c (verbs) and memory_watch.c. Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_TRANSPORT_MEMORY_STORE_H
#define TFJOB_TRANSPORT_MEMORY_STORE_H

#include <pthread.h>

#include "transport/internal.h"

struct mem_event {
	uint64_t rv;
	tfjob_watch_event type;
	char *key;   /* group/resource/ns/name */
	json_t *obj; /* the object after the change (immutable, shared) */
	json_t *prev; /* the object before the change, or NULL */
};

struct mem_store {
	pthread_mutex_t mu;
	pthread_cond_t cond;
	uint64_t rv;             /* the global resourceVersion counter */
	json_t *objects;         /* key -> object; stored objects are never modified in place */
	struct mem_event *hist;  /* ring of the newest events */
	size_t hist_cap, hist_start, hist_len;
	uint64_t compacted_rv;   /* events up to this version are forgotten */
	uint64_t bookmark_gen;   /* bumped by tfjob_memory_bookmark() */
	int64_t bookmark_ms;
	tfjob_clock_cb clock;
	void *clock_payload;
	uint64_t rng;
	char *default_ns;
};

/* The key prefix of a resource in a namespace (ns NULL or "": every namespace). Caller frees. */
char *tfjob__mem_prefix(const tfjob_resource *res, const char *ns);

int tfjob__mem_watch(void *data, tfjob_watch_sink *sink, const tfjob_resource *res, const char *ns,
                     const tfjob_watch_options *opts, tfjob_error **err);

/* "apiVersion" of a resource: "v1" or "group/version". Caller frees. */
char *tfjob__mem_api_version(const tfjob_resource *res);

#endif
