/*
 * Internal declarations shared by the files of lib/transport/. Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_TRANSPORT_INTERNAL_H
#define TFJOB_TRANSPORT_INTERNAL_H

#include <jansson.h>

#include "util/common.h"
#include "tfjob/sys/transport.h"

struct tfjob_transport {
	tfjob_transport_backend be;
};

/* Fill *err (when non-NULL) with an API error; returns code. */
int tfjob__api_fail(tfjob_error **err, int code, int http_status, const char *details_json,
                    const char *fmt, ...) TFJOB_PRINTF(5, 6);

/*
 * A backend whose watch sleeps in a wait of its own (not polling tfjob_watch_sink_stopped()) names
 * how to wake it: tfjob_watch_stop() calls wake(arg) once it has set the stop, under a lock that
 * this call takes too, so after tfjob__watch_sink_set_wake(sink, NULL, NULL) returns no wake-up
 * is running or will run (arg may be freed then).
 */
void tfjob__watch_sink_set_wake(tfjob_watch_sink *sink, void (*wake)(void *arg), void *arg);

/* Sleep ms milliseconds (less when interrupted by a signal is fine). */
void tfjob__sleep_ms(int64_t ms);

/* The URL path of a resource collection: /api/v1/namespaces/NS/pods or /apis/G/V/... */
char *tfjob__resource_path(const tfjob_resource *res, const char *ns, const char *name, const char *sub);

/* "pods" -> "Pod" style kind for a built-in plural; NULL when unknown. */
const char *tfjob__resource_kind(const tfjob_resource *res);

/* Label selectors (selector.c). */
typedef struct tfjob__selector tfjob__selector;
int tfjob__selector_parse(tfjob__selector **out, const char *text, tfjob_error **err);
int tfjob__selector_matches(const tfjob__selector *sel, const json_t *labels);
void tfjob__selector_free(tfjob__selector *sel);

/* Field selectors on metadata.name / metadata.namespace (selector.c). */
int tfjob__field_selector_parse(tfjob__selector **out, const char *text, tfjob_error **err);
int tfjob__field_selector_matches(const tfjob__selector *sel, const json_t *object);

/* JSON merge patch (RFC 7386): returns a new value (patch applied to a copy of target). */
json_t *tfjob__merge_patch(const json_t *target, const json_t *patch);

/* Parse object JSON text that must be an object. New reference in *out. */
int tfjob__parse_object(json_t **out, const char *text, const char *what, tfjob_error **err);
/*
 * metadata.name and metadata.namespace of an object given as JSON text (each NULL when absent or
 * not a string; either pointer may be NULL), copied; the same verdict and errors as
 * tfjob__parse_object(). Read by scanning when the text is certainly one jansson takes (every
 * request body the library writes), else parsed.
 */
int tfjob__object_meta(const char *text, const char *what, char **name, char **ns, tfjob_error **err);
/* Dump to a malloc'ed compact string; TFJOB_ENOMEM. */
int tfjob__tr_dump(char **out, const json_t *value, tfjob_error **err);

#endif
