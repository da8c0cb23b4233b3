/*
 * HTTP for the Kubernetes backend: easy handles sharing connections, DNS and TLS sessions;
 * TLS and credentials; responses; mapping of API errors and curl errors to TFJOB_E* codes.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "parse/doc.h"
#include "transport/kube_internal.h"
#include "util/sbuf.h"

void tfjob__http_response_clear(struct tfjob__http_response *r)
{
	free(r->body);
	free(r->warnings);
	memset(r, 0, sizeof(*r));
	r->retry_after_ms = -1;
}

int tfjob__http_body_append(struct tfjob__http_response *r, const char *data, size_t len, size_t max)
{
	if (len > max || r->len > max - len) {
		r->too_large = 1;
		return -1;
	}
	if (r->len + len + 1 > r->cap) {
		/* Geometric growth: a large list arrives in thousands of small pieces. */
		size_t cap = r->cap ? r->cap : 16384;
		while (cap < r->len + len + 1)
			cap = cap > max / 2 ? max + 1 : cap * 2;
		char *grown = realloc(r->body, cap);
		if (!grown)
			return -1;
		r->body = grown;
		r->cap = cap;
	}
	memcpy(r->body + r->len, data, len);
	r->len += len;
	r->body[r->len] = '\0';
	return 0;
}

static size_t on_body(char *data, size_t size, size_t n, void *arg)
{
	size_t len = size * n;
	return tfjob__http_body_append(arg, data, len, TFJOB__HTTP_MAX_BODY) ? 0 : len;
}

/*
 * A Warning header (RFC 7234: `299 - "text"`, as the API server sends them): its text, unquoted,
 * appended to r->warnings as a line. Headers past TFJOB__HTTP_MAX_WARNINGS are dropped.
 */
static void record_warning(struct tfjob__http_response *r, const char *v, size_t len)
{
	const char *end = v + len, *q = memchr(v, '"', len);
	if (!q)
		return;
	tfjob__sbuf b = TFJOB__SBUF_INIT;
	if (r->warnings)
		tfjob__sbuf_adds(&b, r->warnings);
	for (q++; q < end && *q != '"'; q++) {
		if (*q == '\\' && q + 1 < end)
			q++;
		tfjob__sbuf_addc(&b, *q);
	}
	tfjob__sbuf_addc(&b, '\n');
	if (b.oom || b.len > TFJOB__HTTP_MAX_WARNINGS) {
		tfjob__sbuf_free(&b);
		return;
	}
	free(r->warnings);
	r->warnings = tfjob__sbuf_take(&b);
}

static size_t on_header(char *data, size_t size, size_t n, void *arg)
{
	struct tfjob__http_response *r = arg;
	size_t len = size * n;
	if (len > 5 && !strncmp(data, "HTTP/", 5)) { /* "HTTP/1.1 200 OK", "HTTP/2 403" */
		const char *sp = memchr(data, ' ', len);
		r->status_line = sp ? strtol(sp + 1, NULL, 10) : 0;
		return len;
	}
	static const char warning[] = "warning:";
	if (len > sizeof(warning) && !strncasecmp(data, warning, sizeof(warning) - 1)) {
		record_warning(r, data + sizeof(warning) - 1, len - (sizeof(warning) - 1));
		return len;
	}
	static const char name[] = "retry-after:";
	if (len > sizeof(name) && !strncasecmp(data, name, sizeof(name) - 1)) {
		char buf[64];
		size_t vlen = len - (sizeof(name) - 1);
		if (vlen >= sizeof(buf))
			vlen = sizeof(buf) - 1;
		memcpy(buf, data + sizeof(name) - 1, vlen);
		buf[vlen] = '\0';
		char *v = buf, *end;
		while (*v == ' ' || *v == '\t')
			v++;
		size_t vl = strlen(v);
		while (vl > 0 && (v[vl - 1] == '\r' || v[vl - 1] == '\n' || v[vl - 1] == ' ' || v[vl - 1] == '\t'))
			v[--vl] = '\0';
		long secs = strtol(v, &end, 10);
		if (end != v && *end == '\0') {
			if (secs >= 0)
				r->retry_after_ms = (int64_t)(secs > 600 ? 600 : secs) * 1000;
		} else if (vl > 0) {
			/* RFC 9110 also allows an HTTP-date: wait until then (0 when it has passed). */
			time_t when = curl_getdate(v, NULL);
			if (when != (time_t)-1) {
				long long d = (long long)(when - time(NULL));
				r->retry_after_ms = (int64_t)(d < 0 ? 0 : d > 600 ? 600 : d) * 1000;
			}
		}
	}
	return len;
}

int tfjob__query_add(char **query, const char *key, const char *value)
{
	char *esc = curl_easy_escape(NULL, value, 0);
	if (!esc)
		return TFJOB_ENOMEM;
	char *next = tfjob__strdup_printf("%s%s%s=%s", *query ? *query : "", *query ? "&" : "?", key, esc);
	curl_free(esc);
	if (!next)
		return TFJOB_ENOMEM;
	free(*query);
	*query = next;
	return 0;
}

static void set_blob(CURL *easy, CURLoption opt, const char *data, size_t len)
{
	struct curl_blob blob = { (void *)data, len, CURL_BLOB_COPY };
	curl_easy_setopt(easy, opt, &blob);
}

static void configure_tls(struct tfjob__kube *k, CURL *easy)
{
	const struct tfjob__kube_config *c = &k->cfg;
	if (c->insecure) {
		curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 0L);
		curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 0L);
	} else {
		curl_easy_setopt(easy, CURLOPT_SSL_VERIFYPEER, 1L);
		curl_easy_setopt(easy, CURLOPT_SSL_VERIFYHOST, 2L);
	}
	if (c->ca_data)
		set_blob(easy, CURLOPT_CAINFO_BLOB, c->ca_data, c->ca_len);
	if (c->cert_data && c->key_data) {
		set_blob(easy, CURLOPT_SSLCERT_BLOB, c->cert_data, c->cert_len);
		curl_easy_setopt(easy, CURLOPT_SSLCERTTYPE, "PEM");
		set_blob(easy, CURLOPT_SSLKEY_BLOB, c->key_data, c->key_len);
		curl_easy_setopt(easy, CURLOPT_SSLKEYTYPE, "PEM");
	}
}

struct curl_slist *tfjob__http_headers(const char *content_type)
{
	struct curl_slist *h = curl_slist_append(NULL, "Accept: application/json");
	if (h && content_type) {
		char line[128];
		snprintf(line, sizeof(line), "Content-Type: %s", content_type);
		struct curl_slist *more = curl_slist_append(h, line);
		if (!more) {
			curl_slist_free_all(h);
			return NULL;
		}
		h = more;
	}
	return h;
}

/* A kept handle (options at their defaults), else a new one; NULL when out of memory. */
static CURL *take_kept(struct tfjob__kube *k)
{
	CURL *easy = NULL;
	pthread_mutex_lock(&k->pool_mu);
	if (k->pooled)
		easy = k->pool[--k->pooled];
	pthread_mutex_unlock(&k->pool_mu);
	return easy ? easy : curl_easy_init();
}

void tfjob__http_easy_done(struct tfjob__kube *k, CURL *easy)
{
	if (!easy)
		return;
	curl_easy_reset(easy);
	pthread_mutex_lock(&k->pool_mu);
	if (k->pooled < TFJOB__HTTP_POOLED_HANDLES) {
		k->pool[k->pooled++] = easy;
		easy = NULL;
	}
	pthread_mutex_unlock(&k->pool_mu);
	curl_easy_cleanup(easy);
}

void tfjob__http_pool_clear(struct tfjob__kube *k)
{
	pthread_mutex_lock(&k->pool_mu);
	while (k->pooled)
		curl_easy_cleanup(k->pool[--k->pooled]);
	pthread_mutex_unlock(&k->pool_mu);
}

CURL *tfjob__http_easy(struct tfjob__kube *k, const char *method, const char *path, const char *body,
                       struct curl_slist **connect_to, int streaming)
{
	*connect_to = NULL;
	CURL *easy = take_kept(k);
	char *url = tfjob__strdup_printf("%s%s", k->url_base, path);
	if (k->connect_to)
		*connect_to = curl_slist_append(NULL, k->connect_to);
	if (!easy || !url || (k->connect_to && !*connect_to)) {
		tfjob__http_easy_done(k, easy);
		curl_slist_free_all(*connect_to);
		*connect_to = NULL;
		free(url);
		return NULL;
	}
	curl_easy_setopt(easy, CURLOPT_URL, url);
	free(url);
	curl_easy_setopt(easy, CURLOPT_SHARE, k->share);
	curl_easy_setopt(easy, CURLOPT_MAXCONNECTS, TFJOB__HTTP_MAX_CONNECTIONS);
	curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(easy, CURLOPT_USERAGENT, k->user_agent);
	curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, (long)k->connect_timeout_ms);
	if (!streaming)
		curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, (long)k->request_timeout_ms);
	curl_easy_setopt(easy, CURLOPT_TCP_KEEPALIVE, 1L);
	/* HTTP/1.1 on kept-alive connections: each request runs alone (one easy handle at a time), so
	 * HTTP/2 would multiplex nothing, and its framing cost a quarter more CPU per request. */
	curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
	curl_easy_setopt(easy, CURLOPT_PROTOCOLS_STR, "http,https");
	if (*connect_to)
		curl_easy_setopt(easy, CURLOPT_CONNECT_TO, *connect_to);
	curl_easy_setopt(easy, CURLOPT_PROXY, k->proxy);
	curl_easy_setopt(easy, CURLOPT_NOPROXY, k->no_proxy);
	configure_tls(k, easy);
	if (!strcmp(method, "GET")) {
		curl_easy_setopt(easy, CURLOPT_HTTPGET, 1L);
		/* Accept-Encoding with what libcurl can decode (gzip, deflate, ...), as client-go asks
		 * for gzip: the API server compresses large lists. Other verbs answer with the one
		 * object sent, no larger than the request, and decoders set up for them cost CPU. */
		curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");
	} else
		curl_easy_setopt(easy, CURLOPT_CUSTOMREQUEST, method);
	if (body) {
		curl_easy_setopt(easy, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(easy, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)strlen(body));
	}
	return easy;
}

bool tfjob__http_ready(struct tfjob__kube *k, CURL *easy, struct curl_slist **headers,
                       struct tfjob__http_response *resp)
{
	tfjob_error *auth_err = NULL;
	if (!easy || !*headers) {
		resp->curl_code = CURLE_OUT_OF_MEMORY;
		snprintf(resp->curl_error, sizeof(resp->curl_error), "out of memory");
		return false;
	}
	if (k->host_header) {
		struct curl_slist *more = curl_slist_append(*headers, k->host_header);
		if (!more) {
			resp->curl_code = CURLE_OUT_OF_MEMORY;
			snprintf(resp->curl_error, sizeof(resp->curl_error), "out of memory");
			return false;
		}
		*headers = more;
	}
	if (tfjob__kube_auth_apply(k, easy, headers, &auth_err)) {
		resp->curl_code = CURLE_LOGIN_DENIED;
		snprintf(resp->curl_error, sizeof(resp->curl_error), "%s", tfjob_error_message(auth_err));
		tfjob_error_free(auth_err);
		return false;
	}
	return true;
}

/*
 * An API server writes a float64 it stores as digits (1e20 as 100000000000000000000); jansson
 * refuses such integers, so every caller would fail on the whole response. Make them reals.
 */
static void widen_body(struct tfjob__http_response *r)
{
	char *wide = NULL;
	if (!r->body || tfjob__json_widen(&wide, r->body, r->len) != 1)
		return;
	free(r->body);
	r->body = wide;
	r->len = strlen(wide);
	r->cap = r->len + 1;
}

void tfjob__http_perform(struct tfjob__kube *k, const char *method, const char *path, const char *body,
                         const char *content_type, struct tfjob__http_response *resp)
{
	tfjob__http_response_clear(resp);
	struct curl_slist *connect_to = NULL;
	CURL *easy = tfjob__http_easy(k, method, path, body, &connect_to, 0);
	struct curl_slist *headers = easy ? tfjob__http_headers(content_type) : NULL;
	if (tfjob__http_ready(k, easy, &headers, resp)) {
		curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
		curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
		curl_easy_setopt(easy, CURLOPT_WRITEDATA, resp);
		curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
		curl_easy_setopt(easy, CURLOPT_HEADERDATA, resp);
		curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, resp->curl_error);
		resp->curl_error[0] = '\0';
		resp->curl_code = curl_easy_perform(easy);
		if (resp->too_large) {
			resp->curl_code = CURLE_FILESIZE_EXCEEDED;
			snprintf(resp->curl_error, sizeof(resp->curl_error), "the response body is larger than the limit of %zu bytes",
			         TFJOB__HTTP_MAX_BODY);
		}
		if (resp->curl_code == CURLE_OK) {
			curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &resp->status);
			widen_body(resp);
		} else if (!resp->curl_error[0])
			snprintf(resp->curl_error, sizeof(resp->curl_error), "%s", curl_easy_strerror(resp->curl_code));
	}
	tfjob__http_easy_done(k, easy);
	curl_slist_free_all(headers);
	curl_slist_free_all(connect_to);
}

/* Header callback, exported for streamed requests: records the status line, Retry-After and
   the Warnings into a tfjob__http_response. */
size_t tfjob__http_on_header(char *data, size_t size, size_t n, void *arg) { return on_header(data, size, n, arg); }

static int code_for_curl(CURLcode c)
{
	switch (c) {
	case CURLE_OPERATION_TIMEDOUT:
		return TFJOB_ETIMEOUT;
	case CURLE_OUT_OF_MEMORY:
		return TFJOB_ENOMEM;
	case CURLE_LOGIN_DENIED:
		return TFJOB_EUNAUTHORIZED;
	case CURLE_FILESIZE_EXCEEDED:
		return TFJOB_ELIMIT;
	default:
		return TFJOB_ENETWORK;
	}
}

int tfjob__http_code(const struct tfjob__http_response *r)
{
	if (r->curl_code != CURLE_OK)
		return code_for_curl(r->curl_code);
	long s = r->status;
	if (s >= 200 && s < 300)
		return 0;
	switch (s) {
	case 400:
		return TFJOB_EINVAL;
	case 401:
		return TFJOB_EUNAUTHORIZED;
	case 403:
		return TFJOB_EFORBIDDEN;
	case 404:
		return TFJOB_ENOTFOUND;
	case 408:
	case 504:
		return TFJOB_ETIMEOUT;
	case 409: {
		json_t *st = r->body ? json_loads(r->body, 0, NULL) : NULL;
		const char *reason = json_string_value(json_object_get(st, "reason"));
		int code = reason && !strcmp(reason, "AlreadyExists") ? TFJOB_EEXISTS : TFJOB_ECONFLICT;
		json_decref(st);
		return code;
	}
	case 410:
		return TFJOB_EGONE;
	case 422:
		return TFJOB_EINVALID;
	case 429:
		return TFJOB_ETOOMANYREQUESTS;
	default:
		return s >= 500 ? TFJOB_ESERVER : TFJOB_ERROR;
	}
}

int tfjob__http_fail(tfjob_error **err, const char *method, const char *path, const struct tfjob__http_response *r)
{
	int code = tfjob__http_code(r);
	if (r->curl_code != CURLE_OK)
		return tfjob__api_fail(err, code, 0, NULL, "%s %s: %s", method, path, r->curl_error);
	json_t *st = r->body ? json_loads(r->body, 0, NULL) : NULL;
	const char *msg = json_string_value(json_object_get(st, "message"));
	json_t *details = json_object_get(st, "details");
	char *dtext = json_is_object(details) ? json_dumps(details, JSON_COMPACT) : NULL;
	if (msg && msg[0])
		tfjob__api_fail(err, code, (int)r->status, dtext, "%s", msg);
	else {
		/* Not a Status: show a bounded piece of the body. */
		int n = r->body ? (int)(r->len > 200 ? 200 : r->len) : 0;
		tfjob__api_fail(err, code, (int)r->status, dtext, "%s %s: HTTP %ld%s%.*s", method, path, r->status,
		                n ? ": " : "", n, r->body ? r->body : "");
	}
	const char *reason = json_string_value(json_object_get(st, "reason"));
	if (err && *err && reason && reason[0])
		(*err)->reason = tfjob__strdup(reason); /* NULL on out of memory: the reason is optional */
	free(dtext);
	json_decref(st);
	return code;
}

int64_t tfjob__backoff_ms(const struct tfjob__kube *k, int attempt)
{
	int64_t ms = k->retry_base_ms;
	for (int i = 0; i < attempt && ms < 30000; i++)
		ms *= 2;
	if (ms > 30000)
		ms = 30000;
	/* Jitter: between 0.5 and 1.5 times the step. */
	return ms / 2 + (int64_t)((double)rand() / ((double)RAND_MAX + 1.0) * (double)ms);
}

int tfjob__sleep_unless(int64_t ms, const tfjob_watch_sink *stop)
{
	int64_t end = tfjob__monotonic_ms() + ms;
	for (;;) {
		if (stop && tfjob_watch_sink_stopped(stop))
			return 1;
		int64_t left = end - tfjob__monotonic_ms();
		if (left <= 0)
			return 0;
		tfjob__sleep_ms(left > 50 ? 50 : left);
	}
}
