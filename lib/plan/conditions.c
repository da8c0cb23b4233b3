/*
 * The TFJob condition state machine and status shape checks (times: util/time.c).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "core/job.h"
#include "plan/planner.h"

int tfjob__status_set_time(json_t *status, const char *key, int64_t t)
{
	char buf[40];
	tfjob_time_format(buf, sizeof buf, t);
	return json_object_set_new(status, key, json_string(buf)) ? TFJOB_ENOMEM : 0;
}

int tfjob__status_get_time(int64_t *out, json_t *status, const char *key)
{
	const char *s = tfjob__str(status, key);
	if (!s || tfjob_time_parse(out, s))
		return TFJOB_ENOTFOUND;
	return 0;
}

/* ---- conditions ---- */

json_t *tfjob__cond_find(json_t *status, const char *type)
{
	json_t *conds = tfjob__arr(status, "conditions");
	size_t i;
	json_t *c;
	json_array_foreach(conds, i, c) {
		const char *t = tfjob__str(c, "type");
		if (t && !strcmp(t, type))
			return c;
	}
	return NULL;
}

bool tfjob__cond_true(json_t *status, const char *type)
{
	/* v1.9 looks for any condition of the type that is True. */
	json_t *conds = tfjob__arr(status, "conditions");
	size_t i;
	json_t *c;
	json_array_foreach(conds, i, c) {
		const char *t = tfjob__str(c, "type"), *st = tfjob__str(c, "status");
		if (t && st && !strcmp(t, type) && !strcmp(st, "True"))
			return true;
	}
	return false;
}

static bool streq(const char *a, const char *b) { return !strcmp(a ? a : "", b ? b : ""); }

int tfjob__cond_set(json_t *status, const char *type, const char *cstatus, const char *reason,
                    const char *message, int64_t now, tfjob_compat compat)
{
	bool documented = compat != TFJOB_COMPAT_TRAINING_OPERATOR_1_9;
	if (tfjob__cond_true(status, TFJOB__COND_FAILED))
		return 0;
	if (documented && tfjob__cond_true(status, TFJOB__COND_SUCCEEDED))
		return 0;
	json_t *cur = tfjob__cond_find(status, type);
	if (cur && streq(tfjob__str(cur, "status"), cstatus) && streq(tfjob__str(cur, "reason"), reason))
		return 0;

	char nowbuf[40];
	tfjob_time_format(nowbuf, sizeof nowbuf, now);
	json_t *ltt = NULL;
	if (cur && streq(tfjob__str(cur, "status"), cstatus) && json_object_get(cur, "lastTransitionTime"))
		ltt = json_deep_copy(json_object_get(cur, "lastTransitionTime"));
	else
		ltt = json_string(nowbuf);

	json_t *cond = json_object();
	if (!ltt || !cond || json_object_set_new(cond, "type", json_string(type)) ||
	    json_object_set_new(cond, "status", json_string(cstatus)) ||
	    (reason && *reason && json_object_set_new(cond, "reason", json_string(reason))) ||
	    (message && *message && json_object_set_new(cond, "message", json_string(message))) ||
	    json_object_set_new(cond, "lastUpdateTime", json_string(nowbuf)) ||
	    json_object_set_new(cond, "lastTransitionTime", ltt)) {
		if (!cond)
			json_decref(ltt);
		json_decref(cond);
		return TFJOB_ENOMEM;
	}

	bool terminal = !strcmp(type, TFJOB__COND_FAILED) || !strcmp(type, TFJOB__COND_SUCCEEDED);
	json_t *list = json_array();
	if (!list) {
		json_decref(cond);
		return TFJOB_ENOMEM;
	}
	json_t *old = tfjob__arr(status, "conditions");
	size_t i;
	json_t *c;
	json_array_foreach(old, i, c) {
		const char *t = tfjob__str(c, "type");
		t = t ? t : "";
		if (!strcmp(type, TFJOB__COND_RESTARTING) && !strcmp(t, TFJOB__COND_RUNNING))
			continue;
		if (!strcmp(type, TFJOB__COND_RUNNING) && !strcmp(t, TFJOB__COND_RESTARTING))
			continue;
		if (!strcmp(t, type))
			continue;
		json_t *copy = json_deep_copy(c);
		if (!copy)
			goto oom;
		if (terminal && (!strcmp(t, TFJOB__COND_RUNNING) || (documented && !strcmp(t, TFJOB__COND_RESTARTING))) &&
		    json_object_set_new(copy, "status", json_string("False"))) {
			json_decref(copy);
			goto oom;
		}
		if (json_array_append_new(list, copy))
			goto oom;
	}
	if (json_array_append_new(list, cond)) {
		cond = NULL;
		goto oom;
	}
	return json_object_set_new(status, "conditions", list) ? TFJOB_ENOMEM : 0;
oom:
	json_decref(cond);
	json_decref(list);
	return TFJOB_ENOMEM;
}

/* ---- status shape ---- */

int tfjob__status_check(const json_t *status, tfjob_error **err)
{
	if (!status || json_is_null(status))
		return 0;
	if (!json_is_object(status))
		return tfjob__fail_field(err, TFJOB_ESCHEMA, "status", "status: must be an object");
	json_t *conds = json_object_get(status, "conditions");
	if (conds && !json_is_null(conds)) {
		if (!json_is_array(conds))
			return tfjob__fail_field(err, TFJOB_ESCHEMA, "status.conditions", "status.conditions: must be an array");
		size_t i;
		json_t *c;
		json_array_foreach(conds, i, c) {
			static const char *const keys[] = { "type", "status", "reason", "message", "lastUpdateTime",
			                                    "lastTransitionTime" };
			if (!json_is_object(c))
				return tfjob__fail_field(err, TFJOB_ESCHEMA, "status.conditions",
				                         "status.conditions[%zu]: must be an object", i);
			for (size_t k = 0; k < TFJOB_ARRAY_LEN(keys); k++) {
				json_t *v = json_object_get(c, keys[k]);
				if (v && !json_is_string(v) && !json_is_null(v))
					return tfjob__fail_field(err, TFJOB_ESCHEMA, "status.conditions",
					                         "status.conditions[%zu].%s: must be a string", i, keys[k]);
			}
			if (!json_is_string(json_object_get(c, "type")))
				return tfjob__fail_field(err, TFJOB_ESCHEMA, "status.conditions",
				                         "status.conditions[%zu].type: required", i);
		}
	}
	json_t *rs = json_object_get(status, "replicaStatuses");
	if (rs && !json_is_null(rs)) {
		if (!json_is_object(rs))
			return tfjob__fail_field(err, TFJOB_ESCHEMA, "status.replicaStatuses",
			                         "status.replicaStatuses: must be an object");
		const char *key;
		json_t *v;
		json_object_foreach(rs, key, v) {
			if (json_is_null(v))
				continue;
			if (!json_is_object(v))
				return tfjob__fail_field(err, TFJOB_ESCHEMA, "status.replicaStatuses",
				                         "status.replicaStatuses[%s]: must be an object", key);
			static const char *const counts[] = { "active", "succeeded", "failed" };
			for (size_t k = 0; k < TFJOB_ARRAY_LEN(counts); k++) {
				json_t *n = json_object_get(v, counts[k]);
				if (n && !json_is_integer(n) && !json_is_null(n))
					return tfjob__fail_field(err, TFJOB_ESCHEMA, "status.replicaStatuses",
					                         "status.replicaStatuses[%s].%s: must be an integer", key, counts[k]);
			}
		}
	}
	static const char *const times[] = { "startTime", "completionTime", "lastReconcileTime" };
	for (size_t k = 0; k < TFJOB_ARRAY_LEN(times); k++) {
		json_t *v = json_object_get(status, times[k]);
		int64_t t;
		if (v && !json_is_null(v) && (!json_is_string(v) || tfjob_time_parse(&t, json_string_value(v))))
			return tfjob__fail_field(err, TFJOB_ESCHEMA, "status", "status.%s: must be an RFC 3339 time", times[k]);
	}
	return 0;
}
