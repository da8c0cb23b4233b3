/*
 * libFuzzer target: YAML/JSON parsing of TFJobs (single and multi-document), then serialisation.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdint.h>
#include <stdlib.h>

#include <tfjob/tfjob.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	tfjob_parse_options opts = TFJOB_PARSE_OPTIONS_INIT;
	opts.max_nodes = 200000; /* keep each run fast; the limit itself is what is exercised */
	tfjob_job **jobs = NULL;
	size_t count = 0;
	tfjob_error *err = NULL;
	if (tfjob_job_parse_all(&jobs, &count, (const char *)data, size, &opts, &err) == 0) {
		for (size_t i = 0; i < count; i++) {
			char *json = NULL;
			if (tfjob_job_to_json(&json, jobs[i], TFJOB_JSON_COMPACT, NULL) == 0)
				tfjob_free(json);
		}
		tfjob_job_array_free(jobs, count);
	} else if (tfjob_error_message(err)[0] == '\0') {
		abort(); /* every failure must explain itself */
	}
	tfjob_error_free(err);
	return 0;
}
