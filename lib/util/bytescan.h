/*
 * Runs of plain bytes in JSON string contents, found 8 bytes at a time: the watch splitter and
 * the JSON scanners spend most of their time inside strings (a pod's text is mostly strings).
 * Every read stays inside [p, p + n), so the text needs no terminator and no padding.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_UTIL_BYTESCAN_H
#define TFJOB_UTIL_BYTESCAN_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define TFJOB__BYTES_ONES 0x0101010101010101ULL
#define TFJOB__BYTES_HIGHS 0x8080808080808080ULL

/* Non-zero when one of w's eight bytes is below n (n at most 0x80; exact as a yes or no). */
static inline uint64_t tfjob__bytes_below(uint64_t w, unsigned char n)
{
	return (w - TFJOB__BYTES_ONES * n) & ~w & TFJOB__BYTES_HIGHS;
}

/* Non-zero when one of w's eight bytes is b (a byte of w ^ b's is zero, that is below 1). */
static inline uint64_t tfjob__bytes_has(uint64_t w, unsigned char b) { return tfjob__bytes_below(w ^ (TFJOB__BYTES_ONES * b), 1); }

/* How many of the n bytes at p come before the first '"' or '\\' (n when neither is there). */
static inline size_t tfjob__string_run(const char *p, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		if (tfjob__bytes_has(w, '"') || tfjob__bytes_has(w, '\\'))
			break;
	}
	while (i < n && p[i] != '"' && p[i] != '\\')
		i++;
	return i;
}

/*
 * How many of the n bytes at p come before the first byte a JSON string's validation must look
 * at: '"', '\\', a control character (below 0x20) or a byte of a multi-byte UTF-8 sequence.
 */
static inline size_t tfjob__ascii_string_run(const char *p, size_t n)
{
	size_t i = 0;
	for (; i + 8 <= n; i += 8) {
		uint64_t w;
		memcpy(&w, p + i, 8);
		if ((w & TFJOB__BYTES_HIGHS) || tfjob__bytes_below(w, 0x20) || tfjob__bytes_has(w, '"') ||
		    tfjob__bytes_has(w, '\\'))
			break;
	}
	while (i < n) {
		unsigned char c = (unsigned char)p[i];
		if (c == '"' || c == '\\' || c < 0x20 || c >= 0x80)
			break;
		i++;
	}
	return i;
}

#endif
