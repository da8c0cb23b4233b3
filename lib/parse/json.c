/*
 * JSON text (one or several concatenated values) to jansson values, with a nesting limit
 * checked before jansson sees the text.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdlib.h>
#include <string.h>

#include "parse/doc.h"

static bool is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
static bool is_word(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '-' ||
	       c == '+' || c == '.';
}

static int check_values(const char *data, size_t len, const tfjob__limits *limits, tfjob_error **err);

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

/* Bytes check_depth stops at: outside strings '"' '{' '[' '}' ']', inside them '"' and '\\'. */
enum { C_PLAIN = 0, C_QUOTE = 1, C_OPEN = 2, C_CLOSE = 3, C_ESCAPE = 4 };
static const unsigned char byte_class[256] = {
	['"'] = C_QUOTE, ['{'] = C_OPEN, ['['] = C_OPEN, ['}'] = C_CLOSE, [']'] = C_CLOSE, ['\\'] = C_ESCAPE,
};

/*
 * Reject nesting deeper than the limit without recursion, so jansson never recurses that far.
 * A table of the few bytes that matter lets the loop skip everything else quickly.
 */
static int check_depth(const char *data, size_t len, const tfjob__limits *limits, tfjob_error **err)
{
	const unsigned char *u = (const unsigned char *)data;
	unsigned int depth = 0;
	size_t i = 0;
	for (;;) {
		while (i < len && byte_class[u[i]] == C_PLAIN)
			i++;
		if (i >= len)
			return 0;
		switch (byte_class[u[i]]) {
		case C_QUOTE:
			i = string_end(data, len, i);
			continue;
		case C_OPEN:
			if (++depth > limits->max_depth) {
				int line, col;
				position_of(data, i, &line, &col);
				return tfjob__fail_at(err, TFJOB_ELIMIT, limits->filename, line, col, "nesting deeper than %u levels",
				                      limits->max_depth);
			}
			break;
		case C_CLOSE:
			if (depth > 0)
				depth--;
			break;
		default:
			break; /* a backslash outside a string: jansson reports the syntax error */
		}
		i++;
	}
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
	int rc = check_depth(data, len, limits, err);
	if (!rc)
		rc = check_values(data, len, limits, err);
	if (rc)
		return rc;
	bool too_big = false;
	rc = load_values(out, data, len, NULL, limits, &too_big, err);
	if (!too_big)
		return rc;
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

/*
 * Reject a document of more than max_nodes values before jansson builds it. Values are counted
 * as the YAML reader counts them: strings (keys included), numbers, literals, objects, arrays.
 * In valid JSON that is, per top-level value, 1 + the commas + the colons + the non-empty
 * objects and arrays, so only those bytes and the strings (skipped whole) need a look.
 */
static int check_values(const char *data, size_t len, const tfjob__limits *limits, tfjob_error **err)
{
	unsigned long values = 0;
	unsigned int depth = 0;
	for (size_t i = 0; i < len; i++) {
		char c = data[i];
		if (c == '"') {
			i = string_end(data, len, i) - 1; /* on the closing quote (the loop steps past it) */
			continue;
		}
		bool counts = false;
		if (c == '{' || c == '[') {
			if (depth++ == 0)
				values = 1; /* a new document */
			size_t j = i + 1;
			while (j < len && is_blank(data[j]))
				j++;
			counts = j < len && data[j] != '}' && data[j] != ']';
		} else if (c == '}' || c == ']') {
			if (depth > 0)
				depth--;
		} else if ((c == ',' || c == ':') && depth > 0) {
			counts = true;
		}
		if (counts && ++values > limits->max_nodes) {
			int line, col;
			position_of(data, i, &line, &col);
			return tfjob__fail_at(err, TFJOB_ELIMIT, limits->filename, line, col, "document has more than %u values",
			                      limits->max_nodes);
		}
	}
	return 0;
}
