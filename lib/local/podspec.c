/*
 * From a Pod (spec) to what the local backend runs: the `tensorflow` container's command,
 * args, env and workingDir, the restart policy and grace period. What it does not implement is
 * refused (no command, valueFrom, envFrom) or reported once as ignored.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdlib.h>
#include <string.h>

#include "core/job.h"
#include "local/internal.h"

static const char *const pod_known[] = { "containers", "restartPolicy", "terminationGracePeriodSeconds" };
static const char *const container_known[] = { "name", "command", "args", "env", "workingDir" };

static bool known(const char *key, const char *const *list, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(key, list[i]))
			return true;
	return false;
}

static json_t *tf_container(json_t *spec, int *index)
{
	json_t *containers = tfjob__arr(spec, "containers");
	int i = tfjob__tensorflow_container_index(containers);
	*index = i;
	return i >= 0 ? json_array_get(containers, (size_t)i) : NULL;
}

static bool string_array(json_t *v)
{
	if (!json_is_array(v))
		return false;
	size_t i;
	json_t *s;
	json_array_foreach(v, i, s)
		if (!json_is_string(s))
			return false;
	return true;
}

/* A refused field: the error names its Kubernetes field path (tfjob_error_field()) and says why. */
static int refuse(tfjob_error **err, const char *prefix, int index, const char *field, const char *why)
{
	char path[512];
	if (index >= 0)
		snprintf(path, sizeof path, "%s.containers[%d]%s%s", prefix, index, field[0] ? "." : "", field);
	else
		snprintf(path, sizeof path, "%s.%s", prefix, field);
	return tfjob__fail_field(err, TFJOB_EINVAL, path, "%s", why);
}

int tfjob__local_check_pod_spec(json_t *spec, const char *prefix, tfjob_error **err)
{
	int i;
	json_t *c = tf_container(spec, &i);
	if (!c)
		return refuse(err, prefix, -1, "containers",
		              "the local backend needs a container named 'tensorflow' (it runs that container's command)");
	json_t *cmd = json_object_get(c, "command");
	if (!string_array(cmd) || json_array_size(cmd) == 0)
		return refuse(err, prefix, i, "command",
		              "required by the local backend: it runs no images, so the tensorflow container must say "
		              "what to run (e.g. command: [python3, train.py])");
	json_t *args = json_object_get(c, "args");
	if (args && !json_is_null(args) && !string_array(args))
		return refuse(err, prefix, i, "args", "must be a list of strings");
	if (json_object_get(c, "envFrom"))
		return refuse(err, prefix, i, "envFrom",
		              "not supported by the local backend (no ConfigMaps or Secrets here): give env entries with "
		              "plain values");
	size_t k;
	json_t *e;
	json_array_foreach(tfjob__arr(c, "env"), k, e) {
		char field[64];
		const char *name = tfjob__str(e, "name");
		if (!name) {
			snprintf(field, sizeof field, "env[%zu].name", k);
			return refuse(err, prefix, i, field, "required");
		}
		char why[512];
		if (json_object_get(e, "valueFrom")) {
			snprintf(field, sizeof field, "env[%zu].valueFrom", k);
			snprintf(why, sizeof why, "%.200s: not supported by the local backend (no Secrets, ConfigMaps or downward "
			         "API here): give a plain value", name);
			return refuse(err, prefix, i, field, why);
		}
		json_t *v = json_object_get(e, "value");
		if (v && !json_is_null(v) && !json_is_string(v)) {
			snprintf(field, sizeof field, "env[%zu].value", k);
			snprintf(why, sizeof why, "%.200s: must be a string", name);
			return refuse(err, prefix, i, field, why);
		}
	}
	json_t *wd = json_object_get(c, "workingDir");
	if (wd && !json_is_null(wd) && !json_is_string(wd))
		return refuse(err, prefix, i, "workingDir", "must be a string");
	if (tfjob__local_gpu_count(c) < 0)
		return refuse(err, prefix, i, "resources.limits[nvidia.com/gpu]", "must be a whole number of GPUs");
	return 0;
}

/* Report a field once per engine. */
static void ignored(tfjob_local *l, const char *pod, const char *key, const char *why)
{
	if (json_object_get(l->ignored, key))
		return;
	json_object_set_new(l->ignored, key, json_true());
	tfjob__local_event(l, pod, "Normal", "Ignored", "%s is ignored by the local backend: %s (reported once)", key, why);
}

static void report_ignored(tfjob_local *l, const char *pod, json_t *spec, int tf_index)
{
	const char *key;
	json_t *v;
	char buf[300];
	json_object_foreach(spec, key, v) {
		if (known(key, pod_known, TFJOB_ARRAY_LEN(pod_known)))
			continue;
		snprintf(buf, sizeof buf, "spec.%s", key);
		ignored(l, pod, buf, "processes run directly on this machine");
	}
	size_t i;
	json_t *c;
	json_array_foreach(tfjob__arr(spec, "containers"), i, c) {
		const char *name = tfjob__str(c, "name");
		if ((int)i != tf_index) {
			snprintf(buf, sizeof buf, "spec.containers[%s]", name ? name : "?");
			ignored(l, pod, buf, "only the 'tensorflow' container runs");
			continue;
		}
		json_object_foreach(c, key, v) {
			if (known(key, container_known, TFJOB_ARRAY_LEN(container_known)))
				continue;
			snprintf(buf, sizeof buf, "spec.containers[tensorflow].%s", key);
			ignored(l, pod, buf,
			        !strcmp(key, "image") ? "no image is pulled; the command runs on this machine"
			        : !strcmp(key, "ports") ? "TF_CONFIG addresses are free ports on 127.0.0.1"
			        : !strcmp(key, "resources") ? "no CPU or memory limits or requests are enforced (nvidia.com/gpu "
			                                      "chooses the GPUs in CUDA_VISIBLE_DEVICES)"
			                                    : "not implemented locally");
		}
	}
}

void tfjob__launch_free(tfjob__launch *launch)
{
	for (size_t i = 0; launch->argv && launch->argv[i]; i++)
		free(launch->argv[i]);
	for (size_t i = 0; launch->env && launch->env[i]; i++)
		free(launch->env[i]);
	free(launch->argv);
	free(launch->env);
	free(launch->workdir);
	free(launch->container);
	memset(launch, 0, sizeof *launch);
}

/* The value of NAME among the first n "NAME=value" entries (the last one wins), or NULL. */
static const char *lookup(char **env, size_t n, const char *name, size_t len)
{
	const char *found = NULL;
	for (size_t i = 0; i < n; i++)
		if (!strncmp(env[i], name, len) && env[i][len] == '=')
			found = env[i] + len + 1;
	return found;
}

/* Append len bytes to out (size *len_io, capacity *cap); false when out of memory (out freed). */
static bool append(char **out, size_t *len_io, size_t *cap, const char *piece, size_t len)
{
	if (*len_io + len + 1 > *cap) {
		*cap = (*len_io + len + 1) * 2;
		char *grown = realloc(*out, *cap);
		if (!grown) {
			free(*out);
			*out = NULL;
			return false;
		}
		*out = grown;
	}
	memcpy(*out + *len_io, piece, len);
	*len_io += len;
	(*out)[*len_io] = '\0';
	return true;
}

/*
 * Kubernetes' variable expansion of command, args and env values: $(NAME) is replaced by the
 * value of the container's env variable NAME when it is defined (for env values: defined
 * earlier), kept as it is otherwise; $$ is an escaped $. A new string, "name=" and the value for an
 * env entry (name not NULL), or NULL (out of memory). The text between two '$' is copied whole: a
 * value without one (TF_CONFIG, O(n) bytes) is one copy.
 */
static char *expand(const char *name, const char *in, char **env, size_t n)
{
	size_t cap = (name ? strlen(name) + 1 : 0) + strlen(in) + 1, len = 0;
	char *out = malloc(cap);
	if (out)
		out[0] = '\0';
	if (out && name && (!append(&out, &len, &cap, name, strlen(name)) || !append(&out, &len, &cap, "=", 1)))
		return NULL;
	for (const char *p = in; out && *p;) {
		const char *dollar = strchr(p, '$');
		size_t plain = dollar ? (size_t)(dollar - p) : strlen(p);
		if (plain) {
			append(&out, &len, &cap, p, plain);
			p += plain;
			continue;
		}
		const char *piece = p, *close = p[1] == '(' ? strchr(p + 2, ')') : NULL;
		size_t plen = 1;
		if (p[1] == '$') {
			p += 2;
		} else if (close) {
			size_t nlen = (size_t)(close - (p + 2));
			const char *v = lookup(env, n, p + 2, nlen);
			if (v) {
				piece = v;
				plen = strlen(v);
			} else {
				plen = nlen + 3;
			}
			p += nlen + 3;
		} else {
			p++;
		}
		append(&out, &len, &cap, piece, plen);
	}
	return out;
}

static int fill(tfjob__launch *out, json_t *spec, json_t *c)
{
	json_t *cmd = json_object_get(c, "command"), *args = json_object_get(c, "args"), *env = tfjob__arr(c, "env");
	size_t n = json_array_size(cmd) + json_array_size(args), k = 0, i;
	json_t *v;
	out->argv = calloc(n + 1, sizeof *out->argv);
	out->env = calloc(json_array_size(env) + 1, sizeof *out->env);
	if (!out->argv || !out->env)
		return TFJOB_ENOMEM;
	json_array_foreach(env, i, v) {
		const char *val = tfjob__str(v, "value");
		out->env[k] = expand(tfjob__str(v, "name"), val ? val : "", out->env, k);
		if (!out->env[k++])
			return TFJOB_ENOMEM;
	}
	size_t nenv = k;
	k = 0;
	json_array_foreach(cmd, i, v)
		if (!(out->argv[k++] = expand(NULL, json_string_value(v), out->env, nenv)))
			return TFJOB_ENOMEM;
	json_array_foreach(args, i, v)
		if (!(out->argv[k++] = expand(NULL, json_string_value(v), out->env, nenv)))
			return TFJOB_ENOMEM;
	const char *wd = tfjob__str(c, "workingDir"), *name = tfjob__str(c, "name");
	if ((wd && !(out->workdir = tfjob__strdup(wd))) || !(out->container = tfjob__strdup(name ? name : "tensorflow")))
		return TFJOB_ENOMEM;
	out->gpus = tfjob__local_gpu_count(c);
	const char *policy = tfjob__str(spec, "restartPolicy");
	out->policy = !policy || !strcmp(policy, "Always") ? LPOD_ALWAYS : !strcmp(policy, "OnFailure") ? LPOD_ON_FAILURE
	                                                                                                  : LPOD_NEVER;
	int64_t grace;
	out->grace_ms = tfjob__int(&grace, spec, "terminationGracePeriodSeconds") == 0 && grace >= 0 ? grace * 1000 : -1;
	return 0;
}

int tfjob__launch_from_pod(tfjob__launch *out, tfjob_local *l, json_t *pod, tfjob_error **err)
{
	memset(out, 0, sizeof *out);
	json_t *spec = tfjob__obj(pod, "spec");
	const char *name = tfjob__str(tfjob__obj(pod, "metadata"), "name");
	int rc = tfjob__local_check_pod_spec(spec, "spec", err);
	if (rc) {
		/* "pod NAME: spec.containers[0].command: ..." (the field path stays the Pod's own) */
		char *msg = err && *err ? tfjob__strdup_printf("pod %s: %s", name ? name : "?", (*err)->message) : NULL;
		if (msg) {
			free((*err)->message);
			(*err)->message = msg;
		}
		return rc;
	}
	int index;
	json_t *c = tf_container(spec, &index);
	rc = fill(out, spec, c);
	if (rc) {
		tfjob__launch_free(out);
		return tfjob__oom(err);
	}
	report_ignored(l, name ? name : "?", spec, index);
	return 0;
}

int tfjob_local_check(const tfjob_job *job, tfjob_error **err)
{
	if (!job)
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_local_check: job is required");
	/* Jobs the planner would leave alone forever: nothing outside the run can change them here. */
	if (tfjob_job_is_suspended(job))
		return tfjob__fail_field(err, TFJOB_EINVAL, "spec.runPolicy.suspend",
		                         "a suspended TFJob starts no replica, and nothing can resume it in a local run");
	const char *manager = tfjob_job_managed_by(job);
	if (manager && strcmp(manager, TFJOB_MANAGED_BY_TRAINING_OPERATOR))
		return tfjob__fail_field(err, TFJOB_EINVAL, "spec.runPolicy.managedBy",
		                         "the TFJob is managed by '%.200s', not by training-operator's controller, which the "
		                         "local run is: it would never act on it", manager);
	json_t *specs = tfjob__replica_specs(job);
	const char *type;
	json_t *rs;
	json_object_foreach(specs, type, rs) {
		char prefix[300];
		snprintf(prefix, sizeof prefix, "spec.tfReplicaSpecs[%s].template.spec", type);
		int rc = tfjob__local_check_pod_spec(tfjob__pod_spec(rs), prefix, err);
		if (rc)
			return rc;
	}
	return 0;
}
