/*
 * tfjob-operator's HTTP/1.1 server. One thread, poll() over the listeners, one request per
 * connection (Connection: close), requests bounded to 8 KiB and 5 s; anything malformed gets a
 * 4xx answer and never brings the process down.
 * SPDX-License-Identifier: Apache-2.0
 */
#define _GNU_SOURCE
#include "http.h"

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#define MAX_REQUEST 8192

struct op_http {
	int fds[2];
	int ports[2];
	int wake[2];
	pthread_t thread;
	int running;
	tfjob_controller *c;
	int leader_election;
};

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
		if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 64) == 0)
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

static void send_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = send(fd, buf, len, MSG_NOSIGNAL);
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

static void reply(int fd, int code, const char *reason, const char *ctype, const char *body, int head_only)
{
	char hdr[512];
	size_t blen = body ? strlen(body) : 0;
	int n = snprintf(hdr, sizeof(hdr),
	                 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n\r\n", code,
	                 reason, ctype, blen);
	send_all(fd, hdr, (size_t)n);
	if (!head_only && blen)
		send_all(fd, body, blen);
}

static void serve(op_http *h, int fd, int which)
{
	struct timeval tv = { 5, 0 };
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	char buf[MAX_REQUEST + 1];
	size_t len = 0;
	const char *end = NULL;
	while (len < MAX_REQUEST) {
		ssize_t n = recv(fd, buf + len, MAX_REQUEST - len, 0);
		if (n <= 0)
			return; /* closed, reset or timed out */
		len += (size_t)n;
		buf[len] = 0;
		if (memchr(buf, 0, len)) {
			reply(fd, 400, "Bad Request", "text/plain", "bad request\n", 0);
			return;
		}
		if ((end = strstr(buf, "\r\n\r\n")) || (end = strstr(buf, "\n\n")))
			break;
	}
	if (!end) {
		reply(fd, 431, "Request Header Fields Too Large", "text/plain", "request too large\n", 0);
		return;
	}
	char method[16], target[1024], version[16];
	if (sscanf(buf, "%15s %1023s %15s", method, target, version) != 3 || strncmp(version, "HTTP/1.", 7)) {
		reply(fd, 400, "Bad Request", "text/plain", "bad request\n", 0);
		return;
	}
	int head = !strcmp(method, "HEAD");
	if (strcmp(method, "GET") && !head) {
		reply(fd, 405, "Method Not Allowed", "text/plain", "method not allowed\n", 0);
		return;
	}
	char *q = strchr(target, '?');
	if (q)
		*q = 0;
	if (which == 0 && !strcmp(target, "/metrics")) {
		char *text = NULL;
		if (tfjob_controller_metrics_text(&text, h->c, NULL) == 0) {
			reply(fd, 200, "OK", "text/plain; version=0.0.4; charset=utf-8", text, head);
			tfjob_free(text);
		} else {
			reply(fd, 500, "Internal Server Error", "text/plain", "metrics unavailable\n", head);
		}
	} else if (!strcmp(target, "/healthz")) {
		reply(fd, 200, "OK", "text/plain", "ok\n", head);
	} else if (!strcmp(target, "/readyz")) {
		/* ready: caches synced; a standby replica waiting for the lease is ready too */
		int ready = tfjob_controller_is_ready(h->c) || (h->leader_election && !tfjob_controller_is_leader(h->c));
		if (ready)
			reply(fd, 200, "OK", "text/plain", "ok\n", head);
		else
			reply(fd, 503, "Service Unavailable", "text/plain", "caches not synced\n", head);
	} else {
		reply(fd, 404, "Not Found", "text/plain", "not found\n", head);
	}
}

static void *http_main(void *arg)
{
	op_http *h = arg;
	for (;;) {
		struct pollfd p[3];
		int n = 0, map[3];
		for (int i = 0; i < 2; i++)
			if (h->fds[i] >= 0) {
				p[n].fd = h->fds[i];
				p[n].events = POLLIN;
				map[n++] = i;
			}
		p[n].fd = h->wake[0];
		p[n].events = POLLIN;
		map[n++] = -1;
		if (poll(p, (nfds_t)n, -1) < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (p[n - 1].revents)
			break;
		for (int i = 0; i < n - 1; i++) {
			if (!(p[i].revents & POLLIN))
				continue;
			int cfd = accept4(p[i].fd, NULL, NULL, SOCK_CLOEXEC);
			if (cfd < 0)
				continue;
			serve(h, cfd, map[i]);
			/* lingering close: a client still sending must get the answer, not a reset */
			shutdown(cfd, SHUT_WR);
			struct timeval tv = { 0, 100000 };
			setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
			char sink[4096];
			for (int k = 0; k < 16 && recv(cfd, sink, sizeof(sink), 0) > 0; k++)
				;
			close(cfd);
		}
	}
	return NULL;
}

static int off(const char *a)
{
	return !a || !*a || !strcmp(a, "0");
}

/* Close what op_http_start opened (-1: not opened) and free h. */
static void release(op_http *h)
{
	for (int i = 0; i < 2; i++) {
		if (h->fds[i] >= 0)
			close(h->fds[i]);
		if (h->wake[i] >= 0)
			close(h->wake[i]);
	}
	free(h);
}

int op_http_start(op_http **out, const char *metrics_addr, const char *health_addr, tfjob_controller *c,
                  int leader_election, char *errbuf, size_t errlen)
{
	op_http *h = calloc(1, sizeof(*h));
	if (!h) {
		snprintf(errbuf, errlen, "out of memory");
		return -1;
	}
	h->c = c;
	h->leader_election = leader_election;
	h->fds[0] = h->fds[1] = -1;
	h->ports[0] = h->ports[1] = -1;
	h->wake[0] = h->wake[1] = -1; /* pipe() leaves them so when it fails */
	if ((!off(metrics_addr) && (h->fds[0] = listen_on(metrics_addr, &h->ports[0], errbuf, errlen)) < 0) ||
	    (!off(health_addr) && (h->fds[1] = listen_on(health_addr, &h->ports[1], errbuf, errlen)) < 0) ||
	    pipe(h->wake)) {
		release(h); /* also the health socket when pipe() failed, which this path used to leak */
		return -1;
	}
	if (pthread_create(&h->thread, NULL, http_main, h)) {
		snprintf(errbuf, errlen, "cannot start the HTTP thread");
		release(h);
		return -1;
	}
	h->running = 1;
	*out = h;
	return 0;
}

int op_http_port(const op_http *h, int which)
{
	return h && which >= 0 && which < 2 ? h->ports[which] : -1;
}

void op_http_stop(op_http *h)
{
	if (!h)
		return;
	if (h->running) {
		ssize_t w = write(h->wake[1], "x", 1);
		(void)w;
		pthread_join(h->thread, NULL);
	}
	release(h);
}
