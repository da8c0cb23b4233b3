/*
 * Exit-code classification for restartPolicy ExitCode.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "util/common.h"

tfjob_exit_class tfjob_exit_code_classify(int code, tfjob_compat compat)
{
	if (compat == TFJOB_COMPAT_TRAINING_OPERATOR_1_9)
		return code >= 128 ? TFJOB_EXIT_RETRYABLE : TFJOB_EXIT_PERMANENT;
	switch (code) {
	case 1:   /* general error */
	case 2:   /* misuse of shell builtins */
	case 126: /* command cannot execute */
	case 127: /* command not found */
	case 128: /* invalid argument to exit */
	case 139: /* SIGSEGV */
		return TFJOB_EXIT_PERMANENT;
	case 130: /* SIGINT */
	case 137: /* SIGKILL */
	case 138: /* SIGUSR1: reserved for user-defined retryable errors */
	case 143: /* SIGTERM */
		return TFJOB_EXIT_RETRYABLE;
	default:
		/* Codes the documentation leaves undefined follow v1.9's rule. */
		return code >= 128 ? TFJOB_EXIT_RETRYABLE : TFJOB_EXIT_PERMANENT;
	}
}

const char *tfjob_exit_class_name(tfjob_exit_class cls)
{
	return cls == TFJOB_EXIT_RETRYABLE ? "retryable" : "permanent";
}
