/*
 * Timing helpers shared by the benchmark programs: thread CPU time and medians.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_BENCH_TIME_H
#define TFJOB_BENCH_TIME_H

#include <stdlib.h>
#include <time.h>

/* CPU time of this thread (user + system): stable on a shared machine, and it counts page faults. */
static inline double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static inline int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* Median of n values (sorts them in place). */
static inline double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

#endif
