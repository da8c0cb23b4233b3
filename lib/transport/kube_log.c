/*
 * Container logs through the API server (GET .../pods/NAME/log): the bytes handed on as they
 * arrive, streamed without an overall timeout when following.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/kube_internal.h"
#include "util/versioned_structs.h"

struct log_read {
	tfjob_pod_log_cb on_data;
	void *payload;
	struct tfjob__http_response resp; /* status line, Retry-After, and the body of an error answer */
	int delivered;                /* bytes went to on_data */
	int stop;                     /* on_data asked to stop */
	int64_t last_call_ms;         /* when on_data was last called (idle calls once a second) */
};

int tfjob_pod_log_options_init(tfjob_pod_log_options *opts, unsigned int version)
{
	return tfjob__versioned_init(&tfjob__pod_log_options_v, opts, version);
}

static size_t on_log_data(char *data, size_t size, size_t n, void *arg)
{
	struct log_read *lr = arg;
	size_t len = size * n;
	if (lr->resp.status_line != 200)
		return tfjob__http_body_append(&lr->resp, data, len, TFJOB__HTTP_MAX_ERROR_BODY) == 0 || lr->resp.too_large
		           ? len
		           : 0;
	if (len == 0)
		return 0;
	lr->delivered = 1;
	lr->last_call_ms = tfjob__monotonic_ms();
	if (lr->on_data(data, len, lr->payload)) {
		lr->stop = 1;
		return 0; /* aborts the transfer */
	}
	return len;
}

/* libcurl's progress callback, called about once a second even while nothing arrives: the
 * caller's chance to stop a silent followed log. */
static int on_log_progress(void *arg, curl_off_t dltotal, curl_off_t dlnow, curl_off_t ultotal, curl_off_t ulnow)
{
	(void)dltotal;
	(void)dlnow;
	(void)ultotal;
	(void)ulnow;
	struct log_read *lr = arg;
	int64_t now = tfjob__monotonic_ms();
	if (lr->resp.status_line != 200 || now - lr->last_call_ms < 1000)
		return 0;
	lr->last_call_ms = now;
	if (lr->on_data(NULL, 0, lr->payload)) {
		lr->stop = 1;
		return 1;
	}
	return 0;
}

static char *log_path(const char *ns, const char *pod, const tfjob_pod_log_options *o)
{
	const tfjob_resource *pods = tfjob_resource_lookup("pods");
	char *base = tfjob__resource_path(pods, ns, pod, "log"), *q = NULL;
	char num[32];
	int bad = !base;
	if (!bad && o->container && o->container[0])
		bad = tfjob__query_add(&q, "container", o->container);
	if (!bad && o->follow)
		bad = tfjob__query_add(&q, "follow", "true");
	if (!bad && o->previous)
		bad = tfjob__query_add(&q, "previous", "true");
	if (!bad && o->timestamps)
		bad = tfjob__query_add(&q, "timestamps", "true");
	if (!bad && o->tail_lines >= 0) {
		snprintf(num, sizeof(num), "%lld", (long long)o->tail_lines);
		bad = tfjob__query_add(&q, "tailLines", num);
	}
	if (!bad && o->since_seconds > 0) {
		snprintf(num, sizeof(num), "%lld", (long long)o->since_seconds);
		bad = tfjob__query_add(&q, "sinceSeconds", num);
	}
	if (!bad && o->since_time && o->since_time[0])
		bad = tfjob__query_add(&q, "sinceTime", o->since_time);
	if (!bad && o->limit_bytes > 0) {
		snprintf(num, sizeof(num), "%lld", (long long)o->limit_bytes);
		bad = tfjob__query_add(&q, "limitBytes", num);
	}
	char *path = bad ? NULL : tfjob__strdup_printf("%s%s", base, q ? q : "");
	free(base);
	free(q);
	return path;
}

/* One request; the answer's status and errors in lr->resp. */
static void read_once(struct tfjob__kube *k, const char *path, int follow, struct log_read *lr)
{
	tfjob__http_response_clear(&lr->resp);
	struct curl_slist *connect_to = NULL;
	CURL *easy = tfjob__http_easy(k, "GET", path, NULL, &connect_to, follow);
	struct curl_slist *headers = easy ? tfjob__http_headers(NULL) : NULL;
	if (tfjob__http_ready(k, easy, &headers, &lr->resp)) {
		curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
		curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_log_data);
		curl_easy_setopt(easy, CURLOPT_WRITEDATA, lr);
		curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, tfjob__http_on_header);
		curl_easy_setopt(easy, CURLOPT_HEADERDATA, &lr->resp);
		curl_easy_setopt(easy, CURLOPT_XFERINFOFUNCTION, on_log_progress);
		curl_easy_setopt(easy, CURLOPT_XFERINFODATA, lr);
		curl_easy_setopt(easy, CURLOPT_NOPROGRESS, 0L);
		curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, lr->resp.curl_error);
		lr->resp.curl_error[0] = '\0';
		lr->last_call_ms = tfjob__monotonic_ms();
		lr->resp.curl_code = curl_easy_perform(easy);
		curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &lr->resp.status);
		if (lr->resp.curl_code != CURLE_OK && !lr->resp.curl_error[0])
			snprintf(lr->resp.curl_error, sizeof(lr->resp.curl_error), "%s", curl_easy_strerror(lr->resp.curl_code));
	}
	tfjob__http_easy_done(k, easy);
	curl_slist_free_all(headers);
	curl_slist_free_all(connect_to);
}

int tfjob_kube_pod_log(tfjob_transport *t, const char *ns, const char *pod, const tfjob_pod_log_options *caller_opts,
                       tfjob_pod_log_cb on_data, void *payload, tfjob_error **err)
{
	if (!tfjob_kube_transport_is(t))
		return tfjob__fail(err, TFJOB_EINVAL, "pod log: the transport is not a Kubernetes one");
	if (!pod || !pod[0] || !on_data)
		return tfjob__fail(err, TFJOB_EINVAL, "pod log: a pod name and a callback are required");
	tfjob_pod_log_options opts = TFJOB_POD_LOG_OPTIONS_INIT;
	int rc;
	if (caller_opts && (rc = tfjob__versioned_copy(&tfjob__pod_log_options_v, &opts, caller_opts, err)))
		return rc;
	if (opts.since_seconds > 0 && opts.since_time && opts.since_time[0])
		return tfjob__fail(err, TFJOB_EINVAL, "pod log: since_seconds and since_time exclude each other");
	struct tfjob__kube *k = t->be.data;
	if (!ns)
		ns = k->cfg.namespace_name ? k->cfg.namespace_name : "default";
	char *path = log_path(ns, pod, &opts);
	if (!path)
		return tfjob__oom(err);
	struct log_read lr = { .on_data = on_data, .payload = payload };
	int auth_retried = 0;
	for (int attempt = 0;; attempt++) {
		tfjob__sleep_ms(tfjob__ratelimit_reserve(&k->rl));
		read_once(k, path, opts.follow, &lr);
		if (lr.stop) {
			rc = 0;
			break;
		}
		if (lr.resp.curl_code == CURLE_OK && lr.resp.status == 200) {
			rc = 0;
			break;
		}
		if (lr.resp.curl_code != CURLE_OK && lr.resp.status == 200)
			lr.resp.status = 0; /* cut mid-stream: a network error */
		rc = tfjob__http_code(&lr.resp);
		if (!lr.delivered && rc == TFJOB_EUNAUTHORIZED && lr.resp.curl_code == CURLE_OK && !auth_retried &&
		    tfjob__kube_auth_invalidate(k)) {
			auth_retried = 1;
			attempt--;
			continue;
		}
		/* Before any byte: the failures a retry may cure (429, 5xx, the network), as other reads. */
		int transient = lr.resp.curl_code != CURLE_OK || lr.resp.status == 429 || lr.resp.status >= 500;
		if (lr.delivered || !transient || attempt >= k->max_retries) {
			rc = tfjob__http_fail(err, "GET", path, &lr.resp);
			break;
		}
		tfjob__sleep_ms(lr.resp.retry_after_ms >= 0 ? lr.resp.retry_after_ms : tfjob__backoff_ms(k, attempt));
	}
	tfjob__http_response_clear(&lr.resp);
	free(path);
	return rc;
}
