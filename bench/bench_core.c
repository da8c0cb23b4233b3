/*
 * bench_core: the pure C figures of libtfjob's hot paths, printed (never asserted).
 *
 *   bench_core [--runs R] [--min-ns NS] [--clock cpu|wall] [--compat C] [--json] [--ratio]
 *              [--profile N [--op pdv|parse|lib|libdoc|tree]] FILE[:TYPE:INDEX]...
 *
 * For each FILE it times, as the median over R runs of batches of at least NS nanoseconds
 * (clock_gettime; --clock cpu, the default, counts the process's CPU time, CLOCK_PROCESS_CPUTIME_ID,
 * which other processes on a busy machine do not inflate; --clock wall uses CLOCK_MONOTONIC):
 *   pdv   tfjob_job_parse + tfjob_job_apply_defaults + tfjob_job_validate (+ frees)
 *   parse tfjob_job_parse alone (+ free)
 *   lib   the third-party parser alone on the same bytes, the floor under parse: libyaml's event
 *         parser (all events, nothing built) for YAML, jansson's json_loadb (+ json_decref) for JSON
 *   libdoc for YAML, libyaml building its own tree (yaml_parser_load + yaml_document_delete)
 *   tree  (--ratio, --profile) the job's jansson tree copied and freed: the least a jansson tree costs
 * and, when the library has tfjob_tf_config (include/tfjob/graph.h) and FILE is suffixed with
 * :TYPE:INDEX, the TF_CONFIG of that replica of the defaulted job:
 *   tfcfg tfjob_tf_config (one call: builds the replica graph, then the string)
 *   tfcfg-graph tfjob_graph_tf_config on a graph built once
 * It also counts heap allocations and the peak of live heap bytes of one operation, by
 * interposing malloc/calloc/realloc/free in this executable (libtfjob.so, libyaml and jansson
 * resolve them here first; glibc's __libc_* functions do the work).
 *
 * With --ratio it prints, per FILE, the ratio pdv / lib (for YAML also pdv / libdoc and tree / lib) measured
 * interleaved: R rounds, each timing one batch of both in alternating order, so load on a shared
 * machine slows both alike; the median, quartiles and range of the per-round ratios.
 * With --profile N it only runs parse+default+validate (--op picks another operation; or, for
 * FILE:TYPE:INDEX, TF_CONFIG) N times per FILE, for valgrind --tool=callgrind (instruction counts
 * do not depend on load).
 * With --json each measurement is one JSON line:
 *   {"file":F,"op":"pdv","ns_median":N,"ns_min":N,"runs":R,"batch":B,"allocs":A,"peak_bytes":P}
 * SPDX-License-Identifier: Apache-2.0
 */
#include <malloc.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <jansson.h>
#include <yaml.h>

#include <tfjob/tfjob.h>

/* ---- allocation accounting (interposed) ---- */

/* Sanitizers bring their own allocator: no interposition then (the counts read 0). */
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BENCH_NO_INTERPOSE 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define BENCH_NO_INTERPOSE 1
#endif
#endif

static bool counting;
static size_t n_allocs;
static size_t live_bytes;
static size_t peak_bytes;

#ifndef BENCH_NO_INTERPOSE
extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t n, size_t size);
extern void *__libc_realloc(void *ptr, size_t size);
extern void __libc_free(void *ptr);

static void note_alloc(void *p)
{
	if (!counting || !p)
		return;
	n_allocs++;
	live_bytes += malloc_usable_size(p);
	if (live_bytes > peak_bytes)
		peak_bytes = live_bytes;
}

static void note_free(void *p)
{
	if (!counting || !p)
		return;
	size_t n = malloc_usable_size(p);
	live_bytes = live_bytes > n ? live_bytes - n : 0;
}

void *malloc(size_t size)
{
	void *p = __libc_malloc(size);
	note_alloc(p);
	return p;
}

void *calloc(size_t n, size_t size)
{
	void *p = __libc_calloc(n, size);
	note_alloc(p);
	return p;
}

void *realloc(void *ptr, size_t size)
{
	size_t old = ptr && counting ? malloc_usable_size(ptr) : 0;
	void *p = __libc_realloc(ptr, size);
	if (counting && (p || size == 0)) {
		live_bytes = live_bytes > old ? live_bytes - old : 0;
		note_alloc(p);
	}
	return p;
}

void free(void *ptr)
{
	note_free(ptr);
	__libc_free(ptr);
}
#endif /* BENCH_NO_INTERPOSE */

/* ---- benchmark plumbing ---- */

static clockid_t bench_clock = CLOCK_PROCESS_CPUTIME_ID;

static int64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(bench_clock, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return (x > y) - (x < y);
}

typedef int (*op_fn)(void *ctx);

struct result {
	double ns_median, ns_min;
	long batch;
	size_t allocs, peak;
};

static int runs = 51;
static int64_t min_batch_ns = 2000000; /* 2 ms */

/* Warm up and find a batch size whose run takes at least min_batch_ns; -1 when fn fails. */
static long calibrate(op_fn fn, void *ctx)
{
	long batch = 1;
	for (;;) {
		int64_t t0 = now_ns();
		for (long i = 0; i < batch; i++)
			if (fn(ctx))
				return -1;
		int64_t dt = now_ns() - t0;
		if (dt >= min_batch_ns || batch >= (1L << 24))
			return batch;
		batch *= 2;
	}
}

/* One batch: picoseconds per operation (for sub-ns resolution). */
static int64_t batch_ps(op_fn fn, void *ctx, long batch)
{
	int64_t t0 = now_ns();
	for (long i = 0; i < batch; i++)
		fn(ctx);
	return (now_ns() - t0) * 1000 / batch;
}

static int measure(struct result *res, op_fn fn, void *ctx)
{
	/* Allocation profile of one operation. */
	n_allocs = live_bytes = peak_bytes = 0;
	counting = true;
	int rc = fn(ctx);
	counting = false;
	if (rc)
		return rc;
	res->allocs = n_allocs;
	res->peak = peak_bytes;
	long batch = calibrate(fn, ctx);
	if (batch < 0)
		return -1;
	int64_t *per = calloc((size_t)runs, sizeof(*per));
	if (!per)
		return -1;
	for (int r = 0; r < runs; r++)
		per[r] = batch_ps(fn, ctx, batch);
	qsort(per, (size_t)runs, sizeof(*per), cmp_i64);
	res->ns_median = per[runs / 2] / 1000.0;
	res->ns_min = per[0] / 1000.0;
	res->batch = batch;
	free(per);
	return 0;
}

/* ---- operations ---- */

struct input {
	const char *path;
	char *data;
	size_t len;
	tfjob_compat compat;
	const char *type;
	int64_t index;
	tfjob_job *defaulted;
	json_t *tree; /* the parsed job as a jansson tree, for op_tree (made on first use) */
#ifdef TFJOB_CLUSTER_H
	tfjob_graph *graph;
	size_t type_pos;
#endif
};

static int op_parse(void *ctx)
{
	struct input *in = ctx;
	tfjob_job *job = NULL;
	int rc = tfjob_job_parse(&job, in->data, in->len, NULL, NULL);
	tfjob_job_free(job);
	return rc;
}

static int op_pdv(void *ctx)
{
	struct input *in = ctx;
	tfjob_job *job = NULL;
	int rc = tfjob_job_parse(&job, in->data, in->len, NULL, NULL);
	if (rc)
		return rc;
	tfjob_default_options dopts = TFJOB_DEFAULT_OPTIONS_INIT;
	dopts.compat = in->compat;
	rc = tfjob_job_apply_defaults(job, &dopts, NULL);
	if (rc == 0) {
		tfjob_validate_options vopts = TFJOB_VALIDATE_OPTIONS_INIT;
		vopts.compat = in->compat;
		tfjob_field_errors *errs = NULL;
		rc = tfjob_job_validate(&errs, job, &vopts, NULL);
		if (rc == 0 && tfjob_field_errors_count(errs) != 0)
			rc = TFJOB_EINVALID;
		tfjob_field_errors_free(errs);
	}
	tfjob_job_free(job);
	return rc;
}

/* JSON when the text starts with '{' or '[' after blanks (the library's own rule, BOM aside). */
static bool is_json(const struct input *in)
{
	size_t i = 0;
	while (i < in->len && in->data[i] && strchr(" \t\r\n", in->data[i]))
		i++;
	return i < in->len && (in->data[i] == '{' || in->data[i] == '[');
}

/* The third-party parser alone: libyaml's events (nothing built), or jansson's json_loadb. */
static int op_lib(void *ctx)
{
	struct input *in = ctx;
	if (is_json(in)) {
		json_error_t jerr;
		json_t *v = json_loadb(in->data, in->len, JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &jerr);
		json_decref(v);
		return v ? 0 : -1;
	}
	yaml_parser_t p;
	if (!yaml_parser_initialize(&p))
		return -1;
	yaml_parser_set_input_string(&p, (const unsigned char *)in->data, in->len);
	int rc = 0;
	for (bool done = false; !done;) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&p, &ev)) {
			rc = -1;
			break;
		}
		done = ev.type == YAML_STREAM_END_EVENT;
		yaml_event_delete(&ev);
	}
	yaml_parser_delete(&p);
	return rc;
}

/* libyaml building its own tree (yaml_parser_load, every document, + yaml_document_delete). */
static int op_libdoc(void *ctx)
{
	struct input *in = ctx;
	yaml_parser_t p;
	if (!yaml_parser_initialize(&p))
		return -1;
	yaml_parser_set_input_string(&p, (const unsigned char *)in->data, in->len);
	int rc = 0;
	for (;;) {
		yaml_document_t doc;
		if (!yaml_parser_load(&p, &doc)) {
			rc = -1;
			break;
		}
		bool empty = yaml_document_get_root_node(&doc) == NULL;
		yaml_document_delete(&doc);
		if (empty)
			break;
	}
	yaml_parser_delete(&p);
	return rc;
}

/*
 * Building and freeing the job's jansson tree without any parsing: json_deep_copy of the parsed
 * job (no UTF-8 checks, keys hashed once) + json_decref. What holding the job as jansson values
 * costs at the least, whatever the parser.
 */
static int op_tree(void *ctx)
{
	struct input *in = ctx;
	if (!in->tree) {
		tfjob_job *job = NULL;
		char *text = NULL;
		if (tfjob_job_parse(&job, in->data, in->len, NULL, NULL) == 0 && tfjob_job_to_json(&text, job, 0, NULL) == 0)
			in->tree = json_loads(text, 0, NULL);
		tfjob_free(text);
		tfjob_job_free(job);
		if (!in->tree)
			return -1;
	}
	json_t *copy = json_deep_copy(in->tree);
	json_decref(copy);
	return copy ? 0 : -1;
}

/* ---- interleaved ratio ---- */

struct spread {
	int64_t median, q1, q3, min, max;
};

/* Median, quartiles and range of n values (sorts them). */
static struct spread spread_of(int64_t *v, int n)
{
	qsort(v, (size_t)n, sizeof(*v), cmp_i64);
	return (struct spread){ .median = v[n / 2], .q1 = v[n / 4], .q3 = v[(3 * n) / 4], .min = v[0], .max = v[n - 1] };
}

/*
 * The ratio time(fn) / time(base) measured interleaved: each round times one batch of each, in
 * alternating order, so a load change on the machine slows both sides of a round alike. The
 * spread is that of the per-round ratios (kept in millionths); the times are each side's median.
 */
static int interleaved_ratio(bool json, const char *file, const char *name, op_fn fn, op_fn base, void *ctx)
{
	long batch_fn = calibrate(fn, ctx), batch_base = calibrate(base, ctx);
	if (batch_fn < 0 || batch_base < 0)
		return -1;
	int64_t *ratio = calloc((size_t)runs, sizeof(*ratio)), *t_fn = calloc((size_t)runs, sizeof(*t_fn)),
	        *t_base = calloc((size_t)runs, sizeof(*t_base));
	if (!ratio || !t_fn || !t_base) {
		free(ratio);
		free(t_fn);
		free(t_base);
		return -1;
	}
	for (int r = 0; r < runs; r++) {
		if (r % 2 == 0) {
			t_fn[r] = batch_ps(fn, ctx, batch_fn);
			t_base[r] = batch_ps(base, ctx, batch_base);
		} else {
			t_base[r] = batch_ps(base, ctx, batch_base);
			t_fn[r] = batch_ps(fn, ctx, batch_fn);
		}
		ratio[r] = t_base[r] > 0 ? t_fn[r] * 1000000 / t_base[r] : 0;
	}
	struct spread q = spread_of(ratio, runs), a = spread_of(t_fn, runs), b = spread_of(t_base, runs);
	if (json)
		printf("{\"file\":\"%s\",\"op\":\"%s\",\"ratio_median\":%.3f,\"ratio_q1\":%.3f,\"ratio_q3\":%.3f,"
		       "\"ratio_min\":%.3f,\"ratio_max\":%.3f,\"ns_median\":%.1f,\"base_ns_median\":%.1f,\"runs\":%d}\n",
		       file, name, q.median / 1e6, q.q1 / 1e6, q.q3 / 1e6, q.min / 1e6, q.max / 1e6, a.median / 1e3,
		       b.median / 1e3, runs);
	else
		printf("%-40s %-12s %6.3fx  (quartiles %.3f-%.3f, range %.3f-%.3f; medians %.1f / %.1f ns/op, %d rounds)\n",
		       file, name, q.median / 1e6, q.q1 / 1e6, q.q3 / 1e6, q.min / 1e6, q.max / 1e6, a.median / 1e3,
		       b.median / 1e3, runs);
	fflush(stdout);
	free(ratio);
	free(t_fn);
	free(t_base);
	return 0;
}

/*
 * pdv against the parser alone; for YAML also against libyaml building its own document, and the
 * jansson tree against libyaml's events (1 + tree/lib: the least any YAML path to jansson values
 * can reach in pdv/lib).
 */
static int ratios(bool json, const char *file, struct input *in)
{
	int rc = interleaved_ratio(json, file, "pdv/lib", op_pdv, op_lib, in);
	if (rc == 0 && !is_json(in))
		rc = interleaved_ratio(json, file, "pdv/libdoc", op_pdv, op_libdoc, in);
	if (rc == 0 && !is_json(in))
		rc = interleaved_ratio(json, file, "tree/lib", op_tree, op_lib, in);
	return rc;
}

#ifdef TFJOB_CLUSTER_H
static int op_tfcfg(void *ctx)
{
	struct input *in = ctx;
	tfjob_render_options ropts = TFJOB_RENDER_OPTIONS_INIT;
	ropts.compat = in->compat;
	char *out = NULL;
	int rc = tfjob_tf_config(&out, in->defaulted, in->type, in->index, &ropts, NULL);
	tfjob_free(out);
	return rc;
}

static int op_tfcfg_graph(void *ctx)
{
	struct input *in = ctx;
	char *out = NULL;
	int rc = tfjob_graph_tf_config(&out, in->graph, in->type_pos, in->index, NULL);
	tfjob_free(out);
	return rc;
}
#endif

static char *read_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	size_t got;
	while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			char *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				buf = NULL;
			}
			buf = nb;
		}
	}
	fclose(f);
	*len = n;
	return buf;
}

static void report(bool json, const char *file, const char *op, const struct result *r)
{
	if (json)
		printf("{\"file\":\"%s\",\"op\":\"%s\",\"ns_median\":%.1f,\"ns_min\":%.1f,\"runs\":%d,\"batch\":%ld,"
		       "\"allocs\":%zu,\"peak_bytes\":%zu}\n",
		       file, op, r->ns_median, r->ns_min, runs, r->batch, r->allocs, r->peak);
	else
		printf("%-40s %-12s %12.1f ns/op (min %.1f, %d runs x %ld)  %6zu allocs  %9zu peak bytes\n", file, op,
		       r->ns_median, r->ns_min, runs, r->batch, r->allocs, r->peak);
	fflush(stdout);
}

static op_fn op_by_name(const char *name)
{
	static const struct {
		const char *name;
		op_fn fn;
	} ops[] = { { "pdv", op_pdv }, { "parse", op_parse }, { "lib", op_lib }, { "libdoc", op_libdoc },
		    { "tree", op_tree } };
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++)
		if (!strcmp(name, ops[k].name))
			return ops[k].fn;
	return NULL;
}

static int usage(void)
{
	fprintf(stderr, "usage: bench_core [--runs R] [--min-ns NS] [--clock cpu|wall] [--compat C] [--json] [--ratio] "
	                "[--profile N [--op pdv|parse|lib|libdoc|tree]] FILE[:TYPE:INDEX]...\n");
	return 2;
}

int main(int argc, char **argv)
{
	bool json = false, ratio_mode = false;
	long profile = 0;
	op_fn profile_op = op_pdv;
	tfjob_compat compat = TFJOB_COMPAT_TRAINING_OPERATOR_1_9;
	int i = 1;
	for (; i < argc && argv[i][0] == '-' && argv[i][1] == '-'; i++) {
		if (!strcmp(argv[i], "--json"))
			json = true;
		else if (!strcmp(argv[i], "--clock") && i + 1 < argc) {
			const char *c = argv[++i];
			if (!strcmp(c, "wall"))
				bench_clock = CLOCK_MONOTONIC;
			else if (!strcmp(c, "cpu"))
				bench_clock = CLOCK_PROCESS_CPUTIME_ID;
			else
				return usage();
		} else if (!strcmp(argv[i], "--profile") && i + 1 < argc)
			profile = atol(argv[++i]);
		else if (!strcmp(argv[i], "--ratio"))
			ratio_mode = true;
		else if (!strcmp(argv[i], "--op") && i + 1 < argc) {
			if (!(profile_op = op_by_name(argv[++i])))
				return usage();
		}
		else if (!strcmp(argv[i], "--runs") && i + 1 < argc)
			runs = atoi(argv[++i]);
		else if (!strcmp(argv[i], "--min-ns") && i + 1 < argc)
			min_batch_ns = atoll(argv[++i]);
		else if (!strcmp(argv[i], "--compat") && i + 1 < argc) {
			if (tfjob_compat_from_string(&compat, argv[++i]))
				return usage();
		} else
			return usage();
	}
	if (i >= argc || runs < 1)
		return usage();
	int status = 0;
	for (; i < argc; i++) {
		struct input in = { 0 };
		char *spec = strdup(argv[i]);
		char *colon = strchr(spec, ':');
		if (colon) {
			*colon = '\0';
			in.type = colon + 1;
			char *c2 = strchr(in.type, ':');
			if (!c2) {
				free(spec);
				return usage();
			}
			*c2 = '\0';
			in.index = atoll(c2 + 1);
		}
		in.path = spec;
		in.compat = compat;
		in.data = read_file(spec, &in.len);
		if (!in.data) {
			fprintf(stderr, "bench_core: cannot read %s\n", spec);
			free(spec);
			return 2;
		}
		const char *base = strrchr(spec, '/') ? strrchr(spec, '/') + 1 : spec;
		if (profile > 0) {
			/*
			 * For valgrind --tool=callgrind: only the operation, PROFILE times, no timing:
			 * parse+default+validate, or with :TYPE:INDEX the TF_CONFIG of that replica.
			 */
#ifdef TFJOB_CLUSTER_H
			if (in.type) {
				tfjob_default_options pdo = TFJOB_DEFAULT_OPTIONS_INIT;
				pdo.compat = compat;
				if (tfjob_job_parse(&in.defaulted, in.data, in.len, NULL, NULL) ||
				    tfjob_job_apply_defaults(in.defaulted, &pdo, NULL))
					status = 1;
				for (long k = 0; !status && k < profile; k++)
					if (op_tfcfg(&in))
						status = 1;
				tfjob_job_free(in.defaulted);
				free(in.data);
				free(spec);
				continue;
			}
#endif
			for (long k = 0; k < profile; k++)
				if (profile_op(&in))
					status = 1;
			json_decref(in.tree);
			free(in.data);
			free(spec);
			continue;
		}
		if (ratio_mode) {
			if (ratios(json, base, &in)) {
				fprintf(stderr, "bench_core: %s: parse+default+validate failed (invalid input?)\n", spec);
				status = 1;
			}
			json_decref(in.tree);
			free(in.data);
			free(spec);
			continue;
		}
		struct result r;
		if (measure(&r, op_pdv, &in)) {
			fprintf(stderr, "bench_core: %s: parse+default+validate failed (invalid input?)\n", spec);
			status = 1;
		} else {
			report(json, base, "pdv", &r);
		}
		if (measure(&r, op_parse, &in) == 0)
			report(json, base, "parse", &r);
		if (measure(&r, op_lib, &in) == 0)
			report(json, base, "lib", &r);
		if (!is_json(&in) && measure(&r, op_libdoc, &in) == 0)
			report(json, base, "libdoc", &r);
		if (in.type) {
#ifdef TFJOB_CLUSTER_H
			tfjob_default_options dopts = TFJOB_DEFAULT_OPTIONS_INIT;
			dopts.compat = compat;
			tfjob_render_options ropts = TFJOB_RENDER_OPTIONS_INIT;
			ropts.compat = compat;
			if (tfjob_job_parse(&in.defaulted, in.data, in.len, NULL, NULL) ||
			    tfjob_job_apply_defaults(in.defaulted, &dopts, NULL) ||
			    tfjob_graph_new(&in.graph, in.defaulted, &ropts, NULL) ||
			    tfjob_graph_find_type(&in.type_pos, in.graph, in.type)) {
				fprintf(stderr, "bench_core: %s: cannot build the replica graph\n", spec);
				status = 1;
			} else {
				if (measure(&r, op_tfcfg, &in) == 0)
					report(json, base, "tfcfg", &r);
				if (measure(&r, op_tfcfg_graph, &in) == 0)
					report(json, base, "tfcfg-graph", &r);
			}
			tfjob_graph_free(in.graph);
			tfjob_job_free(in.defaulted);
#else
			fprintf(stderr, "bench_core: this libtfjob has no tfjob_tf_config (cluster.h); TF_CONFIG skipped\n");
#endif
		}
		free(in.data);
		free(spec);
	}
	return status;
}
