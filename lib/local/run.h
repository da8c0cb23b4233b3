/*
 * State of one tfjob_local_run() and the run directory files it keeps (rundir.c). Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_LOCAL_RUN_H
#define TFJOB_LOCAL_RUN_H

#include "local/internal.h"

/* pods.json and events.json grow with the run (the Pods: O(n^2) bytes, each holds the TF_CONFIG
 * of all n). Once one is RUN_FILE_SPACED_BYTES or more, unless forced, it is rewritten at most
 * every RUN_FILE_SPACING times its last write's duration, so that writing it takes at most
 * 1/(1 + RUN_FILE_SPACING) of the run; smaller ones are rewritten at every change. */
#define RUN_FILE_SPACING 9
#define RUN_FILE_SPACED_BYTES (64 * 1024)

typedef struct run {
	tfjob_local *local;
	tfjob_transport *t;
	tfjob_job *job;
	const char *ns, *name;       /* borrowed from job */
	tfjob_compat compat;
	tfjob_render_options ropts;
	tfjob_plan_options popts;
	tfjob_local_update_cb on_update;
	void *payload;
	tfjob_local_event_cb user_cb;
	void *user_payload;
	json_t *events;              /* every event recorded, in order */
	json_t *pending;             /* events not yet sent through the transport */
	json_t *event_index;         /* "type reason object message" -> its entry in events (aggregation) */
	bool events_dirty;           /* events.json is behind events */
	int64_t events_not_before_ms; /* no events.json before this (monotonic ms): its writes are spaced */
	struct tfjob_objects *services; /* the run's Services as last listed (the run is their only writer) */
	bool services_stale;         /* the run created or deleted a Service since: list them again */
	uint64_t pods_generation;    /* the engine's generation pods.json shows */
	bool pods_saved;             /* pods.json was written at least once */
	int64_t pods_not_before_ms;  /* no pods.json before this (monotonic ms): its writes are spaced */
	uint64_t replicas_generation; /* the engine's history_generation replicas.json shows */
	bool replicas_saved;         /* replicas.json was written at least once */
	bool deleted;
	int64_t restarts;            /* restarts the planner ordered (TFJobRestarting events) */
	int64_t not_before_ms;       /* rate limit: no reconcile before this (monotonic ms) */
	bool restarted;              /* the last step ordered a restart */
	char *deletion_why;          /* why the current step deletes Pods, worked out at its first */
} run;

int tfjob__run_init(run *r, tfjob_local *local, const tfjob_local_run_options *opts, tfjob_error **err);
void tfjob__run_free(run *r);
/* Record an event about kind/name; flush: send it at once (else at the next flush). */
void tfjob__run_event(run *r, const char *kind, const char *name, const char *type, const char *reason,
                      const char *message, bool flush);
/* Send pending events through the transport and to on_update; rewrite events.json when its
 * spacing allows (tfjob__run_save_files()). */
int tfjob__run_flush_events(run *r, tfjob_error **err);
/* Rewrite pods.json and events.json when they are behind, and (force) even when their spacing
 * would defer them: at the end of a run. */
int tfjob__run_save_files(run *r, bool force, tfjob_error **err);
/* When the engine's Pods changed since pods.json was written: rewrite it and tell on_update
 * (TFJOB_LOCAL_UPDATE_PODS), spaced as RUN_FILE_SPACING says unless force. */
int tfjob__run_save_pods(run *r, bool force, tfjob_error **err);
/* The run's Pods (its job-name label) as a new JSON array, whole or without their spec (full
 * false: what the planner reads), and the engine's generation they show (may be NULL). */
int tfjob__run_pods(json_t **out, run *r, bool full, uint64_t *generation, tfjob_error **err);
/* Milliseconds until a deferred pods.json or events.json write is due (0: now); -1 when none is
 * waiting. */
int64_t tfjob__run_files_due_ms(run *r);
/* The selector of the run's children: "training.kubeflow.org/job-name=<name>". */
int tfjob__run_selector(char *buf, size_t size, const run *r);
/* Rewrite replicas.json (the engine's history of each Pod) when it changed. */
int tfjob__run_save_replicas(run *r, tfjob_error **err);
/* Rewrite job.json. */
int tfjob__run_save_job(run *r, tfjob_error **err);
/* Write text to dir/name atomically (a temporary file, then rename). */
int tfjob__write_file(const char *dir, const char *name, const char *text, tfjob_error **err);

#endif
