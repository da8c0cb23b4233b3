/*
 * The descriptors of every public versioned struct (util/versioned.h explains the mechanism).
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_UTIL_VERSIONED_STRUCTS_H
#define TFJOB_UTIL_VERSIONED_STRUCTS_H

#include "tfjob/sys/transport.h"
#include "util/versioned.h"

extern const tfjob__versioned tfjob__parse_options_v;
extern const tfjob__versioned tfjob__default_options_v;
extern const tfjob__versioned tfjob__validate_options_v;
extern const tfjob__versioned tfjob__warning_options_v;
extern const tfjob__versioned tfjob__render_options_v;
extern const tfjob__versioned tfjob__plan_options_v;
extern const tfjob__versioned tfjob__simulate_options_v;
extern const tfjob__versioned tfjob__list_options_v;
extern const tfjob__versioned tfjob__delete_options_v;
extern const tfjob__versioned tfjob__apply_options_v;
extern const tfjob__versioned tfjob__watch_options_v;
extern const tfjob__versioned tfjob__transport_backend_v;
extern const tfjob__versioned tfjob__memory_options_v;
extern const tfjob__versioned tfjob__kube_options_v;
extern const tfjob__versioned tfjob__pod_log_options_v;
extern const tfjob__versioned tfjob__controller_hooks_v;
extern const tfjob__versioned tfjob__controller_options_v;
extern const tfjob__versioned tfjob__controller_metrics_v;
extern const tfjob__versioned tfjob__local_options_v;
extern const tfjob__versioned tfjob__local_run_options_v;

#endif
