/*
 * Helpers shared by the fuzz targets (and by tests/test_kubeconfig.c, which loads inputs as
 * fuzz_kubeconfig does). Header-only: every target is one translation unit.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_FUZZ_UTIL_H
#define TFJOB_FUZZ_UTIL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The input as a NUL-terminated string (bytes after an inner NUL are kept); NULL when out of
 * memory. The caller frees it. */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	if (!text)
		return NULL;
	memcpy(text, data, size);
	text[size] = '\0';
	return text;
}

/* Writes the files the fuzz_kubeconfig seeds refer to by relative path (next to the kubeconfig)
 * with write(name, text, len). */
static inline void fuzz_kubeconfig_files(void (*write)(const char *name, const char *text, size_t len))
{
	static const char pem[] = "-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n";
	static const char key[] = "-----BEGIN EC PRIVATE KEY-----\nMHcfake\n-----END EC PRIVATE KEY-----\n";
	write("ca.crt", pem, sizeof(pem) - 1);
	write("client.crt", pem, sizeof(pem) - 1);
	write("client.key", key, sizeof(key) - 1);
	write("token", "fuzz-token\n", 11);
}

/* An input of fuzz_kubeconfig: one kubeconfig, or two separated by a line "#%%"; a line
 * "# context: NAME" selects a context instead of current-context. */
struct fuzz_kubeconfig_input {
	char context[64];  /* "" when the input names none */
	const char *first; /* the first file: first_len bytes (all of the input when there is one) */
	size_t first_len;
	const char *second; /* the second file (to the end of text), or NULL */
};

/* Split text (size bytes and a NUL, as fuzz_text makes it) by those conventions. */
static inline void fuzz_kubeconfig_split(struct fuzz_kubeconfig_input *in, const char *text, size_t size)
{
	in->context[0] = '\0';
	/* "# context: NAME" anywhere (at the start of a line). */
	const char *c = !strncmp(text, "# context: ", 11) ? text : strstr(text, "\n# context: ");
	if (c) {
		c += c[0] == '\n' ? 12 : 11;
		size_t n = strcspn(c, "\r\n");
		snprintf(in->context, sizeof(in->context), "%.*s",
		         (int)(n < sizeof(in->context) - 1 ? n : sizeof(in->context) - 1), c);
	}
	const char *sep = strstr(text, "\n#%%\n");
	in->first = text;
	in->first_len = sep ? (size_t)(sep - text) + 1 : size;
	in->second = sep ? sep + 5 : NULL;
}

#endif
