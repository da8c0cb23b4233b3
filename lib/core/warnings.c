/*
 * Warnings: what the Kubeflow TFJob documentation advises against in a job that validation
 * accepts (restartPolicy Never, a pod template's restartPolicy that the replica's overrides, more
 * than one chief, the Istio sidecar, GPUs without cpu/memory requests).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/job.h"
#include "util/versioned_structs.h"

struct warning {
	const char *reason; /* static */
	char *field;
	char *message; /* "field: text" */
};

struct tfjob_warnings {
	struct warning *items;
	size_t count;
	bool oom;
};

#define ISTIO_INJECT "sidecar.istio.io/inject"

int tfjob_warning_options_init(tfjob_warning_options *opts, unsigned int version)
{
	return tfjob__versioned_init(&tfjob__warning_options_v, opts, version);
}

/* Append a warning; the field is "spec.tfReplicaSpecs[TYPE]" + suffix. */
static void add(tfjob_warnings *w, const char *reason, const char *type, const char *suffix, const char *text)
{
	struct warning *grown = realloc(w->items, (w->count + 1) * sizeof(*grown));
	char *field = tfjob__strdup_printf("spec.tfReplicaSpecs[%s]%s", type, suffix);
	char *message = field ? tfjob__strdup_printf("%s: %s", field, text) : NULL;
	if (!grown || !message) {
		if (grown)
			w->items = grown;
		free(field);
		free(message);
		w->oom = true;
		return;
	}
	w->items = grown;
	w->items[w->count++] = (struct warning){ reason, field, message };
}

static void warn_restart_policy(tfjob_warnings *w, const char *type, json_t *rspec)
{
	const char *policy = tfjob__str(rspec, "restartPolicy");
	if (policy && !strcmp(policy, "Never"))
		add(w, "RestartPolicyNever", type, ".restartPolicy",
		    "restartPolicy Never should rarely be used: a pod that fails, or whose node fails, is not restarted and "
		    "the job fails with it; use OnFailure or ExitCode (and resume from a checkpoint)");
}

/* The restartPolicy the pods get: the replica's (Never when unset, as defaulting gives), ExitCode
   running as Never (the operator decides on the exit code itself). */
static const char *pod_restart_policy(json_t *rspec)
{
	const char *policy = tfjob__str(rspec, "restartPolicy");
	if (!policy || !policy[0])
		return "Never";
	return strcmp(policy, "ExitCode") ? policy : "Never";
}

static void warn_template_restart_policy(tfjob_warnings *w, const char *type, json_t *rspec)
{
	const char *set = tfjob__str(tfjob__pod_spec(rspec), "restartPolicy");
	const char *pods = pod_restart_policy(rspec);
	if (!set || !set[0] || !strcmp(set, pods))
		return;
	const char *replica = tfjob__str(rspec, "restartPolicy");
	char *text = tfjob__strdup_printf(
		"restartPolicy %s in the pod template is not used: the replica's restartPolicy (%s) overrides it and the "
		"pods get %s; set restartPolicy on the replica (spec.tfReplicaSpecs[%s].restartPolicy) instead",
		set, replica && replica[0] ? replica : "unset, defaulted to Never", pods, type);
	if (!text)
		w->oom = true;
	else
		add(w, "TemplateRestartPolicyIgnored", type, ".template.spec.restartPolicy", text);
	free(text);
}

static void warn_chief_replicas(tfjob_warnings *w, const char *type, json_t *rspec)
{
	json_t *replicas = json_object_get(rspec, "replicas");
	if (!tfjob__is_chief_or_master(type, true) || !json_is_integer(replicas) || json_integer_value(replicas) <= 1)
		return;
	char lower[8] = { 0 }; /* "chief" or "master", as TF_CONFIG names the task type */
	for (size_t i = 0; i < sizeof(lower) - 1 && type[i]; i++)
		lower[i] = (char)((type[i] >= 'A' && type[i] <= 'Z') ? type[i] - 'A' + 'a' : type[i]);
	char *text = tfjob__strdup_printf(
		"%lld replicas of %s: TensorFlow expects exactly one chief, but every one of these pods gets task type %s "
		"in TF_CONFIG, and the job succeeds only when all of them have; set replicas: 1 and add Worker replicas "
		"instead",
		(long long)json_integer_value(replicas), type, lower);
	if (!text)
		w->oom = true;
	else
		add(w, "MultipleChiefReplicas", type, ".replicas", text);
	free(text);
}

/* The template opts out of the sidecar by annotation or by label (Istio reads both). */
static bool opts_out_of_istio(json_t *rspec)
{
	json_t *meta = tfjob__obj(tfjob__obj(rspec, "template"), "metadata");
	const char *annotation = tfjob__str(tfjob__obj(meta, "annotations"), ISTIO_INJECT);
	const char *label = tfjob__str(tfjob__obj(meta, "labels"), ISTIO_INJECT);
	return (annotation && !strcmp(annotation, "false")) || (label && !strcmp(label, "false"));
}

static void warn_istio(tfjob_warnings *w, const char *type, json_t *rspec)
{
	if (!opts_out_of_istio(rspec))
		add(w, "IstioSidecar", type, ".template.metadata.annotations",
		    "the namespace injects the Istio sidecar (istio-injection=enabled) and TFJob pods do not work with it: "
		    "set the annotation " ISTIO_INJECT ": \"false\" in the pod template");
}

static bool has_gpu(json_t *limits)
{
	const char *key;
	json_t *v;
	json_object_foreach(limits, key, v) {
		size_t n = strlen(key);
		if (n > 4 && !strcmp(key + n - 4, "/gpu"))
			return true;
	}
	return false;
}

static void warn_gpu(tfjob_warnings *w, const char *type, json_t *rspec)
{
	size_t i;
	json_t *container;
	json_array_foreach(tfjob__arr(tfjob__pod_spec(rspec), "containers"), i, container) {
		json_t *resources = tfjob__obj(container, "resources");
		json_t *limits = tfjob__obj(resources, "limits"), *requests = tfjob__obj(resources, "requests");
		if (!has_gpu(limits))
			continue;
		/* A request left out defaults to the limit of the same resource. */
		bool cpu = json_object_get(requests, "cpu") || json_object_get(limits, "cpu");
		bool memory = json_object_get(requests, "memory") || json_object_get(limits, "memory");
		if (cpu && memory)
			continue;
		char suffix[96];
		snprintf(suffix, sizeof(suffix), ".template.spec.containers[%zu].resources.requests", i);
		char *text = tfjob__strdup_printf(
			"a GPU limit without a %s request: the scheduler then reserves no %s for this replica, which may land "
			"on a node that cannot feed its GPUs; request cpu and memory next to the GPU limit",
			!cpu && !memory ? "cpu or memory" : !cpu ? "cpu" : "memory",
			!cpu && !memory ? "CPU or memory" : !cpu ? "CPU" : "memory");
		if (!text)
			w->oom = true;
		else
			add(w, "GPUWithoutRequests", type, suffix, text);
		free(text);
	}
}

int tfjob_job_warnings(tfjob_warnings **out, const tfjob_job *job, const tfjob_warning_options *caller_opts,
                       tfjob_error **err)
{
	if (!out || !job)
		return tfjob__fail(err, TFJOB_EINVAL, "out or job is NULL");
	*out = NULL;
	tfjob_warning_options copy;
	int rc = tfjob__versioned_copy(&tfjob__warning_options_v, &copy, caller_opts, err);
	if (rc)
		return rc;
	const tfjob_warning_options *opts = &copy;
	tfjob_warnings *w = calloc(1, sizeof(*w));
	if (!w)
		return tfjob__oom(err);
	const char *type;
	json_t *rspec;
	json_object_foreach(tfjob__replica_specs(job), type, rspec) {
		if (!json_is_object(rspec))
			continue;
		warn_restart_policy(w, type, rspec);
		warn_template_restart_policy(w, type, rspec);
		warn_chief_replicas(w, type, rspec);
		if (opts->istio_injection)
			warn_istio(w, type, rspec);
		warn_gpu(w, type, rspec);
	}
	if (w->oom) {
		tfjob_warnings_free(w);
		return tfjob__oom(err);
	}
	*out = w;
	return 0;
}

size_t tfjob_warnings_count(const tfjob_warnings *warnings) { return warnings ? warnings->count : 0; }

static const struct warning *at(const tfjob_warnings *warnings, size_t i)
{
	return warnings && i < warnings->count ? &warnings->items[i] : NULL;
}

const char *tfjob_warnings_reason(const tfjob_warnings *warnings, size_t i)
{
	const struct warning *w = at(warnings, i);
	return w ? w->reason : NULL;
}

const char *tfjob_warnings_field(const tfjob_warnings *warnings, size_t i)
{
	const struct warning *w = at(warnings, i);
	return w ? w->field : NULL;
}

const char *tfjob_warnings_message(const tfjob_warnings *warnings, size_t i)
{
	const struct warning *w = at(warnings, i);
	return w ? w->message : NULL;
}

void tfjob_warnings_free(tfjob_warnings *warnings)
{
	if (!warnings)
		return;
	for (size_t i = 0; i < warnings->count; i++) {
		free(warnings->items[i].field);
		free(warnings->items[i].message);
	}
	free(warnings->items);
	free(warnings);
}
