/*
 * Growable byte buffer and Go-compatible JSON string quoting.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "internal/sbuf.h"

bool tfjob__sbuf_reserve(tfjob__sbuf *b, size_t n)
{
	if (b->oom)
		return false;
	if (n < b->cap - b->len && b->p)
		return true;
	if (n > SIZE_MAX / 2 - b->len - 1) {
		b->oom = true;
		return false;
	}
	size_t want = b->len + n + 1, cap = b->cap ? b->cap : 64;
	while (cap < want)
		cap *= 2;
	char *p = realloc(b->p, cap);
	if (!p) {
		b->oom = true;
		return false;
	}
	b->p = p;
	b->cap = cap;
	p[b->len] = '\0';
	return true;
}

void tfjob__sbuf_adds(tfjob__sbuf *b, const char *s) { tfjob__sbuf_add(b, s, strlen(s)); }

void tfjob__sbuf_add_i64(tfjob__sbuf *b, int64_t v)
{
	char tmp[24];
	int n = snprintf(tmp, sizeof(tmp), "%lld", (long long)v);
	tfjob__sbuf_add(b, tmp, (size_t)n);
}

void tfjob__sbuf_add_quoted(tfjob__sbuf *b, const char *s)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *u = (const unsigned char *)s;
	size_t n = strlen(s);
	if (!tfjob__sbuf_reserve(b, n + 2))
		return;
	tfjob__sbuf_addc(b, '"');
	size_t start = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = u[i];
		const char *esc = NULL;
		char ubuf[7];
		size_t skip = 1;
		if (c == '"')
			esc = "\\\"";
		else if (c == '\\')
			esc = "\\\\";
		else if (c == '\n')
			esc = "\\n";
		else if (c == '\r')
			esc = "\\r";
		else if (c == '\t')
			esc = "\\t";
		else if (c < 0x20 || c == '<' || c == '>' || c == '&') {
			memcpy(ubuf, "\\u00", 4);
			ubuf[4] = hex[c >> 4];
			ubuf[5] = hex[c & 15];
			ubuf[6] = '\0';
			esc = ubuf;
		} else if (c == 0xe2 && i + 2 < n && u[i + 1] == 0x80 && (u[i + 2] == 0xa8 || u[i + 2] == 0xa9)) {
			esc = u[i + 2] == 0xa8 ? "\\u2028" : "\\u2029";
			skip = 3;
		}
		if (!esc)
			continue;
		tfjob__sbuf_add(b, s + start, i - start);
		tfjob__sbuf_adds(b, esc);
		i += skip - 1;
		start = i + 1;
	}
	tfjob__sbuf_add(b, s + start, n - start);
	tfjob__sbuf_addc(b, '"');
}

char *tfjob__sbuf_take(tfjob__sbuf *b)
{
	if (b->oom) {
		tfjob__sbuf_free(b);
		return NULL;
	}
	if (!b->p) {
		if (!tfjob__sbuf_reserve(b, 0))
			return NULL;
		b->p[0] = '\0';
	}
	char *p = b->p;
	b->p = NULL;
	b->len = b->cap = 0;
	return p;
}

void tfjob__sbuf_free(tfjob__sbuf *b)
{
	free(b->p);
	b->p = NULL;
	b->len = b->cap = 0;
	b->oom = false;
}

/* jansson's escaping: '"', '\\', and control characters (\b \f \n \r \t, else \\u00XX upper case). */
static void add_json_string(tfjob__sbuf *b, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	if (n > (SIZE_MAX - 16) / 6) {
		b->oom = true;
		return;
	}
	if (!tfjob__sbuf_reserve(b, 6 * n + 2)) /* worst case: every byte as \\u00XX */
		return;
	char *d = b->p + b->len;
	*d++ = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c != '"' && c != '\\') {
			*d++ = (char)c;
			continue;
		}
		*d++ = '\\';
		switch (c) {
		case '"': *d++ = '"'; break;
		case '\\': *d++ = '\\'; break;
		case '\b': *d++ = 'b'; break;
		case '\f': *d++ = 'f'; break;
		case '\n': *d++ = 'n'; break;
		case '\r': *d++ = 'r'; break;
		case '\t': *d++ = 't'; break;
		default:
			*d++ = 'u';
			*d++ = '0';
			*d++ = '0';
			*d++ = hex[c >> 4];
			*d++ = hex[c & 15];
		}
	}
	*d++ = '"';
	*d = '\0';
	b->len = (size_t)(d - b->p);
}

void tfjob__sbuf_add_json(tfjob__sbuf *b, const json_t *v)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT: {
		tfjob__sbuf_addc(b, '{');
		const char *key;
		json_t *val;
		bool first = true;
		json_object_foreach((json_t *)v, key, val) {
			if (!first)
				tfjob__sbuf_addc(b, ',');
			first = false;
			add_json_string(b, key, strlen(key));
			tfjob__sbuf_addc(b, ':');
			tfjob__sbuf_add_json(b, val);
		}
		tfjob__sbuf_addc(b, '}');
		break;
	}
	case JSON_ARRAY: {
		tfjob__sbuf_addc(b, '[');
		size_t i;
		json_t *val;
		json_array_foreach(v, i, val) {
			if (i)
				tfjob__sbuf_addc(b, ',');
			tfjob__sbuf_add_json(b, val);
		}
		tfjob__sbuf_addc(b, ']');
		break;
	}
	case JSON_STRING:
		add_json_string(b, json_string_value(v), json_string_length(v));
		break;
	case JSON_INTEGER:
		tfjob__sbuf_add_i64(b, (int64_t)json_integer_value(v));
		break;
	case JSON_TRUE:
		tfjob__sbuf_add(b, "true", 4);
		break;
	case JSON_FALSE:
		tfjob__sbuf_add(b, "false", 5);
		break;
	case JSON_NULL:
		tfjob__sbuf_add(b, "null", 4);
		break;
	default: { /* reals: jansson's own formatting */
		char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(17));
		if (!text) {
			b->oom = true;
			return;
		}
		tfjob__sbuf_adds(b, text);
		free(text);
	}
	}
}
