/*
 * Parsing: format detection, streams, YAML features and scalar resolution, round trips, typed
 * accessors, and the bad-input corpus of tests/data/bad.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "testutil.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TFJOB_HEAD "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata:\n  name: t\n"

static const char *const minimal_yaml = TFJOB_HEAD
	"spec:\n"
	"  tfReplicaSpecs:\n"
	"    Worker:\n"
	"      template:\n"
	"        spec:\n"
	"          containers:\n"
	"            - name: tensorflow\n"
	"              image: busybox\n";

static tfjob_job *parse_named(const char *text, size_t len, const char *filename, int *rc, tfjob_error **err)
{
	tfjob_parse_options opts = TFJOB_PARSE_OPTIONS_INIT;
	opts.filename = filename;
	tfjob_job *job = NULL;
	*rc = tfjob_job_parse(&job, text, len, &opts, err);
	return job;
}

/* The whole job as a jansson value (order kept), via tfjob_job_to_json. */
static json_t *job_json(const tfjob_job *job)
{
	char *text = NULL;
	ck_assert_int_eq(tfjob_job_to_json(&text, job, TFJOB_JSON_COMPACT, NULL), 0);
	json_error_t jerr;
	json_t *v = json_loads(text, JSON_PRESERVE_ORDER, &jerr);
	ck_assert_msg(v != NULL, "library output is not JSON: %s", jerr.text);
	tfjob_free(text);
	return v;
}

/* ---- detection and streams ---- */

START_TEST(detects_yaml_and_json)
{
	tfjob_job *y = tu_parse(minimal_yaml);
	ck_assert_str_eq(tfjob_job_name(y), "t");
	tfjob_job_free(y);

	static const char *const json_text =
		"  \n\t{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"j\"}}";
	tfjob_job *j = tu_parse(json_text);
	ck_assert_str_eq(tfjob_job_name(j), "j");
	tfjob_job_free(j);

	/* A BOM before JSON still selects JSON; forcing YAML on JSON text works too (JSON is YAML). */
	const char *bom_json = "\xEF\xBB\xBF{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"b\"}}";
	tfjob_job *b = tu_parse(bom_json);
	ck_assert_str_eq(tfjob_job_name(b), "b");
	tfjob_job_free(b);
	tfjob_parse_options opts = TFJOB_PARSE_OPTIONS_INIT;
	opts.format = TFJOB_FORMAT_YAML;
	tfjob_job *fy = NULL;
	ck_assert_int_eq(tfjob_job_parse(&fy, json_text + 4, strlen(json_text + 4), &opts, NULL), 0);
	ck_assert_str_eq(tfjob_job_name(fy), "j");
	tfjob_job_free(fy);

	/* Forcing JSON on YAML text is a syntax error with a position. */
	opts.format = TFJOB_FORMAT_JSON;
	opts.filename = "forced.json";
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_job_parse(&fy, minimal_yaml, strlen(minimal_yaml), &opts, &err), TFJOB_EPARSE);
	ck_assert_int_eq(tfjob_error_line(err), 1);
	ck_assert_int_eq(tfjob_error_column(err), 1);
	ck_assert_str_eq(tfjob_error_file(err), "forced.json");
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "forced.json:1:1:"));
	tfjob_error_free(err);

	/* The text need not be NUL-terminated: only len bytes are read. */
	char *copy = malloc(strlen(minimal_yaml) + 10);
	memcpy(copy, minimal_yaml, strlen(minimal_yaml));
	memcpy(copy + strlen(minimal_yaml), "garbage: [", 10);
	tfjob_job *nt = NULL;
	ck_assert_int_eq(tfjob_job_parse(&nt, copy, strlen(minimal_yaml), NULL, NULL), 0);
	tfjob_job_free(nt);
	free(copy);
}
END_TEST

START_TEST(multi_document_streams)
{
	static const char *const stream =
		"---\n" TFJOB_HEAD "---\n"
		"# an empty document\n"
		"---\n"
		"apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata:\n  name: second\n"
		"...\n"
		"---\n"
		"apiVersion: v1\nkind: List\nitems:\n"
		"  - {apiVersion: kubeflow.org/v1, kind: TFJob, metadata: {name: third}}\n"
		"  - {apiVersion: kubeflow.org/v1, kind: TFJob, metadata: {name: fourth}}\n"
		"---\n";
	tfjob_job **jobs = NULL;
	size_t n = 0;
	tfjob_error *err = NULL;
	int rc = tfjob_job_parse_all(&jobs, &n, stream, strlen(stream), NULL, &err);
	ck_assert_msg(rc == 0, "%s", tfjob_error_message(err));
	ck_assert_uint_eq(n, 4);
	ck_assert_str_eq(tfjob_job_name(jobs[0]), "t");
	ck_assert_str_eq(tfjob_job_name(jobs[1]), "second");
	ck_assert_str_eq(tfjob_job_name(jobs[2]), "third");
	ck_assert_str_eq(tfjob_job_name(jobs[3]), "fourth");
	tfjob_job_array_free(jobs, n);

	/* tfjob_job_parse wants exactly one. */
	tfjob_job *one = NULL;
	ck_assert_int_eq(tfjob_job_parse(&one, stream, strlen(stream), NULL, &err), TFJOB_EPARSE);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "found 3"));
	tfjob_error_free(err);
	err = NULL;

	/* JSON: an array, and concatenated values. */
	static const char *const arr = "[{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"a\"}},"
	                               " {\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"b\"}}]";
	ck_assert_int_eq(tfjob_job_parse_all(&jobs, &n, arr, strlen(arr), NULL, NULL), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(tfjob_job_name(jobs[1]), "b");
	tfjob_job_array_free(jobs, n);
	static const char *const cat = "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"a\"}}\n"
	                               "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJobList\",\"items\":[]}\n"
	                               "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"c\"}}\n";
	ck_assert_int_eq(tfjob_job_parse_all(&jobs, &n, cat, strlen(cat), NULL, NULL), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_str_eq(tfjob_job_name(jobs[1]), "c");
	tfjob_job_array_free(jobs, n);

	/* Only empty documents: success with no jobs. */
	ck_assert_int_eq(tfjob_job_parse_all(&jobs, &n, "---\n---\n", 8, NULL, NULL), 0);
	ck_assert_uint_eq(n, 0);
	tfjob_job_array_free(jobs, n);

	/* A List holding a Pod: the Pod is not a TFJob; nothing is returned. */
	static const char *const mixed = "kind: List\napiVersion: v1\nitems:\n  - {apiVersion: v1, kind: Pod}\n";
	jobs = (tfjob_job **)&err; /* must be reset to NULL on error */
	ck_assert_int_eq(tfjob_job_parse_all(&jobs, &n, mixed, strlen(mixed), NULL, &err), TFJOB_ESCHEMA);
	ck_assert_ptr_null(jobs);
	ck_assert_uint_eq(n, 0);
	tfjob_error_free(err);

	/* The documents limit. */
	tfjob_parse_options opts = TFJOB_PARSE_OPTIONS_INIT;
	opts.max_documents = 2;
	err = NULL;
	ck_assert_int_eq(tfjob_job_parse_all(&jobs, &n, stream, strlen(stream), &opts, &err), TFJOB_ELIMIT);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "more than 2 documents"));
	tfjob_error_free(err);
	err = NULL;
	ck_assert_int_eq(tfjob_job_parse_all(&jobs, &n, cat, strlen(cat), &opts, &err), TFJOB_ELIMIT);
	tfjob_error_free(err);
}
END_TEST

/* ---- YAML features ---- */

START_TEST(anchors_aliases_merge_keys)
{
	static const char *const text = TFJOB_HEAD
		"spec:\n"
		"  tfReplicaSpecs:\n"
		"    PS: &base\n"
		"      replicas: 1\n"
		"      restartPolicy: OnFailure\n"
		"      template: &tmpl\n"
		"        spec:\n"
		"          containers: [{name: tensorflow, image: &img 'tf:2'}]\n"
		"    Worker:\n"
		"      <<: *base\n"
		"      replicas: 3\n"
		"    Evaluator:\n"
		"      <<: [{restartPolicy: Never, replicas: 7}, *base]\n"
		"      template: *tmpl\n"
		"  x:\n"
		"    image: *img\n"
		"    merged: {<<: {a: 1, b: 2}, b: 3}\n";
	tfjob_job *job = tu_parse(text);
	int64_t r;
	ck_assert_int_eq(tfjob_job_replicas(&r, job, "PS"), 0);
	ck_assert_int_eq(r, 1);
	ck_assert_int_eq(tfjob_job_replicas(&r, job, "Worker"), 0);
	ck_assert_int_eq(r, 3); /* explicit key wins over the merged one */
	ck_assert_str_eq(tfjob_job_restart_policy(job, "Worker"), "OnFailure");
	/* In a merge sequence the earlier mapping wins. */
	ck_assert_int_eq(tfjob_job_replicas(&r, job, "Evaluator"), 0);
	ck_assert_int_eq(r, 7);
	ck_assert_str_eq(tfjob_job_restart_policy(job, "Evaluator"), "Never");
	json_t *root = job_json(job);
	json_t *x = json_object_get(json_object_get(root, "spec"), "x");
	char *xs = json_dumps(x, JSON_COMPACT | JSON_PRESERVE_ORDER);
	ck_assert_str_eq(xs, "{\"image\":\"tf:2\",\"merged\":{\"b\":3,\"a\":1}}");
	free(xs);
	/* Aliased subtrees are copies: defaulting one replica does not touch another. */
	ck_assert_int_eq(tfjob_job_apply_defaults(job, NULL, NULL), 0);
	json_decref(root);
	root = job_json(job);
	json_t *specs = json_object_get(json_object_get(root, "spec"), "tfReplicaSpecs");
	for (const char *const *t = (const char *const[]){ "PS", "Worker", "Evaluator", NULL }; *t; t++) {
		json_t *ports = json_object_get(
			json_array_get(json_object_get(json_object_get(json_object_get(json_object_get(specs, *t), "template"), "spec"),
			                               "containers"),
			               0),
			"ports");
		ck_assert_msg(json_array_size(ports) == 1, "%s has %zu ports", *t, json_array_size(ports));
	}
	json_decref(root);
	tfjob_job_free(job);

	/* A recursive alias and a non-mapping merge are syntax errors. */
	tfjob_error *err = tu_parse_fail("a: &x [1, *x]\n", 14, TFJOB_EPARSE);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "<input>:1:11: alias 'x' refers to a node that contains it"));
	tfjob_error_free(err);
	err = tu_parse_fail("a: {<<: 3}\n", 11, TFJOB_EPARSE);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "merge key"));
	tfjob_error_free(err);
}
END_TEST

/* Each plain (or tagged) scalar and the JSON it must become, as go-yaml v2 + sigs.k8s.io/yaml give it. */
static const struct {
	const char *yaml;
	const char *json;
} scalars[] = {
	{ "yes", "true" },       { "Yes", "true" },     { "YES", "true" },    { "y", "true" },     { "on", "true" },
	{ "ON", "true" },        { "true", "true" },    { "True", "true" },   { "no", "false" },   { "N", "false" },
	{ "off", "false" },      { "Off", "false" },    { "FALSE", "false" }, { "~", "null" },     { "null", "null" },
	{ "Null", "null" },      { "NULL", "null" },    { "", "null" },       { "0x1F", "31" },    { "0X1f", "31" },
	{ "-0x10", "-16" },      { "+0x10", "16" },     { "0o17", "15" },     { "017", "15" },     { "0b101", "5" },
	{ "-0b11", "-3" },       { "018", "18" },       { "08", "8" },        { "1_000", "1000" }, { "0x_1F", "31" },
	{ "_1", "\"_1\"" },      { "1_", "1" },         { "0", "0" },         { "-0", "0" },       { "00", "0" },
	{ "+12", "12" },         { "1.5", "1.5" },      { ".5", "0.5" },      { "+.5", "0.5" },    { "1e3", "1000" },
	{ "2.0", "2" },          { "1.", "1" },         { "0.1e+2", "10" },   { "1_0.5", "10.5" }, { "-2.5e-3", "-0.0025" },
	{ "9223372036854775807", "9223372036854775807" },
	{ "-9223372036854775808", "-9223372036854775808" },
	{ "\"1\"", "\"1\"" },    { "'0x10'", "\"0x10\"" }, { "\"yes\"", "\"yes\"" }, { "'~'", "\"~\"" },
	{ "\"null\"", "\"null\"" }, { "!!str 12", "\"12\"" }, { "!!int \"12\"", "12" }, { "!!str yes", "\"yes\"" },
	{ "2001-12-14", "\"2001-12-14\"" }, /* timestamps stay strings when decoded into interface{} */
	{ "1:20", "\"1:20\"" },  { "190:20:30", "\"190:20:30\"" }, { ".inf_x", "\".inf_x\"" }, { "+", "\"+\"" },
	{ "0x", "\"0x\"" },      { "1e", "\"1e\"" },    { "yes please", "\"yes please\"" }, { "12abc", "\"12abc\"" },
	{ "._5", "\"._5\"" },    { "-.NaN", "\"-.NaN\"" },    { "\"caf\\u00e9\"", "\"caf\xc3\xa9\"" }, { "'it''s'", "\"it's\"" },
};

START_TEST(yaml_1_1_scalar_resolution)
{
	for (size_t i = 0; i < sizeof(scalars) / sizeof(scalars[0]); i++) {
		char text[512];
		snprintf(text, sizeof(text), TFJOB_HEAD "x: %s\n", scalars[i].yaml);
		tfjob_job *job = tu_parse(text);
		char *out = NULL;
		ck_assert_int_eq(tfjob_job_to_json(&out, job, TFJOB_JSON_COMPACT, NULL), 0);
		/* x is the last key: the output ends with ,"x":VALUE} */
		char want[512];
		snprintf(want, sizeof(want), ",\"x\":%s}", scalars[i].json);
		size_t ol = strlen(out), wl = strlen(want);
		ck_assert_msg(ol >= wl && !strcmp(out + ol - wl, want), "x: %s gave %s, expected %s", scalars[i].yaml, out, want);
		tfjob_free(out);
		tfjob_job_free(job);
	}
	/* Keys: booleans and integers take their canonical text, as sigs.k8s.io/yaml writes them. */
	tfjob_job *job = tu_parse(TFJOB_HEAD "x: {yes: 1, 0x10: 2, 1.5: 3, \"on\": 4, Worker: 5}\n");
	json_t *root = job_json(job);
	char *got = json_dumps(json_object_get(root, "x"), JSON_COMPACT | JSON_PRESERVE_ORDER);
	ck_assert_str_eq(got, "{\"true\":1,\"16\":2,\"1.5\":3,\"on\":4,\"Worker\":5}");
	free(got);
	json_decref(root);
	tfjob_job_free(job);
	/* Infinity and NaN cannot become JSON. */
	tfjob_error *err = tu_parse_fail(TFJOB_HEAD "x: .inf\n", strlen(TFJOB_HEAD "x: .inf\n"), TFJOB_EPARSE);
	ck_assert_int_eq(tfjob_error_line(err), 5);
	ck_assert_int_eq(tfjob_error_column(err), 4);
	tfjob_error_free(err);
	err = tu_parse_fail(TFJOB_HEAD "x: .NaN\n", strlen(TFJOB_HEAD "x: .NaN\n"), TFJOB_EPARSE);
	tfjob_error_free(err);
	err = tu_parse_fail(TFJOB_HEAD "x: !!int abc\n", strlen(TFJOB_HEAD "x: !!int abc\n"), TFJOB_EPARSE);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "explicit tag"));
	tfjob_error_free(err);
}
END_TEST

START_TEST(duplicate_keys_rejected)
{
	tfjob_error *err = tu_parse_fail(TFJOB_HEAD "metadata: {}\n", strlen(TFJOB_HEAD "metadata: {}\n"), TFJOB_EPARSE);
	ck_assert_int_eq(tfjob_error_line(err), 5);
	ck_assert_int_eq(tfjob_error_column(err), 1);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "<input>:5:1: duplicate key 'metadata'"));
	tfjob_error_free(err);
	/* Keys that resolve to the same text are duplicates too (yes and true are both "true"). */
	err = tu_parse_fail(TFJOB_HEAD "x: {yes: 1, true: 2}\n", strlen(TFJOB_HEAD "x: {yes: 1, true: 2}\n"), TFJOB_EPARSE);
	tfjob_error_free(err);
	const char *json = "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"kind\":\"TFJob\"}";
	err = tu_parse_fail(json, strlen(json), TFJOB_EPARSE);
	ck_assert_int_eq(tfjob_error_column(err), 48);
	tfjob_error_free(err);
}
END_TEST

/* As Kubernetes' YAML reader: a null key is an error; !!binary is decoded (differential tests Y2, Y5). */
START_TEST(null_keys_and_binary_values)
{
	static const char *const null_keys[] = { "x: {~: 1}\n", "x:\n  null: 1\n", "x: {Null: 1}\n" };
	for (size_t i = 0; i < sizeof(null_keys) / sizeof(null_keys[0]); i++) {
		char text[256];
		snprintf(text, sizeof(text), TFJOB_HEAD "%s", null_keys[i]);
		tfjob_error *err = tu_parse_fail(text, strlen(text), TFJOB_EPARSE);
		ck_assert_msg(strstr(tfjob_error_message(err), "is null; quote it") != NULL, "%s", tfjob_error_message(err));
		ck_assert_int_eq(tfjob_error_line(err), i == 1 ? 6 : 5); /* the key's own line */
		tfjob_error_free(err);
	}
	/* Quoted, "~" is an ordinary key. */
	tfjob_job *job = tu_parse(TFJOB_HEAD "spec:\n  x: {\"~\": 1}\n  b: !!binary aGVs\n    bG8=\n"
	                                     "  e: !!binary \"\"\n");
	char *json = NULL;
	ck_assert_int_eq(tfjob_job_to_json(&json, job, 0, NULL), 0);
	ck_assert_ptr_nonnull(strstr(json, "\"x\":{\"~\":1}"));
	ck_assert_ptr_nonnull(strstr(json, "\"b\":\"hello\""));
	ck_assert_ptr_nonnull(strstr(json, "\"e\":\"\""));
	tfjob_free(json);
	tfjob_job_free(job);
	/* "\/" is a YAML 1.2 escape that Kubernetes' reader refuses (differential tests Y3); "\\/" is fine. */
	tfjob_error *esc = tu_parse_fail(TFJOB_HEAD "x: \"a\\/b\"\n", strlen(TFJOB_HEAD "x: \"a\\/b\"\n"), TFJOB_EPARSE);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(esc), "unknown escape character '/'"));
	ck_assert_int_eq(tfjob_error_line(esc), 5);
	ck_assert_int_eq(tfjob_error_column(esc), 6);
	tfjob_error_free(esc);
	tfjob_job_free(tu_parse(TFJOB_HEAD "x: \"a\\\\/b\"\ny: 'a\\/b'\n"));
	static const char *const bad_binary[] = { "x: !!binary \"%%\"\n", "x: !!binary AA==\n", "x: !!binary aGk=aGk=\n" };
	for (size_t i = 0; i < sizeof(bad_binary) / sizeof(bad_binary[0]); i++) {
		char text[256];
		snprintf(text, sizeof(text), TFJOB_HEAD "%s", bad_binary[i]);
		tfjob_error *err = tu_parse_fail(text, strlen(text), TFJOB_EPARSE);
		ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "!!binary value"));
		tfjob_error_free(err);
	}
}
END_TEST

/* ---- round trips ---- */

/* A template full of fields the library does not interpret, in jansson's compact form. */
#define TEMPLATE_JSON                                                                                                  \
	"{\"metadata\":{\"labels\":{\"app\":\"mnist\",\"tier\":\"x/y\"},\"annotations\":{\"sidecar.istio.io/inject\":\"false\"}}," \
	"\"spec\":{\"schedulerName\":\"volcano\",\"nodeSelector\":{\"gpu\":\"a100\"},\"tolerations\":[{\"key\":\"k\","          \
	"\"operator\":\"Exists\",\"effect\":\"NoSchedule\"}],\"containers\":[{\"name\":\"tensorflow\",\"image\":\"tf:2.15\","  \
	"\"args\":[\"--lr\",\"0.5\"],\"env\":[{\"name\":\"A\",\"value\":\"caf\xc3\xa9 \\\"q\\\"\"},{\"name\":\"B\",\"valueFrom\":" \
	"{\"fieldRef\":{\"fieldPath\":\"metadata.name\"}}}],\"ports\":[{\"name\":\"tfjob-port\",\"containerPort\":2222},"      \
	"{\"name\":\"metrics\",\"containerPort\":9090,\"protocol\":\"TCP\"}],\"resources\":{\"limits\":{\"nvidia.com/gpu\":1,"  \
	"\"memory\":\"1Gi\"},\"requests\":{\"cpu\":\"500m\"}},\"securityContext\":{\"runAsUser\":1000,\"readOnlyRootFilesystem\":true}," \
	"\"volumeMounts\":[{\"name\":\"d\",\"mountPath\":\"/data\"}],\"unknownContainerField\":{\"deep\":[1,2.5,null,false]}}]," \
	"\"volumes\":[{\"name\":\"d\",\"emptyDir\":{}}],\"affinity\":null,\"futurePodField\":[]}}"

#define METADATA_JSON                                                                                           \
	"{\"name\":\"rt\",\"namespace\":\"ns\",\"uid\":\"0a1b\",\"labels\":{\"a\":\"b\"},\"finalizers\":[\"x/y\"],"  \
	"\"managedFields\":[{\"manager\":\"kubectl\",\"fieldsV1\":{\"f:spec\":{}}}],\"resourceVersion\":\"42\"}"

#define STATUS_JSON                                                                                                 \
	"{\"conditions\":[{\"type\":\"Created\",\"status\":\"True\",\"reason\":\"TFJobCreated\",\"message\":\"TFJob rt is created.\"," \
	"\"lastUpdateTime\":\"2024-01-01T00:00:00Z\",\"lastTransitionTime\":\"2024-01-01T00:00:00Z\",\"extra\":7}],"        \
	"\"replicaStatuses\":{\"Worker\":{\"active\":1,\"selector\":\"a=b\",\"labelSelector\":{\"matchLabels\":{\"a\":\"b\"}}}}," \
	"\"startTime\":\"2024-01-01T00:00:00Z\",\"statusExtra\":{\"k\":[true]}}"

static const char *const roundtrip_json =
	"{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":" METADATA_JSON ","
	"\"spec\":{\"futureSpecField\":{\"a\":[1,{\"b\":null}]},\"runPolicy\":{\"cleanPodPolicy\":\"All\","
	"\"schedulingPolicy\":{\"minAvailable\":2,\"queue\":\"q\",\"futureSchedField\":1},\"futureRunField\":\"x\"},"
	"\"successPolicy\":\"AllWorkers\",\"tfReplicaSpecs\":{\"Worker\":{\"replicas\":2,\"restartPolicy\":\"OnFailure\","
	"\"futureReplicaField\":true,\"template\":" TEMPLATE_JSON "}}},\"status\":" STATUS_JSON ",\"topLevelExtra\":1}";

START_TEST(round_trip_keeps_uninterpreted_fields)
{
	for (int compat = 0; compat <= 1; compat++) {
		tfjob_job *job = tu_parse(roundtrip_json);
		tfjob_default_options dopts = TFJOB_DEFAULT_OPTIONS_INIT;
		dopts.compat = (tfjob_compat)compat;
		ck_assert_int_eq(tfjob_job_apply_defaults(job, &dopts, NULL), 0);
		char *out = NULL;
		ck_assert_int_eq(tfjob_job_to_json(&out, job, TFJOB_JSON_COMPACT, NULL), 0);
		/* Byte for byte, in place. */
		ck_assert_msg(strstr(out, "\"template\":" TEMPLATE_JSON) != NULL, "template changed:\n%s", out);
		ck_assert_msg(strstr(out, "\"metadata\":" METADATA_JSON) != NULL, "metadata changed:\n%s", out);
		ck_assert_msg(strstr(out, "\"status\":" STATUS_JSON) != NULL, "status changed:\n%s", out);
		ck_assert_ptr_nonnull(strstr(out, "\"futureSpecField\":{\"a\":[1,{\"b\":null}]}"));
		ck_assert_ptr_nonnull(strstr(out, "\"futureSchedField\":1},\"futureRunField\":\"x\""));
		ck_assert_ptr_nonnull(strstr(out, "\"futureReplicaField\":true"));
		ck_assert_ptr_nonnull(strstr(out, ",\"topLevelExtra\":1}"));
		/* The defaults found nothing to do here: the whole document is unchanged. */
		ck_assert_str_eq(out, roundtrip_json);
		tfjob_free(out);

		/* Status out and back in. */
		char *status = NULL;
		ck_assert_int_eq(tfjob_job_status_json(&status, job, TFJOB_JSON_COMPACT, NULL), 0);
		ck_assert_str_eq(status, STATUS_JSON);
		ck_assert_int_eq(tfjob_job_set_status_json(job, status, NULL), 0);
		tfjob_free(status);
		ck_assert_int_eq(tfjob_job_to_json(&out, job, TFJOB_JSON_COMPACT, NULL), 0);
		ck_assert_str_eq(out, roundtrip_json);
		tfjob_free(out);

		/* Clone is deep and equal. */
		tfjob_job *clone = NULL;
		ck_assert_int_eq(tfjob_job_clone(&clone, job, NULL), 0);
		tfjob_job_free(job);
		ck_assert_int_eq(tfjob_job_to_json(&out, clone, TFJOB_JSON_COMPACT, NULL), 0);
		ck_assert_str_eq(out, roundtrip_json);
		tfjob_free(out);
		tfjob_job_free(clone);
	}

	/* The same job written as YAML gives the same template, byte for byte. */
	static const char *const yaml = TFJOB_HEAD
		"spec:\n"
		"  tfReplicaSpecs:\n"
		"    worker:\n"
		"      template:\n"
		"        metadata:\n"
		"          labels: {app: mnist, tier: x/y}\n"
		"          annotations:\n"
		"            sidecar.istio.io/inject: \"false\"\n"
		"        spec:\n"
		"          schedulerName: volcano\n"
		"          nodeSelector: {gpu: a100}\n"
		"          tolerations:\n"
		"          - {key: k, operator: Exists, effect: NoSchedule}\n"
		"          containers:\n"
		"          - name: tensorflow\n"
		"            image: tf:2.15\n"
		"            args: [--lr, \"0.5\"]\n"
		"            env:\n"
		"            - name: A\n"
		"              value: 'caf\xc3\xa9 \"q\"'\n"
		"            - name: B\n"
		"              valueFrom:\n"
		"                fieldRef: {fieldPath: metadata.name}\n"
		"            ports:\n"
		"            - {name: tfjob-port, containerPort: 2222}\n"
		"            - name: metrics\n"
		"              containerPort: 9090\n"
		"              protocol: TCP\n"
		"            resources:\n"
		"              limits: {nvidia.com/gpu: 1, memory: 1Gi}\n"
		"              requests: {cpu: 500m}\n"
		"            securityContext: {runAsUser: 1000, readOnlyRootFilesystem: yes}\n"
		"            volumeMounts: [{name: d, mountPath: /data}]\n"
		"            unknownContainerField:\n"
		"              deep: [1, 2.5, ~, off]\n"
		"          volumes: [{name: d, emptyDir: {}}]\n"
		"          affinity:\n"
		"          futurePodField: []\n";
	tfjob_job *job = tu_parse(yaml);
	ck_assert_int_eq(tfjob_job_apply_defaults(job, NULL, NULL), 0);
	char *out = NULL;
	ck_assert_int_eq(tfjob_job_to_json(&out, job, TFJOB_JSON_COMPACT, NULL), 0);
	ck_assert_msg(strstr(out, "\"Worker\":{\"template\":" TEMPLATE_JSON ",\"replicas\":1,\"restartPolicy\":\"Never\"}") != NULL,
	              "YAML template differs:\n%s", out);
	tfjob_free(out);
	tfjob_job_free(job);
}
END_TEST

/*
 * Numbers, escapes and key order in a pod template: canonical JSON comes out byte for byte
 * (reals each in their shortest form, whatever else the document holds); other spellings
 * come out as the same values (\u00e9 as UTF-8, 2.50 as 2.5, an integer beyond int64 as the
 * float64 Kubernetes reads it as).
 */
#define NUMBERS_TEMPLATE_IN                                                                                         \
	"{\"spec\":{\"zeta\":{\"reals\":[1.0,1000.0,0.1,0.30000000000000004,1e-7,-0.0,1.5e300,2.5,123456.789,5e-324],"    \
	"\"ints\":[0,-1,9223372036854775807,-9223372036854775808],\"big\":[18446744073709551616,-18446744073709551617]," \
	"\"spelled\":[2.50,1E3,1000.0,0.10],\"text\":\"\\u00e9\\ud83d\\ude00\\u0001\\/\\t\\\"\"},"                       \
	"\"containers\":[{\"name\":\"tensorflow\",\"image\":\"i\",\"ports\":[{\"name\":\"tfjob-port\",\"containerPort\":2222}]}]," \
	"\"alpha\":{},\"b\":[],\"a\":null},\"metadata\":{\"z\":1,\"a\":2}}"
#define NUMBERS_TEMPLATE_OUT                                                                                        \
	"{\"spec\":{\"zeta\":{\"reals\":[1.0,1000.0,0.1,0.30000000000000004,1e-7,-0.0,1.5e300,2.5,123456.789,5e-324],"    \
	"\"ints\":[0,-1,9223372036854775807,-9223372036854775808],\"big\":[1.8446744073709552e19,-1.8446744073709552e19]," \
	"\"spelled\":[2.5,1000.0,1000.0,0.1],\"text\":\"\xc3\xa9\xf0\x9f\x98\x80\\u0001/\\t\\\"\"},"                          \
	"\"containers\":[{\"name\":\"tensorflow\",\"image\":\"i\",\"ports\":[{\"name\":\"tfjob-port\",\"containerPort\":2222}]}]," \
	"\"alpha\":{},\"b\":[],\"a\":null},\"metadata\":{\"z\":1,\"a\":2}}"

START_TEST(round_trip_numbers_and_escapes)
{
	static const char *const head = "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"n\"},"
	                                "\"spec\":{\"tfReplicaSpecs\":{\"Worker\":{\"replicas\":2,\"restartPolicy\":\"Never\","
	                                "\"template\":";
	char text[4096];
	snprintf(text, sizeof(text), "%s%s}}}}", head, NUMBERS_TEMPLATE_IN);
	for (int compat = 0; compat <= 1; compat++) {
		tfjob_job *job = tu_parse(text);
		tfjob_default_options dopts = TFJOB_DEFAULT_OPTIONS_INIT;
		dopts.compat = (tfjob_compat)compat;
		ck_assert_int_eq(tfjob_job_apply_defaults(job, &dopts, NULL), 0);
		for (unsigned int flags = 0; flags <= TFJOB_JSON_PRETTY; flags++) {
			char *out = NULL;
			ck_assert_int_eq(tfjob_job_to_json(&out, job, flags, NULL), 0);
			/* Compact: the template byte for byte. Pretty: the same text once re-read compactly. */
			tfjob_job *again = tu_parse(out);
			char *compact = NULL;
			ck_assert_int_eq(tfjob_job_to_json(&compact, again, TFJOB_JSON_COMPACT, NULL), 0);
			ck_assert_msg(strstr(compact, "\"template\":" NUMBERS_TEMPLATE_OUT) != NULL, "template changed:\n%s",
			              compact);
			tfjob_free(compact);
			tfjob_job_free(again);
			tfjob_free(out);
		}
		/* The rendered pod carries the template's fields the same way. */
		tfjob_render_options ropts = TFJOB_RENDER_OPTIONS_INIT;
		ropts.compat = (tfjob_compat)compat;
		char *pod = NULL;
		ck_assert_int_eq(tfjob_render_pod(&pod, job, "Worker", 1, &ropts, TFJOB_JSON_COMPACT, NULL), 0);
		ck_assert_msg(strstr(pod, "\"zeta\":{\"reals\":[1.0,1000.0,0.1,0.30000000000000004,1e-7,-0.0,1.5e300,2.5,"
		                          "123456.789,5e-324]") != NULL, "pod:\n%s", pod);
		ck_assert_ptr_nonnull(strstr(pod, "\"big\":[1.8446744073709552e19,-1.8446744073709552e19]"));
		tfjob_free(pod);
		tfjob_job_free(job);
	}
}
END_TEST

/* ---- typed accessors ---- */

START_TEST(typed_accessors)
{
	static const char *const text =
		"apiVersion: kubeflow.org/v1\nkind: TFJob\n"
		"metadata: {name: acc, namespace: team, uid: 1234-abcd, generateName: acc-}\n"
		"spec:\n"
		"  enableDynamicWorker: true\n"
		"  successPolicy: AllWorkers\n"
		"  runPolicy:\n"
		"    cleanPodPolicy: All\n"
		"    ttlSecondsAfterFinished: 100\n"
		"    activeDeadlineSeconds: 3600\n"
		"    backoffLimit: 3\n"
		"    suspend: true\n"
		"    managedBy: kueue.x-k8s.io/multikueue\n"
		"    schedulingPolicy: {minAvailable: 3, queue: q1, priorityClass: high, scheduleTimeoutSeconds: 60}\n"
		"  tfReplicaSpecs:\n"
		"    Chief: {replicas: 1, restartPolicy: ExitCode}\n"
		"    PS: {replicas: 2}\n"
		"    Worker: {replicas: 4, restartPolicy: OnFailure}\n"
		"status:\n"
		"  startTime: '2024-05-01T10:00:00Z'\n"
		"  completionTime: '2024-05-01T11:00:00Z'\n"
		"  conditions:\n"
		"  - {type: Created, status: 'True', reason: TFJobCreated, message: created}\n"
		"  - {type: Running, status: 'False', reason: TFJobRunning}\n"
		"  - {type: Succeeded, status: 'True', reason: TFJobSucceeded, message: done}\n";
	tfjob_job *job = tu_parse(text);
	ck_assert_str_eq(tfjob_job_name(job), "acc");
	ck_assert_str_eq(tfjob_job_namespace(job), "team");
	ck_assert_str_eq(tfjob_job_uid(job), "1234-abcd");
	ck_assert_str_eq(tfjob_job_generate_name(job), "acc-");
	ck_assert_uint_eq(tfjob_job_replica_type_count(job), 3);
	ck_assert_str_eq(tfjob_job_replica_type(job, 0), "Chief");
	ck_assert_str_eq(tfjob_job_replica_type(job, 1), "PS");
	ck_assert_str_eq(tfjob_job_replica_type(job, 2), "Worker");
	ck_assert_ptr_null(tfjob_job_replica_type(job, 3));
	int64_t v = -1;
	ck_assert_int_eq(tfjob_job_replicas(&v, job, "Worker"), 0);
	ck_assert_int_eq(v, 4);
	ck_assert_int_eq(tfjob_job_replicas(&v, job, "worker"), TFJOB_ENOTFOUND); /* exact key match */
	ck_assert_int_eq(v, 4);
	ck_assert_int_eq(tfjob_job_replicas(&v, job, NULL), TFJOB_ENOTFOUND);
	ck_assert_int_eq(tfjob_job_replicas(NULL, job, "Worker"), TFJOB_EINVAL);
	ck_assert_str_eq(tfjob_job_restart_policy(job, "Chief"), "ExitCode");
	ck_assert_ptr_null(tfjob_job_restart_policy(job, "PS"));
	ck_assert_str_eq(tfjob_job_clean_pod_policy(job), "All");
	ck_assert_int_eq(tfjob_job_ttl_seconds_after_finished(&v, job), 0);
	ck_assert_int_eq(v, 100);
	ck_assert_int_eq(tfjob_job_active_deadline_seconds(&v, job), 0);
	ck_assert_int_eq(v, 3600);
	ck_assert_int_eq(tfjob_job_backoff_limit(&v, job), 0);
	ck_assert_int_eq(v, 3);
	ck_assert_int_eq(tfjob_job_is_suspended(job), 1);
	ck_assert_str_eq(tfjob_job_managed_by(job), "kueue.x-k8s.io/multikueue");
	ck_assert_int_eq(tfjob_job_min_available(&v, job), 0);
	ck_assert_int_eq(v, 3);
	ck_assert_str_eq(tfjob_job_queue(job), "q1");
	ck_assert_str_eq(tfjob_job_priority_class(job), "high");
	ck_assert_int_eq(tfjob_job_schedule_timeout_seconds(&v, job), 0);
	ck_assert_int_eq(v, 60);
	ck_assert_str_eq(tfjob_job_success_policy(job), "AllWorkers");
	ck_assert_int_eq(tfjob_job_enable_dynamic_worker(job), 1);
	ck_assert_uint_eq(tfjob_job_condition_count(job), 3);
	ck_assert_str_eq(tfjob_job_condition_type(job, 1), "Running");
	ck_assert_ptr_null(tfjob_job_condition_type(job, 3));
	ck_assert_str_eq(tfjob_job_condition_status(job, "Running"), "False");
	ck_assert_str_eq(tfjob_job_condition_reason(job, "Succeeded"), "TFJobSucceeded");
	ck_assert_str_eq(tfjob_job_condition_message(job, "Created"), "created");
	ck_assert_ptr_null(tfjob_job_condition_message(job, "Running"));
	ck_assert_ptr_null(tfjob_job_condition_status(job, "Failed"));
	ck_assert_str_eq(tfjob_job_start_time(job), "2024-05-01T10:00:00Z");
	ck_assert_str_eq(tfjob_job_completion_time(job), "2024-05-01T11:00:00Z");
	ck_assert_int_eq(tfjob_job_is_finished(job), 1);

	/* set_status_json: replace, wrong shape, bad JSON, null removes. */
	ck_assert_int_eq(tfjob_job_set_status_json(job, "{\"conditions\":[{\"type\":\"Failed\",\"status\":\"True\"}]}", NULL), 0);
	ck_assert_str_eq(tfjob_job_condition_status(job, "Failed"), "True");
	ck_assert_ptr_null(tfjob_job_start_time(job));
	ck_assert_int_eq(tfjob_job_is_finished(job), 1);
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_job_set_status_json(job, "[1]", &err), TFJOB_ESCHEMA);
	tfjob_error_free(err);
	err = NULL;
	ck_assert_int_eq(tfjob_job_set_status_json(job, "{\"a\":", &err), TFJOB_EPARSE);
	ck_assert_int_eq(tfjob_error_line(err), 1);
	tfjob_error_free(err);
	ck_assert_str_eq(tfjob_job_condition_status(job, "Failed"), "True"); /* unchanged on error */
	ck_assert_int_eq(tfjob_job_set_status_json(job, "null", NULL), 0);
	char *status = NULL;
	ck_assert_int_eq(tfjob_job_status_json(&status, job, 0, NULL), 0);
	ck_assert_str_eq(status, "{}");
	tfjob_free(status);
	ck_assert_int_eq(tfjob_job_is_finished(job), 0);
	ck_assert_int_eq(tfjob_job_set_status_json(job, NULL, NULL), TFJOB_EINVAL);
	tfjob_job_free(job);

	/* Absent and mistyped fields read as absent. */
	job = tu_parse("apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: [x]}\n"
	               "spec: {runPolicy: {backoffLimit: '3', suspend: 'true'}, tfReplicaSpecs: {Worker: {replicas: 1.5}}}\n");
	ck_assert_ptr_null(tfjob_job_name(job));
	ck_assert_ptr_null(tfjob_job_namespace(job));
	ck_assert_int_eq(tfjob_job_backoff_limit(&v, job), TFJOB_ENOTFOUND);
	ck_assert_int_eq(tfjob_job_is_suspended(job), 0);
	/* the deprecated old name reads the same (kept for the ABI) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	ck_assert_int_eq(tfjob_job_suspend(job), tfjob_job_is_suspended(job));
#pragma GCC diagnostic pop
	ck_assert_int_eq(tfjob_job_replicas(&v, job, "Worker"), TFJOB_ENOTFOUND);
	ck_assert_int_eq(tfjob_job_ttl_seconds_after_finished(&v, job), TFJOB_ENOTFOUND);
	ck_assert_ptr_null(tfjob_job_clean_pod_policy(job));
	ck_assert_uint_eq(tfjob_job_condition_count(job), 0);
	ck_assert_int_eq(tfjob_job_is_finished(job), 0);
	tfjob_job_free(job);

	/* NULL handles. */
	ck_assert_ptr_null(tfjob_job_name(NULL));
	ck_assert_uint_eq(tfjob_job_replica_type_count(NULL), 0);
	ck_assert_int_eq(tfjob_job_is_finished(NULL), 0);
	tfjob_job_free(NULL);
	tfjob_job_array_free(NULL, 3);
	char *out = NULL;
	ck_assert_int_eq(tfjob_job_to_json(&out, NULL, 0, NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_job_parse(NULL, "x", 1, NULL, NULL), TFJOB_EINVAL);
}
END_TEST

START_TEST(options_versions)
{
	tfjob_parse_options opts;
	ck_assert_int_eq(tfjob_parse_options_init(&opts, TFJOB_PARSE_OPTIONS_VERSION), 0);
	ck_assert_uint_eq(opts.version, TFJOB_PARSE_OPTIONS_VERSION);
	ck_assert_ptr_null(opts.filename);
	ck_assert_int_eq(tfjob_parse_options_init(&opts, 99), TFJOB_EVERSION);
	ck_assert_int_eq(tfjob_parse_options_init(&opts, 0), TFJOB_EVERSION);
	ck_assert_int_eq(tfjob_parse_options_init(NULL, 1), TFJOB_EINVAL);
	opts.version = 99;
	tfjob_job *job = NULL;
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_job_parse(&job, minimal_yaml, strlen(minimal_yaml), &opts, &err), TFJOB_EVERSION);
	ck_assert_ptr_null(job);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "tfjob_parse_options version 99"));
	tfjob_error_free(err);
	err = NULL;
	tfjob_job **jobs = NULL;
	size_t n = 0;
	ck_assert_int_eq(tfjob_job_parse_all(&jobs, &n, minimal_yaml, strlen(minimal_yaml), &opts, &err), TFJOB_EVERSION);
	tfjob_error_free(err);
	tfjob_parse_options_init(&opts, 1);
	opts.format = (tfjob_format)7;
	ck_assert_int_eq(tfjob_job_parse(&job, minimal_yaml, strlen(minimal_yaml), &opts, NULL), TFJOB_EINVAL);
}
END_TEST

/* first_line (version 2): a document cut out of a stream reports the lines of the whole file. */
START_TEST(first_line_of_a_document)
{
	tfjob_parse_options opts = TFJOB_PARSE_OPTIONS_INIT;
	opts.filename = "x.yaml";
	opts.first_line = 40;
	tfjob_job *job = NULL;
	tfjob_error *err = NULL;
	static const char syntax[] = "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: a\n";
	ck_assert_int_eq(tfjob_job_parse(&job, syntax, strlen(syntax), &opts, &err), TFJOB_EPARSE);
	ck_assert_int_eq(tfjob_error_line(err), 43);
	ck_assert_msg(!strncmp(tfjob_error_message(err), "x.yaml:43:", 10), "%s", tfjob_error_message(err));
	tfjob_error_free(err);
	err = NULL;
	static const char pod[] = "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\n";
	tfjob_job **jobs = NULL;
	size_t n = 0;
	ck_assert_int_eq(tfjob_job_parse_all(&jobs, &n, pod, strlen(pod), &opts, &err), TFJOB_ESCHEMA);
	ck_assert_str_eq(tfjob_error_message(err), "x.yaml:40: not a TFJob: expected apiVersion \"kubeflow.org/v1\" and kind "
	                                           "\"TFJob\", found apiVersion \"v1\" and kind \"Pod\"");
	ck_assert_int_eq(tfjob_error_line(err), 40);
	tfjob_error_free(err);
	err = NULL;
	/* Version 1 callers have no such field: lines count from 1, whole-document errors name none. */
	opts.version = 1;
	ck_assert_int_eq(tfjob_job_parse(&job, syntax, strlen(syntax), &opts, &err), TFJOB_EPARSE);
	ck_assert_int_eq(tfjob_error_line(err), 4);
	tfjob_error_free(err);
	err = NULL;
	ck_assert_int_eq(tfjob_job_parse(&job, pod, strlen(pod), &opts, &err), TFJOB_ESCHEMA);
	ck_assert_str_eq(tfjob_error_message(err), "x.yaml: not a TFJob: expected apiVersion \"kubeflow.org/v1\" and kind "
	                                           "\"TFJob\", found apiVersion \"v1\" and kind \"Pod\"");
	tfjob_error_free(err);
}
END_TEST

/* ---- the bad-input corpus ---- */

struct bad_case {
	const char *file;
	int code;  /* expected from tfjob_job_parse */
	int line;  /* 0: no position */
	int column;
	const char *needle; /* must appear in the message, after "FILE:LINE:COL: " */
};

static const struct bad_case bad_cases[] = {
	{ "yaml-syntax.yaml", TFJOB_EPARSE, 4, 5, "did not find expected ',' or '}'" },
	{ "yaml-indent.yaml", TFJOB_EPARSE, 5, 2, "did not find expected key" },
	{ "tab.yaml", TFJOB_EPARSE, 4, 1, "cannot start any token" },
	{ "duplicate-key.yaml", TFJOB_EPARSE, 5, 3, "duplicate key 'name'" },
	{ "unknown-anchor.yaml", TFJOB_EPARSE, 3, 11, "unknown anchor 'nowhere'" },
	{ "json-token.json", TFJOB_EPARSE, 2, 11, "invalid token near 'TFJob'" },
	{ "json-trailing-comma.json", TFJOB_EPARSE, 4, 1, "string or '}' expected" },
	{ "json-truncated.json", TFJOB_EPARSE, 4, 27, "end of file" },
	{ "json-duplicate.json", TFJOB_EPARSE, 1, 52, "duplicate object key" },
	{ "invalid-utf8.yaml", TFJOB_EPARSE, 4, 14, "invalid trailing UTF-8 octet" },
	{ "nul-byte.yaml", TFJOB_EPARSE, 2, 12, "control characters are not allowed" },
	{ "alias-bomb.yaml", TFJOB_ELIMIT, 12, 22, "more than 2000000 values" },
	{ "empty.yaml", TFJOB_EPARSE, 0, 0, "empty input" },
	{ "comments-only.yaml", TFJOB_EPARSE, 0, 0, "empty input" },
	{ "pod.yaml", TFJOB_ESCHEMA, 0, 0, "found apiVersion \"v1\" and kind \"Pod\"" },
	{ "scalar.yaml", TFJOB_ESCHEMA, 0, 0, "must be a mapping (object), found a scalar" },
};

START_TEST(bad_corpus)
{
	const struct bad_case *c = &bad_cases[_i];
	size_t len;
	char name[256];
	snprintf(name, sizeof(name), "bad/%s", c->file);
	char *text = tu_read_data(name, &len);
	int rc;
	tfjob_error *err = NULL;
	tfjob_job *job = parse_named(text, len, name, &rc, &err);
	ck_assert_msg(rc == c->code, "%s: expected %s, got %s: %s", c->file, tfjob_error_code_name(c->code),
	              tfjob_error_code_name(rc), tfjob_error_message(err));
	ck_assert_ptr_null(job);
	ck_assert_int_eq(tfjob_error_code_of(err), c->code);
	ck_assert_int_eq(tfjob_error_line(err), c->line);
	ck_assert_int_eq(tfjob_error_column(err), c->column);
	char prefix[300];
	if (c->line)
		snprintf(prefix, sizeof(prefix), "bad/%s:%d:%d: ", c->file, c->line, c->column);
	else
		snprintf(prefix, sizeof(prefix), "bad/%s: ", c->file);
	const char *msg = tfjob_error_message(err);
	ck_assert_msg(!strncmp(msg, prefix, strlen(prefix)), "%s: message '%s' does not start with '%s'", c->file, msg, prefix);
	ck_assert_msg(strstr(msg, c->needle) != NULL, "%s: message '%s' lacks '%s'", c->file, msg, c->needle);
	if (c->line)
		ck_assert_str_eq(tfjob_error_file(err), name);
	/* Time is bounded by the limits (the alias bomb stops at max_nodes copies); the test case's
	 * timeout guards against a hang without making the test depend on the machine's load. */
	tfjob_error_free(err);
	free(text);
}
END_TEST

START_TEST(alias_bomb_hits_alias_limit_fast)
{
	/* A wide bomb trips the alias count before any large expansion. */
	size_t cap = 64 * 1024, n = 0;
	char *text = malloc(cap);
	n += (size_t)snprintf(text + n, cap - n, TFJOB_HEAD "x:\n  a: &a [1]\n  b: [");
	for (int i = 0; i < 1500; i++)
		n += (size_t)snprintf(text + n, cap - n, "%s*a", i ? "," : "");
	n += (size_t)snprintf(text + n, cap - n, "]\n");
	tfjob_error *err = tu_parse_fail(text, n, TFJOB_ELIMIT);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "more than 1000 aliases"));
	ck_assert_int_eq(tfjob_error_line(err), 7);
	tfjob_error_free(err);
	/* The limit can be raised. */
	tfjob_parse_options opts = TFJOB_PARSE_OPTIONS_INIT;
	opts.max_aliases = 2000;
	tfjob_job *job = NULL;
	ck_assert_int_eq(tfjob_job_parse(&job, text, n, &opts, NULL), 0);
	tfjob_job_free(job);
	/* And lowered: the node limit. */
	opts.max_nodes = 100;
	err = NULL;
	ck_assert_int_eq(tfjob_job_parse(&job, text, n, &opts, &err), TFJOB_ELIMIT);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "more than 100 values"));
	tfjob_error_free(err);
	free(text);
}
END_TEST

static char *deep_text(const char *open, const char *close, int depth, const char *head, size_t *len)
{
	size_t hl = strlen(head), ol = strlen(open), cl = strlen(close);
	char *t = malloc(hl + (size_t)depth * (ol + cl) + 2);
	size_t n = 0;
	memcpy(t, head, hl);
	n = hl;
	for (int i = 0; i < depth; i++, n += ol)
		memcpy(t + n, open, ol);
	for (int i = 0; i < depth; i++, n += cl)
		memcpy(t + n, close, cl);
	t[n++] = '\n';
	t[n] = '\0';
	*len = n;
	return t;
}

START_TEST(deep_nesting_limited)
{
	size_t len;
	/* YAML flow sequences, 10,000 deep. */
	char *t = deep_text("[", "]", 10000, TFJOB_HEAD "x: ", &len);
	tfjob_error *err = tu_parse_fail(t, len, TFJOB_ELIMIT);
	ck_assert_int_eq(tfjob_error_line(err), 5);
	ck_assert_int_eq(tfjob_error_column(err), 3 + 128); /* the root mapping is level 1 */
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "<input>:5:131: nesting deeper than 128 levels"));
	tfjob_error_free(err);
	free(t);
	/* YAML flow mappings. */
	t = deep_text("{a: ", "}", 10000, TFJOB_HEAD "x: ", &len);
	err = tu_parse_fail(t, len, TFJOB_ELIMIT);
	tfjob_error_free(err);
	free(t);
	/* JSON, 10,000 deep. */
	t = deep_text("[", "]", 10000, "", &len);
	err = tu_parse_fail(t, len, TFJOB_ELIMIT);
	ck_assert_int_eq(tfjob_error_line(err), 1);
	ck_assert_int_eq(tfjob_error_column(err), 129);
	tfjob_error_free(err);
	free(t);
	t = deep_text("{\"a\":", "}", 10000, "", &len);
	err = tu_parse_fail(t, len, TFJOB_ELIMIT);
	tfjob_error_free(err);
	free(t);
	/* Block YAML nesting. */
	size_t cap = 300 * 1024, n = 0;
	t = malloc(cap);
	for (int i = 0; i < 200; i++)
		n += (size_t)snprintf(t + n, cap - n, "%*sk:\n", 2 * i, "");
	err = tu_parse_fail(t, n, TFJOB_ELIMIT);
	tfjob_error_free(err);
	free(t);
	/* Nesting built through aliases counts too. */
	cap = 64 * 1024;
	n = 0;
	t = malloc(cap);
	n += (size_t)snprintf(t + n, cap - n, TFJOB_HEAD "x:\n- &a0 [0]\n");
	for (int i = 1; i < 300; i++)
		n += (size_t)snprintf(t + n, cap - n, "- &a%d [*a%d]\n", i, i - 1);
	err = tu_parse_fail(t, n, TFJOB_ELIMIT);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "through alias"));
	tfjob_error_free(err);
	free(t);
	/* Exactly at the limit is fine; the limit is adjustable. */
	t = deep_text("[", "]", 127, TFJOB_HEAD "x: ", &len);
	tfjob_job *job = tu_parse(t);
	tfjob_job_free(job);
	tfjob_parse_options opts = TFJOB_PARSE_OPTIONS_INIT;
	opts.max_depth = 20;
	err = NULL;
	ck_assert_int_eq(tfjob_job_parse(&job, t, len, &opts, &err), TFJOB_ELIMIT);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "deeper than 20"));
	tfjob_error_free(err);
	free(t);
}
END_TEST

START_TEST(input_size_limit)
{
	size_t len = TFJOB_DEFAULT_MAX_INPUT_BYTES + 1;
	char *t = malloc(len);
	memset(t, ' ', len);
	memcpy(t, "apiVersion: kubeflow.org/v1\n", 28);
	tfjob_parse_options opts = TFJOB_PARSE_OPTIONS_INIT;
	opts.filename = "huge.yaml";
	tfjob_job *job = NULL;
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_job_parse(&job, t, len, &opts, &err), TFJOB_ELIMIT);
	ck_assert_str_eq(tfjob_error_message(err), "huge.yaml: input is 16777217 bytes, more than the limit of 16777216 bytes");
	tfjob_error_free(err);
	free(t);
	opts.max_input_bytes = 100;
	err = NULL;
	ck_assert_int_eq(tfjob_job_parse(&job, minimal_yaml, strlen(minimal_yaml), &opts, &err), TFJOB_ELIMIT);
	tfjob_error_free(err);
	opts.max_input_bytes = strlen(minimal_yaml);
	ck_assert_int_eq(tfjob_job_parse(&job, minimal_yaml, strlen(minimal_yaml), &opts, NULL), 0);
	tfjob_job_free(job);
}
END_TEST

START_TEST(nul_and_scalars_and_empty)
{
	/* NUL inside a YAML document and inside JSON text. */
	static const char yaml_nul[] = "apiVersion: kubeflow.org/v1\nkind: TF\0Job\n";
	tfjob_error *err = tu_parse_fail(yaml_nul, sizeof(yaml_nul) - 1, TFJOB_EPARSE);
	ck_assert_int_eq(tfjob_error_line(err), 2);
	ck_assert_int_eq(tfjob_error_column(err), 9);
	tfjob_error_free(err);
	static const char json_nul[] = "{\"apiVersion\":\"kubeflow\0.org/v1\"}";
	err = tu_parse_fail(json_nul, sizeof(json_nul) - 1, TFJOB_EPARSE);
	ck_assert_int_eq(tfjob_error_line(err), 1);
	tfjob_error_free(err);
	/* A JSON escape for NUL is refused too (NUL cannot be kept in C strings). */
	static const char json_esc[] = "{\"apiVersion\":\"a\\u0000b\"}";
	err = tu_parse_fail(json_esc, sizeof(json_esc) - 1, TFJOB_EPARSE);
	tfjob_error_free(err);
	/* Invalid UTF-8 in JSON. */
	static const char json_utf[] = "{\"a\":\"\xff\"}";
	err = tu_parse_fail(json_utf, sizeof(json_utf) - 1, TFJOB_EPARSE);
	ck_assert_int_eq(tfjob_error_line(err), 1);
	ck_assert_int_gt(tfjob_error_column(err), 0);
	tfjob_error_free(err);
	/* Scalars, sequences and nothing at all. */
	err = tu_parse_fail("42", 2, TFJOB_ESCHEMA);
	tfjob_error_free(err);
	err = tu_parse_fail("\"text\"", 6, TFJOB_ESCHEMA);
	tfjob_error_free(err);
	err = tu_parse_fail("- a\n- b\n", 8, TFJOB_ESCHEMA);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "found a sequence"));
	tfjob_error_free(err);
	err = tu_parse_fail("", 0, TFJOB_EPARSE);
	ck_assert_str_eq(tfjob_error_message(err), "<input>: empty input: no TFJob document");
	tfjob_error_free(err);
	err = tu_parse_fail("   \n\n", 5, TFJOB_EPARSE);
	tfjob_error_free(err);
	err = tu_parse_fail("~\n", 2, TFJOB_EPARSE);
	tfjob_error_free(err);
	err = tu_parse_fail("kind: TFJob\napiVersion: kubeflow.org/v2\n", 40, TFJOB_ESCHEMA);
	tfjob_error_free(err);
	err = tu_parse_fail("{}", 2, TFJOB_ESCHEMA);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "found apiVersion (missing) and kind (missing)"));
	tfjob_error_free(err);
	/* NULL data with a length is an argument error; NULL data with length 0 is empty input. */
	tfjob_job *job = NULL;
	ck_assert_int_eq(tfjob_job_parse(&job, NULL, 5, NULL, NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_job_parse(&job, NULL, 0, NULL, NULL), TFJOB_EPARSE);
}
END_TEST

START_TEST(wrong_types_reach_validation)
{
	size_t len;
	char *text = tu_read_data("bad/replicas-string.yaml", &len);
	tfjob_job *job = tu_parse(text);
	free(text);
	tfjob_field_errors *errs = tu_validate(job, TFJOB_COMPAT_DOCUMENTED, NULL);
	ck_assert_uint_eq(tfjob_field_errors_count(errs), 1);
	ck_assert_str_eq(tfjob_field_errors_field(errs, 0), "spec.tfReplicaSpecs[Worker].replicas");
	ck_assert_int_eq(tfjob_field_errors_type(errs, 0), TFJOB_FIELD_VALUE_TYPE_INVALID);
	ck_assert_str_eq(tfjob_field_errors_value(errs, 0), "\"three\"");
	ck_assert_ptr_nonnull(strstr(tfjob_field_errors_detail(errs, 0), "must be of type integer"));
	tfjob_field_errors_free(errs);
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_job_apply_defaults(job, NULL, &err), TFJOB_ESCHEMA);
	ck_assert_str_eq(tfjob_error_field(err), "spec.tfReplicaSpecs[Worker].replicas");
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "spec.tfReplicaSpecs[Worker].replicas: "));
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "must be of type integer"));
	tfjob_error_free(err);
	tfjob_job_free(job);

	text = tu_read_data("bad/replicas-2pow31.yaml", &len);
	job = tu_parse(text);
	free(text);
	for (int compat = 0; compat <= 1; compat++) {
		errs = tu_validate(job, (tfjob_compat)compat, NULL);
		ck_assert_uint_eq(tfjob_field_errors_count(errs), 1);
		ck_assert_str_eq(tfjob_field_errors_field(errs, 0), "spec.tfReplicaSpecs[Worker].replicas");
		ck_assert_int_eq(tfjob_field_errors_type(errs, 0), TFJOB_FIELD_VALUE_INVALID);
		ck_assert_str_eq(tfjob_field_errors_value(errs, 0), "2147483648");
		tfjob_field_errors_free(errs);
	}
	err = NULL;
	ck_assert_int_eq(tfjob_job_apply_defaults(job, NULL, &err), TFJOB_ESCHEMA);
	ck_assert_str_eq(tfjob_error_field(err), "spec.tfReplicaSpecs[Worker].replicas");
	tfjob_error_free(err);
	tfjob_job_free(job);

	/* int32 bounds exactly; int64 activeDeadlineSeconds takes more. */
	job = tu_parse(TFJOB_HEAD "spec:\n  runPolicy: {backoffLimit: -2147483648, activeDeadlineSeconds: 4294967296,"
	               " ttlSecondsAfterFinished: 2147483647}\n"
	               "  tfReplicaSpecs: {Worker: {template: {spec: {containers: [{name: tensorflow, image: x}]}}}}\n");
	errs = tu_validate(job, TFJOB_COMPAT_DOCUMENTED, NULL);
	ck_assert_uint_eq(tfjob_field_errors_count(errs), 0);
	tfjob_field_errors_free(errs);
	tfjob_job_free(job);
}
END_TEST

/*
 * JSON reals with an integral value at the schema's integer positions are integers, as the API
 * server takes them (kube-openapi accepts an integral float64 within +-(2^53 - 1) for an integer
 * and stores it as one): `"replicas": 2.0` is 2. Reals elsewhere keep their form; a fraction or
 * a value beyond 2^53 stays a wrong type.
 */
/* A JSON TFJob whose Worker replicas are written as `replicas` (a JSON number's text). */
static tfjob_job *job_with_replicas(const char *replicas)
{
	char t[512];
	snprintf(t, sizeof(t),
	         "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"r\"},\"spec\":{"
	         "\"tfReplicaSpecs\":{\"Worker\":{\"replicas\":%s,\"template\":{\"spec\":{\"containers\":[{"
	         "\"name\":\"tensorflow\",\"image\":\"i\"}]}}}}}}",
	         replicas);
	return tu_parse(t);
}

/* A real written with an exponent and no '.' is normalised too. */
START_TEST(integral_reals_with_exponent_only)
{
	static const char *const forms[] = { "2e0", "2E0", "20e-1", "0.2e1" };
	for (size_t i = 0; i < sizeof(forms) / sizeof(forms[0]); i++) {
		tfjob_job *job = job_with_replicas(forms[i]);
		int64_t v = 0;
		ck_assert_msg(tfjob_job_replicas(&v, job, "Worker") == 0, "replicas %s is not an integer", forms[i]);
		ck_assert_int_eq(v, 2);
		tfjob_job_free(job);
	}
}
END_TEST

START_TEST(integral_reals_at_integer_fields)
{
	static const char *const text =
		"{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"r\",\"x\":1.0},"
		"\"spec\":{\"runPolicy\":{\"backoffLimit\":3.0,\"activeDeadlineSeconds\":1e3,\"ttlSecondsAfterFinished\":-0.0,"
		"\"schedulingPolicy\":{\"minAvailable\":9007199254740991.0,\"minResources\":{\"cpu\":2.0}}},"
		"\"tfReplicaSpecs\":{\"Worker\":{\"replicas\":2.0,\"y\":2.0,\"template\":{\"spec\":{\"containers\":[{"
		"\"name\":\"tensorflow\",\"image\":\"i\",\"ports\":[{\"name\":\"tfjob-port\",\"containerPort\":2.5e3}],"
		"\"resources\":{\"limits\":{\"cpu\":4.0}},\"z\":[1.0]}]}}}}}}";
	tfjob_job *job = tu_parse(text);
	int64_t v = 0;
	ck_assert_int_eq(tfjob_job_replicas(&v, job, "Worker"), 0);
	ck_assert_int_eq(v, 2);
	ck_assert_int_eq(tfjob_job_backoff_limit(&v, job), 0);
	ck_assert_int_eq(v, 3);
	ck_assert_int_eq(tfjob_job_active_deadline_seconds(&v, job), 0);
	ck_assert_int_eq(v, 1000);
	ck_assert_int_eq(tfjob_job_ttl_seconds_after_finished(&v, job), 0);
	ck_assert_int_eq(v, 0);
	ck_assert_int_eq(tfjob_job_min_available(&v, job), 0);
	ck_assert_int_eq(v, 9007199254740991);
	tfjob_field_errors *errs = tu_validate(job, TFJOB_COMPAT_DOCUMENTED, NULL);
	/* minAvailable is past int32; x, y and z are unknown fields (strict); nothing else */
	ck_assert_uint_eq(tfjob_field_errors_count(errs), 4);
	ck_assert_str_eq(tfjob_field_errors_field(errs, 0), "metadata.x");
	ck_assert_str_eq(tfjob_field_errors_field(errs, 1), "spec.runPolicy.schedulingPolicy.minAvailable");
	ck_assert_str_eq(tfjob_field_errors_field(errs, 2), "spec.tfReplicaSpecs[Worker].y");
	ck_assert_str_eq(tfjob_field_errors_field(errs, 3), "spec.tfReplicaSpecs[Worker].template.spec.containers[0].z");
	tfjob_field_errors_free(errs);
	char *out = NULL;
	ck_assert_int_eq(tfjob_job_to_json(&out, job, TFJOB_JSON_COMPACT, NULL), 0);
	ck_assert_ptr_nonnull(strstr(out, "\"x\":1.0}")); /* not in the schema: as written */
	ck_assert_ptr_nonnull(strstr(out, "\"y\":2.0,"));
	ck_assert_ptr_nonnull(strstr(out, "\"z\":[1.0]"));
	ck_assert_ptr_nonnull(strstr(out, "\"containerPort\":2500}"));
	ck_assert_ptr_nonnull(strstr(out, "\"minResources\":{\"cpu\":2}"));
	ck_assert_ptr_nonnull(strstr(out, "\"limits\":{\"cpu\":4}"));
	tfjob_free(out);
	tfjob_job_free(job);

	/* The same through tfjob_job_parse_all(), for a stream and for a List. */
	char stream[2048];
	snprintf(stream, sizeof(stream), "%s\n{\"kind\":\"List\",\"items\":[%s]}", text, text);
	tfjob_job **jobs = NULL;
	size_t n = 0;
	ck_assert_int_eq(tfjob_job_parse_all(&jobs, &n, stream, strlen(stream), NULL, NULL), 0);
	ck_assert_uint_eq(n, 2);
	for (size_t i = 0; i < n; i++) {
		ck_assert_int_eq(tfjob_job_replicas(&v, jobs[i], "Worker"), 0);
		ck_assert_int_eq(v, 2);
	}
	tfjob_job_array_free(jobs, n);

	/* A fraction, or an integral value beyond 2^53 - 1, is a number where an integer belongs. */
	static const char *const bad[] = { "2.5", "9007199254740992.0", "1e300", "-9007199254740992.0" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		job = job_with_replicas(bad[i]);
		errs = tu_validate(job, TFJOB_COMPAT_DOCUMENTED, NULL);
		ck_assert_msg(tfjob_field_errors_count(errs) == 1, "%s", bad[i]);
		ck_assert_int_eq(tfjob_field_errors_type(errs, 0), TFJOB_FIELD_VALUE_TYPE_INVALID);
		ck_assert_str_eq(tfjob_field_errors_field(errs, 0), "spec.tfReplicaSpecs[Worker].replicas");
		tfjob_field_errors_free(errs);
		tfjob_job_free(job);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("parse");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, detects_yaml_and_json);
	tcase_add_test(tc, multi_document_streams);
	tcase_add_test(tc, anchors_aliases_merge_keys);
	tcase_add_test(tc, yaml_1_1_scalar_resolution);
	tcase_add_test(tc, duplicate_keys_rejected);
	tcase_add_test(tc, null_keys_and_binary_values);
	tcase_add_test(tc, round_trip_keeps_uninterpreted_fields);
	tcase_add_test(tc, round_trip_numbers_and_escapes);
	tcase_add_test(tc, typed_accessors);
	tcase_add_test(tc, options_versions);
	tcase_add_test(tc, first_line_of_a_document);
	tcase_add_loop_test(tc, bad_corpus, 0, (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
	tcase_add_test(tc, alias_bomb_hits_alias_limit_fast);
	tcase_add_test(tc, deep_nesting_limited);
	tcase_add_test(tc, input_size_limit);
	tcase_add_test(tc, nul_and_scalars_and_empty);
	tcase_add_test(tc, wrong_types_reach_validation);
	tcase_add_test(tc, integral_reals_at_integer_fields);
	tcase_add_test(tc, integral_reals_with_exponent_only);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
