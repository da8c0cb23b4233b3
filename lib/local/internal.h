/*
 * Internal declarations of the local backend (lib/local/). Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_LOCAL_INTERNAL_H
#define TFJOB_LOCAL_INTERNAL_H

#include <jansson.h>
#include <pthread.h>
#include <signal.h>
#include <sys/types.h>

#include "util/common.h"
#include "tfjob/local.h"
#include "local/supervise.h"

#define TFJOB__LOCAL_PID_ANNOTATION TFJOB_LOCAL_PID_ANNOTATION
#define TFJOB__LOCAL_DEFAULT_GRACE_MS 30000
#define TFJOB__LOCAL_TICK_MS 20
/* How often the engine looks at the logs of running replicas for their time index (logtimes.c). */
#define TFJOB__LOCAL_LOG_TIMES_EVERY_MS 100

typedef enum lpod_policy { LPOD_NEVER = 0, LPOD_ON_FAILURE = 1, LPOD_ALWAYS = 2 } lpod_policy;

typedef enum lpod_state {
	LPOD_PENDING = 0,  /* created, not started yet */
	LPOD_RUNNING = 1,  /* a process group is alive */
	LPOD_BACKOFF = 2,  /* exited, waiting to restart in place */
	LPOD_DONE = 3      /* exited for good (or never started: spawn_error) */
} lpod_state;

/* What is needed to start a Pod's process (podspec.c). */
typedef struct tfjob__launch {
	char **argv;      /* NULL-terminated */
	char **env;       /* NAME=value entries of the container (NULL-terminated) */
	int64_t gpus;     /* nvidia.com/gpu asked for */
	char *workdir;    /* absolute or relative to the base dir; NULL: the base dir */
	char *container;  /* the container's name ("tensorflow") */
	lpod_policy policy;
	int64_t grace_ms; /* -1: default */
} tfjob__launch;

/* What a Pod's status and live metadata are made of (podstatus.c): when it is unchanged, so is
 * the Pod's summary (zeroed before it is filled: compared with memcmp). */
typedef struct lpod_shown {
	int64_t created_wall, started_wall, finished_wall, deletion_wall, backoff_wait_ms;
	int64_t last_started_wall, last_finished_wall;
	const char *spawn_error;
	pid_t pid;
	int state, restarts, code, signal, last_code, last_signal;
	bool deleting, has_last;
} lpod_shown;

typedef struct lpod {
	struct lpod *next;
	char *ns, *name;
	json_t *obj;          /* the Pod as created (metadata + spec); status is computed */
	tfjob__launch launch;
	char *log_path;
	lpod_state state;
	pid_t pid;            /* the replica's process (and process group), signalled; 0: none */
	pid_t supervisor;     /* its supervisor (supervise.c), the child that is waited for */
	int64_t created_wall, started_wall, finished_wall;
	int64_t started_ms;   /* monotonic */
	int restarts;
	int64_t backoff_ms, restart_at_ms;
	int64_t backoff_wait_ms; /* the current back-off (state BACKOFF), as the kubelet reports it */
	bool has_last;        /* a previous termination (lastState) */
	int last_code, last_signal;
	int64_t last_started_wall, last_finished_wall;
	int code, signal;     /* of the current termination when state is BACKOFF or DONE */
	bool deleting;        /* deletion asked: removed once the process is gone */
	int64_t deletion_wall, kill_at_ms;
	bool killed;          /* SIGKILL sent */
	char *spawn_error;    /* why the process could not start */
	bool has_gpus;        /* CUDA_VISIBLE_DEVICES set: its GPUs are held until it ends for good */
	int64_t log_times_size; /* the log's size in the last record of its time index */
	json_t *summary;      /* tfjob__local_pod_summary_json() as last made, for the state in shown */
	lpod_shown shown;
} lpod;

struct tfjob_local {
	pthread_mutex_t lock;
	char *run_dir, *base_dir;
	int64_t backoff_initial_ms, backoff_max_ms, grace_ms;
	tfjob_local_event_cb on_event;
	void *event_payload;
	lpod *pods;
	lpod *pods_tail;      /* the last of pods: a Pod is appended in O(1) */
	uint64_t generation;  /* bumped whenever what a Pod reports may have changed (pods.json, the
	                         run's progress): a reader compares it instead of the Pods' text */
	int wake[2];
	volatile sig_atomic_t interrupts;
	bool stopping;        /* shutdown: no (re)start any more */
	json_t *ports;        /* "type/index" -> port */
	json_t *ignored;      /* set of reported ignored fields */
	json_t *history;      /* pod name -> what happened to it (engine.c record_*), kept after deletion */
	uint64_t history_generation; /* bumped whenever history changes (replicas.json is behind) */
	char *gpus_option;    /* tfjob_local_options.gpus (NULL: look for them) */
	json_t *gpus;         /* GPU id -> the pod holding it, or null (gpus.c); NULL until known */
	int64_t log_times_at_ms; /* monotonic time of the last look at the logs (logtimes.c) */
	char *supervise_path; /* the program tfjob-supervise; NULL: supervisors are forks (spawn.c) */
	char *supervise_looked; /* where it was looked for, when it was not found */
	bool supervise_noted; /* the "SupervisorInProcess" event was sent */
	uint64_t uids;        /* Pods created: the counter in their metadata.uid */
};

/* events.c: the clock, Events and durations of every part of the backend */
int64_t tfjob__local_wall(void);
void tfjob__local_event(tfjob_local *l, const char *pod, const char *type, const char *reason, const char *fmt, ...)
	TFJOB_PRINTF(5, 6);
/* "10s", "2m40s", "5m0s": a duration as Kubernetes (Go) prints it. */
char *tfjob__local_duration(char *buf, size_t size, int64_t ms);

/* strays.c: SIGKILL to every process (but this one) whose environment holds
 * TFJOB_RUN_DIR=run_dir, the marker of this engine's replicas: what outlived a supervisor killed
 * with SIGKILL. Linux (/proc). Returns how many were stopped. */
int tfjob__local_stop_strays(const char *run_dir);

/* engine.c */
lpod *tfjob__local_find(tfjob_local *l, const char *ns, const char *name);
/* Add a Pod (takes obj, launch); starts nothing. */
int tfjob__local_add(tfjob_local *l, const char *ns, json_t *obj, tfjob__launch *launch, tfjob_error **err);
/* Delete: terminate its process (grace_ms < 0: default) or remove it at once. TFJOB_ENOTFOUND. */
int tfjob__local_delete(tfjob_local *l, const char *ns, const char *name, int64_t grace_ms);
void tfjob__local_wake(tfjob_local *l);
/* Why a Pod was deleted ("by cleanPodPolicy Running", ...), for the report (lock held). */
void tfjob__local_note_deleted(tfjob_local *l, const char *name, const char *why);
/* The history of every Pod the engine ran, in creation order (JSON array; new reference; lock
 * held), and its generation (history_generation): pod, replicaType, replicaIndex, log, exits, failures, exitCode, signal, failedExitCode,
 * failedAt, stoppedBy, restartAt, backoffSeconds, deleted, finished. */
json_t *tfjob__local_history(tfjob_local *l, uint64_t *generation);
/* tfjob_local_shutdown(), calling tick (when not NULL, without the lock) after each pass while it
 * waits for the processes: the run shows the engine's events (Killing, Exited) as they happen. */
int tfjob__local_shutdown_tick(tfjob_local *l, void (*tick)(void *payload), void *payload);

/* backend.c: create a Pod (takes pod; the tree may share parts with the caller's, which are not changed):
 * what the backend's create does with the parsed text, for a caller holding the object. *created
 * (when not NULL): the Pod as created, new reference. Takes the lock. */
int tfjob__local_create_pod(tfjob_local *l, const char *ns, json_t *pod, json_t **created, tfjob_error **err);

/* The Pods in ns (NULL or "": all) whose labels match sel and fields fsel (NULL: any),
 * in creation order, whole (tfjob__local_pod_json) or without their spec (full false); the
 * engine's generation they show in *generation (may be NULL). New array; NULL when out of memory.
 * Takes the lock. */
struct tfjob__selector;
json_t *tfjob__local_pods_matching(tfjob_local *l, const char *ns, const struct tfjob__selector *sel,
                                   const struct tfjob__selector *fsel, bool full, uint64_t *generation);

/* gpus.c: the GPUs this engine hands out (looked for on first use; lock held). */
int tfjob__local_gpus_known(tfjob_local *l, tfjob_error **err);
/* Give the Pod its CUDA_VISIBLE_DEVICES (its GPUs, or "" without a GPU limit): true when it can
 * start now, false while too few GPUs are free (lock held). */
bool tfjob__local_gpus_take(tfjob_local *l, lpod *p);
/* The Pod ended for good or is removed: its GPUs are free again (lock held). */
void tfjob__local_gpus_release(tfjob_local *l, const lpod *p);
/* TFJOB_EINVAL when the job asks for more GPUs than the engine has, naming the field. */
int tfjob__local_gpus_check(tfjob_local *l, const tfjob_job *job, tfjob_error **err);
/* nvidia.com/gpu of a container's resources (limits, else requests): >= 0, or -1 when it is no
 * whole number. */
int64_t tfjob__local_gpu_count(json_t *container);

/* podspec.c: the launch of a Pod; reports ignored fields. */
int tfjob__launch_from_pod(tfjob__launch *out, tfjob_local *l, json_t *pod, tfjob_error **err);
/* Checks a pod spec (field prefix for messages); 0 or TFJOB_EINVAL. */
int tfjob__local_check_pod_spec(json_t *spec, const char *prefix, tfjob_error **err);
void tfjob__launch_free(tfjob__launch *launch);

/* supervisor_path.c: the program tfjob-supervise (its path, malloc'd), or NULL and in *looked
 * (malloc'd; NULL when out of memory) where it was looked for. */
char *tfjob__local_supervise_path(char **looked);

/* spawn.c: start a Pod's replica under a supervisor of its own (supervise.c). */
int tfjob__local_spawn(tfjob_local *l, lpod *p);
void tfjob__local_signal(lpod *p, int sig);
/* Decode a wait status into exit code (128+n for signals) and signal number. */
void tfjob__local_decode_status(int status, int *code, int *sig);

/* logtimes.c: the time index of the logs (<pod>.log.times, docs/local.md); lock held. */
/* Append a record when the Pod's log grew since its last one. */
void tfjob__local_log_times_sample(lpod *p);
/* Sample the logs of the running Pods, at most every TFJOB__LOCAL_LOG_TIMES_EVERY_MS. */
void tfjob__local_log_times_tick(tfjob_local *l, int64_t now_ms);


/* podstatus.c: the Pod with its live status (new reference). */
json_t *tfjob__local_pod_json(const lpod *p);
/* The same without the spec (apiVersion, kind, metadata, status): what the planner reads, in
 * size independent of the job's (new reference; the engine's JSON is shared, not copied). */
json_t *tfjob__local_pod_summary_json(lpod *p);


#endif
