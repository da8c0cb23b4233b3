/*
 * A byte sink handing its text on in chunks (util/sink.h).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdlib.h>

#include <jansson.h>

#include "util/sink.h"

void tfjob__sink_init(tfjob__sink *s, tfjob_write_cb write, void *payload)
{
	tfjob__sbuf empty = TFJOB__SBUF_INIT;
	s->buf = empty;
	s->write = write;
	s->payload = payload;
	s->failed = 0;
}

static void hand_on(tfjob__sink *s)
{
	if (s->buf.oom && !s->failed)
		s->failed = TFJOB_ENOMEM;
	if (!s->failed && s->buf.len && s->write(s->buf.p, s->buf.len, s->payload))
		s->failed = TFJOB_EIO;
	s->buf.len = 0;
	if (s->buf.p)
		s->buf.p[0] = '\0';
}

void tfjob__sink_maybe_flush(tfjob__sink *s)
{
	if (s->write && (s->buf.len >= TFJOB__SINK_CHUNK || s->buf.oom))
		hand_on(s);
}

void tfjob__sink_adds(tfjob__sink *s, const char *text)
{
	tfjob__sbuf_adds(&s->buf, text);
	tfjob__sink_maybe_flush(s);
}

void tfjob__sink_add_json(tfjob__sink *s, const json_t *v, unsigned int flags, unsigned int depth)
{
	tfjob__sbuf_add_json_at(&s->buf, v, (flags & TFJOB_JSON_PRETTY) ? 2 : 0, (flags & TFJOB_JSON_SORT_KEYS) != 0,
	                        depth);
	tfjob__sink_maybe_flush(s);
}

void tfjob__sink_newline(tfjob__sink *s, unsigned int flags, unsigned int depth)
{
	if (!(flags & TFJOB_JSON_PRETTY))
		return;
	tfjob__sbuf_addc(&s->buf, '\n');
	for (unsigned int i = 0; i < depth; i++)
		tfjob__sbuf_add(&s->buf, "  ", 2);
}

void tfjob__sink_key(tfjob__sink *s, const char *key, bool first, unsigned int flags, unsigned int depth)
{
	if (!first)
		tfjob__sbuf_addc(&s->buf, ',');
	tfjob__sink_newline(s, flags, depth);
	tfjob__sbuf_add_quoted(&s->buf, key);
	tfjob__sbuf_adds(&s->buf, (flags & TFJOB_JSON_PRETTY) ? ": " : ":");
}

int tfjob__sink_finish(tfjob__sink *s, char **out, tfjob_error **err)
{
	if (out)
		*out = NULL;
	if (s->write)
		hand_on(s);
	else if (s->buf.oom)
		s->failed = TFJOB_ENOMEM;
	int rc = s->failed;
	if (!rc && !s->write) {
		*out = tfjob__sbuf_take(&s->buf);
		if (!*out)
			rc = TFJOB_ENOMEM;
	}
	tfjob__sbuf_free(&s->buf);
	if (rc == TFJOB_ENOMEM)
		return tfjob__oom(err);
	if (rc)
		return tfjob__fail(err, rc, "the output callback refused the text (write error)");
	return 0;
}

int tfjob__sink_end(tfjob__sink *s, int rc, char **out, tfjob_error **err)
{
	if (!rc)
		return tfjob__sink_finish(s, out, err);
	if (out)
		*out = NULL;
	tfjob__sbuf_free(&s->buf);
	return rc;
}
