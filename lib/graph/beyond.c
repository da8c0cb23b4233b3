/*
 * Children at indices at or beyond a type's replicas, as training-operator v1.9 creates them:
 * index 0 of a type with replicas: 0 (its pod slice is max(highest index + 1, replicas) long,
 * never empty) and the gaps below a stray child's index (defect 7 in docs/semantics.md). One code path
 * for the planner (the children it creates) and tfjob_render_all() (what a job renders to).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdlib.h>
#include <string.h>

#include "core/job.h"
#include "graph/graph.h"
#include "graph/render.h"

int64_t tfjob__graph_min_slots(tfjob_compat compat, int64_t replicas)
{
	return compat == TFJOB_COMPAT_TRAINING_OPERATOR_1_9 && replicas < 1 ? 1 : replicas;
}

/* Set (or remove, when cfg is "") TF_CONFIG in the env of the pod's tensorflow container. */
static int set_tf_config(json_t *pod, const char *cfg, tfjob_error **err)
{
	json_t *containers = tfjob__arr(tfjob__obj(pod, "spec"), "containers");
	int ci = tfjob__tensorflow_container_index(containers);
	json_t *container = json_array_get(containers, ci < 0 ? 0 : (size_t)ci);
	json_t *env = tfjob__arr(container, "env");
	for (size_t i = json_array_size(env); i-- > 0;) {
		const char *name = tfjob__str(json_array_get(env, i), "name");
		if (!name || strcmp(name, "TF_CONFIG"))
			continue;
		if (*cfg)
			return json_object_set_new(json_array_get(env, i), "value", json_string(cfg)) ? tfjob__oom(err) : 0;
		return json_array_remove(env, i) ? tfjob__oom(err) : 0;
	}
	if (!*cfg || !json_is_object(container))
		return 0;
	/* appended last, where the renderer puts it */
	if (!env && (!(env = json_array()) || json_object_set_new(container, "env", env)))
		return tfjob__oom(err);
	return json_array_append_new(env, json_pack("{s:s,s:s}", "name", "TF_CONFIG", "value", cfg)) ? tfjob__oom(err) : 0;
}

/*
 * A pod rendered from the widened copy lists the extra index in its TF_CONFIG; v1.9 writes the
 * TF_CONFIG of the real spec (the task index beyond the cluster's list), or none when the real
 * job is not distributed.
 */
static int set_beyond_tf_config(json_t *pod, const tfjob_job *job, const char *key, int64_t index,
                                const tfjob_render_options *opts, tfjob_error **err)
{
	tfjob_render_options ro;
	tfjob_graph *g = NULL;
	size_t t = 0;
	char *cfg = NULL;
	int rc = tfjob__render_options_resolve(&ro, opts, err);
	if (!rc)
		rc = tfjob__graph_build(&g, job, &ro, true, err);
	if (!rc)
		rc = tfjob__graph_lookup(&t, g, key, err);
	tfjob_error *beyond_err = NULL;
	if (!rc)
		rc = tfjob__graph_tf_config_beyond(&cfg, g, t, index, &beyond_err);
	tfjob_graph_free(g);
	if (rc == TFJOB_ESTATE) {
		/* Where v1.9 panics (a sparse PS/worker address beyond replicas), keep the widened render. */
		tfjob_error_free(beyond_err);
		return 0;
	}
	if (rc) {
		if (err && beyond_err)
			*err = beyond_err;
		else
			tfjob_error_free(beyond_err);
		return rc;
	}
	rc = set_tf_config(pod, cfg, err);
	free(cfg);
	return rc;
}

int tfjob__render_child(json_t **out, const tfjob_job *job, const char *key, int64_t index, int64_t replicas, bool pod,
                        const tfjob_render_options *opts, tfjob_error **err)
{
	*out = NULL;
	if (index < replicas)
		return pod ? tfjob__render_pod(out, job, key, index, opts, err)
		           : tfjob__render_service(out, job, key, index, opts, err);
	/* The renderer only renders existing replicas: render from a copy with the type widened to
	 * index + 1 replicas (its TF_CONFIG then also lists the extra addresses). */
	tfjob_job *widened = NULL;
	int rc = tfjob_job_clone(&widened, job, err);
	if (rc)
		return rc;
	json_t *spec = tfjob__replica_spec(widened, key);
	if (!spec || json_object_set_new(spec, "replicas", json_integer(index + 1))) {
		tfjob_job_free(widened);
		return tfjob__oom(err);
	}
	rc = pod ? tfjob__render_pod(out, widened, key, index, opts, err)
	         : tfjob__render_service(out, widened, key, index, opts, err);
	tfjob_job_free(widened);
	if (!rc && pod)
		rc = set_beyond_tf_config(*out, job, key, index, opts, err);
	if (rc) {
		json_decref(*out);
		*out = NULL;
	}
	return rc;
}
