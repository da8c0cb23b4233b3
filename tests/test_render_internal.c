/*
 * The internal render entry points the planner uses (lib/graph/render.h): json_t trees equal
 * to the public JSON text.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "graph/render.h"
#include "testutil.h"

static const char *job_text =
	"{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"p\",\"namespace\":\"n\"},"
	"\"spec\":{\"tfReplicaSpecs\":{\"Worker\":{\"replicas\":2,\"restartPolicy\":\"OnFailure\",\"template\":{\"spec\":"
	"{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"i\",\"ports\":[{\"name\":\"tfjob-port\",\"containerPort\":2222}]}]}}}}}}";

START_TEST(trees_match_public_text)
{
	tfjob_job *job = tu_parse(job_text);
	for (int kind = 0; kind < 2; kind++) {
		json_t *tree = NULL;
		int rc = kind ? tfjob__render_service(&tree, job, "Worker", 1, NULL, NULL)
		              : tfjob__render_pod(&tree, job, "Worker", 1, NULL, NULL);
		ck_assert_int_eq(rc, 0);
		char *text = NULL;
		rc = kind ? tfjob_render_service(&text, job, "Worker", 1, NULL, TFJOB_JSON_COMPACT, NULL)
		          : tfjob_render_pod(&text, job, "Worker", 1, NULL, TFJOB_JSON_COMPACT, NULL);
		ck_assert_int_eq(rc, 0);
		json_t *parsed = json_loads(text, 0, NULL);
		ck_assert(json_equal(tree, parsed));
		ck_assert_str_eq(json_string_value(json_object_get(json_object_get(tree, "metadata"), "name")), "p-worker-1");
		json_decref(parsed);
		json_decref(tree);
		tfjob_free(text);
	}
	json_t *tree = (json_t *)1;
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob__render_pod(&tree, job, "PS", 0, NULL, &err), TFJOB_ENOTFOUND);
	ck_assert_ptr_null(tree);
	tfjob_error_free(err);
	tree = (json_t *)1;
	ck_assert_int_eq(tfjob__render_service(&tree, job, "Worker", 2, NULL, NULL), TFJOB_EINVAL);
	ck_assert_ptr_null(tree);
	ck_assert_int_eq(tfjob__render_pod(NULL, job, "Worker", 0, NULL, NULL), TFJOB_EINVAL);
	tfjob_job_free(job);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("render_internal");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, trees_match_public_text);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
