/*
 * A background thread's stop signal: the thread sleeps in op_stopper_wait_ms() (or waits for a
 * file descriptor of its own too, op_stopper_poll()) and wakes at once when another thread calls
 * op_stopper_stop(). It is an eventfd that becomes readable on the stop and stays so; the waits
 * are poll() timeouts, which count in the monotonic clock (a step of the wall clock neither
 * stretches nor cuts them).
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_OPERATOR_STOPPER_H
#define TFJOB_OPERATOR_STOPPER_H

#include <poll.h>
#include <stdint.h>

/* The monotonic clock in milliseconds, the one the waits count in. */
int64_t op_monotonic_ms(void);

typedef struct op_stopper {
	int fd; /* the eventfd; -1 when op_stopper_init() failed */
} op_stopper;

/* 0, or -1 (errno set) when no eventfd could be made; op_stopper_destroy() is safe either way. */
int op_stopper_init(op_stopper *s);
/* Sleep up to ms milliseconds; 1 when stopping (at once if already), else 0. */
int op_stopper_wait_ms(op_stopper *s, long long ms);
/* Wait up to ms milliseconds for *extra (its revents filled) or the stop; 1 when stopping, else 0. */
int op_stopper_poll(op_stopper *s, struct pollfd *extra, long long ms);
/* Ask to stop and wake every waiter; any thread, any number of times. */
void op_stopper_stop(op_stopper *s);
void op_stopper_destroy(op_stopper *s);

#endif
