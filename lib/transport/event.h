/*
 * The Event of tfjob_transport_create_event(), written as JSON text in one pass: one definition
 * of its shape, shared with the controller's recorder, which knows the involved object's fields
 * and so neither writes nor parses JSON text of it. Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_TRANSPORT_EVENT_H
#define TFJOB_TRANSPORT_EVENT_H

#include <stdint.h>

#include "tfjob/transport.h"

/* The object an Event is about: strings borrowed, NULL when absent (then not written). */
typedef struct tfjob__involved {
	const char *kind, *api_version, *name, *ns, *uid, *rv;
} tfjob__involved;

/*
 * The Event's compact JSON text (free()), byte for byte as json_dumps(JSON_COMPACT) wrote the
 * tree it was once built as: named NAME.UNIQUE (16 hex digits), first and last seen at now_s,
 * in namespace ns; inv->name is required; type, reason and message are written as given (NULL
 * message: ""), component NULL: the operator's name. NULL when a string is not UTF-8 or memory
 * is short.
 */
char *tfjob__event_text(const char *ns, const tfjob__involved *inv, const char *type, const char *reason,
                        const char *message, const char *component, int64_t now_s, uint64_t unique);

/*
 * The UNIQUE of the next Event's name: now_ns (the wall clock's nanoseconds since the epoch, as
 * client-go's recorder names Events: the API server then lists them in the order they were made),
 * or the last value handed out plus 1 when now_ns is not above it (a clock that stood still or
 * stepped back), so that the names of one process sort in creation order and never repeat.
 * Thread-safe (one atomic value per process).
 */
uint64_t tfjob__event_unique(uint64_t now_ns);

/*
 * tfjob_transport_create_event() with the involved object given by its fields: the same checks,
 * Event, backend call and errors, without JSON text of the object to parse.
 */
int tfjob__transport_create_event_of(char **out, tfjob_transport *t, const char *ns, const tfjob__involved *inv,
                                     const char *type, const char *reason, const char *message,
                                     const char *source_component, tfjob_error **err);

#endif
