/*
 * Internal declarations of the Kubernetes backend (configuration, credentials, HTTP). Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_TRANSPORT_KUBE_INTERNAL_H
#define TFJOB_TRANSPORT_KUBE_INTERNAL_H

#include <curl/curl.h>
#include <pthread.h>

#include "tfjob/kube.h"
#include "transport/internal.h"

/* users[].user.exec of a kubeconfig. */
struct tfjob__exec_config {
	char *api_version;
	char *command;
	char **args;
	size_t nargs;
	char **env; /* "NAME=value" */
	size_t nenv;
	char *install_hint;
	int provide_cluster_info;
};

/* A resolved configuration: one cluster, one user, one namespace. */
struct tfjob__kube_config {
	char *server;
	char *ca_data; /* PEM bytes, from certificate-authority-data or the certificate-authority file */
	size_t ca_len;
	int insecure;
	char *tls_server_name;
	char *proxy_url;
	char *cert_data; /* client certificate PEM */
	size_t cert_len;
	char *key_data;  /* client key PEM */
	size_t key_len;
	char *token;
	char *token_file;
	char *username;
	char *password;
	struct tfjob__exec_config *exec;
	char *namespace_name;
	char *source; /* where it came from, for messages ("kubeconfig /x/y", "in-cluster") */
};

void tfjob__kube_config_clear(struct tfjob__kube_config *c);
void tfjob__exec_config_free(struct tfjob__exec_config *e);

/* Largest file read by tfjob__read_file(): kubeconfigs, certificates, keys, token files. */
#define TFJOB__MAX_FILE_BYTES ((size_t)16 * 1024 * 1024)

/*
 * Read a whole file into a NUL-terminated buffer. TFJOB_EIO, or TFJOB_ELIMIT when it is larger
 * than TFJOB__MAX_FILE_BYTES (the message names the path).
 */
int tfjob__read_file(char **out, size_t *len, const char *path, tfjob_error **err);

/* Base64 (standard alphabet, padding optional, white space ignored). TFJOB_ESCHEMA when invalid. */
int tfjob__base64_decode(char **out, size_t *len, const char *text, const char *what, tfjob_error **err);
char *tfjob__base64_encode(const char *data, size_t len);

/*
 * Load kubeconfig files: explicit (a path, or NULL for $KUBECONFIG, else ~/.kube/config) and
 * resolve the context (NULL: current-context). TFJOB_ENOTFOUND when no file exists (found = 0).
 */
int tfjob__kubeconfig_load(struct tfjob__kube_config *out, const char *explicit_path, const char *context,
                           tfjob_error **err);

/* The in-cluster configuration from the environment and dir (NULL: the standard directory). */
int tfjob__incluster_load(struct tfjob__kube_config *out, const char *dir, tfjob_error **err);

/* Credentials from an exec plugin. */
struct tfjob__exec_result {
	char *token;
	char *cert_data;
	size_t cert_len;
	char *key_data;
	size_t key_len;
	int64_t expiry; /* Unix seconds; 0: does not expire */
};

void tfjob__exec_result_clear(struct tfjob__exec_result *r);

/* Run the plugin (no shell; our own environment is not changed). cluster may be NULL. */
int tfjob__exec_credential_run(struct tfjob__exec_result *out, const struct tfjob__exec_config *exec,
                               const struct tfjob__kube_config *cluster, tfjob_error **err);

/* Token bucket. */
struct tfjob__ratelimit {
	pthread_mutex_t mu;
	double qps;   /* <= 0: unlimited */
	double burst;
	double tokens;
	int64_t last_ms;
};

void tfjob__ratelimit_init(struct tfjob__ratelimit *rl, double qps, int burst);
/* Milliseconds the caller must wait before its request (a token is reserved). */
int64_t tfjob__ratelimit_reserve(struct tfjob__ratelimit *rl);
void tfjob__ratelimit_destroy(struct tfjob__ratelimit *rl);

/* The client shared by every request of a kube transport. */
/* Idle easy handles a transport keeps for reuse: one per thread that sends requests at once
 * (controller workers, the Event writer, watches) is enough; beyond, handles are freed. */
#define TFJOB__HTTP_POOLED_HANDLES 16

struct tfjob__kube {
	struct tfjob__kube_config cfg;
	char *url_base;     /* scheme://host:port[/prefix] as used in URLs (tls-server-name applied) */
	char *connect_to;   /* CURLOPT_CONNECT_TO entry for tls-server-name, or NULL */
	char *host_header;  /* with tls-server-name: "Host: " the server's own host[:port], or NULL */
	char *user_agent;
	/* The proxy for every request, read once (setup_proxy() in kube.c): kubeconfig's
	   proxy-url, else the environment's for the server's scheme, else "" (none); and the hosts
	   that bypass it ("" when none). libcurl would read the environment at every request. */
	char *proxy;
	char *no_proxy;
	CURLSH *share;
	pthread_mutex_t share_locks[CURL_LOCK_DATA_LAST];
	struct tfjob__ratelimit rl;
	/* Events' own budget (same QPS and burst), as a controller's event broadcaster has its own
	   client: Events never wait behind, nor delay, the writes they report. */
	struct tfjob__ratelimit events_rl;
	int rl_ready;
	int64_t connect_timeout_ms, request_timeout_ms, retry_base_ms;
	int max_retries;
	/* Credentials that change: guarded by auth_mu. */
	pthread_mutex_t auth_mu;
	char *token;            /* current bearer token (static, from tokenFile, or from exec) */
	int64_t token_read_ms;  /* when tokenFile was last read */
	struct tfjob__exec_result exec_cred;
	int exec_valid;
	/* Easy handles kept between requests (tfjob__http_easy_done): a new handle costs libcurl a
	   multi handle of its own, with a socket pair and its system calls, at every request. */
	pthread_mutex_t pool_mu;
	CURL *pool[TFJOB__HTTP_POOLED_HANDLES];
	size_t pooled;
};

/* Connections the shared connection cache may hold, in use or idle. libcurl counts the open
 * watch streams against this too and, past its default of 5, closes an idle connection whenever
 * a request ends: with 4 controller threads beside the watches nearly every request paid a new
 * TLS handshake (OpenSSL then took a third of the operator's CPU, 3.8x that of 1 thread). */
#define TFJOB__HTTP_MAX_CONNECTIONS 64L

/* Largest response body kept (a list of 1,000 pods is about 32 MB). */
#define TFJOB__HTTP_MAX_BODY ((size_t)256 * 1024 * 1024)

/* One HTTP exchange. */
struct tfjob__http_response {
	long status;           /* 0 when no response */
	long status_line;      /* the code of the latest status line, set as the headers arrive (0: none
	                          yet): a streamed answer is told an error by it before its end */
	char *body;
	size_t len;
	size_t cap;            /* bytes allocated for body */
	int too_large;         /* the body went past the limit (curl_code is then CURLE_FILESIZE_EXCEEDED) */
	int64_t retry_after_ms; /* -1 when absent */
	char *warnings;        /* texts of the Warning headers, one a line (NULL: none); at most TFJOB__HTTP_MAX_WARNINGS bytes */
	CURLcode curl_code;
	char curl_error[CURL_ERROR_SIZE];
};

/* The most bytes of the body of an error answer to a streamed request (a watch, a followed log)
   kept for its message; the rest is dropped. */
#define TFJOB__HTTP_MAX_ERROR_BODY ((size_t)64 * 1024)

/* The most bytes of Warning header texts a response keeps (the rest are dropped). */
#define TFJOB__HTTP_MAX_WARNINGS ((size_t)64 * 1024)

void tfjob__http_response_clear(struct tfjob__http_response *r);
/* Append to r->body (NUL-terminated), at most max bytes in all: 0, or -1 (too_large set when past max). */
int tfjob__http_body_append(struct tfjob__http_response *r, const char *data, size_t len, size_t max);

/*
 * A configured easy handle for method and path (which includes the query): URL, sharing, TLS,
 * proxy, timeouts (no overall timeout when streaming): a kept handle when there is one. Given
 * back with tfjob__http_easy_done(); *connect_to is freed by the caller after that. NULL when out
 * of memory.
 */
CURL *tfjob__http_easy(struct tfjob__kube *k, const char *method, const char *path, const char *body,
                       struct curl_slist **connect_to, int streaming);
/*
 * Give back a handle of tfjob__http_easy() (NULL is ignored): its options are reset and it is
 * kept for the next request, or freed when enough are kept. Thread-safe.
 */
void tfjob__http_easy_done(struct tfjob__kube *k, CURL *easy);
/* Free the kept handles (before the share they use). */
void tfjob__http_pool_clear(struct tfjob__kube *k);
/* Accept (and Content-Type) headers; NULL when out of memory. */
struct curl_slist *tfjob__http_headers(const char *content_type);
/*
 * Ready a handle from tfjob__http_easy with its headers from tfjob__http_headers (either may be
 * NULL: out of memory): apply the credentials. False, with the reason in resp, when the request
 * cannot be made.
 */
bool tfjob__http_ready(struct tfjob__kube *k, CURL *easy, struct curl_slist **headers,
                       struct tfjob__http_response *resp);
/* A CURLOPT_HEADERFUNCTION that records Retry-After into a struct tfjob__http_response. */
size_t tfjob__http_on_header(char *data, size_t size, size_t n, void *arg);

/* Perform a request once and collect the response. */
void tfjob__http_perform(struct tfjob__kube *k, const char *method, const char *path, const char *body,
                         const char *content_type, struct tfjob__http_response *resp);

/* Store the response's error (API Status or curl error) in *err and return its code. */
int tfjob__http_fail(tfjob_error **err, const char *method, const char *path, const struct tfjob__http_response *r);

/* The code a response stands for (0 for 2xx). */
int tfjob__http_code(const struct tfjob__http_response *r);

/* Credentials: refresh after a 401 (re-read tokenFile, re-run exec). Returns 1 when something may have changed. */
int tfjob__kube_auth_invalidate(struct tfjob__kube *k);
/* Fill headers/TLS credentials of an easy handle. */
int tfjob__kube_auth_apply(struct tfjob__kube *k, CURL *easy, struct curl_slist **headers, tfjob_error **err);

/* Backoff for attempt n (0-based) with jitter, in ms. */
int64_t tfjob__backoff_ms(const struct tfjob__kube *k, int attempt);

/* Sleep ms, in slices, returning early (1) when stop says so. stop may be NULL. */
int tfjob__sleep_unless(int64_t ms, const tfjob_watch_sink *stop);

int tfjob__kube_watch(void *data, tfjob_watch_sink *sink, const tfjob_resource *res, const char *ns,
                      const tfjob_watch_options *opts, tfjob_error **err);

/* Append "&key=escaped(value)" (or "?" first) to a query under construction. */
int tfjob__query_add(char **query, const char *key, const char *value);

#endif
