/*
 * tfjob-operator's HTTP servers on libmicrohttpd (http.h).
 *
 * Each listener is a libmicrohttpd daemon with its own epoll thread(s). libmicrohttpd closes a
 * connection that stays silent for the idle timeout, answers 4xx to malformed requests and to
 * heads over OP_HTTP_MAX_HEAD; on top of it, a reaper thread shuts down any connection whose
 * request is not complete by its deadline (a client trickling one byte at a time is never
 * idle), and webhook bodies are bounded per request and in total.
 * SPDX-License-Identifier: Apache-2.0
 */
#define _GNU_SOURCE
#include "http.h"

#include <errno.h>
#include <microhttpd.h>
#include <netdb.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "stopper.h"
#include "tlsstore.h"

enum { SRV_METRICS, SRV_HEALTH, SRV_WEBHOOK, SRV_COUNT };

#define WEBHOOK_THREADS 2
#define TLS_PRIORITIES "NORMAL:-VERS-ALL:+VERS-TLS1.3:+VERS-TLS1.2"

/* One open connection, for the deadline reaper. */
typedef struct conn_track {
	int fd;
	int64_t deadline_ms;
	int reaped;
	struct conn_track *prev, *next;
} conn_track;

typedef struct server {
	op_http *h;
	int which;
	struct MHD_Daemon *daemon;
	int port;
} server;

struct op_http {
	op_http_options o;
	server srv[SRV_COUNT];
	pthread_rwlock_t controller_lock; /* o.controller */
	pthread_mutex_t mu; /* conns */
	conn_track *conns;
	op_stopper reaper_stop;
	int reaper_running;
	pthread_t reaper;
	atomic_size_t body_bytes; /* webhook body bytes held, across connections */
};

/* A webhook request's body as it arrives. */
typedef struct request {
	char *body;
	size_t len, cap;
	int too_large, over_budget;
} request;

static int listen_on(const char *addr, int *port_out, char *errbuf, size_t errlen)
{
	char host[256] = "", port[32] = "";
	const char *colon = strrchr(addr, ':');
	if (!colon) {
		snprintf(errbuf, errlen, "bad address %s (want host:port)", addr);
		return -1;
	}
	size_t hl = (size_t)(colon - addr);
	if (hl >= sizeof(host) || strlen(colon + 1) >= sizeof(port) || !colon[1]) {
		snprintf(errbuf, errlen, "bad address %s", addr);
		return -1;
	}
	memcpy(host, addr, hl);
	host[hl] = 0;
	if (host[0] == '[' && hl > 1 && host[hl - 1] == ']') {
		memmove(host, host + 1, hl - 2);
		host[hl - 2] = 0;
	}
	strcpy(port, colon + 1);
	struct addrinfo hints = { 0 }, *res = NULL;
	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_PASSIVE;
	int rc = getaddrinfo(host[0] ? host : NULL, port, &hints, &res);
	if (rc) {
		snprintf(errbuf, errlen, "%s: %s", addr, gai_strerror(rc));
		return -1;
	}
	int fd = -1;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0)
			continue;
		int one = 1;
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 1024) == 0)
			break;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		snprintf(errbuf, errlen, "cannot listen on %s: %s", addr, strerror(errno));
		return -1;
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	*port_out = -1;
	if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0) {
		char ps[32];
		if (getnameinfo((struct sockaddr *)&ss, sl, NULL, 0, ps, sizeof(ps), NI_NUMERICSERV) == 0)
			*port_out = atoi(ps);
	}
	return fd;
}

static enum MHD_Result answer(struct MHD_Connection *conn, unsigned int code, const char *ctype, const char *body)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(body), (void *)(uintptr_t)body, MHD_RESPMEM_MUST_COPY);
	if (!r)
		return MHD_NO;
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, ctype);
	if (code == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	enum MHD_Result rc = MHD_queue_response(conn, code, r);
	MHD_destroy_response(r);
	return rc;
}

static enum MHD_Result text(struct MHD_Connection *conn, unsigned int code, const char *body)
{
	return answer(conn, code, "text/plain; charset=utf-8", body);
}

/* Called with controller_lock held for reading. */
static int is_ready(op_http *h, const char **why)
{
	tfjob_controller *c = h->o.controller;
	if (!c) {
		*why = "controller not started\n";
		return 0;
	}
	/* caches synced; a standby replica waiting for the lease is ready too */
	if (!tfjob_controller_is_ready(c) && !(h->o.leader_election && !tfjob_controller_is_leader(c))) {
		*why = "caches not synced\n";
		return 0;
	}
	if (h->o.webhook && h->o.webhook_ready && !h->o.webhook_ready(h->o.ready_payload)) {
		*why = "webhook certificates not ready\n";
		return 0;
	}
	return 1;
}

static enum MHD_Result serve_get(server *s, struct MHD_Connection *conn, const char *url)
{
	op_http *h = s->h;
	if (s->which == SRV_METRICS && !strcmp(url, "/metrics")) {
		char *body = NULL;
		pthread_rwlock_rdlock(&h->controller_lock);
		int rc = h->o.controller ? tfjob_controller_metrics_text(&body, h->o.controller, NULL) : -1;
		pthread_rwlock_unlock(&h->controller_lock);
		if (rc)
			return text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "metrics unavailable\n");
		enum MHD_Result res = answer(conn, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", body);
		tfjob_free(body);
		return res;
	}
	if (!strcmp(url, "/healthz"))
		return text(conn, MHD_HTTP_OK, "ok\n");
	if (!strcmp(url, "/readyz")) {
		const char *why = NULL;
		pthread_rwlock_rdlock(&h->controller_lock);
		int ready = is_ready(h, &why);
		pthread_rwlock_unlock(&h->controller_lock);
		return ready ? text(conn, MHD_HTTP_OK, "ok\n") : text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, why);
	}
	return text(conn, MHD_HTTP_NOT_FOUND, "not found\n");
}

/* Grow r's buffer for n more bytes within the per-request and total limits. */
static void append_body(op_http *h, request *r, const char *data, size_t n)
{
	if (r->too_large || r->over_budget)
		return;
	if (n > OP_HTTP_MAX_BODY - r->len) {
		r->too_large = 1;
		return;
	}
	if (r->len + n + 1 > r->cap) {
		size_t cap = r->cap ? r->cap : 16384;
		while (cap < r->len + n + 1)
			cap *= 2;
		if (cap > OP_HTTP_MAX_BODY + 1)
			cap = OP_HTTP_MAX_BODY + 1;
		size_t grow = cap - r->cap;
		if (atomic_fetch_add(&h->body_bytes, grow) + grow > OP_HTTP_BODY_BUDGET) {
			atomic_fetch_sub(&h->body_bytes, grow);
			r->over_budget = 1;
			return;
		}
		char *b = realloc(r->body, cap);
		if (!b) {
			atomic_fetch_sub(&h->body_bytes, grow);
			r->over_budget = 1;
			return;
		}
		r->body = b;
		r->cap = cap;
	}
	memcpy(r->body + r->len, data, n);
	r->len += n;
	r->body[r->len] = 0;
}

static enum MHD_Result finish_webhook(server *s, struct MHD_Connection *conn, const char *url, request *r)
{
	op_http *h = s->h;
	if (r->too_large)
		return text(conn, MHD_HTTP_CONTENT_TOO_LARGE, "request body too large\n");
	if (r->over_budget)
		return text(conn, MHD_HTTP_SERVICE_UNAVAILABLE, "too many requests in flight\n");
	int status = 500;
	char *body = h->o.webhook(h->o.webhook_payload, url, r->body ? r->body : "", r->len, &status);
	if (!body)
		return text(conn, MHD_HTTP_INTERNAL_SERVER_ERROR, "internal error\n");
	enum MHD_Result rc = answer(conn, (unsigned int)status, "application/json", body);
	free(body);
	return rc;
}

static enum MHD_Result serve_webhook(server *s, struct MHD_Connection *conn, const char *url, const char *method,
                                     const char *upload_data, size_t *upload_data_size, void **req_cls)
{
	request *r = *req_cls;
	if (!r) {
		if (strcmp(method, MHD_HTTP_METHOD_POST))
			return text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
		if (!s->h->o.webhook_path || strcmp(url, s->h->o.webhook_path))
			return text(conn, MHD_HTTP_NOT_FOUND, "not found\n");
		const char *cl = MHD_lookup_connection_value(conn, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl && strtoull(cl, NULL, 10) > OP_HTTP_MAX_BODY)
			return text(conn, MHD_HTTP_CONTENT_TOO_LARGE, "request body too large\n");
		if (!(r = calloc(1, sizeof(*r))))
			return MHD_NO;
		*req_cls = r;
		return MHD_YES;
	}
	if (*upload_data_size) {
		append_body(s->h, r, upload_data, *upload_data_size);
		*upload_data_size = 0;
		return MHD_YES;
	}
	return finish_webhook(s, conn, url, r);
}

static enum MHD_Result on_request(void *cls, struct MHD_Connection *conn, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **req_cls)
{
	(void)version;
	server *s = cls;
	if (s->which == SRV_WEBHOOK)
		return serve_webhook(s, conn, url, method, upload_data, upload_data_size, req_cls);
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return text(conn, MHD_HTTP_METHOD_NOT_ALLOWED, "method not allowed\n");
	return serve_get(s, conn, url);
}

static conn_track *track_of(struct MHD_Connection *conn)
{
	const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

/* A request is over: free its body and give the connection a fresh deadline for the next one. */
static void on_completed(void *cls, struct MHD_Connection *conn, void **req_cls,
                         enum MHD_RequestTerminationCode toe)
{
	(void)toe;
	server *s = cls;
	request *r = *req_cls;
	if (r) {
		atomic_fetch_sub(&s->h->body_bytes, r->cap);
		free(r->body);
		free(r);
		*req_cls = NULL;
	}
	conn_track *t = track_of(conn);
	if (t) {
		pthread_mutex_lock(&s->h->mu);
		t->deadline_ms = op_monotonic_ms() + (int64_t)s->h->o.request_timeout_s * 1000;
		pthread_mutex_unlock(&s->h->mu);
	}
}

static void on_connection(void *cls, struct MHD_Connection *conn, void **socket_context,
                          enum MHD_ConnectionNotificationCode toe)
{
	server *s = cls;
	op_http *h = s->h;
	if (toe == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci = MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
		conn_track *t = ci ? calloc(1, sizeof(*t)) : NULL;
		if (!t)
			return; /* untracked: still bounded by the idle timeout */
		t->fd = ci->connect_fd;
		t->deadline_ms = op_monotonic_ms() + (int64_t)h->o.request_timeout_s * 1000;
		pthread_mutex_lock(&h->mu);
		t->next = h->conns;
		if (h->conns)
			h->conns->prev = t;
		h->conns = t;
		pthread_mutex_unlock(&h->mu);
		*socket_context = t;
	} else if (toe == MHD_CONNECTION_NOTIFY_CLOSED && *socket_context) {
		/* libmicrohttpd closes the socket after this: under mu the reaper never sees a reused fd */
		conn_track *t = *socket_context;
		pthread_mutex_lock(&h->mu);
		if (t->prev)
			t->prev->next = t->next;
		else
			h->conns = t->next;
		if (t->next)
			t->next->prev = t->prev;
		pthread_mutex_unlock(&h->mu);
		free(t);
		*socket_context = NULL;
	}
}

/* Shut down every connection past its deadline; how long until the next deadline, in ms. A
   connection made later gets a deadline a whole request timeout away, so with none tracked the
   reaper may sleep that long. */
static int64_t reap(op_http *h)
{
	int64_t now = op_monotonic_ms(), next = now + (int64_t)h->o.request_timeout_s * 1000;
	pthread_mutex_lock(&h->mu);
	for (conn_track *t = h->conns; t; t = t->next) {
		if (t->reaped)
			continue;
		if (t->deadline_ms < now) {
			shutdown(t->fd, SHUT_RDWR); /* the event loop sees the end and closes it */
			t->reaped = 1;
		} else if (t->deadline_ms < next) {
			next = t->deadline_ms;
		}
	}
	pthread_mutex_unlock(&h->mu);
	return next - now + 1; /* past the deadline, which is "<" */
}

static void *reaper_main(void *arg)
{
	op_http *h = arg;
	while (!op_stopper_wait_ms(&h->reaper_stop, reap(h)))
		;
	return NULL;
}

static int off(const char *a)
{
	return !a || !*a || !strcmp(a, "0");
}

static int start_server(op_http *h, int which, const char *addr, char *errbuf, size_t errlen)
{
	server *s = &h->srv[which];
	s->h = h;
	s->which = which;
	s->port = -1;
	if (off(addr))
		return 0;
	int fd = listen_on(addr, &s->port, errbuf, errlen);
	if (fd < 0)
		return -1;
	int tls = which == SRV_WEBHOOK;
	unsigned int flags = MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | (tls ? MHD_USE_TLS : 0);
	struct MHD_OptionItem tls_opts[] = {
		{ MHD_OPTION_HTTPS_CERT_CALLBACK, 0, (void *)(uintptr_t)op_tls_store_retrieve },
		{ MHD_OPTION_HTTPS_PRIORITIES, 0, (void *)(uintptr_t)TLS_PRIORITIES },
		{ MHD_OPTION_END, 0, NULL },
	};
	struct MHD_OptionItem no_opts[] = { { MHD_OPTION_END, 0, NULL } };
	s->daemon = MHD_start_daemon(
		flags, 0, NULL, NULL, on_request, s, MHD_OPTION_LISTEN_SOCKET, (MHD_socket)fd,
		MHD_OPTION_THREAD_POOL_SIZE, (unsigned int)(tls ? WEBHOOK_THREADS : 1),
		MHD_OPTION_CONNECTION_LIMIT, (unsigned int)OP_HTTP_MAX_CONNECTIONS,
		MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)h->o.idle_timeout_s,
		MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)OP_HTTP_MAX_HEAD,
		MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
		MHD_OPTION_NOTIFY_COMPLETED, on_completed, s,
		MHD_OPTION_ARRAY, tls ? tls_opts : no_opts,
		MHD_OPTION_END);
	if (!s->daemon) {
		close(fd);
		snprintf(errbuf, errlen, "cannot serve on %s (libmicrohttpd refused the configuration)", addr);
		return -1;
	}
	return 0;
}

int op_http_start(op_http **out, const op_http_options *opts, char *errbuf, size_t errlen)
{
	op_http *h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(errbuf, errlen, "out of memory");
		return -1;
	}
	h->o = *opts;
	if (h->o.idle_timeout_s <= 0)
		h->o.idle_timeout_s = OP_HTTP_DEFAULT_IDLE_TIMEOUT_S;
	if (h->o.request_timeout_s <= 0)
		h->o.request_timeout_s = OP_HTTP_DEFAULT_REQUEST_TIMEOUT_S;
	pthread_rwlock_init(&h->controller_lock, NULL);
	pthread_mutex_init(&h->mu, NULL);
	atomic_init(&h->body_bytes, 0);
	for (int i = 0; i < SRV_COUNT; i++)
		h->srv[i].port = -1;
	if (op_stopper_init(&h->reaper_stop)) {
		snprintf(errbuf, errlen, "cannot make an eventfd for the HTTP deadline thread");
		op_http_stop(h);
		return -1;
	}
	if (pthread_create(&h->reaper, NULL, reaper_main, h)) {
		snprintf(errbuf, errlen, "cannot start the HTTP deadline thread");
		op_http_stop(h);
		return -1;
	}
	h->reaper_running = 1;
	if (start_server(h, SRV_METRICS, opts->metrics_addr, errbuf, errlen) ||
	    start_server(h, SRV_HEALTH, opts->health_addr, errbuf, errlen) ||
	    (opts->webhook && start_server(h, SRV_WEBHOOK, opts->webhook_addr, errbuf, errlen))) {
		op_http_stop(h);
		return -1;
	}
	*out = h;
	return 0;
}

int op_http_port(const op_http *h, int which)
{
	return h && which >= 0 && which < SRV_COUNT ? h->srv[which].port : -1;
}

void op_http_stop(op_http *h)
{
	if (!h)
		return;
	for (int i = 0; i < SRV_COUNT; i++)
		if (h->srv[i].daemon)
			MHD_stop_daemon(h->srv[i].daemon);
	if (h->reaper_running) {
		op_stopper_stop(&h->reaper_stop);
		pthread_join(h->reaper, NULL);
	}
	op_stopper_destroy(&h->reaper_stop);
	pthread_mutex_destroy(&h->mu);
	pthread_rwlock_destroy(&h->controller_lock);
	free(h);
}

void op_http_set_controller(op_http *h, tfjob_controller *c)
{
	pthread_rwlock_wrlock(&h->controller_lock);
	h->o.controller = c;
	pthread_rwlock_unlock(&h->controller_lock);
}
