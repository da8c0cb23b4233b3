/*
 * Fuzz target: the incremental JSON splitter of watch streams (lib/transport/watch_splitter.c).
 * Property: feeding the input in chunks (boundaries chosen from the input itself) gives exactly
 * the values, and the same outcome, as feeding it at once; nothing crashes or leaks.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The transport sources are not in the fuzz runner's core list: build the one we test here. */
#include "transport/watch_splitter.c"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct sink {
	char *all;
	size_t len;
};

static int collect(const char *value, size_t len, void *payload)
{
	struct sink *s = payload;
	char *grown = realloc(s->all, s->len + len + 2);
	if (!grown)
		abort();
	memcpy(grown + s->len, value, len);
	grown[s->len + len] = '\n';
	s->all = grown;
	s->len += len + 1;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t step = (size_t)data[0] % 17 + 1;
	const char *text = (const char *)data + 1;
	size_t n = size - 1;
	struct sink whole = { NULL, 0 }, parts = { NULL, 0 };
	tfjob__splitter a, b;
	tfjob__splitter_init(&a, 4096);
	tfjob__splitter_init(&b, 4096);
	int ra = tfjob__splitter_feed(&a, text, n, collect, &whole);
	int rb = 0;
	for (size_t off = 0; off < n && rb == 0; off += step)
		rb = tfjob__splitter_feed(&b, text + off, n - off < step ? n - off : step, collect, &parts);
	if (ra != rb)
		abort();
	if (ra == 0 && (whole.len != parts.len || (whole.len && memcmp(whole.all, parts.all, whole.len))))
		abort();
	if (ra == 0 && tfjob__splitter_pending(&a) != tfjob__splitter_pending(&b))
		abort();
	tfjob__splitter_free(&a);
	tfjob__splitter_free(&b);
	free(whole.all);
	free(parts.all);
	return 0;
}
