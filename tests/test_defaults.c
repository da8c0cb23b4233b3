/*
 * TFJob defaults in both compat modes, with a table after training-operator v1.9's own defaults
 * test (TestSetDefaultTFJob, TestSetTypeNames), written afresh.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "testutil.h"

#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define HEAD "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: d}\n"

/* Parse, default in the given mode, and return the compact JSON of `spec` (caller frees). */
static char *defaulted_spec(const char *yaml, tfjob_compat compat)
{
	tfjob_job *job = tu_parse(yaml);
	tfjob_default_options opts = TFJOB_DEFAULT_OPTIONS_INIT;
	opts.compat = compat;
	tfjob_error *err = NULL;
	int rc = tfjob_job_apply_defaults(job, &opts, &err);
	ck_assert_msg(rc == 0, "defaults failed: %s", tfjob_error_message(err));
	char *text = NULL;
	ck_assert_int_eq(tfjob_job_to_json(&text, job, TFJOB_JSON_COMPACT, NULL), 0);
	json_t *root = json_loads(text, 0, NULL);
	ck_assert_ptr_nonnull(root);
	char *spec = json_dumps(json_object_get(root, "spec"), JSON_COMPACT | JSON_ENCODE_ANY);
	json_decref(root);
	tfjob_free(text);
	tfjob_job_free(job);
	return spec;
}

#define TF_CONTAINER_WITH_PORT(port)                                                                                   \
	"{\"name\":\"tensorflow\",\"image\":\"tf\",\"ports\":[{\"name\":\"tfjob-port\",\"containerPort\":" #port "}]}"

/* Mirror of v1.9's TestSetDefaultTFJob cases, in both modes. `cpp` is the expected cleanPodPolicy per mode. */
static const struct {
	const char *name;
	const char *worker_yaml; /* the Worker replica spec, YAML flow style */
	const char *run_policy;  /* runPolicy, YAML flow style, or NULL */
	const char *expected_worker;
	const char *expected_cpp[2]; /* documented, v1.9 */
} v19_table[] = {
	{ "set replicas",
	  "{restartPolicy: Always, template: {spec: {containers: [{name: tensorflow, image: tf, ports: [{name: tfjob-port, containerPort: 2222}]}]}}}",
	  NULL,
	  "{\"restartPolicy\":\"Always\",\"template\":{\"spec\":{\"containers\":[" TF_CONTAINER_WITH_PORT(2222) "]}},\"replicas\":1}",
	  { "Running", "None" } },
	{ "set replicas with default restartpolicy",
	  "{template: {spec: {containers: [{name: tensorflow, image: tf, ports: [{name: tfjob-port, containerPort: 2222}]}]}}}",
	  NULL,
	  "{\"template\":{\"spec\":{\"containers\":[" TF_CONTAINER_WITH_PORT(2222) "]}},\"replicas\":1,\"restartPolicy\":\"Never\"}",
	  { "Running", "None" } },
	{ "set replicas with default port",
	  "{replicas: 1, restartPolicy: Always, template: {spec: {containers: [{name: tensorflow, image: tf}]}}}",
	  NULL,
	  "{\"replicas\":1,\"restartPolicy\":\"Always\",\"template\":{\"spec\":{\"containers\":[" TF_CONTAINER_WITH_PORT(2222) "]}}}",
	  { "Running", "None" } },
	{ "set replicas adding default port",
	  "{replicas: 1, restartPolicy: Always, template: {spec: {containers: [{name: tensorflow, image: tf, ports: [{name: customPort, containerPort: 1234}]}]}}}",
	  NULL,
	  "{\"replicas\":1,\"restartPolicy\":\"Always\",\"template\":{\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"tf\","
	  "\"ports\":[{\"name\":\"customPort\",\"containerPort\":1234},{\"name\":\"tfjob-port\",\"containerPort\":2222}]}]}}}",
	  { "Running", "None" } },
	{ "set custom cleanpod policy",
	  "{replicas: 1, restartPolicy: Always, template: {spec: {containers: [{name: tensorflow, image: tf, ports: [{name: customPort, containerPort: 1234}]}]}}}",
	  "{cleanPodPolicy: All}",
	  "{\"replicas\":1,\"restartPolicy\":\"Always\",\"template\":{\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"tf\","
	  "\"ports\":[{\"name\":\"customPort\",\"containerPort\":1234},{\"name\":\"tfjob-port\",\"containerPort\":2222}]}]}}}",
	  { "All", "All" } },
};

START_TEST(v19_defaults_table)
{
	for (size_t i = 0; i < sizeof(v19_table) / sizeof(v19_table[0]); i++) {
		for (int mode = 0; mode <= 1; mode++) {
			char yaml[2048], want[4096];
			snprintf(yaml, sizeof(yaml), HEAD "spec:\n%s%s%s  tfReplicaSpecs:\n    Worker: %s\n",
			         v19_table[i].run_policy ? "  runPolicy: " : "", v19_table[i].run_policy ? v19_table[i].run_policy : "",
			         v19_table[i].run_policy ? "\n" : "", v19_table[i].worker_yaml);
			if (v19_table[i].run_policy)
				snprintf(want, sizeof(want),
				         "{\"runPolicy\":{\"cleanPodPolicy\":\"%s\"},\"tfReplicaSpecs\":{\"Worker\":%s},\"successPolicy\":\"\"}",
				         v19_table[i].expected_cpp[mode], v19_table[i].expected_worker);
			else
				snprintf(want, sizeof(want),
				         "{\"tfReplicaSpecs\":{\"Worker\":%s},\"runPolicy\":{\"cleanPodPolicy\":\"%s\"},\"successPolicy\":\"\"}",
				         v19_table[i].expected_worker, v19_table[i].expected_cpp[mode]);
			char *got = defaulted_spec(yaml, (tfjob_compat)mode);
			ck_assert_msg(!strcmp(got, want), "%s (%s):\n got  %s\n want %s", v19_table[i].name,
			              tfjob_compat_name((tfjob_compat)mode), got, want);
			free(got);
		}
	}
}
END_TEST

START_TEST(clean_pod_policy_and_success_policy)
{
	char *d = defaulted_spec(HEAD "spec: {}\n", TFJOB_COMPAT_DOCUMENTED);
	ck_assert_str_eq(d, "{\"runPolicy\":{\"cleanPodPolicy\":\"Running\"},\"successPolicy\":\"\"}");
	free(d);
	d = defaulted_spec(HEAD, TFJOB_COMPAT_TRAINING_OPERATOR_1_9);
	ck_assert_str_eq(d, "{\"runPolicy\":{\"cleanPodPolicy\":\"None\"},\"successPolicy\":\"\"}");
	free(d);
	/* Null is absent. Existing values are kept, whatever they are (validation judges them). */
	d = defaulted_spec(HEAD "spec: {runPolicy: {cleanPodPolicy: null, backoffLimit: 3}, successPolicy: ~}\n",
	                   TFJOB_COMPAT_DOCUMENTED);
	ck_assert_str_eq(d, "{\"runPolicy\":{\"cleanPodPolicy\":\"Running\",\"backoffLimit\":3},\"successPolicy\":\"\"}");
	free(d);
	for (int mode = 0; mode <= 1; mode++) {
		d = defaulted_spec(HEAD "spec: {runPolicy: {cleanPodPolicy: Running}, successPolicy: AllWorkers}\n", (tfjob_compat)mode);
		ck_assert_str_eq(d, "{\"runPolicy\":{\"cleanPodPolicy\":\"Running\"},\"successPolicy\":\"AllWorkers\"}");
		free(d);
		d = defaulted_spec(HEAD "spec: {runPolicy: {cleanPodPolicy: Bogus}, successPolicy: \"\"}\n", (tfjob_compat)mode);
		ck_assert_str_eq(d, "{\"runPolicy\":{\"cleanPodPolicy\":\"Bogus\"},\"successPolicy\":\"\"}");
		free(d);
	}
}
END_TEST

/* Replica type keys in canonical case, position kept (TestSetTypeNames and more). */
static const struct {
	const char *specs;    /* tfReplicaSpecs, flow YAML; each value is {replicas: N} */
	const char *keys[2];  /* expected key order per mode (documented, v1.9), space-separated with replicas */
} key_table[] = {
	{ "{WORKER: {replicas: 2}}", { "Worker=2", "Worker=2" } },
	{ "{worker: {replicas: 2}, ps: {replicas: 1}}", { "Worker=2 PS=1", "Worker=2 PS=1" } },
	{ "{chief: {replicas: 1}, EvAlUaToR: {replicas: 1}, master: {replicas: 1}}",
	  { "Chief=1 Evaluator=1 Master=1", "Chief=1 Evaluator=1 Master=1" } },
	{ "{Worker: {replicas: 2}, foo: {replicas: 1}}", { "Worker=2 foo=1", "Worker=2 foo=1" } },
	/* A variant beside the canonical key: documented keeps both (validation rejects the pair);
	 * v1.9 moves the variant onto the canonical key, replacing it. */
	{ "{Worker: {replicas: 2}, worker: {replicas: 5}}", { "Worker=2 worker=5", "Worker=5" } },
	/* Two variants and no canonical key: documented keeps both; v1.9 renames one of them. */
	{ "{worker: {replicas: 2}, WORKER: {replicas: 5}}", { "worker=2 WORKER=5", "Worker=2 WORKER=5" } },
};

START_TEST(replica_key_case)
{
	for (size_t i = 0; i < sizeof(key_table) / sizeof(key_table[0]); i++) {
		for (int mode = 0; mode <= 1; mode++) {
			char yaml[1024];
			snprintf(yaml, sizeof(yaml), HEAD "spec:\n  tfReplicaSpecs: %s\n", key_table[i].specs);
			tfjob_job *job = tu_parse(yaml);
			tfjob_default_options opts = TFJOB_DEFAULT_OPTIONS_INIT;
			opts.compat = (tfjob_compat)mode;
			ck_assert_int_eq(tfjob_job_apply_defaults(job, &opts, NULL), 0);
			char got[512] = "";
			for (size_t k = 0; k < tfjob_job_replica_type_count(job); k++) {
				const char *type = tfjob_job_replica_type(job, k);
				int64_t r = -1;
				ck_assert_int_eq(tfjob_job_replicas(&r, job, type), 0);
				snprintf(got + strlen(got), sizeof(got) - strlen(got), "%s%s=%lld", k ? " " : "", type, (long long)r);
				ck_assert_str_eq(tfjob_job_restart_policy(job, type), "Never");
			}
			ck_assert_msg(!strcmp(got, key_table[i].keys[mode]), "%s (%s): got '%s', want '%s'", key_table[i].specs,
			              tfjob_compat_name((tfjob_compat)mode), got, key_table[i].keys[mode]);
			tfjob_job_free(job);
		}
	}
}
END_TEST

/* The tfjob-port goes to the `tensorflow` container, else the first one, unless a port has that name. */
static const struct {
	const char *containers;
	const char *expected;
} port_table[] = {
	{ "[{name: sidecar, image: s}, {name: tensorflow, image: t}]",
	  "[{\"name\":\"sidecar\",\"image\":\"s\"},{\"name\":\"tensorflow\",\"image\":\"t\",\"ports\":[{\"name\":\"tfjob-port\",\"containerPort\":2222}]}]" },
	{ "[{name: main, image: m}, {name: other, image: o}]",
	  "[{\"name\":\"main\",\"image\":\"m\",\"ports\":[{\"name\":\"tfjob-port\",\"containerPort\":2222}]},{\"name\":\"other\",\"image\":\"o\"}]" },
	{ "[{name: tensorflow, image: t, ports: [{name: tfjob-port, containerPort: 3333}]}]",
	  "[{\"name\":\"tensorflow\",\"image\":\"t\",\"ports\":[{\"name\":\"tfjob-port\",\"containerPort\":3333}]}]" },
	{ "[{name: side, image: s, ports: [{name: tfjob-port, containerPort: 1}]}, {name: tensorflow, image: t}]",
	  "[{\"name\":\"side\",\"image\":\"s\",\"ports\":[{\"name\":\"tfjob-port\",\"containerPort\":1}]},"
	  "{\"name\":\"tensorflow\",\"image\":\"t\",\"ports\":[{\"name\":\"tfjob-port\",\"containerPort\":2222}]}]" },
	{ "[{name: tensorflow, image: t, ports: null}]",
	  "[{\"name\":\"tensorflow\",\"image\":\"t\",\"ports\":[{\"name\":\"tfjob-port\",\"containerPort\":2222}]}]" },
	{ "[{name: tensorflow, image: t, ports: [{containerPort: 80}]}]",
	  "[{\"name\":\"tensorflow\",\"image\":\"t\",\"ports\":[{\"containerPort\":80},{\"name\":\"tfjob-port\",\"containerPort\":2222}]}]" },
	{ "[]", "[]" },
};

START_TEST(tfjob_port)
{
	for (size_t i = 0; i < sizeof(port_table) / sizeof(port_table[0]); i++) {
		for (int mode = 0; mode <= 1; mode++) {
			char yaml[1024], want[2048];
			snprintf(yaml, sizeof(yaml), HEAD "spec:\n  tfReplicaSpecs:\n    PS: {template: {spec: {containers: %s}}}\n",
			         port_table[i].containers);
			snprintf(want, sizeof(want), "{\"tfReplicaSpecs\":{\"PS\":{\"template\":{\"spec\":{\"containers\":%s}},"
			         "\"replicas\":1,\"restartPolicy\":\"Never\"}},\"runPolicy\":{\"cleanPodPolicy\":\"%s\"},\"successPolicy\":\"\"}",
			         port_table[i].expected, mode ? "None" : "Running");
			char *got = defaulted_spec(yaml, (tfjob_compat)mode);
			ck_assert_msg(!strcmp(got, want), "%s:\n got  %s\n want %s", port_table[i].containers, got, want);
			free(got);
		}
	}
}
END_TEST

START_TEST(existing_values_kept)
{
	char *d = defaulted_spec(HEAD "spec:\n  tfReplicaSpecs:\n"
	                         "    Worker: {replicas: 0, restartPolicy: ExitCode, template: {spec: {containers: "
	                         "[{name: tensorflow, image: tf, ports: [{name: tfjob-port, containerPort: 2222}]}]}}}\n"
	                         "    PS: {replicas: 3, restartPolicy: \"\"}\n",
	                         TFJOB_COMPAT_DOCUMENTED);
	ck_assert_str_eq(d, "{\"tfReplicaSpecs\":{\"Worker\":{\"replicas\":0,\"restartPolicy\":\"ExitCode\",\"template\":{\"spec\":{"
	                    "\"containers\":[" TF_CONTAINER_WITH_PORT(2222) "]}}},\"PS\":{\"replicas\":3,\"restartPolicy\":\"Never\"}},"
	                    "\"runPolicy\":{\"cleanPodPolicy\":\"Running\"},\"successPolicy\":\"\"}");
	free(d);
}
END_TEST

START_TEST(idempotent_and_robust)
{
	static const char *const inputs[] = {
		HEAD "spec:\n  tfReplicaSpecs:\n    worker: {template: {spec: {containers: [{name: tensorflow, image: t}]}}}\n",
		HEAD "spec:\n  tfReplicaSpecs:\n    Worker:\n",                         /* null replica spec */
		HEAD "spec:\n  tfReplicaSpecs:\n    Worker: {template: {spec: {containers: []}}}\n",
		HEAD "spec:\n  tfReplicaSpecs:\n    Worker: {template: {spec: {}}}\n",
		HEAD "spec:\n  tfReplicaSpecs:\n    Worker: {template: null}\n",
		HEAD "spec:\n  tfReplicaSpecs: {}\n",
		HEAD "spec:\n  tfReplicaSpecs: null\n",
		HEAD "spec: null\n",
		HEAD,
	};
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		for (int mode = 0; mode <= 1; mode++) {
			tfjob_job *job = tu_parse(inputs[i]);
			tfjob_default_options opts = TFJOB_DEFAULT_OPTIONS_INIT;
			opts.compat = (tfjob_compat)mode;
			tfjob_error *err = NULL;
			ck_assert_msg(tfjob_job_apply_defaults(job, &opts, &err) == 0, "%s: %s", inputs[i], tfjob_error_message(err));
			char *once = NULL, *twice = NULL;
			ck_assert_int_eq(tfjob_job_to_json(&once, job, TFJOB_JSON_COMPACT, NULL), 0);
			ck_assert_int_eq(tfjob_job_apply_defaults(job, &opts, NULL), 0);
			ck_assert_int_eq(tfjob_job_to_json(&twice, job, TFJOB_JSON_COMPACT, NULL), 0);
			ck_assert_str_eq(once, twice);
			ck_assert_str_eq(tfjob_job_clean_pod_policy(job), mode ? "None" : "Running");
			ck_assert_str_eq(tfjob_job_success_policy(job), "");
			tfjob_free(once);
			tfjob_free(twice);
			tfjob_job_free(job);
		}
	}
}
END_TEST

/* jansson allocations fail after a budget: out of memory at every step of the defaults. */
static long alloc_budget = -1;
static void *budget_malloc(size_t n)
{
	if (alloc_budget == 0)
		return NULL;
	if (alloc_budget > 0)
		alloc_budget--;
	return malloc(n);
}

START_TEST(out_of_memory_leaves_job_unchanged)
{
	static const char *const inputs[] = {
		HEAD "spec:\n  tfReplicaSpecs:\n    worker: {template: {spec: {containers: [{name: tensorflow, image: i}]}}}\n"
		     "    PS: {replicas: 2, template: {spec: {containers: [{name: a, image: i, ports: []}, {name: b}]}}}\n"
		     "    Chief: {restartPolicy: \"\", template: {spec: {containers: [{name: tensorflow, image: i}]}}}\n",
		HEAD "spec: null\n",
		HEAD "spec:\n  runPolicy: null\n  tfReplicaSpecs: {Worker: {}, wORKER: {}, WORKER: {replicas: null}}\n",
	};
	for (size_t i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++)
		for (int compat = 0; compat < 2; compat++) {
			tfjob_default_options opts = TFJOB_DEFAULT_OPTIONS_INIT;
			opts.compat = compat ? TFJOB_COMPAT_TRAINING_OPERATOR_1_9 : TFJOB_COMPAT_DOCUMENTED;
			tfjob_job *ref = tu_parse(inputs[i]);
			ck_assert_int_eq(tfjob_job_apply_defaults(ref, &opts, NULL), 0);
			char *want = NULL;
			ck_assert_int_eq(tfjob_job_to_json(&want, ref, 0, NULL), 0);
			tfjob_job_free(ref);
			bool done = false;
			for (long budget = 0; !done; budget++) {
				tfjob_job *job = tu_parse(inputs[i]);
				char *before = NULL, *after = NULL;
				ck_assert_int_eq(tfjob_job_to_json(&before, job, 0, NULL), 0);
				alloc_budget = budget;
				json_set_alloc_funcs(budget_malloc, free);
				int rc = tfjob_job_apply_defaults(job, &opts, NULL);
				json_set_alloc_funcs(malloc, free);
				alloc_budget = -1;
				ck_assert_int_eq(tfjob_job_to_json(&after, job, 0, NULL), 0);
				if (rc == 0) {
					ck_assert_str_eq(after, want);
					done = true;
				} else {
					ck_assert_int_eq(rc, TFJOB_ENOMEM);
					ck_assert_msg(!strcmp(before, after), "input %zu, budget %ld: changed to %s", i, budget, after);
				}
				tfjob_free(before);
				tfjob_free(after);
				tfjob_job_free(job);
			}
			tfjob_free(want);
		}
}
END_TEST

START_TEST(errors_leave_job_unchanged)
{
	tfjob_job *job = tu_parse(HEAD "spec:\n  runPolicy: {cleanPodPolicy: 5}\n  tfReplicaSpecs:\n    Worker: {}\n");
	char *before = NULL, *after = NULL;
	ck_assert_int_eq(tfjob_job_to_json(&before, job, 0, NULL), 0);
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_job_apply_defaults(job, NULL, &err), TFJOB_ESCHEMA);
	ck_assert_str_eq(tfjob_error_field(err), "spec.runPolicy.cleanPodPolicy");
	ck_assert_str_eq(tfjob_error_message(err),
	                 "spec.runPolicy.cleanPodPolicy: Invalid value: 5: spec.runPolicy.cleanPodPolicy in body must be of type string: \"integer\"");
	tfjob_error_free(err);
	ck_assert_int_eq(tfjob_job_to_json(&after, job, 0, NULL), 0);
	ck_assert_str_eq(before, after);
	tfjob_free(before);
	tfjob_free(after);
	tfjob_job_free(job);

	/* Containers of the wrong type, ports of the wrong type. */
	static const struct {
		const char *yaml;
		const char *field;
	} typed[] = {
		{ HEAD "spec: {tfReplicaSpecs: {Worker: {template: {spec: {containers: {name: tensorflow}}}}}}\n",
		  "spec.tfReplicaSpecs[Worker].template.spec.containers" },
		{ HEAD "spec: {tfReplicaSpecs: {Worker: {template: {spec: {containers: [{name: tensorflow, ports: 2222}]}}}}}\n",
		  "spec.tfReplicaSpecs[Worker].template.spec.containers[0].ports" },
		{ HEAD "spec: {tfReplicaSpecs: {Worker: [1]}}\n", "spec.tfReplicaSpecs[Worker]" },
		{ HEAD "spec: {tfReplicaSpecs: [Worker]}\n", "spec.tfReplicaSpecs" },
		{ HEAD "spec: {tfReplicaSpecs: {Worker: {restartPolicy: [Never]}}}\n", "spec.tfReplicaSpecs[Worker].restartPolicy" },
		{ HEAD "spec: {successPolicy: 1}\n", "spec.successPolicy" },
		{ HEAD "spec: 3\n", "spec" },
	};
	for (size_t i = 0; i < sizeof(typed) / sizeof(typed[0]); i++) {
		job = tu_parse(typed[i].yaml);
		err = NULL;
		ck_assert_int_eq(tfjob_job_apply_defaults(job, NULL, &err), TFJOB_ESCHEMA);
		ck_assert_msg(!strcmp(tfjob_error_field(err), typed[i].field), "%s: field %s", typed[i].yaml, tfjob_error_field(err));
		ck_assert_msg(!strncmp(tfjob_error_message(err), typed[i].field, strlen(typed[i].field)), "%s",
		              tfjob_error_message(err));
		tfjob_error_free(err);
		tfjob_job_free(job);
	}

	/* Arguments and versions. */
	job = tu_parse(HEAD);
	tfjob_default_options opts;
	ck_assert_int_eq(tfjob_default_options_init(&opts, TFJOB_DEFAULT_OPTIONS_VERSION), 0);
	ck_assert_int_eq(opts.compat, TFJOB_COMPAT_DOCUMENTED);
	ck_assert_int_eq(tfjob_default_options_init(&opts, 2), TFJOB_EVERSION);
	ck_assert_int_eq(tfjob_default_options_init(NULL, 1), TFJOB_EINVAL);
	opts.version = 2;
	err = NULL;
	ck_assert_int_eq(tfjob_job_apply_defaults(job, &opts, &err), TFJOB_EVERSION);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "tfjob_default_options version 2"));
	tfjob_error_free(err);
	opts.version = 1;
	opts.compat = (tfjob_compat)9;
	ck_assert_int_eq(tfjob_job_apply_defaults(job, &opts, NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_job_apply_defaults(NULL, NULL, NULL), TFJOB_EINVAL);
	ck_assert_ptr_null(tfjob_job_clean_pod_policy(job));
	tfjob_job_free(job);
}
END_TEST

START_TEST(examples_default_and_validate)
{
	const char *dir = getenv("TFJOB_EXAMPLES");
	ck_assert_ptr_nonnull(dir);
	DIR *d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	int seen = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		size_t n = strlen(e->d_name);
		if (n < 6 || strcmp(e->d_name + n - 5, ".yaml"))
			continue;
		size_t len;
		char *text = tu_read_example(e->d_name, &len);
		for (int mode = 0; mode <= 1; mode++) {
			tfjob_job **jobs = NULL;
			size_t count = 0;
			tfjob_error *err = NULL;
			ck_assert_msg(tfjob_job_parse_all(&jobs, &count, text, len, NULL, &err) == 0, "%s: %s", e->d_name,
			              tfjob_error_message(err));
			ck_assert_uint_ge(count, 1);
			for (size_t j = 0; j < count; j++) {
				tfjob_default_options opts = TFJOB_DEFAULT_OPTIONS_INIT;
				opts.compat = (tfjob_compat)mode;
				ck_assert_int_eq(tfjob_job_apply_defaults(jobs[j], &opts, NULL), 0);
				for (size_t k = 0; k < tfjob_job_replica_type_count(jobs[j]); k++) {
					int64_t r;
					const char *type = tfjob_job_replica_type(jobs[j], k);
					ck_assert_int_eq(tfjob_job_replicas(&r, jobs[j], type), 0);
					ck_assert_ptr_nonnull(tfjob_job_restart_policy(jobs[j], type));
				}
				tfjob_field_errors *errs = tu_validate(jobs[j], (tfjob_compat)mode, NULL);
				ck_assert_msg(tfjob_field_errors_count(errs) == 0, "%s: %s", e->d_name, tfjob_field_errors_message(errs, 0));
				tfjob_field_errors_free(errs);
			}
			tfjob_job_array_free(jobs, count);
		}
		free(text);
		seen++;
	}
	closedir(d);
	ck_assert_int_ge(seen, 5);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("defaults");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, v19_defaults_table);
	tcase_add_test(tc, clean_pod_policy_and_success_policy);
	tcase_add_test(tc, replica_key_case);
	tcase_add_test(tc, tfjob_port);
	tcase_add_test(tc, existing_values_kept);
	tcase_add_test(tc, idempotent_and_robust);
	tcase_add_test(tc, errors_leave_job_unchanged);
	tcase_add_test(tc, out_of_memory_leaves_job_unchanged);
	tcase_add_test(tc, examples_default_and_validate);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
