/*
 * libFuzzer target: the replica graph, TF_CONFIG of every replica, rendering of all children and
 * the PodGroup, in both modes, on whatever job the input parses to (after defaults).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tfjob/tfjob.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Keep one run cheap: rendering is O(replicas^2) by nature. */
#define MAX_FUZZ_REPLICAS 64

static void check_graph(const tfjob_job *job, const tfjob_render_options *ro)
{
	tfjob_graph *graph = NULL;
	tfjob_error *err = NULL;
	if (tfjob_graph_new(&graph, job, ro, &err) != 0) {
		if (!tfjob_error_message(err)[0])
			abort();
		tfjob_error_free(err);
		return;
	}
	if (tfjob_graph_total_replicas(graph) > MAX_FUZZ_REPLICAS) {
		tfjob_graph_free(graph);
		return;
	}
	for (size_t t = 0; t < tfjob_graph_type_count(graph); t++) {
		for (int64_t i = 0; i < tfjob_graph_replicas(graph, t); i++) {
			char *cfg = NULL;
			if (tfjob_graph_tf_config(&cfg, graph, t, i, NULL) != 0)
				abort(); /* a built graph always yields TF_CONFIG for its own replicas */
			if (!tfjob_graph_child_name(graph, t, i) || !tfjob_graph_address(graph, t, i))
				abort();
			tfjob_free(cfg);
		}
	}
	char *out = NULL;
	if (tfjob_render_all(&out, job, ro, 0, NULL) == 0)
		tfjob_free(out);
	tfjob_render_options pg = *ro;
	pg.gang_scheduler = TFJOB_GANG_VOLCANO;
	if (tfjob_render_pod_group(&out, job, &pg, 0, NULL) == 0)
		tfjob_free(out);
	pg.gang_scheduler = TFJOB_GANG_SCHEDULER_PLUGINS;
	if (tfjob_render_pod_group(&out, job, &pg, 0, NULL) == 0)
		tfjob_free(out);
	tfjob_graph_free(graph);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tfjob_parse_options opts = TFJOB_PARSE_OPTIONS_INIT;
	opts.max_nodes = 50000;
	tfjob_job *job = NULL;
	if (tfjob_job_parse(&job, (const char *)data, size, &opts, NULL) != 0)
		return 0;
	for (int c = 0; c <= 1; c++) {
		tfjob_default_options d = TFJOB_DEFAULT_OPTIONS_INIT;
		d.compat = (tfjob_compat)c;
		tfjob_job *copy = NULL;
		if (tfjob_job_clone(&copy, job, NULL) != 0)
			abort();
		if (tfjob_job_apply_defaults(copy, &d, NULL) == 0) {
			tfjob_render_options ro = TFJOB_RENDER_OPTIONS_INIT;
			ro.compat = (tfjob_compat)c;
			ro.cluster_domain = c ? "cluster.local" : NULL;
			ro.exclude_evaluator = c;
			check_graph(copy, &ro);
		}
		tfjob_job_free(copy);
	}
	tfjob_job_free(job);
	return 0;
}
