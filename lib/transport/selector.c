/*
 * Label selectors (=, ==, !=, in, notin, exists, !key) and field selectors (=, ==, != on a
 * dotted path such as metadata.name), parsed as the API server parses them.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transport/internal.h"

enum op { OP_EQ, OP_NE, OP_IN, OP_NOTIN, OP_EXISTS, OP_NOTEXISTS };

struct requirement {
	char *key;
	enum op op;
	char **values;
	size_t nvalues;
};

struct tfjob__selector {
	struct requirement *reqs;
	size_t count;
};

void tfjob__selector_free(tfjob__selector *sel)
{
	if (!sel)
		return;
	for (size_t i = 0; i < sel->count; i++) {
		free(sel->reqs[i].key);
		for (size_t j = 0; j < sel->reqs[i].nvalues; j++)
			free(sel->reqs[i].values[j]);
		free(sel->reqs[i].values);
	}
	free(sel->reqs);
	free(sel);
}

struct lexer {
	const char *p;
	const char *text;
};

static void skip_ws(struct lexer *lx)
{
	while (*lx->p && isspace((unsigned char)*lx->p))
		lx->p++;
}

/* A key or value: letters, digits, '-', '_', '.', '/'. Empty when none. */
static char *take_word(struct lexer *lx)
{
	skip_ws(lx);
	const char *start = lx->p;
	while (*lx->p && (isalnum((unsigned char)*lx->p) || strchr("-_./", *lx->p)))
		lx->p++;
	size_t n = (size_t)(lx->p - start);
	char *w = malloc(n + 1);
	if (w) {
		memcpy(w, start, n);
		w[n] = '\0';
	}
	return w;
}

static int push_value(struct requirement *r, char *v)
{
	char **grown = realloc(r->values, (r->nvalues + 1) * sizeof(*grown));
	if (!grown) {
		free(v);
		return -1;
	}
	r->values = grown;
	r->values[r->nvalues++] = v;
	return 0;
}

static int bad(tfjob_error **err, const struct lexer *lx, const char *what)
{
	return tfjob__api_fail(err, TFJOB_EINVAL, 400, NULL, "unable to parse requirement: %s at offset %d in \"%s\"",
	                       what, (int)(lx->p - lx->text), lx->text);
}

/* The '(v1, v2)' of in/notin. */
static int parse_set(struct requirement *r, struct lexer *lx, tfjob_error **err)
{
	skip_ws(lx);
	if (*lx->p != '(')
		return bad(err, lx, "expected '('");
	lx->p++;
	for (;;) {
		char *v = take_word(lx);
		if (!v || push_value(r, v))
			return tfjob__oom(err);
		skip_ws(lx);
		if (*lx->p == ',') {
			lx->p++;
			continue;
		}
		if (*lx->p == ')') {
			lx->p++;
			return 0;
		}
		return bad(err, lx, "expected ',' or ')'");
	}
}

/* One requirement. field = 1 allows only =, ==, !=. */
static int parse_requirement(struct requirement *r, struct lexer *lx, int field, tfjob_error **err)
{
	skip_ws(lx);
	int negated = 0;
	if (*lx->p == '!' && !field) {
		negated = 1;
		lx->p++;
	}
	r->key = take_word(lx);
	if (!r->key)
		return tfjob__oom(err);
	if (!r->key[0])
		return bad(err, lx, "expected a key");
	skip_ws(lx);
	if (negated || *lx->p == ',' || *lx->p == '\0') {
		if (field)
			return bad(err, lx, "expected an operator");
		r->op = negated ? OP_NOTEXISTS : OP_EXISTS;
		return 0;
	}
	if (lx->p[0] == '!' && lx->p[1] == '=') {
		r->op = OP_NE;
		lx->p += 2;
	} else if (lx->p[0] == '=') {
		r->op = OP_EQ;
		lx->p += lx->p[1] == '=' ? 2 : 1;
	} else if (!field && !strncmp(lx->p, "notin", 5) && !isalnum((unsigned char)lx->p[5])) {
		r->op = OP_NOTIN;
		lx->p += 5;
		return parse_set(r, lx, err);
	} else if (!field && !strncmp(lx->p, "in", 2) && !isalnum((unsigned char)lx->p[2])) {
		r->op = OP_IN;
		lx->p += 2;
		return parse_set(r, lx, err);
	} else {
		return bad(err, lx, "expected an operator");
	}
	char *v = take_word(lx);
	if (!v || push_value(r, v))
		return tfjob__oom(err);
	return 0;
}

static int parse(tfjob__selector **out, const char *text, int field, tfjob_error **err)
{
	*out = NULL;
	if (!text)
		return 0;
	struct lexer lx = { text, text };
	skip_ws(&lx);
	if (!*lx.p)
		return 0;
	tfjob__selector *sel = calloc(1, sizeof(*sel));
	if (!sel)
		return tfjob__oom(err);
	for (;;) {
		struct requirement *grown = realloc(sel->reqs, (sel->count + 1) * sizeof(*grown));
		if (!grown) {
			tfjob__selector_free(sel);
			return tfjob__oom(err);
		}
		sel->reqs = grown;
		memset(&sel->reqs[sel->count], 0, sizeof(sel->reqs[0]));
		int rc = parse_requirement(&sel->reqs[sel->count++], &lx, field, err);
		if (rc) {
			tfjob__selector_free(sel);
			return rc;
		}
		skip_ws(&lx);
		if (*lx.p == ',') {
			lx.p++;
			continue;
		}
		if (*lx.p == '\0')
			break;
		int rc2 = bad(err, &lx, "unexpected character");
		tfjob__selector_free(sel);
		return rc2;
	}
	*out = sel;
	return 0;
}

int tfjob__selector_parse(tfjob__selector **out, const char *text, tfjob_error **err)
{
	return parse(out, text, 0, err);
}

int tfjob__field_selector_parse(tfjob__selector **out, const char *text, tfjob_error **err)
{
	return parse(out, text, 1, err);
}

static int in_values(const struct requirement *r, const char *v)
{
	for (size_t i = 0; i < r->nvalues; i++)
		if (!strcmp(r->values[i], v))
			return 1;
	return 0;
}

static int requirement_matches(const struct requirement *r, const char *v)
{
	switch (r->op) {
	case OP_EXISTS:
		return v != NULL;
	case OP_NOTEXISTS:
		return v == NULL;
	case OP_EQ:
	case OP_IN:
		return v && in_values(r, v);
	case OP_NE:
	case OP_NOTIN:
		return !v || !in_values(r, v);
	}
	return 0;
}

int tfjob__selector_matches(const tfjob__selector *sel, const json_t *labels)
{
	if (!sel)
		return 1;
	for (size_t i = 0; i < sel->count; i++)
		if (!requirement_matches(&sel->reqs[i], json_string_value(json_object_get(labels, sel->reqs[i].key))))
			return 0;
	return 1;
}

/* The string at a dotted path ("metadata.name"), or NULL. */
static const char *path_value(const json_t *obj, const char *path, char *num, size_t numsize)
{
	char buf[256];
	size_t n = strlen(path);
	if (n >= sizeof(buf))
		return NULL;
	memcpy(buf, path, n + 1);
	const json_t *cur = obj;
	for (char *save = NULL, *part = strtok_r(buf, ".", &save); part && cur; part = strtok_r(NULL, ".", &save))
		cur = json_object_get(cur, part);
	if (json_is_integer(cur)) {
		snprintf(num, numsize, "%lld", (long long)json_integer_value(cur));
		return num;
	}
	if (json_is_boolean(cur))
		return json_is_true(cur) ? "true" : "false";
	return json_string_value(cur);
}

int tfjob__field_selector_matches(const tfjob__selector *sel, const json_t *object)
{
	if (!sel)
		return 1;
	for (size_t i = 0; i < sel->count; i++) {
		char num[32];
		const char *v = path_value(object, sel->reqs[i].key, num, sizeof(num));
		/* An absent field reads as "" as the API server's field sets do. */
		if (!requirement_matches(&sel->reqs[i], v ? v : ""))
			return 0;
	}
	return 1;
}
