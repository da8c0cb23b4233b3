/*
 * The controller handle and its reconcile steps, private to lib/controller/ (built on parts.h).
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_CONTROLLER_INTERNAL_H
#define TFJOB_CONTROLLER_INTERNAL_H

#include "controller/parts.h"
#include "transport/event.h" /* tfjob__involved */

/* events.c: the asynchronous, correlating event recorder (one per controller). */
typedef struct tfjob__recorder tfjob__recorder;
struct tfjob__event;
/* Events recorded by one reconcile, in order. Zero-initialised is empty. */
typedef struct tfjob__event_batch {
	struct tfjob__event *head, *tail;
} tfjob__event_batch;

/*
 * A status write decided by a reconcile, with what must follow it: carried out at once by the
 * worker, or handed to the status writer (writer.c) so that the worker goes on with the next job
 * while the API server answers. Until it is done the job's key stays "processing" in the work
 * queue, so the job is never planned again from a status that is about to change.
 */
typedef struct tfjob__status_write {
	struct tfjob__status_write *next;
	char *key, *ns, *name;
	char *body;                /* the job with its new status, JSON */
	json_t *new_status;        /* reference */
	char *status_text;         /* new_status as the API server writes JSON: compact, keys sorted */
	unsigned transitions;      /* TRANSITION_* bits (executor.c), counted once written */
	int64_t requeue_after_ms;  /* the planner's requeue; -1: none */
	tfjob__event_batch events; /* posted once the write is done (or given up) */
	int64_t started_ns;        /* when the reconcile began (the latency metric) */
} tfjob__status_write;

/* Longest a stopping controller spends writing the Events still queued. */
#define TFJOB__EVENT_FLUSH_MS 2000

/* writer.c: status writes off the reconcile workers. */
typedef struct tfjob__writer tfjob__writer;

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
	tfjob__writer *writer;       /* NULL: the workers write statuses themselves */

	pthread_mutex_t mu;
	pthread_cond_t cond;
	int started, stopping, running, stopped_by_itself;
	pthread_t *workers;
	int nworkers;
	pthread_t manager;           /* leader election */
	int manager_started;
	pthread_t reflector;         /* relists and rewatches (tfjob__informer_tick), while running */
	int reflector_started, reflector_stop;
	int reflector_kick;          /* a stream closed since the reflector last looked (under mu) */
	_Atomic int leader;

	/* leader election (leader.c) */
	char *lease_seen;        /* holder + renewTime last observed */
	int64_t lease_seen_ms;   /* when it was observed to change */
	_Atomic int64_t last_renew_ms; /* read by the workers and writers: tfjob__fenced() */
	int64_t lease_transitions;
};

/* runtime.c: the log, counters, clock and stop/fence state every part uses */
void tfjob__log(tfjob_controller *c, tfjob_log_level level, const char *msg, const char *job_key, const char *what,
                const char *error);
/* 1 when a line of that level reaches the log hook: callers that build a line first ask. */
int tfjob__log_enabled(const tfjob_controller *c, tfjob_log_level level);
void tfjob__count(tfjob_controller *c, tfjob_api_verb verb, int rc);
int64_t tfjob__now_s(tfjob_controller *c);
/* 1 once the controller is being stopped or has lost its lease: a reconcile or a relist in
   progress gives up between two requests, so that stopping never waits for a long one (a job of
   thousands of pods at a low QPS); the next start (or leader) picks up where it stopped. */
int tfjob__stopping(tfjob_controller *c);
/* 1 when leader election is on and the Lease was last renewed longer ago than the renew
   deadline: another replica may hold it by now (a process paused past its lease, a manager
   thread stuck in a slow request), so no child or status is written until a renewal succeeds
   (the manager then goes on, or stops the controller). Writes already sent are not undone.
   Thread-safe, lock-free. */
int tfjob__fenced(tfjob_controller *c);
/* How long a job put off by the fence waits before it is tried again: the retry period, at most
   200 ms (the fence lifts as soon as the manager renews). */
int64_t tfjob__fence_retry_ms(const tfjob_controller *c);

/* informer.c */
int tfjob__informer_list_watch(tfjob__informer *inf, tfjob_error **err);
/* Watch again from the last resourceVersion seen (after the stream ended). */
int tfjob__informer_rewatch(tfjob__informer *inf, tfjob_error **err);
void tfjob__informer_stop(tfjob__informer *inf);
/* Reflector thread, c->mu not held: relist or rewatch when due; keeps `connected` current.
   Returns when it is next due (tfjob__monotonic_ms() time), INT64_MAX when only its stream's end
   can give it something to do. */
int64_t tfjob__informer_tick(tfjob__informer *inf, int64_t now_ms);
/* 1 when listed, watching and connected. */
int tfjob__informer_ready(const tfjob__informer *inf);

/* executor.c */
/* tfjob__reconcile()'s answer when its status write went to the writer, which ends the reconcile
   (tfjob__reconcile_finish()); and tfjob__status_write_do()'s when the job changed meanwhile. */
#define TFJOB__RECONCILE_HANDED_OFF 2
#define TFJOB__RECONCILE_REPLAN 1
/* 0 done, TFJOB__RECONCILE_HANDED_OFF, or a negative error (the caller finishes the reconcile). */
int tfjob__reconcile(tfjob_controller *c, const char *key, int64_t started_ns);

/* status_write.c */
/* PUT a status: 0 written (cached, counted), TFJOB__RECONCILE_REPLAN (a conflict: the job as
   stored now is cached), or a negative error (*err set). Thread-safe. */
int tfjob__status_write_do(tfjob_controller *c, tfjob__status_write *w, tfjob_error **err);
/* Posts its Events and frees it. Accepts NULL. */
void tfjob__status_write_free(tfjob_controller *c, tfjob__status_write *w);
/* The job metrics a status write from old to new status moves (TRANSITION_* bits), decided with
   the reconcile, counted once written. */
unsigned tfjob__status_transitions(json_t *old_status, json_t *new_status);
/* Put an object (taken reference) into the cache of that kind unless it has a newer one. */
void tfjob__cache_put(tfjob_controller *c, int kind, json_t *obj);

/* controller.c: the end of a reconcile, on whichever thread ended it: the queue's verdict (forget,
   retry with backoff, re-plan), the metrics, the after_reconcile hook, and the key let go. */
void tfjob__reconcile_finish(tfjob_controller *c, const char *key, int rc, int64_t started_ns);

/* writer.c */
/* A writer of up to `threads` statuses at once (threads >= 1): 0 or TFJOB_ENOMEM. */
int tfjob__writer_new(tfjob__writer **out, tfjob_controller *c, int threads);
/* Stopped (tfjob__writer_stop()) and freed. Accepts NULL. */
void tfjob__writer_free(tfjob__writer *w);
/* Start its threads (again): 0 or TFJOB_ENOMEM. */
int tfjob__writer_start(tfjob__writer *w);
/* Hand over a write (taken), waiting while as many are queued as there are threads. Thread-safe.
   A stopped writer gives the write up at once (tfjob__reconcile_finish() without writing). */
void tfjob__writer_post(tfjob__writer *w, tfjob__status_write *sw);
/* Let the write in progress on each thread end; writes still queued are given up (left to the
   next start, as a reconcile cut short by a stop leaves its status); join the threads. */
void tfjob__writer_stop(tfjob__writer *w);

/* events.c */
int tfjob__recorder_new(tfjob__recorder **out, tfjob_controller *c);
/* Stops it (without flushing) and frees it. Accepts NULL. */
void tfjob__recorder_free(tfjob__recorder *r);
/* Start the writing thread (again): 0 or TFJOB_ENOMEM. */
int tfjob__recorder_start(tfjob__recorder *r);
/* Stop accepting Events; write those queued for at most flush_ms, drop (and count) the rest. */
void tfjob__recorder_stop(tfjob__recorder *r, int64_t flush_ms);
/* Append an Event about obj to a batch (strings copied; NULL reads as ""): 0 or TFJOB_ENOMEM. */
int tfjob__event_batch_add(tfjob__event_batch *b, const tfjob__involved *obj, const char *type, const char *reason,
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
