/*
 * libtfjob - the Kubernetes REST backend (libcurl).
 * SPDX-License-Identifier: Apache-2.0
 *
 * Finds its configuration as kubectl does: an explicit kubeconfig path, else $KUBECONFIG (a
 * ':'-separated list of files merged first-wins per key, relative paths resolved against each
 * file's directory), else ~/.kube/config, else the in-cluster service account. Supports
 * certificate-authority(-data), client-certificate/key (file or data; handed to libcurl as
 * memory blobs, never written to disk), token, tokenFile (re-read every minute and on 401), exec
 * credential plugins (client.authentication.k8s.io/v1 and v1beta1; cached until expiry, re-run
 * on 401), insecure-skip-tls-verify, tls-server-name and proxy-url. A user with an auth-provider
 * (gcp, azure, oidc, ...) is refused with TFJOB_ESCHEMA: use an exec plugin instead. Files
 * (kubeconfigs, certificates, keys, token files) are read up to 16 MiB (docs/limits.md).
 *
 * HTTP: connections, DNS and TLS sessions are shared; client-side rate limit (token bucket,
 * QPS/burst); retries with exponential backoff and jitter on 429, 5xx and network errors,
 * honouring Retry-After; a create is never retried blindly (after an ambiguous failure the
 * object is read back first). Watches stream, reconnect from the last resourceVersion with
 * backoff, and report TFJOB_EGONE (relist) on 410.
 *
 * Only available when the library was built with the transport (libcurl); otherwise
 * tfjob_kube_transport_new() returns TFJOB_ESTATE. Tokens, keys and passwords never appear in
 * error messages. Requires tfjob_global_init().
 */
#ifndef TFJOB_KUBE_H
#define TFJOB_KUBE_H

#include "common.h"
#include "error.h"
#include "transport.h"

TFJOB_BEGIN_DECLS

/** Where the configuration comes from. */
typedef enum tfjob_kube_source {
	TFJOB_KUBE_SOURCE_AUTO = 0,       /* kubeconfig (path, $KUBECONFIG, ~/.kube/config), else in-cluster */
	TFJOB_KUBE_SOURCE_KUBECONFIG = 1, /* kubeconfig only */
	TFJOB_KUBE_SOURCE_IN_CLUSTER = 2  /* the pod's service account only */
} tfjob_kube_source;

#define TFJOB_KUBE_OPTIONS_VERSION 1

/** Options of the Kubernetes backend. Initialise with TFJOB_KUBE_OPTIONS_INIT; 0/NULL mean the default. */
typedef struct tfjob_kube_options {
	unsigned int version;          /* TFJOB_KUBE_OPTIONS_VERSION */
	tfjob_kube_source source;      /* TFJOB_KUBE_SOURCE_AUTO */
	const char *kubeconfig;        /* explicit file (--kubeconfig); overrides $KUBECONFIG */
	const char *context;           /* NULL: current-context */
	const char *namespace_name;    /* NULL: the context's namespace, else "default" */
	const char *in_cluster_dir;    /* NULL: /var/run/secrets/kubernetes.io/serviceaccount */
	double qps;                    /* 0: 5 requests per second (negative: no limit) */
	int burst;                     /* 0: 10 */
	int64_t connect_timeout_ms;    /* 0: 10 s */
	int64_t request_timeout_ms;    /* per request, not watches; 0: 60 s */
	int max_retries;               /* 0: 5; negative: none */
	int64_t retry_base_ms;         /* first backoff step; 0: 200 ms (doubles, with jitter, up to 30 s) */
	const char *user_agent;        /* NULL: "libtfjob/VERSION" */
} tfjob_kube_options;

#define TFJOB_KUBE_OPTIONS_INIT { TFJOB_KUBE_OPTIONS_VERSION, TFJOB_KUBE_SOURCE_AUTO, NULL, NULL, NULL, NULL, \
                                  0, 0, 0, 0, 0, 0, NULL }

/** Initialise kube options of the given version to their defaults. TFJOB_EVERSION for unknown versions. */
TFJOB_EXTERN int tfjob_kube_options_init(tfjob_kube_options *opts, unsigned int version);

/**
 * Load the configuration and make a transport. opts may be NULL. *out is the caller's
 * (tfjob_transport_free()). Errors: TFJOB_ENOTFOUND (no configuration found, unknown context,
 * cluster or user), TFJOB_EPARSE (a kubeconfig that is not YAML), TFJOB_ESCHEMA (bad fields),
 * TFJOB_EIO (unreadable file), TFJOB_ELIMIT (a file over 16 MiB, or a kubeconfig past the parse
 * limits), TFJOB_ESTATE (built without libcurl), TFJOB_EVERSION, TFJOB_ENOMEM. No network traffic happens here. Thread-safe.
 * The proxy environment variables (https_proxy, no_proxy, ...) are read here, once, not per request.
 */
TFJOB_EXTERN int tfjob_kube_transport_new(tfjob_transport **out, const tfjob_kube_options *opts,
                                          tfjob_error **err);

/** 1 when t is a Kubernetes transport, else 0. */
TFJOB_EXTERN int tfjob_kube_transport_is(const tfjob_transport *t);

/** The API server URL in use ("https://10.0.0.1:6443"), or NULL for other transports. Borrowed. */
TFJOB_EXTERN const char *tfjob_kube_transport_server(const tfjob_transport *t);

/* ---- Container logs ---- */

#define TFJOB_POD_LOG_OPTIONS_VERSION 1

/** Options of tfjob_kube_pod_log(), the API server's PodLogOptions. Initialise with TFJOB_POD_LOG_OPTIONS_INIT. */
typedef struct tfjob_pod_log_options {
	unsigned int version;    /* TFJOB_POD_LOG_OPTIONS_VERSION */
	const char *container;   /* NULL: the pod's only container (the server refuses a pod with several) */
	int follow;              /* non-zero: stream until the container ends or the callback stops it */
	int previous;            /* non-zero: the log of the container's previous instance (before its restart) */
	int timestamps;          /* non-zero: each line begins with the RFC 3339 time the runtime recorded */
	int64_t tail_lines;      /* >= 0: only the last N lines; -1 (default): all */
	int64_t since_seconds;   /* > 0: only the lines of the last N seconds; 0: unset */
	const char *since_time;  /* RFC 3339: only the lines from then; NULL: unset (not with since_seconds) */
	int64_t limit_bytes;     /* > 0: at most N bytes; 0: no limit */
} tfjob_pod_log_options;

#define TFJOB_POD_LOG_OPTIONS_INIT { TFJOB_POD_LOG_OPTIONS_VERSION, NULL, 0, 0, 0, -1, 0, NULL, 0 }

/** Initialise pod log options of the given version to their defaults. TFJOB_EVERSION for unknown versions. */
TFJOB_EXTERN int tfjob_pod_log_options_init(tfjob_pod_log_options *opts, unsigned int version);

/**
 * Receives a log's bytes as they arrive (borrowed for the call; lines may be cut anywhere), and
 * len 0 (data NULL) about once a second while a followed log is silent. Return 0 to go on,
 * non-zero to stop reading.
 */
typedef int (*tfjob_pod_log_cb)(const char *data, size_t len, void *payload);

/**
 * Read a container's log through the API server, as kubectl logs does: GET
 * /api/v1/namespaces/NS/pods/POD/log with opts (NULL: the defaults), the server fetching it
 * from the pod's node. ns NULL: the transport's namespace. The bytes go to on_data as they come
 * (nothing is kept in memory); with opts->follow the call returns when the container has ended
 * and the server closed the stream, or when on_data returned non-zero (0 then). No retry once
 * bytes were delivered; before, a 401 refreshes the credentials once. Errors as the other verbs
 * (TFJOB_ENOTFOUND: no such pod; TFJOB_EINVAL (400): e.g. several containers and none named, or a
 * container that has not started, with the server's message), TFJOB_ENETWORK, TFJOB_ETIMEOUT
 * (the request timeout applies unless following), TFJOB_EINVAL for a transport that is not a
 * Kubernetes one or bad arguments, TFJOB_ESTATE when built without libcurl. Thread-safe; on_data
 * runs on the calling thread.
 */
TFJOB_EXTERN int tfjob_kube_pod_log(tfjob_transport *t, const char *ns, const char *pod,
                                    const tfjob_pod_log_options *opts, tfjob_pod_log_cb on_data, void *payload,
                                    tfjob_error **err);

TFJOB_END_DECLS

#endif
