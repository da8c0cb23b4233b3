/*
 * libtfjob - the exit-code classifier behind restartPolicy ExitCode.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_EXITCODE_H
#define TFJOB_EXITCODE_H

#include "common.h"

TFJOB_BEGIN_DECLS

typedef enum tfjob_exit_class {
	TFJOB_EXIT_PERMANENT = 0, /* the replica is not restarted; the job fails */
	TFJOB_EXIT_RETRYABLE = 1  /* the pod is deleted and recreated */
} tfjob_exit_class;

/**
 * Classify the exit code of a replica's `tensorflow` container.
 *
 * Documented mode: 1, 2, 126, 127, 128 and 139 are permanent; 130, 137, 138 and 143 retryable;
 * codes the documentation leaves undefined follow v1.9's rule. training-operator-1.9 mode:
 * retryable exactly when code >= 128. Exit code 0 is not a failure and classifies as permanent.
 * Pure and thread-safe.
 */
TFJOB_EXTERN tfjob_exit_class tfjob_exit_code_classify(int code, tfjob_compat compat);

/** "retryable" or "permanent". Static string. */
TFJOB_EXTERN const char *tfjob_exit_class_name(tfjob_exit_class cls);

TFJOB_END_DECLS

#endif
