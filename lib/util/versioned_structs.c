/*
 * One size per version of every public versioned struct, and its defaults.
 *
 * Adding a field to a struct: append it in the header, bump TFJOB_X_VERSION, and add a
 * TFJOB__SIZE_THROUGH(type, new_last_field) here (the build fails until the number of sizes
 * matches the version; tests/test_versions.c fails when the last size is not the struct's end).
 * SPDX-License-Identifier: Apache-2.0
 */
#include "util/versioned_structs.h"
#include "tfjob/tfjob.h"

TFJOB__VERSIONED_DEFINE(tfjob__parse_options_v, tfjob_parse_options, TFJOB_PARSE_OPTIONS_VERSION,
                        TFJOB_PARSE_OPTIONS_INIT, TFJOB__SIZE_THROUGH(tfjob_parse_options, max_documents),
                        TFJOB__SIZE_THROUGH(tfjob_parse_options, first_line));
TFJOB__VERSIONED_DEFINE(tfjob__default_options_v, tfjob_default_options, TFJOB_DEFAULT_OPTIONS_VERSION,
                        TFJOB_DEFAULT_OPTIONS_INIT, TFJOB__SIZE_THROUGH(tfjob_default_options, compat));
TFJOB__VERSIONED_DEFINE(tfjob__validate_options_v, tfjob_validate_options, TFJOB_VALIDATE_OPTIONS_VERSION,
                        TFJOB_VALIDATE_OPTIONS_INIT, TFJOB__SIZE_THROUGH(tfjob_validate_options, old),
                        TFJOB__SIZE_THROUGH(tfjob_validate_options, strict));
TFJOB__VERSIONED_DEFINE(tfjob__warning_options_v, tfjob_warning_options, TFJOB_WARNING_OPTIONS_VERSION,
                        TFJOB_WARNING_OPTIONS_INIT, TFJOB__SIZE_THROUGH(tfjob_warning_options, istio_injection));
TFJOB__VERSIONED_DEFINE(tfjob__render_options_v, tfjob_render_options, TFJOB_RENDER_OPTIONS_VERSION,
                        TFJOB_RENDER_OPTIONS_INIT, TFJOB__SIZE_THROUGH(tfjob_render_options, priority_payload));
TFJOB__VERSIONED_DEFINE(tfjob__plan_options_v, tfjob_plan_options, TFJOB_PLAN_OPTIONS_VERSION,
                        TFJOB_PLAN_OPTIONS_INIT, TFJOB__SIZE_THROUGH(tfjob_plan_options, render),
                        TFJOB__SIZE_THROUGH(tfjob_plan_options, pod_group_json));
TFJOB__VERSIONED_DEFINE(tfjob__simulate_options_v, tfjob_simulate_options, TFJOB_SIMULATE_OPTIONS_VERSION,
                        TFJOB_SIMULATE_OPTIONS_INIT, TFJOB__SIZE_THROUGH(tfjob_simulate_options, max_steps));
TFJOB__VERSIONED_DEFINE(tfjob__list_options_v, tfjob_list_options, TFJOB_LIST_OPTIONS_VERSION,
                        TFJOB_LIST_OPTIONS_INIT, TFJOB__SIZE_THROUGH(tfjob_list_options, resource_version));
TFJOB__VERSIONED_DEFINE(tfjob__delete_options_v, tfjob_delete_options, TFJOB_DELETE_OPTIONS_VERSION,
                        TFJOB_DELETE_OPTIONS_INIT, TFJOB__SIZE_THROUGH(tfjob_delete_options, grace_period_seconds));
TFJOB__VERSIONED_DEFINE(tfjob__watch_options_v, tfjob_watch_options, TFJOB_WATCH_OPTIONS_VERSION,
                        TFJOB_WATCH_OPTIONS_INIT, TFJOB__SIZE_THROUGH(tfjob_watch_options, payload));
TFJOB__VERSIONED_DEFINE(tfjob__transport_backend_v, tfjob_transport_backend, TFJOB_TRANSPORT_BACKEND_VERSION,
                        TFJOB_TRANSPORT_BACKEND_INIT, TFJOB__SIZE_THROUGH(tfjob_transport_backend, create_event),
                        TFJOB__SIZE_THROUGH(tfjob_transport_backend, apply));
TFJOB__VERSIONED_DEFINE(tfjob__apply_options_v, tfjob_apply_options, TFJOB_APPLY_OPTIONS_VERSION,
                        TFJOB_APPLY_OPTIONS_INIT, TFJOB__SIZE_THROUGH(tfjob_apply_options, field_validation));
TFJOB__VERSIONED_DEFINE(tfjob__memory_options_v, tfjob_memory_options, TFJOB_MEMORY_OPTIONS_VERSION,
                        TFJOB_MEMORY_OPTIONS_INIT, TFJOB__SIZE_THROUGH(tfjob_memory_options, default_namespace));
TFJOB__VERSIONED_DEFINE(tfjob__kube_options_v, tfjob_kube_options, TFJOB_KUBE_OPTIONS_VERSION,
                        TFJOB_KUBE_OPTIONS_INIT, TFJOB__SIZE_THROUGH(tfjob_kube_options, user_agent));
TFJOB__VERSIONED_DEFINE(tfjob__pod_log_options_v, tfjob_pod_log_options, TFJOB_POD_LOG_OPTIONS_VERSION,
                        TFJOB_POD_LOG_OPTIONS_INIT, TFJOB__SIZE_THROUGH(tfjob_pod_log_options, limit_bytes));
TFJOB__VERSIONED_DEFINE(tfjob__controller_hooks_v, tfjob_controller_hooks, TFJOB_CONTROLLER_HOOKS_VERSION,
                        TFJOB_CONTROLLER_HOOKS_INIT, TFJOB__SIZE_THROUGH(tfjob_controller_hooks, payload));
TFJOB__VERSIONED_DEFINE(tfjob__controller_options_v, tfjob_controller_options, TFJOB_CONTROLLER_OPTIONS_VERSION,
                        TFJOB_CONTROLLER_OPTIONS_INIT, TFJOB__SIZE_THROUGH(tfjob_controller_options, hooks),
                        TFJOB__SIZE_THROUGH(tfjob_controller_options, status_writers));
TFJOB__VERSIONED_DEFINE(tfjob__controller_metrics_v, tfjob_controller_metrics, TFJOB_CONTROLLER_METRICS_VERSION,
                        { .version = TFJOB_CONTROLLER_METRICS_VERSION },
                        TFJOB__SIZE_THROUGH(tfjob_controller_metrics, leader_transitions),
                        TFJOB__SIZE_THROUGH(tfjob_controller_metrics, caches_synced));
TFJOB__VERSIONED_DEFINE(tfjob__local_options_v, tfjob_local_options, TFJOB_LOCAL_OPTIONS_VERSION,
                        TFJOB_LOCAL_OPTIONS_INIT, TFJOB__SIZE_THROUGH(tfjob_local_options, event_payload),
                        TFJOB__SIZE_THROUGH(tfjob_local_options, gpus));
TFJOB__VERSIONED_DEFINE(tfjob__local_run_options_v, tfjob_local_run_options, TFJOB_LOCAL_RUN_OPTIONS_VERSION,
                        TFJOB_LOCAL_RUN_OPTIONS_INIT, TFJOB__SIZE_THROUGH(tfjob_local_run_options, payload));

const tfjob__versioned *const tfjob__versioned_all[] = {
	&tfjob__parse_options_v,     &tfjob__default_options_v,    &tfjob__validate_options_v, &tfjob__warning_options_v,
	&tfjob__render_options_v,    &tfjob__plan_options_v,       &tfjob__simulate_options_v,
	&tfjob__list_options_v,      &tfjob__delete_options_v,     &tfjob__watch_options_v,     &tfjob__apply_options_v,
	&tfjob__transport_backend_v, &tfjob__memory_options_v,     &tfjob__kube_options_v,
	&tfjob__controller_hooks_v,  &tfjob__controller_options_v, &tfjob__controller_metrics_v,
	&tfjob__local_options_v,     &tfjob__local_run_options_v,  &tfjob__pod_log_options_v,   NULL,
};
