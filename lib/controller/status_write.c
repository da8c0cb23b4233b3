/*
 * Status writes: the PUT of a job's status (by a worker or by the status writer, writer.c), what
 * it moves in the metrics, keeping what the server stored in the cache, re-reading the job after
 * a conflict, and saying when the CRD's schema pruned part of what was written. Called by
 * executor.c and writer.c; calls neither.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/internal.h"
#include "core/objects.h"
#include "parse/jscan.h"

static const tfjob_resource RES_TFJOBS = TFJOB_RESOURCE_TFJOBS_INIT;

/* Put an object (taken reference) into a store unless the store has a newer one. */
void tfjob__cache_put(tfjob_controller *c, int kind, json_t *obj)
{
	pthread_mutex_lock(&c->cache_mu);
	tfjob__store_put(&c->stores[kind], obj);
	pthread_mutex_unlock(&c->cache_mu);
}

static int cond_true(json_t *status, const char *type)
{
	size_t i;
	json_t *cnd;
	json_array_foreach(json_object_get(status, "conditions"), i, cnd) {
		const char *t = json_string_value(json_object_get(cnd, "type"));
		const char *s = json_string_value(json_object_get(cnd, "status"));
		if (t && s && !strcmp(t, type))
			return !strcmp(s, "True") ? 1 : 0;
	}
	return -1; /* absent */
}

/*
 * Whether `stored` (the status the server answered a status write with) lost or changed part of
 * `sent`; `where` gets the path of the first difference, as status.a.b[i].
 */
static int status_lost_at(const json_t *sent, const json_t *stored, char *where, size_t size, size_t len)
{
	if (json_is_object(sent) && json_is_object(stored)) {
		const char *k;
		json_t *v;
		json_object_foreach((json_t *)sent, k, v) {
			if (json_is_null(v))
				continue;
			snprintf(where + len, size - len, ".%s", k);
			if (status_lost_at(v, json_object_get(stored, k), where, size, strlen(where)))
				return 1;
		}
		where[len] = '\0';
		return 0;
	}
	if (json_is_array(sent) && json_is_array(stored) && json_array_size(sent) == json_array_size(stored)) {
		for (size_t i = 0; i < json_array_size(sent); i++) {
			snprintf(where + len, size - len, "[%zu]", i);
			if (status_lost_at(json_array_get(sent, i), json_array_get(stored, i), where, size, strlen(where)))
				return 1;
		}
		where[len] = '\0';
		return 0;
	}
	return !json_equal(sent, stored);
}

static int status_lost(const json_t *sent, const json_t *stored, char *where, size_t size)
{
	snprintf(where, size, "status");
	return status_lost_at(sent, stored, where, size, strlen(where));
}

/* After a status conflict: the job as stored now into the cache; TFJOB__RECONCILE_REPLAN,
   0 (gone) or an error. */
static int reread_job(tfjob_controller *c, const char *ns, const char *name, tfjob_error **err)
{
	char *fresh = NULL;
	int rc = tfjob_transport_get(&fresh, c->t, &RES_TFJOBS, ns, name, err);
	tfjob__count(c, TFJOB_API_GET, rc);
	json_t *f = rc == 0 ? tfjob__object_loads(fresh) : NULL;
	tfjob_free(fresh);
	if (f)
		tfjob__cache_put(c, INF_JOBS, f);
	return rc == 0 ? TFJOB__RECONCILE_REPLAN : rc == TFJOB_ENOTFOUND ? 0 : rc;
}

/* The job metrics a status write moves, decided with the reconcile, counted once written. */
enum { TRANSITION_CREATED = 1, TRANSITION_SUCCEEDED = 2, TRANSITION_FAILED = 4, TRANSITION_RESTARTED = 8 };

unsigned tfjob__status_transitions(json_t *o, json_t *n)
{
	unsigned t = 0;
	if (cond_true(o, "Created") < 0 && cond_true(n, "Created") >= 0)
		t |= TRANSITION_CREATED;
	if (cond_true(o, "Succeeded") != 1 && cond_true(n, "Succeeded") == 1)
		t |= TRANSITION_SUCCEEDED;
	if (cond_true(o, "Failed") != 1 && cond_true(n, "Failed") == 1)
		t |= TRANSITION_FAILED;
	if (cond_true(o, "Restarting") != 1 && cond_true(n, "Restarting") == 1)
		t |= TRANSITION_RESTARTED;
	return t;
}

static void count_transitions(tfjob__metrics *m, unsigned t)
{
	if (t & TRANSITION_CREATED)
		atomic_fetch_add(&m->jobs_created, 1);
	if (t & TRANSITION_SUCCEEDED)
		atomic_fetch_add(&m->jobs_succeeded, 1);
	if (t & TRANSITION_FAILED)
		atomic_fetch_add(&m->jobs_failed, 1);
	if (t & TRANSITION_RESTARTED)
		atomic_fetch_add(&m->jobs_restarted, 1);
}

/* 1 when the stored job's status is, byte for byte, the status written (sent_text: as the API
   server writes JSON, compact with keys sorted): then nothing of it was pruned. */
static int status_same_text(const char *stored, const char *sent_text)
{
	const char *a, *b;
	if (!tfjob__jscan_member(stored, "\"status\"", &a, &b))
		return 0;
	return strlen(sent_text) == (size_t)(b - a) && !memcmp(sent_text, a, (size_t)(b - a));
}

/* The job as the server stored it, into the cache. When its status came back as written (the
   usual case) the text is kept as it came, without a parse; otherwise it is parsed to say where
   the stored status differs. */
static void keep_written_job(tfjob_controller *c, const tfjob__status_write *w, const char *stored)
{
	char *key = NULL;
	tfjob__stored *so = status_same_text(stored, w->status_text) ? tfjob__stored_from_text(stored, &key) : NULL;
	if (so) {
		pthread_mutex_lock(&c->cache_mu);
		tfjob__store_put_stored(&c->stores[INF_JOBS], key, so);
		pthread_mutex_unlock(&c->cache_mu);
		return;
	}
	json_t *s = tfjob__object_loads(stored);
	char where[256] = "";
	if (s && status_lost(w->new_status, json_object_get(s, "status"), where, sizeof(where))) {
		/* The CRD's schema pruned or changed part of what we wrote: the next plan would
		   write it again at every event. Say so (a CRD without those status fields). */
		tfjob__log(c, TFJOB_LOG_WARN, "the stored status differs from the one written (pruned by the CRD's schema?)",
		           w->key, where, NULL);
	}
	if (s)
		tfjob__cache_put(c, INF_JOBS, s);
}

int tfjob__status_write_do(tfjob_controller *c, tfjob__status_write *w, tfjob_error **err)
{
	char *stored = NULL;
	int rc = tfjob_transport_update_status(&stored, c->t, &RES_TFJOBS, w->ns, w->body, err);
	tfjob__count(c, TFJOB_API_UPDATE_STATUS, rc);
	if (rc == TFJOB_ECONFLICT) {
		atomic_fetch_add(&c->m.status_conflicts, 1);
		tfjob_error_free(*err);
		*err = NULL;
		return reread_job(c, w->ns, w->name, err);
	}
	if (rc) {
		tfjob_free(stored);
		return rc == TFJOB_ENOTFOUND ? 0 : rc;
	}
	/* Counted as soon as the write has succeeded, before the checks of what was stored. */
	count_transitions(&c->m, w->transitions);
	if (stored)
		keep_written_job(c, w, stored);
	tfjob_free(stored);
	if (w->requeue_after_ms >= 0)
		tfjob__queue_add_after(c->q, w->key, w->requeue_after_ms);
	return 0;
}

void tfjob__status_write_free(tfjob_controller *c, tfjob__status_write *w)
{
	if (!w)
		return;
	tfjob__recorder_post(c->events, &w->events);
	json_decref(w->new_status);
	free(w->status_text);
	free(w->body);
	free(w->key);
	free(w->ns);
	free(w->name);
	free(w);
}
