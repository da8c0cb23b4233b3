/*
 * RFC 3339 times as Kubernetes writes them (metav1.Time): the one parser and formatter of the
 * library (tfjob_time_parse(), tfjob_time_format(); plan.h), for statuses, events, credentials'
 * expiry and tfjobctl's ages. Pure arithmetic: no time zone database, no locale, years 0000-9999.
 * Also the library's one reading of the monotonic clock (common.h).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "util/common.h"

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

int64_t tfjob__monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t tfjob__monotonic_ms(void) { return tfjob__monotonic_ns() / 1000000; }
