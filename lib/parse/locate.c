/*
 * Where a field path ("spec.tfReplicaSpecs[Worker].replica") is written in YAML or JSON text:
 * one pass over libyaml's events of one document, descending only along the path.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdlib.h>
#include <string.h>
#include <yaml.h>

#include "util/common.h"

/* The longest path this reads (segments); longer paths are not found. */
#define MAX_SEGMENTS 64

struct segment {
	const char *text; /* not NUL-terminated */
	size_t len;
};

/* Split "a.b[k][0].c" into a, b, k, 0, c. false when malformed or too long. */
static bool split_path(const char *path, struct segment *segs, size_t *count)
{
	size_t n = 0;
	const char *p = path;
	while (*p) {
		if (n == MAX_SEGMENTS)
			return false;
		if (*p == '[') {
			const char *end = strchr(p + 1, ']');
			if (!end)
				return false;
			segs[n++] = (struct segment){ p + 1, (size_t)(end - p - 1) };
			p = end + 1;
		} else {
			size_t len = strcspn(p, ".[");
			if (len == 0)
				return false;
			segs[n++] = (struct segment){ p, len };
			p += len;
		}
		if (*p == '.')
			p++;
	}
	*count = n;
	return n > 0;
}

struct walker {
	yaml_parser_t parser;
	yaml_event_t event;
	bool failed; /* a parse error, or the text ended */
};

static bool next_event(struct walker *w)
{
	yaml_event_delete(&w->event);
	if (!yaml_parser_parse(&w->parser, &w->event) || w->event.type == YAML_STREAM_END_EVENT) {
		w->failed = true;
		return false;
	}
	return true;
}

/* Skip the node whose first event is the current one. */
static bool skip_node(struct walker *w)
{
	size_t depth = 0;
	do {
		yaml_event_type_t t = w->event.type;
		if (t == YAML_MAPPING_START_EVENT || t == YAML_SEQUENCE_START_EVENT)
			depth++;
		else if (t == YAML_MAPPING_END_EVENT || t == YAML_SEQUENCE_END_EVENT)
			depth--;
		if (depth == 0)
			return true;
	} while (next_event(w));
	return false;
}

static bool segment_is(const struct segment *s, const yaml_event_t *e)
{
	return e->type == YAML_SCALAR_EVENT && e->data.scalar.length == s->len &&
	       !memcmp(e->data.scalar.value, s->text, s->len);
}

/* The index a segment names, or -1 when it is not a decimal number. */
static long segment_index(const struct segment *s)
{
	if (s->len == 0 || s->len > 9)
		return -1;
	long v = 0;
	for (size_t i = 0; i < s->len; i++) {
		if (s->text[i] < '0' || s->text[i] > '9')
			return -1;
		v = v * 10 + (s->text[i] - '0');
	}
	return v;
}

/*
 * The current event starts the node in which segs[0] is looked up. *mark: where the last
 * segment's key (or sequence item) starts. true when found.
 */
static bool find(struct walker *w, const struct segment *segs, size_t n, yaml_mark_t *mark)
{
	for (;;) {
		if (w->event.type == YAML_MAPPING_START_EVENT) {
			bool found = false;
			while (next_event(w) && w->event.type != YAML_MAPPING_END_EVENT) {
				bool match = !found && segment_is(&segs[0], &w->event);
				yaml_mark_t key_mark = w->event.start_mark;
				if (!skip_node(w) || !next_event(w))
					return false;
				if (match && n == 1) {
					*mark = key_mark;
					return true;
				}
				if (match) {
					found = true;
					break;
				}
				if (!skip_node(w))
					return false;
			}
			if (!found)
				return false;
		} else if (w->event.type == YAML_SEQUENCE_START_EVENT) {
			long want = segment_index(&segs[0]), i = 0;
			bool found = false;
			while (want >= 0 && next_event(w) && w->event.type != YAML_SEQUENCE_END_EVENT) {
				if (i++ == want) {
					found = true;
					break;
				}
				if (!skip_node(w))
					return false;
			}
			if (!found)
				return false;
			if (n == 1) {
				*mark = w->event.start_mark;
				return true;
			}
		} else {
			return false; /* a scalar or an alias: the rest of the path is not written here */
		}
		segs++;
		n--;
	}
}

/* Move to the root node of the doc-th document that is not empty. */
static bool to_document(struct walker *w, size_t doc)
{
	size_t seen = 0;
	while (next_event(w)) {
		if (w->event.type != YAML_DOCUMENT_START_EVENT)
			continue;
		if (!next_event(w))
			return false;
		bool empty = w->event.type == YAML_SCALAR_EVENT && w->event.data.scalar.length == 0 &&
		             w->event.data.scalar.plain_implicit;
		if (!empty && seen++ == doc)
			return true;
	}
	return false;
}

int tfjob_field_locate(unsigned int *line, unsigned int *column, const char *data, size_t len, size_t doc,
                       const char *field, tfjob_error **err)
{
	if (!line || !column || !data || !field)
		return tfjob__fail(err, TFJOB_EINVAL, "field_locate: NULL argument");
	struct segment segs[MAX_SEGMENTS];
	size_t n = 0;
	if (!split_path(field, segs, &n))
		return tfjob__fail(err, TFJOB_ENOTFOUND, "field_locate: '%s' is not a field path", field);
	struct walker w;
	memset(&w, 0, sizeof(w));
	if (!yaml_parser_initialize(&w.parser))
		return tfjob__oom(err);
	yaml_parser_set_input_string(&w.parser, (const unsigned char *)data, len);
	yaml_mark_t mark;
	bool found = to_document(&w, doc) && find(&w, segs, n, &mark);
	yaml_event_delete(&w.event);
	yaml_parser_delete(&w.parser);
	if (!found)
		return tfjob__fail(err, TFJOB_ENOTFOUND, "field_locate: %s is not written in document %zu", field, doc);
	*line = (unsigned int)mark.line + 1;
	*column = (unsigned int)mark.column + 1;
	return 0;
}
