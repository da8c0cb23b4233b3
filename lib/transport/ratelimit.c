/*
 * Client-side rate limit: a token bucket (QPS, burst) as client-go's flowcontrol uses.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "transport/kube_internal.h"

void tfjob__ratelimit_init(struct tfjob__ratelimit *rl, double qps, int burst)
{
	pthread_mutex_init(&rl->mu, NULL);
	rl->qps = qps;
	rl->burst = burst > 0 ? burst : 1;
	rl->tokens = rl->burst;
	rl->last_ms = tfjob__monotonic_ms();
}

int64_t tfjob__ratelimit_reserve(struct tfjob__ratelimit *rl)
{
	if (rl->qps <= 0)
		return 0;
	pthread_mutex_lock(&rl->mu);
	int64_t now = tfjob__monotonic_ms();
	rl->tokens += (double)(now - rl->last_ms) * rl->qps / 1000.0;
	if (rl->tokens > rl->burst)
		rl->tokens = rl->burst;
	rl->last_ms = now;
	rl->tokens -= 1.0;
	int64_t wait = rl->tokens < 0 ? (int64_t)(-rl->tokens * 1000.0 / rl->qps + 0.5) : 0;
	pthread_mutex_unlock(&rl->mu);
	return wait;
}

void tfjob__ratelimit_destroy(struct tfjob__ratelimit *rl) { pthread_mutex_destroy(&rl->mu); }
