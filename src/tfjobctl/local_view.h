/*
 * tfjobctl: views of a local run directory (local_view.c).
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOBCTL_LOCAL_VIEW_H
#define TFJOBCTL_LOCAL_VIEW_H

#include <jansson.h>
#include <stdio.h>

#include "tfjobctl.h"

/* DIR/FILE parsed as JSON, or NULL. New reference. */
json_t *ctl_run_load(const char *run_dir, const char *file);
/* The tensorflow container's status of a Pod (borrowed), or NULL. */
const json_t *ctl_pod_tf_status(const json_t *pod);
/* One-line state of a Pod: "Failed (exit 137)". */
void ctl_pod_summary(char *buf, size_t size, const json_t *pod);
void ctl_print_pods(FILE *out, const json_t *pods);
void ctl_print_conditions(FILE *out, const json_t *status);
void ctl_print_replica_statuses(FILE *out, const json_t *status);
/* What kubectl describe tfjob would print, from the run directory. */
void ctl_run_describe(FILE *out, const char *run_dir);

#endif
