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

TFJOB_END_DECLS

#endif
