/*
 * The Kubernetes REST backend against tests/transport/fault_server.py (plain HTTP and HTTPS with
 * a generated CA, server and client certificate): kubeconfig loading and merging, exec plugins,
 * in-cluster configuration, every verb, error mapping, retries, rate limiting, watches.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "testutil.h"
#include "transport/fault.h"

static struct fault_server plain, tls;
static char *dir;
static const tfjob_resource PODS = TFJOB_RESOURCE_PODS_INIT;
static const tfjob_resource TFJOBS = TFJOB_RESOURCE_TFJOBS_INIT;

static char *path_in(const char *name)
{
	static char buf[8][1024];
	static int next;
	char *p = buf[next++ % 8];
	snprintf(p, 1024, "%s/%s", dir, name);
	return p;
}

static char *file_b64(const char *name)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "base64 -w0 '%s'", path_in(name));
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	static char out[8][16384];
	static int next;
	char *o = out[next++ % 8];
	size_t n = fread(o, 1, 16383, p);
	o[n] = '\0';
	pclose(p);
	return o;
}

static void make_certs(void)
{
	char cmd[4096];
	snprintf(cmd, sizeof(cmd),
	         "cd '%s' && "
	         "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout ca.key -out ca.crt "
	         "-days 2 -subj /CN=tfjob-test-ca && "
	         "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout server.key -out server.csr "
	         "-subj /CN=kube.test && "
	         "printf 'subjectAltName=DNS:kube.test,IP:127.0.0.1\\n' > san.ext && "
	         "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out server.crt -days 2 "
	         "-extfile san.ext && "
	         "openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -keyout client.key -out client.csr "
	         "-subj /CN=tfjob-test && "
	         "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out client.crt -days 2",
	         dir);
	char quiet[4200];
	snprintf(quiet, sizeof(quiet), "(%s) >/dev/null 2>&1", cmd);
	ck_assert_msg(system(quiet) == 0, "openssl failed");
}

static void setup(void)
{
	tfjob_global_init();
	dir = make_temp_dir();
	make_certs();
	fault_start(&plain, dir, NULL, NULL, NULL);
	fault_start(&tls, dir, path_in("server.crt"), path_in("server.key"), path_in("ca.crt"));
}

static void teardown(void)
{
	fault_stop(&plain);
	fault_stop(&tls);
	rm_rf(dir);
	free(dir);
	tfjob_global_cleanup();
}

static void each_setup(void)
{
	fault_reset(&plain);
	fault_reset(&tls);
	unsetenv("KUBECONFIG");
	unsetenv("KUBERNETES_SERVICE_HOST");
	unsetenv("KUBERNETES_SERVICE_PORT");
}

/* A one-context kubeconfig: cluster_extra and user are YAML lines (already indented). */
static const char *write_kubeconfig(const char *name, const char *server, const char *cluster_extra, const char *user,
                                    const char *ns)
{
	char text[32768];
	/* A kubeconfig cut short would fail the test for the wrong reason: too long is an error. */
	int n = snprintf(text, sizeof(text),
	                 "apiVersion: v1\nkind: Config\ncurrent-context: main\n"
	                 "clusters:\n- name: c\n  cluster:\n    server: %s\n%s"
	                 "users:\n- name: u\n  user:\n%s"
	                 "contexts:\n- name: main\n  context:\n    cluster: c\n    user: u\n%s%s%s",
	                 server, cluster_extra ? cluster_extra : "", user ? user : "    {}\n",
	                 ns ? "    namespace: " : "", ns ? ns : "", ns ? "\n" : "");
	ck_assert_msg(n >= 0 && (size_t)n < sizeof(text), "kubeconfig %s: %d bytes do not fit in %zu", name, n,
	              sizeof(text));
	const char *p = path_in(name);
	write_text(p, text);
	return p;
}

static tfjob_transport *kube_with(const tfjob_kube_options *opts)
{
	tfjob_transport *t = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_kube_transport_new(&t, opts, &err);
	ck_assert_msg(rc == 0, "kube: %s", tfjob_error_message(err));
	return t;
}

static tfjob_kube_options fast_options(const char *kubeconfig)
{
	tfjob_kube_options o = TFJOB_KUBE_OPTIONS_INIT;
	o.kubeconfig = kubeconfig;
	o.qps = -1;
	o.retry_base_ms = 10;
	o.max_retries = 3;
	o.request_timeout_ms = 5000;
	return o;
}

static tfjob_transport *kube_plain(const char *user)
{
	tfjob_kube_options o = fast_options(write_kubeconfig("plain.yaml", plain.url, NULL, user, NULL));
	return kube_with(&o);
}

static json_t *log_entry(struct fault_server *fs, size_t i)
{
	json_t *log = fault_log(fs);
	json_t *e = json_incref(json_array_get(log, i));
	json_decref(log);
	ck_assert_msg(e != NULL, "no request %zu in the log", i);
	return e;
}

static size_t log_count(struct fault_server *fs)
{
	json_t *log = fault_log(fs);
	size_t n = json_array_size(log);
	json_decref(log);
	return n;
}

static const char *field(json_t *e, const char *key) { return json_string_value(json_object_get(e, key)); }

#define STATUS(code, reason, msg) \
	"{\"kind\":\"Status\",\"apiVersion\":\"v1\",\"status\":\"Failure\",\"code\":" #code ",\"reason\":\"" reason \
	"\",\"message\":\"" msg "\"}"

/* ---- configuration ---- */

START_TEST(kubeconfig_merge_and_contexts)
{
	char text[4096];
	mkdir(path_in("one"), 0700);
	mkdir(path_in("two"), 0700);
	snprintf(text, sizeof(text),
	         "current-context: a\nclusters:\n- name: c1\n  cluster:\n    server: %s\n"
	         "users:\n- name: u1\n  user:\n    token: first\n"
	         "contexts:\n- name: a\n  context: {cluster: c1, user: u1, namespace: team-a}\n", plain.url);
	write_text(path_in("one/config"), text);
	snprintf(text, sizeof(text),
	         "current-context: b\nclusters:\n- name: c1\n  cluster:\n    server: http://ignored.invalid\n"
	         "- name: c2\n  cluster:\n    server: %s/prefix/\n"
	         "users:\n- name: u1\n  user:\n    token: ignored\n- name: u2\n  user:\n    tokenFile: tok.txt\n"
	         "contexts:\n- name: b\n  context: {cluster: c2, user: u2}\n", plain.url);
	write_text(path_in("two/config"), text);
	write_text(path_in("two/tok.txt"), "from-file\n");
	snprintf(text, sizeof(text), "%s:%s:%s", path_in("missing"), path_in("one/config"), path_in("two/config"));
	setenv("KUBECONFIG", text, 1);

	tfjob_kube_options o = fast_options(NULL);
	tfjob_transport *t = kube_with(&o);
	ck_assert(tfjob_kube_transport_is(t));
	ck_assert_str_eq(tfjob_kube_transport_server(t), plain.url);
	ck_assert_str_eq(tfjob_transport_namespace(t), "team-a");
	fault_rules(&plain, "[{\"path\":\"*\",\"times\":-1,\"body\":{\"kind\":\"Pod\"}}]");
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "x", NULL), 0);
	json_t *e = log_entry(&plain, 0);
	ck_assert_str_eq(field(e, "auth"), "Bearer first");
	ck_assert_str_eq(field(e, "path"), "/api/v1/namespaces/team-a/pods/x");
	json_decref(e);
	tfjob_transport_free(t);

	/* Context b: the second file's cluster (with a path prefix) and the token file next to it. */
	o.context = "b";
	o.namespace_name = "override";
	t = kube_with(&o);
	ck_assert_str_eq(tfjob_transport_namespace(t), "override");
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &TFJOBS, NULL, "j", NULL), 0);
	e = log_entry(&plain, 1);
	ck_assert_str_eq(field(e, "auth"), "Bearer from-file");
	ck_assert_str_eq(field(e, "path"), "/prefix/apis/kubeflow.org/v1/namespaces/override/tfjobs/j");
	json_decref(e);
	tfjob_transport_free(t);

	/* Errors: unknown context, missing explicit file, nothing at all. */
	tfjob_error *err = NULL;
	o.context = "nope";
	ck_assert_int_eq(tfjob_kube_transport_new(&t, &o, &err), TFJOB_ENOTFOUND);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "context \"nope\" not found"));
	tfjob_error_free(err);
	o = fast_options(path_in("does-not-exist"));
	ck_assert_int_eq(tfjob_kube_transport_new(&t, &o, &err), TFJOB_EIO);
	tfjob_error_free(err);
	unsetenv("KUBECONFIG");
	setenv("HOME", dir, 1);
	o = fast_options(NULL);
	o.source = TFJOB_KUBE_SOURCE_KUBECONFIG;
	ck_assert_int_eq(tfjob_kube_transport_new(&t, &o, &err), TFJOB_ENOTFOUND);
	tfjob_error_free(err);
	/* ~/.kube/config */
	mkdir(path_in(".kube"), 0700);
	snprintf(text, sizeof(text), "%s/.kube/config", dir);
	rename(path_in("one/config"), text);
	t = kube_with(&o);
	ck_assert_str_eq(tfjob_transport_namespace(t), "team-a");
	tfjob_transport_free(t);
	/* Not YAML. */
	write_text(path_in("bad.yaml"), "clusters: [\n");
	o = fast_options(path_in("bad.yaml"));
	ck_assert_int_eq(tfjob_kube_transport_new(&t, &o, &err), TFJOB_EPARSE);
	tfjob_error_free(err);
	o.version = 9;
	ck_assert_int_eq(tfjob_kube_transport_new(&t, &o, NULL), TFJOB_EVERSION);
}
END_TEST

START_TEST(in_cluster)
{
	mkdir(path_in("sa"), 0700);
	write_text(path_in("sa/token"), "sa-token-1");
	write_text(path_in("sa/namespace"), "kubeflow\n");
	char cmd[2048];
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", path_in("ca.crt"), path_in("sa/ca.crt"));
	ck_assert_int_eq(system(cmd), 0);
	char port[16];
	snprintf(port, sizeof(port), "%d", tls.port);
	setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", port, 1);
	tfjob_kube_options o = fast_options(NULL);
	o.source = TFJOB_KUBE_SOURCE_IN_CLUSTER;
	o.in_cluster_dir = path_in("sa");
	tfjob_transport *t = kube_with(&o);
	ck_assert_str_eq(tfjob_transport_namespace(t), "kubeflow");
	fault_rules(&tls, "[{\"path\":\"*\",\"times\":-1,\"require_token\":\"sa-token-1\",\"body\":{}}]");
	tfjob_error *err = NULL;
	int rc = tfjob_transport_get(NULL, t, &PODS, NULL, "p", &err);
	ck_assert_msg(rc == 0, "in-cluster get: %s", tfjob_error_message(err));
	/* The token rotates: a 401 makes the backend read it again. */
	write_text(path_in("sa/token"), "sa-token-2");
	fault_reset(&tls);
	fault_rules(&tls, "[{\"path\":\"*\",\"times\":-1,\"require_token\":\"sa-token-2\",\"body\":{}}]");
	rc = tfjob_transport_get(NULL, t, &PODS, NULL, "p", &err);
	ck_assert_msg(rc == 0, "after rotation: %s", tfjob_error_message(err));
	ck_assert_uint_eq(log_count(&tls), 2);
	tfjob_transport_free(t);
	/* IPv6 service address. */
	setenv("KUBERNETES_SERVICE_HOST", "fd00::1", 1);
	setenv("KUBERNETES_SERVICE_PORT", "443", 1);
	t = kube_with(&o);
	ck_assert_str_eq(tfjob_kube_transport_server(t), "https://[fd00::1]:443");
	tfjob_transport_free(t);
	/* AUTO falls back to in-cluster when no kubeconfig exists. */
	setenv("HOME", path_in("empty-home"), 1);
	o.source = TFJOB_KUBE_SOURCE_AUTO;
	t = kube_with(&o);
	ck_assert_str_eq(tfjob_kube_transport_server(t), "https://[fd00::1]:443");
	tfjob_transport_free(t);
	unsetenv("KUBERNETES_SERVICE_HOST");
	o.source = TFJOB_KUBE_SOURCE_IN_CLUSTER;
	ck_assert_int_eq(tfjob_kube_transport_new(&t, &o, &err), TFJOB_ENOTFOUND);
	tfjob_error_free(err);
}
END_TEST

START_TEST(tls_data_files_and_server_name)
{
	char extra[20000], user[20000];
	fault_rules(&tls, "[{\"path\":\"*\",\"times\":-1,\"body\":{\"kind\":\"Pod\"}}]");
	/* *-data fields. */
	snprintf(extra, sizeof(extra), "    certificate-authority-data: %s\n", file_b64("ca.crt"));
	snprintf(user, sizeof(user), "    client-certificate-data: %s\n    client-key-data: %s\n", file_b64("client.crt"),
	         file_b64("client.key"));
	tfjob_kube_options o = fast_options(write_kubeconfig("tls1.yaml", tls.url, extra, user, NULL));
	tfjob_transport *t = kube_with(&o);
	tfjob_error *err = NULL;
	int rc = tfjob_transport_get(NULL, t, &PODS, NULL, "p", &err);
	ck_assert_msg(rc == 0, "tls data: %s", tfjob_error_message(err));
	json_t *e = log_entry(&tls, 0);
	ck_assert_str_eq(field(e, "client_cn"), "tfjob-test");
	json_decref(e);
	tfjob_transport_free(t);
	/* File fields, relative to the kubeconfig. */
	snprintf(user, sizeof(user), "    client-certificate: client.crt\n    client-key: client.key\n");
	o = fast_options(write_kubeconfig("tls2.yaml", tls.url, "    certificate-authority: ca.crt\n", user, NULL));
	t = kube_with(&o);
	rc = tfjob_transport_get(NULL, t, &PODS, NULL, "p", &err);
	ck_assert_msg(rc == 0, "tls files: %s", tfjob_error_message(err));
	tfjob_transport_free(t);
	/* No CA: verification fails (no retry), a network error with curl's text. */
	o = fast_options(write_kubeconfig("tls3.yaml", tls.url, NULL, NULL, NULL));
	t = kube_with(&o);
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "p", &err), TFJOB_ENETWORK);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "GET /api/v1/namespaces/default/pods/p: "));
	tfjob_error_free(err);
	tfjob_transport_free(t);
	/* insecure-skip-tls-verify. */
	o = fast_options(write_kubeconfig("tls4.yaml", tls.url, "    insecure-skip-tls-verify: true\n", NULL, NULL));
	t = kube_with(&o);
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "p", NULL), 0);
	tfjob_transport_free(t);
	/* The certificate does not name "localhost": tls-server-name makes it verify. */
	char url[128];
	snprintf(url, sizeof(url), "https://localhost:%d", tls.port);
	o = fast_options(write_kubeconfig("tls5.yaml", url, "    certificate-authority: ca.crt\n", NULL, NULL));
	t = kube_with(&o);
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "p", NULL), TFJOB_ENETWORK);
	tfjob_transport_free(t);
	o = fast_options(write_kubeconfig("tls6.yaml", url, "    certificate-authority: ca.crt\n    tls-server-name: kube.test\n",
	                                  NULL, NULL));
	t = kube_with(&o);
	fault_reset(&tls);
	fault_rules(&tls, "[{\"path\":\"*\",\"times\":-1,\"body\":{\"kind\":\"Pod\"}}]");
	rc = tfjob_transport_get(NULL, t, &PODS, NULL, "p", &err);
	ck_assert_msg(rc == 0, "tls-server-name: %s", tfjob_error_message(err));
	/* Only SNI and verification change: the Host header is the server's. */
	e = log_entry(&tls, 0);
	ck_assert_str_eq(field(e, "host"), url + strlen("https://"));
	json_decref(e);
	tfjob_transport_free(t);
	/* Bad base64. */
	o = fast_options(write_kubeconfig("tls7.yaml", tls.url, "    certificate-authority-data: '!!!'\n", NULL, NULL));
	ck_assert_int_eq(tfjob_kube_transport_new(&t, &o, &err), TFJOB_ESCHEMA);
	tfjob_error_free(err);
}
END_TEST

/* A GET of pod p that the log's request i shows came through the plain server as a proxy, for
   kube.invalid:6443. */
static void get_through_proxy(tfjob_transport *t, size_t i)
{
	tfjob_error *err = NULL;
	int rc = tfjob_transport_get(NULL, t, &PODS, NULL, "p", &err);
	ck_assert_msg(rc == 0, "through the proxy: %s", tfjob_error_message(err));
	json_t *e = log_entry(&plain, i);
	ck_assert(json_is_true(json_object_get(e, "proxied")));
	ck_assert_str_eq(field(e, "host"), "kube.invalid:6443");
	json_decref(e);
}

START_TEST(proxy_url)
{
	char extra[256];
	snprintf(extra, sizeof(extra), "    proxy-url: %s\n", plain.url);
	tfjob_kube_options o = fast_options(write_kubeconfig("proxy.yaml", "http://kube.invalid:6443", extra, NULL, NULL));
	tfjob_transport *t = kube_with(&o);
	fault_rules(&plain, "[{\"path\":\"/api/v1/namespaces/default/pods/p\",\"body\":{}}]");
	get_through_proxy(t, 0);
	tfjob_transport_free(t);
}
END_TEST

/* The environment's proxy, read when the transport is made, with libcurl's names and no_proxy. */
START_TEST(proxy_from_environment)
{
	tfjob_error *err = NULL;
	/* http_proxy for an http server: the request goes through it. */
	setenv("http_proxy", plain.url, 1);
	tfjob_kube_options o = fast_options(write_kubeconfig("envproxy.yaml", "http://kube.invalid:6443", NULL, NULL, NULL));
	tfjob_transport *t = kube_with(&o);
	fault_rules(&plain, "[{\"path\":\"/api/v1/namespaces/default/pods/p\",\"times\":-1,\"body\":{}}]");
	get_through_proxy(t, 0);
	/* Read once: a change after the transport was made is not seen (kube.invalid is reached only
	   through the first proxy; the log is not read here: the test's own client would take the new
	   proxy). */
	setenv("http_proxy", "http://127.0.0.1:1", 1);
	int rc = tfjob_transport_get(NULL, t, &PODS, NULL, "p", &err);
	ck_assert_msg(rc == 0, "http_proxy changed later: %s", tfjob_error_message(err));
	tfjob_transport_free(t);
	/* A dead proxy, but the server is in NO_PROXY: the request goes direct. */
	setenv("NO_PROXY", "127.0.0.1", 1);
	fault_reset(&plain);
	fault_rules(&plain, "[{\"path\":\"*\",\"times\":-1,\"body\":{}}]");
	t = kube_plain(NULL);
	rc = tfjob_transport_get(NULL, t, &PODS, NULL, "p", &err);
	ck_assert_msg(rc == 0, "NO_PROXY: %s", tfjob_error_message(err));
	json_t *e = log_entry(&plain, 0);
	ck_assert(!json_is_true(json_object_get(e, "proxied")));
	json_decref(e);
	tfjob_transport_free(t);
	/* Without NO_PROXY the dead proxy is used, and fails. */
	unsetenv("NO_PROXY");
	o = fast_options(write_kubeconfig("plain.yaml", plain.url, NULL, NULL, NULL));
	o.max_retries = -1;
	t = kube_with(&o);
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "p", NULL), TFJOB_ENETWORK);
	tfjob_transport_free(t);
	/* An empty variable means no proxy; HTTP_PROXY (upper case) is never read. */
	setenv("http_proxy", "", 1);
	setenv("HTTP_PROXY", "http://127.0.0.1:1", 1);
	setenv("ALL_PROXY", "http://127.0.0.1:1", 1);
	t = kube_with(&o);
	rc = tfjob_transport_get(NULL, t, &PODS, NULL, "p", &err);
	ck_assert_msg(rc == 0, "empty http_proxy: %s", tfjob_error_message(err));
	tfjob_transport_free(t);
	/* Unset, ALL_PROXY applies. */
	unsetenv("http_proxy");
	t = kube_with(&o);
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "p", NULL), TFJOB_ENETWORK);
	tfjob_transport_free(t);
	unsetenv("HTTP_PROXY");
	unsetenv("ALL_PROXY");
	/* kubeconfig's proxy-url is used for every host, as client-go uses it: NO_PROXY is not read. */
	setenv("NO_PROXY", "kube.invalid", 1);
	char extra[256];
	snprintf(extra, sizeof(extra), "    proxy-url: %s\n", plain.url);
	o = fast_options(write_kubeconfig("proxy.yaml", "http://kube.invalid:6443", extra, NULL, NULL));
	t = kube_with(&o);
	fault_reset(&plain);
	fault_rules(&plain, "[{\"path\":\"*\",\"times\":-1,\"body\":{}}]");
	get_through_proxy(t, 0);
	tfjob_transport_free(t);
	unsetenv("NO_PROXY");
}
END_TEST

/* ---- exec plugins ---- */

static void write_plugin(const char *api_version, const char *expiry)
{
	char text[4096];
	snprintf(text, sizeof(text),
	         "#!/bin/sh\n"
	         "n=$(cat '%1$s/exec-count' 2>/dev/null || echo 0)\n"
	         "n=$((n+1))\n"
	         "echo $n > '%1$s/exec-count'\n"
	         "echo \"$KUBERNETES_EXEC_INFO\" > '%1$s/exec-info'\n"
	         "echo \"$@|$PLUGIN_FOO\" > '%1$s/exec-args'\n"
	         "printf '{\"apiVersion\":\"%2$s\",\"kind\":\"ExecCredential\",\"status\":{\"token\":\"tok-%%s\"%3$s}}' $n\n",
	         dir, api_version, expiry);
	write_text(path_in("plugin.sh"), text);
	chmod(path_in("plugin.sh"), 0755);
	unlink(path_in("exec-count"));
}

static const char *exec_user(const char *api_version)
{
	static char user[2048];
	snprintf(user, sizeof(user),
	         "    exec:\n      apiVersion: %s\n      command: ./plugin.sh\n      args: [\"--flag\", \"two words\"]\n"
	         "      env:\n      - name: PLUGIN_FOO\n        value: bar\n      provideClusterInfo: true\n",
	         api_version);
	return user;
}

static char *slurp(const char *name)
{
	FILE *f = fopen(path_in(name), "r");
	ck_assert_ptr_nonnull(f);
	static char buf[8192];
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

START_TEST(exec_plugin)
{
	write_plugin("client.authentication.k8s.io/v1", "");
	tfjob_kube_options o =
		fast_options(write_kubeconfig("exec.yaml", plain.url, NULL, exec_user("client.authentication.k8s.io/v1"), NULL));
	tfjob_transport *t = kube_with(&o);
	fault_rules(&plain, "[{\"path\":\"*\",\"times\":2,\"require_token\":\"tok-1\",\"body\":{}},"
	                    "{\"path\":\"*\",\"times\":-1,\"require_token\":\"tok-2\",\"body\":{}}]");
	tfjob_error *err = NULL;
	int rc = tfjob_transport_get(NULL, t, &PODS, NULL, "p", &err);
	ck_assert_msg(rc == 0, "exec: %s", tfjob_error_message(err));
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "p", NULL), 0);
	ck_assert_str_eq(slurp("exec-count"), "1\n"); /* cached */
	ck_assert_str_eq(slurp("exec-args"), "--flag two words|bar\n");
	char *info = slurp("exec-info");
	ck_assert_ptr_nonnull(strstr(info, "\"apiVersion\":\"client.authentication.k8s.io/v1\""));
	ck_assert_ptr_nonnull(strstr(info, "\"interactive\":false"));
	ck_assert_ptr_nonnull(strstr(info, plain.url)); /* provideClusterInfo */
	ck_assert_ptr_null(getenv("KUBERNETES_EXEC_INFO"));
	ck_assert_ptr_null(getenv("PLUGIN_FOO"));
	/* The server stops accepting tok-1: 401, the plugin runs again, tok-2 works. */
	rc = tfjob_transport_get(NULL, t, &PODS, NULL, "p", &err);
	ck_assert_msg(rc == 0, "exec re-run: %s", tfjob_error_message(err));
	ck_assert_str_eq(slurp("exec-count"), "2\n");
	tfjob_transport_free(t);

	/* v1beta1 with an expiry in the past: the plugin runs for every request. */
	write_plugin("client.authentication.k8s.io/v1beta1", ",\"expirationTimestamp\":\"2001-01-01T00:00:00Z\"");
	o = fast_options(write_kubeconfig("exec2.yaml", plain.url, NULL, exec_user("client.authentication.k8s.io/v1beta1"), NULL));
	t = kube_with(&o);
	fault_reset(&plain);
	fault_rules(&plain, "[{\"path\":\"*\",\"times\":-1,\"body\":{}}]");
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "p", NULL), 0);
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "p", NULL), 0);
	ck_assert_str_eq(slurp("exec-count"), "2\n");
	tfjob_transport_free(t);

	/* A plugin whose apiVersion does not match, and one that fails. */
	write_plugin("client.authentication.k8s.io/v1beta1", "");
	o = fast_options(write_kubeconfig("exec3.yaml", plain.url, NULL, exec_user("client.authentication.k8s.io/v1"), NULL));
	t = kube_with(&o);
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "p", &err), TFJOB_EUNAUTHORIZED);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "does not match"));
	tfjob_error_free(err);
	tfjob_transport_free(t);
	write_text(path_in("plugin.sh"), "#!/bin/sh\nexit 3\n");
	t = kube_with(&o);
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "p", &err), TFJOB_EUNAUTHORIZED);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "failed with exit code 3"));
	tfjob_error_free(err);
	tfjob_transport_free(t);
	o = fast_options(write_kubeconfig("exec4.yaml", plain.url, NULL, exec_user("client.authentication.k8s.io/v9"), NULL));
	ck_assert_int_eq(tfjob_kube_transport_new(&t, &o, &err), TFJOB_ESCHEMA);
	tfjob_error_free(err);
	char user[4096];
	snprintf(user, sizeof(user), "%s      interactiveMode: Always\n", exec_user("client.authentication.k8s.io/v1"));
	o = fast_options(write_kubeconfig("exec5.yaml", plain.url, NULL, user, NULL));
	ck_assert_int_eq(tfjob_kube_transport_new(&t, &o, &err), TFJOB_ESCHEMA);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "interactiveMode"));
	tfjob_error_free(err);
}
END_TEST

START_TEST(token_file_reread_on_401)
{
	write_text(path_in("token"), "t1\n");
	char user[1200];
	snprintf(user, sizeof(user), "    tokenFile: %s\n", path_in("token"));
	tfjob_transport *t = kube_plain(user);
	fault_rules(&plain, "[{\"path\":\"*\",\"require_token\":\"t1\",\"body\":{}},"
	                    "{\"path\":\"*\",\"times\":-1,\"require_token\":\"t2\",\"body\":{}}]");
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "p", NULL), 0);
	write_text(path_in("token"), "t2\n");
	tfjob_error *err = NULL;
	int rc = tfjob_transport_get(NULL, t, &PODS, NULL, "p", &err);
	ck_assert_msg(rc == 0, "re-read: %s", tfjob_error_message(err));
	json_t *log = fault_log(&plain);
	ck_assert_int_eq(json_array_size(log), 3);
	ck_assert_str_eq(field(json_array_get(log, 1), "auth"), "Bearer t1");
	ck_assert_str_eq(field(json_array_get(log, 2), "auth"), "Bearer t2");
	json_decref(log);
	/* A token that stays wrong: 401 after one refresh, and the message never shows the token. */
	write_text(path_in("token"), "secret-t3\n");
	fault_reset(&plain);
	fault_rules(&plain, "[{\"path\":\"*\",\"times\":-1,\"require_token\":\"nope\",\"body\":{}}]");
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "p", &err), TFJOB_EUNAUTHORIZED);
	ck_assert_int_eq(tfjob_error_http_status(err), 401);
	ck_assert_str_eq(tfjob_error_message(err), "Unauthorized");
	ck_assert_ptr_null(strstr(tfjob_error_message(err), "secret"));
	tfjob_error_free(err);
	ck_assert_uint_eq(log_count(&plain), 2);
	tfjob_transport_free(t);
}
END_TEST

/* ---- verbs and errors ---- */

START_TEST(verbs_paths_and_bodies)
{
	tfjob_transport *t = kube_plain("    token: abc\n");
	fault_rules(&plain, "[{\"method\":\"GET\",\"path\":\"/apis/kubeflow.org/v1/namespaces/default/tfjobs\",\"body\":"
	                    "{\"kind\":\"TFJobList\",\"metadata\":{\"continue\":\"next\"},\"items\":[]}},"
	                    "{\"method\":\"POST\",\"path\":\"/apis/kubeflow.org/v1/namespaces/ml/tfjobs\",\"status\":201,\"body\":{\"metadata\":{\"name\":\"j\"}}},"
	                    "{\"method\":\"PUT\",\"path\":\"/apis/kubeflow.org/v1/namespaces/default/tfjobs/j\",\"body\":{}},"
	                    "{\"method\":\"PUT\",\"path\":\"/apis/kubeflow.org/v1/namespaces/default/tfjobs/j/status\",\"body\":{}},"
	                    "{\"method\":\"PATCH\",\"path\":\"/apis/kubeflow.org/v1/namespaces/default/tfjobs/j/status\",\"body\":{}},"
	                    "{\"method\":\"DELETE\",\"path\":\"/api/v1/namespaces/default/pods/p\",\"body\":{\"kind\":\"Status\"}},"
	                    "{\"method\":\"POST\",\"path\":\"/api/v1/namespaces/default/events\",\"status\":201,\"body\":{}},"
	                    "{\"method\":\"GET\",\"path\":\"/api/v1/namespaces\",\"body\":{}}]");
	tfjob_list_options lo = TFJOB_LIST_OPTIONS_INIT;
	lo.label_selector = "app in (a,b),!x";
	lo.field_selector = "metadata.name=j";
	lo.limit = 5;
	lo.continue_token = "tok/en";
	char *out = NULL;
	ck_assert_int_eq(tfjob_transport_list(&out, t, &TFJOBS, NULL, &lo, NULL), 0);
	ck_assert_ptr_nonnull(strstr(out, "\"continue\": \"next\""));
	tfjob_free(out);
	ck_assert_int_eq(tfjob_transport_create(&out, t, &TFJOBS, NULL, "{\"metadata\":{\"name\":\"j\",\"namespace\":\"ml\"}}", NULL), 0);
	tfjob_free(out);
	ck_assert_int_eq(tfjob_transport_update(NULL, t, &TFJOBS, NULL, "{\"metadata\":{\"name\":\"j\",\"resourceVersion\":\"7\"}}", NULL), 0);
	ck_assert_int_eq(tfjob_transport_update_status(NULL, t, &TFJOBS, NULL, "{\"metadata\":{\"name\":\"j\"},\"status\":{}}", NULL), 0);
	ck_assert_int_eq(tfjob_transport_patch(NULL, t, &TFJOBS, NULL, "j", "status", "{\"status\":{\"a\":1}}", NULL), 0);
	tfjob_delete_options d = TFJOB_DELETE_OPTIONS_INIT;
	d.propagation = TFJOB_PROPAGATION_FOREGROUND;
	d.precondition_uid = "u-1";
	d.precondition_resource_version = "9";
	d.grace_period_seconds = 0;
	ck_assert_int_eq(tfjob_transport_delete(NULL, t, &PODS, NULL, "p", &d, NULL), 0);
	ck_assert_int_eq(tfjob_transport_create_event(NULL, t, NULL, "{\"kind\":\"TFJob\",\"apiVersion\":\"kubeflow.org/v1\","
	                                              "\"metadata\":{\"name\":\"j\",\"uid\":\"u\"}}", "Normal", "Created", "ok", NULL, NULL), 0);
	static const tfjob_resource NS = TFJOB_RESOURCE_NAMESPACES_INIT;
	ck_assert_int_eq(tfjob_transport_list(NULL, t, &NS, "ignored", NULL, NULL), 0);

	json_t *log = fault_log(&plain);
	ck_assert_int_eq(json_array_size(log), 8);
	json_t *e = json_array_get(log, 0);
	ck_assert_str_eq(field(e, "query"), "labelSelector=app%20in%20%28a%2Cb%29%2C%21x&fieldSelector=metadata.name%3Dj&limit=5&continue=tok%2Fen");
	ck_assert_str_eq(field(e, "auth"), "Bearer abc");
	e = json_array_get(log, 1);
	ck_assert_str_eq(field(e, "content_type"), "application/json");
	ck_assert_ptr_nonnull(strstr(field(e, "body"), "\"name\":\"j\""));
	ck_assert_ptr_nonnull(strstr(field(json_array_get(log, 2), "body"), "\"resourceVersion\":\"7\""));
	ck_assert_str_eq(field(json_array_get(log, 4), "content_type"), "application/merge-patch+json");
	e = json_array_get(log, 5);
	json_t *body = json_loads(field(e, "body"), 0, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(body, "propagationPolicy")), "Foreground");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(body, "preconditions"), "uid")), "u-1");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(body, "preconditions"), "resourceVersion")), "9");
	ck_assert_int_eq(json_integer_value(json_object_get(body, "gracePeriodSeconds")), 0);
	json_decref(body);
	body = json_loads(field(json_array_get(log, 6), "body"), 0, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(body, "reason")), "Created");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(body, "involvedObject"), "uid")), "u");
	json_decref(body);
	json_decref(log);
	tfjob_transport_free(t);
}
END_TEST

/* reason: the Status.reason the error must carry, NULL when the answer had none. */
static void expect_error(tfjob_transport *t, const char *rule, int code, int status, const char *reason,
                         const char *message)
{
	fault_reset(&plain);
	fault_rules(&plain, rule);
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "p", &err), code);
	ck_assert_int_eq(tfjob_error_code_of(err), code);
	ck_assert_int_eq(tfjob_error_http_status(err), status);
	ck_assert_str_eq(tfjob_error_message(err), message);
	if (reason)
		ck_assert_str_eq(tfjob_error_reason(err), reason);
	else
		ck_assert_ptr_null(tfjob_error_reason(err));
	tfjob_error_free(err);
}

START_TEST(error_mapping)
{
	tfjob_transport *t = kube_plain(NULL);
	expect_error(t, "[{\"status\":404,\"path\":\"*\",\"body\":" STATUS(404, "NotFound", "pods \\\"p\\\" not found") "}]",
	             TFJOB_ENOTFOUND, 404, "NotFound", "pods \"p\" not found");
	expect_error(t, "[{\"status\":409,\"path\":\"*\",\"body\":" STATUS(409, "AlreadyExists", "pods \\\"p\\\" already exists") "}]",
	             TFJOB_EEXISTS, 409, "AlreadyExists", "pods \"p\" already exists");
	expect_error(t, "[{\"status\":409,\"path\":\"*\",\"body\":" STATUS(409, "Conflict", "the object has been modified") "}]",
	             TFJOB_ECONFLICT, 409, "Conflict", "the object has been modified");
	expect_error(t, "[{\"status\":410,\"path\":\"*\",\"body\":" STATUS(410, "Expired", "too old resource version: 1 (5)") "}]",
	             TFJOB_EGONE, 410, "Expired", "too old resource version: 1 (5)");
	expect_error(t, "[{\"status\":410,\"path\":\"*\",\"body\":" STATUS(410, "Gone", "the resource is gone") "}]",
	             TFJOB_EGONE, 410, "Gone", "the resource is gone");
	expect_error(t, "[{\"status\":403,\"path\":\"*\",\"body\":" STATUS(403, "Forbidden", "pods \\\"p\\\" is forbidden: User \\\"bob\\\" cannot get resource \\\"pods\\\"") "}]",
	             TFJOB_EFORBIDDEN, 403, "Forbidden", "pods \"p\" is forbidden: User \"bob\" cannot get resource \"pods\"");
	expect_error(t, "[{\"status\":400,\"path\":\"*\",\"body\":" STATUS(400, "BadRequest", "bad") "}]", TFJOB_EINVAL, 400, "BadRequest", "bad");
	expect_error(t, "[{\"status\":418,\"path\":\"*\",\"body\":\"teapot\"}]", TFJOB_ERROR, 418, NULL,
	             "GET /api/v1/namespaces/default/pods/p: HTTP 418: teapot");
	/* 422 with causes. */
	fault_reset(&plain);
	fault_rules(&plain, "[{\"status\":422,\"path\":\"*\",\"body\":{\"kind\":\"Status\",\"code\":422,\"reason\":\"Invalid\","
	                    "\"message\":\"TFJob.kubeflow.org \\\"j\\\" is invalid: spec.tfReplicaSpecs: Required value\","
	                    "\"details\":{\"name\":\"j\",\"kind\":\"TFJob\",\"causes\":[{\"reason\":\"FieldValueRequired\","
	                    "\"message\":\"Required value\",\"field\":\"spec.tfReplicaSpecs\"}]}}}]");
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_transport_create(NULL, t, &TFJOBS, NULL, "{\"metadata\":{\"generateName\":\"j-\"}}", &err),
	                 TFJOB_EINVALID);
	ck_assert_int_eq(tfjob_error_http_status(err), 422);
	ck_assert_str_eq(tfjob_error_reason(err), "Invalid");
	ck_assert_str_eq(tfjob_error_message(err), "TFJob.kubeflow.org \"j\" is invalid: spec.tfReplicaSpecs: Required value");
	json_t *details = json_loads(tfjob_error_details_json(err), 0, NULL);
	json_t *cause = json_array_get(json_object_get(details, "causes"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(cause, "field")), "spec.tfReplicaSpecs");
	ck_assert_str_eq(json_string_value(json_object_get(cause, "reason")), "FieldValueRequired");
	json_decref(details);
	tfjob_error_free(err);
	tfjob_transport_free(t);
}
END_TEST

/* ---- retries ---- */

START_TEST(retry_after_and_server_errors)
{
	tfjob_transport *t = kube_plain(NULL);
	fault_rules(&plain, "[{\"status\":429,\"path\":\"*\",\"headers\":{\"Retry-After\":\"1\"},\"body\":" STATUS(429, "TooManyRequests", "slow down") "},"
	                    "{\"status\":500,\"path\":\"*\",\"body\":" STATUS(500, "InternalError", "etcd") "},"
	                    "{\"path\":\"*\",\"body\":{\"kind\":\"Pod\"}}]");
	int64_t start = time(NULL);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	tfjob_error *err = NULL;
	int rc = tfjob_transport_get(NULL, t, &PODS, NULL, "p", &err);
	clock_gettime(CLOCK_MONOTONIC, &b);
	(void)start;
	ck_assert_msg(rc == 0, "retry: %s", tfjob_error_message(err));
	double elapsed = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	ck_assert_msg(elapsed >= 0.95, "Retry-After not honoured (%.2f s)", elapsed);
	ck_assert_uint_eq(log_count(&plain), 3);
	/* Out of retries: the last error. */
	fault_reset(&plain);
	fault_rules(&plain, "[{\"status\":503,\"times\":-1,\"path\":\"*\",\"body\":" STATUS(503, "ServiceUnavailable", "down") "}]");
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "p", &err), TFJOB_ESERVER);
	ck_assert_str_eq(tfjob_error_message(err), "down");
	tfjob_error_free(err);
	ck_assert_uint_eq(log_count(&plain), 4); /* 1 + 3 retries */
	/* 429 out of retries. */
	fault_reset(&plain);
	fault_rules(&plain, "[{\"status\":429,\"times\":-1,\"path\":\"*\",\"body\":" STATUS(429, "TooManyRequests", "slow") "}]");
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "p", NULL), TFJOB_ETOOMANYREQUESTS);
	tfjob_transport_free(t);
}
END_TEST

START_TEST(create_is_never_retried_blindly)
{
	tfjob_transport *t = kube_plain(NULL);
	const char *pod = "{\"metadata\":{\"name\":\"p\"}}";
	/* Ambiguous 500: read back, absent, create again. */
	fault_rules(&plain, "[{\"method\":\"POST\",\"status\":500,\"path\":\"*\",\"body\":" STATUS(500, "InternalError", "x") "},"
	                    "{\"method\":\"GET\",\"status\":404,\"path\":\"/api/v1/namespaces/default/pods/p\",\"body\":" STATUS(404, "NotFound", "nf") "},"
	                    "{\"method\":\"POST\",\"status\":201,\"path\":\"*\",\"body\":{\"metadata\":{\"name\":\"p\",\"uid\":\"second\"}}}]");
	char *out = NULL;
	ck_assert_int_eq(tfjob_transport_create(&out, t, &PODS, NULL, pod, NULL), 0);
	ck_assert_ptr_nonnull(strstr(out, "second"));
	tfjob_free(out);
	json_t *log = fault_log(&plain);
	ck_assert_int_eq(json_array_size(log), 3);
	ck_assert_str_eq(field(json_array_get(log, 1), "method"), "GET");
	json_decref(log);
	/* A 504 after which the object exists: no second POST. */
	fault_reset(&plain);
	fault_rules(&plain, "[{\"method\":\"POST\",\"status\":504,\"path\":\"*\",\"body\":" STATUS(504, "Timeout", "t") "},"
	                    "{\"method\":\"GET\",\"path\":\"/api/v1/namespaces/default/pods/p\",\"body\":{\"metadata\":{\"name\":\"p\",\"uid\":\"first\"}}}]");
	ck_assert_int_eq(tfjob_transport_create(&out, t, &PODS, NULL, pod, NULL), 0);
	ck_assert_ptr_nonnull(strstr(out, "first"));
	tfjob_free(out);
	ck_assert_uint_eq(log_count(&plain), 2);
	/* The object found is not the one sent (it existed before with other content, or the create
	 * carried a resourceVersion the server refused): the failure stands, no second POST. */
	fault_reset(&plain);
	fault_rules(&plain, "[{\"method\":\"POST\",\"status\":500,\"path\":\"*\",\"body\":" STATUS(500, "InternalError", "resourceVersion should not be set") "},"
	                    "{\"method\":\"GET\",\"path\":\"/api/v1/namespaces/default/pods/p\",\"body\":"
	                    "{\"metadata\":{\"name\":\"p\",\"uid\":\"old\",\"resourceVersion\":\"7\"},\"spec\":{\"x\":1}}}]");
	tfjob_error *cerr = NULL;
	ck_assert_int_eq(tfjob_transport_create(&out, t, &PODS, NULL,
	                                        "{\"metadata\":{\"name\":\"p\",\"resourceVersion\":\"3\"},\"spec\":{\"x\":1}}", &cerr),
	                 TFJOB_ESERVER);
	ck_assert_str_eq(tfjob_error_message(cerr), "resourceVersion should not be set");
	tfjob_error_free(cerr);
	ck_assert_uint_eq(log_count(&plain), 2);
	/* ... and the one found holds what was sent plus the server's defaults: created. */
	fault_reset(&plain);
	fault_rules(&plain, "[{\"method\":\"POST\",\"status\":502,\"path\":\"*\",\"body\":\"<html>bad gateway</html>\"},"
	                    "{\"method\":\"GET\",\"path\":\"/api/v1/namespaces/default/pods/p\",\"body\":"
	                    "{\"metadata\":{\"name\":\"p\",\"uid\":\"mine\",\"labels\":{\"a\":\"b\"}},"
	                    "\"spec\":{\"x\":1.0,\"list\":[{\"n\":1,\"d\":2}],\"dflt\":true},\"status\":{\"phase\":\"Pending\"}}}]");
	ck_assert_int_eq(tfjob_transport_create(&out, t, &PODS, NULL,
	                                        "{\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"b\"}},"
	                                        "\"spec\":{\"x\":1,\"list\":[{\"n\":1}]},\"status\":{\"phase\":\"X\"}}", NULL), 0);
	ck_assert_ptr_nonnull(strstr(out, "mine"));
	tfjob_free(out);
	ck_assert_uint_eq(log_count(&plain), 2);
	/* The server writes quantities in canonical form ("1000m" -> "1", 2 -> "2"): still ours;
	 * a quantity of another value is not. */
	static const char *const quantity_rules =
		"[{\"method\":\"POST\",\"status\":502,\"path\":\"*\",\"body\":\"<html>bad gateway</html>\"},"
		"{\"method\":\"GET\",\"path\":\"/api/v1/namespaces/default/pods/p\",\"body\":"
		"{\"metadata\":{\"name\":\"p\",\"uid\":\"mine\"},\"spec\":{\"cpu\":\"1\",\"mem\":\"2\"}}}]";
	fault_reset(&plain);
	fault_rules(&plain, quantity_rules);
	ck_assert_int_eq(tfjob_transport_create(&out, t, &PODS, NULL,
	                                        "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"cpu\":\"1000m\",\"mem\":2}}", NULL), 0);
	tfjob_free(out);
	fault_reset(&plain);
	fault_rules(&plain, quantity_rules);
	ck_assert_int_eq(tfjob_transport_create(&out, t, &PODS, NULL,
	                                        "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"cpu\":\"999m\",\"mem\":2}}", NULL),
	                 TFJOB_ESERVER);
	/* generateName cannot be checked: the error is returned. */
	fault_reset(&plain);
	fault_rules(&plain, "[{\"method\":\"POST\",\"status\":500,\"path\":\"*\",\"body\":" STATUS(500, "InternalError", "x") "}]");
	ck_assert_int_eq(tfjob_transport_create(NULL, t, &PODS, NULL, "{\"metadata\":{\"generateName\":\"p-\"}}", NULL), TFJOB_ESERVER);
	ck_assert_uint_eq(log_count(&plain), 1);
	/* 429 means the server did nothing: a plain retry. */
	fault_reset(&plain);
	fault_rules(&plain, "[{\"method\":\"POST\",\"status\":429,\"path\":\"*\",\"body\":" STATUS(429, "TooManyRequests", "x") "},"
	                    "{\"method\":\"POST\",\"status\":201,\"path\":\"*\",\"body\":{}}]");
	ck_assert_int_eq(tfjob_transport_create(NULL, t, &PODS, NULL, pod, NULL), 0);
	ck_assert_uint_eq(log_count(&plain), 2);
	/* A PUT repeated after an ambiguous failure meets its own first attempt (409): the stored
	 * object holds what was sent, so the update happened. A real conflict stays one. */
	const char *job = "{\"metadata\":{\"name\":\"j\",\"resourceVersion\":\"5\",\"labels\":{\"a\":\"b\"}},\"spec\":{\"x\":1}}";
	fault_reset(&plain);
	fault_rules(&plain, "[{\"method\":\"PUT\",\"status\":502,\"path\":\"*\",\"body\":" STATUS(502, "InternalError", "x") "},"
	                    "{\"method\":\"PUT\",\"status\":409,\"path\":\"*\",\"body\":" STATUS(409, "Conflict", "modified") "},"
	                    "{\"method\":\"GET\",\"path\":\"/api/v1/namespaces/default/pods/j\",\"body\":"
	                    "{\"metadata\":{\"name\":\"j\",\"resourceVersion\":\"6\",\"labels\":{\"a\":\"b\"}},\"spec\":{\"x\":1},\"status\":{}}}]");
	ck_assert_int_eq(tfjob_transport_update(&out, t, &PODS, NULL, job, NULL), 0);
	ck_assert_ptr_nonnull(strstr(out, "\"6\""));
	tfjob_free(out);
	fault_reset(&plain);
	fault_rules(&plain, "[{\"method\":\"PUT\",\"status\":502,\"path\":\"*\",\"body\":" STATUS(502, "InternalError", "x") "},"
	                    "{\"method\":\"PUT\",\"status\":409,\"path\":\"*\",\"body\":" STATUS(409, "Conflict", "modified") "},"
	                    "{\"method\":\"GET\",\"path\":\"/api/v1/namespaces/default/pods/j\",\"body\":"
	                    "{\"metadata\":{\"name\":\"j\",\"resourceVersion\":\"6\"},\"spec\":{\"x\":2}}}]");
	ck_assert_int_eq(tfjob_transport_update(NULL, t, &PODS, NULL, job, NULL), TFJOB_ECONFLICT);
	/* Without an ambiguous failure a 409 is never second-guessed. */
	fault_reset(&plain);
	fault_rules(&plain, "[{\"method\":\"PUT\",\"status\":409,\"path\":\"*\",\"body\":" STATUS(409, "Conflict", "modified") "}]");
	ck_assert_int_eq(tfjob_transport_update(NULL, t, &PODS, NULL, job, NULL), TFJOB_ECONFLICT);
	ck_assert_uint_eq(log_count(&plain), 1);
	/* A DELETE retried after an ambiguous failure that finds the object gone has succeeded. */
	fault_reset(&plain);
	fault_rules(&plain, "[{\"method\":\"DELETE\",\"status\":500,\"path\":\"*\",\"body\":" STATUS(500, "InternalError", "x") "},"
	                    "{\"method\":\"DELETE\",\"status\":404,\"path\":\"*\",\"body\":" STATUS(404, "NotFound", "gone") "}]");
	ck_assert_int_eq(tfjob_transport_delete(NULL, t, &PODS, NULL, "p", NULL, NULL), 0);
	tfjob_transport_free(t);
}
END_TEST

START_TEST(network_errors_and_timeouts)
{
	/* Nothing listens on port 1. */
	tfjob_kube_options o = fast_options(write_kubeconfig("dead.yaml", "http://127.0.0.1:1", NULL, NULL, NULL));
	tfjob_transport *t = kube_with(&o);
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "p", &err), TFJOB_ENETWORK);
	ck_assert_int_eq(tfjob_error_http_status(err), 0);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "GET /api/v1/namespaces/default/pods/p: "));
	tfjob_error_free(err);
	tfjob_transport_free(t);
	/* A slow server and a short request timeout. */
	o = fast_options(write_kubeconfig("slow.yaml", plain.url, NULL, NULL, NULL));
	o.request_timeout_ms = 300;
	o.max_retries = -1;
	t = kube_with(&o);
	fault_rules(&plain, "[{\"path\":\"*\",\"delay_ms\":1500,\"body\":{}}]");
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "p", &err), TFJOB_ETIMEOUT);
	tfjob_error_free(err);
	ck_assert_uint_eq(log_count(&plain), 1);
	tfjob_transport_free(t);
	/* Retried: the second answer is fast. */
	o.max_retries = 2;
	t = kube_with(&o);
	fault_reset(&plain);
	fault_rules(&plain, "[{\"path\":\"*\",\"delay_ms\":1500,\"body\":{}},{\"path\":\"*\",\"body\":{\"ok\":1}}]");
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "p", NULL), 0);
	tfjob_transport_free(t);
}
END_TEST

START_TEST(rate_limit)
{
	tfjob_kube_options o = fast_options(write_kubeconfig("rl.yaml", plain.url, NULL, NULL, NULL));
	o.qps = 20;
	o.burst = 2;
	tfjob_transport *t = kube_with(&o);
	fault_rules(&plain, "[{\"path\":\"*\",\"times\":-1,\"body\":{}}]");
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < 12; i++)
		ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "p", NULL), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double elapsed = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	/* 2 at once, then 10 at 20/s: at least 0.5 s. */
	ck_assert_msg(elapsed >= 0.45, "rate limit not applied (%.2f s)", elapsed);
	tfjob_transport_free(t);
}
END_TEST

/* ---- watches ---- */

struct collector {
	pthread_mutex_t mu;
	char log[8192];
	int count, closed, closed_code, closed_status;
	char closed_message[256];
};

static int on_event(tfjob_watch_event type, const char *json, void *payload)
{
	struct collector *c = payload;
	json_t *v = json_loads(json, 0, NULL);
	const char *name = json_string_value(json_object_get(json_object_get(v, "metadata"), "name"));
	const char *rv = json_string_value(json_object_get(json_object_get(v, "metadata"), "resourceVersion"));
	char line[256];
	snprintf(line, sizeof(line), "%s %s %s;", tfjob_watch_event_name(type), name ? name : "-", rv ? rv : "-");
	pthread_mutex_lock(&c->mu);
	strncat(c->log, line, sizeof(c->log) - strlen(c->log) - 1);
	c->count++;
	pthread_mutex_unlock(&c->mu);
	json_decref(v);
	return 0;
}

static void on_closed(int code, const tfjob_error *err, void *payload)
{
	struct collector *c = payload;
	pthread_mutex_lock(&c->mu);
	c->closed = 1;
	c->closed_code = code;
	c->closed_status = tfjob_error_http_status(err);
	snprintf(c->closed_message, sizeof(c->closed_message), "%s", tfjob_error_message(err));
	pthread_mutex_unlock(&c->mu);
}

static tfjob_watch *watch(tfjob_transport *t, struct collector *c, const char *rv, int reconnect)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->mu, NULL);
	tfjob_watch_options wo = TFJOB_WATCH_OPTIONS_INIT;
	wo.on_event = on_event;
	wo.on_closed = on_closed;
	wo.payload = c;
	wo.resource_version = rv;
	wo.allow_bookmarks = 1;
	wo.timeout_seconds = 30;
	wo.reconnect = reconnect;
	wo.label_selector = "app=tf";
	tfjob_watch *w = NULL;
	ck_assert_int_eq(tfjob_transport_watch(&w, t, &PODS, NULL, &wo, NULL), 0);
	return w;
}

#define EV(type, name, rv) \
	"{\\\"type\\\":\\\"" type "\\\",\\\"object\\\":{\\\"kind\\\":\\\"Pod\\\",\\\"metadata\\\":{\\\"name\\\":\\\"" name \
	"\\\",\\\"resourceVersion\\\":\\\"" rv "\\\",\\\"annotations\\\":{\\\"tricky\\\":\\\"}{\\\\\\\"[\\\"}}}}\\n"

/* A watch from rv without reconnecting, until the server ends the stream cleanly: its events
 * must be want_log ("TYPE name rv;" each). */
static void watch_until_closed(tfjob_transport *t, const char *rv, const char *want_log)
{
	struct collector c;
	tfjob_watch *w = watch(t, &c, rv, 0);
	ck_assert_int_eq(tfjob_watch_wait(w, 10000), 0);
	ck_assert_str_eq(c.log, want_log);
	ck_assert_int_eq(c.closed_code, 0);
	tfjob_watch_free(w);
}

/* Every event's object text as the sink got it, ";"-separated. */
static int on_raw_event(tfjob_watch_event type, const char *json, void *payload)
{
	struct collector *c = payload;
	pthread_mutex_lock(&c->mu);
	strncat(c->log, tfjob_watch_event_name(type), sizeof(c->log) - strlen(c->log) - 1);
	strncat(c->log, " ", sizeof(c->log) - strlen(c->log) - 1);
	strncat(c->log, json, sizeof(c->log) - strlen(c->log) - 1);
	strncat(c->log, ";", sizeof(c->log) - strlen(c->log) - 1);
	c->count++;
	pthread_mutex_unlock(&c->mu);
	return 0;
}

/* Objects reach the sink as the server wrote them (escapes and all) when the event is plain;
 * integers beyond int64 are widened; unusual events are read whole and written out compact;
 * an event that is not valid JSON (in its object or around it) is dropped, and the stream goes on. */
START_TEST(watch_hands_objects_on_as_written)
{
	tfjob_transport *t = kube_plain(NULL);
	fault_rules(&plain,
	            "[{\"path\":\"/api/v1/namespaces/default/pods\",\"chunks\":["
	            "\"{\\\"type\\\":\\\"ADDED\\\",\\\"object\\\":{ \\\"metadata\\\":{\\\"name\\\":\\\"a\\\",\\\"resourceVersion\\\":\\\"11\\\"},"
	            "\\\"x\\\":\\\"\\\\u003cb\\\\u003e\\\"}}\\n"
	            "{\\\"type\\\":\\\"MODIFIED\\\",\\\"object\\\":{\\\"metadata\\\":{\\\"name\\\":\\\"a\\\",\\\"resourceVersion\\\":\\\"12\\\"},"
	            "\\\"x\\\":tru}}\\n"
	            "{\\\"type\\\":\\\"MODIFIED\\\",\\\"object\\\":{\\\"metadata\\\":{\\\"name\\\":\\\"a\\\",\\\"resourceVersion\\\":\\\"13\\\"},"
	            "\\\"n\\\":123456789012345678901234567890}}\\n"
	            "{\\\"type\\\":\\\"MODIFIED\\\",\\\"object\\\":{\\\"metadata\\\":{\\\"name\\\":\\\"a\\\",\\\"resourceVersion\\\":\\\"15\\\"}},"
	            "\\\"x\\\":nul}\\n"
	            "{\\\"type\\\":\\\"\\\\u0044ELETED\\\",\\\"object\\\":{\\\"metadata\\\":{\\\"name\\\":\\\"a\\\", \\\"resourceVersion\\\":\\\"14\\\"}}}\\n"
	            "\"]}]");
	struct collector c;
	memset(&c, 0, sizeof(c));
	pthread_mutex_init(&c.mu, NULL);
	tfjob_watch_options wo = TFJOB_WATCH_OPTIONS_INIT;
	wo.on_event = on_raw_event;
	wo.on_closed = on_closed;
	wo.payload = &c;
	wo.resource_version = "10";
	wo.reconnect = 0;
	tfjob_watch *w = NULL;
	ck_assert_int_eq(tfjob_transport_watch(&w, t, &PODS, NULL, &wo, NULL), 0);
	ck_assert_int_eq(tfjob_watch_wait(w, 10000), 0);
	ck_assert_str_eq(c.log,
	                 "ADDED { \"metadata\":{\"name\":\"a\",\"resourceVersion\":\"11\"},\"x\":\"\\u003cb\\u003e\"};"
	                 "MODIFIED {\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"13\"},\"n\":123456789012345678901234567890.0};"
	                 "DELETED {\"metadata\":{\"name\":\"a\",\"resourceVersion\":\"14\"}};");
	ck_assert_int_eq(c.closed_code, 0);
	tfjob_watch_free(w);
	tfjob_transport_free(t);
}
END_TEST

START_TEST(watch_stream_reconnect_and_gone)
{
	tfjob_transport *t = kube_plain(NULL);
	/* First connection: events split inside JSON values, a bookmark, then the connection drops. */
	fault_rules(&plain,
	            "[{\"path\":\"/api/v1/namespaces/default/pods\",\"query\":\"resourceVersion=10&\",\"chunks\":["
	            "\"{\\\"type\\\":\\\"ADDED\\\",\\\"obj\", \"ect\\\":{\\\"metadata\\\":{\\\"name\\\":\\\"a\\\",\\\"resourceVersion\\\":\\\"11\\\"}}}\\n"
	            "{\\\"type\\\":\\\"MODIFIED\\\",\\\"object\\\":{\\\"metadata\\\":{\\\"name\\\":\\\"a\\\",\\\"resour\","
	            "\"ceVersion\\\":\\\"12\\\",\\\"labels\\\":{\\\"x\\\":\\\"a\\\\\\\"}\\\"}}}}\","
	            "\"" EV("BOOKMARK", "-", "15") "\"],\"drop\":true},"
	            /* Second: resumes from 15, one event, then an in-stream 410. */
	            "{\"path\":\"/api/v1/namespaces/default/pods\",\"query\":\"resourceVersion=15&\",\"chunks\":["
	            "\"" EV("DELETED", "a", "16") "\","
	            "\"{\\\"type\\\":\\\"ERROR\\\",\\\"object\\\":{\\\"kind\\\":\\\"Status\\\",\\\"code\\\":410,\\\"reason\\\":\\\"Expired\\\","
	            "\\\"message\\\":\\\"too old resource version: 15 (20)\\\"}}\\n\"], \"hang_ms\":5000}]");
	struct collector c;
	tfjob_watch *w = watch(t, &c, "10", 1);
	ck_assert_int_eq(tfjob_watch_wait(w, 10000), 0);
	ck_assert_str_eq(c.log, "ADDED a 11;MODIFIED a 12;BOOKMARK - 15;DELETED a 16;");
	ck_assert_int_eq(c.closed_code, TFJOB_EGONE);
	ck_assert_int_eq(c.closed_status, 410);
	ck_assert_str_eq(c.closed_message, "too old resource version: 15 (20)");
	tfjob_watch_free(w);
	json_t *log = fault_log(&plain);
	ck_assert_int_eq(json_array_size(log), 2);
	const char *q = field(json_array_get(log, 0), "query");
	ck_assert_ptr_nonnull(strstr(q, "watch=true"));
	ck_assert_ptr_nonnull(strstr(q, "allowWatchBookmarks=true"));
	ck_assert_ptr_nonnull(strstr(q, "labelSelector=app%3Dtf"));
	ck_assert_ptr_nonnull(strstr(q, "timeoutSeconds=30"));
	json_decref(log);

	/* HTTP 410 at the start. */
	fault_reset(&plain);
	fault_rules(&plain, "[{\"path\":\"*\",\"status\":410,\"body\":" STATUS(410, "Expired", "too old resource version: 1 (9)") "}]");
	w = watch(t, &c, "1", 1);
	ck_assert_int_eq(tfjob_watch_wait(w, 10000), 0);
	ck_assert_int_eq(c.closed_code, TFJOB_EGONE);
	ck_assert_str_eq(c.closed_message, "too old resource version: 1 (9)");
	tfjob_watch_free(w);

	/* 500 then 429 then a stream the server ends (timeoutSeconds); without reconnect the watch ends there. */
	fault_reset(&plain);
	fault_rules(&plain, "[{\"path\":\"*\",\"status\":500,\"body\":" STATUS(500, "InternalError", "x") "},"
	                    "{\"path\":\"*\",\"status\":429,\"headers\":{\"Retry-After\":\"0\"},\"body\":" STATUS(429, "TooManyRequests", "x") "},"
	                    "{\"path\":\"*\",\"chunks\":[\"" EV("ADDED", "b", "30") "\"]}]");
	w = watch(t, &c, "29", 1);
	for (int i = 0; i < 500 && c.count < 1; i++)
		usleep(10000);
	ck_assert_str_eq(c.log, "ADDED b 30;");
	tfjob_watch_free(w);
	ck_assert_int_eq(c.closed_code, 0);
	fault_reset(&plain);
	fault_rules(&plain, "[{\"path\":\"*\",\"chunks\":[\"" EV("ADDED", "b", "30") "\"]}]");
	w = watch(t, &c, "29", 0);
	ck_assert_int_eq(tfjob_watch_wait(w, 10000), 0);
	ck_assert_int_eq(c.closed_code, 0);
	ck_assert_int_eq(c.count, 1);
	tfjob_watch_free(w);
	/* Without reconnect a 403 ends the watch with its message. */
	fault_reset(&plain);
	fault_rules(&plain, "[{\"path\":\"*\",\"status\":403,\"body\":" STATUS(403, "Forbidden", "no watching") "}]");
	w = watch(t, &c, "29", 1);
	ck_assert_int_eq(tfjob_watch_wait(w, 10000), 0);
	ck_assert_int_eq(c.closed_code, TFJOB_EFORBIDDEN);
	ck_assert_str_eq(c.closed_message, "no watching");
	tfjob_watch_free(w);
	tfjob_transport_free(t);
}
END_TEST

/* An API server writes a float64 it stores as digits (1e20 as 100000000000000000000): such
 * integers reach the caller as reals, in answers and in watch events, instead of failing the
 * whole answer in jansson (strings that look like them stay as they are). */
START_TEST(integers_beyond_int64_become_reals)
{
	tfjob_transport *t = kube_plain(NULL);
	fault_rules(&plain, "[{\"path\":\"*\",\"content_type\":\"application/json\",\"body\":\"{\\\"kind\\\":\\\"Pod\\\","
	                    "\\\"metadata\\\":{\\\"name\\\":\\\"big\\\"},\\\"spec\\\":{\\\"x\\\":100000000000000000000,"
	                    "\\\"n\\\":-9223372036854775808,\\\"s\\\":\\\"123456789012345678901\\\"}}\"},"
	                    "{\"path\":\"*\",\"chunks\":[\"{\\\"type\\\":\\\"ADDED\\\",\\\"object\\\":{\\\"metadata\\\":"
	                    "{\\\"name\\\":\\\"w\\\",\\\"resourceVersion\\\":\\\"3\\\"},\\\"x\\\":184467440737\",\"09551616}}\\n\"]}]");
	char *out = NULL;
	ck_assert_int_eq(tfjob_transport_get(&out, t, &PODS, NULL, "big", NULL), 0);
	json_t *pod = json_loads(out, 0, NULL);
	ck_assert_msg(pod != NULL, "not JSON for jansson: %s", out);
	json_t *spec = json_object_get(pod, "spec");
	ck_assert(json_is_real(json_object_get(spec, "x")));
	ck_assert(json_real_value(json_object_get(spec, "x")) == 1e20);
	ck_assert(json_is_integer(json_object_get(spec, "n"))); /* int64's own minimum stays an integer */
	ck_assert_str_eq(json_string_value(json_object_get(spec, "s")), "123456789012345678901");
	json_decref(pod);
	tfjob_free(out);
	watch_until_closed(t, "2", "ADDED w 3;");
	tfjob_transport_free(t);
}
END_TEST

/* What proxies and API servers do to answers: compression, Retry-After dates, HTML error pages. */
START_TEST(compression_dates_and_foreign_bodies)
{
	tfjob_transport *t = kube_plain(NULL);
	/* gzip and deflate answers are decoded; Accept-Encoding asks for them (as client-go asks for gzip). */
	fault_rules(&plain, "[{\"path\":\"*\",\"encoding\":\"gzip\",\"body\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"gz\"}}},"
	                    "{\"path\":\"*\",\"encoding\":\"deflate\",\"body\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"df\"}}}]");
	char *out = NULL;
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_transport_get(&out, t, &PODS, NULL, "gz", &err), 0);
	ck_assert_ptr_nonnull(strstr(out, "\"gz\""));
	tfjob_free(out);
	ck_assert_int_eq(tfjob_transport_get(&out, t, &PODS, NULL, "df", &err), 0);
	ck_assert_ptr_nonnull(strstr(out, "\"df\""));
	tfjob_free(out);
	json_t *e = log_entry(&plain, 0);
	ck_assert_ptr_nonnull(field(e, "accept_encoding"));
	ck_assert_ptr_nonnull(strstr(field(e, "accept_encoding"), "gzip"));
	json_decref(e);
	/* A create answers with the object sent: compression is not asked for. */
	fault_rules(&plain, "[{\"path\":\"*\",\"status\":201,\"body\":{\"kind\":\"Pod\",\"metadata\":{\"name\":\"c\"}}}]");
	ck_assert_int_eq(tfjob_transport_create(&out, t, &PODS, NULL, "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"c\"}}", &err), 0);
	tfjob_free(out);
	e = log_entry(&plain, 2);
	ck_assert_str_eq(field(e, "method"), "POST");
	ck_assert_ptr_null(field(e, "accept_encoding"));
	json_decref(e);

	/* A gzip watch stream, compressed chunk by chunk, an event split across chunks. */
	fault_reset(&plain);
	fault_rules(&plain, "[{\"path\":\"*\",\"encoding\":\"gzip\",\"chunks\":[\"{\\\"type\\\":\\\"ADDED\\\",\\\"obj\","
	                    "\"ect\\\":{\\\"metadata\\\":{\\\"name\\\":\\\"z\\\",\\\"resourceVersion\\\":\\\"3\\\"}}}\\n\","
	                    "\"" EV("MODIFIED", "z", "4") "\"]}]");
	watch_until_closed(t, "2", "ADDED z 3;MODIFIED z 4;");

	/* Retry-After as an HTTP-date (RFC 9110) is honoured too. */
	fault_reset(&plain);
	char date[64], rules[1024];
	time_t when = time(NULL) + 2;
	struct tm tm;
	gmtime_r(&when, &tm);
	strftime(date, sizeof(date), "%a, %d %b %Y %H:%M:%S GMT", &tm);
	snprintf(rules, sizeof(rules),
	         "[{\"status\":429,\"path\":\"*\",\"headers\":{\"Retry-After\":\"%s\"},\"body\":" STATUS(429, "TooManyRequests", "later") "},"
	         "{\"path\":\"*\",\"body\":{\"kind\":\"Pod\"}}]", date);
	fault_rules(&plain, rules);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "p", NULL), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	double elapsed = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	ck_assert_msg(elapsed >= 0.9, "Retry-After date not honoured (%.2f s)", elapsed);
	ck_assert_uint_eq(log_count(&plain), 2);

	/* A proxy's HTML error page: the status decides, the message shows the start of the body. */
	fault_reset(&plain);
	fault_rules(&plain, "[{\"status\":502,\"times\":-1,\"path\":\"*\",\"content_type\":\"text/html\","
	                    "\"body\":\"<html><body>502 Bad Gateway</body></html>\"},"
	                    "{\"status\":404,\"path\":\"*\",\"content_type\":\"text/plain\",\"body\":\"404 page not found\\n\"}]");
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "p", &err), TFJOB_ESERVER);
	ck_assert_int_eq(tfjob_error_http_status(err), 502);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "502 Bad Gateway"));
	ck_assert_ptr_null(tfjob_error_reason(err));
	tfjob_error_free(err);
	ck_assert_uint_eq(log_count(&plain), 4); /* 1 + 3 retries */
	tfjob_transport_free(t);

	/* A server without a scheme: https with TLS settings, else http (client-go's DefaultServerURL). */
	fault_reset(&plain);
	fault_rules(&plain, "[{\"path\":\"*\",\"body\":{\"kind\":\"Pod\"}}]");
	tfjob_kube_options o = fast_options(write_kubeconfig("noscheme.yaml", plain.url + strlen("http://"), NULL, NULL, NULL));
	t = kube_with(&o);
	ck_assert_str_eq(tfjob_kube_transport_server(t), plain.url);
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "p", NULL), 0);
	tfjob_transport_free(t);
	char extra[256];
	snprintf(extra, sizeof(extra), "    insecure-skip-tls-verify: true\n");
	o = fast_options(write_kubeconfig("noscheme-tls.yaml", tls.url + strlen("https://"), extra, NULL, NULL));
	t = kube_with(&o);
	ck_assert_str_eq(tfjob_kube_transport_server(t), tls.url);
	tfjob_transport_free(t);
}
END_TEST

/* A rule text: prefix, then n blanks, then suffix (the blanks pad a JSON value inside a string). */
static char *padded_rule(const char *prefix, size_t n, const char *suffix)
{
	size_t pl = strlen(prefix), sl = strlen(suffix);
	char *r = malloc(pl + n + sl + 1);
	ck_assert_ptr_nonnull(r);
	memcpy(r, prefix, pl);
	memset(r + pl, ' ', n);
	memcpy(r + pl + n, suffix, sl + 1);
	return r;
}

START_TEST(size_limits)
{
	/* docs/limits.md: a response body over 256 MiB is TFJOB_ELIMIT, not retried. */
	tfjob_transport *t = kube_plain(NULL);
	static const char pod[] = "{\\\"kind\\\":\\\"Pod\\\"}"; /* {"kind":"Pod"} inside a JSON string */
	size_t body = ((size_t)256 << 20) + 1;
	char prefix[256];
	snprintf(prefix, sizeof(prefix), "[{\"path\":\"*\",\"times\":-1,\"body\":\"%s", pod);
	char *rules = padded_rule(prefix, body - 14, "\"}]");
	fault_rules(&plain, rules);
	free(rules);
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "x", &err), TFJOB_ELIMIT);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "the response body is larger than the limit of 268435456 bytes"));
	tfjob_error_free(err);
	ck_assert_uint_eq(log_count(&plain), 1);

	/* A watch event over 64 MiB ends the watch with TFJOB_ELIMIT instead of reconnecting to it. */
	fault_reset(&plain);
	size_t event = ((size_t)64 << 20) + 1;
	static const char head[] = "{\\\"type\\\":\\\"ADDED\\\",\\\"object\\\":{\\\"kind\\\":\\\"Pod\\\"}";
	size_t head_len = strlen("{\"type\":\"ADDED\",\"object\":{\"kind\":\"Pod\"}");
	snprintf(prefix, sizeof(prefix), "[{\"path\":\"*\",\"times\":-1,\"hang_ms\":5000,\"chunks\":[\"" EV("ADDED", "a", "2") "\",\"%s",
	         head);
	rules = padded_rule(prefix, event - head_len - 1, "}\"]}]");
	fault_rules(&plain, rules);
	free(rules);
	struct collector c;
	tfjob_watch *w = watch(t, &c, "1", 1);
	ck_assert_int_eq(tfjob_watch_wait(w, 30000), 0);
	ck_assert_str_eq(c.log, "ADDED a 2;");
	ck_assert_int_eq(c.closed_code, TFJOB_ELIMIT);
	ck_assert_str_eq(c.closed_message, "watch: an event is larger than the limit of 67108864 bytes");
	tfjob_watch_free(w);
	ck_assert_uint_eq(log_count(&plain), 1);
	tfjob_transport_free(t);
}
END_TEST

START_TEST(watch_backs_off_from_empty_streams)
{
	tfjob_transport *t = kube_plain(NULL);
	fault_rules(&plain, "[{\"path\":\"*\",\"times\":-1,\"chunks\":[]}]");
	struct collector c;
	tfjob_watch *w = watch(t, &c, "5", 1);
	usleep(1000000);
	tfjob_watch_free(w);
	size_t n = log_count(&plain);
	ck_assert_msg(n >= 2 && n < 20, "%zu reconnects in a second", n);
	ck_assert_int_eq(c.closed_code, 0);
	tfjob_transport_free(t);
}
END_TEST

START_TEST(watch_stop_while_idle)
{
	tfjob_transport *t = kube_plain(NULL);
	fault_rules(&plain, "[{\"path\":\"*\",\"chunks\":[\"" EV("ADDED", "a", "2") "\"],\"hang_ms\":20000}]");
	struct collector c;
	tfjob_watch *w = watch(t, &c, NULL, 1);
	for (int i = 0; i < 500 && c.count < 1; i++)
		usleep(10000);
	ck_assert_int_eq(c.count, 1);
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	tfjob_watch_stop(w);
	ck_assert_int_eq(tfjob_watch_wait(w, 5000), 0);
	clock_gettime(CLOCK_MONOTONIC, &b);
	ck_assert_int_lt(b.tv_sec - a.tv_sec, 3);
	ck_assert_int_eq(c.closed_code, 0);
	tfjob_watch_free(w);
	tfjob_transport_free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("kube");
	TCase *tc = tcase_create("kube");
	tcase_set_timeout(tc, 120);
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_add_checked_fixture(tc, each_setup, NULL);
	tcase_add_test(tc, kubeconfig_merge_and_contexts);
	tcase_add_test(tc, in_cluster);
	tcase_add_test(tc, tls_data_files_and_server_name);
	tcase_add_test(tc, proxy_url);
	tcase_add_test(tc, proxy_from_environment);
	tcase_add_test(tc, exec_plugin);
	tcase_add_test(tc, token_file_reread_on_401);
	tcase_add_test(tc, verbs_paths_and_bodies);
	tcase_add_test(tc, error_mapping);
	tcase_add_test(tc, retry_after_and_server_errors);
	tcase_add_test(tc, create_is_never_retried_blindly);
	tcase_add_test(tc, network_errors_and_timeouts);
	tcase_add_test(tc, rate_limit);
	tcase_add_test(tc, watch_stream_reconnect_and_gone);
	tcase_add_test(tc, watch_hands_objects_on_as_written);
	tcase_add_test(tc, watch_backs_off_from_empty_streams);
	tcase_add_test(tc, watch_stop_while_idle);
	tcase_add_test(tc, size_limits);
	tcase_add_test(tc, compression_dates_and_foreign_bodies);
	tcase_add_test(tc, integers_beyond_int64_become_reals);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
