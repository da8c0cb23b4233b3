/*
 * JSON text (one or several concatenated values) to jansson values, with a nesting limit
 * checked before jansson sees the text.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "parse/doc.h"

static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static bool is_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
	       c == '+' || c == '.';
}

static void position_of(const char *data, size_t offset, int *line, int *col)
{
	int l = 1, c = 1;
	size_t start = 0;
	if (offset >= 3 && (unsigned char)data[0] == 0xEF && (unsigned char)data[1] == 0xBB && (unsigned char)data[2] == 0xBF)
		start = 3; /* a byte order mark takes no column */
	for (size_t i = start; i < offset; i++) {
		if (data[i] == '\n') {
			l++;
			c = 1;
		} else if (((unsigned char)data[i] & 0xC0) != 0x80) {
			c++;
		}
	}
	*line = l;
	*col = c;
}

/*
 * Just past the string whose opening quote is at data[open]: its closing quote is the first '"'
 * after an even run of backslashes. len when the string is unterminated (jansson reports it).
 */
static size_t string_end(const char *data, size_t len, size_t open)
{
	size_t start = open + 1, i = start;
	for (;;) {
		const char *q = memchr(data + i, '"', len - i);
		if (!q)
			return len;
		size_t at = (size_t)(q - data), k = at;
		while (k > start && data[k - 1] == '\\')
			k--;
		i = at + 1;
		if ((at - k) % 2 == 0)
			return i;
	}
}

/*
 * Bytes the pre-check stops at: outside strings '"' '{' '[' '}' ']' ',' ':' and the bytes of a
 * number that make it a real ('.', 'e', 'E'); inside strings only '"' (string_end skips them).
 */
enum { C_PLAIN = 0, C_QUOTE, C_OPEN, C_CLOSE, C_SEPARATOR, C_REAL, C_EXPONENT };
static const unsigned char byte_class[256] = {
	['"'] = C_QUOTE,     ['{'] = C_OPEN,      ['['] = C_OPEN, ['}'] = C_CLOSE,    [']'] = C_CLOSE,
	[','] = C_SEPARATOR, [':'] = C_SEPARATOR, ['.'] = C_REAL, ['e'] = C_EXPONENT, ['E'] = C_EXPONENT,
};

/* What the pre-check carries from byte to byte. */
struct scan {
	unsigned int depth;
	unsigned long values;   /* values of the current top-level document */
	size_t too_many_at;     /* where the values first passed max_nodes (SIZE_MAX: never) */
	bool reals;             /* a number with a fraction or an exponent was seen */
};

/* An opening '{' or '[' at i: one level deeper. True when the container is not empty (a value). */
static bool scan_open(struct scan *sc, const char *data, size_t len, size_t i)
{
	if (sc->depth++ == 0)
		sc->values = 1; /* a new document */
	size_t j = i + 1;
	while (j < len && is_blank(data[j]))
		j++;
	return j < len && data[j] != '}' && data[j] != ']';
}

/*
 * One pass over the text before jansson sees it, without recursion:
 *  - nesting deeper than max_depth is an error (so jansson never recurses that far);
 *  - a document of more than max_nodes values is an error. Values are counted as the YAML reader
 *    counts them: strings (keys included), numbers, literals, objects, arrays; in valid JSON that
 *    is, per top-level value, 1 + the commas + the colons + the non-empty objects and arrays, so
 *    only those bytes and the strings (skipped whole) need a look. A nesting error anywhere in
 *    the text is reported before a count error;
 *  - *reals tells whether any number may be a real (integer fields then need normalising).
 * A table of the few bytes that matter lets the loop skip everything else quickly.
 */
static int check_text(const char *data, size_t len, const tfjob__limits *limits, bool *reals, tfjob_error **err)
{
	const unsigned char *u = (const unsigned char *)data;
	struct scan sc = { .too_many_at = SIZE_MAX };
	for (size_t i = 0;; i++) {
		while (i < len && byte_class[u[i]] == C_PLAIN)
			i++;
		if (i >= len)
			break;
		bool counts = false;
		switch (byte_class[u[i]]) {
		case C_QUOTE:
			i = string_end(data, len, i) - 1; /* on the closing quote (the loop steps past it) */
			continue;
		case C_OPEN:
			if (sc.depth + 1 > limits->max_depth) {
				int line, col;
				position_of(data, i, &line, &col);
				return tfjob__fail_at(err, TFJOB_ELIMIT, limits->filename, line, col, "nesting deeper than %u levels",
				                      limits->max_depth);
			}
			counts = scan_open(&sc, data, len, i);
			break;
		case C_CLOSE:
			if (sc.depth > 0)
				sc.depth--;
			break;
		case C_SEPARATOR:
			counts = sc.depth > 0;
			break;
		case C_REAL:
			sc.reals = true;
			break;
		default: /* C_EXPONENT: only after a digit (not the e of true or false) */
			if (i > 0 && u[i - 1] >= '0' && u[i - 1] <= '9')
				sc.reals = true;
			break;
		}
		if (counts && ++sc.values > limits->max_nodes && sc.too_many_at == SIZE_MAX)
			sc.too_many_at = i;
	}
	*reals = sc.reals;
	if (sc.too_many_at == SIZE_MAX)
		return 0;
	int line, col;
	position_of(data, sc.too_many_at, &line, &col);
	return tfjob__fail_at(err, TFJOB_ELIMIT, limits->filename, line, col, "document has more than %u values",
	                      limits->max_nodes);
}

/*
 * Integer literals beyond int64. Kubernetes' JSON reader (sigs.k8s.io/json) falls back to a
 * float64 for them, and go-yaml (so this library's YAML reader) does the same; jansson refuses
 * them. When jansson does, the text is copied once with ".0" after every such literal, which
 * makes each a real, and parsed again; `inserted` keeps where, to report positions in the
 * original text.
 */
struct widened {
	char *text;
	size_t len;
	size_t *inserted; /* original offsets (token ends) after which ".0" was added, ascending */
	size_t count;
};

static void widened_free(struct widened *w)
{
	free(w->text);
	free(w->inserted);
}

/* digits (n bytes, no sign) as an integer beyond int64 (a '-' before them allows one more)? */
static bool beyond_int64(const char *digits, size_t n, bool negative)
{
	static const char max[] = "9223372036854775807", min[] = "9223372036854775808";
	const char *limit = negative ? min : max;
	if (n != sizeof(max) - 1)
		return n > sizeof(max) - 1;
	return memcmp(digits, limit, n) > 0;
}

/* Offset in the widened text -> offset in the original text. */
static size_t original_offset(const struct widened *w, size_t at)
{
	for (size_t i = 0; i < w->count; i++) {
		size_t start = w->inserted[i] + 2 * i; /* where the i-th ".0" begins in the widened text */
		if (at < start)
			return at - 2 * i;
		if (at < start + 2)
			return w->inserted[i];
	}
	return at - 2 * w->count;
}

/* Copy data with ".0" after every integer literal beyond int64 (outside strings). */
static int widen_big_integers(struct widened *w, const char *data, size_t len, tfjob_error **err)
{
	memset(w, 0, sizeof(*w));
	size_t cap = 0;
	for (size_t i = 0; i < len;) {
		char c = data[i];
		if (c == '"') {
			i = string_end(data, len, i);
			continue;
		}
		if (!is_word(c)) {
			i++;
			continue;
		}
		/* A token: a number when it is -?[0-9]+ exactly. */
		size_t start = i;
		while (i < len && is_word(data[i]))
			i++;
		bool negative = data[start] == '-';
		size_t d = start + (negative ? 1 : 0), n = i - d;
		bool integer = n > 0;
		for (size_t k = d; k < i && integer; k++)
			integer = data[k] >= '0' && data[k] <= '9';
		if (!integer || !beyond_int64(data + d, n, negative))
			continue;
		if (w->count == cap) {
			cap = cap ? cap * 2 : 8;
			size_t *grown = realloc(w->inserted, cap * sizeof(*grown));
			if (!grown) {
				widened_free(w);
				return tfjob__oom(err);
			}
			w->inserted = grown;
		}
		w->inserted[w->count++] = i;
	}
	w->len = len + 2 * w->count;
	w->text = malloc(w->len + 1);
	if (!w->text) {
		widened_free(w);
		return tfjob__oom(err);
	}
	size_t from = 0, to = 0;
	for (size_t k = 0; k < w->count; k++) {
		memcpy(w->text + to, data + from, w->inserted[k] - from);
		to += w->inserted[k] - from;
		from = w->inserted[k];
		memcpy(w->text + to, ".0", 2);
		to += 2;
	}
	memcpy(w->text + to, data + from, len - from);
	w->text[w->len] = '\0';
	return 0;
}

/* A run of at least 19 digits, the least an integer beyond int64 needs (a cheap first look). */
static bool has_long_digit_run(const char *data, size_t len)
{
	size_t run = 0;
	for (size_t i = 0; i < len; i++) {
		run = (data[i] >= '0' && data[i] <= '9') ? run + 1 : 0;
		if (run >= 19)
			return true;
	}
	return false;
}

int tfjob__json_widen(char **out, const char *data, size_t len)
{
	*out = NULL;
	if (!has_long_digit_run(data, len))
		return 0;
	struct widened w;
	if (widen_big_integers(&w, data, len, NULL))
		return TFJOB_ENOMEM;
	free(w.inserted);
	if (w.count == 0) {
		free(w.text);
		return 0;
	}
	*out = w.text;
	return 1;
}

/* Parse text (data itself, or its widened copy w) value by value; positions refer to data. */
static int load_values(tfjob__docs *out, const char *data, size_t len, const struct widened *w,
                       const tfjob__limits *limits, bool *too_big, tfjob_error **err)
{
	const char *text = w ? w->text : data;
	size_t tlen = w ? w->len : len;
	size_t pos = 0;
	if (tlen >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB && (unsigned char)text[2] == 0xBF)
		pos = 3; /* skip a UTF-8 byte order mark, as Kubernetes' decoders do */
	for (;;) {
		while (pos < tlen && is_blank(text[pos]))
			pos++;
		if (pos >= tlen)
			return 0;
		json_error_t jerr;
		json_t *value = json_loadb(text + pos, tlen - pos, JSON_DISABLE_EOF_CHECK | JSON_REJECT_DUPLICATES, &jerr);
		if (!value) {
			if (!w && !strncmp(jerr.text, "too big ", 8)) {
				*too_big = true; /* "too big integer" or "too big negative integer": widen and retry */
				return TFJOB_EPARSE;
			}
			int line, col;
			size_t at = pos + (size_t)(jerr.position > 0 ? jerr.position : 0);
			if (at > tlen)
				at = tlen;
			/* jansson's position is just past the offending token; report where that token starts. */
			if (at > pos && jerr.position > 0)
				at--;
			/* jansson names the token ("... near '\"kind\"'"): point at its first character. */
			const char *near = strstr(jerr.text, "near '");
			size_t nlen = near ? strlen(near + 6) : 0;
			if (nlen >= 2 && near[6 + nlen - 1] == '\'' && at + 1 >= nlen - 1 && at + 1 - (nlen - 1) >= pos &&
			    !memcmp(text + at + 1 - (nlen - 1), near + 6, nlen - 1))
				at = at + 1 - (nlen - 1);
			else
				while (at > pos && at < tlen && is_word(text[at]) && is_word(text[at - 1]))
					at--;
			position_of(data, w ? original_offset(w, at) : at, &line, &col);
			return tfjob__fail_at(err, TFJOB_EPARSE, limits->filename, line, col, "JSON syntax error: %s", jerr.text);
		}
		if (out->count >= limits->max_documents) {
			json_decref(value);
			return tfjob__fail(err, TFJOB_ELIMIT, "%s: more than %u JSON values in one stream",
			                   limits->filename ? limits->filename : "<input>", limits->max_documents);
		}
		int rc = tfjob__docs_push(out, value, err);
		if (rc)
			return rc;
		pos += (size_t)jerr.position;
	}
}

int tfjob__json_load(tfjob__docs *out, const char *data, size_t len, const tfjob__limits *limits, tfjob_error **err)
{
	int rc = check_text(data, len, limits, &out->integral_reals, err);
	if (rc)
		return rc;
	bool too_big = false;
	rc = load_values(out, data, len, NULL, limits, &too_big, err);
	if (!too_big)
		return rc;
	out->integral_reals = true; /* the widened literals are reals */
	/* Start again on the widened text (rare: only inputs with such integers pay for it). */
	tfjob__docs_free(out);
	struct widened w;
	rc = widen_big_integers(&w, data, len, err);
	if (rc)
		return rc;
	rc = load_values(out, data, len, &w, limits, &too_big, err);
	widened_free(&w);
	return rc;
}
