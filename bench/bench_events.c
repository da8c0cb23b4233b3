/*
 * The controller's Event recorder (lib/controller/events.c) alone: CPU per Event it writes, with
 * a backend that answers at once and keeps nothing, so that what is measured is the recorder's
 * own work (correlating, building the request body) and not a backend's. Two workloads: every
 * Event about an object of its own (each one a create), and every Event posted twice (a create,
 * then a count PATCH). Prints the median of ROUNDS runs of EVENTS Events, in process CPU time.
 * Usage: bench_events [EVENTS [ROUNDS [create|twice]]] (the last: that workload only, e.g. under
 * valgrind --tool=callgrind for instructions per Event). Links the internal archive (the
 * recorder is private).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_time.h"
#include "controller/internal.h"
#include "tfjob/sys/transport.h"

#define BATCH 500 /* below the recorder's queue bound (1,000): nothing is dropped */

static uint64_t base_written; /* the counters when a run starts */

static int64_t fixed_clock_s(void *p)
{
	(void)p;
	return 1700000000;
}

static int answer(char **out, const char *name)
{
	*out = tfjob__strdup_printf("{\"metadata\":{\"name\":\"%s\"}}", name);
	return *out ? 0 : TFJOB_ENOMEM;
}

static int null_create(void *data, char **out, const tfjob_resource *res, const char *ns, const char *object_json,
                       tfjob_error **err)
{
	(void)data, (void)res, (void)ns, (void)object_json, (void)err;
	return answer(out, "job.17a0c0ffee");
}

static int null_patch(void *data, char **out, const tfjob_resource *res, const char *ns, const char *name,
                      const char *subresource, const char *patch_json, tfjob_error **err)
{
	(void)data, (void)res, (void)ns, (void)subresource, (void)patch_json, (void)err;
	return answer(out, name);
}

static void null_free(void *data) { (void)data; }

static double process_cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static uint64_t written(const tfjob_controller *c)
{
	return c->m.events_created + c->m.events_patched + c->m.events_failed + c->m.events_dropped +
	       c->m.events_filtered;
}

/* Poll rather than tfjob__recorder_wait_empty(): its wake-up after every Event would cost more
   than the Event. */
static void wait_written(const tfjob_controller *c, uint64_t n)
{
	struct timespec ms = { 0, 1000000L };
	while (written(c) - base_written < n)
		nanosleep(&ms, NULL);
}

/* CPU ns per Event posted: events Events, each posted `times` times in a row. */
static double run(tfjob_controller *c, int events, int times, int round)
{
	char name[64], uid[64], message[128];
	base_written = written(c);
	double t0 = process_cpu_ns();
	for (int i = 0; i < events;) {
		tfjob__event_batch b = { NULL, NULL };
		for (int k = 0; k < BATCH && i < events; k++, i++) {
			/* a new object each round: the correlator has not seen it */
			snprintf(name, sizeof(name), "job-%d-%d", round, i);
			snprintf(uid, sizeof(uid), "0b7c4a2e-%08d-4f1e-9c3d-%012d", round, i);
			snprintf(message, sizeof(message), "Created pod: %s-worker-0", name);
			tfjob__involved ref = { "TFJob", "kubeflow.org/v1", name, "default", uid, "12345" };
			for (int n = 0; n < times; n++)
				if (tfjob__event_batch_add(&b, &ref, "Normal", "SuccessfulCreatePod", message))
					abort();
		}
		tfjob__recorder_post(c->events, &b);
		wait_written(c, (uint64_t)(i * times));
	}
	return (process_cpu_ns() - t0) / events / times;
}

int main(int argc, char **argv)
{
	int events = argc > 1 ? atoi(argv[1]) : 20000;
	int rounds = argc > 2 ? atoi(argv[2]) : 7;
	const char *only = argc > 3 ? argv[3] : "";
	tfjob_transport_backend be = TFJOB_TRANSPORT_BACKEND_INIT;
	be.free = null_free;
	be.create = null_create;
	be.patch = null_patch;
	tfjob_transport *t = NULL;
	tfjob_controller *c = NULL;
	tfjob_controller_options o = TFJOB_CONTROLLER_OPTIONS_INIT;
	o.clock = fixed_clock_s;
	if (events < 1 || rounds < 1 || tfjob_transport_new(&t, &be, NULL) || tfjob_controller_new(&c, t, &o, NULL) ||
	    tfjob__recorder_start(c->events)) {
		fprintf(stderr, "usage: bench_events [EVENTS [ROUNDS [create|twice]]]\n");
		return 2;
	}
	double *create = calloc((size_t)rounds, sizeof(double)), *twice = calloc((size_t)rounds, sizeof(double));
	for (int r = 0; r < rounds; r++) {
		create[r] = strcmp(only, "twice") ? run(c, events, 1, 2 * r) : 0;
		twice[r] = strcmp(only, "create") ? run(c, events, 2, 2 * r + 1) : 0;
	}
	const tfjob__metrics *m = &c->m;
	printf("recorder, %d Events x %d rounds (median, process CPU):\n", events, rounds);
	printf("  each Event a create:            %8.0f ns per Event\n", median(create, rounds));
	printf("  each Event twice (create+PATCH): %8.0f ns per Event\n", median(twice, rounds));
	printf("  created %llu, patched %llu, failed %llu, dropped %llu, filtered %llu\n",
	       (unsigned long long)m->events_created, (unsigned long long)m->events_patched,
	       (unsigned long long)m->events_failed, (unsigned long long)m->events_dropped,
	       (unsigned long long)m->events_filtered);
	free(create);
	free(twice);
	tfjob_controller_free(c);
	tfjob_transport_free(t);
	return 0;
}
