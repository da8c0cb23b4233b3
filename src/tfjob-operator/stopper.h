/*
 * A background thread's stop signal: the thread sleeps in op_stopper_wait_ms() and wakes at once
 * when another thread calls op_stopper_stop().
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_OPERATOR_STOPPER_H
#define TFJOB_OPERATOR_STOPPER_H

#include <pthread.h>

typedef struct op_stopper {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	int stopping;
} op_stopper;

void op_stopper_init(op_stopper *s);
/* Sleep up to ms milliseconds (of the monotonic clock); 1 when stopping (at once if already), else 0. */
int op_stopper_wait_ms(op_stopper *s, long long ms);
/* Ask to stop and wake the sleeper. */
void op_stopper_stop(op_stopper *s);
void op_stopper_destroy(op_stopper *s);

#endif
