/*
 * Expectations (training-operator's ControllerExpectations): creations and deletions of children
 * in flight per job and replica type; a job is only planned when they have all been observed
 * through the watch or have expired, so a slow watch never causes a duplicate pod.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdlib.h>
#include <string.h>

#include "controller/parts.h"

typedef struct exp_entry {
	int64_t adds, dels, stamp;
} exp_entry;

struct tfjob__expectations {
	pthread_mutex_t mu;
	tfjob__map jobs; /* job key -> tfjob__map* (sub -> exp_entry*) */
	int64_t timeout_ms;
	tfjob__clock_ms_fn clock;
	void *payload;
};

static int64_t enow(tfjob__expectations *e)
{
	return e->clock ? e->clock(e->payload) : tfjob__monotonic_ms();
}

int tfjob__exp_new(tfjob__expectations **out, int64_t timeout_ms, tfjob__clock_ms_fn clock, void *payload)
{
	tfjob__expectations *e = calloc(1, sizeof(*e));
	if (!e)
		return TFJOB_ENOMEM;
	pthread_mutex_init(&e->mu, NULL);
	e->timeout_ms = timeout_ms > 0 ? timeout_ms : 5 * 60 * 1000;
	e->clock = clock;
	e->payload = payload;
	*out = e;
	return 0;
}

static void free_sub(void *v)
{
	tfjob__map *m = v;
	tfjob__map_clear(m, free);
	free(m);
}

void tfjob__exp_free(tfjob__expectations *e)
{
	if (!e)
		return;
	tfjob__map_clear(&e->jobs, free_sub);
	pthread_mutex_destroy(&e->mu);
	free(e);
}

int tfjob__exp_expect(tfjob__expectations *e, const char *job_key, const char *sub, int64_t adds, int64_t dels)
{
	int rc = TFJOB_ENOMEM;
	pthread_mutex_lock(&e->mu);
	tfjob__map *m = tfjob__map_get(&e->jobs, job_key);
	if (!m) {
		m = calloc(1, sizeof(*m));
		if (!m || tfjob__map_put(&e->jobs, job_key, m, NULL)) {
			free(m);
			goto out;
		}
	}
	exp_entry *x = tfjob__map_get(m, sub);
	if (!x) {
		x = calloc(1, sizeof(*x));
		if (!x || tfjob__map_put(m, sub, x, NULL)) {
			free(x);
			goto out;
		}
	}
	/* A fresh expectation (training-operator's SetExpectations/Raise) restarts the timer. */
	x->adds += adds;
	x->dels += dels;
	x->stamp = enow(e);
	rc = 0;
out:
	pthread_mutex_unlock(&e->mu);
	return rc;
}

void tfjob__exp_observed(tfjob__expectations *e, const char *job_key, const char *sub, int64_t adds, int64_t dels)
{
	pthread_mutex_lock(&e->mu);
	tfjob__map *m = tfjob__map_get(&e->jobs, job_key);
	exp_entry *x = m ? tfjob__map_get(m, sub) : NULL;
	if (x) {
		/* never below zero: a relist may report objects nobody was waiting for */
		x->adds = x->adds > adds ? x->adds - adds : 0;
		x->dels = x->dels > dels ? x->dels - dels : 0;
	}
	pthread_mutex_unlock(&e->mu);
}

int tfjob__exp_satisfied(tfjob__expectations *e, const char *job_key)
{
	int ok = 1;
	pthread_mutex_lock(&e->mu);
	tfjob__map *m = tfjob__map_get(&e->jobs, job_key);
	if (m) {
		int64_t now = enow(e);
		size_t b = 0;
		for (tfjob__map_node *n = tfjob__map_next(m, &b, NULL); n; n = tfjob__map_next(m, &b, n)) {
			exp_entry *x = n->val;
			if ((x->adds > 0 || x->dels > 0) && now - x->stamp < e->timeout_ms) {
				ok = 0;
				break;
			}
		}
		if (ok) /* all met or expired: start afresh */
			free_sub(tfjob__map_del(&e->jobs, job_key));
	}
	pthread_mutex_unlock(&e->mu);
	return ok;
}

void tfjob__exp_delete(tfjob__expectations *e, const char *job_key)
{
	pthread_mutex_lock(&e->mu);
	tfjob__map *m = tfjob__map_del(&e->jobs, job_key);
	if (m)
		free_sub(m);
	pthread_mutex_unlock(&e->mu);
}
