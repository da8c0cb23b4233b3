/*
 * Minimal stand-in for the renderer of branch `graph` (lib/render.c): name, namespace, labels,
 * owner reference, restartPolicy mapping; no TF_CONFIG. Removed when the renderer is merged.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <string.h>

#include "internal/job.h"
#include "internal/render.h"

static json_t *base(const tfjob_job *job, const char *type, int64_t index, const char *kind)
{
	char lower[64];
	size_t i;
	for (i = 0; type[i] && i < sizeof lower - 1; i++)
		lower[i] = (char)((type[i] >= 'A' && type[i] <= 'Z') ? type[i] - 'A' + 'a' : type[i]);
	lower[i] = 0;
	char *name = tfjob__strdup_printf("%s-%s-%lld", tfjob_job_name(job), lower, (long long)index);
	char idx[32];
	snprintf(idx, sizeof idx, "%lld", (long long)index);
	const char *ns = tfjob_job_namespace(job) ? tfjob_job_namespace(job) : "default";
	json_t *labels = json_pack("{s:s,s:s,s:s,s:s}", "training.kubeflow.org/operator-name", "tfjob-controller",
	                           "training.kubeflow.org/job-name", tfjob_job_name(job),
	                           "training.kubeflow.org/replica-type", lower, "training.kubeflow.org/replica-index", idx);
	json_t *owner = json_pack("[{s:s,s:s,s:s,s:s,s:b,s:b}]", "apiVersion", "kubeflow.org/v1", "kind", "TFJob", "name",
	                          tfjob_job_name(job), "uid", tfjob_job_uid(job) ? tfjob_job_uid(job) : "", "controller", 1,
	                          "blockOwnerDeletion", 1);
	json_t *obj = json_pack("{s:s,s:s,s:{s:s,s:s,s:o,s:o}}", "apiVersion", "v1", "kind", kind, "metadata", "name",
	                        name ? name : "", "namespace", ns, "labels", labels, "ownerReferences", owner);
	free(name);
	return obj;
}

int tfjob__render_pod(json_t **out, const tfjob_job *job, const char *type, int64_t index,
                      const tfjob_render_options *opts, tfjob_error **err)
{
	(void)opts;
	json_t *obj = base(job, type, index, "Pod");
	json_t *rs = tfjob__replica_spec(job, type);
	json_t *spec = json_deep_copy(tfjob__pod_spec(rs));
	if (!obj || !spec) {
		json_decref(obj);
		json_decref(spec);
		return tfjob__oom(err);
	}
	const char *pol = tfjob__str(rs, "restartPolicy");
	json_object_set_new(spec, "restartPolicy", json_string(pol && strcmp(pol, "ExitCode") ? pol : "Never"));
	json_object_set_new(obj, "spec", spec);
	*out = obj;
	return 0;
}

int tfjob__render_service(json_t **out, const tfjob_job *job, const char *type, int64_t index,
                          const tfjob_render_options *opts, tfjob_error **err)
{
	(void)opts;
	json_t *obj = base(job, type, index, "Service");
	if (!obj)
		return tfjob__oom(err);
	json_t *sel = json_deep_copy(json_object_get(json_object_get(obj, "metadata"), "labels"));
	json_object_set_new(obj, "spec", json_pack("{s:s,s:o}", "clusterIP", "None", "selector", sel));
	*out = obj;
	return 0;
}
