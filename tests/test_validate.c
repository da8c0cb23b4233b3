/*
 * Validation: every rule of SEMANTICS.md "Validation", defects 9 and 10, the update rules, a
 * table after training-operator v1.9's webhook test (TestValidateTFJob, written afresh), field
 * error messages as Kubernetes prints them, and the JSON form.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "testutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DOC TFJOB_COMPAT_DOCUMENTED
#define V19 TFJOB_COMPAT_TRAINING_OPERATOR_1_9
#define REQ TFJOB_FIELD_VALUE_REQUIRED
#define INV TFJOB_FIELD_VALUE_INVALID
#define FORB TFJOB_FIELD_VALUE_FORBIDDEN
#define NOTSUP TFJOB_FIELD_VALUE_NOT_SUPPORTED
#define DUP TFJOB_FIELD_VALUE_DUPLICATE
#define TYPE TFJOB_FIELD_VALUE_TYPE_INVALID

#define DNS1035_DETAIL                                                                                                 \
	"a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, " \
	"and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is "           \
	"'[a-z]([-a-z0-9]*[a-z0-9])?')"

#define TF_CONTAINER "{name: tensorflow, image: 'kubeflow/tf-mnist-with-summaries:latest'}"
#define VALID_WORKER "{replicas: 2, restartPolicy: OnFailure, template: {spec: {containers: [" TF_CONTAINER "]}}}"

struct expected_error {
	const char *field;
	tfjob_field_error_type type;
	const char *detail; /* NULL: not checked */
};

/* Build a TFJob from a name line, a runPolicy and tfReplicaSpecs (flow YAML; NULL leaves it out). */
static tfjob_job *make_job(const char *metadata, const char *run_policy, const char *specs, const char *extra_spec)
{
	char text[8192];
	int n = snprintf(text, sizeof(text), "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: %s\nspec:\n",
	                 metadata ? metadata : "{name: test}");
	if (run_policy)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "  runPolicy: %s\n", run_policy);
	if (specs)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "  tfReplicaSpecs: %s\n", specs);
	if (extra_spec)
		n += snprintf(text + n, sizeof(text) - (size_t)n, "  %s\n", extra_spec);
	if (!run_policy && !specs && !extra_spec)
		snprintf(text + n, sizeof(text) - (size_t)n, "  {}\n");
	return tu_parse(text);
}

/* The errors must be exactly the expected ones (in any order). */
static void expect_errors(const char *label, const tfjob_field_errors *errs, const struct expected_error *want, size_t n)
{
	char all[4096] = "";
	for (size_t i = 0; i < tfjob_field_errors_count(errs); i++)
		snprintf(all + strlen(all), sizeof(all) - strlen(all), "\n  %s", tfjob_field_errors_message(errs, i));
	ck_assert_msg(tfjob_field_errors_count(errs) == n, "%s: expected %zu errors, got %zu:%s", label, n,
	              tfjob_field_errors_count(errs), all);
	bool used[64] = { false };
	for (size_t w = 0; w < n; w++) {
		bool found = false;
		for (size_t i = 0; i < tfjob_field_errors_count(errs) && !found; i++) {
			if (used[i] || strcmp(tfjob_field_errors_field(errs, i), want[w].field) ||
			    tfjob_field_errors_type(errs, i) != want[w].type)
				continue;
			if (want[w].detail && strcmp(tfjob_field_errors_detail(errs, i), want[w].detail))
				continue;
			used[i] = found = true;
		}
		ck_assert_msg(found, "%s: missing %s %s (%s); got:%s", label, tfjob_field_error_type_name(want[w].type),
		              want[w].field, want[w].detail ? want[w].detail : "*", all);
	}
}

static void check(const char *label, const tfjob_job *job, tfjob_compat compat, const tfjob_job *old,
                  const struct expected_error *want, size_t n)
{
	tfjob_field_errors *errs = tu_validate(job, compat, old);
	char full[256];
	snprintf(full, sizeof(full), "%s [%s]", label, tfjob_compat_name(compat));
	expect_errors(full, errs, want, n);
	tfjob_field_errors_free(errs);
}

#define NONE ((const struct expected_error *)NULL), 0
#define ERRS(...) ((const struct expected_error[]){ __VA_ARGS__ }), \
	(sizeof((const struct expected_error[]){ __VA_ARGS__ }) / sizeof(struct expected_error))

/* ---- v1.9's webhook table, both modes ---- */

START_TEST(v19_webhook_table)
{
	for (int mode = 0; mode <= 1; mode++) {
		tfjob_compat c = (tfjob_compat)mode;
		tfjob_job *job;

		job = make_job(NULL, "{managedBy: kubeflow.org/training-operator}", "{Worker: " VALID_WORKER "}", NULL);
		check("valid tfJob", job, c, NULL, NONE);
		tfjob_job_free(job);

		job = make_job("{name: 00test}", NULL, "{Worker: " VALID_WORKER "}", NULL);
		check("TFJob name does not meet DNS1035", job, c, NULL, ERRS({ "metadata.name", INV, "should match: " DNS1035_DETAIL }));
		tfjob_job_free(job);

		job = make_job(NULL, NULL, "{Worker: {template: {spec: {containers: []}}}}", NULL);
		check("no containers", job, c, NULL,
		      ERRS({ "spec.tfReplicaSpecs[Worker].template.spec.containers", REQ, "must be specified" },
		           { "spec.tfReplicaSpecs[Worker].template.spec.containers", REQ,
		             "must have at least one container with name tensorflow" }));
		tfjob_job_free(job);

		job = make_job(NULL, NULL, "{Worker: {template: {spec: {containers: [{name: tensorflow, image: ''}]}}}}", NULL);
		check("empty image", job, c, NULL,
		      ERRS({ "spec.tfReplicaSpecs[Worker].template.spec.containers[0].image", REQ, "must be required" }));
		tfjob_job_free(job);

		job = make_job(NULL, NULL, "{Worker: {template: {spec: {containers: [{name: '', image: 'kubeflow/tf-dist-mnist-test:1.0'}]}}}}", NULL);
		check("tfJob default container name doesn't present", job, c, NULL,
		      ERRS({ "spec.tfReplicaSpecs[Worker].template.spec.containers", REQ,
		             "must have at least one container with name tensorflow" }));
		tfjob_job_free(job);

		job = make_job(NULL, NULL, "{Chief: {template: {spec: {containers: [" TF_CONTAINER "]}}},"
		                           " Master: {template: {spec: {containers: [" TF_CONTAINER "]}}}}", NULL);
		check("there are more than 2 masterReplica's or ChiefReplica's", job, c, NULL,
		      ERRS({ "spec.tfReplicaSpecs", FORB, "must not have more than 1 Chief or Master role" }));
		tfjob_job_free(job);

		job = make_job(NULL, "{managedBy: other-job-controller}", "{Worker: " VALID_WORKER "}", NULL);
		check("attempt to set unsupported managedBy controller name gets rejected", job, c, NULL,
		      ERRS({ "spec.runPolicy.managedBy", NOTSUP,
		             "supported values: \"kubeflow.org/training-operator\", \"kueue.x-k8s.io/multikueue\"" }));
		tfjob_job_free(job);

		job = make_job(NULL, "{managedBy: kueue.x-k8s.io/multikueue}", "{Worker: " VALID_WORKER "}", NULL);
		check("multikueue is supported", job, c, NULL, NONE);
		tfjob_job_free(job);
	}
}
END_TEST

/* ---- metadata.name and generateName ---- */

START_TEST(dns1035_names)
{
	static const char *const valid[] = { "a", "test", "my-name", "abc-123", "a1",
		                                 "abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefgh" /* 63 */ };
	static const struct {
		const char *name;
		const char *detail;
	} invalid[] = {
		{ "00test", "should match: " DNS1035_DETAIL },
		{ "Test", "should match: " DNS1035_DETAIL },
		{ "a-", "should match: " DNS1035_DETAIL },
		{ "-a", "should match: " DNS1035_DETAIL },
		{ "a.b", "should match: " DNS1035_DETAIL },
		{ "a_b", "should match: " DNS1035_DETAIL },
		{ "abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghi", /* 64 */
		  "should match: must be no more than 63 characters" },
		{ "Abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghi",
		  "should match: must be no more than 63 characters," DNS1035_DETAIL },
	};
	for (int mode = 0; mode <= 1; mode++) {
		for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
			char meta[128];
			snprintf(meta, sizeof(meta), "{name: '%s'}", valid[i]);
			/* Worker x1: the child {name}-worker-0 must fit in 63 characters too (documented mode). */
			tfjob_job *job = make_job(meta, NULL, "{Worker: {template: {spec: {containers: [" TF_CONTAINER "]}}}}", NULL);
			if (mode == DOC && strlen(valid[i]) + strlen("-worker-0") > 63)
				check(valid[i], job, DOC, NULL, ERRS({ "metadata.name", INV, NULL }));
			else
				check(valid[i], job, (tfjob_compat)mode, NULL, NONE);
			tfjob_job_free(job);
		}
		for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
			char meta[128];
			snprintf(meta, sizeof(meta), "{name: '%s'}", invalid[i].name);
			tfjob_job *job = make_job(meta, NULL, "{Worker: " VALID_WORKER "}", NULL);
			check(invalid[i].name, job, (tfjob_compat)mode, NULL, ERRS({ "metadata.name", INV, invalid[i].detail }));
			tfjob_field_errors *errs = tu_validate(job, (tfjob_compat)mode, NULL);
			char msg[1024];
			snprintf(msg, sizeof(msg), "metadata.name: Invalid value: \"%s\": %s", invalid[i].name, invalid[i].detail);
			ck_assert_str_eq(tfjob_field_errors_message(errs, 0), msg);
			char value[128];
			snprintf(value, sizeof(value), "\"%s\"", invalid[i].name);
			ck_assert_str_eq(tfjob_field_errors_value(errs, 0), value);
			tfjob_field_errors_free(errs);
			tfjob_job_free(job);
		}
	}
}
END_TEST

START_TEST(namespaces_are_dns1123_labels)
{
	static const char *const valid[] = { "default", "kubeflow", "0team", "a-1", "" };
	static const char *const invalid[] = { "../../../x", "a/b", "Team", "-a", "a-", "a.b", "a_b",
		                                   "abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghi" };
	for (int mode = 0; mode <= 1; mode++) {
		for (size_t i = 0; i < sizeof(valid) / sizeof(valid[0]); i++) {
			char meta[160];
			snprintf(meta, sizeof(meta), "{name: test, namespace: '%s'}", valid[i]);
			tfjob_job *job = make_job(meta, NULL, "{Worker: " VALID_WORKER "}", NULL);
			check(valid[i], job, (tfjob_compat)mode, NULL, NONE);
			tfjob_job_free(job);
		}
		for (size_t i = 0; i < sizeof(invalid) / sizeof(invalid[0]); i++) {
			char meta[160];
			snprintf(meta, sizeof(meta), "{name: test, namespace: '%s'}", invalid[i]);
			tfjob_job *job = make_job(meta, NULL, "{Worker: " VALID_WORKER "}", NULL);
			check(invalid[i], job, (tfjob_compat)mode, NULL, ERRS({ "metadata.namespace", INV, NULL }));
			tfjob_job_free(job);
		}
	}
}
END_TEST

START_TEST(generate_name)
{
	for (int mode = 0; mode <= 1; mode++) {
		tfjob_compat c = (tfjob_compat)mode;
		tfjob_job *job = make_job("{generateName: mnist-}", NULL, "{Worker: " VALID_WORKER "}", NULL);
		check("generateName", job, c, NULL, NONE);
		ck_assert_ptr_null(tfjob_job_name(job));
		tfjob_job_free(job);
		/* Long prefixes are cut to 58 characters by the API server before the suffix. */
		job = make_job("{generateName: abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-}",
		               NULL, "{Worker: " VALID_WORKER "}", NULL);
		if (c == DOC) /* 58 + 5 random characters + "-worker-1" is too long for a Service name */
			check("long generateName", job, c, NULL, ERRS({ "metadata.generateName", INV, NULL }));
		else
			check("long generateName", job, c, NULL, NONE);
		tfjob_job_free(job);
		job = make_job("{generateName: Mnist-}", NULL, "{Worker: " VALID_WORKER "}", NULL);
		check("bad generateName", job, c, NULL, ERRS({ "metadata.generateName", INV, "should match: " DNS1035_DETAIL }));
		tfjob_job_free(job);
		job = make_job("{generateName: 1mnist}", NULL, "{Worker: " VALID_WORKER "}", NULL);
		check("generateName starting with a digit", job, c, NULL, ERRS({ "metadata.generateName", INV, NULL }));
		tfjob_job_free(job);
		/* A name wins over generateName. */
		job = make_job("{name: ok, generateName: Bad-}", NULL, "{Worker: " VALID_WORKER "}", NULL);
		check("name and generateName", job, c, NULL, NONE);
		tfjob_job_free(job);
		job = make_job("{namespace: x}", NULL, "{Worker: " VALID_WORKER "}", NULL);
		check("no name", job, c, NULL, ERRS({ "metadata.name", REQ, "name or generateName is required" }));
		tfjob_job_free(job);
		job = make_job("{name: ''}", NULL, "{Worker: " VALID_WORKER "}", NULL);
		check("empty name", job, c, NULL, ERRS({ "metadata.name", REQ, "name or generateName is required" }));
		tfjob_job_free(job);
	}
}
END_TEST

/* Documented mode (defect 11): {name}-{type}-{index} of every child fits in a DNS-1035 label. */
START_TEST(child_names_fit_a_dns_label)
{
	/* 54 characters + "-worker-1" = 63: fits. */
	const char *name54 = "abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij";
	char meta[160], specs[512];
	snprintf(meta, sizeof(meta), "{name: %s}", name54);
	tfjob_job *job = make_job(meta, NULL, "{Worker: " VALID_WORKER "}", NULL);
	check("63-character child", job, DOC, NULL, NONE);
	tfjob_job_free(job);
	/* 11 workers: worker-10 is one character more. v1.9 admits it (and fails at create). */
	snprintf(specs, sizeof(specs), "{PS: {template: {spec: {containers: [" TF_CONTAINER "]}}}, "
	                               "worker: {replicas: 11, template: {spec: {containers: [" TF_CONTAINER "]}}}}");
	job = make_job(meta, NULL, specs, NULL);
	char detail[512];
	snprintf(detail, sizeof(detail), "the pod and service name \"%s-worker-10\" would be 64 characters: must be no "
	         "more than 63 characters (a Service name is a DNS-1035 label)", name54);
	check("64-character child", job, DOC, NULL, ERRS({ "metadata.name", INV, detail }));
	check("64-character child, v1.9", job, V19, NULL, NONE);
	tfjob_field_errors *errs = tu_validate(job, DOC, NULL);
	ck_assert_ptr_nonnull(strstr(tfjob_field_errors_message(errs, 0), "metadata.name: Invalid value: \"abcdefghij-"));
	tfjob_field_errors_free(errs);
	tfjob_job_free(job);
	/* The longest child decides, whatever the type's order; replicas 0 has no child. */
	snprintf(meta, sizeof(meta), "{name: %.52s}", name54);
	job = make_job(meta, NULL, "{Worker: " VALID_WORKER ", Evaluator: {template: {spec: {containers: [" TF_CONTAINER
	               "]}}}}", NULL);
	check("evaluator child", job, DOC, NULL, ERRS({ "metadata.name", INV, NULL }));
	tfjob_job_free(job);
	job = make_job(meta, NULL, "{Worker: " VALID_WORKER ", Evaluator: {replicas: 0, template: {spec: {containers: ["
	               TF_CONTAINER "]}}}}", NULL);
	check("evaluator without replicas", job, DOC, NULL, NONE);
	tfjob_job_free(job);
	/* A name too long itself is reported once, by the name rule. */
	job = make_job("{name: abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij-abcdefghij}", NULL,
	               "{Worker: " VALID_WORKER "}", NULL);
	check("long name reported once", job, DOC, NULL,
	      ERRS({ "metadata.name", INV, "should match: must be no more than 63 characters" }));
	tfjob_job_free(job);
}
END_TEST

/* Warnings: valid jobs the TFJob docs advise against; each rule fires exactly where it should. */
static tfjob_warnings *warnings_of(const char *specs, int istio)
{
	tfjob_job *job = make_job(NULL, NULL, specs, NULL);
	tfjob_warning_options opts = TFJOB_WARNING_OPTIONS_INIT;
	opts.istio_injection = istio;
	tfjob_warnings *w = NULL;
	ck_assert_int_eq(tfjob_job_warnings(&w, job, &opts, NULL), 0);
	tfjob_field_errors *errs = tu_validate(job, DOC, NULL);
	ck_assert_uint_eq(tfjob_field_errors_count(errs), 0); /* warnings are about valid jobs */
	tfjob_field_errors_free(errs);
	tfjob_job_free(job);
	return w;
}

#define ISTIO_OFF "template: {metadata: {annotations: {sidecar.istio.io/inject: 'false'}}, spec: {containers: [" TF_CONTAINER "]}}"

START_TEST(warnings_rules)
{
	tfjob_warnings *w = warnings_of("{Worker: " VALID_WORKER "}", 0);
	ck_assert_uint_eq(tfjob_warnings_count(w), 0);
	tfjob_warnings_free(w);
	/* restartPolicy Never, explicit only (the default is documented behaviour). */
	w = warnings_of("{PS: {restartPolicy: Never, " ISTIO_OFF "}, Worker: {template: {spec: {containers: [" TF_CONTAINER
	                "]}}}}", 0);
	ck_assert_uint_eq(tfjob_warnings_count(w), 1);
	ck_assert_str_eq(tfjob_warnings_reason(w, 0), "RestartPolicyNever");
	ck_assert_str_eq(tfjob_warnings_field(w, 0), "spec.tfReplicaSpecs[PS].restartPolicy");
	ck_assert_ptr_nonnull(strstr(tfjob_warnings_message(w, 0), "spec.tfReplicaSpecs[PS].restartPolicy: restartPolicy "
	                                                           "Never should rarely be used"));
	ck_assert_ptr_null(tfjob_warnings_reason(w, 1));
	ck_assert_ptr_null(tfjob_warnings_field(w, 1));
	ck_assert_ptr_null(tfjob_warnings_message(w, 1));
	tfjob_warnings_free(w);
	/* Istio: only when the namespace injects; the annotation or the label opts out. */
	const char *istio = "{PS: {restartPolicy: OnFailure, " ISTIO_OFF "}, Worker: {restartPolicy: OnFailure, template: "
	                    "{metadata: {labels: {sidecar.istio.io/inject: 'true'}}, spec: {containers: [" TF_CONTAINER "]}}},"
	                    " Chief: {restartPolicy: OnFailure, template: {metadata: {labels: {sidecar.istio.io/inject: "
	                    "'false'}}, spec: {containers: [" TF_CONTAINER "]}}}}";
	w = warnings_of(istio, 0);
	ck_assert_uint_eq(tfjob_warnings_count(w), 0);
	tfjob_warnings_free(w);
	w = warnings_of(istio, 1);
	ck_assert_uint_eq(tfjob_warnings_count(w), 1);
	ck_assert_str_eq(tfjob_warnings_reason(w, 0), "IstioSidecar");
	ck_assert_str_eq(tfjob_warnings_field(w, 0), "spec.tfReplicaSpecs[Worker].template.metadata.annotations");
	tfjob_warnings_free(w);
	/* GPU limits: cpu and memory requested (or limited, which the request defaults to) or a warning. */
	w = warnings_of("{Worker: {restartPolicy: OnFailure, template: {spec: {containers: ["
	                "{name: tensorflow, image: tf, resources: {limits: {nvidia.com/gpu: 1}}},"
	                "{name: side, image: s, resources: {limits: {amd.com/gpu: 1, memory: 1Gi}}},"
	                "{name: ok, image: s, resources: {limits: {nvidia.com/gpu: 1, cpu: 2}, requests: {memory: 1Gi}}},"
	                "{name: nogpu, image: s, resources: {limits: {cpu: 1}}}]}}}}", 0);
	ck_assert_uint_eq(tfjob_warnings_count(w), 2);
	ck_assert_str_eq(tfjob_warnings_reason(w, 0), "GPUWithoutRequests");
	ck_assert_str_eq(tfjob_warnings_field(w, 0), "spec.tfReplicaSpecs[Worker].template.spec.containers[0].resources.requests");
	ck_assert_ptr_nonnull(strstr(tfjob_warnings_message(w, 0), "without a cpu or memory request"));
	ck_assert_str_eq(tfjob_warnings_field(w, 1), "spec.tfReplicaSpecs[Worker].template.spec.containers[1].resources.requests");
	ck_assert_ptr_nonnull(strstr(tfjob_warnings_message(w, 1), "without a cpu request"));
	tfjob_warnings_free(w);
	/* The pod template's restartPolicy, which the replica's overrides (unset: Never; ExitCode runs as Never). */
	w = warnings_of("{Worker: {restartPolicy: OnFailure, template: {spec: {restartPolicy: Always, containers: ["
	                TF_CONTAINER "]}}}, PS: {restartPolicy: ExitCode, template: {spec: {restartPolicy: Never, "
	                "containers: [" TF_CONTAINER "]}}}}", 0);
	ck_assert_uint_eq(tfjob_warnings_count(w), 1);
	ck_assert_str_eq(tfjob_warnings_reason(w, 0), "TemplateRestartPolicyIgnored");
	ck_assert_str_eq(tfjob_warnings_field(w, 0), "spec.tfReplicaSpecs[Worker].template.spec.restartPolicy");
	ck_assert_ptr_nonnull(strstr(tfjob_warnings_message(w, 0),
	                             "spec.tfReplicaSpecs[Worker].template.spec.restartPolicy: restartPolicy Always in the "
	                             "pod template is not used: the replica's restartPolicy (OnFailure) overrides it"));
	tfjob_warnings_free(w);
	w = warnings_of("{Worker: {template: {spec: {restartPolicy: OnFailure, containers: [" TF_CONTAINER "]}}}}", 0);
	ck_assert_uint_eq(tfjob_warnings_count(w), 1);
	ck_assert_ptr_nonnull(strstr(tfjob_warnings_message(w, 0), "(unset, defaulted to Never)"));
	tfjob_warnings_free(w);
	/* More than one chief: valid (validation refuses only Chief next to Master), but advised against. */
	w = warnings_of("{Chief: {replicas: 2, restartPolicy: OnFailure, template: {spec: {containers: [" TF_CONTAINER
	                "]}}}, Worker: " VALID_WORKER "}", 0);
	ck_assert_uint_eq(tfjob_warnings_count(w), 1);
	ck_assert_str_eq(tfjob_warnings_reason(w, 0), "MultipleChiefReplicas");
	ck_assert_str_eq(tfjob_warnings_field(w, 0), "spec.tfReplicaSpecs[Chief].replicas");
	ck_assert_ptr_nonnull(strstr(tfjob_warnings_message(w, 0), "2 replicas of Chief: TensorFlow expects exactly one chief, but every one "
	                                                           "of these pods gets task type chief in TF_CONFIG"));
	tfjob_warnings_free(w);
	w = warnings_of("{Master: {replicas: 3, restartPolicy: OnFailure, template: {spec: {containers: [" TF_CONTAINER
	                "]}}}}", 0);
	ck_assert_uint_eq(tfjob_warnings_count(w), 1);
	ck_assert_str_eq(tfjob_warnings_field(w, 0), "spec.tfReplicaSpecs[Master].replicas");
	tfjob_warnings_free(w);
	w = warnings_of("{Chief: {replicas: 1, restartPolicy: OnFailure, template: {spec: {containers: [" TF_CONTAINER
	                "]}}}}", 0);
	ck_assert_uint_eq(tfjob_warnings_count(w), 0);
	tfjob_warnings_free(w);
	/* Options and arguments. */
	tfjob_warning_options opts;
	ck_assert_int_eq(tfjob_warning_options_init(&opts, TFJOB_WARNING_OPTIONS_VERSION), 0);
	ck_assert_int_eq(opts.istio_injection, 0);
	ck_assert_int_eq(tfjob_warning_options_init(&opts, 2), TFJOB_EVERSION);
	ck_assert_int_eq(tfjob_warning_options_init(NULL, 1), TFJOB_EINVAL);
	tfjob_job *job = make_job(NULL, NULL, "{Worker: " VALID_WORKER "}", NULL);
	opts.version = 7;
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_job_warnings(&w, job, &opts, &err), TFJOB_EVERSION);
	tfjob_error_free(err);
	ck_assert_int_eq(tfjob_job_warnings(NULL, job, NULL, NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_job_warnings(&w, NULL, NULL, NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_job_warnings(&w, job, NULL, NULL), 0);
	tfjob_warnings_free(w);
	tfjob_warnings_free(NULL);
	ck_assert_uint_eq(tfjob_warnings_count(NULL), 0);
	tfjob_job_free(job);
}
END_TEST

/* ---- tfReplicaSpecs rules ---- */

START_TEST(replica_spec_rules)
{
	for (int mode = 0; mode <= 1; mode++) {
		tfjob_compat c = (tfjob_compat)mode;
		/* The CRD requires tfReplicaSpecs: the schema stage reports it (no detail), before the webhook. */
		tfjob_job *job = make_job(NULL, "{cleanPodPolicy: All}", NULL, NULL);
		check("no tfReplicaSpecs", job, c, NULL, ERRS({ "spec.tfReplicaSpecs", REQ, "" }));
		tfjob_field_errors *errs = tu_validate(job, c, NULL);
		ck_assert_str_eq(tfjob_field_errors_message(errs, 0), "spec.tfReplicaSpecs: Required value");
		tfjob_field_errors_free(errs);
		tfjob_job_free(job);

		job = make_job(NULL, NULL, "null", NULL);
		check("null tfReplicaSpecs", job, c, NULL, ERRS({ "spec.tfReplicaSpecs", REQ, "" }));
		tfjob_job_free(job);

		/* Several containers: every one needs an image; one of them must be named tensorflow. */
		job = make_job(NULL, NULL, "{PS: {template: {spec: {containers: [{name: side}, " TF_CONTAINER ", {name: x, image: ''}]}}}}",
		               NULL);
		check("images", job, c, NULL,
		      ERRS({ "spec.tfReplicaSpecs[PS].template.spec.containers[0].image", REQ, "must be required" },
		           { "spec.tfReplicaSpecs[PS].template.spec.containers[2].image", REQ, "must be required" }));
		tfjob_job_free(job);

		/* Each replica type is checked on its own. */
		job = make_job(NULL, NULL, "{PS: " VALID_WORKER ", Worker: {template: {spec: {containers: [{name: main, image: m}]}}},"
		               " Evaluator: {template: {spec: {containers: []}}}}", NULL);
		check("per type", job, c, NULL,
		      ERRS({ "spec.tfReplicaSpecs[Worker].template.spec.containers", REQ,
		             "must have at least one container with name tensorflow" },
		           { "spec.tfReplicaSpecs[Evaluator].template.spec.containers", REQ, "must be specified" },
		           { "spec.tfReplicaSpecs[Evaluator].template.spec.containers", REQ,
		             "must have at least one container with name tensorflow" }));
		tfjob_job_free(job);

		/* One Chief (or one Master) is fine; Chief + Master is not. */
		job = make_job(NULL, NULL, "{Chief: " VALID_WORKER ", Worker: " VALID_WORKER "}", NULL);
		check("one chief", job, c, NULL, NONE);
		tfjob_job_free(job);
		job = make_job(NULL, NULL, "{Master: " VALID_WORKER ", PS: " VALID_WORKER ", Evaluator: " VALID_WORKER "}", NULL);
		check("one master", job, c, NULL, NONE);
		tfjob_job_free(job);
	}
}
END_TEST

/* Defect 9: Chief/Master counted case-insensitively, empty map and null replica spec rejected. */
START_TEST(defect_9)
{
	tfjob_job *job = make_job(NULL, NULL, "{chief: " VALID_WORKER ", Master: " VALID_WORKER "}", NULL);
	check("chief + Master", job, DOC, NULL, ERRS({ "spec.tfReplicaSpecs", FORB, "must not have more than 1 Chief or Master role" }));
	check("chief + Master", job, V19, NULL, NONE);
	tfjob_job_free(job);
	job = make_job(NULL, NULL, "{CHIEF: " VALID_WORKER ", master: " VALID_WORKER "}", NULL);
	check("CHIEF + master", job, DOC, NULL, ERRS({ "spec.tfReplicaSpecs", FORB, NULL }));
	check("CHIEF + master", job, V19, NULL, NONE);
	tfjob_job_free(job);

	job = make_job(NULL, NULL, "{}", NULL);
	check("empty map", job, DOC, NULL, ERRS({ "spec.tfReplicaSpecs", REQ, "must be required" }));
	check("empty map", job, V19, NULL, NONE);
	tfjob_job_free(job);

	job = make_job(NULL, NULL, "{Worker: null}", NULL);
	for (int mode = 0; mode <= 1; mode++)
		check("null replica spec", job, (tfjob_compat)mode, NULL,
		      ERRS({ "spec.tfReplicaSpecs[Worker].template.spec.containers", REQ, "must be specified" },
		           { "spec.tfReplicaSpecs[Worker].template.spec.containers", REQ,
		             "must have at least one container with name tensorflow" }));
	tfjob_job_free(job);
}
END_TEST

/* Defect 10: unknown values are FieldValueNotSupported in the documented mode only. */
START_TEST(defect_10)
{
	tfjob_job *job = make_job(NULL, NULL, "{Worker: " VALID_WORKER ", Foo: " VALID_WORKER "}", NULL);
	check("unknown type", job, DOC, NULL,
	      ERRS({ "spec.tfReplicaSpecs[Foo]", NOTSUP,
	             "supported values: \"Chief\", \"Evaluator\", \"Master\", \"PS\", \"Worker\"" }));
	check("unknown type", job, V19, NULL, NONE);
	tfjob_field_errors *errs = tu_validate(job, DOC, NULL);
	ck_assert_str_eq(tfjob_field_errors_message(errs, 0),
	                 "spec.tfReplicaSpecs[Foo]: Unsupported value: \"Foo\": supported values: \"Chief\", \"Evaluator\", "
	                 "\"Master\", \"PS\", \"Worker\"");
	tfjob_field_errors_free(errs);
	tfjob_job_free(job);

	/* Unknown type with a null spec. */
	job = make_job(NULL, NULL, "{Worker: " VALID_WORKER ", Foo: null}", NULL);
	check("unknown null type", job, DOC, NULL,
	      ERRS({ "spec.tfReplicaSpecs[Foo]", NOTSUP, NULL },
	           { "spec.tfReplicaSpecs[Foo].template.spec.containers", REQ, "must be specified" },
	           { "spec.tfReplicaSpecs[Foo].template.spec.containers", REQ, NULL }));
	tfjob_job_free(job);

	/* Lower-case known types are fine (defaults rename them); case twins are duplicates. */
	job = make_job(NULL, NULL, "{worker: " VALID_WORKER ", ps: " VALID_WORKER "}", NULL);
	check("lower-case types", job, DOC, NULL, NONE);
	check("lower-case types", job, V19, NULL, NONE);
	tfjob_job_free(job);
	job = make_job(NULL, NULL, "{Worker: " VALID_WORKER ", worker: " VALID_WORKER "}", NULL);
	check("case twins", job, DOC, NULL, ERRS({ "spec.tfReplicaSpecs[worker]", DUP, NULL }));
	check("case twins", job, V19, NULL, NONE);
	tfjob_job_free(job);

	job = make_job(NULL, NULL, "{Worker: {restartPolicy: Sometimes, template: {spec: {containers: [" TF_CONTAINER "]}}}}", NULL);
	check("restartPolicy", job, DOC, NULL,
	      ERRS({ "spec.tfReplicaSpecs[Worker].restartPolicy", NOTSUP,
	             "supported values: \"Always\", \"OnFailure\", \"Never\", \"ExitCode\"" }));
	check("restartPolicy", job, V19, NULL, NONE);
	tfjob_job_free(job);
	static const char *const policies[] = { "Always", "OnFailure", "Never", "ExitCode", "" };
	for (size_t i = 0; i < 5; i++) {
		char w[512];
		snprintf(w, sizeof(w), "{Worker: {restartPolicy: '%s', template: {spec: {containers: [" TF_CONTAINER "]}}}}", policies[i]);
		job = make_job(NULL, NULL, w, NULL);
		check(policies[i], job, DOC, NULL, NONE);
		tfjob_job_free(job);
	}

	job = make_job(NULL, "{cleanPodPolicy: Some}", "{Worker: " VALID_WORKER "}", NULL);
	check("cleanPodPolicy", job, DOC, NULL,
	      ERRS({ "spec.runPolicy.cleanPodPolicy", NOTSUP, "supported values: \"All\", \"Running\", \"None\"" }));
	check("cleanPodPolicy", job, V19, NULL, NONE);
	tfjob_job_free(job);
	static const char *const cpps[] = { "All", "Running", "None" };
	for (size_t i = 0; i < 3; i++) {
		char rp[64];
		snprintf(rp, sizeof(rp), "{cleanPodPolicy: %s}", cpps[i]);
		job = make_job(NULL, rp, "{Worker: " VALID_WORKER "}", NULL);
		check(cpps[i], job, DOC, NULL, NONE);
		tfjob_job_free(job);
	}

	job = make_job(NULL, NULL, "{Worker: " VALID_WORKER "}", "successPolicy: Any");
	check("successPolicy", job, DOC, NULL, ERRS({ "spec.successPolicy", NOTSUP, "supported values: \"\", \"AllWorkers\"" }));
	check("successPolicy", job, V19, NULL, NONE);
	tfjob_job_free(job);
	job = make_job(NULL, NULL, "{Worker: " VALID_WORKER "}", "successPolicy: AllWorkers");
	check("AllWorkers", job, DOC, NULL, NONE);
	tfjob_job_free(job);
	job = make_job(NULL, NULL, "{Worker: " VALID_WORKER "}", "successPolicy: ''");
	check("empty successPolicy", job, DOC, NULL, NONE);
	tfjob_job_free(job);
}
END_TEST

/* ---- the CRD schema stage ---- */

START_TEST(schema_types)
{
	static const struct {
		const char *specs;
		const char *run_policy;
		const char *field;
		tfjob_field_error_type type;
	} table[] = {
		{ "{Worker: {replicas: '3'}}", NULL, "spec.tfReplicaSpecs[Worker].replicas", TYPE },
		{ "{Worker: {replicas: 1.5}}", NULL, "spec.tfReplicaSpecs[Worker].replicas", TYPE },
		{ "{Worker: {replicas: 2147483648}}", NULL, "spec.tfReplicaSpecs[Worker].replicas", INV },
		{ "{Worker: {replicas: -2147483649}}", NULL, "spec.tfReplicaSpecs[Worker].replicas", INV },
		{ "{Worker: {restartPolicy: 1}}", NULL, "spec.tfReplicaSpecs[Worker].restartPolicy", TYPE },
		{ "{Worker: [a]}", NULL, "spec.tfReplicaSpecs[Worker]", TYPE },
		{ "[Worker]", NULL, "spec.tfReplicaSpecs", TYPE },
		{ "{Worker: {template: {spec: {containers: [{name: tensorflow, image: 5}]}}}}", NULL,
		  "spec.tfReplicaSpecs[Worker].template.spec.containers[0].image", TYPE },
		{ "{Worker: {template: {spec: {containers: [{image: x}]}}}}", NULL,
		  "spec.tfReplicaSpecs[Worker].template.spec.containers[0].name", REQ },
		{ "{Worker: {template: {spec: {containers: [{name: tensorflow, ports: [{name: p}]}]}}}}", NULL,
		  "spec.tfReplicaSpecs[Worker].template.spec.containers[0].ports[0].containerPort", REQ },
		{ "{Worker: {template: {metadata: {labels: {a: 1}}}}}", NULL, "spec.tfReplicaSpecs[Worker].template.metadata.labels[a]", TYPE },
		{ "{}", "{suspend: 'yes'}", "spec.runPolicy.suspend", TYPE },
		{ "{}", "{backoffLimit: 3000000000}", "spec.runPolicy.backoffLimit", INV },
		{ "{}", "{schedulingPolicy: {queue: 1}}", "spec.runPolicy.schedulingPolicy.queue", TYPE },
		{ "{}", "{schedulingPolicy: {minResources: {cpu: [1]}}}", "spec.runPolicy.schedulingPolicy.minResources[cpu]", TYPE },
		{ "{}", "{managedBy: 7}", "spec.runPolicy.managedBy", TYPE },
		{ "{}", "[]", "spec.runPolicy", TYPE },
	};
	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		tfjob_job *job = make_job(NULL, table[i].run_policy, table[i].specs, NULL);
		/* Schema errors end validation: the webhook's rules are not run (no "must be specified" etc.). */
		for (int mode = 0; mode <= 1; mode++)
			check(table[i].field, job, (tfjob_compat)mode, NULL, ERRS({ table[i].field, table[i].type, NULL }));
		tfjob_job_free(job);
	}
	tfjob_job *job = make_job("{name: [x]}", NULL, "{Worker: " VALID_WORKER "}", NULL);
	check("metadata.name type", job, DOC, NULL, ERRS({ "metadata.name", TYPE, "metadata.name in body must be of type string: \"array\"" }));
	tfjob_job_free(job);
	job = make_job(NULL, NULL, "{Worker: {replicas: 'three', template: {spec: {containers: [" TF_CONTAINER "]}}}}", NULL);
	tfjob_field_errors *errs = tu_validate(job, DOC, NULL);
	ck_assert_str_eq(tfjob_field_errors_message(errs, 0),
	                 "spec.tfReplicaSpecs[Worker].replicas: Invalid value: \"three\": spec.tfReplicaSpecs[Worker].replicas in "
	                 "body must be of type integer: \"string\"");
	tfjob_field_errors_free(errs);
	tfjob_job_free(job);
}
END_TEST

/* Documented mode also rejects negative replica counts. */
START_TEST(negative_replicas)
{
	tfjob_job *job = make_job(NULL, NULL, "{Worker: {replicas: -1, template: {spec: {containers: [" TF_CONTAINER "]}}}}", NULL);
	check("negative", job, DOC, NULL,
	      ERRS({ "spec.tfReplicaSpecs[Worker].replicas", INV, "must be greater than or equal to 0" }));
	check("negative", job, V19, NULL, NONE);
	tfjob_job_free(job);
	job = make_job(NULL, NULL, "{Worker: {replicas: 0, template: {spec: {containers: [" TF_CONTAINER "]}}}}", NULL);
	check("zero", job, DOC, NULL, NONE);
	tfjob_job_free(job);
}
END_TEST

/* ---- update rules ---- */

START_TEST(update_rules)
{
	for (int mode = 0; mode <= 1; mode++) {
		tfjob_compat c = (tfjob_compat)mode;
		tfjob_job *kf = make_job(NULL, "{managedBy: kubeflow.org/training-operator}", "{Worker: " VALID_WORKER "}", NULL);
		tfjob_job *mk = make_job(NULL, "{managedBy: kueue.x-k8s.io/multikueue}", "{Worker: " VALID_WORKER "}", NULL);
		tfjob_job *none = make_job(NULL, NULL, "{Worker: " VALID_WORKER "}", NULL);
		tfjob_job *nul = make_job(NULL, "{managedBy: null}", "{Worker: " VALID_WORKER "}", NULL);

		check("same managedBy", kf, c, kf, NONE);
		check("both unset", none, c, nul, NONE);
		check("changed", mk, c, kf, ERRS({ "spec.runPolicy.managedBy", INV, "field is immutable" }));
		check("unset -> set", kf, c, none, ERRS({ "spec.runPolicy.managedBy", INV, "field is immutable" }));
		check("set -> unset", none, c, kf, ERRS({ "spec.runPolicy.managedBy", INV, "field is immutable" }));
		check("set -> null", nul, c, mk, ERRS({ "spec.runPolicy.managedBy", INV, "field is immutable" }));

		tfjob_field_errors *errs = tu_validate(none, c, kf);
		ck_assert_str_eq(tfjob_field_errors_message(errs, 0), "spec.runPolicy.managedBy: Invalid value: \"null\": field is immutable");
		tfjob_field_errors_free(errs);
		errs = tu_validate(mk, c, kf);
		ck_assert_str_eq(tfjob_field_errors_message(errs, 0),
		                 "spec.runPolicy.managedBy: Invalid value: \"kueue.x-k8s.io/multikueue\": field is immutable");
		tfjob_field_errors_free(errs);

		/* An unsupported new value is reported twice: immutable, and not supported. */
		tfjob_job *other = make_job(NULL, "{managedBy: other}", "{Worker: " VALID_WORKER "}", NULL);
		check("changed to unsupported", other, c, kf,
		      ERRS({ "spec.runPolicy.managedBy", INV, "field is immutable" }, { "spec.runPolicy.managedBy", NOTSUP, NULL }));
		tfjob_job_free(other);

		/* schedulingPolicy.queue: immutable when both old and new have it (the CRD's transition rule). */
		tfjob_job *q1 = make_job(NULL, "{schedulingPolicy: {queue: q1}}", "{Worker: " VALID_WORKER "}", NULL);
		tfjob_job *q2 = make_job(NULL, "{schedulingPolicy: {queue: q2}}", "{Worker: " VALID_WORKER "}", NULL);
		check("same queue", q1, c, q1, NONE);
		check("queue changed", q2, c, q1,
		      ERRS({ "spec.runPolicy.schedulingPolicy.queue", INV, "spec.runPolicy.schedulingPolicy.queue is immutable" }));
		check("queue added", q1, c, none, NONE);
		check("queue removed", none, c, q1, NONE);
		/* The transition rule is part of the schema stage: the webhook's rules do not run after it. */
		tfjob_job *q2bad = make_job("{name: Bad}", "{schedulingPolicy: {queue: q2}}", "{Worker: " VALID_WORKER "}", NULL);
		check("queue changed, bad name", q2bad, c, q1, ERRS({ "spec.runPolicy.schedulingPolicy.queue", INV, NULL }));
		tfjob_job_free(q2bad);
		/* Create-time rules still apply on update. */
		tfjob_job *bad = make_job("{name: Bad}", NULL, "{Worker: " VALID_WORKER "}", NULL);
		check("update, bad name", bad, c, none, ERRS({ "metadata.name", INV, NULL }));
		tfjob_job_free(bad);

		tfjob_job_free(q1);
		tfjob_job_free(q2);
		tfjob_job_free(kf);
		tfjob_job_free(mk);
		tfjob_job_free(none);
		tfjob_job_free(nul);
	}
}
END_TEST

/* ---- messages, JSON, the list API ---- */

START_TEST(messages_and_json)
{
	tfjob_job *job = make_job("{name: Bad_Name}", "{managedBy: me}",
	                          "{Chief: {template: {spec: {containers: [{name: tensorflow}]}}}, Master: " VALID_WORKER "}", NULL);
	tfjob_field_errors *errs = tu_validate(job, DOC, NULL);
	ck_assert_uint_eq(tfjob_field_errors_count(errs), 4);
	/* Document order: name, runPolicy, replica specs, then the Chief/Master count. */
	ck_assert_str_eq(tfjob_field_errors_message(errs, 0), "metadata.name: Invalid value: \"Bad_Name\": should match: " DNS1035_DETAIL);
	ck_assert_str_eq(tfjob_field_errors_message(errs, 1),
	                 "spec.runPolicy.managedBy: Unsupported value: \"me\": supported values: \"kubeflow.org/training-operator\", "
	                 "\"kueue.x-k8s.io/multikueue\"");
	ck_assert_str_eq(tfjob_field_errors_message(errs, 2),
	                 "spec.tfReplicaSpecs[Chief].template.spec.containers[0].image: Required value: must be required");
	ck_assert_str_eq(tfjob_field_errors_message(errs, 3),
	                 "spec.tfReplicaSpecs: Forbidden: must not have more than 1 Chief or Master role");
	ck_assert_str_eq(tfjob_field_errors_value(errs, 1), "\"me\"");
	ck_assert_str_eq(tfjob_field_errors_value(errs, 2), "null");

	char *json = NULL;
	ck_assert_int_eq(tfjob_field_errors_to_json(&json, errs, TFJOB_JSON_COMPACT, NULL), 0);
	ck_assert_str_eq(json,
	                 "{\"valid\":false,\"errors\":["
	                 "{\"field\":\"metadata.name\",\"type\":\"FieldValueInvalid\",\"detail\":\"should match: " DNS1035_DETAIL "\"},"
	                 "{\"field\":\"spec.runPolicy.managedBy\",\"type\":\"FieldValueNotSupported\",\"detail\":\"supported values: "
	                 "\\\"kubeflow.org/training-operator\\\", \\\"kueue.x-k8s.io/multikueue\\\"\"},"
	                 "{\"field\":\"spec.tfReplicaSpecs[Chief].template.spec.containers[0].image\",\"type\":\"FieldValueRequired\","
	                 "\"detail\":\"must be required\"},"
	                 "{\"field\":\"spec.tfReplicaSpecs\",\"type\":\"FieldValueForbidden\",\"detail\":\"must not have more than 1 Chief "
	                 "or Master role\"}]}");
	tfjob_free(json);
	ck_assert_int_eq(tfjob_field_errors_to_json(&json, errs, TFJOB_JSON_PRETTY, NULL), 0);
	ck_assert_ptr_nonnull(strstr(json, "{\n  \"valid\": false,\n  \"errors\": [\n    {\n      \"field\": \"metadata.name\""));
	tfjob_free(json);

	/* Out of range. */
	ck_assert_ptr_null(tfjob_field_errors_field(errs, 4));
	ck_assert_ptr_null(tfjob_field_errors_detail(errs, 4));
	ck_assert_ptr_null(tfjob_field_errors_value(errs, 4));
	ck_assert_ptr_null(tfjob_field_errors_message(errs, 4));
	ck_assert_int_eq(tfjob_field_errors_type(errs, 4), TFJOB_FIELD_VALUE_INTERNAL);
	tfjob_field_errors_free(errs);
	tfjob_job_free(job);

	/* A valid job, and a NULL list. */
	job = make_job(NULL, NULL, "{Worker: " VALID_WORKER "}", NULL);
	errs = tu_validate(job, DOC, NULL);
	ck_assert_uint_eq(tfjob_field_errors_count(errs), 0);
	ck_assert_int_eq(tfjob_field_errors_to_json(&json, errs, 0, NULL), 0);
	ck_assert_str_eq(json, "{\"valid\":true,\"errors\":[]}");
	tfjob_free(json);
	tfjob_field_errors_free(errs);
	ck_assert_int_eq(tfjob_field_errors_to_json(&json, NULL, 0, NULL), 0);
	ck_assert_str_eq(json, "{\"valid\":true,\"errors\":[]}");
	tfjob_free(json);
	ck_assert_int_eq(tfjob_field_errors_to_json(NULL, NULL, 0, NULL), TFJOB_EINVAL);
	ck_assert_uint_eq(tfjob_field_errors_count(NULL), 0);
	ck_assert_ptr_null(tfjob_field_errors_field(NULL, 0));
	tfjob_field_errors_free(NULL);

	/* Options and arguments. */
	tfjob_validate_options opts;
	ck_assert_int_eq(tfjob_validate_options_init(&opts, 2), 0);
	ck_assert_int_eq(opts.strict, 1);
	opts.strict = 7; /* a version 1 struct ends before strict: init leaves it alone */
	ck_assert_int_eq(tfjob_validate_options_init(&opts, 1), 0);
	ck_assert_ptr_null(opts.old);
	ck_assert_int_eq(opts.strict, 7);
	ck_assert_int_eq(tfjob_validate_options_init(&opts, 3), TFJOB_EVERSION);
	ck_assert_int_eq(tfjob_validate_options_init(NULL, 1), TFJOB_EINVAL);
	opts.version = 3;
	tfjob_error *err = NULL;
	errs = (tfjob_field_errors *)&opts;
	ck_assert_int_eq(tfjob_job_validate(&errs, job, &opts, &err), TFJOB_EVERSION);
	ck_assert_ptr_null(errs);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "tfjob_validate_options version 3"));
	tfjob_error_free(err);
	opts.version = 1;
	opts.compat = (tfjob_compat)5;
	ck_assert_int_eq(tfjob_job_validate(&errs, job, &opts, NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_job_validate(&errs, NULL, NULL, NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_job_validate(NULL, job, NULL, NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_job_validate(&errs, job, NULL, NULL), 0);
	ck_assert_uint_eq(tfjob_field_errors_count(errs), 0);
	tfjob_field_errors_free(errs);
	tfjob_job_free(job);
}
END_TEST

START_TEST(type_names)
{
	static const char *const names[] = { "FieldValueNotFound",     "FieldValueRequired",  "FieldValueDuplicate",
		                                 "FieldValueInvalid",      "FieldValueNotSupported", "FieldValueForbidden",
		                                 "FieldValueTooLong",      "FieldValueTooMany",   "InternalError",
		                                 "FieldValueTypeInvalid" };
	for (int i = 0; i < 10; i++)
		ck_assert_str_eq(tfjob_field_error_type_name((tfjob_field_error_type)i), names[i]);
	ck_assert_str_eq(tfjob_field_error_type_name((tfjob_field_error_type)10), "FieldValueUnknown");
	ck_assert_str_eq(tfjob_field_error_type_name((tfjob_field_error_type)-1), "FieldValueUnknown");
}
END_TEST

/* Defaults then validation gives the same verdict as validation alone for the SEMANTICS rules. */
START_TEST(defaults_then_validate)
{
	tfjob_job *job = make_job(NULL, NULL, "{worker: {template: {spec: {containers: [" TF_CONTAINER "]}}}}", NULL);
	ck_assert_int_eq(tfjob_job_apply_defaults(job, NULL, NULL), 0);
	check("defaulted", job, DOC, NULL, NONE);
	check("defaulted", job, V19, NULL, NONE);
	tfjob_job_free(job);
}
END_TEST

/* The errors of a job, as one string (field, type, message per line). */
static char *error_text(const tfjob_job *job, tfjob_compat compat)
{
	tfjob_validate_options o = TFJOB_VALIDATE_OPTIONS_INIT;
	o.compat = compat;
	tfjob_field_errors *errs = NULL;
	ck_assert_int_eq(tfjob_job_validate(&errs, job, &o, NULL), 0);
	size_t cap = 64, len = 0;
	char *out = calloc(1, cap);
	for (size_t i = 0; i < tfjob_field_errors_count(errs); i++) {
		const char *m = tfjob_field_errors_message(errs, i);
		size_t n = strlen(m) + 64;
		if (len + n + 1 > cap)
			out = realloc(out, cap = 2 * (len + n + 1));
		len += (size_t)sprintf(out + len, "%d %s\n", (int)tfjob_field_errors_type(errs, i), m);
	}
	tfjob_field_errors_free(errs);
	return out;
}

/*
 * tfjob_job_apply_defaults() remembers that its schema check found nothing, and
 * tfjob_job_validate() then skips that stage: the errors must be those of the same defaulted
 * job read afresh (no memory of any check).
 */
START_TEST(defaults_schema_verdict_reused)
{
	static const char *const specs[] = {
		NULL,
		"{}",
		"{Worker: null}",
		"{worker: {template: {spec: {containers: [" TF_CONTAINER "]}}}}",
		"{Worker: {template: {spec: {containers: [{image: x}]}}}}",
		"{Worker: {template: {spec: {containers: [{name: tensorflow, ports: [{name: p}]}]}}}}",
		"{Worker: {replicas: -1, restartPolicy: Sometimes, template: {spec: {containers: [{name: a, image: b}]}}}}",
		"{PS: " VALID_WORKER ", Chief: " VALID_WORKER ", master: " VALID_WORKER ", Foo: {}}",
		"{Worker: {template: {spec: {containers: [" TF_CONTAINER "], initContainers: [{name: 3}]}}}}",
		"{Worker: {replica: 2, template: {spec: {containers: [" TF_CONTAINER "]}}}}",
	};
	static const char *const extras[] = { NULL, "successPolicy: Never", "runPolicy: null" };
	for (size_t i = 0; i < sizeof(specs) / sizeof(specs[0]); i++)
		for (size_t e = 0; e < sizeof(extras) / sizeof(extras[0]); e++)
			for (int compat = 0; compat < 2; compat++) {
				tfjob_compat mode = compat ? V19 : DOC;
				tfjob_job *job = make_job(NULL, NULL, specs[i], extras[e]);
				tfjob_default_options d = TFJOB_DEFAULT_OPTIONS_INIT;
				d.compat = mode;
				if (tfjob_job_apply_defaults(job, &d, NULL) != 0) {
					tfjob_job_free(job);
					continue;
				}
				char *text = NULL;
				ck_assert_int_eq(tfjob_job_to_json(&text, job, 0, NULL), 0);
				tfjob_job *fresh = tu_parse(text);
				char *a = error_text(job, mode), *b = error_text(fresh, mode);
				ck_assert_msg(!strcmp(a, b), "%s / %s: after defaults:\n%s\nread afresh:\n%s", specs[i] ? specs[i] : "-",
				              extras[e] ? extras[e] : "-", a, b);
				free(a);
				free(b);
				tfjob_free(text);
				tfjob_job_free(fresh);
				tfjob_job_free(job);
			}
	/* Without tfReplicaSpecs, defaults make spec and the schema's Required error must still come. */
	tfjob_job *job = tu_parse("apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: x}\n");
	ck_assert_int_eq(tfjob_job_apply_defaults(job, NULL, NULL), 0);
	char *a = error_text(job, DOC);
	ck_assert_str_eq(a, "1 spec.tfReplicaSpecs: Required value\n");
	free(a);
	tfjob_job_free(job);
}
END_TEST

/* Validate text with strict on or off. */
static tfjob_field_errors *validate_strict(const tfjob_job *job, int strict)
{
	tfjob_validate_options opts = TFJOB_VALIDATE_OPTIONS_INIT;
	opts.strict = strict;
	tfjob_field_errors *errs = NULL;
	ck_assert_int_eq(tfjob_job_validate(&errs, job, &opts, NULL), 0);
	return errs;
}

#define POD_TEMPLATE(container_extra, pod_extra)                                                            \
	"{template: {spec: {" pod_extra "containers: [{name: tensorflow, image: i" container_extra "}]}}}"

/* One typo per class of place, each an unknown field at its exact path, with its suggestion. */
START_TEST(strict_unknown_fields)
{
	static const struct {
		const char *metadata, *run_policy, *worker, *extra_spec;
		struct expected_error want;
	} cases[] = {
		{ "{name: t, labeles: {a: b}}", NULL, POD_TEMPLATE("", ""), NULL,
		  { "metadata.labeles", NOTSUP, "unknown field \"metadata.labeles\"; did you mean \"labels\"?" } },
		{ NULL, NULL, POD_TEMPLATE("", ""), "successPolicyy: AllWorkers",
		  { "spec.successPolicyy", NOTSUP, "unknown field \"spec.successPolicyy\"; did you mean \"successPolicy\"?" } },
		{ NULL, "{backofLimit: 3}", POD_TEMPLATE("", ""), NULL,
		  { "spec.runPolicy.backofLimit", NOTSUP,
		    "unknown field \"spec.runPolicy.backofLimit\"; did you mean \"backoffLimit\"?" } },
		{ NULL, "{schedulingPolicy: {minAvailble: 1}}", POD_TEMPLATE("", ""), NULL,
		  { "spec.runPolicy.schedulingPolicy.minAvailble", NOTSUP,
		    "unknown field \"spec.runPolicy.schedulingPolicy.minAvailble\"; did you mean \"minAvailable\"?" } },
		{ NULL, NULL, "{replica: 2, template: {spec: {containers: [{name: tensorflow, image: i}]}}}", NULL,
		  { "spec.tfReplicaSpecs[Worker].replica", NOTSUP,
		    "unknown field \"spec.tfReplicaSpecs.Worker.replica\"; did you mean \"replicas\"?" } },
		{ NULL, NULL, POD_TEMPLATE("", "nodeSelecter: {a: b}, "), NULL,
		  { "spec.tfReplicaSpecs[Worker].template.spec.nodeSelecter", NOTSUP,
		    "unknown field \"spec.tfReplicaSpecs.Worker.template.spec.nodeSelecter\"; did you mean \"nodeSelector\"?" } },
		{ NULL, NULL, POD_TEMPLATE(", comand: [python]", ""), NULL,
		  { "spec.tfReplicaSpecs[Worker].template.spec.containers[0].comand", NOTSUP,
		    "unknown field \"spec.tfReplicaSpecs.Worker.template.spec.containers[0].comand\"; did you mean \"command\"?" } },
		{ NULL, NULL, POD_TEMPLATE(", env: [{name: A, valeu: '1'}]", ""), NULL,
		  { "spec.tfReplicaSpecs[Worker].template.spec.containers[0].env[0].valeu", NOTSUP,
		    "unknown field \"spec.tfReplicaSpecs.Worker.template.spec.containers[0].env[0].valeu\"; did you mean \"value\"?" } },
		{ NULL, NULL, POD_TEMPLATE(", resources: {limts: {cpu: 1}}", ""), NULL,
		  { "spec.tfReplicaSpecs[Worker].template.spec.containers[0].resources.limts", NOTSUP,
		    "unknown field \"spec.tfReplicaSpecs.Worker.template.spec.containers[0].resources.limts\"; did you mean \"limits\"?" } },
		/* Far from every field: no suggestion. */
		{ NULL, NULL, POD_TEMPLATE(", gpuCount: 2", ""), NULL,
		  { "spec.tfReplicaSpecs[Worker].template.spec.containers[0].gpuCount", NOTSUP,
		    "unknown field \"spec.tfReplicaSpecs.Worker.template.spec.containers[0].gpuCount\"" } },
		/* A case slip is suggested too. */
		{ NULL, NULL, POD_TEMPLATE(", WorkingDir: /x", ""), NULL,
		  { "spec.tfReplicaSpecs[Worker].template.spec.containers[0].WorkingDir", NOTSUP,
		    "unknown field \"spec.tfReplicaSpecs.Worker.template.spec.containers[0].WorkingDir\"; did you mean \"workingDir\"?" } },
		/* Wrong types deep in the pod template. */
		{ NULL, NULL, POD_TEMPLATE(", stdin: yes-please", ""), NULL,
		  { "spec.tfReplicaSpecs[Worker].template.spec.containers[0].stdin", TYPE,
		    "spec.tfReplicaSpecs[Worker].template.spec.containers[0].stdin in body must be of type boolean: \"string\"" } },
		{ NULL, NULL, POD_TEMPLATE("", "volumes: {data: {emptyDir: {}}}, "), NULL,
		  { "spec.tfReplicaSpecs[Worker].template.spec.volumes", TYPE, NULL } },
		{ NULL, NULL, POD_TEMPLATE("", "tolerations: [{key: a, tolerationSeconds: soon}], "), NULL,
		  { "spec.tfReplicaSpecs[Worker].template.spec.tolerations[0].tolerationSeconds", TYPE, NULL } },
		/* Required fields of the pod template's definitions. */
		{ NULL, NULL, POD_TEMPLATE(", env: [{value: x}]", ""), NULL,
		  { "spec.tfReplicaSpecs[Worker].template.spec.containers[0].env[0].name", REQ, "" } },
		/* Allowed values. */
		{ NULL, NULL, POD_TEMPLATE("", "restartPolicy: Sometimes, "), NULL,
		  { "spec.tfReplicaSpecs[Worker].template.spec.restartPolicy", NOTSUP,
		    "supported values: \"Always\", \"OnFailure\", \"Never\"" } },
		{ NULL, NULL, POD_TEMPLATE(", imagePullPolicy: IfMissing", ""), NULL,
		  { "spec.tfReplicaSpecs[Worker].template.spec.containers[0].imagePullPolicy", NOTSUP,
		    "supported values: \"Always\", \"Never\", \"IfNotPresent\"" } },
		{ NULL, NULL, POD_TEMPLATE(", ports: [{containerPort: 80, protocol: tcp}]", ""), NULL,
		  { "spec.tfReplicaSpecs[Worker].template.spec.containers[0].ports[0].protocol", NOTSUP,
		    "supported values: \"TCP\", \"UDP\", \"SCTP\"" } },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char specs[1024];
		snprintf(specs, sizeof(specs), "{Worker: %s}", cases[i].worker);
		tfjob_job *job = make_job(cases[i].metadata, cases[i].run_policy, specs, cases[i].extra_spec);
		tfjob_field_errors *errs = validate_strict(job, 1);
		expect_errors(cases[i].want.field, errs, &cases[i].want, 1);
		tfjob_field_errors_free(errs);
		/* Not strict: unknown fields pass, the other errors stay. */
		errs = validate_strict(job, 0);
		bool unknown = cases[i].want.type == NOTSUP && strstr(cases[i].want.detail, "unknown field");
		expect_errors(cases[i].want.field, errs, &cases[i].want, unknown ? 0 : 1);
		tfjob_field_errors_free(errs);
		tfjob_job_free(job);
	}
}
END_TEST

/* Unknown fields at the top, several at once (document order), and version 1 options (not strict). */
START_TEST(strict_top_level_and_versions)
{
	tfjob_job *job = tu_parse("apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: t}\nstatuss: {}\n"
	                          "spec: {tfReplicaSpecs: {Worker: " POD_TEMPLATE(", comand: [a], argz: [b]", "") "}}\n");
	tfjob_field_errors *errs = validate_strict(job, 1);
	ck_assert_uint_eq(tfjob_field_errors_count(errs), 3);
	ck_assert_str_eq(tfjob_field_errors_field(errs, 0), "statuss");
	ck_assert_str_eq(tfjob_field_errors_detail(errs, 0), "unknown field \"statuss\"; did you mean \"status\"?");
	ck_assert_str_eq(tfjob_field_errors_message(errs, 1),
	                 "spec.tfReplicaSpecs[Worker].template.spec.containers[0].comand: Unsupported value: \"comand\": "
	                 "unknown field \"spec.tfReplicaSpecs.Worker.template.spec.containers[0].comand\"; did you mean "
	                 "\"command\"?");
	ck_assert_str_eq(tfjob_field_errors_field(errs, 2), "spec.tfReplicaSpecs[Worker].template.spec.containers[0].argz");
	tfjob_field_errors_free(errs);
	/* NULL options are the defaults: strict. */
	ck_assert_int_eq(tfjob_job_validate(&errs, job, NULL, NULL), 0);
	ck_assert_uint_eq(tfjob_field_errors_count(errs), 3);
	tfjob_field_errors_free(errs);
	/* A version 1 caller never sees unknown fields. */
	tfjob_validate_options v1;
	ck_assert_int_eq(tfjob_validate_options_init(&v1, 1), 0);
	ck_assert_int_eq(tfjob_job_validate(&errs, job, &v1, NULL), 0);
	ck_assert_uint_eq(tfjob_field_errors_count(errs), 0);
	tfjob_field_errors_free(errs);
	/* Defaults keep unknown fields and do not stop on them; strict validation after them still reports. */
	ck_assert_int_eq(tfjob_job_apply_defaults(job, NULL, NULL), 0);
	errs = validate_strict(job, 1);
	ck_assert_uint_eq(tfjob_field_errors_count(errs), 3);
	tfjob_field_errors_free(errs);
	errs = validate_strict(job, 0);
	ck_assert_uint_eq(tfjob_field_errors_count(errs), 0);
	tfjob_field_errors_free(errs);
	tfjob_job_free(job);
	/* Status: the controller's own fields are known, others are not. */
	job = tu_parse("apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: t, creationTimestamp: null, "
	               "managedFields: [{manager: m, fieldsV1: {f:spec: {}}}]}\n"
	               "spec: {tfReplicaSpecs: {Worker: " POD_TEMPLATE("", "") "}}\n"
	               "status: {conditions: [{type: Created, status: 'True', lastTransitionTime: '2026-01-01T00:00:00Z'}], "
	               "replicaStatuses: {Worker: {active: 1, selector: a=b}}, startTime: '2026-01-01T00:00:00Z', "
	               "lastReconcileTime: null, phase: Running}\n");
	errs = validate_strict(job, 1);
	ck_assert_uint_eq(tfjob_field_errors_count(errs), 1);
	ck_assert_str_eq(tfjob_field_errors_field(errs, 0), "status.phase");
	tfjob_field_errors_free(errs);
	tfjob_job_free(job);
}
END_TEST

/* Where fields are written: block and flow YAML, JSON, documents, sequences, what is not written. */
START_TEST(field_locate)
{
	static const char yaml[] = "---\n"
	                           "# comment\n"
	                           "---\n"
	                           "apiVersion: kubeflow.org/v1\n"
	                           "kind: TFJob\n"
	                           "metadata: {name: a, annotations: {a.b/c: x}}\n"
	                           "---\n"
	                           "kind: TFJob\n"
	                           "spec:\n"
	                           "  tfReplicaSpecs:\n"
	                           "    Worker:\n"
	                           "      base: &b {x: 1}\n"
	                           "      replica: 2\n"
	                           "      template:\n"
	                           "        spec:\n"
	                           "          containers:\n"
	                           "            - name: a\n"
	                           "            - name: tensorflow\n"
	                           "              env: [{name: A, valeu: '1'}]\n"
	                           "      alias: *b\n";
	static const struct {
		size_t doc;
		const char *field;
		int rc;
		unsigned line, column;
	} cases[] = {
		{ 0, "metadata.name", 0, 6, 12 },
		{ 0, "metadata.annotations[a.b/c]", 0, 6, 35 },
		{ 0, "kind", 0, 5, 1 },
		{ 1, "spec.tfReplicaSpecs[Worker].replica", 0, 13, 7 },
		{ 1, "spec.tfReplicaSpecs[Worker].template.spec.containers[1]", 0, 18, 15 },
		{ 1, "spec.tfReplicaSpecs[Worker].template.spec.containers[1].env[0].valeu", 0, 19, 31 },
		{ 1, "spec.tfReplicaSpecs[Worker].template.spec.containers[2]", TFJOB_ENOTFOUND, 0, 0 },
		{ 1, "spec.tfReplicaSpecs[Worker].template.spec.containers[x]", TFJOB_ENOTFOUND, 0, 0 },
		{ 1, "spec.tfReplicaSpecs[Worker].alias.x", TFJOB_ENOTFOUND, 0, 0 },
		{ 1, "spec.tfReplicaSpecs[Worker].replicas", TFJOB_ENOTFOUND, 0, 0 },
		{ 1, "spec.tfReplicaSpecs[Worker].replica.deeper", TFJOB_ENOTFOUND, 0, 0 },
		{ 2, "kind", TFJOB_ENOTFOUND, 0, 0 },
		{ 0, "<root>", TFJOB_ENOTFOUND, 0, 0 },
		{ 0, "", TFJOB_ENOTFOUND, 0, 0 },
		{ 0, "a[", TFJOB_ENOTFOUND, 0, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		unsigned line = 0, column = 0;
		int rc = tfjob_field_locate(&line, &column, yaml, strlen(yaml), cases[i].doc, cases[i].field, NULL);
		ck_assert_msg(rc == cases[i].rc && line == cases[i].line && column == cases[i].column,
		              "%s: rc %d at %u:%u, want %d at %u:%u", cases[i].field, rc, line, column, cases[i].rc,
		              cases[i].line, cases[i].column);
	}
	static const char json[] = "{\"kind\":\"TFJob\",\n \"spec\":{\"runPolicy\":{\"backofLimit\":3}}}";
	unsigned line = 0, column = 0;
	ck_assert_int_eq(tfjob_field_locate(&line, &column, json, strlen(json), 0, "spec.runPolicy.backofLimit", NULL), 0);
	ck_assert_uint_eq(line, 2);
	ck_assert_uint_eq(column, 23);
	/* Broken text: not found, never a crash. */
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_field_locate(&line, &column, "a: [1, 2\nb: 3\n", 14, 0, "b", &err), TFJOB_ENOTFOUND);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "b is not written in document 0"));
	tfjob_error_free(err);
	ck_assert_int_eq(tfjob_field_locate(NULL, &column, json, strlen(json), 0, "kind", NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_field_locate(&line, &column, NULL, 0, 0, "kind", NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_field_locate(&line, &column, json, strlen(json), 0, NULL, NULL), TFJOB_EINVAL);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("validate");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, v19_webhook_table);
	tcase_add_test(tc, dns1035_names);
	tcase_add_test(tc, namespaces_are_dns1123_labels);
	tcase_add_test(tc, generate_name);
	tcase_add_test(tc, child_names_fit_a_dns_label);
	tcase_add_test(tc, warnings_rules);
	tcase_add_test(tc, replica_spec_rules);
	tcase_add_test(tc, defect_9);
	tcase_add_test(tc, defect_10);
	tcase_add_test(tc, schema_types);
	tcase_add_test(tc, negative_replicas);
	tcase_add_test(tc, update_rules);
	tcase_add_test(tc, messages_and_json);
	tcase_add_test(tc, type_names);
	tcase_add_test(tc, defaults_then_validate);
	tcase_add_test(tc, defaults_schema_verdict_reused);
	tcase_add_test(tc, strict_unknown_fields);
	tcase_add_test(tc, strict_top_level_and_versions);
	tcase_add_test(tc, field_locate);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
