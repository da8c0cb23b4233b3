/*
 * Internal helpers shared by every source file of the library. Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_INTERNAL_COMMON_H
#define TFJOB_INTERNAL_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tfjob/tfjob.h"

#if defined(__GNUC__)
#define TFJOB_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define TFJOB_PRINTF(f, a)
#endif

#define TFJOB_ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

/* Whether snprintf's result n means the whole text fit in size bytes (no error, no cut). */
static inline bool tfjob__fits(int n, size_t size)
{
	return n >= 0 && (size_t)n < size;
}

struct tfjob_error {
	int code;
	char *message;
	char *field;
	char *file;
	int line;
	int column;
	int http_status;
	char *details_json; /* API status.details as JSON, or NULL */
	char *reason;       /* the API server's Status.reason, or NULL */
};

/* Fill *err (when err is non-NULL) and return code. The message is formatted with printf rules. */
int tfjob__fail(tfjob_error **err, int code, const char *fmt, ...) TFJOB_PRINTF(3, 4);
int tfjob__failv(tfjob_error **err, int code, const char *fmt, va_list ap) TFJOB_PRINTF(3, 0);

/* Like tfjob__fail, with a position in a file (file may be NULL; line/column 1-based, 0 = unknown). */
int tfjob__fail_at(tfjob_error **err, int code, const char *file, int line, int column,
                   const char *fmt, ...) TFJOB_PRINTF(6, 7);
/* Move an error made by tfjob__fail_at() down by `by` lines (text cut out of a larger file):
 * its line and the "file:line:" of its message. Errors without a line are left alone. */
void tfjob__error_shift_line(tfjob_error *e, int by);

/* Like tfjob__fail, about a field path. */
int tfjob__fail_field(tfjob_error **err, int code, const char *field, const char *fmt, ...) TFJOB_PRINTF(4, 5);

/* Out of memory: never allocates. */
int tfjob__oom(tfjob_error **err);

/* A new error object, or NULL when out of memory. Used by the transport layer too. */
tfjob_error *tfjob__error_new(int code, const char *message);

/* printf into a new heap string; NULL when out of memory. */
char *tfjob__strdup_printf(const char *fmt, ...) TFJOB_PRINTF(1, 2);
char *tfjob__strdup_vprintf(const char *fmt, va_list ap) TFJOB_PRINTF(1, 0);
char *tfjob__strdup(const char *s);

/*
 * Decode base64 text of len bytes into out (room for len / 4 * 3 + 3 bytes), setting *n to the
 * decoded length. ASCII white space is skipped. TFJOB__BASE64_URL also accepts the URL-safe
 * alphabet ('-', '_'). '=' padding must end the text and be at most two, unless
 * TFJOB__BASE64_ANY_PADDING: then every '=' is skipped. 0, or -1 when the text is not base64.
 */
#define TFJOB__BASE64_URL 1u
#define TFJOB__BASE64_ANY_PADDING 2u
int tfjob__base64_decode_into(unsigned char *out, size_t *n, const char *text, size_t len, unsigned int flags);

/* The monotonic clock (CLOCK_MONOTONIC), in nanoseconds and in milliseconds: the one clock of
   timeouts, backoffs, rate limits and latencies (util/time.c). Thread-safe. */
int64_t tfjob__monotonic_ns(void);
int64_t tfjob__monotonic_ms(void);

/* Check an options struct's version: NULL is fine (defaults), unknown versions are refused. */
int tfjob__check_version(tfjob_error **err, unsigned int version, unsigned int max_known, const char *what);

#endif
