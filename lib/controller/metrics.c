/*
 * Controller metrics: counters, the reconcile latency histogram and the Prometheus text format.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "controller/parts.h"

static const double bounds[TFJOB_CONTROLLER_LATENCY_BUCKETS] = {
	0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, HUGE_VAL
};

double tfjob_controller_latency_bucket_bound(size_t i)
{
	return i < TFJOB_CONTROLLER_LATENCY_BUCKETS ? bounds[i] : HUGE_VAL;
}

void tfjob__metrics_observe_latency(tfjob__metrics *m, double seconds)
{
	size_t i = 0;
	while (i < TFJOB_CONTROLLER_LATENCY_BUCKETS - 1 && seconds > bounds[i])
		i++;
	atomic_fetch_add(&m->latency[i], 1);
	atomic_fetch_add(&m->latency_sum_us, (uint64_t)(seconds * 1e6));
}

const char *tfjob_api_verb_name(tfjob_api_verb verb)
{
	static const char *const names[TFJOB_API_VERB_COUNT] = {
		"get", "list", "watch", "create", "update", "update_status", "patch", "delete", "create_event"
	};
	return (unsigned)verb < TFJOB_API_VERB_COUNT ? names[verb] : "unknown";
}
