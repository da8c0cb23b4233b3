/*
 * CPU per request of the Kubernetes transport against a live API server: rounds of N GETs of a
 * namespace and N Event creates (what the controller's recorder sends most), alternating, each
 * round timed with this process's CPU clock (user + system). Prints the median and range of the
 * CPU µs per request of each verb, and the wall µs. A benchmark, not a test.
 *
 *   KUBECONFIG=admin.kubeconfig bench_requests [-rounds R] [-n N] [-floor]
 *
 * The server: tests/kube/harness.sh start DIR (then DIR/admin.kubeconfig). Events are created in
 * namespace "default" with generated names and left there.
 *
 * -floor adds a third verb, "raw get": the same GET written and read over one TLS connection with
 * OpenSSL alone (blocking socket, no HTTP library), the least a request costs this process. It
 * reads the server and credentials from the harness's env file (KUBE_APISERVER_URL, KUBE_CA_CERT,
 * KUBE_ADMIN_CERT, KUBE_ADMIN_KEY: `. DIR/env` first).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tfjob/tfjob.h>

#include "bench_time.h"

#ifdef BENCH_FLOOR
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <openssl/ssl.h>
#include <sys/socket.h>
#include <unistd.h>

/* One TLS connection to the API server, as the harness's admin, for the raw GETs. */
struct raw_conn {
	SSL_CTX *ctx;
	SSL *ssl;
	int fd;
	char host[64];
};

static int raw_open(struct raw_conn *rc)
{
	const char *url = getenv("KUBE_APISERVER_URL"), *ca = getenv("KUBE_CA_CERT");
	const char *cert = getenv("KUBE_ADMIN_CERT"), *key = getenv("KUBE_ADMIN_KEY");
	int port = 0;
	if (!url || !ca || !cert || !key || sscanf(url, "https://%63[0-9.]:%d", rc->host, &port) != 2) {
		fprintf(stderr, "bench_requests: -floor needs KUBE_APISERVER_URL (https://IPv4:PORT), KUBE_CA_CERT, "
		                "KUBE_ADMIN_CERT and KUBE_ADMIN_KEY (the harness's env file)\n");
		return -1;
	}
	rc->ctx = SSL_CTX_new(TLS_client_method());
	if (!rc->ctx || SSL_CTX_load_verify_locations(rc->ctx, ca, NULL) != 1 ||
	    SSL_CTX_use_certificate_file(rc->ctx, cert, SSL_FILETYPE_PEM) != 1 ||
	    SSL_CTX_use_PrivateKey_file(rc->ctx, key, SSL_FILETYPE_PEM) != 1) {
		fprintf(stderr, "bench_requests: -floor: cannot load the CA, certificate or key\n");
		return -1;
	}
	SSL_CTX_set_verify(rc->ctx, SSL_VERIFY_PEER, NULL);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((unsigned short)port) };
	int one = 1;
	rc->fd = socket(AF_INET, SOCK_STREAM, 0);
	if (rc->fd < 0 || inet_pton(AF_INET, rc->host, &a.sin_addr) != 1 || connect(rc->fd, (struct sockaddr *)&a, sizeof(a)) ||
	    setsockopt(rc->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one))) {
		perror("bench_requests: -floor: connect");
		return -1;
	}
	rc->ssl = SSL_new(rc->ctx);
	if (!rc->ssl || SSL_set_fd(rc->ssl, rc->fd) != 1 || SSL_connect(rc->ssl) != 1) {
		fprintf(stderr, "bench_requests: -floor: TLS handshake failed\n");
		return -1;
	}
	return 0;
}

/* One GET of the namespace, its whole answer read (Content-Length framing, as the server sends
   small objects); non-zero on any error. */
static int raw_get(struct raw_conn *rc)
{
	static char buf[1 << 16];
	char req[256];
	int n = snprintf(req, sizeof(req),
	                 "GET /api/v1/namespaces/default HTTP/1.1\r\nHost: %s\r\nUser-Agent: bench_requests\r\n"
	                 "Accept: application/json\r\n\r\n", rc->host);
	if (SSL_write(rc->ssl, req, n) != n)
		return -1;
	size_t have = 0, head = 0;
	long need = -1;
	while (need < 0 || have < head + (size_t)need) {
		int got = SSL_read(rc->ssl, buf + have, (int)(sizeof(buf) - 1 - have));
		if (got <= 0)
			return -1;
		have += (size_t)got;
		buf[have] = '\0';
		const char *end = need < 0 ? strstr(buf, "\r\n\r\n") : NULL;
		if (end) {
			const char *cl = strstr(buf, "Content-Length:");
			if (!cl || strncmp(buf, "HTTP/1.1 200", 12))
				return -1;
			head = (size_t)(end + 4 - buf);
			need = atol(cl + 15);
		}
	}
	return 0;
}

static void raw_close(struct raw_conn *rc)
{
	if (rc->ssl)
		SSL_free(rc->ssl);
	if (rc->fd > 0)
		close(rc->fd);
	SSL_CTX_free(rc->ctx);
}
#endif

static const tfjob_resource NAMESPACES = TFJOB_RESOURCE_NAMESPACES_INIT;
static const tfjob_resource EVENTS = { "", "v1", "events", 1 };

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int one_request(tfjob_transport *t, int create, long serial)
{
	char *out = NULL, body[512];
	tfjob_error *err = NULL;
	int rc;
	if (create) {
		snprintf(body, sizeof(body),
		         "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"bench.%ld.%ld\"},"
		         "\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"bench\",\"namespace\":\"default\"},"
		         "\"reason\":\"Bench\",\"message\":\"one of bench_requests' events\",\"type\":\"Normal\"}",
		         (long)time(NULL), serial);
		rc = tfjob_transport_create(&out, t, &EVENTS, "default", body, &err);
	} else {
		rc = tfjob_transport_get(&out, t, &NAMESPACES, NULL, "default", &err);
	}
	if (rc)
		fprintf(stderr, "bench_requests: %s failed: %s\n", create ? "create" : "get", tfjob_error_message(err));
	tfjob_free(out);
	tfjob_error_free(err);
	return rc;
}

static void report(const char *verb, double *cpu_us, double *wall_us, int rounds)
{
	qsort(cpu_us, (size_t)rounds, sizeof(double), cmp_double);
	qsort(wall_us, (size_t)rounds, sizeof(double), cmp_double);
	printf("%-7s %6d %12.1f %15.1f-%.1f %12.1f\n", verb, rounds, cpu_us[rounds / 2], cpu_us[0], cpu_us[rounds - 1],
	       wall_us[rounds / 2]);
}

int main(int argc, char **argv)
{
	int rounds = 11, n = 200, verbs = 2;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-floor"))
			verbs = 3;
		else if (!strcmp(argv[i], "-rounds") && i + 1 < argc)
			rounds = atoi(argv[++i]);
		else if (!strcmp(argv[i], "-n") && i + 1 < argc)
			n = atoi(argv[++i]);
		else
			rounds = -1;
	}
	if (rounds < 1 || rounds > 1000 || n < 1) {
		fprintf(stderr, "usage: bench_requests [-rounds R (1-1000)] [-n N] [-floor]\n");
		return 2;
	}
#ifdef BENCH_FLOOR
	struct raw_conn raw = { 0 };
	if (verbs == 3 && raw_open(&raw))
		return 1;
#else
	if (verbs == 3) {
		fprintf(stderr, "bench_requests: -floor needs OpenSSL's headers at build time\n");
		return 2;
	}
#endif
	tfjob_kube_options o = TFJOB_KUBE_OPTIONS_INIT;
	o.qps = -1; /* no client-side limit: the cost of a request, not of waiting */
	tfjob_transport *t = NULL;
	tfjob_error *err = NULL;
	if (tfjob_kube_transport_new(&t, &o, &err)) {
		fprintf(stderr, "bench_requests: %s\n", tfjob_error_message(err));
		return 1;
	}
	double *cpu[3], *wall[3];
	for (int v = 0; v < verbs; v++) {
		cpu[v] = calloc((size_t)rounds, sizeof(double));
		wall[v] = calloc((size_t)rounds, sizeof(double));
	}
	long serial = 0;
	if (one_request(t, 0, serial)) /* connect first: the handshake is not a request's cost */
		return 1;
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < verbs; k++) {
			int v = (r + k) % verbs; /* rotate which verb goes first */
			double c0 = cpu_seconds(), w0 = wall_seconds();
			for (int i = 0; i < n; i++) {
#ifdef BENCH_FLOOR
				if (v == 2) {
					if (raw_get(&raw)) {
						fprintf(stderr, "bench_requests: raw get failed\n");
						return 1;
					}
					continue;
				}
#endif
				if (one_request(t, v, ++serial))
					return 1;
			}
			cpu[v][r] = (cpu_seconds() - c0) / n * 1e6;
			wall[v][r] = (wall_seconds() - w0) / n * 1e6;
		}
	}
	printf("%-7s %6s %12s %18s %12s\n", "verb", "rounds", "CPU us/req", "CPU us min-max", "wall us/req");
	report("get", cpu[0], wall[0], rounds);
	report("create", cpu[1], wall[1], rounds);
	if (verbs == 3)
		report("raw get", cpu[2], wall[2], rounds);
#ifdef BENCH_FLOOR
	raw_close(&raw);
#endif
	tfjob_transport_free(t);
	for (int v = 0; v < verbs; v++) {
		free(cpu[v]);
		free(wall[v]);
	}
	return 0;
}
