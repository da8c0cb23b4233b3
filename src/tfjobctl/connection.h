/*
 * tfjobctl: helpers of the commands that talk to a cluster.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOBCTL_CLUSTER_H
#define TFJOBCTL_CLUSTER_H

#include <jansson.h>
#include <stdio.h>
#include <time.h>

#include "tfjobctl.h"

/* getopt_long values of the shared flags ('n' is -n/--namespace). */
enum { CTL_OPT_KUBECONFIG = 0x1000, CTL_OPT_CONTEXT, CTL_OPT_COMPAT, CTL_OPT_TIMEOUT, CTL_OPT_REQUEST_TIMEOUT };

#define CTL_CLUSTER_LONGOPTS                                                   \
	{ "kubeconfig", required_argument, NULL, CTL_OPT_KUBECONFIG },         \
	{ "context", required_argument, NULL, CTL_OPT_CONTEXT },               \
	{ "namespace", required_argument, NULL, 'n' },                         \
	{ "compat", required_argument, NULL, CTL_OPT_COMPAT },                 \
	{ "request-timeout", required_argument, NULL, CTL_OPT_REQUEST_TIMEOUT }

#define CTL_CLUSTER_USAGE                                                                          \
	"  --kubeconfig F  the kubeconfig file (default: $KUBECONFIG, else ~/.kube/config, else\n"       \
	"                  the in-cluster service account)\n"                                            \
	"  --context C     the kubeconfig context (default: current-context)\n"                          \
	"  -n, --namespace N  the namespace (default: the context's, else \"default\")\n"             \
	"  --compat C      'documented' (default) or 'training-operator-1.9'\n"                   \
	"  --request-timeout D  give up on one request after D (e.g. 30s, 1m, 500ms; a bare\n"   \
	"                  number is seconds; 0: the default, 60s); retries may follow\n"

struct ctl_cluster {
	const char *kubeconfig;
	const char *context;
	const char *namespace_name;
	tfjob_compat compat;
	long request_timeout_ms; /* 0: the library's default */
	int bad; /* a shared flag had an invalid value (already reported) */
};

extern const tfjob_resource ctl_tfjobs;
extern const tfjob_resource ctl_events;

/* 1 when ch was a shared flag (stored; cl->bad set when its value is invalid), else 0. */
int ctl_cluster_option(struct ctl_cluster *c, int ch, const char *value);
/* A short option's value as pflag reads it: "-o=json" is "json". */
const char *ctl_flag_value(const char *value);
/* NAME from NAME or TYPE/NAME (TYPE: tfjob, tfjobs, tfjob.kubeflow.org, ..., as kubectl and
 * `get -o name` write it); NULL (reported) for another TYPE. */
const char *ctl_object_name(const char *arg, const char *command);
/* One TFJob named on the command line or by a -f document: its namespace (NULL: -n or the
 * context's) and name. */
struct ctl_target {
	const char *ns, *name;
};
/* The targets of a command: the TFJobs of the -f documents when in holds some (each must have a
 * metadata.name), else the NAMEs argv[optind...]. Reports errors; EXIT_USAGE on failure. The
 * strings are in's and argv's; free() *out. */
int ctl_targets_of(struct ctl_target **out, size_t *n, int argc, char **argv, const struct ctl_inputs *in,
                   const char *command);
/* Connect (tfjob_global_init + the Kubernetes backend); prints errors, returns EXIT_* on failure. */
int ctl_connect(tfjob_transport **out, const struct ctl_cluster *c);
void ctl_disconnect(tfjob_transport *t);
/* Print an API error kubectl's way ("Error from server (NotFound): ...") and free it. EXIT_NEGATIVE
 * for answers of the server, EXIT_USAGE for the rest (configuration, network). */
int ctl_api_fail(tfjob_error *err);
/* Parse JSON the server sent; prints an error and returns NULL when it is not JSON. */
json_t *ctl_parse_json(const char *text);
/* kubectl's age format ("45s", "3m20s", "5h", "12d") of an RFC 3339 time. */
void ctl_age(char *buf, size_t size, const char *timestamp, time_t now);
/* The TFJob's state column: the type of its last condition, or "". */
const char *ctl_job_state(const json_t *job);
/* spec.runPolicy.managedBy when it names another controller than the training operator (which
 * then leaves the job alone: no pods, no status from it), else NULL. */
const char *ctl_job_foreign_manager(const json_t *job);

#endif
