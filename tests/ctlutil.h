/*
 * Helpers of the controller tests: a memory store with a settable clock, a fake kubelet, polls.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_CTLUTIL_H
#define TFJOB_CTLUTIL_H
#include <stdint.h>
#include <tfjob/tfjob.h>

extern _Atomic int64_t cu_now;  /* the fake wall clock (Unix seconds) */
int64_t cu_clock(void *payload);

/* A TFJob as JSON: types like "PS:1:Never,Worker:2:ExitCode"; extra_spec / extra_run_policy are
   JSON members (without braces) appended to spec / runPolicy, or NULL. Caller frees. */
char *cu_job(const char *name, const char *types, const char *extra_spec, const char *extra_run_policy);
int cu_create_job(tfjob_transport *t, const char *json);
/* Set a pod's status as a kubelet would: phase, the tensorflow container's exit code (<0: none),
   restartCount. 0 or the transport's code. */
int cu_set_pod(tfjob_transport *t, const char *ns, const char *name, const char *phase, int exit_code, int restarts);
/* Status "True"/"False" of a job condition (static buffer per call site is not used: caller frees), NULL when absent. */
char *cu_cond(tfjob_transport *t, const char *ns, const char *job, const char *type);
int cu_cond_is(tfjob_transport *t, const char *ns, const char *job, const char *type, const char *status);
/* Number of children (resource "pods"/"services") with the job-name label; -1 on error. */
int cu_count(tfjob_transport *t, const char *ns, const char *resource, const char *job);
int cu_exists(tfjob_transport *t, const char *ns, const char *resource, const char *name);
int cu_job_exists(tfjob_transport *t, const char *ns, const char *name);
/* uid of an object, caller frees; NULL when absent. */
char *cu_uid(tfjob_transport *t, const char *ns, const char *resource, const char *name);
/* Number of Events with that reason about the job. */
int cu_events(tfjob_transport *t, const char *ns, const char *reason);
/* Poll until expr holds (every 2 ms, at most ms). */
#define CU_WAIT(expr, ms) cu_wait_impl(__extension__({ int64_t cu_dl_ = cu_mono() + (ms); int cu_ok_ = 0; \
	while (!(cu_ok_ = !!(expr)) && cu_mono() < cu_dl_) cu_sleep_ms(2); cu_ok_; }))
int cu_wait_impl(int ok);
/* The controller's recent log lines, kept for a failed CU_WAIT to print (a flake then says what
   the controller was doing). cu_log_ring is a tfjob_log_cb; cu_log_ring_clear starts afresh. */
void cu_log_ring(tfjob_log_level level, const char *message, const char *fields_json, void *payload);
void cu_log_ring_clear(void);
int64_t cu_mono(void);
void cu_sleep_ms(int ms);
#endif
