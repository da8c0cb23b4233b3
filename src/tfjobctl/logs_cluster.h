/*
 * tfjobctl logs on the cluster (logs_cluster.c).
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOBCTL_LOGS_CLUSTER_H
#define TFJOBCTL_LOGS_CLUSTER_H

#include <stdbool.h>
#include <stdint.h>

#include "connection.h"

/* What tfjobctl logs JOB ... asks for. */
struct ctl_logs_args {
	const char *job;           /* NAME or tfjob/NAME */
	const char *replica;       /* TYPE-INDEX or the pod's name; NULL: --all, the type's, or the one pod */
	const char *replica_type;  /* --replica-type, or NULL */
	const char *replica_index; /* --replica-index, or NULL */
	const char *container;     /* -c, or NULL: tensorflow (or the only container) */
	bool all, follow, previous, timestamps, prefix;
	int64_t tail;              /* -1: all */
	int64_t since_seconds;     /* > 0: --since */
	const char *since_time;    /* --since-time, or NULL */
};

/* Print (or follow) the logs of the TFJob's pods the arguments select. Reports errors; EXIT_*. */
int ctl_logs_cluster(const struct ctl_cluster *cl, const struct ctl_logs_args *a);

#endif
