/*
 * Reading JSON text without parsing it (jscan.h).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdlib.h>
#include <string.h>

#include "parse/jscan.h"
#include "util/bytescan.h"
#include "util/sbuf.h"

const char *tfjob__jscan_ws(const char *p)
{
	while (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t')
		p++;
	return p;
}

const char *tfjob__jscan_string(const char *p)
{
	for (p++; *p; p++) {
		if (*p == '\\') {
			if (!*++p)
				return NULL;
		} else if (*p == '"') {
			return p + 1;
		}
	}
	return NULL;
}

const char *tfjob__jscan_value(const char *p)
{
	if (*p == '"')
		return tfjob__jscan_string(p);
	if (*p != '{' && *p != '[') {
		while (*p && *p != ',' && *p != '}' && *p != ']' && *p != ' ' && *p != '\n' && *p != '\r' && *p != '\t')
			p++;
		return p;
	}
	int depth = 0;
	while (*p) {
		if (*p == '"') {
			if (!(p = tfjob__jscan_string(p)))
				return NULL;
			continue;
		}
		if (*p == '{' || *p == '[')
			depth++;
		else if ((*p == '}' || *p == ']') && --depth == 0)
			return p + 1;
		p++;
	}
	return NULL;
}

/* The member `key` of the object at text: where its key starts (*k), its value starts and ends
   (*v, *v_end), and where the previous member's value ended (*prev_end, NULL for the first). */
static int find(const char *text, const char *key, const char **k, const char **v, const char **v_end,
                const char **prev_end)
{
	size_t klen = strlen(key);
	const char *p = tfjob__jscan_ws(text);
	if (*p++ != '{')
		return 0;
	*prev_end = NULL;
	for (;;) {
		p = tfjob__jscan_ws(p);
		if (*p != '"')
			return 0;
		*k = p;
		if (!(p = tfjob__jscan_string(p)))
			return 0;
		int found = (size_t)(p - *k) == klen && !memcmp(*k, key, klen);
		p = tfjob__jscan_ws(p);
		if (*p++ != ':')
			return 0;
		*v = tfjob__jscan_ws(p);
		if (!(p = tfjob__jscan_value(*v)))
			return 0;
		*v_end = p;
		if (found)
			return 1;
		*prev_end = p;
		p = tfjob__jscan_ws(p);
		if (*p++ != ',')
			return 0;
	}
}

int tfjob__jscan_member(const char *text, const char *key, const char **start, const char **end)
{
	const char *k, *prev;
	return find(text, key, &k, start, end, &prev);
}

int tfjob__jscan_member_span(const char *text, const char *key, const char **start, const char **end)
{
	const char *k, *v, *v_end, *prev;
	if (!find(text, key, &k, &v, &v_end, &prev))
		return 0;
	const char *after = tfjob__jscan_ws(v_end);
	if (*after == ',') { /* "key":value, -> up to the next member */
		*start = k;
		*end = tfjob__jscan_ws(after + 1);
	} else { /* the last member: from the end of the previous value, its comma included */
		*start = prev ? prev : k;
		*end = v_end;
	}
	return 1;
}

char *tfjob__jscan_plain_string(const char *v, const char *v_end)
{
	if (v_end - v < 2 || *v != '"' || v_end[-1] != '"' || memchr(v, '\\', (size_t)(v_end - v)))
		return NULL;
	size_t n = (size_t)(v_end - v) - 2;
	char *out = malloc(n + 1);
	if (out) {
		memcpy(out, v + 1, n);
		out[n] = '\0';
	}
	return out;
}

int tfjob__jscan_string_member(const char *text, const char *key, char **out)
{
	const char *v, *v_end;
	*out = NULL;
	if (!text || !tfjob__jscan_member(text, key, &v, &v_end) || *v != '"')
		return 0;
	*out = tfjob__jscan_plain_string(v, v_end);
	return *out == NULL;
}

/* ---- validation ---- */

struct reader {
	const unsigned char *p, *end;
	int depth, max_depth;
	int certain; /* tfjob__jscan_certain: only what jansson surely takes, else not valid */
	/* certain: the keys of the objects being read, innermost last (each object's compared) */
	struct key {
		const unsigned char *text;
		size_t len;
	} keys[256];
	int nkeys;
};

/* Keys one object may have for tfjob__jscan_certain to compare them all (pairwise). */
#define CERTAIN_MAX_KEYS 64

static void skip_blank(struct reader *r)
{
	while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t'))
		r->p++;
}

static int is_digit(const struct reader *r)
{
	return r->p < r->end && *r->p >= '0' && *r->p <= '9';
}

static int literal(struct reader *r, const char *word)
{
	size_t n = strlen(word);
	if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n))
		return 0;
	r->p += n;
	return 1;
}

/* Digits; how many in *count. */
static int digits(struct reader *r, int *count)
{
	const unsigned char *start = r->p;
	while (is_digit(r))
		r->p++;
	*count = (int)(r->p - start);
	return *count > 0;
}

/*
 * -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?. When certain: at most 18 characters
 * and an exponent of at most two digits, so that jansson can neither find an integer beyond
 * int64 nor a real that overflows.
 */
static int number(struct reader *r)
{
	const unsigned char *start = r->p;
	int n, exp_digits = 0;
	if (r->p < r->end && *r->p == '-')
		r->p++;
	if (r->p < r->end && *r->p == '0')
		r->p++;
	else if (!digits(r, &n))
		return 0;
	if (r->p < r->end && *r->p == '.') {
		r->p++;
		if (!digits(r, &n))
			return 0;
	}
	if (r->p < r->end && (*r->p == 'e' || *r->p == 'E')) {
		r->p++;
		if (r->p < r->end && (*r->p == '+' || *r->p == '-'))
			r->p++;
		if (!digits(r, &exp_digits))
			return 0;
	}
	return !r->certain || (r->p - start <= 18 && exp_digits <= 2);
}

static int hex4(struct reader *r, unsigned *out)
{
	unsigned v = 0;
	for (int i = 0; i < 4; i++, r->p++) {
		if (r->p >= r->end)
			return 0;
		unsigned c = *r->p;
		unsigned d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
		             : c >= 'A' && c <= 'F' ? c - 'A' + 10 : 16;
		if (d == 16)
			return 0;
		v = v * 16 + d;
	}
	*out = v;
	return 1;
}

/* After the backslash: one escape; a \u high surrogate must be followed by a \u low one. */
static int escape(struct reader *r)
{
	if (r->p >= r->end)
		return 0;
	unsigned char c = *r->p++;
	if (c != 'u')
		return strchr("\"\\/bfnrt", c) != NULL && c != '\0';
	unsigned u, low;
	if (!hex4(r, &u) || (u == 0 && r->certain)) /* jansson refuses \u0000 unless asked */
		return 0;
	if (u >= 0xDC00 && u <= 0xDFFF)
		return 0;
	if (u < 0xD800 || u > 0xDBFF)
		return 1;
	return literal(r, "\\u") && hex4(r, &low) && low >= 0xDC00 && low <= 0xDFFF;
}

/* One UTF-8 sequence of 2 to 4 bytes starting at a lead byte >= 0x80. */
static int utf8(struct reader *r)
{
	size_t len = tfjob__utf8_seq((const char *)r->p, (size_t)(r->end - r->p));
	r->p += len;
	return len != 0;
}

static int string(struct reader *r)
{
	r->p++; /* the opening quote */
	while (r->p < r->end) {
		r->p += tfjob__ascii_string_run((const char *)r->p, (size_t)(r->end - r->p));
		if (r->p == r->end)
			break;
		unsigned char c = *r->p;
		if (c == '"') {
			r->p++;
			return 1;
		}
		if (c < 0x20)
			return 0;
		if (c == '\\') {
			r->p++;
			if (!escape(r))
				return 0;
		} else if (c >= 0x80) {
			if (!utf8(r))
				return 0;
		} else {
			r->p++;
		}
	}
	return 0;
}

static int value(struct reader *r);

/* For tfjob__jscan_certain: a key written without escapes, unlike the earlier keys of its object
   (those from base on; jansson is asked to refuse duplicates), within the limits. */
static int new_key(struct reader *r, int base, const unsigned char *k, size_t len)
{
	int max = (int)(sizeof(r->keys) / sizeof(r->keys[0]));
	if (r->nkeys == max || r->nkeys - base == CERTAIN_MAX_KEYS || memchr(k, '\\', len))
		return 0;
	for (int i = base; i < r->nkeys; i++)
		if (r->keys[i].len == len && !memcmp(r->keys[i].text, k, len))
			return 0;
	r->keys[r->nkeys++] = (struct key){ k, len };
	return 1;
}

/* The members or elements of an object or array, after its opening bracket. */
static int container(struct reader *r, unsigned char close)
{
	if (++r->depth > r->max_depth)
		return 0;
	r->p++;
	skip_blank(r);
	if (r->p < r->end && *r->p == close) {
		r->p++;
		r->depth--;
		return 1;
	}
	int base = r->nkeys;
	for (;;) {
		if (close == '}') {
			const unsigned char *k = r->p;
			if (r->p >= r->end || *r->p != '"' || !string(r))
				return 0;
			if (r->certain && !new_key(r, base, k + 1, (size_t)(r->p - k) - 2))
				return 0;
			skip_blank(r);
			if (r->p >= r->end || *r->p++ != ':')
				return 0;
			skip_blank(r);
		}
		if (!value(r))
			return 0;
		skip_blank(r);
		if (r->p >= r->end)
			return 0;
		unsigned char c = *r->p++;
		if (c == close) {
			r->depth--;
			r->nkeys = base;
			return 1;
		}
		if (c != ',')
			return 0;
		skip_blank(r);
	}
}

static int value(struct reader *r)
{
	if (r->p >= r->end)
		return 0;
	switch (*r->p) {
	case '{':
		return container(r, '}');
	case '[':
		return container(r, ']');
	case '"':
		return string(r);
	case 't':
		return literal(r, "true");
	case 'f':
		return literal(r, "false");
	case 'n':
		return literal(r, "null");
	default:
		return number(r);
	}
}

static int check(const char *text, size_t len, int max_depth, int certain)
{
	struct reader r = { .p = (const unsigned char *)text, .end = (const unsigned char *)text + len,
	                    .max_depth = max_depth, .certain = certain };
	skip_blank(&r);
	if (certain && (r.p >= r.end || *r.p != '{'))
		return 0;
	if (!value(&r))
		return 0;
	skip_blank(&r);
	return r.p == r.end;
}

int tfjob__jscan_valid(const char *text, size_t len, int max_depth)
{
	return check(text, len, max_depth, 0);
}

int tfjob__jscan_certain(const char *text, size_t len)
{
	return check(text, len, TFJOB__JSON_MAX_DEPTH, 1);
}
