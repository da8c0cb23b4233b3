/*
 * Growable byte buffer and Go-compatible JSON string quoting.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "util/sbuf.h"

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

void tfjob__sbuf_printf(tfjob__sbuf *b, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0) {
		b->oom = true;
		return;
	}
	if (!tfjob__sbuf_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
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

size_t tfjob__utf8_seq(const char *s, size_t n)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t len;
	unsigned min, cp;
	if (n == 0)
		return 0;
	if (u[0] >= 0xC2 && u[0] <= 0xDF)
		len = 2, min = 0x80, cp = u[0] & 0x1F;
	else if (u[0] >= 0xE0 && u[0] <= 0xEF)
		len = 3, min = 0x800, cp = u[0] & 0x0F;
	else if (u[0] >= 0xF0 && u[0] <= 0xF4)
		len = 4, min = 0x10000, cp = u[0] & 0x07;
	else
		return 0;
	if (len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((u[i] & 0xC0) != 0x80)
			return 0;
		cp = (cp << 6) | (u[i] & 0x3F);
	}
	return cp >= min && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF) ? len : 0;
}

/*
 * jansson's escaping: '"', '\\', and control characters (\b \f \n \r \t, else \\u00XX upper case).
 * check: false, appending nothing, when s is not UTF-8; unchecked (a jansson string, UTF-8
 * already) bytes above 0x7F are copied as they are.
 */
static bool add_json_string(tfjob__sbuf *b, const char *s, size_t n, bool check)
{
	static const char hex[] = "0123456789ABCDEF";
	if (n > (SIZE_MAX - 16) / 6) {
		b->oom = true;
		return true;
	}
	if (!tfjob__sbuf_reserve(b, 6 * n + 2)) /* worst case: every byte as \\u00XX */
		return true;
	char *d = b->p + b->len;
	*d++ = '"';
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x80 && check) {
			size_t k = tfjob__utf8_seq(s + i, n - i);
			if (!k) {
				b->p[b->len] = '\0';
				return false;
			}
			memcpy(d, s + i, k);
			d += k;
			i += k - 1;
			continue;
		}
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
	return true;
}

bool tfjob__sbuf_add_json_str(tfjob__sbuf *b, const char *s) { return add_json_string(b, s, strlen(s), true); }

/*
 * A real with the fewest significant digits (1 to 17) that read back as exactly the same
 * double, as Go's encoder picks them, in jansson's notation: "%g", then ".0" when it would read
 * as an integer, and no '+' or leading zeros in the exponent (1e-7, 1.5e300, 2.0, 0.1).
 */
void tfjob__sbuf_add_real(tfjob__sbuf *b, double d)
{
	char buf[48];
	int n = 0;
	for (int p = 1; p <= 17; p++) {
		n = snprintf(buf, sizeof(buf), "%.*g", p, d);
		if (p == 17 || strtod(buf, NULL) == d)
			break;
	}
	/* Few digits made "%g" pick an exponent for a number jansson writes out in full (1000.0,
	 * not 1e3): more digits of a correctly rounded value still read back the same. */
	const char *exp = strchr(buf, 'e');
	if (exp && atoi(exp + 1) >= 0 && atoi(exp + 1) < 17)
		n = snprintf(buf, sizeof(buf), "%.*g", atoi(exp + 1) + 1, d);
	if (n < 0 || (size_t)n >= sizeof(buf) - 2) {
		b->oom = true; /* cannot happen for a finite double */
		return;
	}
	char *e = strchr(buf, 'e');
	if (!e && !strchr(buf, '.')) {
		memcpy(buf + n, ".0", 3);
		n += 2;
	} else if (e) {
		char *from = e + 1, *to = e + 1;
		if (*from == '+')
			from++;
		else if (*from == '-')
			from++, to++;
		while (*from == '0' && from[1])
			from++;
		memmove(to, from, strlen(from) + 1);
		n = (int)strlen(buf);
	}
	tfjob__sbuf_add(b, buf, (size_t)n);
}

static int compare_keys(const void *a, const void *b) { return strcmp(*(const char *const *)a, *(const char *const *)b); }

static void add_newline(tfjob__sbuf *b, unsigned int indent)
{
	if (!tfjob__sbuf_reserve(b, indent + 1))
		return;
	b->p[b->len++] = '\n';
	memset(b->p + b->len, ' ', indent);
	b->len += indent;
	b->p[b->len] = '\0';
}

/* indent: spaces per level, 0 = compact; depth: the current level. */
static void add_value(tfjob__sbuf *b, const json_t *v, unsigned int indent, bool sort, unsigned int depth);

/* One member of an object, after the separator of the one before it. */
static void add_member(tfjob__sbuf *b, size_t i, const char *key, const json_t *val, unsigned int indent, bool sort,
                       unsigned int depth)
{
	if (i)
		tfjob__sbuf_addc(b, ',');
	if (indent)
		add_newline(b, indent * (depth + 1));
	add_json_string(b, key, strlen(key), false);
	if (indent)
		tfjob__sbuf_add(b, ": ", 2);
	else
		tfjob__sbuf_addc(b, ':');
	add_value(b, val, indent, sort, depth + 1);
}

/* The members of a non-empty object, in its order or sorted by key. */
static void add_members(tfjob__sbuf *b, const json_t *v, unsigned int indent, bool sort, unsigned int depth)
{
	size_t n = json_object_size(v), i = 0;
	const char *key;
	json_t *val;
	if (!sort) {
		json_object_foreach((json_t *)v, key, val) add_member(b, i++, key, val, indent, sort, depth);
		return;
	}
	const char **keys = malloc(n * sizeof(*keys));
	if (!keys) {
		b->oom = true;
		return;
	}
	json_object_foreach((json_t *)v, key, val) keys[i++] = key;
	qsort(keys, n, sizeof(*keys), compare_keys);
	for (i = 0; i < n; i++)
		add_member(b, i, keys[i], json_object_get(v, keys[i]), indent, sort, depth);
	free(keys);
}

static void add_object(tfjob__sbuf *b, const json_t *v, unsigned int indent, bool sort, unsigned int depth)
{
	if (json_object_size(v) == 0) {
		tfjob__sbuf_add(b, "{}", 2);
		return;
	}
	tfjob__sbuf_addc(b, '{');
	add_members(b, v, indent, sort, depth);
	if (indent)
		add_newline(b, indent * depth);
	tfjob__sbuf_addc(b, '}');
}

static void add_array(tfjob__sbuf *b, const json_t *v, unsigned int indent, bool sort, unsigned int depth)
{
	size_t n = json_array_size(v);
	if (n == 0) {
		tfjob__sbuf_add(b, "[]", 2);
		return;
	}
	tfjob__sbuf_addc(b, '[');
	for (size_t i = 0; i < n; i++) {
		if (i)
			tfjob__sbuf_addc(b, ',');
		if (indent)
			add_newline(b, indent * (depth + 1));
		add_value(b, json_array_get(v, i), indent, sort, depth + 1);
	}
	if (indent)
		add_newline(b, indent * depth);
	tfjob__sbuf_addc(b, ']');
}

static void add_value(tfjob__sbuf *b, const json_t *v, unsigned int indent, bool sort, unsigned int depth)
{
	switch (json_typeof(v)) {
	case JSON_OBJECT:
		add_object(b, v, indent, sort, depth);
		break;
	case JSON_ARRAY:
		add_array(b, v, indent, sort, depth);
		break;
	case JSON_STRING:
		add_json_string(b, json_string_value(v), json_string_length(v), false);
		break;
	case JSON_INTEGER:
		tfjob__sbuf_add_i64(b, (int64_t)json_integer_value(v));
		break;
	case JSON_REAL:
		tfjob__sbuf_add_real(b, json_real_value(v));
		break;
	case JSON_TRUE:
		tfjob__sbuf_add(b, "true", 4);
		break;
	case JSON_FALSE:
		tfjob__sbuf_add(b, "false", 5);
		break;
	default:
		tfjob__sbuf_add(b, "null", 4);
		break;
	}
}

void tfjob__sbuf_add_json(tfjob__sbuf *b, const json_t *v) { add_value(b, v, 0, false, 0); }

void tfjob__sbuf_add_json_ex(tfjob__sbuf *b, const json_t *v, unsigned int indent, bool sort_keys)
{
	add_value(b, v, indent, sort_keys, 0);
}

void tfjob__sbuf_add_json_at(tfjob__sbuf *b, const json_t *v, unsigned int indent, bool sort_keys, unsigned int depth)
{
	add_value(b, v, indent, sort_keys, depth);
}
