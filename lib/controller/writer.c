/*
 * The status writer: a few threads that carry out the status writes reconciles decide, so that
 * a reconcile worker goes on with the next job while the API server answers (a status write
 * takes milliseconds, nearly all of it the server's; one worker writing every status in turn
 * spends most of its time waiting). A job's key stays "processing" in the work queue until its
 * write is done, so a job is never planned from a status about to change, and the queue still
 * never hands one job to two threads. The hand-over is bounded: a worker waits while as many
 * writes are queued as there are writer threads, so the writes decided but not started stay few.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdlib.h>
#include <string.h>

#include "controller/internal.h"

struct tfjob__writer {
	tfjob_controller *c;
	pthread_mutex_t mu;
	pthread_cond_t more, room;
	tfjob__status_write *head, *tail;
	size_t queued;
	int nthreads, running, stopping;
	pthread_t *threads;
};

int tfjob__writer_new(tfjob__writer **out, tfjob_controller *c, int threads)
{
	tfjob__writer *w = calloc(1, sizeof(*w));
	pthread_t *t = w ? calloc((size_t)threads, sizeof(*t)) : NULL;
	if (!t) {
		free(w);
		return TFJOB_ENOMEM;
	}
	w->c = c;
	w->nthreads = threads;
	w->threads = t;
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->more, NULL);
	pthread_cond_init(&w->room, NULL);
	*out = w;
	return 0;
}

void tfjob__writer_free(tfjob__writer *w)
{
	if (!w)
		return;
	tfjob__writer_stop(w);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->more);
	pthread_cond_destroy(&w->room);
	free(w->threads);
	free(w);
}

/* A write not made: left to the next start, as a reconcile cut short (the key is let go, not
   forgotten; the reconcile's Events are still posted). */
static void give_up(tfjob__writer *w, tfjob__status_write *sw)
{
	tfjob__queue_done(w->c->q, sw->key);
	tfjob__status_write_free(w->c, sw);
}

/* Carry out one write (or give it up when the controller is stopping) and end its reconcile. */
static void finish(tfjob__writer *w, tfjob__status_write *sw)
{
	tfjob_controller *c = w->c;
	if (tfjob__stopping(c)) {
		give_up(w, sw);
		return;
	}
	if (tfjob__fenced(c)) { /* planned again once the Lease is renewed (or never: stopped) */
		tfjob__log(c, TFJOB_LOG_INFO, "lease not renewed within the renew deadline: status write put off", sw->key,
		           NULL, NULL);
		char *key = strdup(sw->key);
		give_up(w, sw);
		if (key)
			tfjob__queue_add_after(c->q, key, tfjob__fence_retry_ms(c));
		free(key);
		return;
	}
	tfjob_error *err = NULL;
	int rc = tfjob__status_write_do(c, sw, &err);
	if (rc < 0)
		tfjob__log(c, TFJOB_LOG_ERROR, "reconcile failed", sw->key, NULL,
		           err ? tfjob_error_message(err) : tfjob_strerror(rc));
	tfjob_error_free(err);
	tfjob__reconcile_finish(c, sw->key, rc, sw->started_ns);
	tfjob__status_write_free(c, sw);
}

static void *writer_main(void *arg)
{
	tfjob__writer *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->head && !w->stopping)
			pthread_cond_wait(&w->more, &w->mu);
		tfjob__status_write *sw = w->head;
		if (!sw)
			break; /* stopping, and nothing is left */
		w->head = sw->next;
		if (!w->head)
			w->tail = NULL;
		w->queued--;
		pthread_cond_signal(&w->room);
		pthread_mutex_unlock(&w->mu);
		finish(w, sw);
		pthread_mutex_lock(&w->mu);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

int tfjob__writer_start(tfjob__writer *w)
{
	pthread_mutex_lock(&w->mu);
	w->stopping = 0;
	int n = 0;
	while (n < w->nthreads && pthread_create(&w->threads[n], NULL, writer_main, w) == 0)
		n++;
	w->running = n;
	pthread_mutex_unlock(&w->mu);
	return n ? 0 : TFJOB_ENOMEM;
}

void tfjob__writer_post(tfjob__writer *w, tfjob__status_write *sw)
{
	sw->next = NULL;
	pthread_mutex_lock(&w->mu);
	while (w->queued >= (size_t)w->nthreads && !w->stopping && w->running)
		pthread_cond_wait(&w->room, &w->mu);
	if (w->stopping || !w->running) {
		pthread_mutex_unlock(&w->mu);
		give_up(w, sw);
		return;
	}
	if (w->tail)
		w->tail->next = sw;
	else
		w->head = sw;
	w->tail = sw;
	w->queued++;
	pthread_cond_signal(&w->more);
	pthread_mutex_unlock(&w->mu);
}

void tfjob__writer_stop(tfjob__writer *w)
{
	pthread_mutex_lock(&w->mu);
	w->stopping = 1;
	int n = w->running;
	pthread_cond_broadcast(&w->more);
	pthread_cond_broadcast(&w->room);
	pthread_mutex_unlock(&w->mu);
	for (int i = 0; i < n; i++)
		pthread_join(w->threads[i], NULL);
	pthread_mutex_lock(&w->mu);
	w->running = 0;
	pthread_mutex_unlock(&w->mu);
}
