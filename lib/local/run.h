/*
 * State of one tfjob_local_run() and the run directory files it keeps (rundir.c). Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_LOCAL_RUN_H
#define TFJOB_LOCAL_RUN_H

#include "local/internal.h"

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
	char *last_pods;             /* pods.json as last written */
	char *last_replicas;         /* replicas.json as last written */
	bool deleted;
	int64_t restarts;            /* restarts the planner ordered (TFJobRestarting events) */
	int64_t not_before_ms;       /* rate limit: no reconcile before this (monotonic ms) */
	bool restarted;              /* the last step ordered a restart */
} run;

int tfjob__run_init(run *r, tfjob_local *local, const tfjob_local_run_options *opts, tfjob_error **err);
void tfjob__run_free(run *r);
/* Record an event about kind/name; flush: send it at once (else at the next flush). */
void tfjob__run_event(run *r, const char *kind, const char *name, const char *type, const char *reason,
                      const char *message, bool flush);
/* Send pending events through the transport and to on_update; rewrite events.json. */
int tfjob__run_flush_events(run *r, tfjob_error **err);
/* pods: JSON array; when it differs from the last one, rewrite pods.json and tell on_update. */
int tfjob__run_pods_changed(run *r, const char *pods, tfjob_error **err);
/* Rewrite replicas.json (the engine's history of each Pod) when it changed. */
int tfjob__run_save_replicas(run *r, tfjob_error **err);
/* Rewrite job.json. */
int tfjob__run_save_job(run *r, tfjob_error **err);
/* Write text to dir/name atomically (a temporary file, then rename). */
int tfjob__write_file(const char *dir, const char *name, const char *text, tfjob_error **err);

#endif
