/*
 * The bottom of the local backend: the clock and the Events every part of it reports with
 * (the engine, GPU assignment, the Pod spec checks, process start), and the durations its
 * reports print. Calls only down, never into the engine.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "local/internal.h"

int64_t tfjob__local_wall(void) { return (int64_t)time(NULL); }

void tfjob__local_event(tfjob_local *l, const char *pod, const char *type, const char *reason, const char *fmt, ...)
{
	if (!l->on_event)
		return;
	va_list ap;
	va_start(ap, fmt);
	char *msg = tfjob__strdup_vprintf(fmt, ap);
	va_end(ap);
	l->on_event(pod, type, reason, msg ? msg : "(out of memory)", l->event_payload);
	free(msg);
}

char *tfjob__local_duration(char *buf, size_t size, int64_t ms)
{
	int64_t s = (ms + 999) / 1000;
	if (s >= 3600)
		snprintf(buf, size, "%lldh%lldm%llds", (long long)(s / 3600), (long long)(s % 3600 / 60), (long long)(s % 60));
	else if (s >= 60)
		snprintf(buf, size, "%lldm%llds", (long long)(s / 60), (long long)(s % 60));
	else
		snprintf(buf, size, "%llds", (long long)s);
	return buf;
}
