/*
 * tfjob-operator's HTTP servers (libmicrohttpd): Prometheus /metrics, the /healthz and /readyz
 * probes, and the admission webhook over HTTPS. Each listener has its own event loop (epoll)
 * and serves many connections at once; every connection has an idle timeout and a whole-request
 * deadline, and request heads and bodies are bounded (docs/controller.md, "HTTP server").
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_OPERATOR_HTTP_H
#define TFJOB_OPERATOR_HTTP_H

#include <stddef.h>
#include <tfjob/tfjob.h>

typedef struct op_http op_http;

/* Answers a webhook POST: returns the response body (malloc'd JSON) and sets *status, or NULL
   for 500. Called from a server thread, possibly several at once. */
typedef char *(*op_http_webhook_fn)(void *payload, const char *path, const char *body, size_t len, int *status);
/* 1 when the webhook may be advertised ready (its certificate is in place). */
typedef int (*op_http_ready_fn)(void *payload);

typedef struct op_http_options {
	const char *metrics_addr;   /* "host:port" (":8080" = all interfaces); NULL, "" or "0" = off */
	const char *health_addr;    /* likewise, for /healthz and /readyz */
	const char *webhook_addr;   /* likewise, HTTPS (the certificate comes from tlsstore.h) */
	tfjob_controller *controller; /* NULL: not ready, no metrics (op_http_set_controller) */
	int leader_election;
	int idle_timeout_s;         /* no byte for this long closes a connection */
	int request_timeout_s;      /* a request must be complete this long after the connection could start it */
	op_http_webhook_fn webhook;  /* NULL: no webhook */
	void *webhook_payload;
	const char *webhook_path;    /* the one path the webhook serves; others get 404 */
	op_http_ready_fn webhook_ready; /* /readyz fails until it returns 1 */
	void *ready_payload;
} op_http_options;

/* Connections one listener serves at once, and the head (request line and headers) it reads. */
#define OP_HTTP_MAX_CONNECTIONS 4096
#define OP_HTTP_MAX_HEAD 8192
/* Largest webhook body, and the most webhook body bytes held in memory across connections. */
#define OP_HTTP_MAX_BODY (8 * 1024 * 1024)
#define OP_HTTP_BODY_BUDGET (64 * 1024 * 1024)
#define OP_HTTP_DEFAULT_IDLE_TIMEOUT_S 15
#define OP_HTTP_DEFAULT_REQUEST_TIMEOUT_S 30

/* Start serving. Returns 0 or -1 with a message in errbuf. */
int op_http_start(op_http **out, const op_http_options *opts, char *errbuf, size_t errlen);
/* The port actually bound (useful with port 0), or -1. which: 0 metrics, 1 health, 2 webhook. */
int op_http_port(const op_http *h, int which);
/* Serve c from now on (NULL: none); returns once no request uses the previous one. Thread-safe. */
void op_http_set_controller(op_http *h, tfjob_controller *c);
/* Stop every listener, close every connection and free h. Accepts NULL. */
void op_http_stop(op_http *h);

#endif
