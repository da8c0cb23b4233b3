/*
 * The controller handle and its reconcile steps, private to lib/controller/ (built on parts.h).
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_CONTROLLER_HANDLE_H
#define TFJOB_CONTROLLER_HANDLE_H

#include "controller/parts.h"

/* The object an Event is about (strings borrowed; NULL reads as ""). */
typedef struct tfjob__event_ref {
	const char *kind, *api_version, *name, *ns, *uid, *rv;
} tfjob__event_ref;

/* events.c: the asynchronous, correlating event recorder (one per controller). */
typedef struct tfjob__recorder tfjob__recorder;
struct tfjob__event;
/* Events recorded by one reconcile, in order. Zero-initialised is empty. */
typedef struct tfjob__event_batch {
	struct tfjob__event *head, *tail;
} tfjob__event_batch;

/* Longest a stopping controller spends writing the Events still queued. */
#define TFJOB__EVENT_FLUSH_MS 2000

/* PodGroups are listed and watched only with gang scheduling (volcano or scheduler-plugins). */
enum { INF_JOBS = 0, INF_PODS = 1, INF_SERVICES = 2, INF_PODGROUPS = 3, INF_COUNT = 4 };

/*
 * One list+watch (a reflector, in client-go's words). The watch does not reconnect by itself:
 * when its stream ends the reflector thread watches again from the last resourceVersion seen
 * (at once after a normal end, with backoff after a network error), and lists again after
 * 410 Gone or any other error. `connected` is 0 from a broken stream until a new one has
 * delivered an event or stayed up for a second; readiness needs it.
 */
typedef struct tfjob__informer {
	struct tfjob_controller *c;
	int kind;
	int enabled;
	tfjob_resource res;
	tfjob_watch *watch;
	_Atomic int need_relist;
	_Atomic int need_rewatch;
	_Atomic int synced;
	_Atomic int connected;
	_Atomic int watch_open;       /* the current watch has not ended */
	char *rv;                     /* last resourceVersion seen (guarded by c->cache_mu) */
	int failures;                 /* consecutive failed relists/rewatches (reflector thread) */
	int64_t next_try_ms;          /* reflector thread */
	int64_t watch_started_ms;     /* reflector thread */
} tfjob__informer;

struct tfjob_controller {
	tfjob_transport *t;
	tfjob_controller_options o; /* strings point into the copies below */
	char *ns, *cluster_domain, *scheduler_name, *le_id, *le_ns, *identity;
	tfjob_controller_hooks hooks;
	tfjob_render_options ropts;
	tfjob__queue *q;
	tfjob__expectations *exp;
	pthread_mutex_t cache_mu;
	tfjob__store stores[INF_COUNT];      /* TFJobs, PodGroups (whole) */
	tfjob__child_store kids[INF_COUNT];  /* Pods, Services (compact) */
	tfjob__informer inf[INF_COUNT];
	tfjob__metrics m;
	tfjob__recorder *events;

	pthread_mutex_t mu;
	pthread_cond_t cond;
	int started, stopping, running, stopped_by_itself;
	pthread_t *workers;
	int nworkers;
	pthread_t manager;           /* leader election */
	int manager_started;
	pthread_t reflector;         /* relists and rewatches (tfjob__informer_tick), while running */
	int reflector_started, reflector_stop;
	_Atomic int leader;

	/* leader election (leader.c) */
	char *lease_seen;        /* holder + renewTime last observed */
	int64_t lease_seen_ms;   /* when it was observed to change */
	int64_t last_renew_ms;
	int64_t lease_transitions;
};

/* controller.c */
void tfjob__log(tfjob_controller *c, tfjob_log_level level, const char *msg, const char *job_key, const char *what,
                const char *error);
void tfjob__count(tfjob_controller *c, tfjob_api_verb verb, int rc);
int64_t tfjob__now_s(tfjob_controller *c);
/* 1 once the controller is being stopped or has lost its lease: a reconcile or a relist in
   progress gives up between two requests, so that stopping never waits for a long one (a job of
   thousands of pods at a low QPS); the next start (or leader) picks up where it stopped. */
int tfjob__stopping(tfjob_controller *c);

/* informer.c */
int tfjob__informer_list_watch(tfjob__informer *inf, tfjob_error **err);
/* Watch again from the last resourceVersion seen (after the stream ended). */
int tfjob__informer_rewatch(tfjob__informer *inf, tfjob_error **err);
void tfjob__informer_stop(tfjob__informer *inf);
/* Reflector thread, c->mu not held: relist or rewatch when due; keeps `connected` current. */
void tfjob__informer_tick(tfjob__informer *inf, int64_t now_ms);
/* 1 when listed, watching and connected. */
int tfjob__informer_ready(const tfjob__informer *inf);

/* executor.c */
int tfjob__reconcile(tfjob_controller *c, const char *key);

/* events.c */
int tfjob__recorder_new(tfjob__recorder **out, tfjob_controller *c);
/* Stops it (without flushing) and frees it. Accepts NULL. */
void tfjob__recorder_free(tfjob__recorder *r);
/* Start the writing thread (again): 0 or TFJOB_ENOMEM. */
int tfjob__recorder_start(tfjob__recorder *r);
/* Stop accepting Events; write those queued for at most flush_ms, drop (and count) the rest. */
void tfjob__recorder_stop(tfjob__recorder *r, int64_t flush_ms);
/* Append an Event to a batch (strings copied): 0 or TFJOB_ENOMEM. */
int tfjob__event_batch_add(tfjob__event_batch *b, const tfjob__event_ref *obj, const char *type, const char *reason,
                           const char *message);
/* Queue a batch's Events (taken; the batch is left empty); each that does not fit is dropped and
   counted. Thread-safe. */
void tfjob__recorder_post(tfjob__recorder *r, tfjob__event_batch *b);
/* Wait until every queued Event is written (or the recorder is stopped): 0 or TFJOB_ETIMEOUT. */
int tfjob__recorder_wait_empty(tfjob__recorder *r, int64_t timeout_ms);

/* leader.c: one try to acquire or renew; 1 when holding the lease afterwards. */
int tfjob__leader_try(tfjob_controller *c);
void tfjob__leader_release(tfjob_controller *c);

#endif
