/*
 * kubeconfig loading by the Kubernetes backend (no server needed: creating a transport sends no
 * request): the outcome of every seed of fuzz/seeds/fuzz_kubeconfig, and every input kept in
 * tests/fuzz/kubeconfig (findings of fuzz/fuzz_kubeconfig.c) loads without a crash, a leak or an
 * undocumented error. Inputs follow the fuzz target's conventions: a line "#%%" separates two
 * files merged through $KUBECONFIG, a line "# context: NAME" selects the context.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "testutil.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../fuzz/fuzz_util.h"

static char *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	size_t got;
	while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += got;
		if (n + 1 == cap)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	buf[n] = '\0';
	*len = n;
	return buf;
}

static void setup(void)
{
	tu_tmpdir_make("kubeconfig");
	fuzz_kubeconfig_files(tu_write_tmp);
	unsetenv("KUBECONFIG");
	unsetenv("KUBERNETES_SERVICE_HOST");
}

static void teardown(void)
{
	tu_tmpdir_remove();
	unsetenv("KUBECONFIG");
}

struct outcome {
	int rc;
	char message[1024];
	char server[256];
	char ns[128];
};

/* Load data as the fuzz target does. */
static void load(struct outcome *out, const char *data, size_t size)
{
	char *text = fuzz_text((const uint8_t *)data, size);
	ck_assert_ptr_nonnull(text);
	struct fuzz_kubeconfig_input in;
	fuzz_kubeconfig_split(&in, text, size);
	tfjob_kube_options opts = TFJOB_KUBE_OPTIONS_INIT;
	opts.source = TFJOB_KUBE_SOURCE_KUBECONFIG;
	opts.context = in.context[0] ? in.context : NULL;
	char list[1024];
	tu_write_tmp("a.yaml", in.first, in.first_len);
	if (!in.second) {
		opts.kubeconfig = tu_tmp_path("a.yaml");
	} else {
		tu_write_tmp("b.yaml", in.second, strlen(in.second));
		snprintf(list, sizeof(list), "%s:%s:%s", tu_tmp_path("a.yaml"), tu_tmp_path("missing.yaml"),
		         tu_tmp_path("b.yaml"));
		setenv("KUBECONFIG", list, 1);
	}
	tfjob_transport *t = NULL;
	tfjob_error *err = NULL;
	memset(out, 0, sizeof(*out));
	out->rc = tfjob_kube_transport_new(&t, &opts, &err);
	if (out->rc == 0) {
		ck_assert_ptr_null(err);
		snprintf(out->server, sizeof(out->server), "%s", tfjob_kube_transport_server(t));
		snprintf(out->ns, sizeof(out->ns), "%s", tfjob_transport_namespace(t));
		ck_assert(out->server[0] && out->ns[0]);
	} else {
		ck_assert_ptr_null(t);
		ck_assert_ptr_nonnull(err);
		ck_assert_int_eq(tfjob_error_code_of(err), out->rc);
		ck_assert(tfjob_error_message(err)[0] != '\0');
		snprintf(out->message, sizeof(out->message), "%s", tfjob_error_message(err));
		/* The codes tfjob_kube_transport_new() documents for a kubeconfig. */
		ck_assert_msg(out->rc == TFJOB_ENOTFOUND || out->rc == TFJOB_EPARSE || out->rc == TFJOB_ESCHEMA ||
		              out->rc == TFJOB_EIO || out->rc == TFJOB_ELIMIT,
		              "%s: %s", tfjob_error_code_name(out->rc), out->message);
	}
	tfjob_transport_free(t);
	tfjob_error_free(err);
	unsetenv("KUBECONFIG");
	free(text);
}

static void load_file(struct outcome *out, const char *path)
{
	size_t len;
	char *data = read_all(path, &len);
	load(out, data, len);
	free(data);
}

#define ANY 1 /* any documented outcome */

static const struct seed_case {
	const char *file;
	int rc;
	const char *server_or_message; /* server on success, a piece of the message on failure */
	const char *ns;
} seeds[] = {
	{ "multi-context.yaml", 0, "https://10.0.0.1:6443", "team-a" },
	{ "select-context.yaml", 0, "https://prod.example.com:443/k8s/clusters/c-1", "default" },
	{ "token-file.yaml", 0, "https://kube.example.com", "kubeflow" },
	{ "insecure-basic.yaml", 0, "http://127.0.0.1:8080", "default" },
	{ "exec-v1.yaml", 0, "https://ABCDEF.gr7.us-west-2.eks.amazonaws.com", "default" },
	{ "json.json", 0, "https://127.0.0.1:6443", "x" },
	{ "anchors.yaml", 0, "https://c.example:6443", "default" },
	{ "merged.yaml", 0, "https://second.example:6443/prefix/", "two" },
	{ "exec-interactive-always.yaml", TFJOB_ESCHEMA, "needs interactiveMode Always", NULL },
	{ "exec-bad-version.yaml", TFJOB_ESCHEMA, "apiVersion 'client.authentication.k8s.io/v1alpha1' is not supported",
	  NULL },
	{ "auth-provider.yaml", TFJOB_ESCHEMA, "auth-provider 'gcp' is not supported; use an exec credential plugin",
	  NULL },
	{ "no-current-context.yaml", TFJOB_ENOTFOUND, "no current-context and no context given", NULL },
	{ "dangling-names.yaml", TFJOB_ENOTFOUND, "cluster \"missing\" of context \"a\" not found", NULL },
	{ "bad-base64.yaml", TFJOB_ESCHEMA, "certificate-authority-data: invalid base64", NULL },
	{ "wrong-types.yaml", TFJOB_ENOTFOUND, "no current-context", NULL },
	{ "bad-server.yaml", TFJOB_ESCHEMA, "invalid server URL 'not a url at all'", NULL },
	{ "empty.yaml", TFJOB_ENOTFOUND, "no current-context", NULL },
	{ "not-a-mapping.yaml", TFJOB_ESCHEMA, "a kubeconfig must be a mapping", NULL },
	/* Files outside the kubeconfig's directory are read as named (here /etc/passwd through
	 * "../..", and /dev/zero, which stops at the 16 MiB file limit). */
	{ "outside-paths.yaml", ANY, NULL, NULL },
};

static const char *seed_dir(void)
{
	static char path[512];
	const char *data = getenv("TFJOB_TEST_DATA");
	ck_assert_ptr_nonnull(data);
	snprintf(path, sizeof(path), "%s/../../fuzz/seeds/fuzz_kubeconfig", data);
	return path;
}

START_TEST(seed_outcomes)
{
	const struct seed_case *c = &seeds[_i];
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", seed_dir(), c->file);
	struct outcome o;
	load_file(&o, path);
	if (c->rc == ANY)
		return;
	ck_assert_msg(o.rc == c->rc, "%s: expected %s, got %s: %s", c->file, tfjob_error_code_name(c->rc),
	              tfjob_error_code_name(o.rc), o.message);
	if (c->rc == 0) {
		ck_assert_str_eq(o.server, c->server_or_message);
		ck_assert_str_eq(o.ns, c->ns);
	} else {
		ck_assert_msg(strstr(o.message, c->server_or_message) != NULL, "%s: '%s' lacks '%s'", c->file, o.message,
		              c->server_or_message);
	}
}
END_TEST

/* Every seed has a case above, so that a new seed gets an expected outcome. */
START_TEST(every_seed_has_a_case)
{
	DIR *d = opendir(seed_dir());
	ck_assert_ptr_nonnull(d);
	struct dirent *e;
	size_t files = 0;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		files++;
		int found = 0;
		for (size_t i = 0; i < sizeof(seeds) / sizeof(seeds[0]); i++)
			found |= !strcmp(seeds[i].file, e->d_name);
		ck_assert_msg(found, "fuzz seed %s has no expected outcome in tests/test_kubeconfig.c", e->d_name);
	}
	closedir(d);
	ck_assert_uint_eq(files, sizeof(seeds) / sizeof(seeds[0]));
}
END_TEST

/* Inputs the fuzzer found (tests/fuzz/kubeconfig): any documented outcome, nothing else. */
START_TEST(fuzz_regressions)
{
	char path[1024];
	const char *data = getenv("TFJOB_TEST_DATA");
	snprintf(path, sizeof(path), "%s/../fuzz/kubeconfig", data);
	DIR *d = opendir(path);
	ck_assert_ptr_nonnull(d);
	struct dirent *e;
	size_t n = 0;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.' || !strcmp(e->d_name, "README.md"))
			continue;
		char file[2048];
		snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
		struct outcome o;
		load_file(&o, file);
		n++;
	}
	closedir(d);
	ck_assert_uint_gt(n, 0);
}
END_TEST

START_TEST(auth_provider_is_refused)
{
	/* With or without other credentials, and whatever the provider: the user would otherwise be
	 * sent without the credentials it expects. No secret of the entry appears in the message. */
	static const char *const users[] = {
		"{name: u, user: {auth-provider: {name: oidc, config: {id-token: SECRET-ID-TOKEN}}}}",
		"{name: u, user: {token: SECRET-TOKEN, auth-provider: {name: azure}}}",
		"{name: u, user: {auth-provider: {config: {access-token: SECRET}}}}",
	};
	for (size_t i = 0; i < sizeof(users) / sizeof(users[0]); i++) {
		char text[1024];
		snprintf(text, sizeof(text),
		         "current-context: a\nclusters:\n- {name: c, cluster: {server: \"https://k:6443\"}}\n"
		         "users:\n- %s\ncontexts:\n- {name: a, context: {cluster: c, user: u}}\n", users[i]);
		struct outcome o;
		load(&o, text, strlen(text));
		ck_assert_int_eq(o.rc, TFJOB_ESCHEMA);
		ck_assert_ptr_nonnull(strstr(o.message, "is not supported; use an exec credential plugin"));
		ck_assert_ptr_null(strstr(o.message, "SECRET"));
	}
	/* auth-provider: null is no provider. */
	const char *text = "current-context: a\nclusters:\n- {name: c, cluster: {server: \"https://k:6443\"}}\n"
	                   "users:\n- {name: u, user: {token: t, auth-provider: null}}\n"
	                   "contexts:\n- {name: a, context: {cluster: c, user: u}}\n";
	struct outcome o;
	load(&o, text, strlen(text));
	ck_assert_int_eq(o.rc, 0);
}
END_TEST

START_TEST(secrets_stay_out_of_messages)
{
	/* Failures after the credentials were read don't echo them. */
	const char *text = "current-context: a\nclusters:\n- {name: c, cluster: {server: \"https://k:6443\"}}\n"
	                   "users:\n- {name: u, user: {token: SECRET-TOKEN, password: SECRET-PW, username: me,"
	                   " client-key-data: \"!SECRET\"}}\n"
	                   "contexts:\n- {name: a, context: {cluster: c, user: u}}\n";
	struct outcome o;
	load(&o, text, strlen(text));
	ck_assert_int_eq(o.rc, TFJOB_ESCHEMA);
	ck_assert_ptr_nonnull(strstr(o.message, "client-key-data: invalid base64"));
	ck_assert_ptr_null(strstr(o.message, "SECRET"));
}
END_TEST

/* Broken kubeconfigs with a token planted in every field a parser could quote: the syntax error
 * names the file, line and column, never the text around them. */
static const char *const broken_with_secret[] = {
	"{\"users\":[{\"name\":\"u\",\"user\":{\"token\":\"TOPSECRET\\q\"}}]}",
	"{\"users\":[{\"name\":\"u\",\"user\":{\"password\":\"TOPSECRET\" \"x\"}}]}",
	"{\"users\":[{\"name\":\"u\",\"user\":{\"client-key-data\":TOPSECRET}}]}",
	"{\"users\":[{\"name\":\"u\",\"user\":{\"token\":\"TOPSECRET\\u12\"}}]}",
	"users:\n- name: u\n  user:\n    token: \"TOPSECRET\\q\"\n",
	"users:\n- name: u\n  user: {token: TOPSECRET, password: [TOPSECRET\n",
	"users:\n- name: u\n  user:\n    client-certificate-data: 'TOPSECRET\n  - x: TOPSECRET\n",
	"users:\n- name: u\n  user:\n\ttoken: TOPSECRET\n",
	"\"TOPSECRET\n",
};

START_TEST(syntax_errors_do_not_quote_the_file)
{
	struct outcome o;
	const char *text = broken_with_secret[_i];
	load(&o, text, strlen(text));
	ck_assert_int_ne(o.rc, 0);
	ck_assert_msg(strstr(o.message, "TOPSECRET") == NULL, "case %d quotes the secret: %s", _i, o.message);
	ck_assert_msg(strstr(o.message, "not valid YAML or JSON") != NULL, "case %d: %s", _i, o.message);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kubeconfig");
	TCase *tc = tu_tcase(s, "kubeconfig", 120);
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, seed_outcomes, 0, (int)(sizeof(seeds) / sizeof(seeds[0])));
	tcase_add_test(tc, every_seed_has_a_case);
	tcase_add_test(tc, fuzz_regressions);
	tcase_add_test(tc, auth_provider_is_refused);
	tcase_add_test(tc, secrets_stay_out_of_messages);
	tcase_add_loop_test(tc, syntax_errors_do_not_quote_the_file, 0,
	                    (int)(sizeof(broken_with_secret) / sizeof(broken_with_secret[0])));
	return tu_run_global(s);
}
