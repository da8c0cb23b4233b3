/*
 * The building blocks of the controller, private to lib/controller/: string map, work queue,
 * expectations, caches, metrics, event recorder (internal.h joins them into a controller).
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_CONTROLLER_PARTS_H
#define TFJOB_CONTROLLER_PARTS_H

#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>

#include "util/common.h"
#include "core/objects.h"

/*
 * The size of a buffer for a cache or queue key: "uid:" + a UID, "orphan:" + namespace "/" name,
 * or namespace "/" name. Kubernetes allows namespaces of 63 characters and names of 253 (DNS
 * label and subdomain), so a real key takes at most 7 + 63 + 1 + 253 + 1 bytes. Key builders
 * check the length: a longer key (only a server breaking those limits sends one) is refused,
 * never cut to a key that could name another object.
 */
#define TFJOB__KEY_MAX 512

/* A clock in milliseconds, for tests to set time (NULL: tfjob__monotonic_ms()). */
typedef int64_t (*tfjob__clock_ms_fn)(void *payload);

/* ---- map.c: string -> pointer hash map (not thread-safe) ---- */
typedef struct tfjob__map_node {
	struct tfjob__map_node *next;
	char *key;
	void *val;
	size_t hash;
} tfjob__map_node;

typedef struct tfjob__map {
	tfjob__map_node **buckets;
	size_t cap, len;
} tfjob__map;

void *tfjob__map_get(const tfjob__map *m, const char *key);
/* Insert or replace; *old (may be NULL) receives the replaced value. -1 when out of memory. */
int tfjob__map_put(tfjob__map *m, const char *key, void *val, void **old);
/* Remove; returns the value or NULL. */
void *tfjob__map_del(tfjob__map *m, const char *key);
/* Iterate: *it starts at NULL; returns the next node or NULL. Do not modify the map meanwhile. */
tfjob__map_node *tfjob__map_next(const tfjob__map *m, size_t *bucket, tfjob__map_node *it);
/* Free every node, calling free_val on values (may be NULL). */
void tfjob__map_clear(tfjob__map *m, void (*free_val)(void *));

/* ---- queue.c: rate-limited delaying work queue (client-go's shape) ---- */
typedef struct tfjob__queue tfjob__queue;

typedef struct tfjob__queue_opts {
	int64_t base_ms, max_ms; /* per-item exponential backoff */
	double qps;              /* token bucket */
	int burst;
	tfjob__clock_ms_fn clock; /* NULL: monotonic */
	void *clock_payload;
} tfjob__queue_opts;

int tfjob__queue_new(tfjob__queue **out, const tfjob__queue_opts *opts);
void tfjob__queue_free(tfjob__queue *q);
int tfjob__queue_add(tfjob__queue *q, const char *key);
int tfjob__queue_add_after(tfjob__queue *q, const char *key, int64_t delay_ms);
/* Requeue with delay max(item backoff, bucket); counts a requeue. Returns the delay or <0. */
int64_t tfjob__queue_add_rate_limited(tfjob__queue *q, const char *key);
void tfjob__queue_forget(tfjob__queue *q, const char *key);
int64_t tfjob__queue_num_requeues(tfjob__queue *q, const char *key);
/* Next ready key (*out malloc'd): 0; TFJOB_ETIMEOUT after timeout_ms (0: poll, <0: forever);
   TFJOB_ESTATE once shut down. */
int tfjob__queue_get(tfjob__queue *q, char **out, int64_t timeout_ms);
void tfjob__queue_done(tfjob__queue *q, const char *key);
void tfjob__queue_shutdown(tfjob__queue *q);
size_t tfjob__queue_len(tfjob__queue *q);        /* ready */
size_t tfjob__queue_waiting(tfjob__queue *q);    /* delayed */
size_t tfjob__queue_processing(tfjob__queue *q); /* handed out, not done */
/* Move due delayed items to the ready queue (get does this too). */
void tfjob__queue_tick(tfjob__queue *q);
/* Wait until ready and processing are both empty, at most timeout_ms (<0 forever): 0 or TFJOB_ETIMEOUT. */
int tfjob__queue_wait_empty(tfjob__queue *q, int64_t timeout_ms);

/* ---- expectations.c ---- */
typedef struct tfjob__expectations tfjob__expectations;
int tfjob__exp_new(tfjob__expectations **out, int64_t timeout_ms, tfjob__clock_ms_fn clock, void *payload);
void tfjob__exp_free(tfjob__expectations *e);
/* sub: "worker/pods", "ps/services", ... adds > 0 creations or deletions expected. */
int tfjob__exp_expect(tfjob__expectations *e, const char *job_key, const char *sub, int64_t adds, int64_t dels);
void tfjob__exp_observed(tfjob__expectations *e, const char *job_key, const char *sub, int64_t adds, int64_t dels);
/* 1 when every expectation of the job is met or expired (or none exist). */
int tfjob__exp_satisfied(tfjob__expectations *e, const char *job_key);
void tfjob__exp_delete(tfjob__expectations *e, const char *job_key);

/* ---- cache.c: TFJobs and PodGroups by key; Pods and Services, compact, by key and by owner ---- */

/* Whole objects ("ns/name" -> compact JSON text, immutable once stored): TFJobs and PodGroups.
   Text, not trees: a jansson tree of a TFJob takes about ten times its text, and a reconcile
   parses the one job it works on. */
typedef struct tfjob__store {
	tfjob__map objs;
	size_t bytes; /* estimated heap held (objects and map entries) */
} tfjob__store;

void tfjob__store_init(tfjob__store *s);
void tfjob__store_clear(tfjob__store *s);
/* Insert or replace (takes the reference; kept as text) unless the stored resourceVersion is
   newer (then 1); TFJOB_EINVAL without metadata.name, TFJOB_ENOMEM. */
int tfjob__store_put(tfjob__store *s, json_t *obj);
/* The object stored under key, parsed (a new reference), or NULL. */
json_t *tfjob__store_get(const tfjob__store *s, const char *key);
/* The same as compact JSON text (malloc'd), or NULL. */
char *tfjob__store_text(const tfjob__store *s, const char *key);
/* Remove by the object's key; 1 when something was removed. With removed non-NULL, *removed gets
   the removed object, parsed (a new reference; NULL when none or out of memory). */
int tfjob__store_del(tfjob__store *s, json_t *obj, json_t **removed);
char *tfjob__object_key(json_t *obj); /* "ns/name", malloc'd; NULL when no name */
/*
 * An object given as JSON text (a watch event's) in its stored form, made without a parse: the
 * text without metadata.managedFields, its resourceVersion, and in *key its "ns/name" (free()).
 * NULL when the text is not valid JSON, has no plainly written metadata.name, namespace or
 * resourceVersion (escapes), or memory is short: the caller then parses it (tfjob__store_put).
 */
typedef struct tfjob__stored tfjob__stored;
tfjob__stored *tfjob__stored_from_text(const char *text, char **key);
/* Its resourceVersion (NULL when it has none); valid while it lives. */
const char *tfjob__stored_rv(const tfjob__stored *so);
/* Store it under key (both taken) unless the stored resourceVersion is newer (then 1);
   TFJOB_ENOMEM. tfjob__store_put ends here too. */
int tfjob__store_put_stored(tfjob__store *s, char *key, tfjob__stored *so);

/*
 * A cached Pod or Service: only what the controller and the planner decide with, in one
 * allocation whose size does not depend on the job's (a pod's spec, which holds the whole
 * TF_CONFIG, is not kept). Immutable once made; shared by reference count, so a reconcile's
 * snapshot stays valid while the watch replaces the entry.
 */
typedef struct tfjob__child {
	_Atomic int refs;
	size_t bytes;            /* allocated for it (the struct, its strings, the pruned status) */
	tfjob__summary sum;      /* the planner's view (core/objects.h: operator name, owner references
	                            as JSON for adoption and release); strings point into text.
	                            sum.obj: {"status": the fields RecordAbnormalPods reads} for an
	                            active pod that may report abnormal containers, else NULL */
	const char *key;         /* "ns/name" */
	const char *ns, *uid, *rv;
	const char *ctrl_kind, *ctrl_name, *ctrl_uid; /* of the controller reference (may be NULL) */
	int controlled;          /* an owner reference with controller: true exists */
	char text[];
} tfjob__child;

/* Parse an object's JSON without its metadata.managedFields (not built: nothing reads them, they
   are most of a cached TFJob's size, and the server keeps them when a write leaves them out);
   NULL when not JSON. */
json_t *tfjob__object_loads(const char *text);
/* Parse a Pod's or Service's JSON without building its spec (replaced by null: a pod's spec holds
   the whole TF_CONFIG, and nothing of it is kept) nor its managedFields; NULL when not JSON. */
json_t *tfjob__child_loads(const char *text);
/*
 * Read a List (JSON text) item by item, never holding the whole list as a tree: on_item gets
 * each element of "items" (borrowed; parsed with tfjob__child_loads when lean, else tfjob__object_loads) and stops the
 * walk by returning non-zero; *meta gets the List's metadata (a new reference, may be NULL).
 * 0, or TFJOB_EPARSE when the text is not such a List (or on_item stopped it).
 */
int tfjob__list_parse(const char *text, int lean, json_t **meta, int (*on_item)(json_t *item, void *payload),
                      void *payload);
/* Summarise an object (borrowed) into a new child: TFJOB_EINVAL without metadata.name, TFJOB_ENOMEM. */
int tfjob__child_new(tfjob__child **out, json_t *obj);
tfjob__child *tfjob__child_ref(tfjob__child *ch);
void tfjob__child_unref(tfjob__child *ch); /* accepts NULL */
/* Owner key of a child: "uid:UID" (controller TFJob ref) or "orphan:NS/JOBNAME" (label); NULL if
   neither. Writes into buf. */
const char *tfjob__child_owner_key(char *buf, size_t size, const tfjob__child *ch);

/* Children by key ("ns/name" -> tfjob__child*) and by owner key (-> tfjob__map of the same). */
typedef struct tfjob__child_store {
	tfjob__map objs;
	tfjob__map owner;
	size_t bytes; /* estimated heap held (children and map entries) */
} tfjob__child_store;

void tfjob__child_store_init(tfjob__child_store *s);
void tfjob__child_store_clear(tfjob__child_store *s);
/* Insert or replace (takes the reference) unless the stored resourceVersion is newer (then 1). */
int tfjob__child_store_put(tfjob__child_store *s, tfjob__child *ch);
/* Remove by key; returns the removed child (caller unrefs) or NULL. */
tfjob__child *tfjob__child_store_del(tfjob__child_store *s, const char *key);
/* The children under an owner key, each referenced, in a new array (*out, free with
   tfjob__children_free); returns their number. *out is NULL when out of memory. */
size_t tfjob__child_store_children(tfjob__child_store *s, const char *owner_key, tfjob__child ***out);
void tfjob__children_free(tfjob__child **kids, size_t n);

/* ---- metrics.c ---- */
typedef struct tfjob__metrics {
	_Atomic uint64_t jobs_created, jobs_succeeded, jobs_failed, jobs_restarted, jobs_deleted;
	_Atomic uint64_t reconciles, reconcile_errors;
	_Atomic uint64_t latency[TFJOB_CONTROLLER_LATENCY_BUCKETS];
	_Atomic uint64_t latency_sum_us;
	_Atomic uint64_t queue_adds, queue_retries;
	_Atomic uint64_t api_calls[TFJOB_API_VERB_COUNT];
	_Atomic uint64_t api_errors, status_conflicts, relists, leader_transitions;
	_Atomic uint64_t watch_restarts, watch_errors;
	/* Events (events.c): written as new objects, as count PATCHes, dropped (queue full or
	   flush bound), held back by the spam filter, failed */
	_Atomic uint64_t events_created, events_patched, events_dropped, events_filtered, events_failed;
} tfjob__metrics;

void tfjob__metrics_observe_latency(tfjob__metrics *m, double seconds);

#endif
