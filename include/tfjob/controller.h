/*
 * libtfjob - the controller: reconciling TFJobs through a transport.
 * SPDX-License-Identifier: Apache-2.0
 *
 * A tfjob_controller keeps caches of TFJobs and of the Pods and Services that carry the
 * `training.kubeflow.org/job-name` label (fed by list+watch, relisted after 410 Gone), a
 * rate-limited work queue of job keys ("namespace/name"), expectations of creates and deletes in
 * flight, and executes the planner's plans (plan.h) through any transport (memory.h, kube.h):
 * children are created and deleted in the planner's order, Events are recorded as
 * training-operator records them, status is written through /status with conflict retry.
 * docs/controller.md describes it.
 *
 * Thread-safety: every function taking a tfjob_controller may be called from any thread, except
 * tfjob_controller_free() (one thread, after every other call has returned). Hooks run on worker
 * threads, several at once when workers > 1.
 */
#ifndef TFJOB_CONTROLLER_H
#define TFJOB_CONTROLLER_H

#include "common.h"
#include "error.h"
#include "graph.h"
#include "transport.h"
#include "memstore.h"

TFJOB_BEGIN_DECLS

/** Opaque controller handle. */
typedef struct tfjob_controller tfjob_controller;

/** Log levels of the logging callback. */
typedef enum tfjob_log_level {
	TFJOB_LOG_DEBUG = 0,
	TFJOB_LOG_INFO = 1,
	TFJOB_LOG_WARN = 2,
	TFJOB_LOG_ERROR = 3
} tfjob_log_level;

/**
 * Structured log record: level, a constant message and the key/value pairs as a JSON object text
 * ({"job":"ns/name","error":"..."}). Both strings are borrowed for the duration of the call.
 */
typedef void (*tfjob_log_cb)(tfjob_log_level level, const char *message, const char *fields_json, void *payload);

/** Before a job is reconciled (ns, name borrowed). Return 0 to go on, non-zero to skip it this time. */
typedef int (*tfjob_before_reconcile_cb)(const char *ns, const char *name, void *payload);

/** After a job was reconciled: result is 0 or the negative TFJOB_E* code of the attempt. When the
    reconcile wrote a status this runs once the write is done, on a status writer's thread. */
typedef void (*tfjob_after_reconcile_cb)(const char *ns, const char *name, int result, void *payload);

/**
 * Change a Pod before it is created (add a sidecar, labels, ...). pod_json and job_json are
 * borrowed. Set *out to the new Pod JSON allocated with malloc() (the library frees it) and
 * return 0, or leave *out NULL to keep the Pod as it is. A negative return fails the creation.
 */
typedef int (*tfjob_pod_mutate_cb)(char **out, const char *pod_json, const char *job_json, void *payload);

#define TFJOB_CONTROLLER_HOOKS_VERSION 1

/** Callbacks of the embedding program; every slot is optional. Initialise with TFJOB_CONTROLLER_HOOKS_INIT. */
typedef struct tfjob_controller_hooks {
	unsigned int version;                    /* TFJOB_CONTROLLER_HOOKS_VERSION */
	tfjob_log_cb log;                        /* NULL: no logging */
	tfjob_log_level log_level;               /* least level passed to log: TFJOB_LOG_INFO */
	tfjob_before_reconcile_cb before_reconcile;
	tfjob_after_reconcile_cb after_reconcile;
	tfjob_pod_mutate_cb mutate_pod;
	void *payload;                           /* passed to every callback */
} tfjob_controller_hooks;

#define TFJOB_CONTROLLER_HOOKS_INIT { TFJOB_CONTROLLER_HOOKS_VERSION, NULL, TFJOB_LOG_INFO, NULL, NULL, NULL, NULL }

/** Initialise hooks of the given version (all NULL). TFJOB_EVERSION for unknown versions, TFJOB_EINVAL for NULL. */
TFJOB_EXTERN int tfjob_controller_hooks_init(tfjob_controller_hooks *hooks, unsigned int version);

#define TFJOB_CONTROLLER_OPTIONS_VERSION 2

/** Options of a controller. Initialise with TFJOB_CONTROLLER_OPTIONS_INIT; 0/NULL mean the default. */
typedef struct tfjob_controller_options {
	unsigned int version;            /* TFJOB_CONTROLLER_OPTIONS_VERSION */
	const char *namespace_name;      /* watch one namespace; NULL or "": all namespaces */
	int workers;                     /* worker threads (--threadiness); 0: 1 */
	tfjob_compat compat;             /* planner semantics: TFJOB_COMPAT_DOCUMENTED */
	const char *cluster_domain;      /* TF_CONFIG addresses' domain; NULL: none */
	tfjob_gang_scheduler gang_scheduler; /* TFJOB_GANG_NONE */
	const char *scheduler_name;      /* gang scheduler name on pods; NULL: the scheduler's default */
	double queue_qps;                /* work-queue global rate limit; 0: 10 per second */
	int queue_burst;                 /* 0: 100 */
	int64_t backoff_base_ms;         /* per-item backoff; 0: 5 ms (doubling) */
	int64_t backoff_max_ms;          /* 0: 1000 s */
	int64_t expectations_timeout_ms; /* 0: 5 minutes */
	int leader_election;             /* 1: reconcile only while holding the Lease */
	const char *leader_election_id;  /* Lease name; NULL: "1ca428e5.training-operator.kubeflow.org" */
	const char *leader_election_namespace; /* NULL: the namespace option, else the transport's */
	const char *identity;            /* holderIdentity; NULL: hostname + "_" + random */
	int64_t lease_duration_ms;       /* 0: 15 s */
	int64_t renew_deadline_ms;       /* 0: 10 s */
	int64_t retry_period_ms;         /* 0: 2 s */
	int no_events;                   /* 1: record no Events */
	tfjob_clock_cb clock;            /* wall clock of the planner (Unix seconds); NULL: the system clock */
	void *clock_payload;
	const tfjob_controller_hooks *hooks; /* copied; NULL: none */
	/* version 2 */
	int status_writers;              /* status writes in flight at once, off the workers (see
	                                    below); 0: TFJOB_CONTROLLER_STATUS_WRITERS_DEFAULT;
	                                    negative: each worker writes its statuses itself */
} tfjob_controller_options;

/**
 * Status writers: a reconcile hands the status write it decided to one of a few writer threads
 * and its worker goes on with the next job while the API server answers. The job stays "being
 * reconciled" until its status is written (its after_reconcile hook, which may then run on a
 * writer thread, comes after the write), so a job is never planned from a status about to
 * change and never by two threads at once. A worker waits while as many writes are waiting as
 * there are writers. A stop lets the writes in progress end and leaves those not yet started
 * to the next start, as it leaves the rest of a reconcile cut short.
 */
#define TFJOB_CONTROLLER_STATUS_WRITERS_DEFAULT 4

#define TFJOB_CONTROLLER_OPTIONS_INIT { TFJOB_CONTROLLER_OPTIONS_VERSION, NULL, 0, TFJOB_COMPAT_DOCUMENTED, NULL, \
                                        TFJOB_GANG_NONE, NULL, 0, 0, 0, 0, 0, 0, NULL, NULL, NULL, 0, 0, 0, 0, \
                                        NULL, NULL, NULL, 0 }

/** Initialise controller options of the given version. TFJOB_EVERSION for unknown versions, TFJOB_EINVAL for NULL. */
TFJOB_EXTERN int tfjob_controller_options_init(tfjob_controller_options *opts, unsigned int version);

/**
 * A new controller on transport t (borrowed: it must outlive the controller). opts may be NULL;
 * strings in it are copied. Nothing runs until tfjob_controller_start(). *out is the caller's
 * (tfjob_controller_free()). Errors: TFJOB_EINVAL, TFJOB_EVERSION, TFJOB_ENOMEM.
 */
TFJOB_EXTERN int tfjob_controller_new(tfjob_controller **out, tfjob_transport *t,
                                      const tfjob_controller_options *opts, tfjob_error **err);

/**
 * Start: (after winning the Lease when leader election is on) list TFJobs, Pods and Services
 * into the caches, start their watches and the worker threads. Returns once started; without
 * leader election, errors of the first lists are returned (the transport's codes). TFJOB_ESTATE
 * when already started. Thread-safe.
 */
TFJOB_EXTERN int tfjob_controller_start(tfjob_controller *c, tfjob_error **err);

/**
 * Stop gracefully: stop accepting work, stop the watches, release the Lease when held. A
 * reconcile in flight ends after the request it is making (its remaining creates and deletes and
 * its status write are left to the next start or leader); a paged relist after its page. Blocks
 * until done, about one request. Idempotent; thread-safe (not from a hook).
 */
TFJOB_EXTERN void tfjob_controller_stop(tfjob_controller *c);

/** Stop (when running) and release a controller. Accepts NULL. */
TFJOB_EXTERN void tfjob_controller_free(tfjob_controller *c);

/**
 * Wait until nothing is queued or being reconciled, the Events recorded are written, and every
 * cache is synced (delayed requeues, such as TTL, may still be pending), at most timeout_ms milliseconds (negative: forever).
 * 0 when idle, TFJOB_ETIMEOUT otherwise. Meant for tests and benchmarks. Thread-safe.
 */
TFJOB_EXTERN int tfjob_controller_wait_idle(tfjob_controller *c, int64_t timeout_ms);

/**
 * Wait until the controller has stopped working by itself (leadership lost) or timeout_ms ran
 * out (negative: forever). 0 when it stopped, TFJOB_ETIMEOUT otherwise. Thread-safe.
 */
TFJOB_EXTERN int tfjob_controller_wait_stopped(tfjob_controller *c, int64_t timeout_ms);

/** Queue the job ns/name for a reconcile now (e.g. after moving a test clock). Thread-safe. TFJOB_EINVAL, TFJOB_ENOMEM. */
TFJOB_EXTERN int tfjob_controller_enqueue(tfjob_controller *c, const char *ns, const char *name);

/** 1 when the controller holds the Lease (always 1 while running without leader election), else 0. */
TFJOB_EXTERN int tfjob_controller_is_leader(const tfjob_controller *c);

/**
 * 1 when started, every cache has been listed and every watch is connected (what /readyz
 * reports), else 0: 0 while the API server is unreachable and until the caches are resynced.
 * Thread-safe.
 */
TFJOB_EXTERN int tfjob_controller_is_ready(const tfjob_controller *c);

/** The API verbs counted in tfjob_controller_metrics.api_calls. */
typedef enum tfjob_api_verb {
	TFJOB_API_GET = 0,
	TFJOB_API_LIST = 1,
	TFJOB_API_WATCH = 2,
	TFJOB_API_CREATE = 3,
	TFJOB_API_UPDATE = 4,
	TFJOB_API_UPDATE_STATUS = 5,
	TFJOB_API_PATCH = 6,
	TFJOB_API_DELETE = 7,
	TFJOB_API_CREATE_EVENT = 8,
	TFJOB_API_VERB_COUNT = 9
} tfjob_api_verb;

/** "get", "list", "watch", "create", "update", "update_status", "patch", "delete", "create_event"; "unknown". Static. */
TFJOB_EXTERN const char *tfjob_api_verb_name(tfjob_api_verb verb);

/** Buckets of the reconcile latency histogram (Prometheus' default buckets, 5 ms to 10 s, then +Inf). */
#define TFJOB_CONTROLLER_LATENCY_BUCKETS 12

/** Upper bound in seconds of latency bucket i (the last one is +Inf: HUGE_VAL). */
TFJOB_EXTERN double tfjob_controller_latency_bucket_bound(size_t i);

#define TFJOB_CONTROLLER_METRICS_VERSION 2

/**
 * Counters of a controller (monotonic unless said otherwise). Fields are only ever appended:
 * version 1 ends at leader_transitions; version 2 adds the watch fields.
 */
typedef struct tfjob_controller_metrics {
	unsigned int version;          /* TFJOB_CONTROLLER_METRICS_VERSION; set by the caller */
	uint64_t jobs_created;         /* jobs seen for the first time (Created condition set) */
	uint64_t jobs_succeeded;
	uint64_t jobs_failed;
	uint64_t jobs_restarted;       /* transitions to Restarting */
	uint64_t jobs_deleted;         /* TTL deletions */
	uint64_t reconciles;
	uint64_t reconcile_errors;
	uint64_t reconcile_latency[TFJOB_CONTROLLER_LATENCY_BUCKETS]; /* per bucket, not cumulative */
	double reconcile_latency_sum;  /* seconds */
	uint64_t queue_depth;          /* gauge: keys ready to be processed */
	uint64_t queue_adds;
	uint64_t queue_retries;        /* rate-limited requeues */
	uint64_t api_calls[TFJOB_API_VERB_COUNT];
	uint64_t api_errors;
	uint64_t status_conflicts;
	uint64_t relists;              /* lists after the first (410 Gone, failures) */
	int is_leader;                 /* gauge */
	uint64_t leader_transitions;
	/* version 2 */
	uint64_t watch_restarts;       /* watches resumed from the last resourceVersion after their stream ended */
	uint64_t watch_errors;         /* watch streams that ended with an error (server unreachable, 410 Gone, ...) */
	int caches_synced;             /* gauge: 1 while every cache is listed and its watch connected (is_ready) */
} tfjob_controller_metrics;

/**
 * Read the counters into *out; out->version must be set (1 or TFJOB_CONTROLLER_METRICS_VERSION)
 * and only that version's fields are written. TFJOB_EINVAL, TFJOB_EVERSION. Thread-safe.
 */
TFJOB_EXTERN int tfjob_controller_metrics_get(tfjob_controller_metrics *out, const tfjob_controller *c);

/**
 * The counters in Prometheus text exposition format 0.0.4 (what /metrics serves). *out is the
 * caller's (tfjob_free()). TFJOB_EINVAL, TFJOB_ENOMEM. Thread-safe.
 */
TFJOB_EXTERN int tfjob_controller_metrics_text(char **out, const tfjob_controller *c, tfjob_error **err);

TFJOB_END_DECLS

#endif
