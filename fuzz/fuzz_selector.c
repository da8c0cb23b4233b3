/*
 * Fuzz target: label and field selectors (lib/transport/selector.c) and JSON merge patch
 * (lib/transport/util.c), as the memory backend uses them on what callers send.
 * Input: a selector line, then (after the first newline) a JSON merge patch.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"

/* The transport sources are not in the fuzz runner's core list: build the ones we test here. */
#include "transport/selector.c"
#include "transport/util.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	if (!text)
		return 0;
	char *patch_text = strchr(text, '\n');
	if (patch_text)
		*patch_text++ = '\0';
	json_t *obj = json_loads("{\"metadata\":{\"name\":\"p\",\"namespace\":\"default\",\"labels\":{\"app\":\"tf\","
	                         "\"role\":\"worker\",\"x.y/z\":\"1\"}},\"spec\":{\"n\":3},\"status\":{\"ok\":true}}", 0, NULL);
	tfjob__selector *sel = NULL;
	tfjob_error *err = NULL;
	if (tfjob__selector_parse(&sel, text, &err) == 0) {
		tfjob__selector_matches(sel, json_object_get(json_object_get(obj, "metadata"), "labels"));
		tfjob__selector_free(sel);
	}
	tfjob_error_free(err);
	err = NULL;
	if (tfjob__field_selector_parse(&sel, text, &err) == 0) {
		tfjob__field_selector_matches(sel, obj);
		tfjob__selector_free(sel);
	}
	tfjob_error_free(err);
	json_t *patch = patch_text ? json_loads(patch_text, JSON_DECODE_ANY, NULL) : NULL;
	if (patch) {
		json_t *merged = tfjob__merge_patch(obj, patch);
		/* RFC 7386: applying the same patch again changes nothing. */
		json_t *again = merged ? tfjob__merge_patch(merged, patch) : NULL;
		if (merged && again && !json_equal(merged, again))
			abort();
		json_decref(again);
		json_decref(merged);
		json_decref(patch);
	}
	json_decref(obj);
	free(text);
	return 0;
}
