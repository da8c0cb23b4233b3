/*
 * cleanPodPolicy and ttlSecondsAfterFinished.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <string.h>

#include "plan/planner.h"

bool tfjob__cleanup_deletes(const char *policy, const char *phase, bool finished)
{
	if (!finished)
		return true; /* suspension deletes every pod */
	policy = policy ? policy : "";
	if (!strcmp(policy, "None"))
		return false;
	if (!strcmp(policy, "Running"))
		return phase && (!strcmp(phase, "Running") || !strcmp(phase, "Pending"));
	return true;
}

tfjob__ttl_verdict tfjob__ttl_check(int64_t *remaining, bool has_ttl, int64_t ttl, bool has_completion,
                                    int64_t completion, int64_t now)
{
	if (!has_ttl)
		return TFJOB__TTL_NONE;
	if (!has_completion)
		return TFJOB__TTL_NO_COMPLETION;
	int64_t expire = completion + ttl;
	if (now >= expire)
		return TFJOB__TTL_EXPIRED;
	*remaining = expire - now;
	return TFJOB__TTL_WAIT;
}
