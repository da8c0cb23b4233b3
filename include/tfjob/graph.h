/*
 * libtfjob - the replica graph of a TFJob, TF_CONFIG, and rendering of its Pods, Services and
 * PodGroup.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Every function here reads a job whose defaults have been applied (tfjob_job_apply_defaults());
 * a job without defaults is read as the defaults would leave it where that is unambiguous
 * (absent replicas = 1), and fields of the wrong JSON type are reported as errors naming the
 * field (TFJOB_ESCHEMA), never trusted.
 *
 * Canonical order of replica types: by the lower-case type name, byte-wise ascending, i.e.
 * chief, evaluator, master, ps, worker. This is the order of the graph, of the keys of
 * TF_CONFIG's "cluster" and of the children in tfjob_render_all().
 *
 * Bounds: a job whose replicas over all types exceed TFJOB_MAX_REPLICAS is refused with
 * TFJOB_ELIMIT; a negative replica count with TFJOB_ESCHEMA.
 *
 * Thread-safety: all functions are re-entrant; a tfjob_graph is immutable once built and may be
 * read from several threads at once. Callbacks in the options are called from the calling thread
 * only, during the call.
 */
#ifndef TFJOB_GRAPH_H
#define TFJOB_GRAPH_H

#include "common.h"
#include "error.h"
#include "job.h"

TFJOB_BEGIN_DECLS

/** Largest number of replicas (over all types) of a job this library renders. */
#define TFJOB_MAX_REPLICAS 100000

/** Gang scheduling of the children. */
typedef enum tfjob_gang_scheduler {
	TFJOB_GANG_NONE = 0,              /* no gang scheduling (default) */
	TFJOB_GANG_VOLCANO = 1,           /* volcano: scheduling.volcano.sh/v1beta1 PodGroup */
	TFJOB_GANG_SCHEDULER_PLUGINS = 2  /* scheduler-plugins: scheduling.x-k8s.io/v1alpha1 PodGroup */
} tfjob_gang_scheduler;

/**
 * Address resolver: write the NUL-terminated "host:port" of replica (type, index) into out
 * (out_size bytes, at least 256). type is the lower-case replica type ("worker"); port is the
 * type's tfjob-port. Return 0, or a negative TFJOB_E* code that aborts the call with that code.
 * Called once per replica while a graph is built.
 */
typedef int (*tfjob_address_cb)(char *out, size_t out_size, const char *type, int64_t index, int32_t port,
                                void *payload);

/**
 * Priority class lookup for the PodGroup's minResources: set *out to the value of the
 * PriorityClass named name and return 0, or return TFJOB_ENOTFOUND (priority 0 is used).
 * name is "" for replicas without spec.priorityClassName.
 */
typedef int (*tfjob_priority_cb)(int32_t *out, const char *name, void *payload);

#define TFJOB_RENDER_OPTIONS_VERSION 1

/**
 * Options for the graph, TF_CONFIG and rendering. Initialise with TFJOB_RENDER_OPTIONS_INIT or
 * tfjob_render_options_init(); a zero-initialised field means its default. Fields are only ever
 * appended.
 */
typedef struct tfjob_render_options {
	unsigned int version;            /* TFJOB_RENDER_OPTIONS_VERSION */
	tfjob_compat compat;             /* TFJOB_COMPAT_DOCUMENTED */
	const char *cluster_domain;      /* NULL/"": "{name}.{ns}.svc:{port}"; else "{name}.{ns}.svc.{domain}:{port}" */
	const char *default_namespace;   /* used when metadata.namespace is absent; NULL = "default" */
	int exclude_evaluator;           /* non-zero: leave the evaluator out of TF_CONFIG's cluster (v1.9 lists it) */
	tfjob_address_cb address_cb;     /* NULL: the DNS names above */
	void *address_payload;           /* passed to address_cb */
	tfjob_gang_scheduler gang_scheduler; /* TFJOB_GANG_NONE */
	const char *scheduler_name;      /* NULL: "volcano" or "scheduler-plugins-scheduler" */
	tfjob_priority_cb priority_cb;   /* NULL: every priority is 0 */
	void *priority_payload;          /* passed to priority_cb */
} tfjob_render_options;

#define TFJOB_RENDER_OPTIONS_INIT \
	{ TFJOB_RENDER_OPTIONS_VERSION, TFJOB_COMPAT_DOCUMENTED, NULL, NULL, 0, NULL, NULL, TFJOB_GANG_NONE, NULL, NULL, NULL }

/** Initialise options of the given version to their defaults. TFJOB_EVERSION for unknown versions, TFJOB_EINVAL for NULL. */
TFJOB_EXTERN int tfjob_render_options_init(tfjob_render_options *opts, unsigned int version);

/* ---- Replica graph ---- */

/** Opaque, immutable replica graph of a job. */
typedef struct tfjob_graph tfjob_graph;

/**
 * Build the replica graph of a (defaulted) job: its replica types in canonical order with their
 * counts, ports, restart policies, child names and addresses. opts may be NULL (defaults); the
 * graph copies what it needs, so the job and opts may change or go away afterwards.
 * On success *out is owned by the caller (tfjob_graph_free()).
 * Errors: TFJOB_EINVAL (NULL arguments, metadata.name missing, two types with the same lower-case
 * name), TFJOB_ESCHEMA (a field of the wrong JSON type or a negative count; the message names the
 * field), TFJOB_ELIMIT (more than TFJOB_MAX_REPLICAS replicas), TFJOB_EVERSION, TFJOB_ENOMEM, or
 * the code returned by the address callback.
 */
TFJOB_EXTERN int tfjob_graph_new(tfjob_graph **out, const tfjob_job *job, const tfjob_render_options *opts,
                                 tfjob_error **err);

/** Release a graph. Accepts NULL. */
TFJOB_EXTERN void tfjob_graph_free(tfjob_graph *graph);

/** Number of replica types (0 for NULL). */
TFJOB_EXTERN size_t tfjob_graph_type_count(const tfjob_graph *graph);

/** The t-th replica type in canonical order, spelled as its spec.tfReplicaSpecs key; NULL when out of range. Borrowed from the graph. */
TFJOB_EXTERN const char *tfjob_graph_type(const tfjob_graph *graph, size_t t);

/**
 * Position of a replica type (exact key, else case-insensitive match) in the canonical order.
 * 0 and *out set, TFJOB_ENOTFOUND when the job has no such type, TFJOB_EINVAL for NULL arguments.
 */
TFJOB_EXTERN int tfjob_graph_find_type(size_t *out, const tfjob_graph *graph, const char *type);

/** Replica count of the t-th type (-1 when out of range). */
TFJOB_EXTERN int64_t tfjob_graph_replicas(const tfjob_graph *graph, size_t t);

/** The tfjob-port of the t-th type's `tensorflow` container, 2222 when it has none (-1 when out of range). */
TFJOB_EXTERN int32_t tfjob_graph_port(const tfjob_graph *graph, size_t t);

/** The restartPolicy of the t-th type as written in the spec (NULL when absent or out of range). Borrowed. */
TFJOB_EXTERN const char *tfjob_graph_restart_policy(const tfjob_graph *graph, size_t t);

/** Total replicas over all types. */
TFJOB_EXTERN int64_t tfjob_graph_total_replicas(const tfjob_graph *graph);

/** 1 when the job is distributed (replicas over Chief, Evaluator, Master, PS and Worker != 1), else 0. */
TFJOB_EXTERN int tfjob_graph_is_distributed(const tfjob_graph *graph);

/**
 * 1 when replica (t, index) has the master role (any Chief/Master replica when the job has such a
 * type, else Worker 0), else 0.
 */
TFJOB_EXTERN int tfjob_graph_is_master(const tfjob_graph *graph, size_t t, int64_t index);

/**
 * The child (Pod and Service) name of replica (t, index): "{job}-{type lower}-{index}" with every
 * '/' replaced by '-'. Borrowed from the graph; NULL when t or index is out of range.
 */
TFJOB_EXTERN const char *tfjob_graph_child_name(const tfjob_graph *graph, size_t t, int64_t index);

/** The address ("host:port") of replica (t, index), as listed in TF_CONFIG. Borrowed; NULL when out of range. */
TFJOB_EXTERN const char *tfjob_graph_address(const tfjob_graph *graph, size_t t, int64_t index);

/**
 * TF_CONFIG of replica (t, index) (see docs/cluster.md for the format). *out is a new string
 * owned by the caller (tfjob_free()); it is "" when the job is not distributed.
 * Errors: TFJOB_EINVAL (NULL arguments, t or index out of range), TFJOB_ENOMEM. O(output) time.
 */
TFJOB_EXTERN int tfjob_graph_tf_config(char **out, const tfjob_graph *graph, size_t t, int64_t index,
                                       tfjob_error **err);

/* ---- One-call helpers (build a graph internally) ---- */

/**
 * TF_CONFIG of replica (type, index) of a job, byte-compatible with training-operator v1.9
 * (documented mode: with defects 7 and 8 fixed). type is matched exactly, else case-insensitively.
 * *out is owned by the caller (tfjob_free()); "" when the job is not distributed.
 * In training-operator-1.9 mode an index at or beyond the type's replicas gives the TF_CONFIG v1.9
 * writes into the pods it creates there (defect 7): the spec's cluster and that task index.
 * Errors: as tfjob_graph_new(), plus TFJOB_ENOTFOUND (no such type), TFJOB_EINVAL (index out of
 * range; in v1.9 mode only a negative index) and TFJOB_ESTATE (v1.9 mode, an index beyond the
 * replicas of a PS or worker under enableDynamicWorker, which has no address: v1.9 panics there).
 */
TFJOB_EXTERN int tfjob_tf_config(char **out, const tfjob_job *job, const char *type, int64_t index,
                                 const tfjob_render_options *opts, tfjob_error **err);

/**
 * The complete Pod of replica (type, index) as JSON text (flags: TFJOB_JSON_*): name, namespace,
 * labels, annotations and finalizers of the template, owner reference, the template's spec with
 * TF_CONFIG appended to the `tensorflow` container's env (when distributed), restartPolicy from
 * the replica spec (ExitCode -> Never) and gang-scheduling decoration per opts.
 * *out is owned by the caller (tfjob_free()). Errors as tfjob_tf_config().
 */
TFJOB_EXTERN int tfjob_render_pod(char **out, const tfjob_job *job, const char *type, int64_t index,
                                  const tfjob_render_options *opts, unsigned int flags, tfjob_error **err);

/**
 * The headless Service (clusterIP None) of replica (type, index) as JSON text: selector and
 * labels = operator-name, job-name, replica-type, replica-index; one port per named port of the
 * `tensorflow` container. *out is owned by the caller (tfjob_free()). Errors as tfjob_tf_config().
 */
TFJOB_EXTERN int tfjob_render_service(char **out, const tfjob_job *job, const char *type, int64_t index,
                                      const tfjob_render_options *opts, unsigned int flags, tfjob_error **err);

/**
 * Every child of a new job as one JSON text {"pods":[...],"services":[...]}, in canonical type
 * order then index order: the children the planner creates for it. In training-operator-1.9
 * mode a type with replicas: 0 has index 0 too (v1.9 creates it; its pod's TF_CONFIG is that of
 * the spec, as the planner writes it). The output is O(replicas^2) bytes when distributed (each pod carries
 * the whole cluster). *out is owned by the caller (tfjob_free()). Errors as tfjob_graph_new().
 */
TFJOB_EXTERN int tfjob_render_all(char **out, const tfjob_job *job, const tfjob_render_options *opts,
                                  unsigned int flags, tfjob_error **err);

/**
 * tfjob_render_all() written piece by piece to write(data, len, payload) instead of into one
 * string: each child is rendered, written and released in turn, so memory stays that of the
 * graph and one child however large the output (a 10,000-worker job writes about 3.5 GB). The
 * bytes are exactly those of tfjob_render_all() with the same flags. One child of each type is
 * rendered before the first byte is written, so a job that cannot be rendered writes nothing.
 * Errors as tfjob_render_all(), TFJOB_EINVAL (NULL job or write), TFJOB_EIO when write returns
 * non-zero (nothing more is written). Re-entrant.
 */
TFJOB_EXTERN int tfjob_render_all_write(const tfjob_job *job, const tfjob_render_options *opts, unsigned int flags,
                                        tfjob_write_cb write, void *payload, tfjob_error **err);

/**
 * The PodGroup for gang scheduling (opts->gang_scheduler must not be TFJOB_GANG_NONE: TFJOB_EINVAL):
 * name and namespace of the job, the job's annotations, owner reference, and spec minMember
 * (runPolicy.schedulingPolicy.minAvailable, else total replicas), queue ("default") and
 * priorityClassName (volcano), scheduleTimeoutSeconds (scheduler-plugins) and minResources
 * (schedulingPolicy.minResources, else the requests -- or limits where a container has no
 * requests -- of the first minMember replicas taken by descending priority, summed as Kubernetes
 * quantities). *out is owned by the caller (tfjob_free()). Errors as tfjob_graph_new(), plus
 * TFJOB_ESCHEMA for a malformed quantity (the message names the field).
 */
TFJOB_EXTERN int tfjob_render_pod_group(char **out, const tfjob_job *job, const tfjob_render_options *opts,
                                        unsigned int flags, tfjob_error **err);

TFJOB_END_DECLS

#endif
