/*
 * libtfjob - library version.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_VERSION_H
#define TFJOB_VERSION_H

#include "common.h"

#define TFJOB_VERSION_MAJOR 0
#define TFJOB_VERSION_MINOR 1
#define TFJOB_VERSION_PATCH 0
#define TFJOB_VERSION "0.1.0"
/** One number for comparisons: 0xMMmmpp. */
#define TFJOB_VERSION_NUMBER ((TFJOB_VERSION_MAJOR << 16) | (TFJOB_VERSION_MINOR << 8) | TFJOB_VERSION_PATCH)

TFJOB_BEGIN_DECLS

/** The version of the library actually loaded, as "MAJOR.MINOR.PATCH". Static string; thread-safe. */
TFJOB_EXTERN const char *tfjob_version(void);

/**
 * The version numbers of the library actually loaded. Any out pointer may be NULL.
 * Returns the TFJOB_VERSION_NUMBER of the loaded library. Thread-safe.
 */
TFJOB_EXTERN int tfjob_version_numbers(int *major, int *minor, int *patch);

TFJOB_END_DECLS

#endif
