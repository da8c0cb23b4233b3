/*
 * Reading and writing versioned structs by the caller's version (see versioned.h).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <string.h>

#include "util/versioned.h"

static unsigned int version_of(const void *s)
{
	unsigned int v;
	memcpy(&v, s, sizeof v);
	return v;
}

static void set_version(void *s, unsigned int v) { memcpy(s, &v, sizeof v); }

static int check(const tfjob__versioned *vs, unsigned int version, tfjob_error **err)
{
	return tfjob__check_version(err, version, vs->latest, vs->name);
}

int tfjob__versioned_init(const tfjob__versioned *vs, void *opts, unsigned int version)
{
	if (!opts)
		return TFJOB_EINVAL;
	if (check(vs, version, NULL))
		return TFJOB_EVERSION;
	memcpy(opts, vs->defaults, vs->sizes[version - 1]);
	set_version(opts, version);
	return 0;
}

int tfjob__versioned_copy(const tfjob__versioned *vs, void *dst, const void *src, tfjob_error **err)
{
	memcpy(dst, vs->defaults, vs->size);
	if (src) {
		unsigned int version = version_of(src);
		int rc = check(vs, version, err);
		if (rc)
			return rc;
		memcpy(dst, src, vs->sizes[version - 1]);
	}
	set_version(dst, vs->latest);
	return 0;
}

int tfjob__versioned_fill(const tfjob__versioned *vs, void *out, const void *full, tfjob_error **err)
{
	unsigned int version = version_of(out);
	int rc = check(vs, version, err);
	if (rc)
		return rc;
	memcpy(out, full, vs->sizes[version - 1]);
	set_version(out, version);
	return 0;
}
