/*
 * Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource.Quantity): parsing the
 * forms Kubernetes accepts, exact addition, and the canonical string form of Quantity.String().
 * Values are kept exactly in units of 10^-9 (finer input is rounded away from zero, as k8s does).
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_INTERNAL_QUANTITY_H
#define TFJOB_INTERNAL_QUANTITY_H

#include <stddef.h>
#include <stdint.h>

__extension__ typedef __int128 tfjob__i128;

typedef enum tfjob__qformat {
	TFJOB__QF_DECIMAL_SI = 0,       /* 1500m, 2k, 3M ... */
	TFJOB__QF_BINARY_SI = 1,        /* 1Ki, 5Gi ... */
	TFJOB__QF_DECIMAL_EXPONENT = 2  /* 1e3, 12e6 ... */
} tfjob__qformat;

typedef struct tfjob__quantity {
	tfjob__i128 nanos;     /* value * 10^9 */
	tfjob__qformat format; /* the suffix family of the text it was parsed from */
} tfjob__quantity;

/* Largest magnitude kept, in nanos (10^36, i.e. 10^27 units); beyond that TFJOB_ELIMIT. */
#define TFJOB__QUANTITY_MAX_NANOS ((tfjob__i128)1000000000000000000LL * (tfjob__i128)1000000000000000000LL)

/* Parse "128Mi", "0.5", "100m", "1e3", "+2Gi", "-1k" ... 0, TFJOB_EINVAL (syntax) or TFJOB_ELIMIT (too large). */
int tfjob__quantity_parse(tfjob__quantity *out, const char *text);

/* acc += q * times (acc keeps its format). 0 or TFJOB_ELIMIT. */
int tfjob__quantity_add(tfjob__quantity *acc, const tfjob__quantity *q, int64_t times);

/* Canonical text (as k8s Quantity.String()) into buf (at least 64 bytes). Returns buf. */
char *tfjob__quantity_format(const tfjob__quantity *q, char *buf, size_t size);

#endif
