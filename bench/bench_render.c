/*
 * bench_render: time to render every child (Pods and Services, tfjob_render_all) of a job with
 * N workers and 1 PS, against a baseline of writing the same number of bytes (memcpy into a new
 * buffer, and fwrite to /dev/null); plus TF_CONFIG of one replica of a 1,000-worker job.
 * Medians of repeated runs. Then tfjob_render_all_write() of 1,000 / 3,000 / 10,000 workers to
 * /dev/null, each in a child process: its time and peak RSS (what tfjobctl render needs).
 * Usage: bench_render [REPEATS [MAX_WORKERS [MAX_STREAMED_WORKERS]]]
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tfjob/tfjob.h>

#include "bench_time.h"

static tfjob_job *make_job(int workers)
{
	char text[2048];
	snprintf(text, sizeof(text),
	         "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"bench\",\"namespace\":"
	         "\"kubeflow\",\"uid\":\"6a3f2d4e-1111-2222-3333-444455556666\"},\"spec\":{\"tfReplicaSpecs\":{"
	         "\"PS\":{\"replicas\":1,\"restartPolicy\":\"OnFailure\",\"template\":{\"spec\":{\"containers\":[{\"name\":"
	         "\"tensorflow\",\"image\":\"kubeflow/tf-mnist-with-summaries:latest\",\"command\":[\"python\","
	         "\"/var/tf_mnist/mnist_with_summaries.py\"]}]}}},"
	         "\"Worker\":{\"replicas\":%d,\"restartPolicy\":\"OnFailure\",\"template\":{\"spec\":{\"containers\":[{"
	         "\"name\":\"tensorflow\",\"image\":\"kubeflow/tf-mnist-with-summaries:latest\",\"command\":[\"python\","
	         "\"/var/tf_mnist/mnist_with_summaries.py\"],\"resources\":{\"limits\":{\"cpu\":\"1\"}}}]}}}}}}",
	         workers);
	tfjob_job *job = NULL;
	tfjob_error *err = NULL;
	if (tfjob_job_parse(&job, text, strlen(text), NULL, &err) || tfjob_job_apply_defaults(job, NULL, &err)) {
		fprintf(stderr, "bench_render: %s\n", tfjob_error_message(err));
		exit(1);
	}
	return job;
}

/* Baselines: copy `bytes` into a fresh buffer; fwrite them to /dev/null in 64 KiB pieces. */
static double baseline_memcpy(const char *src, size_t bytes)
{
	double t0 = now_ns();
	char *dst = malloc(bytes + 1);
	if (!dst)
		exit(1);
	memcpy(dst, src, bytes);
	dst[bytes] = '\0';
	volatile char sink = dst[bytes / 2];
	(void)sink;
	free(dst);
	return now_ns() - t0;
}

static double baseline_fwrite(FILE *null, const char *src, size_t bytes)
{
	double t0 = now_ns();
	for (size_t off = 0; off < bytes; off += 65536) {
		size_t n = bytes - off < 65536 ? bytes - off : 65536;
		fwrite(src + off, 1, n, null);
	}
	fflush(null);
	return now_ns() - t0;
}

typedef struct counted_file {
	FILE *f;
	size_t bytes;
} counted_file;

static int write_counted(const char *data, size_t len, void *payload)
{
	counted_file *c = payload;
	c->bytes += len;
	return fwrite(data, 1, len, c->f) != len;
}

typedef struct streamed_arg {
	int workers;
	FILE *null;
} streamed_arg;

/* (child process) render a job to /dev/null: CPU ms and bytes written. */
static void render_streamed(void *arg, double out[2])
{
	streamed_arg *a = arg;
	tfjob_job *job = make_job(a->workers);
	tfjob_error *err = NULL;
	counted_file f = { a->null, 0 };
	double t0 = now_ns();
	if (tfjob_render_all_write(job, NULL, TFJOB_JSON_COMPACT, write_counted, &f, &err))
		_exit(1);
	fflush(a->null);
	out[0] = (now_ns() - t0) / 1e6;
	out[1] = (double)f.bytes;
}

static void streamed_rows(int repeats, int max_workers, FILE *null)
{
	static const int sizes[] = { 1000, 3000, 10000 };
	printf("\ntfjob_render_all_write() to /dev/null (what tfjobctl render does), one child process per run:\n"
	       "CPU ms (median, min-max) and peak RSS of the process (median)\n\n");
	printf("%8s %6s %14s %12s %21s %12s %14s\n", "workers", "runs", "bytes", "ms", "ms min-max", "peak RSS MB",
	       "RSS / output");
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]) && sizes[s] <= max_workers; s++) {
		int n = sizes[s], runs = n >= 10000 ? 1 : (n >= 3000 ? (repeats < 3 ? repeats : 3) : repeats);
		double *ms = calloc((size_t)runs, sizeof(double)), *rss = calloc((size_t)runs, sizeof(double));
		size_t bytes = 0;
		for (int r = 0; r < runs; r++) {
			long kb = 0;
			streamed_arg arg = { n, null };
			double got[2];
			if (bench_in_child(render_streamed, &arg, got, &kb)) {
				fprintf(stderr, "bench_render: streamed render of %d workers failed\n", n);
				exit(1);
			}
			ms[r] = got[0];
			bytes = (size_t)got[1];
			rss[r] = (double)kb / 1024;
		}
		double lo = ms[0], hi = ms[0];
		for (int r = 1; r < runs; r++) {
			lo = ms[r] < lo ? ms[r] : lo;
			hi = ms[r] > hi ? ms[r] : hi;
		}
		double mr = median(rss, runs);
		char spread[48];
		snprintf(spread, sizeof spread, "%.0f-%.0f", lo, hi);
		printf("%8d %6d %14zu %12.0f %21s %12.1f %13.4f%%\n", n, runs, bytes, median(ms, runs), spread, mr,
		       100.0 * mr * 1024 * 1024 / (double)(bytes ? bytes : 1));
		free(ms);
		free(rss);
	}
}

int main(int argc, char **argv)
{
	int repeats = argc > 1 ? atoi(argv[1]) : 11;
	if (repeats < 1)
		repeats = 1;
	int max_workers = argc > 2 ? atoi(argv[2]) : 5000;
	static const int sizes[] = { 1, 10, 100, 1000, 5000 };
	FILE *null = fopen("/dev/null", "wb");
	if (!null)
		return 1;
	printf("libtfjob %s: tfjob_render_all() of N workers + 1 PS (pods and services, compact JSON);\n"
	       "medians of thread CPU time\n\n",
	       tfjob_version());
	printf("%8s %6s %14s %12s %12s %10s %12s %12s %8s %8s\n", "workers", "runs", "bytes", "render ms", "ns/replica",
	       "MB/s", "memcpy ms", "fwrite ms", "x memcpy", "x fwrite");
	for (size_t s = 0; s < sizeof(sizes) / sizeof(sizes[0]); s++) {
		int n = sizes[s];
		if (n > max_workers)
			break;
		int runs = n >= 5000 ? (repeats < 5 ? repeats : 5) : repeats;
		tfjob_job *job = make_job(n);
		double *t = calloc((size_t)runs, sizeof(double)), *tm = calloc((size_t)runs, sizeof(double)),
		       *tw = calloc((size_t)runs, sizeof(double));
		size_t bytes = 0;
		for (int r = 0; r < runs; r++) {
			char *out = NULL;
			tfjob_error *err = NULL;
			double t0 = now_ns();
			if (tfjob_render_all(&out, job, NULL, TFJOB_JSON_COMPACT, &err)) {
				fprintf(stderr, "bench_render: %s\n", tfjob_error_message(err));
				return 1;
			}
			t[r] = now_ns() - t0;
			bytes = strlen(out);
			tm[r] = baseline_memcpy(out, bytes);
			tw[r] = baseline_fwrite(null, out, bytes);
			tfjob_free(out);
		}
		double mt = median(t, runs), mm = median(tm, runs), mw = median(tw, runs);
		printf("%8d %6d %14zu %12.3f %12.0f %10.1f %12.3f %12.3f %8.2f %8.2f\n", n, runs, bytes, mt / 1e6,
		       mt / (n + 1), (double)bytes / (mt / 1e9) / 1e6, mm / 1e6, mw / 1e6, mt / mm, mt / mw);
		free(t);
		free(tm);
		free(tw);
		tfjob_job_free(job);
	}

	/* TF_CONFIG of one replica of a 1,000-worker job */
	tfjob_job *job = make_job(1000);
	int runs = repeats * 20;
	double *t1 = calloc((size_t)runs, sizeof(double)), *t2 = calloc((size_t)runs, sizeof(double));
	tfjob_graph *g = NULL;
	if (tfjob_graph_new(&g, job, NULL, NULL))
		return 1;
	size_t len = 0;
	for (int r = 0; r < runs; r++) {
		char *out = NULL;
		double t0 = now_ns();
		tfjob_tf_config(&out, job, "Worker", 500, NULL, NULL);
		t1[r] = now_ns() - t0;
		len = strlen(out);
		tfjob_free(out);
		t0 = now_ns();
		tfjob_graph_tf_config(&out, g, 1, 500, NULL);
		t2[r] = now_ns() - t0;
		tfjob_free(out);
	}
	printf("\nTF_CONFIG of worker 500 of a 1,000-worker job (%zu bytes), %d runs, medians:\n", len, runs);
	printf("  tfjob_tf_config() (builds the graph):   %10.1f us\n", median(t1, runs) / 1e3);
	printf("  tfjob_graph_tf_config() (graph built):  %10.1f us\n", median(t2, runs) / 1e3);
	tfjob_graph_free(g);
	tfjob_job_free(job);
	free(t1);
	free(t2);
	fflush(stdout);
	streamed_rows(repeats, argc > 3 ? atoi(argv[3]) : 10000, null);
	fclose(null);
	return 0;
}
