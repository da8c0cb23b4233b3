/*
 * Controller metrics: counters, the reconcile latency histogram and the Prometheus text format.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/internal.h"
#include "util/sbuf.h"
#include "util/versioned_structs.h"

static const double bounds[TFJOB_CONTROLLER_LATENCY_BUCKETS] = {
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, HUGE_VAL
};

double tfjob_controller_latency_bucket_bound(size_t i)
{
	return i < TFJOB_CONTROLLER_LATENCY_BUCKETS ? bounds[i] : HUGE_VAL;
}

void tfjob__metrics_observe_latency(tfjob__metrics *m, double seconds)
{
	size_t i = 0;
	while (i < TFJOB_CONTROLLER_LATENCY_BUCKETS - 1 && seconds > bounds[i])
		i++;
	atomic_fetch_add(&m->latency[i], 1);
	atomic_fetch_add(&m->latency_sum_us, (uint64_t)(seconds * 1e6));
}

const char *tfjob_api_verb_name(tfjob_api_verb verb)
{
	static const char *const names[TFJOB_API_VERB_COUNT] = {
		"get", "list", "watch", "create", "update", "update_status", "patch", "delete", "create_event"
	};
	return (unsigned)verb < TFJOB_API_VERB_COUNT ? names[verb] : "unknown";
}

static void metrics_read(tfjob_controller_metrics *out, const tfjob_controller *cc);

int tfjob_controller_metrics_get(tfjob_controller_metrics *out, const tfjob_controller *cc)
{
	if (!out || !cc)
		return TFJOB_EINVAL;
	tfjob_controller_metrics full = { .version = TFJOB_CONTROLLER_METRICS_VERSION };
	metrics_read(&full, cc);
	return tfjob__versioned_fill(&tfjob__controller_metrics_v, out, &full, NULL) ? TFJOB_EVERSION : 0;
}

/* Every counter of the latest metrics version into *out. */
static void metrics_read(tfjob_controller_metrics *out, const tfjob_controller *cc)
{
	tfjob_controller *c = (tfjob_controller *)cc;
	const tfjob__metrics *m = &c->m;
	out->jobs_created = m->jobs_created;
	out->jobs_succeeded = m->jobs_succeeded;
	out->jobs_failed = m->jobs_failed;
	out->jobs_restarted = m->jobs_restarted;
	out->jobs_deleted = m->jobs_deleted;
	out->reconciles = m->reconciles;
	out->reconcile_errors = m->reconcile_errors;
	for (size_t i = 0; i < TFJOB_CONTROLLER_LATENCY_BUCKETS; i++)
		out->reconcile_latency[i] = m->latency[i];
	out->reconcile_latency_sum = (double)m->latency_sum_us / 1e6;
	out->queue_depth = tfjob__queue_len(c->q);
	out->queue_adds = m->queue_adds;
	out->queue_retries = m->queue_retries;
	for (size_t i = 0; i < TFJOB_API_VERB_COUNT; i++)
		out->api_calls[i] = m->api_calls[i];
	out->api_errors = m->api_errors;
	out->status_conflicts = m->status_conflicts;
	out->relists = m->relists;
	out->is_leader = c->leader;
	out->leader_transitions = m->leader_transitions;
	out->watch_restarts = m->watch_restarts;
	out->watch_errors = m->watch_errors;
	out->caches_synced = tfjob_controller_is_ready(c);
}

/* Every line goes through the growing buffer b; running out of memory is checked once, at the
   end (the buffer's oom flag is sticky). */
#define EMIT(...) tfjob__sbuf_printf(b, __VA_ARGS__)
#define COUNTER(name, help, value)                                                                    \
	EMIT("# HELP " name " " help "\n# TYPE " name " counter\n" name "{framework=\"tensorflow\"} %llu\n", \
	     (unsigned long long)(value))

/* The job counters, named as training-operator names them. */
static void write_job_counters(tfjob__sbuf *b, const tfjob_controller_metrics *m)
{
	COUNTER("training_operator_jobs_created_total", "Counts number of jobs created", m->jobs_created);
	COUNTER("training_operator_jobs_successful_total", "Counts number of jobs successful", m->jobs_succeeded);
	COUNTER("training_operator_jobs_failed_total", "Counts number of jobs failed", m->jobs_failed);
	COUNTER("training_operator_jobs_restarted_total", "Counts number of jobs restarted", m->jobs_restarted);
	COUNTER("training_operator_jobs_deleted_total", "Counts number of jobs deleted", m->jobs_deleted);
}

/* Reconciles by result, and their latency histogram. */
static void write_reconciles(tfjob__sbuf *b, const tfjob_controller_metrics *m)
{
	EMIT("# HELP tfjob_controller_reconcile_total Reconciles performed\n# TYPE tfjob_controller_reconcile_total counter\n"
	     "tfjob_controller_reconcile_total{result=\"success\"} %llu\ntfjob_controller_reconcile_total{result=\"error\"} %llu\n",
	     (unsigned long long)(m->reconciles - m->reconcile_errors), (unsigned long long)m->reconcile_errors);
	EMIT("# HELP tfjob_controller_reconcile_time_seconds Length of time per reconcile\n"
	     "# TYPE tfjob_controller_reconcile_time_seconds histogram\n");
	unsigned long long cum = 0;
	for (size_t i = 0; i < TFJOB_CONTROLLER_LATENCY_BUCKETS; i++) {
		cum += m->reconcile_latency[i];
		double bound = tfjob_controller_latency_bucket_bound(i);
		if (isinf(bound))
			EMIT("tfjob_controller_reconcile_time_seconds_bucket{le=\"+Inf\"} %llu\n", cum);
		else
			EMIT("tfjob_controller_reconcile_time_seconds_bucket{le=\"%g\"} %llu\n", bound, cum);
	}
	EMIT("tfjob_controller_reconcile_time_seconds_sum %.6f\ntfjob_controller_reconcile_time_seconds_count %llu\n",
	     m->reconcile_latency_sum, cum);
}

/* The work queue (client-go's workqueue metrics), API calls, watches and leadership. */
static void write_queue_and_api(tfjob__sbuf *b, const tfjob_controller_metrics *m)
{
	EMIT("# HELP workqueue_depth Current depth of workqueue\n# TYPE workqueue_depth gauge\n"
	     "workqueue_depth{name=\"tfjob\"} %llu\n", (unsigned long long)m->queue_depth);
	EMIT("# HELP workqueue_adds_total Total number of adds handled by workqueue\n# TYPE workqueue_adds_total counter\n"
	     "workqueue_adds_total{name=\"tfjob\"} %llu\n", (unsigned long long)m->queue_adds);
	EMIT("# HELP workqueue_retries_total Total number of retries handled by workqueue\n"
	     "# TYPE workqueue_retries_total counter\nworkqueue_retries_total{name=\"tfjob\"} %llu\n",
	     (unsigned long long)m->queue_retries);
	EMIT("# HELP tfjob_controller_api_requests_total API calls made by the controller, by verb\n"
	     "# TYPE tfjob_controller_api_requests_total counter\n");
	for (size_t i = 0; i < TFJOB_API_VERB_COUNT; i++)
		EMIT("tfjob_controller_api_requests_total{verb=\"%s\"} %llu\n", tfjob_api_verb_name((tfjob_api_verb)i),
		     (unsigned long long)m->api_calls[i]);
	EMIT("# HELP tfjob_controller_api_errors_total API calls that failed\n# TYPE tfjob_controller_api_errors_total counter\n"
	     "tfjob_controller_api_errors_total %llu\n", (unsigned long long)m->api_errors);
	EMIT("# HELP tfjob_controller_status_conflicts_total Status writes that met a conflict\n"
	     "# TYPE tfjob_controller_status_conflicts_total counter\ntfjob_controller_status_conflicts_total %llu\n",
	     (unsigned long long)m->status_conflicts);
	EMIT("# HELP tfjob_controller_relists_total Lists after the first\n# TYPE tfjob_controller_relists_total counter\n"
	     "tfjob_controller_relists_total %llu\n", (unsigned long long)m->relists);
	EMIT("# HELP tfjob_controller_is_leader 1 while this replica reconciles\n# TYPE tfjob_controller_is_leader gauge\n"
	     "tfjob_controller_is_leader %d\n", m->is_leader);
	EMIT("# HELP tfjob_controller_watch_restarts_total Watches resumed from the last resourceVersion after their stream ended\n"
	     "# TYPE tfjob_controller_watch_restarts_total counter\ntfjob_controller_watch_restarts_total %llu\n",
	     (unsigned long long)m->watch_restarts);
	EMIT("# HELP tfjob_controller_watch_errors_total Watch streams that ended with an error (API server unreachable, 410 Gone, ...)\n"
	     "# TYPE tfjob_controller_watch_errors_total counter\ntfjob_controller_watch_errors_total %llu\n",
	     (unsigned long long)m->watch_errors);
}

/* What became of the Events the controller recorded. */
static void write_events(tfjob__sbuf *b, const tfjob_controller *c)
{
	const tfjob__metrics *im = &((const tfjob_controller *)c)->m;
	EMIT("# HELP tfjob_controller_events_total Events by what became of them: created, patched (a repeat: "
	     "its count raised), dropped (queue full or shutdown), filtered (spam filter), failed\n"
	     "# TYPE tfjob_controller_events_total counter\n");
	EMIT("tfjob_controller_events_total{result=\"created\"} %llu\n"
	     "tfjob_controller_events_total{result=\"patched\"} %llu\n"
	     "tfjob_controller_events_total{result=\"dropped\"} %llu\n"
	     "tfjob_controller_events_total{result=\"filtered\"} %llu\n"
	     "tfjob_controller_events_total{result=\"failed\"} %llu\n",
	     (unsigned long long)im->events_created, (unsigned long long)im->events_patched,
	     (unsigned long long)im->events_dropped, (unsigned long long)im->events_filtered,
	     (unsigned long long)im->events_failed);
}

/* The caches: their size, their objects, whether each is synced. */
static void write_caches(tfjob__sbuf *b, const tfjob_controller *c)
{
	tfjob_controller *mc = (tfjob_controller *)c;
	size_t bytes[INF_COUNT], n[INF_COUNT];
	pthread_mutex_lock(&mc->cache_mu);
	for (int i = 0; i < INF_COUNT; i++) {
		bytes[i] = mc->stores[i].bytes + mc->kids[i].bytes;
		n[i] = mc->stores[i].objs.len + mc->kids[i].objs.len;
	}
	pthread_mutex_unlock(&mc->cache_mu);
	EMIT("# HELP tfjob_controller_cache_bytes Estimated heap held by each cache (objects and index entries)\n"
	     "# TYPE tfjob_controller_cache_bytes gauge\n");
	for (int i = 0; i < INF_COUNT; i++)
		if (mc->inf[i].enabled)
			EMIT("tfjob_controller_cache_bytes{resource=\"%s\"} %zu\n", mc->inf[i].res.resource, bytes[i]);
	EMIT("# HELP tfjob_controller_cache_objects Objects held by each cache\n"
	     "# TYPE tfjob_controller_cache_objects gauge\n");
	for (int i = 0; i < INF_COUNT; i++)
		if (mc->inf[i].enabled)
			EMIT("tfjob_controller_cache_objects{resource=\"%s\"} %zu\n", mc->inf[i].res.resource, n[i]);
	EMIT("# HELP tfjob_controller_cache_synced 1 while the cache is listed and its watch connected\n"
	     "# TYPE tfjob_controller_cache_synced gauge\n");
	pthread_mutex_lock(&mc->mu);
	int running = mc->running;
	pthread_mutex_unlock(&mc->mu);
	for (int i = 0; i < INF_COUNT; i++)
		if (mc->inf[i].enabled)
			EMIT("tfjob_controller_cache_synced{resource=\"%s\"} %d\n", mc->inf[i].res.resource,
			     running && tfjob__informer_ready(&mc->inf[i]));
}

#undef COUNTER
#undef EMIT

int tfjob_controller_metrics_text(char **out, const tfjob_controller *c, tfjob_error **err)
{
	if (!out || !c)
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_controller_metrics_text: NULL argument");
	*out = NULL;
	tfjob_controller_metrics m = { .version = TFJOB_CONTROLLER_METRICS_VERSION };
	tfjob_controller_metrics_get(&m, c);
	tfjob__sbuf b = TFJOB__SBUF_INIT;
	write_job_counters(&b, &m);
	write_reconciles(&b, &m);
	write_queue_and_api(&b, &m);
	write_events(&b, c);
	write_caches(&b, c);
	char *text = tfjob__sbuf_take(&b);
	if (!text)
		return tfjob__oom(err);
	*out = text;
	return 0;
}
