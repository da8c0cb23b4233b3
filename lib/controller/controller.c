/*
 * The controller handle: options, lifecycle (start, graceful stop), worker threads, the manager
 * thread (leader election), the reflector thread (relists, rewatches); runtime.c holds what the
 * parts use while they run (log, counters, clock, stop and fence state).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "controller/internal.h"
#include "util/timedwait.h"
#include "util/versioned_structs.h"

/* Defaults of the options left 0 (include/tfjob/controller.h lists them for callers). */

/* How long a job waits for the creations and deletions it expects to be seen before acting
   again anyway: client-go's controller expectations use 5 minutes. */
#define EXPECTATIONS_TIMEOUT_MS_DEFAULT (5 * 60 * 1000)
/* Leader election: client-go's leaderelection defaults, as controller-runtime managers (and so
   training-operator) use them: a Lease lasts 15 s, its holder renews it within 10 s, and a
   candidate tries again every 2 s. */
#define LEASE_DURATION_MS_DEFAULT 15000
#define RENEW_DEADLINE_MS_DEFAULT 10000
#define RETRY_PERIOD_MS_DEFAULT 2000
/* The Lease name of training-operator, so that one of the two operators leads, never both. */
#define LEADER_ELECTION_ID_DEFAULT "1ca428e5.training-operator.kubeflow.org"
/* How often wait_idle looks again while the controller is not ready: short, as tests wait on
   it, and far from a busy loop. */
#define IDLE_POLL_US 2000

int tfjob_controller_hooks_init(tfjob_controller_hooks *hooks, unsigned int version)
{
	return tfjob__versioned_init(&tfjob__controller_hooks_v, hooks, version);
}

int tfjob_controller_options_init(tfjob_controller_options *opts, unsigned int version)
{
	return tfjob__versioned_init(&tfjob__controller_options_v, opts, version);
}

static char *dup_opt(const char *s)
{
	return s ? strdup(s) : NULL;
}

/* Options left 0 get their defaults. */
static void default_options(tfjob_controller_options *o)
{
	if (o->workers <= 0)
		o->workers = 1;
	if (o->expectations_timeout_ms <= 0)
		o->expectations_timeout_ms = EXPECTATIONS_TIMEOUT_MS_DEFAULT;
	if (o->lease_duration_ms <= 0)
		o->lease_duration_ms = LEASE_DURATION_MS_DEFAULT;
	if (o->renew_deadline_ms <= 0)
		o->renew_deadline_ms = RENEW_DEADLINE_MS_DEFAULT;
	if (o->retry_period_ms <= 0)
		o->retry_period_ms = RETRY_PERIOD_MS_DEFAULT;
	if (o->status_writers == 0)
		o->status_writers = TFJOB_CONTROLLER_STATUS_WRITERS_DEFAULT;
}

/* The controller's own copies of the option strings (the caller's may go away), and the options
 * pointing at them. False when out of memory. */
static bool own_strings(tfjob_controller *c, tfjob_transport *t)
{
	c->ns = c->o.namespace_name && *c->o.namespace_name ? strdup(c->o.namespace_name) : NULL;
	c->cluster_domain = dup_opt(c->o.cluster_domain);
	c->scheduler_name = dup_opt(c->o.scheduler_name);
	c->le_id = strdup(c->o.leader_election_id ? c->o.leader_election_id : LEADER_ELECTION_ID_DEFAULT);
	c->le_ns = strdup(c->o.leader_election_namespace ? c->o.leader_election_namespace
	                  : c->ns ? c->ns : tfjob_transport_namespace(t) ? tfjob_transport_namespace(t) : "default");
	if (c->o.identity) {
		c->identity = strdup(c->o.identity);
	} else { /* as client-go's leader election names a candidate: host, then something unique */
		char host[256] = "tfjob-operator";
		gethostname(host, sizeof(host) - 1);
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		c->identity = tfjob__strdup_printf("%s_%08lx", host, (unsigned long)(ts.tv_nsec ^ (long)getpid() << 12));
	}
	c->o.namespace_name = c->ns;
	c->o.cluster_domain = c->cluster_domain;
	c->o.scheduler_name = c->scheduler_name;
	c->o.leader_election_id = c->le_id;
	c->o.leader_election_namespace = c->le_ns;
	c->o.identity = c->identity;
	return c->le_id && c->le_ns && c->identity;
}

/* The caches and informers of the four resources (PodGroups only with a gang scheduler). */
static void init_informers(tfjob_controller *c)
{
	static const tfjob_resource res[INF_COUNT] = { TFJOB_RESOURCE_TFJOBS_INIT, TFJOB_RESOURCE_PODS_INIT,
	                                               TFJOB_RESOURCE_SERVICES_INIT, TFJOB_RESOURCE_PODGROUPS_INIT };
	static const tfjob_resource plugins_pg = { "scheduling.x-k8s.io", "v1alpha1", "podgroups", 1 };
	for (int i = 0; i < INF_COUNT; i++) {
		tfjob__store_init(&c->stores[i]);
		tfjob__child_store_init(&c->kids[i]);
		c->inf[i].c = c;
		c->inf[i].kind = i;
		c->inf[i].res = res[i];
		c->inf[i].enabled = i != INF_PODGROUPS || c->o.gang_scheduler != TFJOB_GANG_NONE;
	}
	if (c->o.gang_scheduler == TFJOB_GANG_SCHEDULER_PLUGINS)
		c->inf[INF_PODGROUPS].res = plugins_pg;
}

/* The work queue, expectations, Event recorder and status writer. */
static int new_parts(tfjob_controller *c)
{
	tfjob__queue_opts qo = { c->o.backoff_base_ms, c->o.backoff_max_ms, c->o.queue_qps, c->o.queue_burst, NULL, NULL };
	int rc = tfjob__queue_new(&c->q, &qo);
	if (!rc)
		rc = tfjob__exp_new(&c->exp, c->o.expectations_timeout_ms, NULL, NULL);
	if (!rc)
		rc = tfjob__recorder_new(&c->events, c);
	if (!rc && c->o.status_writers > 0)
		rc = tfjob__writer_new(&c->writer, c, c->o.status_writers);
	return rc;
}

int tfjob_controller_new(tfjob_controller **out, tfjob_transport *t, const tfjob_controller_options *opts,
                         tfjob_error **err)
{
	if (!out || !t)
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_controller_new: NULL argument");
	*out = NULL;
	tfjob_controller_options o;
	tfjob_controller_hooks h;
	int rc = tfjob__versioned_copy(&tfjob__controller_options_v, &o, opts, err);
	if (rc == 0)
		rc = tfjob__versioned_copy(&tfjob__controller_hooks_v, &h, o.hooks, err);
	if (rc)
		return rc;
	tfjob_controller *c = calloc(1, sizeof(*c));
	if (!c)
		return tfjob__oom(err);
	c->t = t;
	c->o = o;
	default_options(&c->o);
	c->hooks = h;
	c->o.hooks = NULL;
	bool owned = own_strings(c, t);
	tfjob_render_options ro = TFJOB_RENDER_OPTIONS_INIT;
	ro.compat = c->o.compat;
	ro.cluster_domain = c->cluster_domain;
	ro.gang_scheduler = c->o.gang_scheduler;
	ro.scheduler_name = c->scheduler_name;
	c->ropts = ro;
	pthread_mutex_init(&c->cache_mu, NULL);
	pthread_mutex_init(&c->mu, NULL);
	tfjob__cond_init_monotonic(&c->cond);
	init_informers(c);
	if (new_parts(c) || !owned) {
		tfjob_controller_free(c);
		return tfjob__oom(err);
	}
	*out = c;
	return 0;
}

void tfjob__reconcile_finish(tfjob_controller *c, const char *key, int rc, int64_t started_ns)
{
	atomic_fetch_add(&c->m.reconciles, 1);
	tfjob__metrics_observe_latency(&c->m, (double)(tfjob__monotonic_ns() - started_ns) / 1e9);
	if (rc == 0) {
		tfjob__queue_forget(c->q, key);
	} else if (rc == TFJOB__RECONCILE_REPLAN) {
		/* The job changed under a status write: plan again once this reconcile has let go. */
		tfjob__queue_add(c->q, key);
		rc = 0;
	} else {
		atomic_fetch_add(&c->m.reconcile_errors, 1);
		atomic_fetch_add(&c->m.queue_retries, 1);
		tfjob__queue_add_rate_limited(c->q, key);
	}
	if (c->hooks.after_reconcile) {
		const char *slash = strchr(key, '/');
		char *ns = slash ? strndup(key, (size_t)(slash - key)) : strdup("");
		c->hooks.after_reconcile(ns ? ns : "", slash ? slash + 1 : key, rc, c->hooks.payload);
		free(ns);
	}
	tfjob__queue_done(c->q, key);
}

static void *worker_main(void *arg)
{
	tfjob_controller *c = arg;
	for (;;) {
		char *key = NULL;
		int rc = tfjob__queue_get(c->q, &key, -1);
		if (rc == TFJOB_ESTATE)
			break;
		if (rc)
			continue;
		const char *slash = strchr(key, '/');
		char *ns = slash ? strndup(key, (size_t)(slash - key)) : strdup("");
		const char *name = slash ? slash + 1 : key;
		int skip = c->hooks.before_reconcile && c->hooks.before_reconcile(ns ? ns : "", name, c->hooks.payload);
		free(ns);
		if (skip) {
			tfjob__queue_done(c->q, key);
		} else {
			int64_t started = tfjob__monotonic_ns();
			rc = tfjob__reconcile(c, key, started);
			if (rc != TFJOB__RECONCILE_HANDED_OFF)
				tfjob__reconcile_finish(c, key, rc, started);
		}
		free(key);
	}
	return NULL;
}

/* The reflector's longest sleep: a safety net, since every stream's end wakes it anyway. */
#define REFLECTOR_MAX_SLEEP_MS 5000

/* Relists and rewatches, on their own thread so that a slow list (an unreachable API server:
   the transport's retries) never delays the renewal of the Lease on the manager thread. */
static void *reflector_main(void *arg)
{
	tfjob_controller *c = arg;
	pthread_mutex_lock(&c->mu);
	while (!c->reflector_stop) {
		c->reflector_kick = 0;
		pthread_mutex_unlock(&c->mu);
		int64_t due = INT64_MAX;
		for (int i = 0; i < INF_COUNT; i++) {
			int64_t next = tfjob__informer_tick(&c->inf[i], tfjob__monotonic_ms());
			if (next < due)
				due = next;
		}
		pthread_mutex_lock(&c->mu);
		if (c->reflector_stop)
			break;
		if (c->reflector_kick)
			continue; /* a stream closed while the informers were looked at */
		/* asleep until the next informer is due or a stream closes (on_closed wakes it) */
		int64_t wait = due == INT64_MAX ? REFLECTOR_MAX_SLEEP_MS : due - tfjob__monotonic_ms();
		wait = wait < 1 ? 1 : wait > REFLECTOR_MAX_SLEEP_MS ? REFLECTOR_MAX_SLEEP_MS : wait;
		struct timespec ts = tfjob__deadline_in_ms(wait);
		pthread_cond_timedwait(&c->cond, &c->mu, &ts);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

/* List+watch everything and start the workers. */
static int start_running(tfjob_controller *c, tfjob_error **err)
{
	pthread_mutex_lock(&c->mu);
	c->reflector_stop = 0; /* before the lists: tfjob__stopping() reads it */
	pthread_mutex_unlock(&c->mu);
	for (int i = 0; i < INF_COUNT; i++) {
		if (!c->inf[i].enabled)
			continue;
		c->inf[i].failures = 0;
		c->inf[i].next_try_ms = 0;
		int rc = tfjob__informer_list_watch(&c->inf[i], err);
		if (rc) {
			for (int j = 0; j < i; j++)
				tfjob__informer_stop(&c->inf[j]);
			return rc;
		}
	}
	c->workers = calloc((size_t)c->o.workers, sizeof(pthread_t));
	int no_threads = !c->workers || tfjob__recorder_start(c->events);
	if (!no_threads && c->writer && tfjob__writer_start(c->writer)) {
		tfjob__recorder_stop(c->events, 0);
		no_threads = 1;
	}
	if (no_threads) {
		for (int i = 0; i < INF_COUNT; i++)
			tfjob__informer_stop(&c->inf[i]);
		free(c->workers);
		c->workers = NULL;
		return tfjob__oom(err);
	}
	for (c->nworkers = 0; c->nworkers < c->o.workers; c->nworkers++)
		if (pthread_create(&c->workers[c->nworkers], NULL, worker_main, c))
			break;
	pthread_mutex_lock(&c->mu);
	c->running = 1;
	pthread_mutex_unlock(&c->mu);
	if (pthread_create(&c->reflector, NULL, reflector_main, c) == 0)
		c->reflector_started = 1;
	tfjob__log(c, TFJOB_LOG_INFO, "controller running", NULL, c->identity, NULL);
	return 0;
}

static void stop_running(tfjob_controller *c)
{
	pthread_mutex_lock(&c->mu);
	int was = c->running;
	c->running = 0;
	c->reflector_stop = 1;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->mu);
	if (c->reflector_started)
		pthread_join(c->reflector, NULL);
	c->reflector_started = 0;
	tfjob__queue_shutdown(c->q); /* stop accepting; in-flight reconciles finish */
	for (int i = 0; i < c->nworkers; i++)
		pthread_join(c->workers[i], NULL);
	free(c->workers);
	c->workers = NULL;
	c->nworkers = 0;
	if (c->writer)
		tfjob__writer_stop(c->writer); /* the writes in progress end; those queued are left */
	tfjob__recorder_stop(c->events, TFJOB__EVENT_FLUSH_MS); /* after the last reconcile posted its Events */
	for (int i = 0; i < INF_COUNT; i++) {
		tfjob__informer_stop(&c->inf[i]);
		c->inf[i].synced = 0;
		c->inf[i].need_relist = 0;
		c->inf[i].need_rewatch = 0;
	}
	if (was)
		tfjob__log(c, TFJOB_LOG_INFO, "controller stopped", NULL, c->identity, NULL);
}

static void *manager_main(void *arg)
{
	tfjob_controller *c = arg;
	int64_t next_try = 0;
	pthread_mutex_lock(&c->mu);
	while (!c->stopping) {
		int64_t now = tfjob__monotonic_ms();
		if (c->o.leader_election && now >= next_try) {
			pthread_mutex_unlock(&c->mu);
			int leading = c->leader;
			int ok = tfjob__leader_try(c);
			if (ok && !leading) {
				c->leader = 1;
				atomic_fetch_add(&c->m.leader_transitions, 1);
				tfjob__log(c, TFJOB_LOG_INFO, "became leader", NULL, c->identity, NULL);
				tfjob_error *err = NULL;
				if (start_running(c, &err)) {
					tfjob__log(c, TFJOB_LOG_ERROR, "starting after election failed", NULL, NULL,
					           tfjob_error_message(err));
					c->leader = 0;
				}
				tfjob_error_free(err);
			} else if (leading && !ok && tfjob__monotonic_ms() - c->last_renew_ms > c->o.renew_deadline_ms) {
				tfjob__log(c, TFJOB_LOG_ERROR, "leader election lost", NULL, c->identity, NULL);
				c->leader = 0;
				stop_running(c);
				pthread_mutex_lock(&c->mu);
				c->stopped_by_itself = 1;
				pthread_cond_broadcast(&c->cond);
				break;
			}
			next_try = tfjob__monotonic_ms() + c->o.retry_period_ms;
			pthread_mutex_lock(&c->mu);
			continue;
		}
		if (!c->o.leader_election) {
			pthread_cond_wait(&c->cond, &c->mu); /* nothing to do until it stops */
			continue;
		}
		int64_t wait = next_try - tfjob__monotonic_ms();
		struct timespec ts = tfjob__deadline_in_ms(wait < 1 ? 1 : wait);
		pthread_cond_timedwait(&c->cond, &c->mu, &ts);
	}
	pthread_mutex_unlock(&c->mu);
	return NULL;
}

int tfjob_controller_start(tfjob_controller *c, tfjob_error **err)
{
	if (!c)
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_controller_start: NULL controller");
	pthread_mutex_lock(&c->mu);
	if (c->started) {
		pthread_mutex_unlock(&c->mu);
		return tfjob__fail(err, TFJOB_ESTATE, "the controller was already started");
	}
	c->started = 1;
	pthread_mutex_unlock(&c->mu);
	if (!c->o.leader_election) {
		int rc = start_running(c, err);
		if (rc)
			return rc;
		c->leader = 1;
	}
	if (pthread_create(&c->manager, NULL, manager_main, c) == 0)
		c->manager_started = 1;
	return 0;
}

void tfjob_controller_stop(tfjob_controller *c)
{
	if (!c)
		return;
	pthread_mutex_lock(&c->mu);
	if (c->stopping || !c->started) {
		c->stopping = 1;
		pthread_mutex_unlock(&c->mu);
		return;
	}
	c->stopping = 1;
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->mu);
	if (c->manager_started)
		pthread_join(c->manager, NULL);
	c->manager_started = 0;
	stop_running(c);
	if (c->o.leader_election && c->leader)
		tfjob__leader_release(c);
	c->leader = 0;
	pthread_mutex_lock(&c->mu);
	pthread_cond_broadcast(&c->cond);
	pthread_mutex_unlock(&c->mu);
}

void tfjob_controller_free(tfjob_controller *c)
{
	if (!c)
		return;
	tfjob_controller_stop(c);
	for (int i = 0; i < INF_COUNT; i++) {
		tfjob__store_clear(&c->stores[i]);
		tfjob__child_store_clear(&c->kids[i]);
	}
	tfjob__writer_free(c->writer);
	tfjob__recorder_free(c->events);
	tfjob__queue_free(c->q);
	tfjob__exp_free(c->exp);
	pthread_mutex_destroy(&c->cache_mu);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->cond);
	free(c->ns);
	free(c->cluster_domain);
	free(c->scheduler_name);
	free(c->le_id);
	free(c->le_ns);
	free(c->identity);
	free(c->lease_seen);
	for (int i = 0; i < INF_COUNT; i++)
		free(c->inf[i].rv);
	free(c);
}

int tfjob_controller_is_ready(const tfjob_controller *c)
{
	if (!c)
		return 0;
	tfjob_controller *m = (tfjob_controller *)c;
	pthread_mutex_lock(&m->mu);
	int ok = m->running;
	pthread_mutex_unlock(&m->mu);
	for (int i = 0; ok && i < INF_COUNT; i++)
		ok = tfjob__informer_ready(&m->inf[i]);
	return ok;
}

int tfjob_controller_is_leader(const tfjob_controller *c)
{
	return c ? ((tfjob_controller *)c)->leader : 0;
}

int tfjob_controller_wait_idle(tfjob_controller *c, int64_t timeout_ms)
{
	if (!c)
		return TFJOB_EINVAL;
	int64_t deadline = timeout_ms >= 0 ? tfjob__monotonic_ms() + timeout_ms : INT64_MAX;
	for (;;) {
		int64_t left = deadline == INT64_MAX ? -1 : deadline - tfjob__monotonic_ms();
		if (deadline != INT64_MAX && left <= 0)
			return TFJOB_ETIMEOUT;
		if (tfjob_controller_is_ready(c) && tfjob__queue_wait_empty(c->q, left < 0 || left > 50 ? 50 : left) == 0) {
			tfjob__queue_tick(c->q);
			if (!tfjob__queue_len(c->q) && !tfjob__queue_processing(c->q) &&
			    tfjob__recorder_wait_empty(c->events, left < 0 || left > 50 ? 50 : left) == 0 &&
			    !tfjob__queue_len(c->q) && !tfjob__queue_processing(c->q))
				return 0;
		} else {
			usleep(IDLE_POLL_US);
		}
	}
}

int tfjob_controller_wait_stopped(tfjob_controller *c, int64_t timeout_ms)
{
	if (!c)
		return TFJOB_EINVAL;
	int64_t deadline = timeout_ms >= 0 ? tfjob__monotonic_ms() + timeout_ms : INT64_MAX;
	pthread_mutex_lock(&c->mu);
	while (!c->stopped_by_itself && !c->stopping) {
		int64_t now = tfjob__monotonic_ms();
		if (now >= deadline) {
			pthread_mutex_unlock(&c->mu);
			return TFJOB_ETIMEOUT;
		}
		struct timespec ts = tfjob__deadline_in_ms(deadline - now > 200 ? 200 : deadline - now);
		pthread_cond_timedwait(&c->cond, &c->mu, &ts);
	}
	pthread_mutex_unlock(&c->mu);
	return 0;
}

int tfjob_controller_enqueue(tfjob_controller *c, const char *ns, const char *name)
{
	if (!c || !name)
		return TFJOB_EINVAL;
	char *key = tfjob__strdup_printf("%s/%s", ns ? ns : (c->ns ? c->ns : tfjob_transport_namespace(c->t)), name);
	if (!key)
		return TFJOB_ENOMEM;
	int rc = tfjob__queue_add(c->q, key);
	atomic_fetch_add(&c->m.queue_adds, 1);
	free(key);
	return rc;
}

