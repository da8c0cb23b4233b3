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
/* Lines of a failed replica's output shown by default (--tail N). */
#define CTL_DEFAULT_TAIL 20
/* The most lines of a failed replica's output a report shows (tfjob_local_report()). */
#define CTL_REPORT_TAIL_MAX 10000
/* --tail N of `command`: a number of lines from 0 to max, or -1 (every line) when all_allowed;
 * false (after a message) otherwise. */
bool ctl_parse_tail(int64_t *out, const char *command, const char *text, bool all_allowed, int64_t max);
/* tfjob_local_report() of the run directory, parsed (NULL when there is none). New reference. */
json_t *ctl_run_report(const char *run_dir, int64_t tail);
/* A failed replica's log path and its last lines (a replica entry of the report), indented. */
void ctl_print_replica_failure(FILE *out, const char *indent, const json_t *replica);
/* What kubectl describe tfjob would print, from the run directory, with what happened to each
 * replica (the last `tail` lines of those that failed). */
void ctl_run_describe(FILE *out, const char *run_dir, int64_t tail);

#endif
