/*
 * Versioned structs (options, hooks, metrics, backend vtables): how the library reads and writes
 * a caller's struct of any version it knows without touching a byte past the caller's size.
 *
 * A public struct starts with `unsigned int version` and only ever grows at its end. Each one has a
 * tfjob__versioned descriptor (lib/util/versioned_structs.c) that records, per version, how many bytes a
 * caller built against that version's header has, and the defaults of every field. The library
 * never dereferences a caller's struct past those bytes:
 *   - tfjob_X_init(opts, v) writes exactly the bytes of version v (tfjob__versioned_init);
 *   - a function taking options copies them into a struct of the newest version, caller's bytes
 *     first, the rest defaulted (tfjob__versioned_copy), and reads only that copy;
 *   - a struct the library fills for the caller is built whole, then handed over up to the caller's
 *     size (tfjob__versioned_fill).
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_UTIL_VERSIONED_H
#define TFJOB_UTIL_VERSIONED_H

#include <stddef.h>

#include "util/common.h"

typedef struct tfjob__versioned {
	const char *name;     /* the C type, for error messages */
	unsigned int latest;  /* the header's TFJOB_X_VERSION */
	size_t size;          /* sizeof the struct at the latest version */
	size_t align;         /* _Alignof the struct */
	const size_t *sizes;  /* sizes[v - 1]: the bytes a caller of version v has */
	const void *defaults; /* the latest struct with every field at its default */
} tfjob__versioned;

/* The bytes of a struct up to and including FIELD: the size of the version that ends with it. */
#define TFJOB__SIZE_THROUGH(type, field) (offsetof(type, field) + sizeof(((type *)0)->field))

/*
 * Define descriptor VAR for TYPE, whose newest version is LATEST, with defaults INIT (an
 * initializer of the whole struct) and one TFJOB__SIZE_THROUGH per version, oldest first. The
 * static assertion fails to compile when a version was added to the header but not here.
 */
#define TFJOB__VERSIONED_DEFINE(var, type, latest_, init, ...)                                          \
	static const type var##_defaults = init;                                                      \
	static const size_t var##_sizes[] = { __VA_ARGS__ };                                         \
	_Static_assert(sizeof(var##_sizes) / sizeof(var##_sizes[0]) == (latest_),                   \
	               #type ": one size per version");                                             \
	const tfjob__versioned var = { #type, (latest_), sizeof(type), _Alignof(type), var##_sizes, \
		                       &var##_defaults }

/*
 * tfjob_X_init(): opts gets the defaults of version `version`, exactly sizes[version - 1] bytes
 * written. TFJOB_EINVAL for NULL, TFJOB_EVERSION for 0 or a version newer than the library's.
 */
int tfjob__versioned_init(const tfjob__versioned *vs, void *opts, unsigned int version);

/*
 * dst (a whole struct of the latest version) gets src's bytes for src's version and the defaults
 * for the rest; dst's version is then the latest. src NULL: all defaults. TFJOB_EVERSION (with a
 * message naming the struct) for an unknown version.
 */
int tfjob__versioned_copy(const tfjob__versioned *vs, void *dst, const void *src, tfjob_error **err);

/*
 * out, a caller's struct whose version field the caller set, gets the first bytes of full (a
 * whole latest struct the library built) up to out's version's size; out's version is kept.
 * TFJOB_EVERSION for an unknown version.
 */
int tfjob__versioned_fill(const tfjob__versioned *vs, void *out, const void *full, tfjob_error **err);

/* Every descriptor of the library, NULL-terminated (for the tests that check the size tables). */
extern const tfjob__versioned *const tfjob__versioned_all[];

#endif
