/*
 * A caller built against the headers of libtfjob 0.1 (tests/abi/v0.1/include, a frozen copy) that
 * runs against the current library. Every versioned struct is allocated on the heap at its 0.1
 * size, initialised with its 0.1 version, and handed to each function that reads or fills it. Built
 * and run under AddressSanitizer (tests/suites/42-abi-old-callers.sh): a library that reads or
 * writes one byte past a 0.1 struct — because it copies or initialises the whole struct of a newer
 * version — is stopped with a heap-buffer-overflow report.
 *
 * Prints "N passed, N failed"; exit status 0 only when every check passed.
 * SPDX-License-Identifier: Apache-2.0
 */
#define _DEFAULT_SOURCE /* mkdtemp */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tfjob/sys/transport.h>
#include <tfjob/tfjob.h>

static int passed, failed;

static void check(int ok, const char *what, tfjob_error *err)
{
	if (ok) {
		passed++;
	} else {
		failed++;
		fprintf(stderr, "FAIL: %s%s%s\n", what, err ? ": " : "", err ? tfjob_error_message(err) : "");
	}
	tfjob_error_free(err);
}

/* A struct of exactly its 0.1 size on the heap, so ASan sees every byte past it. */
#define NEW_OLD(type) ((type *)calloc(1, sizeof(type)))

static const char JOB[] = "apiVersion: kubeflow.org/v1\n"
                          "kind: TFJob\n"
                          "metadata: {name: old, namespace: default, uid: u-1}\n"
                          "spec:\n"
                          "  tfReplicaSpecs:\n"
                          "    Worker:\n"
                          "      replicas: 1\n"
                          "      template:\n"
                          "        spec:\n"
                          "          containers:\n"
                          "          - name: tensorflow\n"
                          "            image: x\n"
                          "            command: [\"true\"]\n";

static tfjob_job *parse_job(void)
{
	tfjob_parse_options *po = NEW_OLD(tfjob_parse_options);
	tfjob_error *err = NULL;
	tfjob_job *job = NULL;
	check(tfjob_parse_options_init(po, TFJOB_PARSE_OPTIONS_VERSION) == 0, "parse options init", NULL);
	check(tfjob_job_parse(&job, JOB, strlen(JOB), po, &err) == 0, "parse", err);
	free(po);
	return job;
}

static void core_calls(tfjob_job *job)
{
	tfjob_error *err = NULL;
	tfjob_default_options *dopts = NEW_OLD(tfjob_default_options);
	check(tfjob_default_options_init(dopts, TFJOB_DEFAULT_OPTIONS_VERSION) == 0, "default options init", NULL);
	check(tfjob_job_apply_defaults(job, dopts, &err) == 0, "apply defaults", err);
	free(dopts);

	tfjob_validate_options *vopts = NEW_OLD(tfjob_validate_options);
	tfjob_field_errors *errs = NULL;
	err = NULL;
	check(tfjob_validate_options_init(vopts, TFJOB_VALIDATE_OPTIONS_VERSION) == 0, "validate options init", NULL);
	check(tfjob_job_validate(&errs, job, vopts, &err) == 0 && tfjob_field_errors_count(errs) == 0, "validate", err);
	tfjob_field_errors_free(errs);
	free(vopts);

	tfjob_render_options *ropts = NEW_OLD(tfjob_render_options);
	char *text = NULL;
	err = NULL;
	check(tfjob_render_options_init(ropts, TFJOB_RENDER_OPTIONS_VERSION) == 0, "render options init", NULL);
	check(tfjob_tf_config(&text, job, "worker", 0, ropts, &err) == 0, "tf_config", err);
	tfjob_free(text);

	tfjob_plan_options *popts = NEW_OLD(tfjob_plan_options);
	tfjob_plan *plan = NULL;
	err = NULL;
	check(tfjob_plan_options_init(popts, TFJOB_PLAN_OPTIONS_VERSION) == 0, "plan options init", NULL);
	popts->now = 1700000000;
	popts->render = ropts; /* nested: also read at its 0.1 size */
	check(tfjob_plan_new(&plan, job, "[]", "[]", popts, &err) == 0, "plan", err);
	tfjob_plan_free(plan);
	free(popts);

	tfjob_simulate_options *sopts = NEW_OLD(tfjob_simulate_options);
	static const char scenario[] = "{\"job\": {\"apiVersion\": \"kubeflow.org/v1\", \"kind\": \"TFJob\", "
	                               "\"metadata\": {\"name\": \"s\"}, \"spec\": {\"tfReplicaSpecs\": {\"Worker\": "
	                               "{\"template\": {\"spec\": {\"containers\": [{\"name\": \"tensorflow\", "
	                               "\"image\": \"x\"}]}}}}}}, \"timeline\": []}";
	err = NULL;
	check(tfjob_simulate_options_init(sopts, TFJOB_SIMULATE_OPTIONS_VERSION) == 0, "simulate options init", NULL);
	sopts->render = ropts;
	check(tfjob_simulate(&text, scenario, strlen(scenario), sopts, &err) == 0, "simulate", err);
	tfjob_free(text);
	free(sopts);
	free(ropts);
}

static int on_event(tfjob_watch_event type, const char *object_json, void *payload)
{
	(void)type;
	(void)object_json;
	(void)payload;
	return 0;
}

static void transport_calls(tfjob_transport *t)
{
	tfjob_resource pods = TFJOB_RESOURCE_PODS_INIT;
	tfjob_error *err = NULL;
	char *out = NULL;
	check(tfjob_transport_create(&out, t, &pods, "default",
	                             "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"}}", &err) == 0,
	      "create", err);
	tfjob_free(out);

	tfjob_list_options *lopts = NEW_OLD(tfjob_list_options);
	err = NULL;
	check(tfjob_list_options_init(lopts, TFJOB_LIST_OPTIONS_VERSION) == 0, "list options init", NULL);
	check(tfjob_transport_list(&out, t, &pods, "default", lopts, &err) == 0, "list", err);
	tfjob_free(out);
	free(lopts);

	tfjob_watch_options *wopts = NEW_OLD(tfjob_watch_options);
	tfjob_watch *w = NULL;
	err = NULL;
	check(tfjob_watch_options_init(wopts, TFJOB_WATCH_OPTIONS_VERSION) == 0, "watch options init", NULL);
	wopts->on_event = on_event;
	check(tfjob_transport_watch(&w, t, &pods, "default", wopts, &err) == 0, "watch", err);
	free(wopts); /* the library keeps its own copy */
	tfjob_watch_stop(w);
	tfjob_watch_free(w);

	tfjob_delete_options *delopts = NEW_OLD(tfjob_delete_options);
	err = NULL;
	check(tfjob_delete_options_init(delopts, TFJOB_DELETE_OPTIONS_VERSION) == 0, "delete options init", NULL);
	check(tfjob_transport_delete(NULL, t, &pods, "default", "p", delopts, &err) == 0, "delete", err);
	free(delopts);
}

static void controller_calls(tfjob_transport *t)
{
	tfjob_controller_hooks *hooks = NEW_OLD(tfjob_controller_hooks);
	tfjob_controller_options *copts = NEW_OLD(tfjob_controller_options);
	tfjob_controller *c = NULL;
	tfjob_error *err = NULL;
	check(tfjob_controller_hooks_init(hooks, TFJOB_CONTROLLER_HOOKS_VERSION) == 0, "hooks init", NULL);
	check(tfjob_controller_options_init(copts, TFJOB_CONTROLLER_OPTIONS_VERSION) == 0, "controller options init",
	      NULL);
	copts->hooks = hooks;
	check(tfjob_controller_new(&c, t, copts, &err) == 0, "controller new", err);
	free(copts);
	free(hooks);
	/* metrics at each version the 0.1 header knows: the library writes only that version's bytes */
	for (unsigned int v = 1; v <= TFJOB_CONTROLLER_METRICS_VERSION && c; v++) {
		tfjob_controller_metrics *m = NEW_OLD(tfjob_controller_metrics);
		m->version = v;
		check(tfjob_controller_metrics_get(m, c) == 0 && m->version == v, "metrics", NULL);
		free(m);
	}
	tfjob_controller_free(c);
}

static void backend_free(void *data) { (void)data; }

static void backend_calls(void)
{
	tfjob_transport_backend *be = NEW_OLD(tfjob_transport_backend);
	tfjob_transport *t = NULL;
	tfjob_error *err = NULL;
	be->version = TFJOB_TRANSPORT_BACKEND_VERSION;
	be->free = backend_free;
	check(tfjob_transport_new(&t, be, &err) == 0, "transport from a 0.1 backend", err);
	free(be);
	tfjob_transport_free(t);
}

static void kube_calls(void)
{
	tfjob_kube_options *kopts = NEW_OLD(tfjob_kube_options);
	tfjob_transport *t = NULL;
	tfjob_error *err = NULL;
	check(tfjob_kube_options_init(kopts, TFJOB_KUBE_OPTIONS_VERSION) == 0, "kube options init", NULL);
	kopts->source = TFJOB_KUBE_SOURCE_KUBECONFIG;
	kopts->kubeconfig = "/nonexistent/kubeconfig";
	/* no such file: refused, after the options were read */
	int rc = tfjob_kube_transport_new(&t, kopts, &err);
	check(rc != 0 || t != NULL, "kube transport", NULL);
	tfjob_error_free(err);
	tfjob_transport_free(t);
	free(kopts);
}

static void local_calls(tfjob_job *job)
{
	char dir[] = "/tmp/tfjob-v01-XXXXXX";
	if (!mkdtemp(dir)) {
		check(0, "mkdtemp", NULL);
		return;
	}
	tfjob_local_options *lopts = NEW_OLD(tfjob_local_options);
	tfjob_local *local = NULL;
	tfjob_error *err = NULL;
	check(tfjob_local_options_init(lopts, TFJOB_LOCAL_OPTIONS_VERSION) == 0, "local options init", NULL);
	lopts->run_dir = dir;
	check(tfjob_local_new(&local, lopts, &err) == 0, "local new", err);
	free(lopts);

	tfjob_local_run_options *ropts = NEW_OLD(tfjob_local_run_options);
	tfjob_local_outcome outcome = TFJOB_LOCAL_FAILED;
	err = NULL;
	check(tfjob_local_run_options_init(ropts, TFJOB_LOCAL_RUN_OPTIONS_VERSION) == 0, "local run options init", NULL);
	check(local && tfjob_local_run(&outcome, local, job, ropts, &err) == 0 && outcome == TFJOB_LOCAL_SUCCEEDED,
	      "local run", err);
	free(ropts);
	tfjob_local_free(local);
	char cmd[64];
	snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "could not remove %s\n", dir);
}

int main(void)
{
	if (tfjob_global_init() != 0)
		return 1;
	tfjob_job *job = parse_job();
	if (job) {
		core_calls(job);
		local_calls(job);
	}

	tfjob_memory_options *mopts = NEW_OLD(tfjob_memory_options);
	tfjob_transport *t = NULL;
	tfjob_error *err = NULL;
	check(tfjob_memory_options_init(mopts, TFJOB_MEMORY_OPTIONS_VERSION) == 0, "memory options init", NULL);
	check(tfjob_memory_transport_new(&t, mopts, &err) == 0, "memory transport", err);
	free(mopts);
	if (t) {
		transport_calls(t);
		controller_calls(t);
	}
	tfjob_transport_free(t);
	backend_calls();
	kube_calls();

	tfjob_job_free(job);
	tfjob_global_cleanup();
	printf("%d passed, %d failed\n", passed, failed);
	return failed ? 1 : 0;
}
