/*
 * libFuzzer target: the reconcile planner. The input is split at the first line "---pods---":
 * before it the job (with any status), after it the observed pods (and, after a further
 * "---services---" line, the services). Both modes, a few clock values and requeue counts.
 * Invalid or hostile observed objects must give an error or warnings, never a crash.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tfjob/tfjob.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *dup_range(const char *start, const char *end)
{
	size_t n = (size_t)(end - start);
	char *s = malloc(n + 1);
	if (!s)
		abort();
	memcpy(s, start, n);
	s[n] = '\0';
	return s;
}

static const char *find(const char *hay, const char *end, const char *needle)
{
	size_t n = strlen(needle);
	for (const char *p = hay; p + n <= end; p++)
		if (!memcmp(p, needle, n))
			return p;
	return NULL;
}

static void plan_once(const tfjob_job *job, const char *pods, const char *services, tfjob_compat compat,
                      int64_t now, int64_t requeues)
{
	tfjob_plan_options po = TFJOB_PLAN_OPTIONS_INIT;
	po.compat = compat;
	po.now = now;
	po.requeues = requeues;
	tfjob_plan *plan = NULL;
	tfjob_error *err = NULL;
	if (tfjob_plan_new(&plan, job, pods, services, &po, &err) != 0) {
		if (!tfjob_error_message(err)[0])
			abort();
		tfjob_error_free(err);
		return;
	}
	char *json = NULL;
	if (tfjob_plan_to_json(&json, plan, 0, NULL) != 0)
		abort();
	for (size_t i = 0; i < tfjob_plan_action_count(plan); i++) {
		if (tfjob_plan_action_type(plan, i) == TFJOB_ACTION_EVENT && !tfjob_plan_action_reason(plan, i))
			abort();
	}
	tfjob_free(json);
	tfjob_plan_free(plan);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data, *end = text + size;
	const char *mark = find(text, end, "\n---pods---\n");
	char *job_text = dup_range(text, mark ? mark : end);
	char *pods = NULL, *services = NULL;
	if (mark) {
		const char *p = mark + strlen("\n---pods---\n");
		const char *s = find(p, end, "\n---services---\n");
		pods = dup_range(p, s ? s : end);
		if (s)
			services = dup_range(s + strlen("\n---services---\n"), end);
	}
	tfjob_parse_options opts = TFJOB_PARSE_OPTIONS_INIT;
	opts.max_nodes = 50000;
	tfjob_job *job = NULL;
	if (tfjob_job_parse(&job, job_text, strlen(job_text), &opts, NULL) == 0) {
		int64_t total = 0;
		for (size_t t = 0; t < tfjob_job_replica_type_count(job); t++) {
			int64_t r = 1;
			tfjob_job_replicas(&r, job, tfjob_job_replica_type(job, t));
			total += r > 0 ? r : 0;
		}
		if (total <= 64) { /* keep runs cheap: each created pod carries an O(n) TF_CONFIG */
			plan_once(job, pods, services, TFJOB_COMPAT_DOCUMENTED, 1767225600, 0);
			plan_once(job, pods, services, TFJOB_COMPAT_TRAINING_OPERATOR_1_9, 1767225600 + 86400, 3);
		}
		tfjob_job_free(job);
	}
	free(job_text);
	free(pods);
	free(services);
	return 0;
}
