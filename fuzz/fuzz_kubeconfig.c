/*
 * Fuzz target: kubeconfig loading by the Kubernetes backend (lib/transport/kubeconfig.c through
 * tfjob_kube_transport_new(): parse, merge, resolve the context, read the referenced files,
 * decode the *-data fields, check the exec plugin entry, build the server URL).
 *
 * fuzz-link: transport
 * fuzz-ldflags: -Wl,--wrap=fopen
 *
 * Input: one kubeconfig, or two separated by a line "#%%" (then merged through $KUBECONFIG,
 * first wins, with a missing file between them). A line "# context: NAME" selects a context
 * instead of current-context. Both markers are YAML comments, so every seed stays a real
 * kubeconfig.
 *
 * Nothing here touches the network (creating a transport sends no request) or a file outside a
 * private temporary directory: fopen is wrapped at link time, and while the library runs it
 * opens only files under that directory, read-only, without "..". The directory holds the
 * files seeds refer to by relative path (ca.crt, client.crt, client.key, token).
 * Properties: no crash, leak or hang; a failure has a message and a documented code; a success
 * has a server URL and a namespace. Also: base64 decode(encode(x)) == x on the raw input.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <curl/curl.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <tfjob/tfjob.h>

#include "fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Internal helpers of the transport archive (lib/transport/kube_internal.h has curl types). */
int tfjob__base64_decode(char **out, size_t *len, const char *text, const char *what, tfjob_error **err);
char *tfjob__base64_encode(const char *data, size_t len);

FILE *__real_fopen(const char *path, const char *mode);
FILE *__wrap_fopen(const char *path, const char *mode);

static char dir[64];
static size_t dir_len;
static int guard; /* 1 while the library runs: only files of dir may be opened */

FILE *__wrap_fopen(const char *path, const char *mode)
{
	if (guard && (strncmp(path, dir, dir_len) != 0 || path[dir_len] != '/' || strstr(path, "/..") != NULL ||
	              mode[0] != 'r' || strchr(mode, '+') != NULL)) {
		errno = EACCES;
		return NULL;
	}
	return __real_fopen(path, mode);
}

static void write_file(const char *name, const char *text, size_t len)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = __real_fopen(path, "wb");
	if (!f || fwrite(text, 1, len, f) != len || fclose(f) != 0)
		abort();
}

static void cleanup(void)
{
	static const char *const names[] = { "ca.crt", "client.crt", "client.key", "token", "a.yaml", "b.yaml", NULL };
	char path[128];
	for (int i = 0; names[i]; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	snprintf(dir, sizeof(dir), "/tmp/tfjob-fuzz-kubeconfig-XXXXXX");
	if (!mkdtemp(dir))
		abort();
	dir_len = strlen(dir);
	atexit(cleanup);
	fuzz_kubeconfig_files(write_file);
	/* Neither the environment nor the home directory may bring in other files. */
	unsetenv("KUBERNETES_SERVICE_HOST");
	setenv("HOME", dir, 1);
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK)
		abort();
	return 0;
}

static int documented(int code)
{
	return code == TFJOB_ENOTFOUND || code == TFJOB_EPARSE || code == TFJOB_ESCHEMA || code == TFJOB_EIO ||
	       code == TFJOB_ELIMIT;
}

static void load(const char *kubeconfig, const char *context)
{
	tfjob_kube_options opts = TFJOB_KUBE_OPTIONS_INIT;
	opts.source = TFJOB_KUBE_SOURCE_KUBECONFIG;
	opts.kubeconfig = kubeconfig;
	opts.context = context;
	tfjob_transport *t = NULL;
	tfjob_error *err = NULL;
	guard = 1;
	int rc = tfjob_kube_transport_new(&t, &opts, &err);
	guard = 0;
	if (rc == 0) {
		const char *server = tfjob_kube_transport_server(t);
		const char *ns = tfjob_transport_namespace(t);
		if (!server || !server[0] || !ns || !ns[0] || err)
			abort();
		tfjob_transport_free(t);
		return;
	}
	if (t || !err || !tfjob_error_message(err)[0] || tfjob_error_code_of(err) != rc || !documented(rc)) {
		fprintf(stderr, "kubeconfig: %s: %s\n", tfjob_error_code_name(rc), err ? tfjob_error_message(err) : "(no error)");
		abort();
	}
	tfjob_error_free(err);
}

static void base64_round_trip(const uint8_t *data, size_t size)
{
	char *enc = tfjob__base64_encode((const char *)data, size);
	if (!enc)
		return;
	char *dec = NULL;
	size_t n = 0;
	if (tfjob__base64_decode(&dec, &n, enc, "fuzz", NULL) != 0 || n != size || (size && memcmp(dec, data, size)))
		abort();
	free(dec);
	free(enc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = fuzz_text(data, size);
	if (!text)
		return 0;
	struct fuzz_kubeconfig_input in;
	fuzz_kubeconfig_split(&in, text, size);
	const char *context = in.context[0] ? in.context : NULL;
	char a[128], b[128], list[512];
	snprintf(a, sizeof(a), "%s/a.yaml", dir);
	snprintf(b, sizeof(b), "%s/b.yaml", dir);
	/* One file: the bytes as they are, NULs included (the file is what the loader reads). */
	write_file("a.yaml", in.first, in.first_len);
	if (!in.second) {
		load(a, context);
	} else {
		write_file("b.yaml", in.second, strlen(in.second));
		snprintf(list, sizeof(list), "%s:%s/missing.yaml:%s", a, dir, b);
		setenv("KUBECONFIG", list, 1);
		load(NULL, context);
		unsetenv("KUBECONFIG");
	}
	base64_round_trip(data, size);
	free(text);
	return 0;
}
