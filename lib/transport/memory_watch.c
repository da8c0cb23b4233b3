/*
 * Watches on the in-memory store: synthetic ADDED events, resuming from a resourceVersion,
 * selector transitions (an object that starts or stops matching is ADDED or DELETED), bookmarks,
 * 410 Gone when the history no longer reaches back far enough.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "tfjob/memstore.h"
#include "util/timedwait.h"
#include "transport/internal.h"
#include "transport/memory_store.h"

/* One event copied out of the store, delivered without the lock. */
struct pending {
	tfjob_watch_event type;
	json_t *obj;
};

struct batch {
	struct pending *items;
	size_t count, cap;
};

struct watcher {
	const tfjob_resource *res;
	char *prefix;
	tfjob__selector *labels, *fields;
	uint64_t cursor;        /* every event up to this version has been looked at */
	uint64_t bookmark_gen;
	int64_t last_sent_ms;
	int64_t deadline_ms;    /* 0: none */
	const tfjob_watch_options *opts;
};

static int batch_push(struct batch *b, tfjob_watch_event type, json_t *obj)
{
	if (b->count == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 16;
		struct pending *grown = realloc(b->items, cap * sizeof(*grown));
		if (!grown)
			return TFJOB_ENOMEM;
		b->items = grown;
		b->cap = cap;
	}
	b->items[b->count++] = (struct pending){ type, json_incref(obj) };
	return 0;
}

static void batch_clear(struct batch *b)
{
	for (size_t i = 0; i < b->count; i++)
		json_decref(b->items[i].obj);
	b->count = 0;
}

static int matches(const struct watcher *w, const json_t *obj)
{
	return obj && tfjob__selector_matches(w->labels, json_object_get(json_object_get(obj, "metadata"), "labels")) &&
	       tfjob__field_selector_matches(w->fields, obj);
}

/* Synthetic ADDED events for every matching object (lock held). */
static int initial_events(struct mem_store *s, struct watcher *w, struct batch *b)
{
	size_t plen = strlen(w->prefix);
	const char *key;
	json_t *obj;
	json_object_foreach(s->objects, key, obj) {
		if (!strncmp(key, w->prefix, plen) && matches(w, obj) && batch_push(b, TFJOB_WATCH_ADDED, obj))
			return TFJOB_ENOMEM;
	}
	w->cursor = s->rv;
	return 0;
}

/* The events after the cursor that this watch sees (lock held). */
static int new_events(struct mem_store *s, struct watcher *w, struct batch *b)
{
	size_t plen = strlen(w->prefix);
	/* Versions grow along the ring: find the first event after the cursor by bisection. */
	size_t lo = 0, hi = s->hist_len;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->hist[(s->hist_start + mid) % s->hist_cap].rv <= w->cursor)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i < s->hist_len; i++) {
		struct mem_event *e = &s->hist[(s->hist_start + i) % s->hist_cap];
		if (strncmp(e->key, w->prefix, plen))
			continue;
		int now = matches(w, e->obj), before = matches(w, e->prev);
		tfjob_watch_event type = e->type;
		if (type == TFJOB_WATCH_MODIFIED && now && !before)
			type = TFJOB_WATCH_ADDED;
		else if (type == TFJOB_WATCH_MODIFIED && !now && before)
			type = TFJOB_WATCH_DELETED;
		else if (type == TFJOB_WATCH_DELETED ? !before : !now)
			continue;
		if (batch_push(b, type, e->obj))
			return TFJOB_ENOMEM;
	}
	w->cursor = s->rv;
	return 0;
}

static int bookmark_event(struct mem_store *s, const struct watcher *w, struct batch *b)
{
	char *av = tfjob__mem_api_version(w->res);
	const char *kind = tfjob__resource_kind(w->res);
	char rv[32];
	snprintf(rv, sizeof(rv), "%llu", (unsigned long long)s->rv);
	json_t *obj = av ? json_pack("{s:s, s:s, s:{s:s}}", "kind", kind ? kind : "", "apiVersion", av, "metadata",
	                             "resourceVersion", rv) : NULL;
	free(av);
	int rc = obj ? batch_push(b, TFJOB_WATCH_BOOKMARK, obj) : TFJOB_ENOMEM;
	json_decref(obj);
	return rc;
}

static int gone(tfjob_error **err, uint64_t asked, uint64_t oldest)
{
	return tfjob__api_fail(err, TFJOB_EGONE, 410, NULL, "too old resource version: %llu (%llu)",
	                       (unsigned long long)asked, (unsigned long long)oldest);
}

/*
 * Sleep until the store changes (every write, tfjob_memory_bookmark() and compaction broadcast
 * s->cond), tfjob_watch_stop() wakes it (wake_watchers), or the deadline or the next idle
 * bookmark is due (lock held). Nothing else can make the watch send, so it never wakes to look.
 */
static void wait_for_change(struct mem_store *s, const struct watcher *w)
{
	int64_t due = w->deadline_ms;
	if (w->opts->allow_bookmarks && s->bookmark_ms > 0) {
		int64_t bookmark_due = w->last_sent_ms + s->bookmark_ms;
		if (!due || bookmark_due < due)
			due = bookmark_due;
	}
	if (!due) {
		pthread_cond_wait(&s->cond, &s->mu);
		return;
	}
	int64_t left = due - tfjob__monotonic_ms();
	if (left <= 0)
		return;
	struct timespec ts = tfjob__deadline_in_ms(left);
	pthread_cond_timedwait(&s->cond, &s->mu, &ts);
}

/* tfjob_watch_stop()'s wake-up: the stop is set; taking the lock orders it with the check. */
static void wake_watchers(void *arg)
{
	struct mem_store *s = arg;
	pthread_mutex_lock(&s->mu);
	pthread_cond_broadcast(&s->cond);
	pthread_mutex_unlock(&s->mu);
}

/* Collect the next batch: blocks until there is something to deliver, a stop, or the deadline. */
static int next_batch(struct mem_store *s, struct watcher *w, tfjob_watch_sink *sink, struct batch *b,
                      tfjob_error **err)
{
	int rc = 0;
	pthread_mutex_lock(&s->mu);
	for (;;) {
		if (tfjob_watch_sink_stopped(sink))
			break;
		if (w->cursor < s->compacted_rv) {
			rc = gone(err, w->cursor, s->compacted_rv);
			break;
		}
		if (w->cursor < s->rv && (rc = new_events(s, w, b)))
			break;
		int64_t now = tfjob__monotonic_ms();
		int want_bookmark = w->opts->allow_bookmarks &&
		                    (w->bookmark_gen != s->bookmark_gen ||
		                     (s->bookmark_ms > 0 && b->count == 0 && now - w->last_sent_ms >= s->bookmark_ms));
		w->bookmark_gen = s->bookmark_gen;
		if (want_bookmark && (rc = bookmark_event(s, w, b)))
			break;
		if (b->count > 0 || (w->deadline_ms && now >= w->deadline_ms))
			break;
		wait_for_change(s, w);
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

static int deliver(struct batch *b, tfjob_watch_sink *sink, struct watcher *w)
{
	for (size_t i = 0; i < b->count; i++) {
		char *text = json_dumps(b->items[i].obj, JSON_COMPACT);
		if (!text)
			return TFJOB_ENOMEM;
		int stop = tfjob_watch_sink_emit(sink, b->items[i].type, text);
		free(text);
		if (stop)
			return 1;
	}
	if (b->count)
		w->last_sent_ms = tfjob__monotonic_ms();
	return 0;
}

/* Where to start: synthetic events for NULL/""/"0", else after the given version. */
static int start(struct mem_store *s, struct watcher *w, struct batch *b, tfjob_error **err)
{
	const char *rv = w->opts->resource_version;
	int rc = 0;
	pthread_mutex_lock(&s->mu);
	w->bookmark_gen = s->bookmark_gen;
	if (!rv || !rv[0] || !strcmp(rv, "0")) {
		if (initial_events(s, w, b))
			rc = tfjob__oom(err);
	} else {
		char *end;
		unsigned long long v = strtoull(rv, &end, 10);
		if (*end)
			rc = tfjob__api_fail(err, TFJOB_EINVAL, 400, NULL, "invalid resource version \"%s\"", rv);
		else if (v < s->compacted_rv)
			rc = gone(err, v, s->compacted_rv);
		else
			w->cursor = v;
	}
	pthread_mutex_unlock(&s->mu);
	return rc;
}

static int run(struct mem_store *s, struct watcher *w, tfjob_watch_sink *sink, tfjob_error **err)
{
	struct batch b = { 0 };
	int rc = start(s, w, &b, err);
	while (rc == 0) {
		int stop = deliver(&b, sink, w);
		batch_clear(&b);
		if (stop == TFJOB_ENOMEM)
			rc = tfjob__oom(err);
		if (stop || tfjob_watch_sink_stopped(sink))
			break;
		if (w->deadline_ms && tfjob__monotonic_ms() >= w->deadline_ms)
			break;
		rc = next_batch(s, w, sink, &b, err);
	}
	batch_clear(&b);
	free(b.items);
	return rc < 0 ? rc : 0;
}

int tfjob__mem_watch(void *data, tfjob_watch_sink *sink, const tfjob_resource *res, const char *ns,
                     const tfjob_watch_options *opts, tfjob_error **err)
{
	struct mem_store *s = data;
	struct watcher w = { .res = res, .opts = opts, .last_sent_ms = tfjob__monotonic_ms() };
	int rc = tfjob__selector_parse(&w.labels, opts->label_selector, err);
	if (rc == 0)
		rc = tfjob__field_selector_parse(&w.fields, opts->field_selector, err);
	if (rc == 0 && !(w.prefix = tfjob__mem_prefix(res, ns)))
		rc = tfjob__oom(err);
	/* The store never drops a stream; the server-side timeout only ends a watch that would not reconnect. */
	if (opts->timeout_seconds > 0 && !opts->reconnect)
		w.deadline_ms = tfjob__monotonic_ms() + opts->timeout_seconds * 1000;
	if (rc == 0) {
		tfjob__watch_sink_set_wake(sink, wake_watchers, s);
		rc = run(s, &w, sink, err);
		tfjob__watch_sink_set_wake(sink, NULL, NULL);
	}
	free(w.prefix);
	tfjob__selector_free(w.labels);
	tfjob__selector_free(w.fields);
	return rc;
}
