/*
 * libFuzzer target for the foundation: parse (any YAML/JSON stream), validate in both modes
 * (also as an update of the first job), default in both modes, and check that defaulting is
 * idempotent and survives a JSON round trip. Built and run by fuzz/run.sh (tests/suites/70-fuzz.sh).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tfjob/tfjob.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_validate(const tfjob_job *job, const tfjob_job *old, tfjob_compat compat)
{
	tfjob_validate_options vo = TFJOB_VALIDATE_OPTIONS_INIT;
	vo.compat = compat;
	vo.old = old;
	tfjob_field_errors *errs = NULL;
	if (tfjob_job_validate(&errs, job, &vo, NULL) == 0) {
		char *json = NULL;
		if (tfjob_field_errors_to_json(&json, errs, TFJOB_JSON_COMPACT, NULL) != 0)
			abort();
		tfjob_free(json);
		for (size_t i = 0; i < tfjob_field_errors_count(errs); i++)
			if (!tfjob_field_errors_message(errs, i) || !tfjob_field_errors_field(errs, i))
				abort();
	}
	tfjob_field_errors_free(errs);
}

static void check_defaults(const tfjob_job *job, tfjob_compat compat)
{
	tfjob_job *copy = NULL;
	if (tfjob_job_clone(&copy, job, NULL) != 0)
		return;
	tfjob_default_options d = TFJOB_DEFAULT_OPTIONS_INIT;
	d.compat = compat;
	tfjob_error *err = NULL;
	if (tfjob_job_apply_defaults(copy, &d, &err) != 0) {
		if (tfjob_error_code_of(err) == TFJOB_ESCHEMA && !tfjob_error_field(err))
			abort(); /* a schema error always names its field */
		tfjob_error_free(err);
		tfjob_job_free(copy);
		return;
	}
	char *once = NULL, *twice = NULL;
	if (tfjob_job_to_json(&once, copy, TFJOB_JSON_COMPACT, NULL) != 0)
		abort();
	/* Idempotent, and the JSON output reads back as the same job. */
	tfjob_job *back = NULL;
	if (tfjob_job_parse(&back, once, strlen(once), NULL, NULL) != 0)
		abort();
	if (tfjob_job_apply_defaults(back, &d, NULL) != 0 || tfjob_job_to_json(&twice, back, TFJOB_JSON_COMPACT, NULL) != 0)
		abort();
	if (strcmp(once, twice) != 0)
		abort();
	tfjob_free(once);
	tfjob_free(twice);
	tfjob_job_free(back);
	tfjob_job_free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tfjob_parse_options opts = TFJOB_PARSE_OPTIONS_INIT;
	opts.max_nodes = 50000; /* keep single runs fast; the limit logic is the same */
	tfjob_job **jobs = NULL;
	size_t n = 0;
	tfjob_error *err = NULL;
	if (tfjob_job_parse_all(&jobs, &n, (const char *)data, size, &opts, &err) != 0) {
		if (!tfjob_error_message(err)[0])
			abort(); /* every error has a message */
		tfjob_error_free(err);
		return 0;
	}
	for (size_t i = 0; i < n; i++) {
		for (int c = 0; c <= 1; c++) {
			check_validate(jobs[i], NULL, (tfjob_compat)c);
			check_validate(jobs[i], jobs[0], (tfjob_compat)c);
			check_defaults(jobs[i], (tfjob_compat)c);
		}
		/* Accessors never crash. */
		for (size_t k = 0; k < tfjob_job_replica_type_count(jobs[i]); k++) {
			int64_t r;
			tfjob_job_replicas(&r, jobs[i], tfjob_job_replica_type(jobs[i], k));
			tfjob_job_restart_policy(jobs[i], tfjob_job_replica_type(jobs[i], k));
		}
		tfjob_job_condition_status(jobs[i], "Succeeded");
		tfjob_job_is_finished(jobs[i]);
	}
	tfjob_job_array_free(jobs, n);
	return 0;
}
