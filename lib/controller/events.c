/*
 * The event recorder: Events leave the reconcile worker at once and are written by a thread of
 * their own, as client-go's event broadcaster does. A reconcile hands its Events over only when
 * it has done its writes (tfjob__recorder_post_batch()), so an Event never goes ahead of the
 * status write or child create it reports; the kube transport gives the events resource a rate
 * budget of its own, so Events never slow those writes down either. The queue is bounded: under
 * overload an Event is dropped and counted rather than making a reconcile wait.
 *
 * Before it is written an Event passes client-go's EventCorrelator, with its defaults:
 *  - aggregation: more than 10 Events of one source, object, type and reason with distinct
 *    messages within 10 minutes become one "(combined from similar events): MESSAGE" Event;
 *  - de-duplication: an Event equal to one already written (source, object, type, reason,
 *    message) becomes a PATCH of that Event's count, lastTimestamp and message;
 *  - spam filter: each source and object has a token bucket of 25 Events refilled at one per
 *    5 minutes; Events beyond it are dropped and counted.
 * Each of the three keeps at most 4,096 keys (least recently used evicted first).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/internal.h"
#include "parse/jscan.h"
#include "util/sbuf.h"
#include "util/timedwait.h"

#define QUEUE_CAP 1000          /* client-go's maxQueuedEvents */
#define LRU_CAP 4096            /* client-go's maxLruCacheEntries */
#define AGGREGATE_MAX_EVENTS 10
#define AGGREGATE_INTERVAL_S 600
#define SPAM_BURST 25
#define SPAM_REFILL_S 300       /* one token every 5 minutes */
#define COMBINED_PREFIX "(combined from similar events): "
#define SOURCE_COMPONENT TFJOB_OPERATOR_NAME

struct tfjob__event {
	struct tfjob__event *next;
	const char *kind, *api_version, *name, *ns, *uid, *rv, *type, *reason, *message;
	char data[];
};

/* ---- a least-recently-used map, keyed by a digest of the key ---- */

/*
 * The correlator's keys (source, involved object, type, reason, message) are a few hundred bytes
 * and 3 x 4,096 of them are kept: an entry keeps a 128-bit digest of its key instead (as hex),
 * from two unrelated 64-bit hashes; a collision (two keys taken for one) is not to be expected
 * in the lifetime of the universe at these sizes.
 */
#define DIGEST_HEX 33
#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

static uint64_t mix64(uint64_t h) /* splitmix64's finaliser */
{
	h ^= h >> 30;
	h *= 0xbf58476d1ce4e5b9ull;
	h ^= h >> 27;
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

static uint64_t hash64(const char *s, size_t n, uint64_t h, uint64_t mul)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ (unsigned char)s[i]) * mul;
	return mix64(h ^ n);
}

static void digest(char out[DIGEST_HEX], const char *s)
{
	size_t n = strlen(s);
	uint64_t a = hash64(s, n, FNV_OFFSET, FNV_PRIME);
	uint64_t b = hash64(s, n, 0x9e3779b97f4a7c15ull, 0xff51afd7ed558ccdull); /* another odd multiplier */
	/* "%016llx%016llx" without printf, which cost as much as the hashes */
	static const char hex[] = "0123456789abcdef";
	for (int i = 0; i < 16; i++) {
		out[i] = hex[(a >> (60 - 4 * i)) & 15];
		out[16 + i] = hex[(b >> (60 - 4 * i)) & 15];
	}
	out[32] = '\0';
}

typedef struct lru_entry {
	struct lru_entry *prev, *next;
	void *val;
	char key[DIGEST_HEX];
} lru_entry;

typedef struct lru {
	tfjob__map map; /* digest -> lru_entry */
	lru_entry head; /* head.next: most recent */
	void (*free_val)(void *);
} lru;

static void lru_init(lru *l, void (*free_val)(void *))
{
	memset(l, 0, sizeof(*l));
	l->head.next = l->head.prev = &l->head;
	l->free_val = free_val;
}

static void lru_unlink(lru_entry *e)
{
	e->prev->next = e->next;
	e->next->prev = e->prev;
}

static void lru_push_front(lru *l, lru_entry *e)
{
	e->next = l->head.next;
	e->prev = &l->head;
	l->head.next->prev = e;
	l->head.next = e;
}

/* The entry of a key's digest (computed once by the caller, for lru_add too). */
static void *lru_get(lru *l, const char d[DIGEST_HEX])
{
	lru_entry *e = tfjob__map_get(&l->map, d);
	if (!e)
		return NULL;
	lru_unlink(e);
	lru_push_front(l, e);
	return e->val;
}

static void lru_drop(lru *l, lru_entry *e)
{
	lru_unlink(e);
	tfjob__map_del(&l->map, e->key);
	l->free_val(e->val);
	free(e);
}

/* Insert a new key (absent: callers lru_get first); takes val, frees it on failure. */
static int lru_add(lru *l, const char d[DIGEST_HEX], void *val)
{
	lru_entry *e = malloc(sizeof(*e));
	if (e)
		memcpy(e->key, d, DIGEST_HEX);
	if (!e || tfjob__map_put(&l->map, e->key, e, NULL)) {
		free(e);
		l->free_val(val);
		return TFJOB_ENOMEM;
	}
	e->val = val;
	lru_push_front(l, e);
	if (l->map.len > LRU_CAP)
		lru_drop(l, l->head.prev);
	return 0;
}

static void lru_clear(lru *l)
{
	size_t b = 0;
	for (tfjob__map_node *n = tfjob__map_next(&l->map, &b, NULL); n; n = tfjob__map_next(&l->map, &b, n)) {
		lru_entry *e = n->val;
		l->free_val(e->val);
		free(e);
	}
	tfjob__map_clear(&l->map, NULL);
	lru_init(l, l->free_val);
}

/* ---- correlator state ---- */

typedef struct aggregate_record {
	uint64_t messages[AGGREGATE_MAX_EVENTS]; /* hashes of the distinct messages seen (client-go's localKeys) */
	int n;
	int64_t last_s;
} aggregate_record;

typedef struct seen_record {
	char *name;    /* the Event object written */
	int64_t count; /* its count */
} seen_record;

typedef struct spam_record {
	double tokens;
	int64_t last_s;
} spam_record;

static void free_seen(void *v)
{
	seen_record *s = v;
	if (s)
		free(s->name);
	free(s);
}

struct tfjob__recorder {
	tfjob_controller *c;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	struct tfjob__event *head, *tail;
	size_t len;
	int busy;            /* the thread is writing an Event */
	int stop;            /* stop accepting; write what is queued until flush_deadline_ms */
	int64_t flush_deadline_ms;
	pthread_t thread;
	int started;
	/* the thread's own (no lock) */
	lru aggregate, seen, spam;
};

int tfjob__recorder_new(tfjob__recorder **out, tfjob_controller *c)
{
	tfjob__recorder *r = calloc(1, sizeof(*r));
	if (!r)
		return TFJOB_ENOMEM;
	r->c = c;
	pthread_mutex_init(&r->mu, NULL);
	tfjob__cond_init_monotonic(&r->cond);
	lru_init(&r->aggregate, free);
	lru_init(&r->seen, free_seen);
	lru_init(&r->spam, free);
	*out = r;
	return 0;
}

static void free_events(struct tfjob__event *e)
{
	while (e) {
		struct tfjob__event *next = e->next;
		free(e);
		e = next;
	}
}

void tfjob__recorder_free(tfjob__recorder *r)
{
	if (!r)
		return;
	tfjob__recorder_stop(r, 0);
	free_events(r->head);
	lru_clear(&r->aggregate);
	lru_clear(&r->seen);
	lru_clear(&r->spam);
	pthread_mutex_destroy(&r->mu);
	pthread_cond_destroy(&r->cond);
	free(r);
}

/* ---- building an Event ---- */

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

static struct tfjob__event *event_new(const tfjob__involved *obj, const char *type, const char *reason,
                                      const char *message)
{
	const char *parts[9] = { obj->kind, obj->api_version, obj->name, obj->ns, obj->uid,
		                     obj->rv,   type,             reason,    message };
	size_t need = 0;
	for (int i = 0; i < 9; i++)
		need += strlen(or_empty(parts[i])) + 1;
	struct tfjob__event *e = malloc(sizeof(*e) + need);
	if (!e)
		return NULL;
	e->next = NULL;
	const char **fields[9] = { &e->kind, &e->api_version, &e->name, &e->ns, &e->uid,
		                       &e->rv,   &e->type,        &e->reason, &e->message };
	char *p = e->data;
	for (int i = 0; i < 9; i++) {
		size_t n = strlen(or_empty(parts[i])) + 1;
		memcpy(p, or_empty(parts[i]), n);
		*fields[i] = p;
		p += n;
	}
	return e;
}

int tfjob__event_batch_add(tfjob__event_batch *b, const tfjob__involved *obj, const char *type, const char *reason,
                           const char *message)
{
	struct tfjob__event *e = event_new(obj, type, reason, message);
	if (!e)
		return TFJOB_ENOMEM;
	if (b->tail)
		b->tail->next = e;
	else
		b->head = e;
	b->tail = e;
	return 0;
}

/* ---- the queue ---- */

void tfjob__recorder_post(tfjob__recorder *r, tfjob__event_batch *b)
{
	tfjob__metrics *m = &r->c->m;
	struct tfjob__event *list = b->head;
	b->head = b->tail = NULL;
	pthread_mutex_lock(&r->mu);
	while (list) {
		struct tfjob__event *e = list;
		list = e->next;
		e->next = NULL;
		if (r->stop || r->len >= QUEUE_CAP) {
			atomic_fetch_add(&m->events_dropped, 1);
			free(e);
			continue;
		}
		if (r->tail)
			r->tail->next = e;
		else
			r->head = e;
		r->tail = e;
		r->len++;
	}
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->mu);
}

/* ---- the correlator ---- */

/* The parts (at most 8) joined by \x1f, as a new string: what "%s\x1f%s..." printed, without printf. */
static char *join_key(const char *const *parts, size_t n)
{
	size_t len[8], need = n;
	for (size_t i = 0; i < n; i++)
		need += len[i] = strlen(parts[i]);
	char *key = malloc(need), *p = key;
	for (size_t i = 0; key && i < n; i++) {
		memcpy(p, parts[i], len[i]);
		p += len[i];
		*p++ = i + 1 < n ? '\x1f' : '\0';
	}
	return key;
}

/* client-go's getSpamKey: source and involved object. */
static char *object_key(const struct tfjob__event *e)
{
	const char *parts[] = { SOURCE_COMPONENT, e->kind, e->ns, e->name, e->uid, e->api_version };
	return join_key(parts, TFJOB_ARRAY_LEN(parts));
}

/* 1 when the spam filter lets the Event through (a token was taken). */
static int spam_allows(tfjob__recorder *r, const char *okey, int64_t now_s)
{
	char d[DIGEST_HEX];
	digest(d, okey);
	spam_record *s = lru_get(&r->spam, d);
	if (!s) {
		s = malloc(sizeof(*s));
		if (!s || lru_add(&r->spam, d, s))
			return 1; /* out of memory: do not filter */
		s->tokens = SPAM_BURST;
		s->last_s = now_s;
	}
	s->tokens += (double)(now_s - s->last_s) / SPAM_REFILL_S;
	if (s->tokens > SPAM_BURST)
		s->tokens = SPAM_BURST;
	s->last_s = now_s;
	if (s->tokens < 1.0)
		return 0;
	s->tokens -= 1.0;
	return 1;
}

static uint64_t message_hash(const char *message)
{
	return hash64(message, strlen(message), FNV_OFFSET, FNV_PRIME);
}

static int has_message(const aggregate_record *a, uint64_t message)
{
	for (int i = 0; i < a->n; i++)
		if (a->messages[i] == message)
			return 1;
	return 0;
}

/*
 * client-go's EventAggregate: 1 when the Event is to be combined with similar ones (its
 * message then gets the prefix and its de-duplication key is the aggregate key).
 */
static int aggregate(tfjob__recorder *r, const char *akey, const char *message, int64_t now_s)
{
	char d[DIGEST_HEX];
	digest(d, akey);
	aggregate_record *a = lru_get(&r->aggregate, d);
	if (a && now_s - a->last_s > AGGREGATE_INTERVAL_S)
		a->n = 0;
	if (!a) {
		a = calloc(1, sizeof(*a));
		if (!a || lru_add(&r->aggregate, d, a))
			return 0;
	}
	a->last_s = now_s;
	uint64_t h = message_hash(message);
	if (!has_message(a, h)) {
		if (a->n == AGGREGATE_MAX_EVENTS) /* client-go pops one to keep the set bounded */
			a->n--;
		a->messages[a->n++] = h;
	}
	return a->n >= AGGREGATE_MAX_EVENTS;
}

static const tfjob_resource RES_EVENTS = TFJOB_RESOURCE_EVENTS_INIT;

/* The name the API server gave a created Event (free()); read without a parse when written
   plainly, as it always is. NULL when there is none or memory is short. */
static char *created_name(const char *answer)
{
	const char *md, *md_end;
	char *plain = NULL;
	if (!answer)
		return NULL;
	if (tfjob__jscan_member(answer, "\"metadata\"", &md, &md_end) && !tfjob__jscan_string_member(md, "\"name\"", &plain))
		return plain;
	json_t *ev = json_loads(answer, 0, NULL);
	const char *name = json_string_value(json_object_get(json_object_get(ev, "metadata"), "name"));
	char *copy = name ? strdup(name) : NULL;
	json_decref(ev);
	return copy;
}

/* Create a new Event object; remember its name under the key whose digest is kd. */
static int create(tfjob__recorder *r, const struct tfjob__event *e, const char kd[DIGEST_HEX], const char *message)
{
	tfjob_controller *c = r->c;
	const tfjob__involved inv = { e->kind, e->api_version, e->name, e->ns, e->uid, e->rv };
	char *out = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob__transport_create_event_of(&out, c->t, e->ns, &inv, e->type, e->reason, message, SOURCE_COMPONENT,
	                                          &err);
	tfjob__count(c, TFJOB_API_CREATE_EVENT, rc);
	if (rc) {
		atomic_fetch_add(&c->m.events_failed, 1);
		tfjob__log(c, TFJOB_LOG_WARN, "recording an event failed", e->name, e->reason, tfjob_error_message(err));
	} else {
		atomic_fetch_add(&c->m.events_created, 1);
		char *name = created_name(out);
		seen_record *s = name ? calloc(1, sizeof(*s)) : NULL;
		if (s && (s->name = name) != NULL) {
			name = NULL;
			s->count = 1;
			seen_record *old = lru_get(&r->seen, kd);
			if (old) {
				free(old->name);
				*old = *s;
				free(s);
			} else {
				lru_add(&r->seen, kd, s);
			}
		} else {
			free(s);
		}
		free(name);
	}
	tfjob_free(out);
	tfjob_error_free(err);
	return rc;
}

/* The count PATCH's text (free()), as json_dumps(JSON_COMPACT) wrote it; NULL when the message
   is not UTF-8 (jansson refused it too) or memory is short. */
static char *count_patch(int64_t count, int64_t now_s, const char *message)
{
	char now[32];
	tfjob_time_format(now, sizeof(now), now_s);
	tfjob__sbuf b = TFJOB__SBUF_INIT;
	tfjob__sbuf_adds(&b, "{\"count\":");
	tfjob__sbuf_add_i64(&b, count);
	tfjob__sbuf_adds(&b, ",\"lastTimestamp\":\"");
	tfjob__sbuf_adds(&b, now);
	tfjob__sbuf_adds(&b, "\",\"message\":");
	int ok = tfjob__sbuf_add_json_str(&b, message);
	tfjob__sbuf_addc(&b, '}');
	if (!ok)
		tfjob__sbuf_free(&b);
	return ok ? tfjob__sbuf_take(&b) : NULL;
}

/* PATCH the count of an Event written before; TFJOB_ENOTFOUND when it has gone. */
static int bump(tfjob__recorder *r, const struct tfjob__event *e, seen_record *s, const char *message)
{
	tfjob_controller *c = r->c;
	char *text = count_patch(s->count + 1, tfjob__now_s(c), message);
	tfjob_error *err = NULL;
	int rc = text ? tfjob_transport_patch(NULL, c->t, &RES_EVENTS, e->ns, s->name, NULL, text, &err) : TFJOB_ENOMEM;
	tfjob__count(c, TFJOB_API_PATCH, rc);
	free(text);
	if (rc == 0) {
		s->count++;
		atomic_fetch_add(&c->m.events_patched, 1);
	} else if (rc != TFJOB_ENOTFOUND) {
		atomic_fetch_add(&c->m.events_failed, 1);
		tfjob__log(c, TFJOB_LOG_WARN, "updating an event failed", e->name, e->reason, tfjob_error_message(err));
	}
	tfjob_error_free(err);
	return rc;
}

/* Correlate and write one Event (the recorder thread). */
static void write_event(tfjob__recorder *r, const struct tfjob__event *e)
{
	int64_t now_s = tfjob__now_s(r->c);
	char *okey = object_key(e);
	const char *aparts[] = { okey, e->type, e->reason };
	char *akey = okey ? join_key(aparts, TFJOB_ARRAY_LEN(aparts)) : NULL;
	char *combined = NULL, *key = NULL;
	const char *message = e->message;
	if (!akey)
		goto out;
	if (aggregate(r, akey, e->message, now_s)) {
		combined = tfjob__strdup_printf(COMBINED_PREFIX "%s", e->message);
		if (!combined)
			goto out;
		message = combined;
		key = strdup(akey);
	} else {
		const char *kparts[] = { akey, e->message };
		key = join_key(kparts, TFJOB_ARRAY_LEN(kparts));
	}
	if (!key)
		goto out;
	if (!spam_allows(r, okey, now_s)) {
		atomic_fetch_add(&r->c->m.events_filtered, 1);
		goto out;
	}
	char kd[DIGEST_HEX];
	digest(kd, key);
	seen_record *s = lru_get(&r->seen, kd);
	if (!s || bump(r, e, s, message) == TFJOB_ENOTFOUND)
		create(r, e, kd, message);
out:
	free(okey);
	free(akey);
	free(key);
	free(combined);
}

static void *recorder_main(void *arg)
{
	tfjob__recorder *r = arg;
	pthread_mutex_lock(&r->mu);
	for (;;) {
		while (!r->head && !r->stop)
			pthread_cond_wait(&r->cond, &r->mu);
		if (!r->head || (r->stop && tfjob__monotonic_ms() >= r->flush_deadline_ms))
			break;
		struct tfjob__event *e = r->head;
		r->head = e->next;
		if (!r->head)
			r->tail = NULL;
		r->len--;
		r->busy = 1;
		pthread_mutex_unlock(&r->mu);
		if (!r->c->o.no_events)
			write_event(r, e);
		free(e);
		pthread_mutex_lock(&r->mu);
		r->busy = 0;
		pthread_cond_broadcast(&r->cond);
	}
	/* what the flush bound left behind */
	atomic_fetch_add(&r->c->m.events_dropped, r->len);
	free_events(r->head);
	r->head = r->tail = NULL;
	r->len = 0;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->mu);
	return NULL;
}

int tfjob__recorder_start(tfjob__recorder *r)
{
	pthread_mutex_lock(&r->mu);
	r->stop = 0;
	int rc = r->started ? 0 : pthread_create(&r->thread, NULL, recorder_main, r) ? TFJOB_ENOMEM : 0;
	if (!rc)
		r->started = 1;
	pthread_mutex_unlock(&r->mu);
	return rc;
}

void tfjob__recorder_stop(tfjob__recorder *r, int64_t flush_ms)
{
	pthread_mutex_lock(&r->mu);
	int started = r->started;
	r->stop = 1;
	r->flush_deadline_ms = tfjob__monotonic_ms() + flush_ms;
	r->started = 0;
	pthread_cond_broadcast(&r->cond);
	pthread_mutex_unlock(&r->mu);
	if (started)
		pthread_join(r->thread, NULL);
}

int tfjob__recorder_wait_empty(tfjob__recorder *r, int64_t timeout_ms)
{
	int64_t deadline = tfjob__monotonic_ms() + timeout_ms;
	pthread_mutex_lock(&r->mu);
	while ((r->head || r->busy) && r->started) {
		int64_t left = deadline - tfjob__monotonic_ms();
		if (left <= 0) {
			pthread_mutex_unlock(&r->mu);
			return TFJOB_ETIMEOUT;
		}
		struct timespec ts = tfjob__deadline_in_ms(left);
		pthread_cond_timedwait(&r->cond, &r->mu, &ts);
	}
	pthread_mutex_unlock(&r->mu);
	return 0;
}
