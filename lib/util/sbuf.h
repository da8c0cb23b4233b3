/*
 * A growable byte buffer for building JSON text, and Go-compatible JSON string quoting.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_INTERNAL_SBUF_H
#define TFJOB_INTERNAL_SBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct tfjob__sbuf {
	char *p;    /* NUL-terminated when not oom */
	size_t len;
	size_t cap;
	bool oom;   /* sticky: set on the first failed allocation */
} tfjob__sbuf;

#define TFJOB__SBUF_INIT { NULL, 0, 0, false }

/* Make room for n more bytes (plus the NUL). false when out of memory. */
bool tfjob__sbuf_reserve(tfjob__sbuf *b, size_t n);
void tfjob__sbuf_adds(tfjob__sbuf *b, const char *s);

/* Append n bytes (hot path inline: no call when there is room). */
static inline void tfjob__sbuf_add(tfjob__sbuf *b, const char *s, size_t n)
{
	if (!b->p || n >= b->cap - b->len) {
		if (!tfjob__sbuf_reserve(b, n))
			return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static inline void tfjob__sbuf_addc(tfjob__sbuf *b, char c)
{
	if (!b->p || 1 >= b->cap - b->len) {
		if (!tfjob__sbuf_reserve(b, 1))
			return;
	}
	b->p[b->len++] = c;
	b->p[b->len] = '\0';
}
void tfjob__sbuf_add_i64(tfjob__sbuf *b, int64_t v);
/* Append text formatted with printf rules; a failure (out of memory, a bad format) sets b->oom. */
void tfjob__sbuf_printf(tfjob__sbuf *b, const char *fmt, ...)
#if defined(__GNUC__)
	__attribute__((format(printf, 2, 3)))
#endif
	;
/* s as a JSON string, quoted and escaped as Go's encoding/json does (<, >, & as \u003c ...). */
void tfjob__sbuf_add_quoted(tfjob__sbuf *b, const char *s);
/*
 * s as a JSON string, byte for byte as jansson's json_dumps() writes it (its escapes, UTF-8 as
 * it is): for request bodies written without building a tree. false, with nothing appended,
 * when s is not UTF-8 that json_string() takes (overlong forms, surrogates, past U+10FFFF);
 * running out of memory is left to b->oom.
 */
bool tfjob__sbuf_add_json_str(tfjob__sbuf *b, const char *s);
/* The length (2 to 4) of the UTF-8 sequence at s[0..n) whose lead byte is >= 0x80, as jansson
 * and RFC 3629 take it; 0 when invalid or cut short. */
size_t tfjob__utf8_seq(const char *s, size_t n);
/* Take the buffer (never NULL unless oom: "" for an empty buffer); the buffer is reset. */
char *tfjob__sbuf_take(tfjob__sbuf *b);
void tfjob__sbuf_free(tfjob__sbuf *b);

/* Append a finite real with the fewest digits that read back exactly, in jansson's notation
 * (0.1, 1e-7, 1.5e300, 2.0). */
void tfjob__sbuf_add_real(tfjob__sbuf *b, double d);

/* Append v as compact JSON, byte for byte as jansson's json_dumps(JSON_COMPACT | JSON_ENCODE_ANY)
 * writes it (document key order), but without its per-character cost, and with each real in its
 * own shortest form (jansson takes one precision for the whole dump). */
struct json_t;
void tfjob__sbuf_add_json(tfjob__sbuf *b, const struct json_t *v);
/* The same with indent spaces per level (0: compact; else as JSON_INDENT(indent)) and keys
 * sorted (as JSON_SORT_KEYS) or in document order. */
void tfjob__sbuf_add_json_ex(tfjob__sbuf *b, const struct json_t *v, unsigned int indent, bool sort_keys);
/* The same for a value nested `depth` levels deep: its inner lines are indented as they are
 * inside a whole document dumped with that indent. */
void tfjob__sbuf_add_json_at(tfjob__sbuf *b, const struct json_t *v, unsigned int indent, bool sort_keys,
                             unsigned int depth);

#endif
