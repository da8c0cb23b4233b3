/*
 * libtfjob - common definitions shared by every public header.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_COMMON_H
#define TFJOB_COMMON_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
#define TFJOB_BEGIN_DECLS extern "C" {
#define TFJOB_END_DECLS }
#else
#define TFJOB_BEGIN_DECLS
#define TFJOB_END_DECLS
#endif

/* TFJOB_EXTERN marks every exported symbol; everything else is hidden. */
#if defined(TFJOB_BUILDING_LIBRARY) && defined(__GNUC__)
#define TFJOB_EXTERN __attribute__((visibility("default")))
#else
#define TFJOB_EXTERN
#endif

/* TFJOB_DEPRECATED(msg) marks a function kept for the ABI under an old name: compilers warn at
 * each call and the message names the replacement. The symbol stays exported. */
#if defined(__GNUC__) && !defined(TFJOB_BUILDING_LIBRARY)
#define TFJOB_DEPRECATED(msg) __attribute__((deprecated(msg)))
#else
#define TFJOB_DEPRECATED(msg)
#endif

TFJOB_BEGIN_DECLS

/**
 * Behaviour selector carried by every options struct.
 *
 * TFJOB_COMPAT_DOCUMENTED (the default, value 0): the documented Kubeflow TFJob semantics with
 * training-operator v1.9's defects fixed. TFJOB_COMPAT_TRAINING_OPERATOR_1_9: reproduces
 * training-operator v1.9 exactly, defects included.
 */
typedef enum tfjob_compat {
	TFJOB_COMPAT_DOCUMENTED = 0,
	TFJOB_COMPAT_TRAINING_OPERATOR_1_9 = 1
} tfjob_compat;

/**
 * Parse a compat name: "documented" (or "" / "default") and "training-operator-1.9".
 * Returns 0, or TFJOB_EINVAL for any other string (and for NULL arguments).
 * Thread-safe.
 */
TFJOB_EXTERN int tfjob_compat_from_string(tfjob_compat *out, const char *name);

/** The canonical name of a compat mode; "unknown" for values outside the enum. Static string. */
TFJOB_EXTERN const char *tfjob_compat_name(tfjob_compat compat);

/**
 * Release memory that the library returned as an owned `char *` (JSON text, messages).
 * Accepts NULL. Thread-safe.
 */
TFJOB_EXTERN void tfjob_free(void *ptr);

/**
 * Process-wide initialisation. Call once before any other function when the process uses the
 * transport layer (it initialises libcurl); the pure core works without it. Calls nest: each
 * tfjob_global_init() needs a matching tfjob_global_cleanup(). Not thread-safe with respect to
 * itself and tfjob_global_cleanup(); returns 0 or a negative TFJOB_E* code.
 */
TFJOB_EXTERN int tfjob_global_init(void);

/** Undo one tfjob_global_init(). Not thread-safe with respect to tfjob_global_init(). */
TFJOB_EXTERN void tfjob_global_cleanup(void);

TFJOB_END_DECLS

#endif
