/*
 * Deadlines for pthread_cond_timedwait, shared by the threaded layers (transport, controller).
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_INTERNAL_TIMEDWAIT_H
#define TFJOB_INTERNAL_TIMEDWAIT_H

#include <stdint.h>
#include <time.h>

/*
 * The absolute time ms milliseconds (>= 0) from now on `clock`: the clock the condition variable
 * waits on (CLOCK_REALTIME unless its attributes chose CLOCK_MONOTONIC).
 */
static inline struct timespec tfjob__time_after_ms(clockid_t clock, int64_t ms)
{
	struct timespec ts;
	clock_gettime(clock, &ts);
	ts.tv_sec += (time_t)(ms / 1000);
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

#endif
