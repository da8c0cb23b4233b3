/*
 * Incremental JSON value splitter for watch streams.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdlib.h>
#include <string.h>

#include "transport/watch_splitter.h"
#include "util/bytescan.h"

void tfjob__splitter_init(tfjob__splitter *s, size_t max_value)
{
	memset(s, 0, sizeof(*s));
	s->max = max_value ? max_value : (size_t)64 * 1024 * 1024;
}

void tfjob__splitter_reset(tfjob__splitter *s)
{
	s->len = 0;
	s->depth = 0;
	s->in_string = 0;
	s->escape = 0;
	s->failed = 0;
	s->too_large = 0;
}

void tfjob__splitter_free(tfjob__splitter *s)
{
	free(s->buf);
	memset(s, 0, sizeof(*s));
}

int tfjob__splitter_pending(const tfjob__splitter *s) { return s->len > 0; }

static int append(tfjob__splitter *s, const char *data, size_t n)
{
	if (s->len + n + 1 > s->max + 1) {
		s->too_large = 1;
		return -1;
	}
	if (s->len + n + 1 > s->cap) {
		size_t cap = s->cap ? s->cap : 4096;
		while (cap < s->len + n + 1)
			cap *= 2;
		char *grown = realloc(s->buf, cap);
		if (!grown)
			return -1;
		s->buf = grown;
		s->cap = cap;
	}
	memcpy(s->buf + s->len, data, n);
	s->len += n;
	return 0;
}

/* Scan one byte of a value; returns 1 when it completes the value. */
static int scan(tfjob__splitter *s, char c)
{
	if (s->in_string) {
		if (s->escape)
			s->escape = 0;
		else if (c == '\\')
			s->escape = 1;
		else if (c == '"')
			s->in_string = 0;
		return 0;
	}
	switch (c) {
	case '"':
		s->in_string = 1;
		return 0;
	case '{':
	case '[':
		s->depth++;
		return 0;
	case '}':
	case ']':
		return --s->depth == 0;
	default:
		return 0;
	}
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

int tfjob__splitter_feed(tfjob__splitter *s, const char *data, size_t len, tfjob__splitter_cb cb, void *payload)
{
	if (s->failed)
		return -1;
	size_t i = 0;
	while (i < len) {
		if (s->len == 0) {
			/* Between values: skip white space; a value must start with '{' or '['. */
			while (i < len && is_space(data[i]))
				i++;
			if (i == len)
				break;
			if (data[i] != '{' && data[i] != '[') {
				s->failed = 1;
				return -1;
			}
		}
		size_t start = i;
		int complete = 0;
		for (; i < len && !complete; i++) {
			if (s->in_string && !s->escape && (i += tfjob__string_run(data + i, len - i)) == len)
				break; /* the string goes on in the next piece */
			complete = scan(s, data[i]);
		}
		if (append(s, data + start, i - start)) {
			s->failed = 1;
			return -1;
		}
		if (complete) {
			s->buf[s->len] = '\0';
			size_t n = s->len;
			s->len = 0;
			int rc = cb(s->buf, n, payload);
			if (rc)
				return rc;
		}
	}
	return 0;
}
