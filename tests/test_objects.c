/*
 * Observed-object lists and planning from them: the same plan as from text, input shapes,
 * errors, and that the planner leaves the lists untouched.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

static const char *job_text =
	"{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"j\",\"namespace\":\"ns\",\"uid\":\"u\"},"
	"\"spec\":{\"tfReplicaSpecs\":{\"Worker\":{\"replicas\":2,\"restartPolicy\":\"ExitCode\",\"template\":{\"spec\":"
	"{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"i\"}]}}}}}}";

static const char *pods_text =
	"{\"kind\":\"PodList\",\"items\":["
	"{\"metadata\":{\"name\":\"j-worker-0\",\"labels\":{\"training.kubeflow.org/job-name\":\"j\","
	"\"training.kubeflow.org/replica-type\":\"worker\",\"training.kubeflow.org/replica-index\":\"0\"}},"
	"\"status\":{\"phase\":\"Failed\",\"containerStatuses\":[{\"name\":\"tensorflow\",\"state\":{\"terminated\":"
	"{\"exitCode\":137}}}]}},"
	"{\"metadata\":{\"name\":\"other-worker-0\",\"labels\":{\"training.kubeflow.org/job-name\":\"other\"}}}]}";

static char *plan_json(tfjob_plan *plan)
{
	char *out = NULL;
	ck_assert_int_eq(tfjob_plan_to_json(&out, plan, TFJOB_JSON_COMPACT, NULL), 0);
	return out;
}

START_TEST(same_plan_as_from_text)
{
	tfjob_job *job = tu_parse(job_text);
	tfjob_plan_options po = TFJOB_PLAN_OPTIONS_INIT;
	po.now = 1767225600;
	tfjob_plan *from_text = NULL, *from_objects = NULL;
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_plan_new(&from_text, job, pods_text, NULL, &po, &err), 0);

	tfjob_objects *pods = NULL;
	ck_assert_int_eq(tfjob_objects_parse(&pods, pods_text, strlen(pods_text), NULL, &err), 0);
	ck_assert_uint_eq(tfjob_objects_count(pods), 2);
	ck_assert_str_eq(tfjob_objects_item_name(pods, 0), "j-worker-0");
	char *before = NULL;
	ck_assert_int_eq(tfjob_objects_item_json(&before, pods, 1, 0, NULL), 0);
	ck_assert_int_eq(tfjob_plan_new_with_objects(&from_objects, job, pods, NULL, &po, &err), 0);

	char *a = plan_json(from_text), *b = plan_json(from_objects);
	ck_assert_str_eq(a, b);
	ck_assert_ptr_nonnull(strstr(a, "\"name\":\"j-worker-0\"")); /* the failed pod is deleted (137 retries) */
	/* The foreign pod was dropped from the step, not from the list. */
	ck_assert_uint_eq(tfjob_objects_count(pods), 2);
	char *after = NULL;
	ck_assert_int_eq(tfjob_objects_item_json(&after, pods, 1, 0, NULL), 0);
	ck_assert_str_eq(before, after);

	/* The same lists serve a second plan. */
	tfjob_plan *again = NULL;
	ck_assert_int_eq(tfjob_plan_new_with_objects(&again, job, pods, pods, &po, &err), 0);
	tfjob_plan_free(again);

	tfjob_free(a);
	tfjob_free(b);
	tfjob_free(before);
	tfjob_free(after);
	tfjob_plan_free(from_text);
	tfjob_plan_free(from_objects);
	tfjob_objects_free(pods);
	tfjob_job_free(job);
}
END_TEST

START_TEST(build_by_adding)
{
	tfjob_objects *objs = NULL;
	ck_assert_int_eq(tfjob_objects_new(&objs, NULL), 0);
	ck_assert_uint_eq(tfjob_objects_count(objs), 0);
	ck_assert_int_eq(tfjob_objects_add_json(objs, "{\"metadata\":{\"name\":\"a\"}}", NULL), 0);
	ck_assert_int_eq(tfjob_objects_add_json(objs, "metadata: {name: b}\n", NULL), 0);
	ck_assert_uint_eq(tfjob_objects_count(objs), 2);
	ck_assert_str_eq(tfjob_objects_item_name(objs, 1), "b");
	ck_assert_ptr_null(tfjob_objects_item_name(objs, 2));

	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_objects_add_json(objs, "[1]", &err), TFJOB_ESCHEMA);
	tfjob_error_free(err);
	err = NULL;
	ck_assert_int_eq(tfjob_objects_add_json(objs, "{\"metadata\":3}", &err), TFJOB_ESCHEMA);
	tfjob_error_free(err);
	err = NULL;
	ck_assert_int_eq(tfjob_objects_add_json(objs, "{\"a\":", &err), TFJOB_EPARSE);
	ck_assert_int_gt(tfjob_error_line(err), 0);
	tfjob_error_free(err);
	ck_assert_uint_eq(tfjob_objects_count(objs), 2); /* unchanged by the failures */
	char *out = NULL;
	ck_assert_int_eq(tfjob_objects_item_json(&out, objs, 5, 0, NULL), TFJOB_EINVAL);
	tfjob_objects_free(objs);
	tfjob_objects_free(NULL);
}
END_TEST

/* A new string (caller frees). */
static char *fmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *fmt(const char *f, ...)
{
	va_list ap;
	va_start(ap, f);
	int n = vsnprintf(NULL, 0, f, ap);
	va_end(ap);
	char *s = malloc((size_t)n + 1);
	ck_assert_ptr_nonnull(s);
	va_start(ap, f);
	vsnprintf(s, (size_t)n + 1, f, ap);
	va_end(ap);
	return s;
}

/* A pod of job j as JSON: worker `index` (label text), phase, tensorflow exit code (<0: running). */
static char *worker_pod(const char *index, const char *phase, int code)
{
	char state[96];
	if (code < 0)
		snprintf(state, sizeof state, "{\"running\":{}}");
	else
		snprintf(state, sizeof state, "{\"terminated\":{\"exitCode\":%d}}", code);
	return fmt("{\"metadata\":{\"name\":\"j-worker-%s\",\"ownerReferences\":[{\"uid\":\"u\",\"controller\":true}],"
	           "\"labels\":{\"training.kubeflow.org/job-name\":\"j\",\"training.kubeflow.org/operator-name\":\"tfjob-controller\","
	                        "\"training.kubeflow.org/replica-type\":\"worker\",\"training.kubeflow.org/replica-index\":"
	                        "\"%s\"}},\"status\":{\"phase\":\"%s\",\"containerStatuses\":[{\"name\":\"tensorflow\","
	                        "\"restartCount\":1,\"state\":%s}]}}",
	                        index, index, phase, state);
}

/* Summaries of objects added one by one (past the first growth of the list) plan like the text. */
START_TEST(added_objects_plan_like_text)
{
	tfjob_job *job = tu_parse(job_text);
	tfjob_objects *objs = NULL;
	ck_assert_int_eq(tfjob_objects_new(&objs, NULL), 0);
	char *text = fmt("[");
	for (int i = 40; i-- > 0;) { /* reverse order: the planner sorts by index */
		char index[16];
		snprintf(index, sizeof index, i == 7 ? "x%d" : "%d", i % 30);
		char *pod = worker_pod(index, i % 5 == 0 ? "Failed" : i % 3 ? "Running" : "Succeeded", i % 4 ? -1 : i);
		ck_assert_int_eq(tfjob_objects_add_json(objs, pod, NULL), 0);
		char *more = fmt("%s%s%s", text, i == 39 ? "" : ",", pod);
		free(text);
		free(pod);
		text = more;
	}
	char *all = fmt("%s]", text);
	free(text);
	ck_assert_uint_eq(tfjob_objects_count(objs), 40);
	ck_assert_str_eq(tfjob_objects_item_name(objs, 0), "j-worker-9");

	for (int compat = 0; compat < 2; compat++) {
		tfjob_plan_options po = TFJOB_PLAN_OPTIONS_INIT;
		po.now = 1767225600;
		po.compat = compat ? TFJOB_COMPAT_TRAINING_OPERATOR_1_9 : TFJOB_COMPAT_DOCUMENTED;
		tfjob_plan *from_text = NULL, *from_objects = NULL;
		ck_assert_int_eq(tfjob_plan_new(&from_text, job, all, NULL, &po, NULL), 0);
		ck_assert_int_eq(tfjob_plan_new_with_objects(&from_objects, job, objs, NULL, &po, NULL), 0);
		char *a = plan_json(from_text), *b = plan_json(from_objects);
		ck_assert_str_eq(a, b);
		ck_assert_ptr_nonnull(strstr(a, "InvalidReplicaIndex"));
		ck_assert_ptr_nonnull(strstr(a, "TooManyPods"));
		ck_assert_ptr_nonnull(strstr(a, "ExitedWithCode"));
		tfjob_free(a);
		tfjob_free(b);
		tfjob_plan_free(from_text);
		tfjob_plan_free(from_objects);
	}
	free(all);
	tfjob_objects_free(objs);
	tfjob_job_free(job);
}
END_TEST

START_TEST(parse_shapes_and_errors)
{
	static const struct {
		const char *text;
		size_t count;
	} ok[] = {
		{ "[]", 0 },
		{ "", 0 },
		{ "[{\"metadata\":{\"name\":\"a\"}},{}]", 2 },
		{ "metadata: {name: a}\n---\nmetadata: {name: b}\n", 2 },
		{ "{\"apiVersion\":\"v1\",\"kind\":\"ServiceList\",\"items\":[{}]}", 1 },
		{ "{\"metadata\":{\"name\":\"single\"}}", 1 },
	};
	for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
		tfjob_objects *objs = NULL;
		tfjob_error *err = NULL;
		ck_assert_msg(tfjob_objects_parse(&objs, ok[i].text, strlen(ok[i].text), NULL, &err) == 0, "%s: %s",
		              ok[i].text, tfjob_error_message(err));
		ck_assert_uint_eq(tfjob_objects_count(objs), ok[i].count);
		tfjob_objects_free(objs);
	}
	tfjob_objects *objs = NULL;
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_objects_parse(&objs, "[{}, 3]", 7, NULL, &err), TFJOB_ESCHEMA);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "[1]"));
	ck_assert_ptr_null(objs);
	tfjob_error_free(err);
	err = NULL;
	tfjob_parse_options po = TFJOB_PARSE_OPTIONS_INIT;
	po.max_input_bytes = 4;
	po.filename = "pods.json";
	ck_assert_int_eq(tfjob_objects_parse(&objs, "[{},{}]", 7, &po, &err), TFJOB_ELIMIT);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "pods.json"));
	tfjob_error_free(err);
	ck_assert_int_eq(tfjob_objects_parse(NULL, "[]", 2, NULL, NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_plan_new_with_objects(NULL, NULL, NULL, NULL, NULL, NULL), TFJOB_EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("objects");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, same_plan_as_from_text);
	tcase_add_test(tc, build_by_adding);
	tcase_add_test(tc, added_objects_plan_like_text);
	tcase_add_test(tc, parse_shapes_and_errors);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
