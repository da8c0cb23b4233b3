/*
 * The work queue: de-duplicated keys, delayed adds, per-item exponential backoff and a global
 * token bucket (client-go's DefaultControllerRateLimiter: max of 5 ms..1000 s doubling per item
 * and 10 qps / burst 100), requeue counts until Forget.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller/parts.h"
#include "util/timedwait.h"

struct tfjob__queue {
	pthread_mutex_t mu;
	pthread_cond_t cond;   /* items ready, shutdown, or a delayed item may be due */
	pthread_cond_t idle;   /* ready and processing became empty */
	tfjob__queue_opts o;
	char **ready;
	size_t head, tail, cap;
	tfjob__map dirty, processing, waiting, failures;
	double tokens;
	int64_t last_ms;
	int shutdown;
};

/* Defaults of the options left 0: client-go's DefaultControllerRateLimiter, which
   controller-runtime (and so training-operator) uses. Per item, the delay starts at 5 ms and
   doubles up to 1000 s; over all items, a token bucket lets 10 adds per second through after a
   burst of 100. */
#define BACKOFF_BASE_MS_DEFAULT 5
#define BACKOFF_MAX_MS_DEFAULT (1000 * 1000)
#define BUCKET_QPS_DEFAULT 10
#define BUCKET_BURST_DEFAULT 100

/* The longest a waiting worker sleeps with nothing due: a safety net, every add wakes it. */
#define GET_MAX_SLEEP_MS 30000

static int64_t now_ms(tfjob__queue *q)
{
	return q->o.clock ? q->o.clock(q->o.clock_payload) : tfjob__monotonic_ms();
}

int tfjob__queue_new(tfjob__queue **out, const tfjob__queue_opts *opts)
{
	tfjob__queue *q = calloc(1, sizeof(*q));
	if (!q)
		return TFJOB_ENOMEM;
	if (opts)
		q->o = *opts;
	if (q->o.base_ms <= 0)
		q->o.base_ms = BACKOFF_BASE_MS_DEFAULT;
	if (q->o.max_ms <= 0)
		q->o.max_ms = BACKOFF_MAX_MS_DEFAULT;
	if (q->o.qps == 0)
		q->o.qps = BUCKET_QPS_DEFAULT;
	if (q->o.burst <= 0)
		q->o.burst = BUCKET_BURST_DEFAULT;
	q->tokens = q->o.burst;
	q->last_ms = now_ms(q);
	pthread_mutex_init(&q->mu, NULL);
	tfjob__cond_init_monotonic(&q->cond); /* a delayed item is due in monotonic time */
	tfjob__cond_init_monotonic(&q->idle);
	*out = q;
	return 0;
}

void tfjob__queue_free(tfjob__queue *q)
{
	if (!q)
		return;
	for (size_t i = q->head; i < q->tail; i++)
		free(q->ready[i]);
	free(q->ready);
	tfjob__map_clear(&q->dirty, NULL);
	tfjob__map_clear(&q->processing, NULL);
	tfjob__map_clear(&q->waiting, free);
	tfjob__map_clear(&q->failures, free);
	pthread_mutex_destroy(&q->mu);
	pthread_cond_destroy(&q->cond);
	pthread_cond_destroy(&q->idle);
	free(q);
}

static int push_ready(tfjob__queue *q, const char *key)
{
	if (q->tail == q->cap) {
		if (q->head > 0) {
			memmove(q->ready, q->ready + q->head, (q->tail - q->head) * sizeof(char *));
			q->tail -= q->head;
			q->head = 0;
		}
		if (q->tail == q->cap) {
			size_t ncap = q->cap ? q->cap * 2 : 64;
			char **n = realloc(q->ready, ncap * sizeof(char *));
			if (!n)
				return TFJOB_ENOMEM;
			q->ready = n;
			q->cap = ncap;
		}
	}
	char *k = strdup(key);
	if (!k)
		return TFJOB_ENOMEM;
	q->ready[q->tail++] = k;
	return 0;
}

/* client-go's Type.Add: dirty set de-duplicates; an item being processed is re-queued at Done. */
static int add_locked(tfjob__queue *q, const char *key)
{
	if (q->shutdown)
		return 0;
	if (tfjob__map_get(&q->dirty, key))
		return 0;
	if (tfjob__map_put(&q->dirty, key, (void *)1, NULL))
		return TFJOB_ENOMEM;
	if (tfjob__map_get(&q->processing, key))
		return 0;
	int rc = push_ready(q, key);
	if (rc)
		return rc;
	pthread_cond_signal(&q->cond);
	return 0;
}

int tfjob__queue_add(tfjob__queue *q, const char *key)
{
	pthread_mutex_lock(&q->mu);
	int rc = add_locked(q, key);
	pthread_mutex_unlock(&q->mu);
	return rc;
}

static int add_after_locked(tfjob__queue *q, const char *key, int64_t delay_ms)
{
	if (q->shutdown)
		return 0;
	if (delay_ms <= 0)
		return add_locked(q, key);
	int64_t at = now_ms(q) + delay_ms;
	int64_t *cur = tfjob__map_get(&q->waiting, key);
	if (cur) { /* keep the earlier time, as client-go's delaying queue does */
		if (at < *cur)
			*cur = at;
	} else {
		int64_t *v = malloc(sizeof(*v));
		if (!v)
			return TFJOB_ENOMEM;
		*v = at;
		if (tfjob__map_put(&q->waiting, key, v, NULL)) {
			free(v);
			return TFJOB_ENOMEM;
		}
	}
	pthread_cond_broadcast(&q->cond);
	return 0;
}

int tfjob__queue_add_after(tfjob__queue *q, const char *key, int64_t delay_ms)
{
	pthread_mutex_lock(&q->mu);
	int rc = add_after_locked(q, key, delay_ms);
	pthread_mutex_unlock(&q->mu);
	return rc;
}

int64_t tfjob__queue_add_rate_limited(tfjob__queue *q, const char *key)
{
	pthread_mutex_lock(&q->mu);
	/* per item: base * 2^failures, capped */
	int64_t *f = tfjob__map_get(&q->failures, key);
	if (!f) {
		f = calloc(1, sizeof(*f));
		if (!f || tfjob__map_put(&q->failures, key, f, NULL)) {
			free(f);
			pthread_mutex_unlock(&q->mu);
			return TFJOB_ENOMEM;
		}
	}
	int64_t exp = *f;
	(*f)++;
	double d = (double)q->o.base_ms;
	for (int64_t i = 0; i < exp && d < (double)q->o.max_ms; i++)
		d *= 2;
	int64_t item = d > (double)q->o.max_ms ? q->o.max_ms : (int64_t)d;
	/* global token bucket: reserve one token */
	int64_t bucket = 0;
	if (q->o.qps > 0) {
		int64_t now = now_ms(q);
		q->tokens += (double)(now - q->last_ms) * q->o.qps / 1000.0;
		if (q->tokens > q->o.burst)
			q->tokens = q->o.burst;
		q->last_ms = now;
		q->tokens -= 1;
		if (q->tokens < 0)
			bucket = (int64_t)(-q->tokens * 1000.0 / q->o.qps + 0.999);
	}
	int64_t delay = item > bucket ? item : bucket;
	int rc = add_after_locked(q, key, delay);
	pthread_mutex_unlock(&q->mu);
	return rc ? rc : delay;
}

void tfjob__queue_forget(tfjob__queue *q, const char *key)
{
	pthread_mutex_lock(&q->mu);
	free(tfjob__map_del(&q->failures, key));
	pthread_mutex_unlock(&q->mu);
}

int64_t tfjob__queue_num_requeues(tfjob__queue *q, const char *key)
{
	pthread_mutex_lock(&q->mu);
	int64_t *f = tfjob__map_get(&q->failures, key);
	int64_t n = f ? *f : 0;
	pthread_mutex_unlock(&q->mu);
	return n;
}

/* Move due items; returns the time of the next one not yet due, or INT64_MAX. */
static int64_t tick_locked(tfjob__queue *q)
{
	if (!q->waiting.len)
		return INT64_MAX;
	int64_t now = now_ms(q), next = INT64_MAX;
	size_t b = 0;
	tfjob__map_node *n = tfjob__map_next(&q->waiting, &b, NULL);
	char **due = NULL;
	size_t ndue = 0;
	while (n) {
		int64_t at = *(int64_t *)n->val;
		if (at <= now) {
			char **nd = realloc(due, (ndue + 1) * sizeof(char *));
			if (nd) {
				due = nd;
				due[ndue++] = n->key;
			}
		} else if (at < next) {
			next = at;
		}
		n = tfjob__map_next(&q->waiting, &b, n);
	}
	for (size_t i = 0; i < ndue; i++) {
		char *k = strdup(due[i]);
		free(tfjob__map_del(&q->waiting, due[i]));
		if (k) {
			add_locked(q, k);
			free(k);
		}
	}
	free(due);
	return next;
}

void tfjob__queue_tick(tfjob__queue *q)
{
	pthread_mutex_lock(&q->mu);
	tick_locked(q);
	pthread_mutex_unlock(&q->mu);
}

int tfjob__queue_get(tfjob__queue *q, char **out, int64_t timeout_ms)
{
	*out = NULL;
	pthread_mutex_lock(&q->mu);
	int64_t deadline = timeout_ms >= 0 ? tfjob__monotonic_ms() + timeout_ms : INT64_MAX;
	for (;;) {
		if (q->shutdown) {
			pthread_mutex_unlock(&q->mu);
			return TFJOB_ESTATE;
		}
		int64_t next = tick_locked(q);
		if (q->head < q->tail)
			break;
		int64_t now = tfjob__monotonic_ms();
		if (now >= deadline) {
			pthread_mutex_unlock(&q->mu);
			return TFJOB_ETIMEOUT;
		}
		int64_t wait = deadline - now;
		if (next != INT64_MAX) {
			int64_t until = next - now_ms(q);
			if (until < 1)
				until = 1;
			if (until < wait)
				wait = until;
		}
		/* a test clock moves without a signal: look at it every second; the real one wakes the
		   waiter when the next item is due (every add signals) */
		int64_t cap = q->o.clock ? 1000 : GET_MAX_SLEEP_MS;
		if (wait > cap)
			wait = cap;
		struct timespec ts = tfjob__deadline_in_ms(wait);
		pthread_cond_timedwait(&q->cond, &q->mu, &ts);
	}
	char *k = q->ready[q->head++];
	tfjob__map_del(&q->dirty, k);
	if (tfjob__map_put(&q->processing, k, (void *)1, NULL)) {
		free(k);
		pthread_mutex_unlock(&q->mu);
		return TFJOB_ENOMEM;
	}
	pthread_mutex_unlock(&q->mu);
	*out = k;
	return 0;
}

void tfjob__queue_done(tfjob__queue *q, const char *key)
{
	pthread_mutex_lock(&q->mu);
	tfjob__map_del(&q->processing, key);
	if (tfjob__map_get(&q->dirty, key) && !q->shutdown) {
		if (push_ready(q, key) == 0)
			pthread_cond_signal(&q->cond);
	}
	if (q->head == q->tail && !q->processing.len)
		pthread_cond_broadcast(&q->idle);
	pthread_mutex_unlock(&q->mu);
}

void tfjob__queue_shutdown(tfjob__queue *q)
{
	pthread_mutex_lock(&q->mu);
	q->shutdown = 1;
	pthread_cond_broadcast(&q->cond);
	pthread_cond_broadcast(&q->idle);
	pthread_mutex_unlock(&q->mu);
}

size_t tfjob__queue_len(tfjob__queue *q)
{
	pthread_mutex_lock(&q->mu);
	size_t n = q->tail - q->head;
	pthread_mutex_unlock(&q->mu);
	return n;
}

size_t tfjob__queue_waiting(tfjob__queue *q)
{
	pthread_mutex_lock(&q->mu);
	size_t n = q->waiting.len;
	pthread_mutex_unlock(&q->mu);
	return n;
}

size_t tfjob__queue_processing(tfjob__queue *q)
{
	pthread_mutex_lock(&q->mu);
	size_t n = q->processing.len;
	pthread_mutex_unlock(&q->mu);
	return n;
}

int tfjob__queue_wait_empty(tfjob__queue *q, int64_t timeout_ms)
{
	pthread_mutex_lock(&q->mu);
	int64_t deadline = timeout_ms >= 0 ? tfjob__monotonic_ms() + timeout_ms : INT64_MAX;
	while (q->head < q->tail || q->processing.len) {
		int64_t now = tfjob__monotonic_ms();
		if (now >= deadline) {
			pthread_mutex_unlock(&q->mu);
			return TFJOB_ETIMEOUT;
		}
		struct timespec ts = tfjob__deadline_in_ms(deadline - now > 100 ? 100 : deadline - now);
		pthread_cond_timedwait(&q->idle, &q->mu, &ts);
	}
	pthread_mutex_unlock(&q->mu);
	return 0;
}
