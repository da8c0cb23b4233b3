/*
 * tfjob-operator's own pieces (src/tfjob-operator): webhook certificates made and checked with
 * GnuTLS, the AdmissionReview answers and v1.9's denial message, and the HTTP servers' limits
 * (probes, 404/405, a head too large, a request trickled past its deadline, many connections),
 * and a certificate directory followed without polling.
 * The whole operator against a real API server: tests/suites/68-webhook.sh.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <arpa/inet.h>
#include <gnutls/gnutls.h>
#include <jansson.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "../src/tfjob-operator/certmgr.h"
#include "../src/tfjob-operator/certs.h"
#include "../src/tfjob-operator/http.h"
#include "../src/tfjob-operator/tlsstore.h"
#include "../src/tfjob-operator/webhook.h"
#include "testutil.h"

static const char *const names[] = { "training-operator.kubeflow.svc", "127.0.0.1" };

START_TEST(certificates)
{
	char e[256];
	op_cert_pem ca = { 0 }, ca2 = { 0 }, tls = { 0 };
	ck_assert_int_eq(op_certs_make_ca(&ca, "test-ca", "test", 3600, e, sizeof(e)), 0);
	ck_assert_int_eq(op_certs_make_ca(&ca2, "other-ca", NULL, 3600, e, sizeof(e)), 0);
	ck_assert_int_eq(op_certs_make_serving(&tls, &ca, names, 2, 7200, e, sizeof(e)), 0);
	ck_assert_ptr_nonnull(strstr(tls.crt, "BEGIN CERTIFICATE"));
	ck_assert_ptr_nonnull(strstr(tls.key, "BEGIN PRIVATE KEY"));
	time_t now = time(NULL);
	ck_assert_int_eq(op_certs_check(&tls, ca.crt, names, 2, now + 60, e, sizeof(e)), 0);
	ck_assert_int_eq(op_certs_check(&ca, NULL, NULL, 0, now + 60, e, sizeof(e)), 0);
	/* never valid past its CA: asked for 2 h under a 1 h CA */
	ck_assert(op_certs_not_after(tls.crt) <= op_certs_not_after(ca.crt));
	ck_assert_int_eq(op_certs_check(&tls, ca.crt, names, 2, now + 2 * 3600, e, sizeof(e)), -1);
	ck_assert_ptr_nonnull(strstr(e, "expires"));
	const char *other[] = { "other.kubeflow.svc" };
	ck_assert_int_eq(op_certs_check(&tls, ca.crt, other, 1, now, e, sizeof(e)), -1);
	ck_assert_str_eq(e, "the certificate is not for other.kubeflow.svc");
	const char *ip[] = { "127.0.0.2" };
	ck_assert_int_eq(op_certs_check(&tls, ca.crt, ip, 1, now, e, sizeof(e)), -1);
	ck_assert_int_eq(op_certs_check(&tls, ca2.crt, names, 2, now, e, sizeof(e)), -1);
	ck_assert_str_eq(e, "the certificate is not signed by the CA");
	op_cert_pem mixed = { tls.crt, ca.key };
	ck_assert_int_eq(op_certs_check(&mixed, ca.crt, names, 2, now, e, sizeof(e)), -1);
	ck_assert_str_eq(e, "the key does not belong to the certificate");
	op_cert_pem garbage = { "not a certificate", "nor a key" }, none = { NULL, NULL };
	ck_assert_int_eq(op_certs_check(&garbage, NULL, NULL, 0, now, e, sizeof(e)), -1);
	ck_assert_int_eq(op_certs_check(&none, NULL, NULL, 0, now, e, sizeof(e)), -1);
	ck_assert(op_certs_not_after("junk") == (time_t)-1);
	ck_assert_int_eq(op_certs_make_serving(&mixed, &ca, names, 0, 60, e, sizeof(e)), -1);
	/* the TLS store takes a pair, refuses junk and keeps the previous one */
	ck_assert_int_eq(op_tls_store_set(tls.crt, tls.key, e, sizeof(e)), 0);
	ck_assert_int_eq(op_tls_store_ready(), 1);
	char fp[80];
	op_tls_store_fingerprint(fp, sizeof(fp));
	ck_assert_uint_eq(strlen(fp), 64);
	ck_assert_int_eq(op_tls_store_set("junk", tls.key, e, sizeof(e)), -1);
	char fp2[80];
	op_tls_store_fingerprint(fp2, sizeof(fp2));
	ck_assert_str_eq(fp, fp2);
	op_tls_store_clear();
	ck_assert_int_eq(op_tls_store_ready(), 0);
	op_cert_pem_clear(&ca);
	op_cert_pem_clear(&ca2);
	op_cert_pem_clear(&tls);
}
END_TEST

#define JOB(NAME, RUN_POLICY, CONTAINER)                                                                        \
	"{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"" NAME "\"},"             \
	"\"spec\":{\"runPolicy\":{" RUN_POLICY "},\"tfReplicaSpecs\":{\"Worker\":{\"template\":{\"spec\":"          \
	"{\"containers\":[" CONTAINER "]}}}}}}"
#define GOOD_CONTAINER "{\"name\":\"tensorflow\",\"image\":\"tf\"}"

/* The response of a review of op with object (and old); status is the HTTP status. */
static json_t *review(const char *op, const char *object, const char *old, int *status)
{
	char body[4096];
	snprintf(body, sizeof(body),
	         "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u-1\","
	         "\"operation\":\"%s\",\"namespace\":\"ns\",\"name\":\"j\",\"object\":%s,\"oldObject\":%s}}",
	         op, object, old ? old : "null");
	op_webhook w = { TFJOB_COMPAT_DOCUMENTED, NULL };
	char *out = op_webhook_review(&w, OP_WEBHOOK_PATH, body, strlen(body), status);
	ck_assert_ptr_nonnull(out);
	json_t *j = json_loads(out, 0, NULL);
	free(out);
	ck_assert_ptr_nonnull(j);
	json_t *res = json_incref(json_object_get(j, "response"));
	ck_assert_str_eq(json_string_value(json_object_get(res, "uid")), "u-1");
	json_decref(j);
	return res;
}

static const char *message(json_t *res)
{
	return json_string_value(json_object_get(json_object_get(res, "status"), "message"));
}

START_TEST(admission_reviews)
{
	int status = 0;
	json_t *r = review("CREATE", JOB("good", "", GOOD_CONTAINER), NULL, &status);
	ck_assert_int_eq(status, 200);
	ck_assert(json_is_true(json_object_get(r, "allowed")));
	json_decref(r);
	/* one error: no brackets; v1.9's code and reason */
	r = review("CREATE", JOB("one", "", "{\"name\":\"tensorflow\"}"), NULL, &status);
	ck_assert(json_is_false(json_object_get(r, "allowed")));
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(r, "status"), "code")), 403);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(r, "status"), "reason")), "Forbidden");
	ck_assert_str_eq(message(r),
	                 "spec.tfReplicaSpecs[Worker].template.spec.containers[0].image: Required value: must be required");
	json_decref(r);
	/* several: every one, in brackets */
	r = review("CREATE", JOB("two", "", "{\"name\":\"main\"}"), NULL, &status);
	ck_assert_str_eq(message(r),
	                 "[spec.tfReplicaSpecs[Worker].template.spec.containers[0].image: Required value: must be required, "
	                 "spec.tfReplicaSpecs[Worker].template.spec.containers: Required value: must have at least one "
	                 "container with name tensorflow]");
	json_decref(r);
	/* admitted with warnings (tfjob_job_warnings), as the API server hands them to kubectl; none otherwise */
	r = review("CREATE",
	           "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"w\"},\"spec\":"
	           "{\"tfReplicaSpecs\":{\"Master\":{\"replicas\":2,\"template\":{\"spec\":{\"restartPolicy\":"
	           "\"OnFailure\",\"containers\":[" GOOD_CONTAINER "]}}}}}}",
	           NULL, &status);
	ck_assert(json_is_true(json_object_get(r, "allowed")));
	json_t *warnings = json_object_get(r, "warnings");
	ck_assert_uint_eq(json_array_size(warnings), 2);
	ck_assert_ptr_nonnull(strstr(json_string_value(json_array_get(warnings, 0)),
	                             "spec.tfReplicaSpecs[Master].template.spec.restartPolicy: restartPolicy OnFailure"));
	ck_assert_ptr_nonnull(strstr(json_string_value(json_array_get(warnings, 1)),
	                             "spec.tfReplicaSpecs[Master].replicas: 2 replicas of Master"));
	json_decref(r);
	r = review("CREATE", JOB("nowarn", "", GOOD_CONTAINER), NULL, &status);
	ck_assert_ptr_null(json_object_get(r, "warnings"));
	json_decref(r);
	/* the library's replica limit: denied like any invalid spec */
	r = review("CREATE",
	           "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"big\"},\"spec\":"
	           "{\"tfReplicaSpecs\":{\"Worker\":{\"replicas\":100000000,\"template\":{\"spec\":{\"containers\":["
	           GOOD_CONTAINER "]}}}}}}",
	           NULL, &status);
	ck_assert(json_is_false(json_object_get(r, "allowed")));
	ck_assert_str_eq(message(r), "spec.tfReplicaSpecs[Worker].replicas: Invalid value: 100000000: must be less than or "
	                             "equal to 100000 (the limit of replicas of one type)");
	json_decref(r);
	/* update: managedBy is immutable; an unchanged one passes */
	const char *old = JOB("u", "\"managedBy\":\"kubeflow.org/training-operator\"", GOOD_CONTAINER);
	r = review("UPDATE", JOB("u", "\"managedBy\":\"kueue.x-k8s.io/multikueue\"", GOOD_CONTAINER), old, &status);
	ck_assert_str_eq(message(r),
	                 "spec.runPolicy.managedBy: Invalid value: \"kueue.x-k8s.io/multikueue\": field is immutable");
	json_decref(r);
	r = review("UPDATE", old, old, &status);
	ck_assert(json_is_true(json_object_get(r, "allowed")));
	json_decref(r);
	/* DELETE is not validated; an object that is not a TFJob is a 400 inside the review */
	r = review("DELETE", "null", JOB("d", "", "{}"), &status);
	ck_assert(json_is_true(json_object_get(r, "allowed")));
	json_decref(r);
	r = review("CREATE", "{\"apiVersion\":\"v1\",\"kind\":\"Pod\"}", NULL, &status);
	ck_assert(json_is_false(json_object_get(r, "allowed")));
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(r, "status"), "code")), 400);
	json_decref(r);
	/* bodies that are not an AdmissionReview: HTTP 400 */
	op_webhook w = { TFJOB_COMPAT_DOCUMENTED, NULL };
	const char *bad[] = { "", "{", "[]", "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1\"}",
		              "{\"kind\":\"AdmissionReview\",\"apiVersion\":\"admission.k8s.io/v1beta1\",\"request\":{}}" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *out = op_webhook_review(&w, OP_WEBHOOK_PATH, bad[i], strlen(bad[i]), &status);
		ck_assert_ptr_nonnull(out);
		ck_assert_int_eq(status, 400);
		free(out);
	}
}
END_TEST

/* ---- the HTTP servers ---- */

static int connect_to(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	return fd;
}

/* Send req, read until the server closes or timeout_ms passes; the status code (0: none). */
static int exchange(int port, const char *req, size_t len, int timeout_ms)
{
	int fd = connect_to(port);
	ck_assert_int_eq(send(fd, req, len, MSG_NOSIGNAL), (ssize_t)len);
	char buf[4096];
	size_t got = 0;
	struct pollfd p = { fd, POLLIN, 0 };
	while (got < sizeof(buf) - 1 && poll(&p, 1, timeout_ms) == 1) {
		ssize_t n = recv(fd, buf + got, sizeof(buf) - 1 - got, 0);
		if (n <= 0)
			break;
		got += (size_t)n;
		if (strstr(buf, "\r\n\r\n"))
			break;
	}
	close(fd);
	buf[got] = 0;
	int code = 0;
	sscanf(buf, "HTTP/1.1 %d", &code);
	return code;
}

static int get(int port, const char *path)
{
	char req[256];
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\n\r\n", path);
	return exchange(port, req, (size_t)n, 2000);
}

START_TEST(http_servers)
{
	op_http_options o = { .metrics_addr = "127.0.0.1:0", .health_addr = "127.0.0.1:0", .idle_timeout_s = 5,
		              .request_timeout_s = 1 };
	op_http *h = NULL;
	char e[256];
	ck_assert_int_eq(op_http_start(&h, &o, e, sizeof(e)), 0);
	int metrics = op_http_port(h, 0), health = op_http_port(h, 1);
	ck_assert_int_gt(health, 0);
	ck_assert_int_eq(op_http_port(h, 2), -1);
	ck_assert_int_eq(get(health, "/healthz"), 200);
	ck_assert_int_eq(get(health, "/readyz"), 503); /* no controller (yet) */
	ck_assert_int_eq(get(health, "/nothing"), 404);
	ck_assert_int_eq(get(health, "/metrics"), 404);
	ck_assert_int_eq(get(metrics, "/metrics"), 500); /* no controller */
	const char post[] = "POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n";
	ck_assert_int_eq(exchange(health, post, sizeof(post) - 1, 2000), 405);
	/* a head past OP_HTTP_MAX_HEAD */
	size_t big = OP_HTTP_MAX_HEAD * 2;
	char *req = malloc(big + 64);
	int n = snprintf(req, 64, "GET /healthz HTTP/1.1\r\nX: ");
	memset(req + n, 'a', big);
	memcpy(req + n + big, "\r\n\r\n", 4);
	ck_assert_int_eq(exchange(health, req, (size_t)n + big + 4, 2000), 431);
	free(req);
	/* 200 idle connections and one trickling a byte every 300 ms (never idle): the probe answers
	   meanwhile, and the trickler is cut at its 1 s deadline */
	int idle[200];
	for (int i = 0; i < 200; i++)
		idle[i] = connect_to(health);
	int slow = connect_to(health);
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	int closed = 0;
	for (int i = 0; i < 20 && !closed; i++) {
		closed = send(slow, "G", 1, MSG_NOSIGNAL) < 0;
		ck_assert_int_eq(get(health, "/healthz"), 200);
		struct timespec ts = { 0, 300 * 1000 * 1000 };
		nanosleep(&ts, NULL);
		char c;
		if (!closed && recv(slow, &c, 1, MSG_DONTWAIT) == 0)
			closed = 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ck_assert_msg(closed, "a trickling client was not cut off");
	ck_assert_int_lt(t1.tv_sec - t0.tv_sec, 4);
	close(slow);
	for (int i = 0; i < 200; i++)
		close(idle[i]);
	op_http_stop(h);
	/* a bad address is an error, not a crash */
	o.health_addr = "no-port";
	ck_assert_int_eq(op_http_start(&h, &o, e, sizeof(e)), -1);
	ck_assert_ptr_nonnull(strstr(e, "bad address"));
}
END_TEST

/* ---- the webhook's HTTPS server ---- */

typedef struct tls_client {
	int fd;
	gnutls_session_t session;
	gnutls_certificate_credentials_t cred;
} tls_client;

static void tls_connect(tls_client *c, int port)
{
	c->fd = connect_to(port);
	ck_assert_int_eq(gnutls_certificate_allocate_credentials(&c->cred), 0);
	ck_assert_int_eq(gnutls_init(&c->session, GNUTLS_CLIENT), 0);
	gnutls_set_default_priority(c->session);
	gnutls_credentials_set(c->session, GNUTLS_CRD_CERTIFICATE, c->cred);
	gnutls_transport_set_int(c->session, c->fd);
	gnutls_handshake_set_timeout(c->session, 10000);
	int rc;
	do
		rc = gnutls_handshake(c->session);
	while (rc < 0 && !gnutls_error_is_fatal(rc));
	ck_assert_msg(rc == 0, "handshake: %s", gnutls_strerror(rc));
}

static void tls_close(tls_client *c)
{
	gnutls_deinit(c->session);
	gnutls_certificate_free_credentials(c->cred);
	close(c->fd);
}

/* SHA-256 of the certificate the server presented, hex. */
static void peer_fingerprint(tls_client *c, char *out, size_t len)
{
	unsigned int n = 0;
	const gnutls_datum_t *certs = gnutls_certificate_get_peers(c->session, &n);
	ck_assert_uint_ge(n, 1);
	unsigned char md[32];
	size_t ml = sizeof(md);
	ck_assert_int_eq(gnutls_fingerprint(GNUTLS_DIG_SHA256, &certs[0], md, &ml), 0);
	for (size_t i = 0; i < ml && 2 * i + 2 < len; i++)
		snprintf(out + 2 * i, 3, "%02x", md[i]);
}

/* POST body_len bytes of 'x' to path (announced with Content-Length); the status answered. */
static int tls_post(int port, const char *path, size_t body_len)
{
	tls_client c;
	tls_connect(&c, port);
	char head[256];
	int n = snprintf(head, sizeof(head), "POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
	                 "Content-Length: %zu\r\n\r\n", path, body_len);
	ck_assert_int_eq(gnutls_record_send(c.session, head, (size_t)n), n);
	static char chunk[65536];
	memset(chunk, 'x', sizeof(chunk));
	for (size_t sent = 0; sent < body_len;) {
		size_t k = body_len - sent < sizeof(chunk) ? body_len - sent : sizeof(chunk);
		ssize_t w = gnutls_record_send(c.session, chunk, k);
		if (w <= 0)
			break; /* the server answered early and closed */
		sent += (size_t)w;
	}
	char buf[1024];
	ssize_t got = gnutls_record_recv(c.session, buf, sizeof(buf) - 1);
	int code = 0;
	if (got > 0) {
		buf[got] = 0;
		sscanf(buf, "HTTP/1.1 %d", &code);
	}
	tls_close(&c);
	return code;
}

static size_t reviewed_len;

static char *fake_review(void *payload, const char *path, const char *body, size_t len, int *status)
{
	(void)payload, (void)path, (void)body;
	reviewed_len = len;
	*status = 200;
	return strdup("{}");
}

START_TEST(webhook_server)
{
	char e[256];
	op_cert_pem ca = { 0 }, one = { 0 }, two = { 0 };
	ck_assert_int_eq(op_certs_make_ca(&ca, "ca", NULL, 3600, e, sizeof(e)), 0);
	ck_assert_int_eq(op_certs_make_serving(&one, &ca, names, 2, 3600, e, sizeof(e)), 0);
	ck_assert_int_eq(op_certs_make_serving(&two, &ca, names, 2, 3600, e, sizeof(e)), 0);
	ck_assert_int_eq(op_tls_store_set(one.crt, one.key, e, sizeof(e)), 0);
	op_http_options o = { .webhook_addr = "127.0.0.1:0", .webhook = fake_review, .webhook_path = "/review" };
	op_http *h = NULL;
	ck_assert_int_eq(op_http_start(&h, &o, e, sizeof(e)), 0);
	int port = op_http_port(h, 2);
	ck_assert_int_gt(port, 0);
	ck_assert_int_eq(tls_post(port, "/review", 100), 200);
	ck_assert_uint_eq(reviewed_len, 100);
	ck_assert_int_eq(tls_post(port, "/elsewhere", 10), 404);
	/* the body limit: exactly OP_HTTP_MAX_BODY is read whole, one byte more is refused */
	ck_assert_int_eq(tls_post(port, "/review", OP_HTTP_MAX_BODY), 200);
	ck_assert_uint_eq(reviewed_len, OP_HTTP_MAX_BODY);
	ck_assert_int_eq(tls_post(port, "/review", OP_HTTP_MAX_BODY + 1), 413);
	/* a new certificate is presented from the next handshake on, without a restart */
	char want[80], got[80] = "";
	tls_client c;
	tls_connect(&c, port);
	peer_fingerprint(&c, got, sizeof(got));
	tls_close(&c);
	op_tls_store_fingerprint(want, sizeof(want));
	ck_assert_str_eq(got, want);
	char first[80];
	snprintf(first, sizeof(first), "%s", got);
	ck_assert_int_eq(op_tls_store_set(two.crt, two.key, e, sizeof(e)), 0);
	tls_connect(&c, port);
	peer_fingerprint(&c, got, sizeof(got));
	tls_close(&c);
	op_tls_store_fingerprint(want, sizeof(want));
	ck_assert_str_eq(got, want);
	ck_assert_str_ne(got, first);
	op_http_stop(h);
	op_tls_store_clear();
	op_cert_pem_clear(&ca);
	op_cert_pem_clear(&one);
	op_cert_pem_clear(&two);
}
END_TEST

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Replace DIR/NAME as a writer should: a new file renamed over the old one. */
static void replace_file(const char *name, const char *text)
{
	char tmp[64];
	snprintf(tmp, sizeof(tmp), ".%s.new", name);
	tu_write_tmp(tmp, text, strlen(text));
	char from[4096];
	snprintf(from, sizeof(from), "%s", tu_tmp_path(tmp));
	ck_assert_int_eq(rename(from, tu_tmp_path(name)), 0);
}

/* Wait up to ms for the served certificate's fingerprint to differ from `old`; elapsed ms or -1. */
static int64_t wait_served_change(const char *old, int64_t ms)
{
	char fp[80];
	for (int64_t start = now_ms(), waited = 0; waited <= ms; waited = now_ms() - start) {
		op_tls_store_fingerprint(fp, sizeof(fp));
		if (strcmp(fp, old))
			return waited;
		usleep(10000);
	}
	return -1;
}

START_TEST(certificate_directory)
{
	char e[256], fp[80], dir[4096];
	op_cert_pem ca = { 0 }, one = { 0 }, two = { 0 };
	ck_assert_int_eq(op_certs_make_ca(&ca, "test-ca", "test", 3600, e, sizeof(e)), 0);
	ck_assert_int_eq(op_certs_make_serving(&one, &ca, names, 2, 3600, e, sizeof(e)), 0);
	ck_assert_int_eq(op_certs_make_serving(&two, &ca, names, 2, 3600, e, sizeof(e)), 0);
	op_tls_store_clear();
	tu_tmpdir_make("certdir");
	snprintf(dir, sizeof(dir), "%s", tu_tmp_path(""));
	dir[strlen(dir) - 1] = '\0'; /* no trailing slash */
	replace_file("tls.key", one.key);
	replace_file("tls.crt", one.crt);
	op_certmgr_options o = { .namespace_name = "kubeflow", .service_name = "training-operator", .cert_dir = dir };
	tu_threads others;
	tu_threads_now(&others);
	op_certmgr *m = NULL;
	ck_assert_int_eq(op_certmgr_start(&m, &o, e, sizeof(e)), 0);
	for (int i = 0; i < 500 && !op_certmgr_ready(m); i++)
		usleep(10000);
	ck_assert(op_certmgr_ready(m));
	op_tls_store_fingerprint(fp, sizeof(fp));
	/* Idle: the thread sleeps until the directory changes (it used to read it every 2 s). */
	usleep(300000);
	long before = tu_new_threads_sleeps(&others);
	usleep(4200000);
	long woke = tu_new_threads_sleeps(&others) - before;
	ck_assert_msg(woke <= 1, "the certificate thread woke %ld times in 4.2 s with nothing changed", woke);
	/* A new pair is served as soon as both files are there. */
	replace_file("tls.key", two.key);
	replace_file("tls.crt", two.crt);
	int64_t took = wait_served_change(fp, 1500);
	ck_assert_msg(took >= 0 && took < 1500, "the new certificate was not served within 1.5 s");
	/* A directory that goes and comes back is followed again. */
	op_tls_store_fingerprint(fp, sizeof(fp));
	char moved[4200];
	snprintf(moved, sizeof(moved), "%s.gone", dir);
	ck_assert_int_eq(rename(dir, moved), 0);
	ck_assert_int_eq(rename(moved, dir), 0);
	usleep(300000);
	replace_file("tls.key", one.key);
	replace_file("tls.crt", one.crt);
	ck_assert_msg(wait_served_change(fp, 5000) >= 0, "the directory was not followed after it came back");
	int64_t t0 = now_ms();
	op_certmgr_stop(m);
	ck_assert_msg(now_ms() - t0 < 1000, "stopping took %lld ms", (long long)(now_ms() - t0));
	op_tls_store_clear();
	tu_tmpdir_remove();
	op_cert_pem_clear(&ca);
	op_cert_pem_clear(&one);
	op_cert_pem_clear(&two);
}
END_TEST

int main(void)
{
	/* tls_post writes bodies the server may refuse early and close on (413): a write to the
	   closed socket must fail with EPIPE, not kill the test (the operator ignores SIGPIPE too). */
	signal(SIGPIPE, SIG_IGN);
	Suite *s = suite_create("operator");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, certificates);
	tcase_add_test(tc, admission_reviews);
	tcase_add_test(tc, http_servers);
	tcase_add_test(tc, webhook_server);
	tcase_add_test(tc, certificate_directory);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
