/*
 * The replica graph (internal layout) shared by cluster.c, render.c and podgroup.c.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_INTERNAL_CLUSTER_H
#define TFJOB_INTERNAL_CLUSTER_H

#include <jansson.h>

#include "util/common.h"

/* One replica type of the graph. */
typedef struct tfjob__rtype {
	char *key;            /* spec.tfReplicaSpecs key */
	char *lower;          /* lower-case type */
	int64_t replicas;
	int32_t port;
	char *restart_policy; /* NULL when absent */
	bool master_type;     /* Chief/Master of a job that has one */
	char *names;          /* child names, NUL-separated; name i at names + name_off[i] */
	size_t *name_off;     /* [replicas] */
	char *addrs;          /* addresses, NUL-separated; address i at addrs + addr_off[i] */
	size_t *addr_off;     /* [replicas] */
	char *quoted;         /* "a0","a1",... JSON-escaped, comma-separated */
	size_t *qoff;         /* [replicas + 1]: item i is quoted[qoff[i] .. qoff[i+1] - 1) */
	/* Bare graphs (TF_CONFIG of one replica, no address callback) keep only the JSON-escaped
	 * parts around the index of an address: item i is "qprefix" i "qsuffix", quoted. */
	char *qprefix, *qsuffix;
	size_t qplen, qslen;
} tfjob__rtype;

#define TFJOB__RT_NAME(r, i) ((r)->names + (r)->name_off[(i)])
#define TFJOB__RT_ADDR(r, i) ((r)->addrs + (r)->addr_off[(i)])

struct tfjob_graph {
	tfjob_compat compat;
	char *name;           /* metadata.name */
	char *label_name;     /* name with '/' replaced by '-' */
	char *namespace;
	char *uid;            /* "" when absent */
	bool distributed;
	bool dynamic_worker;
	int64_t total;
	size_t ntypes;
	tfjob__rtype *types;  /* canonical order */
	char *cluster;        /* {"chief":[...],...} of the dense TF_CONFIG */
	size_t cluster_len;
	long ps;              /* index of the "ps" type, or -1 */
	bool light;           /* built for TF_CONFIG only: no names/addrs arrays */
	bool exclude_evaluator; /* the render option, for a bare graph's cluster */
};

/* Options with defaults filled in and the version checked. opts may be NULL. */
int tfjob__render_options_resolve(tfjob_render_options *dst, const tfjob_render_options *opts, tfjob_error **err);

/* Build a graph with resolved options. light: only what TF_CONFIG needs (no child names or addresses). */
int tfjob__graph_build(tfjob_graph **out, const tfjob_job *job, const tfjob_render_options *opts, bool light,
                       tfjob_error **err);

/* Type lookup by key: exact, else case-insensitive. TFJOB_ENOTFOUND with a message. */
int tfjob__graph_lookup(size_t *out, const tfjob_graph *g, const char *type, tfjob_error **err);

/* Check (t, index): TFJOB_EINVAL with a message when out of range. */
int tfjob__graph_check(const tfjob_graph *g, size_t t, int64_t index, tfjob_error **err);

/* TF_CONFIG text of (t, index) into a new string with its length; "" when not distributed. */
/*
 * TF_CONFIG for an index at or beyond the type's replicas, as v1.9 writes it into the pods it
 * creates there (defect 7 and stray indices): the cluster of the spec, the task index as given.
 * Within range it is tfjob__graph_tf_config(); "" when the job is not distributed. The sparse form of a PS or worker needs the
 * replica's own address, which does not exist there (v1.9 panics): TFJOB_ESTATE.
 */
int tfjob__graph_tf_config_beyond(char **out, const tfjob_graph *g, size_t t, int64_t index, tfjob_error **err);

int tfjob__graph_tf_config(char **out, size_t *out_len, const tfjob_graph *g, size_t t, int64_t index,
                           tfjob_error **err);

/* Field path of a replica spec: "spec.tfReplicaSpecs[KEY]" + suffix, into buf. */
const char *tfjob__rspec_path(char *buf, size_t size, const char *key, const char *suffix);

/* Render with a prebuilt graph (opts resolved). t is the graph's type index. */
int tfjob__render_pod_graph(json_t **out, const tfjob_job *job, const tfjob_graph *g, const tfjob_render_options *opts,
                            size_t t, int64_t index, tfjob_error **err);
int tfjob__render_service_graph(json_t **out, const tfjob_job *job, const tfjob_graph *g, size_t t, int64_t index,
                                tfjob_error **err);
/* The owner reference object for a job's children. */
json_t *tfjob__owner_reference(const tfjob_graph *g);
/* The controller owner reference to the TFJob of that name and uid ("" when it has none). NULL on out of memory. */
json_t *tfjob__owner_reference_to(const char *name, const char *uid);

/* ---- render.c: children at or beyond a type's replicas ---- */

/* How many children (indices 0 ..) a type has when none is observed: replicas; in
 * training-operator-1.9 mode at least 1 (v1.9 creates index 0 of a type with replicas: 0). */
int64_t tfjob__graph_min_slots(tfjob_compat compat, int64_t replicas);

/*
 * The pod (pod: true) or service of (key, index) of a defaulted job with `replicas` of that
 * type, as v1.9 creates it: within replicas as tfjob__render_pod/_service; beyond, from a copy
 * with the type widened to index + 1, the pod's TF_CONFIG that of the real spec.
 */
int tfjob__render_child(json_t **out, const tfjob_job *job, const char *key, int64_t index, int64_t replicas, bool pod,
                        const tfjob_render_options *opts, tfjob_error **err);

/* The PodGroup of tfjob_render_pod_group() as a new JSON object (opts as given there). */
int tfjob__render_pod_group(json_t **out, const tfjob_job *job, const tfjob_render_options *opts, tfjob_error **err);

#endif
