/*
 * A byte sink for output too large to hold: text is built in a small buffer and handed to a
 * write callback whenever the buffer fills (or kept whole when there is no callback), so a
 * writer of gigabytes needs memory for one piece, not for all of it.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_INTERNAL_SINK_H
#define TFJOB_INTERNAL_SINK_H

#include "util/common.h"
#include "util/sbuf.h"

/* The buffer is handed on once it holds this many bytes. */
#define TFJOB__SINK_CHUNK ((size_t)64 * 1024)

typedef struct tfjob__sink {
	tfjob__sbuf buf;
	tfjob_write_cb write; /* NULL: keep everything in buf (tfjob__sink_take) */
	void *payload;
	int failed;           /* 0, TFJOB_EIO (the callback refused) or TFJOB_ENOMEM; sticky */
} tfjob__sink;

/* A sink handing its bytes to write (NULL: collecting them into one string). */
void tfjob__sink_init(tfjob__sink *s, tfjob_write_cb write, void *payload);

/* Hand the buffer on when it holds a chunk (no-op for a collecting sink). */
void tfjob__sink_maybe_flush(tfjob__sink *s);

/* Write s as is / v as JSON at nesting depth `depth` (flags: TFJOB_JSON_*); then maybe flush. */
void tfjob__sink_adds(tfjob__sink *s, const char *text);
void tfjob__sink_add_json(tfjob__sink *s, const struct json_t *v, unsigned int flags, unsigned int depth);
/* A line break and the indentation of `depth` levels when flags ask for pretty output. */
void tfjob__sink_newline(tfjob__sink *s, unsigned int flags, unsigned int depth);
/* ",", "\"key\":" or "\"key\": " as flags ask, at `depth` (the object's members' level). */
void tfjob__sink_key(tfjob__sink *s, const char *key, bool first, unsigned int flags, unsigned int depth);

/*
 * Hand on what is left and release the buffer. 0, or the sticky failure (with a message in
 * *err). For a collecting sink *out receives the whole text (owned by the caller).
 */
int tfjob__sink_finish(tfjob__sink *s, char **out, tfjob_error **err);

/* The end of a writer that returned rc: tfjob__sink_finish() when rc is 0, else the buffer is
 * released and rc returned. */
int tfjob__sink_end(tfjob__sink *s, int rc, char **out, tfjob_error **err);

#endif
