/*
 * Base64 decoding, shared by the YAML reader (!!binary) and the kubeconfig loader (*-data).
 * SPDX-License-Identifier: Apache-2.0
 *
 * A file of its own so that code needing it does not link common.c's global init (and with it
 * the transport).
 */
#include "util/common.h"

static int base64_value(unsigned char c, bool url)
{
	if (c >= 'A' && c <= 'Z')
		return c - 'A';
	if (c >= 'a' && c <= 'z')
		return c - 'a' + 26;
	if (c >= '0' && c <= '9')
		return c - '0' + 52;
	if (c == '+' || (url && c == '-'))
		return 62;
	if (c == '/' || (url && c == '_'))
		return 63;
	return -1;
}

int tfjob__base64_decode_into(unsigned char *out, size_t *n, const char *text, size_t len, unsigned int flags)
{
	bool any_padding = flags & TFJOB__BASE64_ANY_PADDING;
	size_t o = 0, pads = 0;
	unsigned int acc = 0, bits = 0;
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)text[i];
		if (c == ' ' || c == '\n' || c == '\r' || c == '\t')
			continue;
		if (c == '=') {
			pads++;
			continue;
		}
		int v = base64_value(c, flags & TFJOB__BASE64_URL);
		if (v < 0 || (pads > 0 && !any_padding))
			return -1;
		acc = (acc << 6) | (unsigned int)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			out[o++] = (unsigned char)(acc >> bits);
			acc &= (1u << bits) - 1;
		}
	}
	if (pads > 2 && !any_padding)
		return -1;
	*n = o;
	return 0;
}
