/*
 * CPU per request of the Kubernetes transport against a live API server: rounds of N GETs of a
 * namespace and N Event creates (what the controller's recorder sends most), alternating, each
 * round timed with this process's CPU clock (user + system). Prints the median and range of the
 * CPU µs per request of each verb, and the wall µs. A benchmark, not a test.
 *
 *   KUBECONFIG=admin.kubeconfig bench_requests [-rounds R] [-n N]
 *
 * The server: tests/kube/harness.sh start DIR (then DIR/admin.kubeconfig). Events are created in
 * namespace "default" with generated names and left there.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tfjob/tfjob.h>

#include "bench_time.h"

static const tfjob_resource NAMESPACES = TFJOB_RESOURCE_NAMESPACES_INIT;
static const tfjob_resource EVENTS = { "", "v1", "events", 1 };

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double wall_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int one_request(tfjob_transport *t, int create, long serial)
{
	char *out = NULL, body[512];
	tfjob_error *err = NULL;
	int rc;
	if (create) {
		snprintf(body, sizeof(body),
		         "{\"apiVersion\":\"v1\",\"kind\":\"Event\",\"metadata\":{\"name\":\"bench.%ld.%ld\"},"
		         "\"involvedObject\":{\"kind\":\"Pod\",\"name\":\"bench\",\"namespace\":\"default\"},"
		         "\"reason\":\"Bench\",\"message\":\"one of bench_requests' events\",\"type\":\"Normal\"}",
		         (long)time(NULL), serial);
		rc = tfjob_transport_create(&out, t, &EVENTS, "default", body, &err);
	} else {
		rc = tfjob_transport_get(&out, t, &NAMESPACES, NULL, "default", &err);
	}
	if (rc)
		fprintf(stderr, "bench_requests: %s failed: %s\n", create ? "create" : "get", tfjob_error_message(err));
	tfjob_free(out);
	tfjob_error_free(err);
	return rc;
}

static void report(const char *verb, double *cpu_us, double *wall_us, int rounds)
{
	qsort(cpu_us, (size_t)rounds, sizeof(double), cmp_double);
	qsort(wall_us, (size_t)rounds, sizeof(double), cmp_double);
	printf("%-7s %6d %12.1f %15.1f-%.1f %12.1f\n", verb, rounds, cpu_us[rounds / 2], cpu_us[0], cpu_us[rounds - 1],
	       wall_us[rounds / 2]);
}

int main(int argc, char **argv)
{
	int rounds = 11, n = 200;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "-rounds"))
			rounds = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "-n"))
			n = atoi(argv[i + 1]);
	}
	if (rounds < 1 || rounds > 1000 || n < 1) {
		fprintf(stderr, "usage: bench_requests [-rounds R (1-1000)] [-n N]\n");
		return 2;
	}
	tfjob_kube_options o = TFJOB_KUBE_OPTIONS_INIT;
	o.qps = -1; /* no client-side limit: the cost of a request, not of waiting */
	tfjob_transport *t = NULL;
	tfjob_error *err = NULL;
	if (tfjob_kube_transport_new(&t, &o, &err)) {
		fprintf(stderr, "bench_requests: %s\n", tfjob_error_message(err));
		return 1;
	}
	double *cpu[2], *wall[2];
	for (int v = 0; v < 2; v++) {
		cpu[v] = calloc((size_t)rounds, sizeof(double));
		wall[v] = calloc((size_t)rounds, sizeof(double));
	}
	long serial = 0;
	if (one_request(t, 0, serial)) /* connect first: the handshake is not a request's cost */
		return 1;
	for (int r = 0; r < rounds; r++) {
		for (int k = 0; k < 2; k++) {
			int v = (r + k) % 2; /* alternate which verb goes first */
			double c0 = cpu_seconds(), w0 = wall_seconds();
			for (int i = 0; i < n; i++)
				if (one_request(t, v, ++serial))
					return 1;
			cpu[v][r] = (cpu_seconds() - c0) / n * 1e6;
			wall[v][r] = (wall_seconds() - w0) / n * 1e6;
		}
	}
	printf("%-7s %6s %12s %18s %12s\n", "verb", "rounds", "CPU us/req", "CPU us min-max", "wall us/req");
	report("get", cpu[0], wall[0], rounds);
	report("create", cpu[1], wall[1], rounds);
	tfjob_transport_free(t);
	for (int v = 0; v < 2; v++) {
		free(cpu[v]);
		free(wall[v]);
	}
	return 0;
}
