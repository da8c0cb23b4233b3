/*
 * Rendering of the children of a TFJob (internal entry points shared with the planner).
 * The public face is include/tfjob/graph.h.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_INTERNAL_RENDER_H
#define TFJOB_INTERNAL_RENDER_H

#include <jansson.h>

#include "util/common.h"

/*
 * The complete Pod (new reference in *out) for replica (type, index) of a job whose defaults
 * have been applied: name, namespace, labels, owner reference, TF_CONFIG, restartPolicy mapping,
 * gang-scheduling decoration per opts. type is the key as it appears in spec.tfReplicaSpecs.
 * opts may be NULL (defaults).
 */
int tfjob__render_pod(json_t **out, const tfjob_job *job, const char *type, int64_t index,
                      const tfjob_render_options *opts, tfjob_error **err);

/* The headless Service for replica (type, index); same conventions. */
int tfjob__render_service(json_t **out, const tfjob_job *job, const char *type, int64_t index,
                          const tfjob_render_options *opts, tfjob_error **err);

#endif
