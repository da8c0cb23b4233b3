/*
 * libFuzzer target: parse, validate in both modes (also as an update of itself), apply
 * defaults, serialise, and re-parse the output (which must succeed).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <tfjob/tfjob.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void validate(const tfjob_job *job, tfjob_compat compat, const tfjob_job *old)
{
	tfjob_validate_options opts = TFJOB_VALIDATE_OPTIONS_INIT;
	opts.compat = compat;
	opts.old = old;
	tfjob_field_errors *errs = NULL;
	if (tfjob_job_validate(&errs, job, &opts, NULL) != 0)
		abort();
	for (size_t i = 0; i < tfjob_field_errors_count(errs); i++)
		if (!tfjob_field_errors_message(errs, i) || !tfjob_field_errors_field(errs, i))
			abort();
	char *json = NULL;
	if (tfjob_field_errors_to_json(&json, errs, 0, NULL) != 0)
		abort();
	tfjob_free(json);
	tfjob_field_errors_free(errs);
}

static void defaults_round_trip(const tfjob_job *job, tfjob_compat compat)
{
	tfjob_job *copy = NULL;
	if (tfjob_job_clone(&copy, job, NULL) != 0)
		abort();
	tfjob_default_options dopts = TFJOB_DEFAULT_OPTIONS_INIT;
	dopts.compat = compat;
	if (tfjob_job_apply_defaults(copy, &dopts, NULL) == 0) {
		char *json = NULL;
		if (tfjob_job_to_json(&json, copy, 0, NULL) != 0)
			abort();
		tfjob_job *again = NULL;
		tfjob_error *err = NULL;
		if (tfjob_job_parse(&again, json, strlen(json), NULL, &err) != 0)
			abort(); /* our own output must always parse back */
		tfjob_job_free(again);
		tfjob_free(json);
	}
	tfjob_job_free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tfjob_parse_options opts = TFJOB_PARSE_OPTIONS_INIT;
	opts.max_nodes = 200000;
	tfjob_job *job = NULL;
	if (tfjob_job_parse(&job, (const char *)data, size, &opts, NULL) != 0)
		return 0;
	validate(job, TFJOB_COMPAT_DOCUMENTED, NULL);
	validate(job, TFJOB_COMPAT_TRAINING_OPERATOR_1_9, job);
	defaults_round_trip(job, TFJOB_COMPAT_DOCUMENTED);
	defaults_round_trip(job, TFJOB_COMPAT_TRAINING_OPERATOR_1_9);
	tfjob_job_free(job);
	return 0;
}
