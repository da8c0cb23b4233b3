/*
 * C glue shared by the package's cgo preambles: the clock callback (backends.go exports
 * goClock) and the setters that store a callback and its cgo.Handle in an options struct.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_GO_CGO_GLUE_H
#define TFJOB_GO_CGO_GLUE_H

#include <stdint.h>
#include <stdlib.h>
#include <tfjob/tfjob.h>

extern int64_t goClock(uintptr_t handle);

/* A clock callback: goClock through the cgo.Handle in payload. */
static inline int64_t go_clock_cb(void *payload)
{
	return goClock((uintptr_t)payload);
}

/* Defines static void NAME(TYPE *o, uintptr_t handle): o->CB_FIELD = CB, o->PAYLOAD_FIELD = handle. */
#define TFJOB_GO_SETTER(name, type, cb_field, cb, payload_field) \
	static void name(type *o, uintptr_t handle) \
	{ \
		o->cb_field = cb; \
		o->payload_field = (void *)handle; \
	}

#endif
