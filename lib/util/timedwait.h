/*
 * Timed waits on condition variables, shared by the threaded layers (transport, controller):
 * every condition variable that is waited on with a timeout is made by
 * tfjob__cond_init_monotonic() and waited on until a tfjob__deadline_in_ms(), so the waits count
 * in CLOCK_MONOTONIC and a step of the wall clock neither stretches nor cuts them.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_INTERNAL_TIMEDWAIT_H
#define TFJOB_INTERNAL_TIMEDWAIT_H

#include <pthread.h>
#include <stdint.h>
#include <time.h>

/* pthread_cond_init() with the monotonic clock for its timed waits; 0 or an errno value. */
static inline int tfjob__cond_init_monotonic(pthread_cond_t *cond)
{
	pthread_condattr_t attr;
	int rc = pthread_condattr_init(&attr);
	if (rc)
		return rc;
	rc = pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
	if (!rc)
		rc = pthread_cond_init(cond, &attr);
	pthread_condattr_destroy(&attr);
	return rc;
}

/* The CLOCK_MONOTONIC time ms milliseconds (>= 0) from now: a deadline for such a wait. */
static inline struct timespec tfjob__deadline_in_ms(int64_t ms)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

#endif
