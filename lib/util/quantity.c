/*
 * Kubernetes resource quantities: parse, add, canonical format.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "util/common.h"
#include "util/quantity.h"

static tfjob__i128 abs128(tfjob__i128 v) { return v < 0 ? -v : v; }

/* 10^n for 0 <= n <= 38. */
static tfjob__i128 pow10_128(int n)
{
	tfjob__i128 p = 1;
	while (n-- > 0)
		p *= 10;
	return p;
}

/* The digits of a quantity (sign already read): 36 significant digits kept in mant, the rest
 * only rounds. Advances *s past them. */
struct qdigits {
	tfjob__i128 mant;
	int frac;             /* digits after the point kept in mant */
	int skipped;          /* integer digits dropped past the precision kept */
	bool nonzero_dropped; /* a non-zero digit was dropped: round away from zero */
};

static int read_digits(struct qdigits *d, const char **sp)
{
	const char *s = *sp;
	int digits = 0;
	bool seen_dot = false;
	memset(d, 0, sizeof(*d));
	for (; (*s >= '0' && *s <= '9') || *s == '.'; s++) {
		if (*s == '.') {
			if (seen_dot)
				return TFJOB_EINVAL;
			seen_dot = true;
			continue;
		}
		digits++;
		if (d->mant >= pow10_128(36)) {
			d->nonzero_dropped |= *s != '0';
			if (!seen_dot)
				d->skipped++;
			continue;
		}
		d->mant = d->mant * 10 + (*s - '0');
		if (seen_dot)
			d->frac++;
	}
	*sp = s;
	return digits ? 0 : TFJOB_EINVAL;
}

/* A decimal exponent "e3", "E-2" (s at the 'e'): *exp10 moves by it. */
static int read_exponent(int *exp10, const char *s)
{
	const char *e = s + 1;
	bool eneg = false;
	if (*e == '+' || *e == '-')
		eneg = *e++ == '-';
	if (!(*e >= '0' && *e <= '9'))
		return TFJOB_EINVAL;
	int ev = 0;
	for (; *e >= '0' && *e <= '9'; e++) {
		if (ev > 1000)
			return TFJOB_ELIMIT;
		ev = ev * 10 + (*e - '0');
	}
	if (*e)
		return TFJOB_EINVAL;
	*exp10 += eneg ? -ev : ev;
	return 0;
}

/* The suffix s: an exponent or one of Kubernetes' SI and binary suffixes. */
static int read_suffix(int *exp10, int *exp2, tfjob__qformat *format, const char *s)
{
	static const struct { const char *suffix; int exp10, exp2; tfjob__qformat f; } suffixes[] = {
		{ "Ki", 0, 10, TFJOB__QF_BINARY_SI }, { "Mi", 0, 20, TFJOB__QF_BINARY_SI }, { "Gi", 0, 30, TFJOB__QF_BINARY_SI },
		{ "Ti", 0, 40, TFJOB__QF_BINARY_SI }, { "Pi", 0, 50, TFJOB__QF_BINARY_SI }, { "Ei", 0, 60, TFJOB__QF_BINARY_SI },
		{ "n", -9, 0, TFJOB__QF_DECIMAL_SI }, { "u", -6, 0, TFJOB__QF_DECIMAL_SI }, { "m", -3, 0, TFJOB__QF_DECIMAL_SI },
		{ "", 0, 0, TFJOB__QF_DECIMAL_SI },   { "k", 3, 0, TFJOB__QF_DECIMAL_SI },  { "M", 6, 0, TFJOB__QF_DECIMAL_SI },
		{ "G", 9, 0, TFJOB__QF_DECIMAL_SI },  { "T", 12, 0, TFJOB__QF_DECIMAL_SI }, { "P", 15, 0, TFJOB__QF_DECIMAL_SI },
		{ "E", 18, 0, TFJOB__QF_DECIMAL_SI },
	};
	*exp2 = 0;
	if ((*s == 'e' || *s == 'E') && (s[1] == '+' || s[1] == '-' || (s[1] >= '0' && s[1] <= '9'))) {
		*format = TFJOB__QF_DECIMAL_EXPONENT;
		return read_exponent(exp10, s);
	}
	for (size_t i = 0; i < TFJOB_ARRAY_LEN(suffixes); i++)
		if (!strcmp(s, suffixes[i].suffix)) {
			*exp10 += suffixes[i].exp10;
			*exp2 = suffixes[i].exp2;
			*format = suffixes[i].f;
			return 0;
		}
	return TFJOB_EINVAL;
}

/* nanos = mant * 10^e * 2^exp2, rounded away from zero when inexact; ELIMIT past the maximum. */
static int scale_to_nanos(tfjob__i128 *out, tfjob__i128 v, int e, int exp2, bool inexact)
{
	if (v == 0) {
		*out = 0;
		return 0;
	}
	for (int i = 0; i < exp2; i++) {
		if (v > TFJOB__QUANTITY_MAX_NANOS)
			return TFJOB_ELIMIT;
		v *= 2;
	}
	for (int i = 0; i < e; i++) {
		if (v > TFJOB__QUANTITY_MAX_NANOS)
			return TFJOB_ELIMIT;
		v *= 10;
	}
	if (e < -38) {
		v = 0;
		inexact = true;
	} else if (e < 0) {
		tfjob__i128 p = pow10_128(-e);
		inexact |= v % p != 0;
		v /= p;
	}
	if (inexact)
		v += 1;
	if (v > TFJOB__QUANTITY_MAX_NANOS)
		return TFJOB_ELIMIT;
	*out = v;
	return 0;
}

int tfjob__quantity_parse(tfjob__quantity *out, const char *text)
{
	if (!text)
		return TFJOB_EINVAL;
	const char *s = text;
	bool neg = false;
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	struct qdigits d;
	int rc = read_digits(&d, &s);
	int exp10 = -d.frac + d.skipped, exp2 = 0;
	tfjob__qformat format = TFJOB__QF_DECIMAL_SI;
	if (!rc)
		rc = read_suffix(&exp10, &exp2, &format, s);
	tfjob__i128 v = 0;
	if (!rc)
		rc = scale_to_nanos(&v, d.mant, exp10 + 9, exp2, d.nonzero_dropped);
	if (rc)
		return rc;
	out->nanos = neg ? -v : v;
	out->format = format;
	return 0;
}

int tfjob__quantity_add(tfjob__quantity *acc, const tfjob__quantity *q, int64_t times)
{
	if (times < 0 || times > 1000000000)
		return TFJOB_ELIMIT;
	tfjob__i128 add = q->nanos;
	if (abs128(add) > TFJOB__QUANTITY_MAX_NANOS / (times ? times : 1))
		return TFJOB_ELIMIT;
	add *= times;
	tfjob__i128 sum = acc->nanos + add;
	if (abs128(sum) > TFJOB__QUANTITY_MAX_NANOS)
		return TFJOB_ELIMIT;
	acc->nanos = sum;
	return 0;
}

/* Decimal digits of a non-negative value. */
static void u128_to_str(tfjob__i128 v, char *buf, size_t size)
{
	char tmp[48];
	size_t n = 0;
	do {
		tmp[n++] = (char)('0' + (int)(v % 10));
		v /= 10;
	} while (v > 0 && n < sizeof(tmp));
	size_t i = 0;
	for (; i < n && i + 1 < size; i++)
		buf[i] = tmp[n - 1 - i];
	buf[i] = '\0';
}

char *tfjob__quantity_format(const tfjob__quantity *q, char *buf, size_t size)
{
	tfjob__i128 v = abs128(q->nanos);
	const char *sign = q->nanos < 0 ? "-" : "";
	char num[48];
	if (v == 0) {
		snprintf(buf, size, "0");
		return buf;
	}
	tfjob__i128 nano = 1000000000;
	if (q->format == TFJOB__QF_BINARY_SI && v % nano == 0 && v / nano >= 1024) {
		static const char *const bin[] = { "", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei" };
		tfjob__i128 units = v / nano;
		int k = 0;
		while (k < 6 && units % 1024 == 0) {
			units /= 1024;
			k++;
		}
		u128_to_str(units, num, sizeof(num));
		snprintf(buf, size, "%s%s%s", sign, num, bin[k]);
		return buf;
	}
	/* decimal: strip factors of ten, then bring the exponent down to a multiple of three */
	int exp = -9;
	while (v % 10 == 0) {
		v /= 10;
		exp++;
	}
	while (((exp % 3) + 3) % 3 != 0) {
		v *= 10;
		exp--;
	}
	if (q->format == TFJOB__QF_DECIMAL_EXPONENT) {
		u128_to_str(v, num, sizeof(num));
		if (exp == 0)
			snprintf(buf, size, "%s%s", sign, num);
		else
			snprintf(buf, size, "%s%se%d", sign, num, exp);
		return buf;
	}
	while (exp > 18) {
		v *= 1000;
		exp -= 3;
	}
	static const char *const dec[] = { "n", "u", "m", "", "k", "M", "G", "T", "P", "E" };
	u128_to_str(v, num, sizeof(num));
	snprintf(buf, size, "%s%s%s", sign, num, dec[(exp + 9) / 3]);
	return buf;
}
