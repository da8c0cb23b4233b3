/*
 * Fuzz target: reading JSON without parsing it (lib/parse/jscan.c), which takes watch events and
 * request bodies from outside. Properties, against jansson on the same bytes:
 * - tfjob__jscan_valid() says valid exactly when jansson parses the text (but for what JSON
 *   allows and jansson refuses: numbers beyond its range, \u0000 in object keys);
 * - tfjob__jscan_certain() is never sure of a text jansson refuses (duplicates refused);
 * - removing a member's span (tfjob__jscan_member_span) leaves the object without that member;
 * - nothing reads past the text, crashes or leaks.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <jansson.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_util.h"
#include "parse/jscan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* jansson's verdict: 1, 0, or -1 where JSON and jansson differ by design (number range). */
static int jansson_takes(const char *text, size_t len, size_t flags)
{
	json_error_t e;
	json_t *v = json_loadb(text, len, flags, &e);
	if (v) {
		json_decref(v);
		return 1;
	}
	/* its number range, and its keys that cannot hold NUL, are jansson's limits, not JSON's */
	return strstr(e.text, "too big") || strstr(e.text, "overflow") || strstr(e.text, "NUL byte") ? -1 : 0;
}

/* With the object's first member cut out, the text must read as the object without it. */
static void check_member_span(const char *text, size_t len)
{
	const char *p = tfjob__jscan_ws(text), *k_end = *p == '{' ? tfjob__jscan_ws(p + 1) : NULL;
	if (!k_end || *k_end != '"' || !(k_end = tfjob__jscan_string(k_end)))
		return;
	const char *k = tfjob__jscan_ws(p + 1);
	char key[256];
	if ((size_t)(k_end - k) >= sizeof(key))
		return;
	memcpy(key, k, (size_t)(k_end - k));
	key[k_end - k] = '\0';
	const char *a, *b;
	if (!tfjob__jscan_member_span(text, key, &a, &b))
		abort(); /* the first key of a valid object is found */
	char *cut = malloc(len + 1);
	if (!cut)
		return;
	size_t head = (size_t)(a - text), tail = len - (size_t)(b - text);
	memcpy(cut, text, head);
	memcpy(cut + head, b, tail);
	json_t *whole = json_loadb(text, len, JSON_REJECT_DUPLICATES, NULL);
	json_t *less = json_loadb(cut, head + tail, JSON_REJECT_DUPLICATES, NULL);
	char *plain = tfjob__jscan_plain_string(k, k_end);
	if (!whole || !less || !plain) /* keys with escapes are not compared here */
		goto out;
	json_object_del(whole, plain);
	if (!json_equal(whole, less))
		abort();
out:
	free(plain);
	json_decref(whole);
	json_decref(less);
	free(cut);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	if (!text)
		return 0;
	size_t len = strlen(text); /* the scanners read NUL-terminated text */
	int valid = tfjob__jscan_valid(text, len, TFJOB__JSON_MAX_DEPTH);
	int want = jansson_takes(text, len, JSON_DECODE_ANY | JSON_ALLOW_NUL);
	if (want >= 0 && valid != want)
		abort();
	if (tfjob__jscan_certain(text, len)) {
		if (jansson_takes(text, len, JSON_REJECT_DUPLICATES) != 1)
			abort();
		check_member_span(text, len);
	}
	const char *a, *b;
	tfjob__jscan_member(text, "\"metadata\"", &a, &b); /* must not read past the text */
	free(text);
	return 0;
}
