/*
 * What every part of the controller uses while it runs: its log, its API call counters, its
 * clock, and whether it is stopping or fenced (its Lease not renewed in time). controller.c
 * builds and runs the parts; the parts call these, never into controller.c.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdlib.h>
#include <time.h>

#include "controller/internal.h"
#include "util/timedwait.h"

int tfjob__log_enabled(const tfjob_controller *c, tfjob_log_level level)
{
	return c->hooks.log && level >= c->hooks.log_level;
}

void tfjob__log(tfjob_controller *c, tfjob_log_level level, const char *msg, const char *job_key, const char *what,
                const char *error)
{
	if (!tfjob__log_enabled(c, level))
		return;
	json_t *f = json_object();
	if (job_key)
		json_object_set_new(f, "job", json_string(job_key));
	if (what)
		json_object_set_new(f, "object", json_string(what));
	if (error)
		json_object_set_new(f, "error", json_string(error));
	char *text = json_dumps(f, JSON_COMPACT);
	json_decref(f);
	c->hooks.log(level, msg, text ? text : "{}", c->hooks.payload);
	free(text);
}

void tfjob__count(tfjob_controller *c, tfjob_api_verb verb, int rc)
{
	atomic_fetch_add(&c->m.api_calls[verb], 1);
	if (rc && rc != TFJOB_ENOTFOUND)
		atomic_fetch_add(&c->m.api_errors, 1);
}

int64_t tfjob__now_s(tfjob_controller *c)
{
	if (c->o.clock)
		return c->o.clock(c->o.clock_payload);
	return (int64_t)time(NULL);
}

int tfjob__stopping(tfjob_controller *c)
{
	pthread_mutex_lock(&c->mu);
	int stopping = c->stopping || c->reflector_stop;
	pthread_mutex_unlock(&c->mu);
	return stopping;
}

int tfjob__fenced(tfjob_controller *c)
{
	if (!c->o.leader_election)
		return 0;
	int64_t last = c->last_renew_ms;
	return last > 0 && tfjob__monotonic_ms() - last > c->o.renew_deadline_ms;
}

int64_t tfjob__fence_retry_ms(const tfjob_controller *c)
{
	return c->o.retry_period_ms < 200 ? c->o.retry_period_ms : 200;
}
