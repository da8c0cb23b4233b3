/*
 * Reading JSON text without parsing it: skipping values, finding an object's member, checking
 * that a text is valid JSON. For the hot paths that need a few fields of a large object (a watch
 * event's type, the span of its object) and would otherwise build and free a jansson tree.
 * The texts are NUL-terminated; a value is never read past the NUL.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_PARSE_JSCAN_H
#define TFJOB_PARSE_JSCAN_H

#include <stddef.h>

/* The nesting jansson itself accepts (its JSON_PARSER_MAX_DEPTH): texts checked with this limit
 * before a parse are refused by neither. */
#define TFJOB__JSON_MAX_DEPTH 2048

/* Past JSON whitespace. */
const char *tfjob__jscan_ws(const char *p);
/* Past the JSON string starting at p (a quote); NULL when unterminated. */
const char *tfjob__jscan_string(const char *p);
/* Past the JSON value starting at p (delimited, not validated); NULL when cut short. */
const char *tfjob__jscan_value(const char *p);
/*
 * Where the value of the member `key` (quoted and as written in the text, e.g. "\"spec\"") of
 * the object starting at text starts and ends; 0 when there is none or the text is not a plain
 * object. The walk stops at the object's end, so text may go on past it.
 */
int tfjob__jscan_member(const char *text, const char *key, const char **start, const char **end);
/*
 * The same member whole: [*start, *end) covers its key, its value and the comma that parts it
 * from a neighbour, so that the text without that span is the object without the member.
 */
int tfjob__jscan_member_span(const char *text, const char *key, const char **start, const char **end);
/* The string value [v, v_end) (quotes included) as a new string (free()); NULL when it is not a
 * string, holds escapes, or memory is short. */
char *tfjob__jscan_plain_string(const char *v, const char *v_end);
/*
 * The string member `key` of the object at text (NULL: no object), copied into *out (free()):
 * 0, with *out NULL when the member is absent or not a string (as a parse finds it); 1 when it is
 * a string only a parse can read (escapes), or memory is short.
 */
int tfjob__jscan_string_member(const char *text, const char *key, char **out);
/*
 * 1 when text[0..len) is exactly one valid JSON value (RFC 8259: grammar, escapes, UTF-8
 * without surrogates or overlong forms), nested at most max_depth deep, with whitespace around
 * it allowed; 0 otherwise.
 */
int tfjob__jscan_valid(const char *text, size_t len, int max_depth);
/*
 * 1 only when text[0..len) is certainly an object jansson takes with JSON_REJECT_DUPLICATES:
 * valid, keys without escapes and distinct (at most 64 per object), no \u0000, numbers short
 * enough (18 characters, 2 exponent digits) to be neither beyond int64 nor overflowing. 0 when
 * not, or not sure: the caller then asks jansson, for its verdict and its error message.
 */
int tfjob__jscan_certain(const char *text, size_t len);

#endif
