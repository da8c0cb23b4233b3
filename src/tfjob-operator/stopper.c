/*
 * A background thread's stop signal (stopper.h).
 * SPDX-License-Identifier: Apache-2.0
 */
#include "stopper.h"

#include "timedwait.h"

void op_stopper_init(op_stopper *s)
{
	pthread_mutex_init(&s->mu, NULL);
	tfjob__cond_init_monotonic(&s->cv);
	s->stopping = 0;
}

int op_stopper_wait_ms(op_stopper *s, long long ms)
{
	struct timespec until = tfjob__deadline_in_ms(ms > 0 ? ms : 0);
	pthread_mutex_lock(&s->mu);
	while (!s->stopping && pthread_cond_timedwait(&s->cv, &s->mu, &until) == 0)
		;
	int stop = s->stopping;
	pthread_mutex_unlock(&s->mu);
	return stop;
}

void op_stopper_stop(op_stopper *s)
{
	pthread_mutex_lock(&s->mu);
	s->stopping = 1;
	pthread_cond_broadcast(&s->cv);
	pthread_mutex_unlock(&s->mu);
}

void op_stopper_destroy(op_stopper *s)
{
	pthread_cond_destroy(&s->cv);
	pthread_mutex_destroy(&s->mu);
}
