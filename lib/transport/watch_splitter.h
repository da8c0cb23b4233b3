/*
 * An incremental splitter of a stream of concatenated JSON values (a watch response body):
 * bytes go in in arbitrary chunks, each complete top-level object or array comes out once.
 * Tracks strings, escapes and nesting; whitespace between values is skipped. Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_TRANSPORT_WATCH_SPLITTER_H
#define TFJOB_TRANSPORT_WATCH_SPLITTER_H

#include <stddef.h>

typedef struct tfjob__splitter {
	char *buf;        /* bytes of the value being collected */
	size_t len, cap;
	size_t max;       /* largest value accepted */
	int depth;
	int in_string;
	int escape;
	int failed;
	int too_large;    /* failed because a value exceeded max */
} tfjob__splitter;

/* Called with each complete value (NUL-terminated, borrowed); non-zero stops feeding. */
typedef int (*tfjob__splitter_cb)(const char *value, size_t len, void *payload);

void tfjob__splitter_init(tfjob__splitter *s, size_t max_value);
/*
 * Feed bytes. Returns 0; a callback's non-zero value (feeding stops there); or -1 when the
 * stream is not a sequence of objects/arrays or a value exceeds the maximum (too_large set; the
 * splitter is then failed until reset). A value of exactly max bytes is accepted.
 */
int tfjob__splitter_feed(tfjob__splitter *s, const char *data, size_t len, tfjob__splitter_cb cb, void *payload);
/* 1 when bytes of an incomplete value are buffered. */
int tfjob__splitter_pending(const tfjob__splitter *s);
/* Forget everything buffered (after a reconnect). */
void tfjob__splitter_reset(tfjob__splitter *s);
void tfjob__splitter_free(tfjob__splitter *s);

#endif
