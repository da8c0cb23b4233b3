/*
 * YAML (libyaml events) to jansson values.
 *
 * Scalars resolve as Kubernetes' YAML decoder resolves them (YAML 1.1 rules of go-yaml v2:
 * null, booleans including yes/no/on/off, integers in decimal/hex/octal/binary with '_', floats),
 * merge keys (<<) are honoured, duplicate keys are an error, and aliases are expanded into
 * copies under a cap on aliases and on the total number of values (alias bombs).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <yaml.h>

#include "parse/doc.h"

struct frame {
	json_t *node;       /* object or array being filled (borrowed from its parent, or root) */
	bool is_map;
	bool has_key;       /* a mapping has read a key and waits for its value */
	char *key;          /* that key (owned, NUL-free text of key_len bytes) */
	size_t key_len;
	int key_line, key_col;
	bool key_is_merge;  /* the pending key is a plain '<<' */
	json_t *merges;     /* array of mappings to merge at the end (<< keys), or NULL */
	char *anchor;       /* anchor to register when the node completes */
};

#define INLINE_FRAMES 16

struct loader {
	yaml_parser_t parser;
	const tfjob__limits *limits;
	const char *data;
	size_t len;
	struct frame *stack;  /* inline_stack, or a heap array when nesting goes deeper */
	size_t depth, cap;
	struct frame inline_stack[INLINE_FRAMES];
	json_t *root;
	json_t *anchors;      /* name -> [value, node count] for the current document */
	unsigned long nodes;  /* values in the current document, aliases expanded */
	unsigned int aliases;
	tfjob_error **err;
};

static int fail_mark(struct loader *ld, int code, yaml_mark_t mark, const char *fmt, ...) TFJOB_PRINTF(4, 5);

static int fail_mark(struct loader *ld, int code, yaml_mark_t mark, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *msg = tfjob__strdup_vprintf(fmt, ap);
	va_end(ap);
	tfjob__fail_at(ld->err, code, ld->limits->filename, (int)mark.line + 1, (int)mark.column + 1, "%s",
	               msg ? msg : "out of memory");
	free(msg);
	return code;
}

/* Line and column (1-based) of a byte offset, for reader errors that only give an offset. */
static void offset_position(const char *data, size_t len, size_t offset, int *line, int *col)
{
	int l = 1, c = 1;
	for (size_t i = 0; i < offset && i < len; i++) {
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

/* The line number of the text's first line in messages (tfjob_parse_options.first_line). The
 * "file:line:" of an error is moved by tfjob__docs_load(); a line inside a message is moved here. */
static int first_line_of(const tfjob__limits *limits) { return limits->first_line > 1 ? (int)limits->first_line : 1; }

static int parser_error(struct loader *ld)
{
	yaml_parser_t *p = &ld->parser;
	const char *problem = p->problem ? p->problem : "unknown YAML error";
	if (p->error == YAML_MEMORY_ERROR)
		return tfjob__oom(ld->err);
	if (p->error == YAML_READER_ERROR) {
		int line, col;
		offset_position(ld->data, ld->len, p->problem_offset, &line, &col);
		if (p->problem_value != -1)
			return tfjob__fail_at(ld->err, TFJOB_EPARSE, ld->limits->filename, line, col,
			                      "invalid input: %s (byte 0x%02X)", problem, (unsigned)p->problem_value & 0xFFu);
		return tfjob__fail_at(ld->err, TFJOB_EPARSE, ld->limits->filename, line, col, "invalid input: %s", problem);
	}
	if (p->context)
		return tfjob__fail_at(ld->err, TFJOB_EPARSE, ld->limits->filename, (int)p->problem_mark.line + 1,
		                      (int)p->problem_mark.column + 1, "YAML syntax error: %s %s (line %d column %d)",
		                      problem, p->context, (int)p->context_mark.line + first_line_of(ld->limits),
		                      (int)p->context_mark.column + 1);
	return tfjob__fail_at(ld->err, TFJOB_EPARSE, ld->limits->filename, (int)p->problem_mark.line + 1,
	                      (int)p->problem_mark.column + 1, "YAML syntax error: %s", problem);
}

/* ---- scalar resolution ---- */

static bool in_list(const char *s, const char *const *list)
{
	for (; *list; list++)
		if (!strcmp(s, *list))
			return true;
	return false;
}

/*
 * The plain words YAML 1.1 (go-yaml v2) resolves to null or a boolean:
 *   null:  "" ~ null Null NULL
 *   true:  y Y yes Yes YES true True TRUE on On ON
 *   false: n N no No NO false False FALSE off Off OFF
 * classified by length and spelling instead of comparing with each word in turn.
 */
enum word { W_OTHER, W_NULL, W_TRUE, W_FALSE };

/* s (len bytes) is w (lower case, len bytes) in lower case, Capitalised or UPPER case. */
static bool word_is(const char *s, const char *w, size_t len)
{
	if (s[0] != w[0] && s[0] != w[0] - 32)
		return false;
	bool upper = len > 1 && s[1] == w[1] - 32;
	for (size_t i = 1; i < len; i++)
		if (s[i] != (upper ? w[i] - 32 : w[i]))
			return false;
	return upper ? s[0] == w[0] - 32 : true;
}

static enum word yaml_word(const char *s, size_t len)
{
	switch (len) {
	case 0:
		return W_NULL;
	case 1:
		return s[0] == '~' ? W_NULL : s[0] == 'y' || s[0] == 'Y' ? W_TRUE : s[0] == 'n' || s[0] == 'N' ? W_FALSE : W_OTHER;
	case 2:
		return word_is(s, "on", 2) ? W_TRUE : word_is(s, "no", 2) ? W_FALSE : W_OTHER;
	case 3:
		return word_is(s, "yes", 3) ? W_TRUE : word_is(s, "off", 3) ? W_FALSE : W_OTHER;
	case 4:
		return word_is(s, "null", 4) ? W_NULL : word_is(s, "true", 4) ? W_TRUE : W_OTHER;
	case 5:
		return word_is(s, "false", 5) ? W_FALSE : W_OTHER;
	default:
		return W_OTHER;
	}
}

/* Copy s without '_' into buf (cap bytes); false when it does not fit. */
static bool strip_underscores(const char *s, char *buf, size_t cap)
{
	size_t n = 0;
	for (; *s; s++) {
		if (*s == '_')
			continue;
		if (n + 1 >= cap)
			return false;
		buf[n++] = *s;
	}
	buf[n] = '\0';
	return true;
}

static bool all_digits_of_base(const char *s, int base)
{
	if (!*s)
		return false;
	for (; *s; s++) {
		int c = (unsigned char)*s, v;
		if (c >= '0' && c <= '9')
			v = c - '0';
		else if (c >= 'a' && c <= 'f')
			v = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			v = c - 'A' + 10;
		else
			return false;
		if (v >= base)
			return false;
	}
	return true;
}

/* Integer in Go's ParseInt(s, 0, 64) forms; 1 = fits int64, 2 = overflow (use float), 0 = not an int. */
static int parse_yaml_int(const char *plain, long long *out)
{
	const char *s = plain;
	bool neg = false;
	if (*s == '+' || *s == '-')
		neg = *s++ == '-';
	int base = 10;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		base = 16, s += 2;
	else if (s[0] == '0' && (s[1] == 'b' || s[1] == 'B'))
		base = 2, s += 2;
	else if (s[0] == '0' && (s[1] == 'o' || s[1] == 'O'))
		base = 8, s += 2;
	else if (s[0] == '0' && s[1])
		base = 8, s += 1;
	if (!all_digits_of_base(s, base))
		return 0;
	errno = 0;
	unsigned long long v = strtoull(s, NULL, base);
	if (errno == ERANGE)
		return 2;
	if (neg) {
		if (v > (unsigned long long)LLONG_MAX + 1ull)
			return 2;
		*out = v == (unsigned long long)LLONG_MAX + 1ull ? LLONG_MIN : -(long long)v;
	} else {
		if (v > (unsigned long long)LLONG_MAX)
			return 2;
		*out = (long long)v;
	}
	return 1;
}

/* ^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$ */
static bool is_yaml_float(const char *s)
{
	if (*s == '+' || *s == '-')
		s++;
	size_t int_digits = 0, frac_digits = 0;
	while (*s >= '0' && *s <= '9')
		s++, int_digits++;
	if (*s == '.') {
		s++;
		while (*s >= '0' && *s <= '9')
			s++, frac_digits++;
		if (int_digits == 0 && frac_digits == 0)
			return false;
	} else if (int_digits == 0) {
		return false;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!(*s >= '0' && *s <= '9'))
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return *s == '\0';
}

static bool is_special_float(const char *s)
{
	/* Every word below starts with '.', or a sign and '.': most scalars stop here. */
	if (!(s[0] == '.' || ((s[0] == '+' || s[0] == '-') && s[1] == '.')))
		return false;
	static const char *const words[] = { ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf",
		                                 "-.INF", ".nan", ".NaN", ".NAN", NULL };
	return in_list(s, words);
}

enum scalar_kind { SCALAR_AUTO, SCALAR_STR, SCALAR_INT, SCALAR_FLOAT, SCALAR_BOOL, SCALAR_NULL, SCALAR_BINARY };

static enum scalar_kind tag_kind(const char *tag)
{
	static const struct {
		const char *tag;
		enum scalar_kind kind;
	} tags[] = {
		{ "tag:yaml.org,2002:str", SCALAR_STR },     { "tag:yaml.org,2002:binary", SCALAR_BINARY },
		{ "tag:yaml.org,2002:int", SCALAR_INT },     { "tag:yaml.org,2002:float", SCALAR_FLOAT },
		{ "tag:yaml.org,2002:bool", SCALAR_BOOL },   { "tag:yaml.org,2002:null", SCALAR_NULL },
		{ "tag:yaml.org,2002:timestamp", SCALAR_STR }, { "!", SCALAR_STR },
	};
	if (!tag)
		return SCALAR_AUTO;
	for (size_t i = 0; i < TFJOB_ARRAY_LEN(tags); i++)
		if (!strcmp(tag, tags[i].tag))
			return tags[i].kind;
	return SCALAR_AUTO;
}

/* !!binary: base64 (white space ignored, '=' padding) decoded to a string, as go-yaml decodes it. */
static json_t *decode_binary(struct loader *ld, const yaml_event_t *ev, const char *text, size_t len)
{
	unsigned char *buf = malloc(len / 4 * 3 + 3);
	if (!buf) {
		tfjob__oom(ld->err);
		return NULL;
	}
	size_t n = 0;
	bool bad = tfjob__base64_decode_into(buf, &n, text, len, 0) != 0;
	json_t *s = bad || memchr(buf, 0, n) ? NULL : json_stringn((const char *)buf, n);
	free(buf);
	if (!s)
		fail_mark(ld, TFJOB_EPARSE, ev->start_mark, "%s",
		          bad ? "!!binary value is not valid base64" : "!!binary value is not UTF-8 text without NUL");
	return s;
}

/* True when text has no byte above 0x7F (so it is UTF-8 without a check). No early exit: the loop
 * stays branch-free for the short scalars and keys of a manifest. */
static bool is_ascii(const char *text, size_t len)
{
	unsigned char any = 0;
	for (size_t i = 0; i < len; i++)
		any |= (unsigned char)text[i];
	return any < 0x80;
}

/* A string value of text (NUL-free); NULL when it is not UTF-8 (or out of memory). jansson's own
 * UTF-8 check is skipped for ASCII text, where it cannot fail. */
static json_t *string_value(const char *text, size_t len)
{
	return is_ascii(text, len) ? json_stringn_nocheck(text, len) : json_stringn(text, len);
}

/* Resolve a scalar to a value; NULL with *err set on failure. */
static json_t *resolve_scalar(struct loader *ld, const yaml_event_t *ev)
{
	const char *text = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	enum scalar_kind kind = tag_kind((const char *)ev->data.scalar.tag);
	bool quoted = ev->data.scalar.style != YAML_PLAIN_SCALAR_STYLE && ev->data.scalar.style != YAML_ANY_SCALAR_STYLE;

	if (memchr(text, '\0', len)) {
		fail_mark(ld, TFJOB_EPARSE, ev->start_mark, "%s", "a string contains a NUL character");
		return NULL;
	}
	if (kind == SCALAR_BINARY)
		return decode_binary(ld, ev, text, len);
	if (kind == SCALAR_STR || (kind == SCALAR_AUTO && quoted)) {
		json_t *s = string_value(text, len);
		if (!s)
			fail_mark(ld, TFJOB_EPARSE, ev->start_mark, "%s", "invalid UTF-8 in string");
		return s;
	}
	enum word word = yaml_word(text, len);
	if ((kind == SCALAR_AUTO || kind == SCALAR_NULL) && word == W_NULL)
		return json_null();
	if (kind == SCALAR_AUTO || kind == SCALAR_BOOL) {
		if (word == W_TRUE)
			return json_true();
		if (word == W_FALSE)
			return json_false();
	}
	/*
	 * go-yaml v2 only tries numbers when the first character is a digit, a sign or '.', and
	 * strips '_' except after a leading '.' (strconv.ParseFloat rejects it there).
	 */
	bool numeric_start = (text[0] >= '0' && text[0] <= '9') || text[0] == '+' || text[0] == '-' || text[0] == '.';
	if ((kind == SCALAR_AUTO && numeric_start) || kind == SCALAR_INT || kind == SCALAR_FLOAT) {
		char buf[128];
		bool ok = text[0] == '.' ? (strchr(text, '_') == NULL && strlen(text) < sizeof(buf) && strcpy(buf, text))
		                         : strip_underscores(text, buf, sizeof(buf));
		if (ok && buf[0]) {
			long long iv;
			int r = kind == SCALAR_FLOAT ? 2 : parse_yaml_int(buf, &iv);
			if (r == 1)
				return json_integer(iv);
			if ((r == 2 || kind != SCALAR_INT) && is_yaml_float(buf)) {
				double d = strtod(buf, NULL);
				/*
				 * Kubernetes turns YAML into JSON with Go's encoder, which writes an integral
				 * float64 without a fraction: `replicas: 2.0` reaches the API server as 2.
				 */
				if (isfinite(d) && d == trunc(d) && d > -9.2e18 && d < 9.2e18)
					return json_integer((json_int_t)d);
				if (isfinite(d))
					return json_real(d);
			}
		}
		if (is_special_float(text)) {
			fail_mark(ld, TFJOB_EPARSE, ev->start_mark, "'%s' (infinity or NaN) cannot be represented in JSON", text);
			return NULL;
		}
	}
	if (kind != SCALAR_AUTO) {
		fail_mark(ld, TFJOB_EPARSE, ev->start_mark, "'%s' does not match its explicit tag", text);
		return NULL;
	}
	json_t *s = string_value(text, len);
	if (!s)
		fail_mark(ld, TFJOB_EPARSE, ev->start_mark, "%s", "invalid UTF-8 in string");
	return s;
}

/* ---- nodes and frames ---- */

static size_t count_nodes(const json_t *v)
{
	size_t n = 1;
	if (json_is_object(v)) {
		const char *k;
		json_t *child;
		json_object_foreach((json_t *)v, k, child) n += count_nodes(child);
	} else if (json_is_array(v)) {
		size_t i;
		json_t *child;
		json_array_foreach(v, i, child) n += count_nodes(child);
	}
	return n;
}

static int count_node(struct loader *ld, yaml_mark_t mark, unsigned long n)
{
	ld->nodes += n;
	if (ld->nodes > ld->limits->max_nodes)
		return tfjob__fail_at(ld->err, TFJOB_ELIMIT, ld->limits->filename, (int)mark.line + 1, (int)mark.column + 1,
		                      "document has more than %u values (after alias expansion)", ld->limits->max_nodes);
	return 0;
}

/* Nesting height of a value: 0 for scalars, 1 + the children's for containers. */
static size_t height_of(const json_t *v)
{
	size_t h = 0;
	if (json_is_object(v)) {
		const char *k;
		json_t *child;
		json_object_foreach((json_t *)v, k, child) {
			size_t ch = height_of(child);
			if (ch > h)
				h = ch;
		}
		return h + 1;
	}
	if (json_is_array(v)) {
		size_t i;
		json_t *child;
		json_array_foreach(v, i, child) {
			size_t ch = height_of(child);
			if (ch > h)
				h = ch;
		}
		return h + 1;
	}
	return 0;
}

/* The anchors of the document, made on first use (most documents have none). */
static bool ensure_anchors(struct loader *ld)
{
	return ld->anchors || (ld->anchors = json_object()) != NULL;
}

static int register_anchor(struct loader *ld, const char *anchor, json_t *value)
{
	if (!anchor)
		return 0;
	if (!ensure_anchors(ld))
		return tfjob__oom(ld->err);
	json_t *entry = json_pack("[OII]", value, (json_int_t)count_nodes(value), (json_int_t)height_of(value));
	if (!entry || json_object_set_new(ld->anchors, anchor, entry))
		return tfjob__oom(ld->err);
	return 0;
}

/* Place a completed value into the current container (or as the root). Takes the reference. */
static int attach(struct loader *ld, json_t *value, yaml_mark_t mark)
{
	if (ld->depth == 0) {
		ld->root = value;
		return 0;
	}
	struct frame *f = &ld->stack[ld->depth - 1];
	if (!f->is_map) {
		if (json_array_append_new(f->node, value))
			return tfjob__oom(ld->err);
		return 0;
	}
	char *key = f->key;
	size_t key_len = f->key_len;
	f->key = NULL;
	f->has_key = false;
	if (f->key_is_merge) {
		free(key);
		if (!f->merges && !(f->merges = json_array()))
			return json_decref(value), tfjob__oom(ld->err);
		if (json_is_object(value))
			return json_array_append_new(f->merges, value) ? tfjob__oom(ld->err) : 0;
		if (json_is_array(value)) {
			size_t i;
			json_t *item;
			json_array_foreach(value, i, item) {
				if (!json_is_object(item)) {
					json_decref(value);
					return fail_mark(ld, TFJOB_EPARSE, mark, "%s", "merge key '<<' needs mappings");
				}
				json_array_append(f->merges, item);
			}
			json_decref(value);
			return 0;
		}
		json_decref(value);
		return fail_mark(ld, TFJOB_EPARSE, mark, "%s", "merge key '<<' needs a mapping or a sequence of mappings");
	}
	/* One hash lookup: a key already there is replaced, so the size does not grow. */
	size_t before = json_object_size(f->node);
	int rc = 0;
	int set = is_ascii(key, key_len) ? json_object_setn_new_nocheck(f->node, key, key_len, value)
	                                 : json_object_setn_new(f->node, key, key_len, value);
	if (set) {
		/* jansson refuses a key that is not UTF-8 (libyaml's reader should have caught it first). */
		json_t *probe = json_stringn(key, key_len);
		rc = probe ? tfjob__oom(ld->err)
		           : tfjob__fail_at(ld->err, TFJOB_EPARSE, ld->limits->filename, f->key_line, f->key_col, "%s",
		                            "invalid UTF-8 in mapping key");
		json_decref(probe);
	} else if (json_object_size(f->node) == before)
		rc = tfjob__fail_at(ld->err, TFJOB_EPARSE, ld->limits->filename, f->key_line, f->key_col,
		                    "duplicate key '%s'", key);
	free(key);
	return rc;
}

/* A key read: the mapping now waits for its value. Takes key (owned text). */
static void set_key(struct loader *ld, char *key, size_t len, bool merge, yaml_mark_t mark)
{
	struct frame *f = &ld->stack[ld->depth - 1];
	f->key = key;
	f->key_len = len;
	f->has_key = true;
	f->key_is_merge = merge;
	f->key_line = (int)mark.line + 1;
	f->key_col = (int)mark.column + 1;
}

/*
 * Keys are strings. As in Kubernetes (go-yaml v2, then sigs.k8s.io/yaml's conversion to JSON),
 * a plain key that resolves to a boolean or an integer becomes its canonical text
 * (`yes` -> "true", `0x10` -> "16"); any other key keeps its source text, which is taken from
 * the event (no copy). Returns the text (owned) and its length, or NULL with the error set.
 */
static char *key_from_scalar(struct loader *ld, yaml_event_t *ev, size_t *out_len)
{
	const char *text = (const char *)ev->data.scalar.value;
	size_t len = ev->data.scalar.length;
	if (memchr(text, '\0', len)) {
		fail_mark(ld, TFJOB_EPARSE, ev->start_mark, "%s", "a mapping key contains a NUL character");
		return NULL;
	}
	const char *canonical = NULL;
	char num[32];
	if (ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && !ev->data.scalar.tag) {
		enum word word = yaml_word(text, len);
		if (word == W_NULL) {
			/* Kubernetes' YAML reader cannot turn a null key into a JSON field name either. */
			fail_mark(ld, TFJOB_EPARSE, ev->start_mark, "mapping key '%s' is null; quote it to use it as a string",
			          text);
			return NULL;
		}
		if (word == W_TRUE)
			canonical = "true";
		else if (word == W_FALSE)
			canonical = "false";
		char buf[128];
		long long iv;
		bool numeric_start = (text[0] >= '0' && text[0] <= '9') || text[0] == '+' || text[0] == '-';
		if (!canonical && numeric_start && strip_underscores(text, buf, sizeof(buf)) && buf[0] &&
		    parse_yaml_int(buf, &iv) == 1) {
			snprintf(num, sizeof(num), "%lld", iv);
			canonical = num;
		}
	}
	char *key;
	if (canonical) {
		key = tfjob__strdup(canonical);
		len = strlen(canonical);
	} else {
		key = (char *)ev->data.scalar.value;
		ev->data.scalar.value = NULL; /* taken: yaml_event_delete() frees NULL */
	}
	if (!key)
		tfjob__oom(ld->err);
	*out_len = len;
	return key;
}

static bool expecting_key(const struct loader *ld)
{
	if (ld->depth == 0)
		return false;
	const struct frame *f = &ld->stack[ld->depth - 1];
	return f->is_map && !f->has_key;
}

static int push_frame(struct loader *ld, const yaml_event_t *ev, bool is_map)
{
	if (expecting_key(ld))
		return fail_mark(ld, TFJOB_EPARSE, ev->start_mark, "%s", "mapping keys must be scalars");
	if (ld->depth >= ld->limits->max_depth)
		return tfjob__fail_at(ld->err, TFJOB_ELIMIT, ld->limits->filename, (int)ev->start_mark.line + 1,
		                      (int)ev->start_mark.column + 1, "nesting deeper than %u levels", ld->limits->max_depth);
	if (count_node(ld, ev->start_mark, 1))
		return TFJOB_ELIMIT;
	if (ld->depth == ld->cap) {
		/* Deeper than the inline frames: grow (the depth limit bounds it). */
		size_t cap = ld->cap * 2;
		struct frame *grown = ld->stack == ld->inline_stack ? malloc(cap * sizeof(*grown))
		                                                    : realloc(ld->stack, cap * sizeof(*grown));
		if (!grown)
			return tfjob__oom(ld->err);
		if (ld->stack == ld->inline_stack)
			memcpy(grown, ld->inline_stack, sizeof(ld->inline_stack));
		ld->stack = grown;
		ld->cap = cap;
	}
	json_t *node = is_map ? json_object() : json_array();
	if (!node)
		return tfjob__oom(ld->err);
	const yaml_char_t *anchor = is_map ? ev->data.mapping_start.anchor : ev->data.sequence_start.anchor;
	struct frame *f = &ld->stack[ld->depth];
	memset(f, 0, sizeof(*f));
	f->node = node;
	f->is_map = is_map;
	if (anchor) {
		f->anchor = tfjob__strdup((const char *)anchor);
		/* Mark the anchor as in progress so that a recursive alias is detected. */
		if (!f->anchor || !ensure_anchors(ld) || json_object_set_new(ld->anchors, f->anchor, json_null())) {
			json_decref(node);
			free(f->anchor);
			return tfjob__oom(ld->err);
		}
	}
	ld->depth++;
	return 0;
}

static void apply_merges(json_t *map, json_t *merges)
{
	size_t i;
	json_t *src;
	json_array_foreach(merges, i, src) {
		const char *k;
		json_t *v;
		json_object_foreach(src, k, v) {
			if (!json_object_get(map, k))
				json_object_set(map, k, v);
		}
	}
}

static int pop_frame(struct loader *ld, const yaml_event_t *ev)
{
	struct frame *f = &ld->stack[--ld->depth];
	json_t *node = f->node;
	if (f->merges) {
		apply_merges(node, f->merges);
		json_decref(f->merges);
	}
	int rc = register_anchor(ld, f->anchor, node);
	free(f->anchor);
	if (rc) {
		json_decref(node);
		return rc;
	}
	return attach(ld, node, ev->start_mark);
}

static int handle_alias(struct loader *ld, const yaml_event_t *ev)
{
	const char *name = (const char *)ev->data.alias.anchor;
	if (++ld->aliases > ld->limits->max_aliases)
		return fail_mark(ld, TFJOB_ELIMIT, ev->start_mark, "more than %u aliases in one document (alias bomb?)",
		                 ld->limits->max_aliases);
	json_t *entry = json_object_get(ld->anchors, name);
	if (!entry)
		return fail_mark(ld, TFJOB_EPARSE, ev->start_mark, "unknown anchor '%s'", name);
	if (json_is_null(entry))
		return fail_mark(ld, TFJOB_EPARSE, ev->start_mark, "alias '%s' refers to a node that contains it", name);
	json_t *value = json_array_get(entry, 0);
	/* An alias copies its anchor's subtree here: the copy must respect the nesting limit too. */
	json_int_t height = json_integer_value(json_array_get(entry, 2));
	if ((json_int_t)ld->depth + height > (json_int_t)ld->limits->max_depth)
		return fail_mark(ld, TFJOB_ELIMIT, ev->start_mark, "nesting deeper than %u levels (through alias '%s')",
		                 ld->limits->max_depth, name);
	if (count_node(ld, ev->start_mark, (unsigned long)json_integer_value(json_array_get(entry, 1))))
		return TFJOB_ELIMIT;
	if (expecting_key(ld)) {
		if (!json_is_string(value))
			return fail_mark(ld, TFJOB_EPARSE, ev->start_mark, "%s", "mapping keys must be strings");
		size_t klen = json_string_length(value);
		char *key = malloc(klen + 1);
		if (!key)
			return tfjob__oom(ld->err);
		memcpy(key, json_string_value(value), klen + 1);
		set_key(ld, key, klen, false, ev->start_mark);
		return 0;
	}
	json_t *copy = json_deep_copy(value);
	if (!copy)
		return tfjob__oom(ld->err);
	return attach(ld, copy, ev->start_mark);
}

/*
 * libyaml accepts the escape "\/" in double-quoted scalars (a YAML 1.2 escape); go-yaml, and so
 * Kubernetes' reader, refuses it as an unknown escape. Look at the scalar's source text.
 */
static int check_escapes(struct loader *ld, const yaml_event_t *ev)
{
	if (ev->data.scalar.style != YAML_DOUBLE_QUOTED_SCALAR_STYLE)
		return 0;
	size_t start = ev->start_mark.index, end = ev->end_mark.index;
	for (size_t i = start; i + 1 < end && end <= ld->len; i++) {
		if (ld->data[i] != '\\')
			continue;
		if (ld->data[i + 1] == '/') {
			yaml_mark_t at = ev->start_mark;
			at.column += i - start; /* a quoted scalar with this escape on its first line is the usual case */
			return fail_mark(ld, TFJOB_EPARSE, at, "%s", "found unknown escape character '/' in a double-quoted string");
		}
		i++; /* skip the escaped character (e.g. a second backslash) */
	}
	return 0;
}

static int handle_key(struct loader *ld, yaml_event_t *ev)
{
	bool merge = ev->data.scalar.style == YAML_PLAIN_SCALAR_STYLE && ev->data.scalar.length == 2 &&
	             !memcmp(ev->data.scalar.value, "<<", 2);
	size_t len = 0;
	char *key = key_from_scalar(ld, ev, &len);
	if (!key)
		return TFJOB_EPARSE;
	if (ev->data.scalar.anchor) {
		/* An anchored key: register its text for aliases (rare). */
		json_t *value = json_stringn(key, len);
		int rc = value ? register_anchor(ld, (const char *)ev->data.scalar.anchor, value) : tfjob__oom(ld->err);
		json_decref(value);
		if (rc) {
			free(key);
			return rc;
		}
	}
	set_key(ld, key, len, merge, ev->start_mark);
	return 0;
}

static int handle_scalar(struct loader *ld, yaml_event_t *ev)
{
	if (count_node(ld, ev->start_mark, 1))
		return TFJOB_ELIMIT;
	int erc = check_escapes(ld, ev);
	if (erc)
		return erc;
	if (expecting_key(ld))
		return handle_key(ld, ev);
	json_t *value = resolve_scalar(ld, ev);
	if (!value)
		return TFJOB_EPARSE;
	if (ev->data.scalar.anchor) {
		int rc = register_anchor(ld, (const char *)ev->data.scalar.anchor, value);
		if (rc) {
			json_decref(value);
			return rc;
		}
	}
	return attach(ld, value, ev->start_mark);
}

static void reset_document(struct loader *ld)
{
	while (ld->depth > 0) {
		struct frame *f = &ld->stack[--ld->depth];
		json_decref(f->node);
		free(f->key);
		json_decref(f->merges);
		free(f->anchor);
	}
	json_decref(ld->root);
	ld->root = NULL;
	json_object_clear(ld->anchors);
	ld->nodes = 0;
	ld->aliases = 0;
}

static int handle_event(struct loader *ld, tfjob__docs *out, yaml_event_t *ev, bool *done)
{
	switch (ev->type) {
	case YAML_STREAM_END_EVENT:
		*done = true;
		return 0;
	case YAML_DOCUMENT_START_EVENT:
		reset_document(ld);
		return 0;
	case YAML_DOCUMENT_END_EVENT: {
		json_t *root = ld->root;
		ld->root = NULL;
		reset_document(ld);
		if (!root || json_is_null(root)) {
			json_decref(root);
			return 0;
		}
		if (out->count >= ld->limits->max_documents) {
			json_decref(root);
			return fail_mark(ld, TFJOB_ELIMIT, ev->start_mark, "more than %u documents in one stream", ld->limits->max_documents);
		}
		return tfjob__docs_push(out, root, ld->err);
	}
	case YAML_MAPPING_START_EVENT:
		return push_frame(ld, ev, true);
	case YAML_SEQUENCE_START_EVENT:
		return push_frame(ld, ev, false);
	case YAML_MAPPING_END_EVENT:
	case YAML_SEQUENCE_END_EVENT:
		return pop_frame(ld, ev);
	case YAML_SCALAR_EVENT:
		return handle_scalar(ld, ev);
	case YAML_ALIAS_EVENT:
		return handle_alias(ld, ev);
	default:
		return 0;
	}
}

int tfjob__yaml_load(tfjob__docs *out, const char *data, size_t len, const tfjob__limits *limits, tfjob_error **err)
{
	struct loader ld;
	memset(&ld, 0, sizeof(ld));
	ld.limits = limits;
	ld.data = data;
	ld.len = len;
	ld.err = err;
	ld.stack = ld.inline_stack;
	ld.cap = INLINE_FRAMES;
	if (!yaml_parser_initialize(&ld.parser))
		return tfjob__oom(err);
	yaml_parser_set_input_string(&ld.parser, (const unsigned char *)data, len);
	int rc = 0;
	bool done = false;
	while (!done && rc == 0) {
		yaml_event_t ev;
		if (!yaml_parser_parse(&ld.parser, &ev)) {
			rc = parser_error(&ld);
			break;
		}
		rc = handle_event(&ld, out, &ev, &done);
		yaml_event_delete(&ev);
	}
	reset_document(&ld);
	yaml_parser_delete(&ld.parser);
	json_decref(ld.anchors);
	if (ld.stack != ld.inline_stack)
		free(ld.stack);
	return rc;
}
