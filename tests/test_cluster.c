/*
 * The replica graph, TF_CONFIG (byte for byte against training-operator v1.9) and rendering of
 * pods and services.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

/* A replica spec with the `tensorflow` container and its tfjob-port (as v1.9's test helpers build it). */
#define RSPEC(n)                                                                                     \
	"{\"replicas\":" #n ",\"restartPolicy\":\"Never\",\"template\":{\"spec\":{\"containers\":[{"   \
	"\"name\":\"tensorflow\",\"image\":\"test-image\",\"ports\":[{\"name\":\"tfjob-port\",\"containerPort\":2222}]}]}}}"

static tfjob_job *job_json(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static tfjob_job *job_json(const char *fmt, ...)
{
	char buf[8192];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	return tu_parse(buf);
}

/* test-tfjob in namespace ns with the given spec.tfReplicaSpecs body and extra spec fields. */
static tfjob_job *tfjob(const char *ns, const char *specs, const char *extra)
{
	return job_json("{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"test-tfjob\""
	                "%s%s%s,\"uid\":\"u-1\"},\"spec\":{%s\"tfReplicaSpecs\":{%s}}}",
	                ns ? ",\"namespace\":\"" : "", ns ? ns : "", ns ? "\"" : "", extra ? extra : "", specs);
}

static char *tf_config(const tfjob_job *job, const char *type, int64_t index, const tfjob_render_options *opts)
{
	char *out = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_tf_config(&out, job, type, index, opts, &err);
	ck_assert_msg(rc == 0, "tf_config: %s", tfjob_error_message(err));
	return out;
}

static void expect_tf_config(const tfjob_job *job, const char *type, int64_t index, const tfjob_render_options *opts,
                             const char *expected)
{
	char *got = tf_config(job, type, index, opts);
	ck_assert_str_eq(got, expected);
	tfjob_free(got);
}

static int tf_config_fail(const tfjob_job *job, const char *type, int64_t index, const tfjob_render_options *opts,
                          char **field)
{
	char *out = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_tf_config(&out, job, type, index, opts, &err);
	ck_assert_int_ne(rc, 0);
	ck_assert_ptr_null(out);
	ck_assert_ptr_nonnull(err);
	ck_assert_int_eq(tfjob_error_code_of(err), rc);
	if (field)
		*field = tfjob_error_field(err) ? strdup(tfjob_error_field(err)) : NULL;
	tfjob_error_free(err);
	return rc;
}

static json_t *render(int pod, const tfjob_job *job, const char *type, int64_t index, const tfjob_render_options *opts)
{
	char *out = NULL;
	tfjob_error *err = NULL;
	int rc = pod ? tfjob_render_pod(&out, job, type, index, opts, TFJOB_JSON_COMPACT, &err)
	             : tfjob_render_service(&out, job, type, index, opts, TFJOB_JSON_COMPACT, &err);
	ck_assert_msg(rc == 0, "render: %s", tfjob_error_message(err));
	json_error_t jerr;
	json_t *v = json_loads(out, 0, &jerr);
	ck_assert_ptr_nonnull(v);
	tfjob_free(out);
	return v;
}

static const char *path_str(json_t *v, const char *a, const char *b, const char *c)
{
	json_t *x = json_object_get(v, a);
	if (b)
		x = json_object_get(x, b);
	if (c)
		x = json_object_get(x, c);
	return json_string_value(x);
}

/* The TF_CONFIG env value of a rendered pod (container 0), or NULL. */
static const char *pod_tf_config(json_t *pod)
{
	json_t *c = json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0);
	json_t *env = json_object_get(c, "env");
	size_t i;
	json_t *e;
	json_array_foreach(env, i, e)
		if (!strcmp(json_string_value(json_object_get(e, "name")), "TF_CONFIG"))
			return json_string_value(json_object_get(e, "value"));
	return NULL;
}

/* ---- options ---- */

START_TEST(options_versions)
{
	tfjob_render_options o;
	ck_assert_int_eq(tfjob_render_options_init(&o, 0), TFJOB_EVERSION);
	ck_assert_int_eq(tfjob_render_options_init(&o, TFJOB_RENDER_OPTIONS_VERSION + 1), TFJOB_EVERSION);
	ck_assert_int_eq(tfjob_render_options_init(NULL, 1), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_render_options_init(&o, TFJOB_RENDER_OPTIONS_VERSION), 0);
	ck_assert_uint_eq(o.version, TFJOB_RENDER_OPTIONS_VERSION);
	ck_assert_int_eq(o.compat, TFJOB_COMPAT_DOCUMENTED);
	ck_assert_int_eq(o.exclude_evaluator, 0);
	ck_assert_ptr_null(o.cluster_domain);
	tfjob_render_options init = TFJOB_RENDER_OPTIONS_INIT;
	ck_assert_int_eq(memcmp(&o, &init, sizeof(o)), 0);

	tfjob_job *job = tfjob(NULL, "\"Worker\":" RSPEC(2), NULL);
	o.version = 7;
	ck_assert_int_eq(tf_config_fail(job, "Worker", 0, &o, NULL), TFJOB_EVERSION);
	tfjob_graph *g = (tfjob_graph *)1;
	ck_assert_int_eq(tfjob_graph_new(&g, job, &o, NULL), TFJOB_EVERSION);
	ck_assert_ptr_null(g);
	o.version = 1;
	o.compat = (tfjob_compat)9;
	ck_assert_int_eq(tf_config_fail(job, "Worker", 0, &o, NULL), TFJOB_EINVAL);
	tfjob_job_free(job);
}
END_TEST

/* ---- TF_CONFIG, byte for byte as v1.9 (pod_test.go "should generate desired cluster spec") ---- */

START_TEST(v19_cluster_spec_table)
{
	tfjob_render_options o = TFJOB_RENDER_OPTIONS_INIT;
	/* 1 worker, 0 PS: not distributed, no TF_CONFIG (with or without a cluster domain) */
	tfjob_job *job = tfjob("ns0", "\"Worker\":" RSPEC(1) ",\"PS\":" RSPEC(0), NULL);
	expect_tf_config(job, "worker", 0, &o, "");
	o.cluster_domain = "tf.training.com";
	expect_tf_config(job, "worker", 0, &o, "");
	tfjob_job_free(job);

	/* 1 worker, 1 PS, custom cluster domain */
	job = tfjob("ns2", "\"Worker\":" RSPEC(1) ",\"PS\":" RSPEC(1), NULL);
	o.cluster_domain = "tf.training.org";
	expect_tf_config(job, "worker", 0, &o,
	                 "{\"cluster\":{\"ps\":[\"test-tfjob-ps-0.ns2.svc.tf.training.org:2222\"],\"worker\":"
	                 "[\"test-tfjob-worker-0.ns2.svc.tf.training.org:2222\"]},\"task\":{\"type\":\"worker\","
	                 "\"index\":0},\"environment\":\"cloud\"}");
	tfjob_job_free(job);

	/* with an evaluator, which v1.9 lists in the cluster */
	job = tfjob("ns3", "\"Worker\":" RSPEC(1) ",\"PS\":" RSPEC(1) ",\"Evaluator\":" RSPEC(1), NULL);
	o.cluster_domain = "tf.training.io";
	expect_tf_config(job, "worker", 0, &o,
	                 "{\"cluster\":{\"evaluator\":[\"test-tfjob-evaluator-0.ns3.svc.tf.training.io:2222\"],"
	                 "\"ps\":[\"test-tfjob-ps-0.ns3.svc.tf.training.io:2222\"],\"worker\":"
	                 "[\"test-tfjob-worker-0.ns3.svc.tf.training.io:2222\"]},\"task\":{\"type\":\"worker\","
	                 "\"index\":0},\"environment\":\"cloud\"}");
	o.cluster_domain = NULL;
	expect_tf_config(job, "worker", 0, &o,
	                 "{\"cluster\":{\"evaluator\":[\"test-tfjob-evaluator-0.ns3.svc:2222\"],\"ps\":"
	                 "[\"test-tfjob-ps-0.ns3.svc:2222\"],\"worker\":[\"test-tfjob-worker-0.ns3.svc:2222\"]},"
	                 "\"task\":{\"type\":\"worker\",\"index\":0},\"environment\":\"cloud\"}");
	o.cluster_domain = ""; /* empty = none, like an empty CUSTOM_CLUSTER_DOMAIN */
	expect_tf_config(job, "Evaluator", 0, &o,
	                 "{\"cluster\":{\"evaluator\":[\"test-tfjob-evaluator-0.ns3.svc:2222\"],\"ps\":"
	                 "[\"test-tfjob-ps-0.ns3.svc:2222\"],\"worker\":[\"test-tfjob-worker-0.ns3.svc:2222\"]},"
	                 "\"task\":{\"type\":\"evaluator\",\"index\":0},\"environment\":\"cloud\"}");
	/* the option to leave the evaluator out */
	o.exclude_evaluator = 1;
	expect_tf_config(job, "Evaluator", 0, &o,
	                 "{\"cluster\":{\"ps\":[\"test-tfjob-ps-0.ns3.svc:2222\"],\"worker\":"
	                 "[\"test-tfjob-worker-0.ns3.svc:2222\"]},\"task\":{\"type\":\"evaluator\",\"index\":0},"
	                 "\"environment\":\"cloud\"}");
	tfjob_job_free(job);
}
END_TEST

START_TEST(all_types_sorted_default_namespace)
{
	tfjob_job *job = tfjob(NULL, "\"Worker\":" RSPEC(2) ",\"PS\":" RSPEC(2) ",\"Chief\":" RSPEC(1) ",\"Evaluator\":" RSPEC(1),
	                       NULL);
	const char *cluster = "{\"cluster\":{\"chief\":[\"test-tfjob-chief-0.default.svc:2222\"],\"evaluator\":"
	                      "[\"test-tfjob-evaluator-0.default.svc:2222\"],\"ps\":[\"test-tfjob-ps-0.default.svc:2222\","
	                      "\"test-tfjob-ps-1.default.svc:2222\"],\"worker\":[\"test-tfjob-worker-0.default.svc:2222\","
	                      "\"test-tfjob-worker-1.default.svc:2222\"]},";
	char want[2048];
	snprintf(want, sizeof(want), "%s\"task\":{\"type\":\"ps\",\"index\":1},\"environment\":\"cloud\"}", cluster);
	expect_tf_config(job, "PS", 1, NULL, want);
	snprintf(want, sizeof(want), "%s\"task\":{\"type\":\"chief\",\"index\":0},\"environment\":\"cloud\"}", cluster);
	expect_tf_config(job, "chief", 0, NULL, want);

	/* the graph: canonical order chief, evaluator, ps, worker */
	tfjob_graph *g = NULL;
	ck_assert_int_eq(tfjob_graph_new(&g, job, NULL, NULL), 0);
	ck_assert_uint_eq(tfjob_graph_type_count(g), 4);
	ck_assert_str_eq(tfjob_graph_type(g, 0), "Chief");
	ck_assert_str_eq(tfjob_graph_type(g, 1), "Evaluator");
	ck_assert_str_eq(tfjob_graph_type(g, 2), "PS");
	ck_assert_str_eq(tfjob_graph_type(g, 3), "Worker");
	ck_assert_ptr_null(tfjob_graph_type(g, 4));
	ck_assert_int_eq(tfjob_graph_total_replicas(g), 6);
	ck_assert_int_eq(tfjob_graph_is_distributed(g), 1);
	size_t t = 99;
	ck_assert_int_eq(tfjob_graph_find_type(&t, g, "worker"), 0);
	ck_assert_uint_eq(t, 3);
	ck_assert_int_eq(tfjob_graph_find_type(&t, g, "Master"), TFJOB_ENOTFOUND);
	ck_assert_int_eq(tfjob_graph_replicas(g, 2), 2);
	ck_assert_int_eq(tfjob_graph_replicas(g, 9), -1);
	ck_assert_int_eq(tfjob_graph_port(g, 0), 2222);
	ck_assert_str_eq(tfjob_graph_restart_policy(g, 0), "Never");
	ck_assert_str_eq(tfjob_graph_child_name(g, 3, 1), "test-tfjob-worker-1");
	ck_assert_str_eq(tfjob_graph_address(g, 2, 1), "test-tfjob-ps-1.default.svc:2222");
	ck_assert_ptr_null(tfjob_graph_child_name(g, 3, 2));
	ck_assert_ptr_null(tfjob_graph_address(g, 3, -1));
	/* master role: the chief, not worker 0 */
	ck_assert_int_eq(tfjob_graph_is_master(g, 0, 0), 1);
	ck_assert_int_eq(tfjob_graph_is_master(g, 3, 0), 0);
	char *text = NULL;
	ck_assert_int_eq(tfjob_graph_tf_config(&text, g, 2, 1, NULL), 0);
	snprintf(want, sizeof(want), "%s\"task\":{\"type\":\"ps\",\"index\":1},\"environment\":\"cloud\"}", cluster);
	ck_assert_str_eq(text, want);
	tfjob_free(text);
	ck_assert_int_eq(tfjob_graph_tf_config(&text, g, 2, 2, NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_graph_tf_config(&text, g, 7, 0, NULL), TFJOB_EINVAL);
	tfjob_graph_free(g);
	tfjob_graph_free(NULL);
	tfjob_job_free(job);
}
END_TEST

START_TEST(custom_ports_per_type)
{
	tfjob_job *job = tfjob("ns", "\"PS\":{\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":\"tensorflow\","
	                             "\"image\":\"i\",\"ports\":[{\"name\":\"metrics\",\"containerPort\":9090},"
	                             "{\"name\":\"tfjob-port\",\"containerPort\":3333}]}]}}},"
	                             "\"Worker\":{\"replicas\":2,\"template\":{\"spec\":{\"containers\":[{\"name\":\"sidecar\","
	                             "\"image\":\"s\",\"ports\":[{\"name\":\"tfjob-port\",\"containerPort\":1111}]},"
	                             "{\"name\":\"tensorflow\",\"image\":\"i\"}]}}}",
	                       NULL);
	/* PS: its tfjob-port; Worker: the sidecar's tfjob-port does not count, default 2222 */
	expect_tf_config(job, "Worker", 1, NULL,
	                 "{\"cluster\":{\"ps\":[\"test-tfjob-ps-0.ns.svc:3333\"],\"worker\":[\"test-tfjob-worker-0.ns.svc:2222\","
	                 "\"test-tfjob-worker-1.ns.svc:2222\"]},\"task\":{\"type\":\"worker\",\"index\":1},"
	                 "\"environment\":\"cloud\"}");
	/* the PS service exposes every named port of its tensorflow container */
	json_t *svc = render(0, job, "PS", 0, NULL);
	json_t *ports = json_object_get(json_object_get(svc, "spec"), "ports");
	ck_assert_uint_eq(json_array_size(ports), 2);
	ck_assert_str_eq(path_str(json_array_get(ports, 0), "name", NULL, NULL), "metrics");
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(ports, 0), "port")), 9090);
	ck_assert_str_eq(path_str(json_array_get(ports, 1), "name", NULL, NULL), "tfjob-port");
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(ports, 1), "port")), 3333);
	json_decref(svc);
	tfjob_job_free(job);
}
END_TEST

START_TEST(not_distributed)
{
	static const char *const specs[] = {
		"\"Worker\":" RSPEC(1),
		"\"Chief\":" RSPEC(1),
		"\"Chief\":" RSPEC(1) ",\"Worker\":" RSPEC(0),
		"\"Worker\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"i\"}]}}}",
	};
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++) {
		tfjob_job *job = tfjob("ns", specs[i], NULL);
		tfjob_graph *g = NULL;
		ck_assert_int_eq(tfjob_graph_new(&g, job, NULL, NULL), 0);
		ck_assert_int_eq(tfjob_graph_is_distributed(g), 0);
		ck_assert_int_eq(tfjob_graph_total_replicas(g), 1);
		tfjob_graph_free(g);
		const char *type = strstr(specs[i], "Chief") ? "Chief" : "Worker";
		expect_tf_config(job, type, 0, NULL, "");
		json_t *pod = render(1, job, type, 0, NULL);
		ck_assert_ptr_null(pod_tf_config(pod));
		ck_assert_ptr_null(json_object_get(json_array_get(json_object_get(json_object_get(pod, "spec"), "containers"), 0),
		                                   "env"));
		json_decref(pod);
		tfjob_job_free(job);
	}
	/* two replicas in total are distributed, as are zero */
	tfjob_job *job = tfjob("ns", "\"Worker\":" RSPEC(2), NULL);
	expect_tf_config(job, "Worker", 0, NULL,
	                 "{\"cluster\":{\"worker\":[\"test-tfjob-worker-0.ns.svc:2222\",\"test-tfjob-worker-1.ns.svc:2222\"]},"
	                 "\"task\":{\"type\":\"worker\",\"index\":0},\"environment\":\"cloud\"}");
	tfjob_job_free(job);
	job = tfjob("ns", "\"Worker\":" RSPEC(0), NULL);
	tfjob_graph *g = NULL;
	ck_assert_int_eq(tfjob_graph_new(&g, job, NULL, NULL), 0);
	ck_assert_int_eq(tfjob_graph_is_distributed(g), 1);
	tfjob_graph_free(g);
	tfjob_job_free(job);
}
END_TEST

START_TEST(replicas_zero_listed_empty)
{
	/* defect 7: a type with replicas 0 still appears in the cluster, with an empty list */
	tfjob_job *job = tfjob("ns", "\"Worker\":" RSPEC(2) ",\"PS\":" RSPEC(0), NULL);
	const char *want = "{\"cluster\":{\"ps\":[],\"worker\":[\"test-tfjob-worker-0.ns.svc:2222\","
	                   "\"test-tfjob-worker-1.ns.svc:2222\"]},\"task\":{\"type\":\"worker\",\"index\":1},"
	                   "\"environment\":\"cloud\"}";
	expect_tf_config(job, "Worker", 1, NULL, want);
	tfjob_render_options o = TFJOB_RENDER_OPTIONS_INIT;
	o.compat = TFJOB_COMPAT_TRAINING_OPERATOR_1_9;
	expect_tf_config(job, "Worker", 1, &o, want);
	/* no child for PS */
	ck_assert_int_eq(tf_config_fail(job, "PS", 0, NULL, NULL), TFJOB_EINVAL);
	char *all = NULL;
	ck_assert_int_eq(tfjob_render_all(&all, job, NULL, 0, NULL), 0);
	json_t *v = json_loads(all, 0, NULL);
	ck_assert_uint_eq(json_array_size(json_object_get(v, "pods")), 2);
	ck_assert_uint_eq(json_array_size(json_object_get(v, "services")), 2);
	json_decref(v);
	tfjob_free(all);
	tfjob_job_free(job);
}
END_TEST

/* ---- sparse form (enableDynamicWorker), tensorflow_test.go's table ---- */

START_TEST(sparse_ps_and_workers)
{
	tfjob_job *job = tfjob(NULL, "\"Worker\":" RSPEC(2) ",\"PS\":" RSPEC(2) ",\"Chief\":" RSPEC(1),
	                       "\"enableDynamicWorker\":true,");
	expect_tf_config(job, "worker", 0, NULL,
	                 "{\"cluster\":{\"worker\":{\"0\":\"test-tfjob-worker-0.default.svc:2222\"},\"ps\":"
	                 "[\"test-tfjob-ps-0.default.svc:2222\",\"test-tfjob-ps-1.default.svc:2222\"]},"
	                 "\"task\":{\"type\":\"worker\",\"index\":0}}");
	expect_tf_config(job, "Worker", 1, NULL,
	                 "{\"cluster\":{\"worker\":{\"1\":\"test-tfjob-worker-1.default.svc:2222\"},\"ps\":"
	                 "[\"test-tfjob-ps-0.default.svc:2222\",\"test-tfjob-ps-1.default.svc:2222\"]},"
	                 "\"task\":{\"type\":\"worker\",\"index\":1}}");
	expect_tf_config(job, "ps", 0, NULL,
	                 "{\"cluster\":{\"worker\":{},\"ps\":[\"test-tfjob-ps-0.default.svc:2222\"]},"
	                 "\"task\":{\"type\":\"ps\",\"index\":0}}");
	expect_tf_config(job, "PS", 1, NULL,
	                 "{\"cluster\":{\"worker\":{},\"ps\":[\"test-tfjob-ps-1.default.svc:2222\"]},"
	                 "\"task\":{\"type\":\"ps\",\"index\":1}}");
	/* any other type gets an empty sparse cluster (v1.9) */
	expect_tf_config(job, "Chief", 0, NULL, "{\"cluster\":{\"worker\":{},\"ps\":[]},\"task\":{\"type\":\"chief\",\"index\":0}}");
	tfjob_job_free(job);
}
END_TEST

START_TEST(sparse_without_ps_both_modes)
{
	tfjob_job *job = tfjob("ns", "\"Worker\":" RSPEC(2), "\"enableDynamicWorker\":true,");
	/* defect 8: documented "ps":[] (TensorFlow accepts it), v1.9 "ps":null */
	expect_tf_config(job, "Worker", 1, NULL,
	                 "{\"cluster\":{\"worker\":{\"1\":\"test-tfjob-worker-1.ns.svc:2222\"},\"ps\":[]},"
	                 "\"task\":{\"type\":\"worker\",\"index\":1}}");
	tfjob_render_options o = TFJOB_RENDER_OPTIONS_INIT;
	o.compat = TFJOB_COMPAT_TRAINING_OPERATOR_1_9;
	expect_tf_config(job, "Worker", 1, &o,
	                 "{\"cluster\":{\"worker\":{\"1\":\"test-tfjob-worker-1.ns.svc:2222\"},\"ps\":null},"
	                 "\"task\":{\"type\":\"worker\",\"index\":1}}");
	tfjob_job_free(job);
	/* with PS replicas 0: an empty list in both modes */
	job = tfjob("ns", "\"Worker\":" RSPEC(2) ",\"PS\":" RSPEC(0), "\"enableDynamicWorker\":true,");
	const char *want = "{\"cluster\":{\"worker\":{\"0\":\"test-tfjob-worker-0.ns.svc:2222\"},\"ps\":[]},"
	                   "\"task\":{\"type\":\"worker\",\"index\":0}}";
	expect_tf_config(job, "Worker", 0, NULL, want);
	expect_tf_config(job, "Worker", 0, &o, want);
	tfjob_job_free(job);
}
END_TEST

/* ---- names, domains, resolver ---- */

START_TEST(names_with_slash_and_cluster_domain)
{
	tfjob_job *job = job_json("{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"a/b\","
	                          "\"namespace\":\"team\"},\"spec\":{\"tfReplicaSpecs\":{\"Worker\":" RSPEC(2) "}}}");
	tfjob_render_options o = TFJOB_RENDER_OPTIONS_INIT;
	o.cluster_domain = "cluster.local";
	expect_tf_config(job, "Worker", 0, &o,
	                 "{\"cluster\":{\"worker\":[\"a-b-worker-0.team.svc.cluster.local:2222\","
	                 "\"a-b-worker-1.team.svc.cluster.local:2222\"]},\"task\":{\"type\":\"worker\",\"index\":0},"
	                 "\"environment\":\"cloud\"}");
	json_t *pod = render(1, job, "Worker", 1, &o);
	ck_assert_str_eq(path_str(pod, "metadata", "name", NULL), "a-b-worker-1");
	ck_assert_str_eq(path_str(pod, "metadata", "namespace", NULL), "team");
	ck_assert_str_eq(path_str(pod, "metadata", "labels", "training.kubeflow.org/job-name"), "a-b");
	/* the owner reference keeps the real name */
	ck_assert_str_eq(json_string_value(json_object_get(
	                         json_array_get(json_object_get(json_object_get(pod, "metadata"), "ownerReferences"), 0), "name")),
	                 "a/b");
	json_decref(pod);
	/* a bad cluster domain is refused */
	o.cluster_domain = "bad domain";
	ck_assert_int_eq(tf_config_fail(job, "Worker", 0, &o, NULL), TFJOB_EINVAL);
	tfjob_job_free(job);
}
END_TEST

static int local_resolver(char *out, size_t size, const char *type, int64_t index, int32_t port, void *payload)
{
	int *calls = payload;
	(*calls)++;
	if (!strcmp(type, "evaluator"))
		return TFJOB_EIO;
	snprintf(out, size, "127.0.0.1:%d", (int)(20000 + (strcmp(type, "ps") ? 100 : 0) + index + port - 2222));
	return 0;
}

START_TEST(address_resolver)
{
	tfjob_job *job = tfjob("ns", "\"Worker\":" RSPEC(2) ",\"PS\":" RSPEC(1), NULL);
	tfjob_render_options o = TFJOB_RENDER_OPTIONS_INIT;
	int calls = 0;
	o.address_cb = local_resolver;
	o.address_payload = &calls;
	expect_tf_config(job, "Worker", 1, &o,
	                 "{\"cluster\":{\"ps\":[\"127.0.0.1:20000\"],\"worker\":[\"127.0.0.1:20100\",\"127.0.0.1:20101\"]},"
	                 "\"task\":{\"type\":\"worker\",\"index\":1},\"environment\":\"cloud\"}");
	ck_assert_int_eq(calls, 3);
	tfjob_job_free(job);
	job = tfjob("ns", "\"Worker\":" RSPEC(2) ",\"Evaluator\":" RSPEC(1), NULL);
	ck_assert_int_eq(tf_config_fail(job, "Worker", 1, &o, NULL), TFJOB_EIO);
	tfjob_job_free(job);
}
END_TEST

/* ---- errors ---- */

START_TEST(errors)
{
	tfjob_job *job = tfjob("ns", "\"Worker\":" RSPEC(2), NULL);
	ck_assert_int_eq(tf_config_fail(job, "Chief", 0, NULL, NULL), TFJOB_ENOTFOUND);
	ck_assert_int_eq(tf_config_fail(job, "Worker", 2, NULL, NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tf_config_fail(job, "Worker", -1, NULL, NULL), TFJOB_EINVAL);
	char *out = NULL;
	ck_assert_int_eq(tfjob_tf_config(&out, NULL, "Worker", 0, NULL, NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_tf_config(&out, job, NULL, 0, NULL, NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_render_pod(&out, job, "PS", 0, NULL, 0, NULL), TFJOB_ENOTFOUND);
	ck_assert_int_eq(tfjob_render_service(&out, job, "Worker", 5, NULL, 0, NULL), TFJOB_EINVAL);
	tfjob_job_free(job);

	struct { const char *specs; int code; const char *field; } cases[] = {
		{ "\"Worker\":{\"replicas\":\"3\"}", TFJOB_ESCHEMA, "spec.tfReplicaSpecs[Worker].replicas" },
		{ "\"Worker\":{\"replicas\":-1}", TFJOB_ESCHEMA, "spec.tfReplicaSpecs[Worker].replicas" },
		{ "\"Worker\":{\"replicas\":100001}", TFJOB_ELIMIT, "spec.tfReplicaSpecs[Worker].replicas" },
		{ "\"Worker\":{\"replicas\":60000},\"PS\":{\"replicas\":40001}", TFJOB_ELIMIT, "spec.tfReplicaSpecs" },
		{ "\"Worker\":{\"restartPolicy\":7}", TFJOB_ESCHEMA, "spec.tfReplicaSpecs[Worker].restartPolicy" },
		{ "\"Worker\":null", TFJOB_ESCHEMA, "spec.tfReplicaSpecs[Worker]" },
		{ "\"Worker\":{\"template\":[]}", TFJOB_ESCHEMA, "spec.tfReplicaSpecs[Worker].template" },
		{ "\"Worker\":{\"template\":{\"spec\":{\"containers\":{}}}}", TFJOB_ESCHEMA,
		  "spec.tfReplicaSpecs[Worker].template.spec.containers" },
		{ "\"Worker\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"ports\":"
		  "[{\"name\":\"tfjob-port\",\"containerPort\":\"2222\"}]}]}}}",
		  TFJOB_ESCHEMA, "spec.tfReplicaSpecs[Worker].template.spec.containers[0].ports[0].containerPort" },
		{ "\"Worker\":{\"template\":{\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"ports\":7}]}}}",
		  TFJOB_ESCHEMA, "spec.tfReplicaSpecs[Worker].template.spec.containers[0].ports" },
		{ "\"Worker\":{},\"worker\":{}", TFJOB_EINVAL, "spec.tfReplicaSpecs" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		job = tfjob("ns", cases[i].specs, NULL);
		char *field = NULL;
		ck_assert_int_eq(tf_config_fail(job, "Worker", 0, NULL, &field), cases[i].code);
		ck_assert_msg(field && !strcmp(field, cases[i].field), "case %zu: field %s", i, field ? field : "(null)");
		free(field);
		tfjob_job_free(job);
	}
	/* messages name the field once */
	job = tfjob("ns", "\"Worker\":{\"replicas\":\"3\"}", NULL);
	tfjob_error *merr = NULL;
	ck_assert_int_eq(tfjob_tf_config(&out, job, "Worker", 0, NULL, &merr), TFJOB_ESCHEMA);
	ck_assert_str_eq(tfjob_error_message(merr), "spec.tfReplicaSpecs[Worker].replicas: must be an integer");
	tfjob_error_free(merr);
	tfjob_job_free(job);
	/* a 100,000-replica job is accepted */
	job = tfjob("ns", "\"Worker\":{\"replicas\":99999},\"PS\":{\"replicas\":1}", NULL);
	char *text = tf_config(job, "PS", 0, NULL);
	ck_assert(strlen(text) > 3000000);
	tfjob_free(text);
	tfjob_job_free(job);
	/* wrongly typed metadata and spec */
	job = tu_parse("{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":5},\"spec\":{}}");
	char *field = NULL;
	ck_assert_int_eq(tf_config_fail(job, "Worker", 0, NULL, &field), TFJOB_ESCHEMA);
	ck_assert_str_eq(field, "metadata.name");
	free(field);
	tfjob_job_free(job);
	job = tu_parse("{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"generateName\":\"x\"},"
	               "\"spec\":{\"tfReplicaSpecs\":{}}}");
	ck_assert_int_eq(tf_config_fail(job, "Worker", 0, NULL, NULL), TFJOB_EINVAL);
	tfjob_job_free(job);
	job = tu_parse("{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"x\"},"
	               "\"spec\":{\"tfReplicaSpecs\":[]}}");
	ck_assert_int_eq(tf_config_fail(job, "Worker", 0, NULL, &field), TFJOB_ESCHEMA);
	ck_assert_str_eq(field, "spec.tfReplicaSpecs");
	free(field);
	tfjob_job_free(job);
	job = tfjob("ns", "\"Worker\":" RSPEC(2), "\"enableDynamicWorker\":\"yes\",");
	ck_assert_int_eq(tf_config_fail(job, "Worker", 0, NULL, &field), TFJOB_ESCHEMA);
	ck_assert_str_eq(field, "spec.enableDynamicWorker");
	free(field);
	tfjob_job_free(job);
	/* wrongly typed template fields when rendering */
	job = tfjob("ns", "\"Worker\":{\"replicas\":2,\"template\":{\"metadata\":{\"labels\":[]},\"spec\":{\"containers\":"
	                  "[{\"name\":\"tensorflow\",\"image\":\"i\"}]}}}", NULL);
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_render_pod(&out, job, "Worker", 0, NULL, 0, &err), TFJOB_ESCHEMA);
	ck_assert_str_eq(tfjob_error_field(err), "spec.tfReplicaSpecs[Worker].template.metadata.labels");
	tfjob_error_free(err);
	tfjob_job_free(job);
	job = tfjob("ns", "\"Worker\":{\"replicas\":2,\"template\":{\"spec\":{\"containers\":"
	                  "[{\"name\":\"tensorflow\",\"image\":\"i\",\"env\":{}}]}}}", NULL);
	err = NULL;
	ck_assert_int_eq(tfjob_render_pod(&out, job, "Worker", 0, NULL, 0, &err), TFJOB_ESCHEMA);
	ck_assert_str_eq(tfjob_error_field(err), "spec.tfReplicaSpecs[Worker].template.spec.containers[0].env");
	tfjob_error_free(err);
	tfjob_job_free(job);
}
END_TEST

/* ---- pods ---- */

static const char *full_template_job =
	"{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"mnist\",\"namespace\":\"ml\","
	"\"uid\":\"1234\"},\"spec\":{\"tfReplicaSpecs\":{"
	"\"Worker\":{\"replicas\":2,\"restartPolicy\":\"ExitCode\",\"template\":{\"metadata\":{\"name\":\"ignored\","
	"\"labels\":{\"app\":\"mnist\",\"training.kubeflow.org/replica-index\":\"x\"},\"annotations\":{\"a\":\"b\"},"
	"\"finalizers\":[\"f/one\"]},\"spec\":{\"restartPolicy\":\"Always\",\"nodeSelector\":{\"gpu\":\"yes\"},"
	"\"containers\":[{\"name\":\"side\",\"image\":\"s\"},{\"name\":\"tensorflow\",\"image\":\"i\",\"env\":"
	"[{\"name\":\"A\",\"value\":\"1\"}],\"ports\":[{\"name\":\"tfjob-port\",\"containerPort\":2222},"
	"{\"containerPort\":7000}]}],\"volumes\":[{\"name\":\"v\",\"emptyDir\":{}}]}}},"
	"\"PS\":{\"replicas\":1,\"restartPolicy\":\"OnFailure\",\"template\":{\"spec\":{\"containers\":"
	"[{\"name\":\"tensorflow\",\"image\":\"i\"}]}}}}}}";

START_TEST(pod_fields)
{
	tfjob_job *job = tu_parse(full_template_job);
	json_t *pod = render(1, job, "Worker", 1, NULL);
	ck_assert_str_eq(path_str(pod, "apiVersion", NULL, NULL), "v1");
	ck_assert_str_eq(path_str(pod, "kind", NULL, NULL), "Pod");
	json_t *meta = json_object_get(pod, "metadata");
	ck_assert_str_eq(path_str(meta, "name", NULL, NULL), "mnist-worker-1");
	ck_assert_str_eq(path_str(meta, "namespace", NULL, NULL), "ml");
	json_t *labels = json_object_get(meta, "labels");
	ck_assert_uint_eq(json_object_size(labels), 5);
	ck_assert_str_eq(path_str(labels, "app", NULL, NULL), "mnist");
	ck_assert_str_eq(path_str(labels, "training.kubeflow.org/operator-name", NULL, NULL), "tfjob-controller");
	ck_assert_str_eq(path_str(labels, "training.kubeflow.org/job-name", NULL, NULL), "mnist");
	ck_assert_str_eq(path_str(labels, "training.kubeflow.org/replica-type", NULL, NULL), "worker");
	ck_assert_str_eq(path_str(labels, "training.kubeflow.org/replica-index", NULL, NULL), "1");
	ck_assert_ptr_null(json_object_get(labels, "training.kubeflow.org/job-role"));
	ck_assert_str_eq(path_str(meta, "annotations", "a", NULL), "b");
	ck_assert_str_eq(json_string_value(json_array_get(json_object_get(meta, "finalizers"), 0)), "f/one");
	json_t *owner = json_array_get(json_object_get(meta, "ownerReferences"), 0);
	ck_assert_uint_eq(json_array_size(json_object_get(meta, "ownerReferences")), 1);
	ck_assert_str_eq(path_str(owner, "apiVersion", NULL, NULL), "kubeflow.org/v1");
	ck_assert_str_eq(path_str(owner, "kind", NULL, NULL), "TFJob");
	ck_assert_str_eq(path_str(owner, "name", NULL, NULL), "mnist");
	ck_assert_str_eq(path_str(owner, "uid", NULL, NULL), "1234");
	ck_assert(json_is_true(json_object_get(owner, "controller")));
	ck_assert(json_is_true(json_object_get(owner, "blockOwnerDeletion")));
	json_t *spec = json_object_get(pod, "spec");
	/* ExitCode -> Never; the template's restartPolicy is overwritten */
	ck_assert_str_eq(path_str(spec, "restartPolicy", NULL, NULL), "Never");
	ck_assert_str_eq(path_str(spec, "nodeSelector", "gpu", NULL), "yes");
	ck_assert_uint_eq(json_array_size(json_object_get(spec, "volumes")), 1);
	ck_assert_ptr_null(json_object_get(spec, "schedulerName"));
	json_t *containers = json_object_get(spec, "containers");
	ck_assert_ptr_null(json_object_get(json_array_get(containers, 0), "env"));
	json_t *env = json_object_get(json_array_get(containers, 1), "env");
	ck_assert_uint_eq(json_array_size(env), 2);
	ck_assert_str_eq(path_str(json_array_get(env, 0), "name", NULL, NULL), "A");
	ck_assert_str_eq(path_str(json_array_get(env, 1), "name", NULL, NULL), "TF_CONFIG");
	ck_assert_str_eq(path_str(json_array_get(env, 1), "value", NULL, NULL),
	                 "{\"cluster\":{\"ps\":[\"mnist-ps-0.ml.svc:2222\"],\"worker\":[\"mnist-worker-0.ml.svc:2222\","
	                 "\"mnist-worker-1.ml.svc:2222\"]},\"task\":{\"type\":\"worker\",\"index\":1},\"environment\":\"cloud\"}");
	json_decref(pod);

	/* worker 0 is the master without a chief; PS keeps OnFailure; no annotations when the template has none */
	pod = render(1, job, "worker", 0, NULL);
	ck_assert_str_eq(path_str(pod, "metadata", "labels", "training.kubeflow.org/job-role"), "master");
	json_decref(pod);
	pod = render(1, job, "PS", 0, NULL);
	ck_assert_ptr_null(path_str(pod, "metadata", "labels", "training.kubeflow.org/job-role"));
	ck_assert_ptr_null(json_object_get(json_object_get(pod, "metadata"), "annotations"));
	ck_assert_ptr_null(json_object_get(json_object_get(pod, "metadata"), "finalizers"));
	ck_assert_str_eq(path_str(pod, "spec", "restartPolicy", NULL), "OnFailure");
	json_decref(pod);

	/* the job is not changed by rendering */
	char *before = NULL, *after = NULL;
	ck_assert_int_eq(tfjob_job_to_json(&before, job, 0, NULL), 0);
	pod = render(1, job, "Worker", 0, NULL);
	json_decref(pod);
	ck_assert_int_eq(tfjob_job_to_json(&after, job, 0, NULL), 0);
	ck_assert_str_eq(before, after);
	tfjob_free(before);
	tfjob_free(after);
	tfjob_job_free(job);
}
END_TEST

START_TEST(master_label_with_chief_and_master)
{
	tfjob_job *job = tfjob("ns", "\"Chief\":" RSPEC(1) ",\"Worker\":" RSPEC(2), NULL);
	json_t *pod = render(1, job, "Chief", 0, NULL);
	ck_assert_str_eq(path_str(pod, "metadata", "labels", "training.kubeflow.org/job-role"), "master");
	json_decref(pod);
	pod = render(1, job, "Worker", 0, NULL);
	ck_assert_ptr_null(path_str(pod, "metadata", "labels", "training.kubeflow.org/job-role"));
	json_decref(pod);
	tfjob_job_free(job);
	job = tfjob("ns", "\"Master\":" RSPEC(1) ",\"Worker\":" RSPEC(1), NULL);
	pod = render(1, job, "Master", 0, NULL);
	ck_assert_str_eq(path_str(pod, "metadata", "labels", "training.kubeflow.org/job-role"), "master");
	ck_assert_str_eq(path_str(pod, "metadata", "labels", "training.kubeflow.org/replica-type"), "master");
	json_decref(pod);
	tfjob_job_free(job);
}
END_TEST

START_TEST(service_fields)
{
	tfjob_job *job = tu_parse(full_template_job);
	json_t *svc = render(0, job, "Worker", 1, NULL);
	ck_assert_str_eq(path_str(svc, "kind", NULL, NULL), "Service");
	ck_assert_str_eq(path_str(svc, "metadata", "name", NULL), "mnist-worker-1");
	ck_assert_str_eq(path_str(svc, "metadata", "namespace", NULL), "ml");
	json_t *spec = json_object_get(svc, "spec");
	ck_assert_str_eq(path_str(spec, "clusterIP", NULL, NULL), "None");
	json_t *sel = json_object_get(spec, "selector");
	ck_assert_uint_eq(json_object_size(sel), 4);
	ck_assert_str_eq(path_str(sel, "training.kubeflow.org/operator-name", NULL, NULL), "tfjob-controller");
	ck_assert_str_eq(path_str(sel, "training.kubeflow.org/job-name", NULL, NULL), "mnist");
	ck_assert_str_eq(path_str(sel, "training.kubeflow.org/replica-type", NULL, NULL), "worker");
	ck_assert_str_eq(path_str(sel, "training.kubeflow.org/replica-index", NULL, NULL), "1");
	ck_assert(json_equal(sel, json_object_get(json_object_get(svc, "metadata"), "labels")));
	ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(svc, "metadata"), "ownerReferences")), 1);
	/* documented: only the named port; v1.9 also the unnamed one (name "") */
	json_t *ports = json_object_get(spec, "ports");
	ck_assert_uint_eq(json_array_size(ports), 1);
	ck_assert_str_eq(path_str(json_array_get(ports, 0), "name", NULL, NULL), "tfjob-port");
	json_decref(svc);
	tfjob_render_options o = TFJOB_RENDER_OPTIONS_INIT;
	o.compat = TFJOB_COMPAT_TRAINING_OPERATOR_1_9;
	svc = render(0, job, "Worker", 0, &o);
	ck_assert_uint_eq(json_array_size(json_object_get(json_object_get(svc, "spec"), "ports")), 2);
	json_decref(svc);
	/* worker 0 has the master role, its service selector does not carry it */
	svc = render(0, job, "Worker", 0, NULL);
	ck_assert_uint_eq(json_object_size(json_object_get(json_object_get(svc, "spec"), "selector")), 4);
	json_decref(svc);
	/* a PS without ports: no ports field */
	svc = render(0, job, "PS", 0, NULL);
	ck_assert_ptr_null(json_object_get(json_object_get(svc, "spec"), "ports"));
	json_decref(svc);
	tfjob_job_free(job);
}
END_TEST

START_TEST(gang_scheduling_decoration)
{
	tfjob_job *job = tfjob("ns", "\"Worker\":" RSPEC(2) ",\"PS\":{\"replicas\":1,\"template\":{\"spec\":{"
	                             "\"schedulerName\":\"mine\",\"containers\":[{\"name\":\"tensorflow\",\"image\":\"i\"}]}}}",
	                       NULL);
	tfjob_render_options o = TFJOB_RENDER_OPTIONS_INIT;
	o.gang_scheduler = TFJOB_GANG_VOLCANO;
	json_t *pod = render(1, job, "Worker", 1, &o);
	ck_assert_str_eq(path_str(pod, "spec", "schedulerName", NULL), "volcano");
	ck_assert_str_eq(path_str(pod, "metadata", "annotations", "scheduling.k8s.io/group-name"), "test-tfjob");
	ck_assert_str_eq(path_str(pod, "metadata", "annotations", "volcano.sh/task-spec"), "worker");
	json_decref(pod);
	pod = render(1, job, "PS", 0, &o); /* a scheduler set in the template is kept */
	ck_assert_str_eq(path_str(pod, "spec", "schedulerName", NULL), "mine");
	json_decref(pod);
	o.gang_scheduler = TFJOB_GANG_SCHEDULER_PLUGINS;
	pod = render(1, job, "Worker", 0, &o);
	ck_assert_str_eq(path_str(pod, "spec", "schedulerName", NULL), "scheduler-plugins-scheduler");
	ck_assert_str_eq(path_str(pod, "metadata", "labels", "scheduling.x-k8s.io/pod-group"), "test-tfjob");
	ck_assert_ptr_null(json_object_get(json_object_get(pod, "metadata"), "annotations"));
	json_decref(pod);
	o.scheduler_name = "my-gang";
	pod = render(1, job, "Worker", 0, &o);
	ck_assert_str_eq(path_str(pod, "spec", "schedulerName", NULL), "my-gang");
	json_decref(pod);
	o.gang_scheduler = (tfjob_gang_scheduler)5;
	ck_assert_int_eq(tf_config_fail(job, "Worker", 0, &o, NULL), TFJOB_EINVAL);
	tfjob_job_free(job);
}
END_TEST

START_TEST(render_all_order)
{
	tfjob_job *job = tfjob(NULL, "\"Worker\":" RSPEC(2) ",\"PS\":" RSPEC(1) ",\"Chief\":" RSPEC(1), NULL);
	char *all = NULL;
	ck_assert_int_eq(tfjob_render_all(&all, job, NULL, TFJOB_JSON_COMPACT, NULL), 0);
	ck_assert(!strncmp(all, "{\"pods\":[", 9));
	json_t *v = json_loads(all, 0, NULL);
	json_t *pods = json_object_get(v, "pods"), *svcs = json_object_get(v, "services");
	static const char *const names[] = { "test-tfjob-chief-0", "test-tfjob-ps-0", "test-tfjob-worker-0",
		                             "test-tfjob-worker-1" };
	ck_assert_uint_eq(json_array_size(pods), 4);
	ck_assert_uint_eq(json_array_size(svcs), 4);
	for (size_t i = 0; i < 4; i++) {
		ck_assert_str_eq(path_str(json_array_get(pods, i), "metadata", "name", NULL), names[i]);
		ck_assert_str_eq(path_str(json_array_get(svcs, i), "metadata", "name", NULL), names[i]);
		ck_assert_str_eq(path_str(json_array_get(pods, i), "metadata", "namespace", NULL), "default");
	}
	json_decref(v);
	tfjob_free(all);
	/* the namespace option */
	tfjob_render_options o = TFJOB_RENDER_OPTIONS_INIT;
	o.default_namespace = "team-a";
	expect_tf_config(job, "Chief", 0, &o,
	                 "{\"cluster\":{\"chief\":[\"test-tfjob-chief-0.team-a.svc:2222\"],\"ps\":"
	                 "[\"test-tfjob-ps-0.team-a.svc:2222\"],\"worker\":[\"test-tfjob-worker-0.team-a.svc:2222\","
	                 "\"test-tfjob-worker-1.team-a.svc:2222\"]},\"task\":{\"type\":\"chief\",\"index\":0},"
	                 "\"environment\":\"cloud\"}");
	tfjob_job_free(job);
}
END_TEST

/* jansson's own dump of the same children, as the reference for the streamed writer's bytes. */
static char *reference_render_all(const tfjob_job *job, size_t replicas[], const char *const types[], size_t ntypes,
                                  unsigned int flags)
{
	json_t *all = json_object(), *pods = json_array(), *svcs = json_array();
	for (size_t t = 0; t < ntypes; t++) {
		for (size_t i = 0; i < replicas[t]; i++) {
			json_array_append_new(pods, render(1, job, types[t], (int64_t)i, NULL));
			json_array_append_new(svcs, render(0, job, types[t], (int64_t)i, NULL));
		}
	}
	json_object_set_new(all, "pods", pods);
	json_object_set_new(all, "services", svcs);
	size_t jflags = (flags & TFJOB_JSON_PRETTY) ? JSON_INDENT(2) : JSON_COMPACT;
	if (flags & TFJOB_JSON_SORT_KEYS)
		jflags |= JSON_SORT_KEYS;
	char *text = json_dumps(all, jflags);
	json_decref(all);
	return text;
}

START_TEST(render_all_streamed)
{
	tfjob_job *job = tfjob(NULL, "\"Worker\":" RSPEC(150) ",\"PS\":" RSPEC(2) ",\"Evaluator\":" RSPEC(0), NULL);
	ck_assert_int_eq(tfjob_job_apply_defaults(job, NULL, NULL), 0);
	static const char *const types[] = { "PS", "Worker" };
	size_t replicas[] = { 2, 150 };
	static const unsigned int flag_sets[] = { TFJOB_JSON_COMPACT, TFJOB_JSON_PRETTY, TFJOB_JSON_SORT_KEYS,
		                                  TFJOB_JSON_PRETTY | TFJOB_JSON_SORT_KEYS };
	for (size_t f = 0; f < 4; f++) {
		tu_collected got = { 0 };
		ck_assert_int_eq(tfjob_render_all_write(job, NULL, flag_sets[f], tu_collect, &got, NULL), 0);
		char *whole = NULL, *ref = reference_render_all(job, replicas, types, 2, flag_sets[f]);
		ck_assert_int_eq(tfjob_render_all(&whole, job, NULL, flag_sets[f], NULL), 0);
		ck_assert_str_eq(got.text, ref);
		ck_assert_str_eq(whole, ref);
		/* handed on in pieces of about 64 KiB, not as one text */
		ck_assert_uint_gt(got.pieces, 4);
		ck_assert_uint_lt(got.largest, 128 * 1024);
		free(ref);
		free(got.text);
		tfjob_free(whole);
	}
	/* a refusing writer stops the render: TFJOB_EIO */
	tu_collected refused = { .refuse_at = 3 };
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_render_all_write(job, NULL, 0, tu_collect, &refused, &err), TFJOB_EIO);
	ck_assert_uint_eq(refused.pieces, 3);
	tfjob_error_free(err);
	free(refused.text);
	ck_assert_int_eq(tfjob_render_all_write(job, NULL, 0, NULL, NULL, NULL), TFJOB_EINVAL);
	tfjob_job_free(job);
	/* a job that cannot be rendered (a template's labels not an object, on the last type) writes nothing */
	job = tfjob(NULL, "\"PS\":" RSPEC(1) ",\"Worker\":{\"replicas\":2,\"template\":{\"metadata\":{\"labels\":\"x\"},"
	                  "\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"i\"}]}}}", NULL);
	tu_collected none = { 0 };
	ck_assert_int_eq(tfjob_render_all_write(job, NULL, 0, tu_collect, &none, &err), TFJOB_ESCHEMA);
	ck_assert_uint_eq(none.pieces, 0);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "template.metadata.labels"));
	tfjob_error_free(err);
	tfjob_job_free(job);
}
END_TEST

START_TEST(defaulted_example_both_modes)
{
	/* the docs' PS+Worker job, defaulted in each mode, keys in any case */
	const char *yaml = "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata:\n  name: dist\nspec:\n  tfReplicaSpecs:\n"
	                   "    ps:\n      template:\n        spec:\n          containers:\n"
	                   "          - {name: tensorflow, image: i}\n"
	                   "    WORKER:\n      replicas: 2\n      template:\n        spec:\n          containers:\n"
	                   "          - {name: tensorflow, image: i}\n";
	for (int compat = 0; compat <= 1; compat++) {
		tfjob_job *job = tu_parse(yaml);
		tfjob_default_options d = TFJOB_DEFAULT_OPTIONS_INIT;
		d.compat = (tfjob_compat)compat;
		ck_assert_int_eq(tfjob_job_apply_defaults(job, &d, NULL), 0);
		tfjob_render_options o = TFJOB_RENDER_OPTIONS_INIT;
		o.compat = (tfjob_compat)compat;
		expect_tf_config(job, "worker", 1, &o,
		                 "{\"cluster\":{\"ps\":[\"dist-ps-0.default.svc:2222\"],\"worker\":[\"dist-worker-0.default.svc:2222\","
		                 "\"dist-worker-1.default.svc:2222\"]},\"task\":{\"type\":\"worker\",\"index\":1},"
		                 "\"environment\":\"cloud\"}");
		tfjob_job_free(job);
	}
}
END_TEST

/* ---- PodGroup ---- */

static json_t *pod_group(const tfjob_job *job, const tfjob_render_options *opts)
{
	char *out = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_render_pod_group(&out, job, opts, 0, &err);
	ck_assert_msg(rc == 0, "pod group: %s", tfjob_error_message(err));
	json_t *v = json_loads(out, 0, NULL);
	ck_assert_ptr_nonnull(v);
	tfjob_free(out);
	return v;
}

static int worker_priority(int32_t *out, const char *name, void *payload)
{
	(void)payload;
	if (!strcmp(name, "high")) {
		*out = 100;
		return 0;
	}
	return TFJOB_ENOTFOUND;
}

#define GANG_SPECS                                                                                                    \
	"\"Worker\":{\"replicas\":2,\"template\":{\"spec\":{\"priorityClassName\":\"high\",\"containers\":[{\"name\":"   \
	"\"tensorflow\",\"image\":\"i\",\"resources\":{\"requests\":{\"cpu\":\"500m\",\"memory\":\"1Gi\"},"               \
	"\"limits\":{\"cpu\":\"8\"}}}]}}},"                                                                                   \
	"\"PS\":{\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"i\","          \
	"\"resources\":{\"limits\":{\"cpu\":1,\"memory\":\"512Mi\",\"nvidia.com/gpu\":\"1\"}}},"                          \
	"{\"name\":\"side\",\"image\":\"s\",\"resources\":{\"requests\":{},\"limits\":{\"cpu\":\"5\"}}}]}}}"

START_TEST(pod_group_volcano)
{
	tfjob_job *job = job_json("{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"g\","
	                          "\"namespace\":\"ns\",\"uid\":\"u\",\"annotations\":{\"x\":\"y\"}},\"spec\":{"
	                          "\"tfReplicaSpecs\":{" GANG_SPECS "}}}");
	tfjob_render_options o = TFJOB_RENDER_OPTIONS_INIT;
	char *out = NULL;
	ck_assert_int_eq(tfjob_render_pod_group(&out, job, &o, 0, NULL), TFJOB_EINVAL); /* no gang scheduler */
	o.gang_scheduler = TFJOB_GANG_VOLCANO;
	json_t *pg = pod_group(job, &o);
	ck_assert_str_eq(path_str(pg, "apiVersion", NULL, NULL), "scheduling.volcano.sh/v1beta1");
	ck_assert_str_eq(path_str(pg, "kind", NULL, NULL), "PodGroup");
	ck_assert_str_eq(path_str(pg, "metadata", "name", NULL), "g");
	ck_assert_str_eq(path_str(pg, "metadata", "namespace", NULL), "ns");
	ck_assert_str_eq(path_str(pg, "metadata", "annotations", "x"), "y");
	ck_assert_str_eq(path_str(json_array_get(json_object_get(json_object_get(pg, "metadata"), "ownerReferences"), 0),
	                          "uid", NULL, NULL), "u");
	json_t *spec = json_object_get(pg, "spec");
	ck_assert_int_eq(json_integer_value(json_object_get(spec, "minMember")), 3);
	ck_assert_str_eq(path_str(spec, "queue", NULL, NULL), "default");
	ck_assert_ptr_null(json_object_get(spec, "priorityClassName"));
	/* all three replicas: PS limits (no requests) + side's empty requests (limits ignored) + 2 x worker requests */
	char *text = json_dumps(json_object_get(spec, "minResources"), JSON_COMPACT);
	ck_assert_str_eq(text, "{\"cpu\":\"2\",\"memory\":\"2560Mi\",\"nvidia.com/gpu\":\"1\"}");
	free(text);
	json_decref(pg);

	/* minAvailable 1 and the worker's priority class first: one worker's requests */
	o.priority_cb = worker_priority;
	tfjob_job_free(job);
	job = job_json("{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"g\"},\"spec\":{"
	               "\"runPolicy\":{\"schedulingPolicy\":{\"minAvailable\":1,\"queue\":\"q1\",\"priorityClass\":\"pc\"}},"
	               "\"tfReplicaSpecs\":{" GANG_SPECS "}}}");
	pg = pod_group(job, &o);
	spec = json_object_get(pg, "spec");
	ck_assert_int_eq(json_integer_value(json_object_get(spec, "minMember")), 1);
	ck_assert_str_eq(path_str(spec, "queue", NULL, NULL), "q1");
	ck_assert_str_eq(path_str(spec, "priorityClassName", NULL, NULL), "pc");
	text = json_dumps(json_object_get(spec, "minResources"), JSON_COMPACT);
	ck_assert_str_eq(text, "{\"cpu\":\"500m\",\"memory\":\"1Gi\"}");
	free(text);
	json_decref(pg);
	tfjob_job_free(job);
}
END_TEST

START_TEST(pod_group_scheduler_plugins)
{
	tfjob_job *job = job_json("{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"g\"},"
	                          "\"spec\":{\"runPolicy\":{\"schedulingPolicy\":{\"scheduleTimeoutSeconds\":30,"
	                          "\"minResources\":{\"cpu\":\"1000m\",\"memory\":\"0.5Gi\"}}},\"tfReplicaSpecs\":{" GANG_SPECS "}}}");
	tfjob_render_options o = TFJOB_RENDER_OPTIONS_INIT;
	o.gang_scheduler = TFJOB_GANG_SCHEDULER_PLUGINS;
	json_t *pg = pod_group(job, &o);
	ck_assert_str_eq(path_str(pg, "apiVersion", NULL, NULL), "scheduling.x-k8s.io/v1alpha1");
	ck_assert_str_eq(path_str(pg, "metadata", "namespace", NULL), "default");
	ck_assert_ptr_null(json_object_get(json_object_get(pg, "metadata"), "annotations"));
	json_t *spec = json_object_get(pg, "spec");
	ck_assert_ptr_null(json_object_get(spec, "queue"));
	ck_assert_int_eq(json_integer_value(json_object_get(spec, "scheduleTimeoutSeconds")), 30);
	ck_assert_int_eq(json_integer_value(json_object_get(spec, "minMember")), 3);
	char *text = json_dumps(json_object_get(spec, "minResources"), JSON_COMPACT);
	ck_assert_str_eq(text, "{\"cpu\":\"1\",\"memory\":\"512Mi\"}");
	free(text);
	json_decref(pg);
	tfjob_job_free(job);

	/* a malformed quantity names its field */
	job = tfjob("ns", "\"Worker\":{\"replicas\":2,\"template\":{\"spec\":{\"containers\":[{\"name\":\"tensorflow\","
	                  "\"image\":\"i\",\"resources\":{\"limits\":{\"cpu\":\"lots\"}}}]}}}", NULL);
	tfjob_error *err = NULL;
	char *out = NULL;
	ck_assert_int_eq(tfjob_render_pod_group(&out, job, &o, 0, &err), TFJOB_ESCHEMA);
	ck_assert_str_eq(tfjob_error_field(err), "spec.tfReplicaSpecs[Worker].template.spec.containers[0].resources.limits.cpu");
	tfjob_error_free(err);
	tfjob_job_free(job);
}
END_TEST

/* v1.9 mode: TF_CONFIG of an index beyond replicas, as v1.9 writes it into the pods it creates there. */
START_TEST(compat_index_beyond_replicas)
{
	tfjob_job *job = tfjob("ns", "\"Master\":{\"replicas\":0,\"template\":{\"spec\":{\"containers\":[{\"name\":"
	                             "\"tensorflow\",\"image\":\"i\"}]}}}", NULL);
	tfjob_render_options o = TFJOB_RENDER_OPTIONS_INIT;
	char *out = NULL;
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_tf_config(&out, job, "Master", 0, &o, &err), TFJOB_EINVAL);
	tfjob_error_free(err);
	o.compat = TFJOB_COMPAT_TRAINING_OPERATOR_1_9;
	ck_assert_int_eq(tfjob_tf_config(&out, job, "Master", 0, &o, NULL), 0);
	ck_assert_str_eq(out, "{\"cluster\":{\"master\":[]},\"task\":{\"type\":\"master\",\"index\":0},\"environment\":\"cloud\"}");
	tfjob_free(out);
	ck_assert_int_eq(tfjob_tf_config(&out, job, "Master", -1, &o, NULL), TFJOB_EINVAL);
	tfjob_job_free(job);

	/* Sparse form: a worker beyond replicas has no address (v1.9 panics). */
	job = tfjob("ns", "\"Worker\":{\"replicas\":1,\"template\":{\"spec\":{\"containers\":[{\"name\":"
	                  "\"tensorflow\",\"image\":\"i\"}]}}},\"PS\":{\"replicas\":1,\"template\":{\"spec\":"
	                  "{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"i\"}]}}}", "\"enableDynamicWorker\":true,");
	ck_assert_int_eq(tfjob_tf_config(&out, job, "Worker", 1, &o, NULL), TFJOB_ESTATE);
	tfjob_job_free(job);
}
END_TEST

/* Regression (fuzz_render): no container asks for resources, so the sum is empty. */
START_TEST(pod_group_without_resources)
{
	tfjob_job *job = tfjob("ns", "\"Worker\":{\"replicas\":2,\"template\":{\"spec\":{\"containers\":[{\"name\":"
	                             "\"tensorflow\",\"image\":\"i\"}]}}}", NULL);
	tfjob_render_options o = TFJOB_RENDER_OPTIONS_INIT;
	o.gang_scheduler = TFJOB_GANG_VOLCANO;
	json_t *pg = pod_group(job, &o);
	json_t *spec = json_object_get(pg, "spec");
	ck_assert_int_eq(json_integer_value(json_object_get(spec, "minMember")), 2);
	json_t *min = json_object_get(spec, "minResources");
	ck_assert(min == NULL || json_object_size(min) == 0);
	json_decref(pg);
	tfjob_job_free(job);
}
END_TEST

/* tfjob_tf_config writes TF_CONFIG without building the replicas' addresses: the same bytes as a full graph. */
START_TEST(one_call_matches_graph)
{
	const char *specs[] = {
		"\"PS\":" RSPEC(2) ",\"Worker\":" RSPEC(3) ",\"Evaluator\":" RSPEC(1) ",\"Chief\":" RSPEC(1),
		"\"Worker\":" RSPEC(12) ",\"PS\":" RSPEC(0),
		"\"Worker\":" RSPEC(1),
	};
	const char *extras[] = { NULL, "\"enableDynamicWorker\":true," };
	for (size_t s = 0; s < sizeof(specs) / sizeof(specs[0]); s++)
		for (size_t e = 0; e < sizeof(extras) / sizeof(extras[0]); e++)
			for (int variant = 0; variant < 4; variant++) {
				tfjob_job *job = tfjob(variant & 1 ? "n<s>&" : NULL, specs[s], extras[e]);
				tfjob_render_options o = TFJOB_RENDER_OPTIONS_INIT;
				o.compat = variant & 2 ? TFJOB_COMPAT_TRAINING_OPERATOR_1_9 : TFJOB_COMPAT_DOCUMENTED;
				o.exclude_evaluator = variant == 3;
				o.cluster_domain = variant & 1 ? "cluster.local" : NULL;
				tfjob_graph *g = NULL;
				ck_assert_int_eq(tfjob_graph_new(&g, job, &o, NULL), 0);
				for (size_t t = 0; t < tfjob_graph_type_count(g); t++)
					for (int64_t i = 0; i < tfjob_graph_replicas(g, t); i++) {
						char *a = tf_config(job, tfjob_graph_type(g, t), i, &o), *b = NULL;
						ck_assert_int_eq(tfjob_graph_tf_config(&b, g, t, i, NULL), 0);
						ck_assert_str_eq(a, b);
						tfjob_free(a);
						tfjob_free(b);
					}
				tfjob_graph_free(g);
				tfjob_job_free(job);
			}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cluster");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, options_versions);
	tcase_add_test(tc, v19_cluster_spec_table);
	tcase_add_test(tc, all_types_sorted_default_namespace);
	tcase_add_test(tc, custom_ports_per_type);
	tcase_add_test(tc, not_distributed);
	tcase_add_test(tc, replicas_zero_listed_empty);
	tcase_add_test(tc, sparse_ps_and_workers);
	tcase_add_test(tc, sparse_without_ps_both_modes);
	tcase_add_test(tc, names_with_slash_and_cluster_domain);
	tcase_add_test(tc, address_resolver);
	tcase_add_test(tc, errors);
	tcase_add_test(tc, pod_fields);
	tcase_add_test(tc, master_label_with_chief_and_master);
	tcase_add_test(tc, service_fields);
	tcase_add_test(tc, gang_scheduling_decoration);
	tcase_add_test(tc, render_all_order);
	tcase_add_test(tc, render_all_streamed);
	tcase_add_test(tc, defaulted_example_both_modes);
	tcase_add_test(tc, pod_group_volcano);
	tcase_add_test(tc, pod_group_without_resources);
	tcase_add_test(tc, compat_index_beyond_replicas);
	tcase_add_test(tc, pod_group_scheduler_plugins);
	tcase_add_test(tc, one_call_matches_graph);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
