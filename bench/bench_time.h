/*
 * Timing helpers shared by the benchmark programs: thread CPU time and medians.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_BENCH_TIME_H
#define TFJOB_BENCH_TIME_H

#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

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

/*
 * Run fn(arg, out) in a child process: out[0..1] are what fn reports (e.g. ms and bytes), *rss_kb
 * the child's peak RSS (its whole life, so a measurement of one operation on a fresh heap).
 * 0, or -1 when the child failed.
 */
static inline int bench_in_child(void (*fn)(void *arg, double out[2]), void *arg, double out[2], long *rss_kb)
{
	int fds[2];
	if (pipe(fds))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(fds[0]);
		double r[2] = { 0, 0 };
		fn(arg, r);
		_exit(write(fds[1], r, sizeof r) == sizeof r ? 0 : 1);
	}
	close(fds[1]);
	ssize_t got = read(fds[0], out, 2 * sizeof(double));
	close(fds[0]);
	int status = 0;
	struct rusage ru;
	if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || status != 0 || got != 2 * (ssize_t)sizeof(double))
		return -1;
	*rss_kb = ru.ru_maxrss;
	return 0;
}

#endif
