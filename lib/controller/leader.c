/*
 * Leader election with a coordination.k8s.io/v1 Lease, as client-go's leaderelection does:
 * acquire when the lease is free or its holder has not renewed for leaseDurationSeconds (timed
 * by our own clock from when we saw the record change, never by the holder's timestamps), renew
 * every retry period, give up after the renew deadline; leaseTransitions counts holder changes.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller/internal.h"

static const tfjob_resource RES_LEASES = { "coordination.k8s.io", "v1", "leases", 1 };

/* metav1.MicroTime: RFC 3339 with microseconds. */
static void micro_now(char *buf, size_t size)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	char base[32];
	strftime(base, sizeof(base), "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%06ldZ", base, (long)(ts.tv_nsec / 1000));
}

static int write_lease(tfjob_controller *c, json_t *lease, int create)
{
	char *text = json_dumps(lease, JSON_COMPACT);
	if (!text)
		return TFJOB_ENOMEM;
	tfjob_error *err = NULL;
	int rc = create ? tfjob_transport_create(NULL, c->t, &RES_LEASES, c->le_ns, text, &err)
	                : tfjob_transport_update(NULL, c->t, &RES_LEASES, c->le_ns, text, &err);
	tfjob__count(c, create ? TFJOB_API_CREATE : TFJOB_API_UPDATE, rc);
	if (rc && rc != TFJOB_ECONFLICT && rc != TFJOB_EEXISTS)
		tfjob__log(c, TFJOB_LOG_WARN, "writing the lease failed", NULL, c->le_id, tfjob_error_message(err));
	tfjob_error_free(err);
	free(text);
	return rc;
}

int tfjob__leader_try(tfjob_controller *c)
{
	char now[64];
	micro_now(now, sizeof(now));
	int64_t mono = tfjob__monotonic_ms();
	int64_t dur_s = (c->o.lease_duration_ms + 999) / 1000;
	char *got = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_transport_get(&got, c->t, &RES_LEASES, c->le_ns, c->le_id, &err);
	tfjob__count(c, TFJOB_API_GET, rc);
	tfjob_error_free(err);
	if (rc == TFJOB_ENOTFOUND) {
		json_t *lease = json_pack("{s:s,s:s,s:{s:s,s:s},s:{s:s,s:I,s:s,s:s,s:i}}", "apiVersion",
		                          "coordination.k8s.io/v1", "kind", "Lease", "metadata", "name", c->le_id,
		                          "namespace", c->le_ns, "spec", "holderIdentity", c->identity,
		                          "leaseDurationSeconds", (json_int_t)dur_s, "acquireTime", now, "renewTime", now,
		                          "leaseTransitions", 0);
		rc = lease ? write_lease(c, lease, 1) : TFJOB_ENOMEM;
		json_decref(lease);
		if (rc == 0) {
			c->last_renew_ms = mono;
			return 1;
		}
		return 0;
	}
	if (rc)
		return 0;
	json_t *lease = json_loads(got, 0, NULL);
	tfjob_free(got);
	if (!lease)
		return 0;
	json_t *spec = json_object_get(lease, "spec");
	if (!json_is_object(spec)) {
		spec = json_object();
		json_object_set_new(lease, "spec", spec);
	}
	const char *holder = json_string_value(json_object_get(spec, "holderIdentity"));
	const char *renew = json_string_value(json_object_get(spec, "renewTime"));
	json_int_t ldur = json_integer_value(json_object_get(spec, "leaseDurationSeconds"));
	char *seen = tfjob__strdup_printf("%s|%s", holder ? holder : "", renew ? renew : "");
	if (!c->lease_seen || !seen || strcmp(seen, c->lease_seen)) {
		free(c->lease_seen);
		c->lease_seen = seen;
		c->lease_seen_ms = mono;
	} else {
		free(seen);
	}
	int mine = holder && !strcmp(holder, c->identity);
	if (!mine && holder && *holder && mono < c->lease_seen_ms + (int64_t)ldur * 1000) {
		json_decref(lease);
		return 0; /* held by someone else and not expired */
	}
	json_int_t trans = json_integer_value(json_object_get(spec, "leaseTransitions"));
	if (!mine) {
		json_object_set_new(spec, "leaseTransitions", json_integer(trans + 1));
		json_object_set_new(spec, "acquireTime", json_string(now));
	}
	json_object_set_new(spec, "holderIdentity", json_string(c->identity));
	json_object_set_new(spec, "leaseDurationSeconds", json_integer(dur_s));
	json_object_set_new(spec, "renewTime", json_string(now));
	rc = write_lease(c, lease, 0);
	json_decref(lease);
	if (rc)
		return 0;
	c->last_renew_ms = mono;
	return 1;
}

/* On a graceful stop: hand the lease back (client-go's ReleaseOnCancel). */
void tfjob__leader_release(tfjob_controller *c)
{
	char *got = NULL;
	int rc = tfjob_transport_get(&got, c->t, &RES_LEASES, c->le_ns, c->le_id, NULL);
	tfjob__count(c, TFJOB_API_GET, rc);
	if (rc)
		return;
	json_t *lease = json_loads(got, 0, NULL);
	tfjob_free(got);
	json_t *spec = json_object_get(lease, "spec");
	const char *holder = json_string_value(json_object_get(spec, "holderIdentity"));
	if (holder && !strcmp(holder, c->identity)) {
		char now[64];
		micro_now(now, sizeof(now));
		json_object_set_new(spec, "holderIdentity", json_string(""));
		json_object_set_new(spec, "leaseDurationSeconds", json_integer(1));
		json_object_set_new(spec, "renewTime", json_string(now));
		write_lease(c, lease, 0);
	}
	json_decref(lease);
}
