/*
 * libtfjob - the local backend: a TFJob's replicas as processes on this machine.
 * SPDX-License-Identifier: Apache-2.0
 *
 * A tfjob_local is a tiny "kubelet": its Pods are process groups. Creating a Pod runs the
 * `tensorflow` container's command + args (no shell, no image: a container without a command
 * is an error) with its env (plain values only), in its workingDir, in a new process group,
 * with stdout and stderr going to <run_dir>/<pod name>.log. Pod phases come from the
 * processes (Pending -> Running -> Succeeded/Failed), exit codes (signals as 128+n) and restart
 * counts appear in status.containerStatuses as the kubelet reports them; restartPolicy
 * Always/OnFailure restarts in place with the kubelet's backoff; deleting a Pod sends SIGTERM to
 * its process group and SIGKILL after the grace period. Everything else of a Pod (images,
 * volumes, resources, other containers, ...) is reported once as ignored.
 *
 * tfjob_local_transport_new() puts the engine behind the transport interface (transport.h):
 * Pods are the processes; TFJobs, Services and Events are kept in memory. tfjob_local_run() is
 * the controller loop over it: plan (tfjob_plan_new()) -> execute the actions -> wait for a
 * process event or the plan's requeue -> plan again, until the job is finished and its
 * cleanup and TTL are done. Every decision is the planner's; the engine only executes and
 * reports. docs/local.md describes the behaviour and the run directory.
 *
 * Paths: a relative workingDir, and the working directory of a container without one, are
 * resolved against options.base_dir (NULL: the current directory). A relative command path
 * containing '/' is resolved by the process itself against its working directory; a command
 * without '/' is looked up in PATH.
 *
 * Processes see the environment of the calling process, then TFJOB_RUN_DIR (the run
 * directory), TFJOB_POD_NAME and HOSTNAME (the Pod name), then the container's env (which wins).
 *
 * GPUs: a container whose resources ask for nvidia.com/gpu: N (limits, else requests) gets N GPU
 * ids of its own in CUDA_VISIBLE_DEVICES, disjoint from every other running Pod's (a Pod waits,
 * Pending, until enough are free); one without gets CUDA_VISIBLE_DEVICES="" and sees no GPU, as
 * a pod without a GPU limit does. tfjob_local_run() refuses a job that asks for more GPUs than
 * the engine has (TFJOB_EINVAL) before it starts anything.
 *
 * Thread-safety: a tfjob_local and its transport may be used from several threads at once
 * (an internal mutex); tfjob_local_interrupt() is also async-signal-safe. The engine installs no
 * signal handler: it reaps its own children with waitpid() on their pids (never -1), so the
 * embedding program must not set SIGCHLD to SIG_IGN. Each replica runs under a small supervisor
 * process of its own (the engine's child): on Linux it kills the replica and everything the
 * replica started (setsid descendants included) when the replica exits and when the calling
 * process dies, even by SIGKILL; the end of the thread that started it is not the end.
 */
#ifndef TFJOB_LOCAL_H
#define TFJOB_LOCAL_H

#include "common.h"
#include "error.h"
#include "job.h"
#include "transport.h"

TFJOB_BEGIN_DECLS

/** The annotation on each local Pod that holds the process id of its replica (tfjobctl logs, get). */
#define TFJOB_LOCAL_PID_ANNOTATION "local.kubeflow.org/pid"

/**
 * Appended to a replica's log path (<run dir>/<pod>.log) to name its time index: one line
 * "OFFSET MILLISECONDS" each time the engine saw the log grown (the log held OFFSET bytes at
 * that Unix time, in milliseconds). docs/local.md.
 */
#define TFJOB_LOCAL_LOG_TIMES_SUFFIX ".times"

/** Opaque process engine. */
typedef struct tfjob_local tfjob_local;

/**
 * Called for what the engine does and notices, as Kubernetes events about a Pod: reasons
 * "Started", "Exited", "BackOff", "Killing", "Ignored" (a Pod field the local backend does not
 * implement, reported once per field), "FailedToStart". type is "Normal" or "Warning". All
 * strings are borrowed for the duration of the call. Called with the engine's lock held, from
 * the thread that called into the engine: do not call back into the engine.
 */
typedef void (*tfjob_local_event_cb)(const char *pod, const char *type, const char *reason, const char *message,
                                     void *payload);

#define TFJOB_LOCAL_OPTIONS_VERSION 2

/**
 * Options of tfjob_local_new(). Initialise with TFJOB_LOCAL_OPTIONS_INIT or
 * tfjob_local_options_init(); zero means the default, except for grace_period_ms, where 0 means
 * "SIGKILL at once" and the default is -1 (as the initialisers set it). Fields are only ever
 * appended.
 */
typedef struct tfjob_local_options {
	unsigned int version;           /* TFJOB_LOCAL_OPTIONS_VERSION */
	const char *run_dir;            /* required: logs and state go here; created when missing */
	const char *base_dir;           /* relative working directories; NULL: the current directory */
	int64_t backoff_initial_ms;     /* first restart delay of Always/OnFailure; 0: 10000 (kubelet) */
	int64_t backoff_max_ms;         /* restart delay cap (the delay doubles); 0: 300000 (kubelet) */
	int64_t grace_period_ms;        /* < 0 (default): the Pod's terminationGracePeriodSeconds (30 s
	                                   when absent); >= 0: this, for every Pod */
	tfjob_local_event_cb on_event;  /* optional */
	void *event_payload;            /* passed to on_event */
	/* version 2: */
	const char *gpus;               /* GPU ids to hand out ("0,1,3", as CUDA_VISIBLE_DEVICES takes
	                                   them); "": none; NULL: the GPUs of this machine (nvidia-smi -L,
	                                   else /proc/driver/nvidia/gpus), looked for when a job asks */
} tfjob_local_options;

#define TFJOB_LOCAL_OPTIONS_INIT { TFJOB_LOCAL_OPTIONS_VERSION, NULL, NULL, 0, 0, -1, NULL, NULL, NULL }

/** Initialise options of the given version to their defaults. TFJOB_EVERSION for unknown versions, TFJOB_EINVAL for NULL. Thread-safe. */
TFJOB_EXTERN int tfjob_local_options_init(tfjob_local_options *opts, unsigned int version);

/**
 * Make a process engine. The run directory is created (one level) when missing. Nothing is
 * started until a Pod is created. *out is the caller's (tfjob_local_free()).
 * Errors: TFJOB_EINVAL (no run_dir), TFJOB_EVERSION, TFJOB_EIO (the run directory cannot be
 * made, or the wake-up pipe cannot), TFJOB_ENOMEM.
 */
TFJOB_EXTERN int tfjob_local_new(tfjob_local **out, const tfjob_local_options *opts, tfjob_error **err);

/**
 * Terminate every process that is still running (as tfjob_local_shutdown()), reap them and
 * release the engine. Transports made from it must have been freed. Accepts NULL.
 */
TFJOB_EXTERN void tfjob_local_free(tfjob_local *local);

/**
 * A transport (transport.h) whose Pods are this engine's processes; TFJobs, Services and Events
 * live in an in-memory store (the memory backend). Pod create runs the Pod (see the top of
 * this header); Pod delete terminates it (grace period: the delete options', else the
 * engine's); Pod get/list return the Pods with their live status (metadata.annotations
 * "local.kubeflow.org/pid" holds the running process group's id). Pod update, patch and watch
 * fail with TFJOB_ESTATE. The engine must outlive the transport. *out is the caller's
 * (tfjob_transport_free()). Pod create errors: TFJOB_EINVAL (no command, valueFrom/envFrom,
 * no containers; the message names the field), TFJOB_EEXISTS, TFJOB_EIO.
 */
TFJOB_EXTERN int tfjob_local_transport_new(tfjob_transport **out, tfjob_local *local, tfjob_error **err);

/**
 * Address resolver for tfjob_render_options.address_cb (payload: the tfjob_local): writes
 * "127.0.0.1:<port>" where port is a free TCP port of this machine (found by binding port 0),
 * the same for the same (type, index) for the engine's whole life. The tfjob-port of the spec is
 * not used. Returns 0, TFJOB_EIO when no port can be found, TFJOB_EINVAL for a short buffer.
 */
TFJOB_EXTERN int tfjob_local_address(char *out, size_t out_size, const char *type, int64_t index, int32_t port,
                                     void *payload);

/**
 * Do the engine's work and wait for something to happen: start Pending Pods, reap exited
 * processes, restart in place when a backoff has passed, escalate to SIGKILL after a grace
 * period. Returns as soon as a Pod changed (the number of changes, > 0), when timeout_ms passed
 * (0; 0 ms does the work once without waiting; negative waits without limit), or at once when
 * the engine was interrupted (0). A negative TFJOB_E* code on failure.
 */
TFJOB_EXTERN int tfjob_local_poll(tfjob_local *local, int64_t timeout_ms, tfjob_error **err);

/**
 * Mark the engine interrupted and wake tfjob_local_poll(). Async-signal-safe: meant to be
 * called from a SIGINT/SIGTERM handler. tfjob_local_run() then shuts down cleanly; a second
 * interrupt makes the shutdown's grace period 0 (SIGKILL at once). Accepts NULL.
 */
TFJOB_EXTERN void tfjob_local_interrupt(tfjob_local *local);

/** Number of times tfjob_local_interrupt() was called (0 for NULL). Thread-safe. */
TFJOB_EXTERN int tfjob_local_interrupted(const tfjob_local *local);

/**
 * Stop every process as a node shutdown does: SIGTERM to each running process group, SIGKILL
 * after the grace period (0 after a second interrupt), wait until all are reaped. No Pod is
 * restarted or started afterwards; Pods stay listed with their final state (a terminated
 * process is Failed with exit code 128+signal unless it exited 0). Returns the number of
 * processes it stopped, or a negative TFJOB_E* code.
 */
TFJOB_EXTERN int tfjob_local_shutdown(tfjob_local *local, tfjob_error **err);

/** Number of processes (Pods with a live process group) running now (0 for NULL). */
TFJOB_EXTERN size_t tfjob_local_running_count(const tfjob_local *local);

/* ---- The controller loop ---- */

/** How a run ended. */
typedef enum tfjob_local_outcome {
	TFJOB_LOCAL_SUCCEEDED = 0,   /* the Succeeded condition is True */
	TFJOB_LOCAL_FAILED = 1,      /* the Failed condition is True */
	TFJOB_LOCAL_INTERRUPTED = 2  /* tfjob_local_interrupt() stopped it first */
} tfjob_local_outcome;

/** "Succeeded", "Failed", "Interrupted"; "Unknown" otherwise. Static string. */
TFJOB_EXTERN const char *tfjob_local_outcome_name(tfjob_local_outcome outcome);

/** What a progress update is about. */
typedef enum tfjob_local_update {
	TFJOB_LOCAL_UPDATE_STATUS = 0, /* json: the job's new status */
	TFJOB_LOCAL_UPDATE_PODS = 1,   /* json: array of the Pods with their status */
	TFJOB_LOCAL_UPDATE_EVENT = 2   /* json: {"type","reason","message","object","time"} */
} tfjob_local_update;

/** Progress callback of tfjob_local_run(); json is borrowed for the duration of the call. */
typedef void (*tfjob_local_update_cb)(tfjob_local_update what, const char *json, void *payload);

#define TFJOB_LOCAL_RUN_OPTIONS_VERSION 1

/** Options of tfjob_local_run(). Initialise with TFJOB_LOCAL_RUN_OPTIONS_INIT or tfjob_local_run_options_init(). */
typedef struct tfjob_local_run_options {
	unsigned int version;           /* TFJOB_LOCAL_RUN_OPTIONS_VERSION */
	tfjob_compat compat;            /* planner, defaults and validation */
	tfjob_local_update_cb on_update; /* optional */
	void *payload;                  /* passed to on_update */
} tfjob_local_run_options;

#define TFJOB_LOCAL_RUN_OPTIONS_INIT { TFJOB_LOCAL_RUN_OPTIONS_VERSION, TFJOB_COMPAT_DOCUMENTED, NULL, NULL }

/** Initialise options of the given version to their defaults. TFJOB_EVERSION for unknown versions, TFJOB_EINVAL for NULL. Thread-safe. */
TFJOB_EXTERN int tfjob_local_run_options_init(tfjob_local_run_options *opts, unsigned int version);

/**
 * Check that every replica of a job can run locally: its `tensorflow` container has a command,
 * and env has no valueFrom and the container no envFrom; and that the job would run at all
 * (not `spec.runPolicy.suspend`, `managedBy` unset or training-operator's). 0, or TFJOB_EINVAL
 * with a message naming the field, also given by tfjob_error_field()
 * (spec.tfReplicaSpecs[Worker].template.spec.containers[0].command). Pure, re-entrant.
 */
TFJOB_EXTERN int tfjob_local_check(const tfjob_job *job, tfjob_error **err);

/**
 * Run a job to its end on the engine: validate and default a copy (TFJOB_EINVALID with the first
 * field error's message when invalid; TFJOB_EINVAL from tfjob_local_check()), store it (a uid and
 * creationTimestamp are added), then reconcile until it is finished, its cleanup done and its TTL
 * (when set) expired. Processes still running at the end (cleanPodPolicy None/Running left them)
 * are terminated with a "Killing" event: nothing is left behind. On interrupt the processes are
 * stopped (tfjob_local_shutdown()) and *out is TFJOB_LOCAL_INTERRUPTED.
 * The run directory holds, kept up to date: job.json (the TFJob with status), pods.json (the
 * Pods), events.json (the events), plus the logs; once pods.json or events.json reaches 64 KiB
 * (a large job: each Pod holds the whole TF_CONFIG) its rewrites, and the TFJOB_LOCAL_UPDATE_PODS
 * updates with them, are spaced to at most a tenth of the run's time, and the end of the run
 * writes both. Time is the wall clock.
 * *out: the outcome. Errors: the above, any of tfjob_plan_new(), TFJOB_EIO, TFJOB_ESTATE when
 * the job can never finish (every Pod has ended for good, the job is neither Succeeded nor Failed,
 * the planner has nothing to do and no activeDeadlineSeconds: e.g. only PS replicas, which never
 * decide success; a cluster would keep it forever); on error too every process is stopped. Use
 * one engine for one run.
 */
TFJOB_EXTERN int tfjob_local_run(tfjob_local_outcome *out, tfjob_local *local, const tfjob_job *job,
                                 const tfjob_local_run_options *opts, tfjob_error **err);

/**
 * Make a fresh run directory, as `tfjobctl run` does: with dir, that directory and its parents
 * (one that already holds a run, a job.json, is refused with TFJOB_EEXISTS: a second run there
 * would append to the first one's logs); without (NULL or ""), a new
 * "<name>-<YYYYMMDD-HHMMSS>[-N]" under ./tfjob-runs, else under $TMPDIR/tfjob-runs (/tmp), name
 * being the job's name or generateName (trailing '-' dropped; NULL: "tfjob"). *out: its absolute
 * path, the caller's (tfjob_free()). Errors: TFJOB_EINVAL (NULL out, a name with '/'),
 * TFJOB_EEXISTS, TFJOB_EIO (cannot be made: the message says why). Thread-safe (uses the
 * current directory and $TMPDIR).
 */
TFJOB_EXTERN int tfjob_local_run_dir(char **out, const char *dir, const char *name, tfjob_error **err);

/**
 * What happened to each replica of a local run, read from its run directory (job.json,
 * pods.json, replicas.json and the logs), as one JSON object that tfjobctl and the bindings show:
 * {"name", "outcome" ("Succeeded", "Failed" or "Unfinished"), "runDir", "replicas": [...]}, one
 * entry per Pod the run created, in creation order: "name" ("worker-1"), "pod", "replicaType",
 * "replicaIndex", "phase" (the Pod's, "Deleted" once it is gone), "exits", "failures" (non-zero
 * exits the engine did not cause), "exitCode" (the last), "failedExitCode" and "failedAt" (the
 * last failure), "stoppedBy" ("deletion", "the end of the run": the last exit was the engine
 * stopping it), "deleted" (why: "deleted by cleanPodPolicy Running as the job finished", ...),
 * "restartAt" and "backoffSeconds" (waiting to restart in place), "restarts", "log" (the full
 * log's path), "tail" (its last tail_lines lines when the replica failed, else []) and
 * "summary", one sentence: "worker-1 failed with exit 1, then deleted by cleanPodPolicy All as
 * the job finished", "worker-0 exited 1 four times, next restart in 2m40s".
 * tail_lines < 0: 20; at most 10000 (only the log's last 256 KiB are read). May be called while
 * the run goes on (the files are replaced atomically). *out is the caller's (tfjob_free()).
 * Errors: TFJOB_EINVAL (NULL out or run_dir), TFJOB_ENOTFOUND (no readable job.json),
 * TFJOB_ENOMEM. Thread-safe.
 */
TFJOB_EXTERN int tfjob_local_report(char **out, const char *run_dir, int64_t tail_lines, tfjob_error **err);

TFJOB_END_DECLS

#endif
