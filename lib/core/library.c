/*
 * Version, compat names and memory release (process-wide initialisation: transport/global.c).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdlib.h>
#include <string.h>

#include "util/common.h"

const char *tfjob_version(void) { return TFJOB_VERSION; }

int tfjob_version_numbers(int *major, int *minor, int *patch)
{
	if (major)
		*major = TFJOB_VERSION_MAJOR;
	if (minor)
		*minor = TFJOB_VERSION_MINOR;
	if (patch)
		*patch = TFJOB_VERSION_PATCH;
	return TFJOB_VERSION_NUMBER;
}

int tfjob_compat_from_string(tfjob_compat *out, const char *name)
{
	if (!out || !name)
		return TFJOB_EINVAL;
	if (!strcmp(name, "") || !strcmp(name, "documented") || !strcmp(name, "default")) {
		*out = TFJOB_COMPAT_DOCUMENTED;
		return 0;
	}
	if (!strcmp(name, "training-operator-1.9")) {
		*out = TFJOB_COMPAT_TRAINING_OPERATOR_1_9;
		return 0;
	}
	return TFJOB_EINVAL;
}

const char *tfjob_compat_name(tfjob_compat compat)
{
	switch (compat) {
	case TFJOB_COMPAT_DOCUMENTED:
		return "documented";
	case TFJOB_COMPAT_TRAINING_OPERATOR_1_9:
		return "training-operator-1.9";
	}
	return "unknown";
}

void tfjob_free(void *ptr) { free(ptr); }
