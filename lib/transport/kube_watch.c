/*
 * Watches against the API server: a streaming GET ?watch=true whose body is split into events
 * as it arrives; bookmarks; reconnects from the last resourceVersion with backoff; TFJOB_EGONE
 * (relist) on HTTP 410 or an in-stream ERROR event with code 410.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "parse/doc.h"
#include "parse/jscan.h"
#include "transport/kube_internal.h"
#include "transport/watch_splitter.h"

/* State of one watch across its reconnects. */
struct stream {
	struct tfjob__kube *k;
	tfjob_watch_sink *sink;
	tfjob__splitter splitter;
	char *rv;              /* last resourceVersion seen (resume point) */
	int got_events;        /* events in the current connection */
	int stop;              /* the callback asked to stop */
	int error_code;        /* an in-stream ERROR event: its TFJOB_E* code */
	int error_status;
	char *error_message;
	char *error_reason;    /* its Status.reason, or NULL */
	struct tfjob__http_response resp; /* status, Retry-After and (for errors) the body */
	CURLM *multi;          /* drives the transfers (stream_transfer) */
};

#define WATCH_GRACE_S 60          /* beyond timeoutSeconds before a silent stream counts as broken */
#define WATCH_MAX_SLEEP_MS 60000  /* a safety net: data, libcurl's timers and a stop wake it anyway */

static tfjob_watch_event event_type(const char *s)
{
	if (!s)
		return 0;
	if (!strcmp(s, "ADDED"))
		return TFJOB_WATCH_ADDED;
	if (!strcmp(s, "MODIFIED"))
		return TFJOB_WATCH_MODIFIED;
	if (!strcmp(s, "DELETED"))
		return TFJOB_WATCH_DELETED;
	if (!strcmp(s, "BOOKMARK"))
		return TFJOB_WATCH_BOOKMARK;
	return 0;
}

static int error_event(struct stream *st, const json_t *status)
{
	json_int_t code = json_integer_value(json_object_get(status, "code"));
	const char *msg = json_string_value(json_object_get(status, "message"));
	st->error_status = (int)code;
	struct tfjob__http_response fake = { .status = (long)code };
	st->error_code = code == 410 ? TFJOB_EGONE : tfjob__http_code(&fake);
	if (!st->error_code)
		st->error_code = TFJOB_ESERVER;
	free(st->error_message);
	st->error_message = tfjob__strdup(msg ? msg : "watch error");
	const char *reason = json_string_value(json_object_get(status, "reason"));
	free(st->error_reason);
	st->error_reason = reason && reason[0] ? tfjob__strdup(reason) : NULL;
	return 1;
}

/* Remember where the stream is: the event object's resourceVersion (the resume point). */
static void note_rv(struct stream *st, const char *rv, size_t len)
{
	char *copy = len ? strndup(rv, len) : NULL;
	if (copy) {
		free(st->rv);
		st->rv = copy;
	}
}

/* Hand one event's object text to the sink. Non-zero stops the transfer. */
static int emit(struct stream *st, tfjob_watch_event type, const char *text)
{
	st->got_events = 1;
	if (tfjob_watch_sink_emit(st->sink, type, text))
		return st->stop = 1;
	return 0;
}

/* The general reading of an event: parsed whole, its object written out again. */
static int on_value_parsed(struct stream *st, const char *value, size_t len)
{
	char *wide = NULL; /* integers beyond int64 as reals, as for every other response */
	if (tfjob__json_widen(&wide, value, len) < 0)
		return 1;
	json_t *ev = json_loads(wide ? wide : value, 0, NULL);
	free(wide);
	const char *type = json_string_value(json_object_get(ev, "type"));
	json_t *obj = json_object_get(ev, "object");
	int rc = 0;
	if (type && !strcmp(type, "ERROR")) {
		rc = error_event(st, obj);
	} else if (event_type(type) && json_is_object(obj)) {
		const char *rv = json_string_value(json_object_get(json_object_get(obj, "metadata"), "resourceVersion"));
		note_rv(st, rv, rv ? strlen(rv) : 0);
		char *text = json_dumps(obj, JSON_COMPACT);
		rc = text ? emit(st, event_type(type), text) : 0;
		free(text);
	}
	json_decref(ev);
	return rc;
}

/* The type of an event whose "type" member [type, type_end) is a string written plainly (as
   event_type() reads it); 0 otherwise. */
static tfjob_watch_event plain_type(const char *type, const char *type_end)
{
	char name[16];
	size_t n = (size_t)(type_end - type);
	if (n < 2 || n - 2 >= sizeof(name) || type[0] != '"' || type[n - 1] != '"' || memchr(type, '\\', n))
		return 0;
	memcpy(name, type + 1, n - 2);
	name[n - 2] = '\0';
	return event_type(name);
}

/*
 * The usual event, read without building a tree: valid JSON (as deep as the general reading
 * accepts), a plain type, an object and a plainly written resourceVersion; its object text goes
 * to the sink as the server wrote it (widened where integers exceed int64). 1 when handled (*rc
 * set), 0 when the event needs the general reading (an ERROR, escapes, anything unusual).
 */
static int on_value_scanned(struct stream *st, const char *value, size_t value_len, int *rc)
{
	const char *t, *t_end, *o, *o_end, *md, *md_end, *rv, *rv_end;
	if (!tfjob__jscan_member(value, "\"type\"", &t, &t_end) || !tfjob__jscan_member(value, "\"object\"", &o, &o_end) ||
	    *o != '{')
		return 0;
	tfjob_watch_event type = plain_type(t, t_end);
	if (!type || !tfjob__jscan_member(o, "\"metadata\"", &md, &md_end) ||
	    !tfjob__jscan_member(md, "\"resourceVersion\"", &rv, &rv_end) || *rv != '"' ||
	    memchr(rv, '\\', (size_t)(rv_end - rv)))
		return 0;
	if (!tfjob__jscan_valid(value, value_len, TFJOB__JSON_MAX_DEPTH))
		return 0; /* the general reading drops it as before */
	size_t len = (size_t)(o_end - o);
	char *wide = NULL, *text = NULL;
	if (tfjob__json_widen(&wide, o, len) < 0 || (!wide && !(text = strndup(o, len)))) {
		*rc = 1;
		return 1;
	}
	note_rv(st, rv + 1, (size_t)(rv_end - rv) - 2);
	*rc = emit(st, type, wide ? wide : text);
	free(wide);
	free(text);
	return 1;
}

/* One complete JSON value of the stream: {"type":...,"object":{...}}. Non-zero stops the transfer. */
static int on_value(const char *value, size_t len, void *payload)
{
	struct stream *st = payload;
	int rc = 0;
	if (on_value_scanned(st, value, len, &rc))
		return rc;
	return on_value_parsed(st, value, len);
}

static size_t on_data(char *data, size_t size, size_t n, void *arg)
{
	struct stream *st = arg;
	size_t len = size * n;
	if (st->resp.status_line != 200) /* an error answer: keep its body (a Status) for the message */
		return tfjob__http_body_append(&st->resp, data, len, TFJOB__HTTP_MAX_ERROR_BODY) == 0 || st->resp.too_large
		           ? len
		           : 0;
	int rc = tfjob__splitter_feed(&st->splitter, data, len, on_value, st);
	if (rc == -1 && !st->error_code) {
		/* Say why the stream was cut, rather than curl's "Failure writing output". */
		st->error_code = st->splitter.too_large ? TFJOB_ELIMIT : TFJOB_EPARSE;
		free(st->error_reason);
		st->error_reason = NULL;
		free(st->error_message);
		st->error_message = st->splitter.too_large
			? tfjob__strdup_printf("watch: an event is larger than the limit of %zu bytes", st->splitter.max)
			: tfjob__strdup("watch: the stream is not a sequence of JSON objects");
	}
	return rc == 0 ? len : 0;
}

static char *watch_path(const tfjob_resource *res, const char *ns, const tfjob_watch_options *opts, const char *rv,
                        int64_t timeout)
{
	char *base = tfjob__resource_path(res, ns, NULL, NULL), *q = NULL;
	char num[32];
	snprintf(num, sizeof(num), "%lld", (long long)timeout);
	int bad = !base || tfjob__query_add(&q, "watch", "true");
	if (!bad && rv && rv[0])
		bad = tfjob__query_add(&q, "resourceVersion", rv);
	if (!bad && opts->allow_bookmarks)
		bad = tfjob__query_add(&q, "allowWatchBookmarks", "true");
	if (!bad && opts->label_selector && opts->label_selector[0])
		bad = tfjob__query_add(&q, "labelSelector", opts->label_selector);
	if (!bad && opts->field_selector && opts->field_selector[0])
		bad = tfjob__query_add(&q, "fieldSelector", opts->field_selector);
	if (!bad)
		bad = tfjob__query_add(&q, "timeoutSeconds", num);
	char *path = bad ? NULL : tfjob__strdup_printf("%s%s", base, q);
	free(base);
	free(q);
	return path;
}

static void wake_multi(void *multi) { curl_multi_wakeup(multi); }

/*
 * Run one transfer on the stream's multi handle. It sleeps in poll() until bytes come, a timer
 * of libcurl's is due or tfjob_watch_stop() wakes it, where curl_easy_perform() would wake every
 * second to look for the stop: an idle watch costs nothing.
 */
static CURLcode stream_transfer(struct stream *st, CURL *easy)
{
	if (curl_multi_add_handle(st->multi, easy) != CURLM_OK)
		return CURLE_OUT_OF_MEMORY;
	tfjob__watch_sink_set_wake(st->sink, wake_multi, st->multi);
	CURLcode result = CURLE_ABORTED_BY_CALLBACK;
	for (;;) {
		if (tfjob_watch_sink_stopped(st->sink))
			break;
		int running = 0;
		if (curl_multi_perform(st->multi, &running) != CURLM_OK) {
			result = CURLE_OUT_OF_MEMORY;
			break;
		}
		if (!running) {
			int left;
			CURLMsg *m;
			while ((m = curl_multi_info_read(st->multi, &left)))
				if (m->msg == CURLMSG_DONE && m->easy_handle == easy)
					result = m->data.result;
			break;
		}
		long ms = -1;
		curl_multi_timeout(st->multi, &ms);
		int wait = ms < 0 || ms > WATCH_MAX_SLEEP_MS ? WATCH_MAX_SLEEP_MS : (int)ms;
		if (curl_multi_poll(st->multi, NULL, 0, wait, NULL) != CURLM_OK) {
			result = CURLE_OUT_OF_MEMORY;
			break;
		}
	}
	tfjob__watch_sink_set_wake(st->sink, NULL, NULL);
	curl_multi_remove_handle(st->multi, easy);
	return result;
}

/* One connection: stream until it ends. Fills st->resp.curl_code / st->resp.status. */
static void connect_once(struct stream *st, const char *path, int64_t timeout_s)
{
	struct tfjob__kube *k = st->k;
	tfjob__http_response_clear(&st->resp);
	st->got_events = 0;
	st->error_code = 0;
	tfjob__splitter_reset(&st->splitter);
	struct curl_slist *connect_to = NULL;
	CURL *easy = tfjob__http_easy(k, "GET", path, NULL, &connect_to, 1);
	struct curl_slist *headers = easy ? tfjob__http_headers(NULL) : NULL;
	if (tfjob__http_ready(k, easy, &headers, &st->resp)) {
		curl_easy_setopt(easy, CURLOPT_HTTPHEADER, headers);
		curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_data);
		curl_easy_setopt(easy, CURLOPT_WRITEDATA, st);
		curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, tfjob__http_on_header);
		curl_easy_setopt(easy, CURLOPT_HEADERDATA, &st->resp);
		curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, st->resp.curl_error);
		/* A stream the server has not ended a minute after its timeoutSeconds is broken (a dead
		   peer is found sooner by TCP keep-alive). */
		curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, (long)((timeout_s + WATCH_GRACE_S) * 1000));
		st->resp.curl_code = stream_transfer(st, easy);
		curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &st->resp.status);
		if (st->resp.curl_code != CURLE_OK && !st->resp.curl_error[0])
			snprintf(st->resp.curl_error, sizeof(st->resp.curl_error), "%s", curl_easy_strerror(st->resp.curl_code));
	}
	tfjob__http_easy_done(k, easy);
	curl_slist_free_all(headers);
	curl_slist_free_all(connect_to);
}

enum outcome { DONE, RECONNECT, FAIL };

/* What to do after a connection ended. */
static enum outcome judge(struct stream *st, const tfjob_watch_options *opts, int *auth_retried, const char *path,
                          int *code, tfjob_error **err)
{
	if (st->stop || tfjob_watch_sink_stopped(st->sink))
		return DONE;
	if (st->error_code) {
		*code = tfjob__api_fail(err, st->error_code, st->error_status, NULL, "%s",
		                        st->error_message ? st->error_message : "watch error");
		if (err && *err && st->error_reason)
			(*err)->reason = tfjob__strdup(st->error_reason);
		/* An event over the size limit would come again after a reconnect. */
		return st->error_code == TFJOB_EGONE || st->error_code == TFJOB_ELIMIT || !opts->reconnect ? FAIL : RECONNECT;
	}
	if (st->resp.curl_code == CURLE_OK && st->resp.status == 200) {
		*auth_retried = 0;
		return opts->reconnect ? RECONNECT : DONE; /* the server ended the stream (timeoutSeconds) */
	}
	if (st->resp.curl_code != CURLE_OK && st->resp.status == 200)
		st->resp.status = 0; /* broken mid-stream: a network error */
	int c = tfjob__http_code(&st->resp);
	if (c == TFJOB_EUNAUTHORIZED && st->resp.curl_code == CURLE_OK && !*auth_retried &&
	    tfjob__kube_auth_invalidate(st->k)) {
		*auth_retried = 1;
		return RECONNECT;
	}
	*code = tfjob__http_fail(err, "GET", path, &st->resp);
	if (c == TFJOB_EGONE || !opts->reconnect)
		return FAIL;
	int transient = st->resp.curl_code != CURLE_OK || st->resp.status == 429 || st->resp.status >= 500;
	return transient ? RECONNECT : FAIL;
}

int tfjob__kube_watch(void *data, tfjob_watch_sink *sink, const tfjob_resource *res, const char *ns,
                      const tfjob_watch_options *opts, tfjob_error **err)
{
	struct stream st = { .k = data, .sink = sink };
	st.multi = curl_multi_init();
	if (!st.multi)
		return tfjob__oom(err);
	tfjob__splitter_init(&st.splitter, 0);
	tfjob__http_response_clear(&st.resp);
	st.rv = opts->resource_version ? tfjob__strdup(opts->resource_version) : NULL;
	int auth_retried = 0, failures = 0, code = 0;
	for (;;) {
		int64_t timeout = opts->timeout_seconds > 0 ? opts->timeout_seconds : 300 + rand() % 300;
		char *path = watch_path(res, ns, opts, st.rv, timeout);
		if (!path) {
			code = tfjob__oom(err);
			break;
		}
		if (tfjob__sleep_unless(tfjob__ratelimit_reserve(&st.k->rl), sink)) {
			free(path);
			break;
		}
		int64_t started = tfjob__monotonic_ms();
		connect_once(&st, path, timeout);
		int short_lived = !st.got_events && tfjob__monotonic_ms() - started < 1000;
		tfjob_error *e = NULL;
		int c = 0;
		enum outcome o = judge(&st, opts, &auth_retried, path, &c, &e);
		free(path);
		if (o == DONE) {
			tfjob_error_free(e);
			break;
		}
		if (o == FAIL) {
			code = c;
			if (err)
				*err = e;
			else
				tfjob_error_free(e);
			break;
		}
		tfjob_error_free(e);
		/* Back off unless the connection did useful work (events, or a normal end after a while). */
		failures = (st.got_events || (c == 0 && !st.error_code && !short_lived)) ? 0 : failures + 1;
		int64_t wait = st.resp.retry_after_ms >= 0 ? st.resp.retry_after_ms
		                                           : (failures ? tfjob__backoff_ms(st.k, failures - 1) : 0);
		if (tfjob__sleep_unless(wait, sink))
			break;
	}
	tfjob__splitter_free(&st.splitter);
	curl_multi_cleanup(st.multi);
	tfjob__http_response_clear(&st.resp);
	free(st.rv);
	free(st.error_message);
	free(st.error_reason);
	return code;
}
