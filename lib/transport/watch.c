/*
 * The watch handle: a thread that runs the backend's watch slot and delivers its events.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/timedwait.h"
#include "transport/internal.h"
#include "util/versioned_structs.h"

struct tfjob_watch_sink {
	atomic_int stop;
	pthread_mutex_t wake_mu;
	void (*wake)(void *arg); /* tfjob__watch_sink_set_wake() */
	void *wake_arg;
};

struct tfjob_watch {
	tfjob_watch_sink sink;
	tfjob_transport *t;
	tfjob_resource res;
	char *group, *version, *resource, *ns;
	tfjob_watch_options opts;
	char *label_selector, *field_selector, *resource_version;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cond;
	int done;
};

int tfjob_watch_sink_emit(tfjob_watch_sink *sink, tfjob_watch_event type, const char *object_json)
{
	tfjob_watch *w = (tfjob_watch *)sink; /* the sink is the first member */
	if (!sink || atomic_load(&sink->stop))
		return 1;
	if (w->opts.on_event(type, object_json ? object_json : "{}", w->opts.payload)) {
		atomic_store(&sink->stop, 1);
		return 1;
	}
	return atomic_load(&sink->stop);
}

int tfjob_watch_sink_stopped(const tfjob_watch_sink *sink) { return sink ? atomic_load(&sink->stop) : 1; }

void tfjob__watch_sink_set_wake(tfjob_watch_sink *sink, void (*wake)(void *arg), void *arg)
{
	pthread_mutex_lock(&sink->wake_mu);
	sink->wake = wake;
	sink->wake_arg = arg;
	pthread_mutex_unlock(&sink->wake_mu);
}

static void *watch_main(void *arg)
{
	tfjob_watch *w = arg;
	tfjob_error *err = NULL;
	int rc = w->t->be.watch(w->t->be.data, &w->sink, &w->res, w->ns, &w->opts, &err);
	if (rc == 0 && err) {
		tfjob_error_free(err);
		err = NULL;
	}
	if (w->opts.on_closed)
		w->opts.on_closed(rc, err, w->opts.payload);
	tfjob_error_free(err);
	pthread_mutex_lock(&w->mu);
	w->done = 1;
	pthread_cond_broadcast(&w->cond);
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

static void watch_release(tfjob_watch *w)
{
	free(w->group);
	free(w->version);
	free(w->resource);
	free(w->ns);
	free(w->label_selector);
	free(w->field_selector);
	free(w->resource_version);
	pthread_mutex_destroy(&w->mu);
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->sink.wake_mu);
	free(w);
}

/* Copy a string that may be NULL; *ok becomes 0 when out of memory. */
static char *dup_opt(const char *s, int *ok)
{
	if (!s)
		return NULL;
	char *c = tfjob__strdup(s);
	if (!c)
		*ok = 0;
	return c;
}

int tfjob_transport_watch(tfjob_watch **out, tfjob_transport *t, const tfjob_resource *res, const char *ns,
                          const tfjob_watch_options *caller_opts, tfjob_error **err)
{
	if (!out || !t || !res || !res->version || !res->resource || !caller_opts)
		return tfjob__fail(err, TFJOB_EINVAL, "watch: NULL argument");
	tfjob_watch_options copy;
	int rc = tfjob__versioned_copy(&tfjob__watch_options_v, &copy, caller_opts, err);
	if (rc)
		return rc;
	const tfjob_watch_options *opts = &copy;
	if (!opts->on_event)
		return tfjob__fail(err, TFJOB_EINVAL, "watch: on_event is required");
	if (!t->be.watch)
		return tfjob__fail(err, TFJOB_ESTATE, "watch: this transport backend does not support it");
	if (!res->namespaced)
		ns = "";
	else if (!ns)
		ns = tfjob_transport_namespace(t);
	tfjob_watch *w = calloc(1, sizeof(*w));
	if (!w)
		return tfjob__oom(err);
	pthread_mutex_init(&w->mu, NULL);
	tfjob__cond_init_monotonic(&w->cond);
	pthread_mutex_init(&w->sink.wake_mu, NULL);
	int ok = 1;
	w->t = t;
	w->opts = copy;
	w->group = dup_opt(res->group ? res->group : "", &ok);
	w->version = dup_opt(res->version, &ok);
	w->resource = dup_opt(res->resource, &ok);
	w->ns = dup_opt(ns, &ok);
	w->opts.label_selector = w->label_selector = dup_opt(opts->label_selector, &ok);
	w->opts.field_selector = w->field_selector = dup_opt(opts->field_selector, &ok);
	w->opts.resource_version = w->resource_version = dup_opt(opts->resource_version, &ok);
	w->res = (tfjob_resource){ w->group, w->version, w->resource, res->namespaced };
	if (!ok) {
		watch_release(w);
		return tfjob__oom(err);
	}
	if (pthread_create(&w->thread, NULL, watch_main, w)) {
		watch_release(w);
		return tfjob__fail(err, TFJOB_ERROR, "watch: cannot start a thread");
	}
	*out = w;
	return 0;
}

void tfjob_watch_stop(tfjob_watch *w)
{
	if (!w)
		return;
	atomic_store(&w->sink.stop, 1);
	pthread_mutex_lock(&w->sink.wake_mu);
	if (w->sink.wake)
		w->sink.wake(w->sink.wake_arg);
	pthread_mutex_unlock(&w->sink.wake_mu);
}

int tfjob_watch_wait(tfjob_watch *w, int64_t timeout_ms)
{
	if (!w)
		return TFJOB_EINVAL;
	struct timespec deadline = tfjob__deadline_in_ms(timeout_ms >= 0 ? timeout_ms : 0);
	pthread_mutex_lock(&w->mu);
	int timed_out = 0;
	while (!w->done && !timed_out) {
		if (timeout_ms < 0)
			pthread_cond_wait(&w->cond, &w->mu);
		else
			timed_out = pthread_cond_timedwait(&w->cond, &w->mu, &deadline) == ETIMEDOUT;
	}
	int done = w->done;
	pthread_mutex_unlock(&w->mu);
	return done ? 0 : TFJOB_ETIMEOUT;
}

void tfjob_watch_free(tfjob_watch *w)
{
	if (!w)
		return;
	tfjob_watch_stop(w);
	pthread_join(w->thread, NULL);
	watch_release(w);
}
