/*
 * The TFJob condition state machine, RFC 3339 times and status shape checks.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "core/job.h"
#include "plan/planner.h"

/* ---- time ---- */

/* Days since 1970-01-01 of a civil date (proleptic Gregorian). */
static int64_t days_from_civil(int64_t y, unsigned m, unsigned d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	unsigned yoe = (unsigned)(y - era * 400);
	unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
	unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + (int64_t)doe - 719468;
}

static void civil_from_days(int64_t z, int64_t *y, unsigned *m, unsigned *d)
{
	z += 719468;
	int64_t era = (z >= 0 ? z : z - 146096) / 146097;
	unsigned doe = (unsigned)(z - era * 146097);
	unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	int64_t yy = (int64_t)yoe + era * 400;
	unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	unsigned mp = (5 * doy + 2) / 153;
	*d = doy - (153 * mp + 2) / 5 + 1;
	*m = mp < 10 ? mp + 3 : mp - 9;
	*y = yy + (*m <= 2);
}

char *tfjob_time_format(char *buf, size_t size, int64_t t)
{
	if (!buf || size == 0)
		return buf;
	int64_t days = t / 86400, rem = t % 86400;
	if (rem < 0) {
		rem += 86400;
		days--;
	}
	int64_t y;
	unsigned m, d;
	civil_from_days(days, &y, &m, &d);
	snprintf(buf, size, "%04lld-%02u-%02uT%02u:%02u:%02uZ", (long long)y, m, d, (unsigned)(rem / 3600),
	         (unsigned)(rem / 60 % 60), (unsigned)(rem % 60));
	return buf;
}

static bool digits(const char *s, int n, int *out)
{
	int v = 0;
	for (int i = 0; i < n; i++) {
		if (!isdigit((unsigned char)s[i]))
			return false;
		v = v * 10 + (s[i] - '0');
	}
	*out = v;
	return true;
}

int tfjob_time_parse(int64_t *out, const char *s)
{
	if (!out || !s)
		return TFJOB_EINVAL;
	int Y, M, D, h, mi, sec;
	if (strlen(s) < 20 || !digits(s, 4, &Y) || s[4] != '-' || !digits(s + 5, 2, &M) || s[7] != '-' ||
	    !digits(s + 8, 2, &D) || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || !digits(s + 11, 2, &h) ||
	    s[13] != ':' || !digits(s + 14, 2, &mi) || s[16] != ':' || !digits(s + 17, 2, &sec))
		return TFJOB_EINVAL;
	static const int mdays[] = { 31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	if (M < 1 || M > 12 || D < 1 || D > mdays[M - 1] || h > 23 || mi > 59 || sec > 60)
		return TFJOB_EINVAL;
	bool leap = (Y % 4 == 0 && Y % 100 != 0) || Y % 400 == 0;
	if (M == 2 && D == 29 && !leap)
		return TFJOB_EINVAL;
	const char *p = s + 19;
	if (*p == '.') {
		p++;
		if (!isdigit((unsigned char)*p))
			return TFJOB_EINVAL;
		while (isdigit((unsigned char)*p))
			p++;
	}
	int64_t offset = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int oh, om;
		if (!digits(p + 1, 2, &oh) || p[3] != ':' || !digits(p + 4, 2, &om) || oh > 23 || om > 59)
			return TFJOB_EINVAL;
		offset = (int64_t)(oh * 3600 + om * 60) * (*p == '-' ? -1 : 1);
		p += 6;
	} else {
		return TFJOB_EINVAL;
	}
	if (*p)
		return TFJOB_EINVAL;
	*out = days_from_civil(Y, (unsigned)M, (unsigned)D) * 86400 + h * 3600 + mi * 60 + sec - offset;
	return 0;
}

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
