/*
 * kubeconfig loading as kubectl does it: an explicit file, else $KUBECONFIG (':'-separated,
 * merged: the first file that names a cluster, user or context wins, and the first
 * current-context), else ~/.kube/config. Relative paths are resolved against the directory of
 * the file that holds them.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "parse/doc.h"
#include "transport/kube_internal.h"

int tfjob__read_file(char **out, size_t *len, const char *path, tfjob_error **err)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return tfjob__fail(err, TFJOB_EIO, "%s: %s", path, strerror(errno));
	/* Room for one byte more than the limit, so that a longer file is noticed without reading it all. */
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	while (buf && n <= TFJOB__MAX_FILE_BYTES) {
		if (n + 1 >= cap) {
			size_t want = cap * 2 > TFJOB__MAX_FILE_BYTES + 2 ? TFJOB__MAX_FILE_BYTES + 2 : cap * 2;
			char *grown = realloc(buf, want);
			if (!grown) {
				free(buf);
				buf = NULL;
				break;
			}
			buf = grown;
			cap = want;
		}
		errno = 0;
		size_t got = fread(buf + n, 1, cap - n - 1, f);
		n += got;
		if (got == 0)
			break;
	}
	int failed = ferror(f), read_errno = errno; /* EISDIR for a directory, EIO, ... */
	fclose(f);
	if (!buf)
		return tfjob__oom(err);
	if (n > TFJOB__MAX_FILE_BYTES) {
		free(buf);
		return tfjob__fail(err, TFJOB_ELIMIT, "%s: file is larger than the limit of %zu bytes", path,
		                   (size_t)TFJOB__MAX_FILE_BYTES);
	}
	if (failed) {
		free(buf);
		return tfjob__fail(err, TFJOB_EIO, "%s: %s", path, strerror(read_errno ? read_errno : EIO));
	}
	buf[n] = '\0';
	*out = buf;
	if (len)
		*len = n;
	return 0;
}

int tfjob__base64_decode(char **out, size_t *len, const char *text, const char *what, tfjob_error **err)
{
	size_t n = strlen(text);
	char *buf = malloc(n / 4 * 3 + 4);
	if (!buf)
		return tfjob__oom(err);
	/* kubectl's decoder is lenient: either alphabet, '=' anywhere */
	if (tfjob__base64_decode_into((unsigned char *)buf, len, text, n, TFJOB__BASE64_URL | TFJOB__BASE64_ANY_PADDING)) {
		free(buf);
		return tfjob__fail(err, TFJOB_ESCHEMA, "%s: invalid base64", what);
	}
	buf[*len] = '\0';
	*out = buf;
	return 0;
}

char *tfjob__base64_encode(const char *data, size_t len)
{
	static const char tbl[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc((len + 2) / 3 * 4 + 1);
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < len; i += 3) {
		unsigned int v = (unsigned char)data[i] << 16;
		if (i + 1 < len)
			v |= (unsigned char)data[i + 1] << 8;
		if (i + 2 < len)
			v |= (unsigned char)data[i + 2];
		out[o++] = tbl[(v >> 18) & 63];
		out[o++] = tbl[(v >> 12) & 63];
		out[o++] = i + 1 < len ? tbl[(v >> 6) & 63] : '=';
		out[o++] = i + 2 < len ? tbl[v & 63] : '=';
	}
	out[o] = '\0';
	return out;
}

void tfjob__exec_config_free(struct tfjob__exec_config *e)
{
	if (!e)
		return;
	free(e->api_version);
	free(e->command);
	for (size_t i = 0; i < e->nargs; i++)
		free(e->args[i]);
	free(e->args);
	for (size_t i = 0; i < e->nenv; i++)
		free(e->env[i]);
	free(e->env);
	free(e->install_hint);
	free(e);
}

static void free_secret(char *s, size_t len)
{
	if (!s)
		return;
	memset(s, 0, len);
	free(s);
}

void tfjob__kube_config_clear(struct tfjob__kube_config *c)
{
	free(c->server);
	free(c->ca_data);
	free(c->tls_server_name);
	free(c->proxy_url);
	free(c->cert_data);
	free_secret(c->key_data, c->key_len);
	free_secret(c->token, c->token ? strlen(c->token) : 0);
	free(c->token_file);
	free(c->username);
	free_secret(c->password, c->password ? strlen(c->password) : 0);
	tfjob__exec_config_free(c->exec);
	free(c->namespace_name);
	free(c->source);
	memset(c, 0, sizeof(*c));
}

/* ---- Merging ---- */

/* dir of path ("." when none), caller frees. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	if (!slash)
		return tfjob__strdup(".");
	if (slash == path)
		return tfjob__strdup("/");
	char *d = malloc((size_t)(slash - path) + 1);
	if (d) {
		memcpy(d, path, (size_t)(slash - path));
		d[slash - path] = '\0';
	}
	return d;
}

/* Make obj[key] absolute against dir when it is a relative path (only_with_slash: leave bare command names). */
static void resolve_path(json_t *obj, const char *key, const char *dir, int only_with_slash)
{
	const char *p = json_string_value(json_object_get(obj, key));
	if (!p || !p[0] || p[0] == '/')
		return;
	if (only_with_slash && !strchr(p, '/'))
		return;
	char *abs = tfjob__strdup_printf("%s/%s", dir, p);
	if (abs)
		json_object_set_new(obj, key, json_string(abs));
	free(abs);
}

static void resolve_entry_paths(const char *section, json_t *entry, const char *dir)
{
	if (!strcmp(section, "clusters")) {
		resolve_path(json_object_get(entry, "cluster"), "certificate-authority", dir, 0);
	} else if (!strcmp(section, "users")) {
		json_t *user = json_object_get(entry, "user");
		resolve_path(user, "client-certificate", dir, 0);
		resolve_path(user, "client-key", dir, 0);
		resolve_path(user, "tokenFile", dir, 0);
		resolve_path(json_object_get(user, "exec"), "command", dir, 1);
	}
}

/* Add the named entries of one file's section that the merge does not have yet. */
static void merge_section(json_t *merged, const json_t *doc, const char *section, const char *dir)
{
	json_t *into = json_object_get(merged, section);
	size_t i;
	json_t *entry;
	json_array_foreach(json_object_get(doc, section), i, entry) {
		const char *name = json_string_value(json_object_get(entry, "name"));
		if (!name || json_object_get(into, name))
			continue;
		json_t *copy = json_deep_copy(entry);
		if (!copy)
			continue;
		resolve_entry_paths(section, copy, dir);
		json_object_set_new(into, name, copy);
	}
}

/*
 * A kubeconfig that does not parse: the parser's message may quote the text around the error
 * ("invalid escape near '"TOPSECRET\q'"), and that text can be a token or a key. Say where, never
 * what: *err gets the position of parse_err and a message of our own.
 */
static int without_content(tfjob_error **err, int rc, tfjob_error *parse_err, const char *path)
{
	if (rc != TFJOB_EPARSE) { /* limits and allocation failures: their messages quote nothing */
		if (err)
			*err = parse_err;
		else
			tfjob_error_free(parse_err);
		return rc;
	}
	int line = tfjob_error_line(parse_err), column = tfjob_error_column(parse_err);
	tfjob_error_free(parse_err);
	return tfjob__fail_at(err, rc, path, line, column,
	                      "not valid YAML or JSON (the text is not shown: a kubeconfig holds credentials)");
}

static int merge_file(json_t *merged, const char *path, int must_exist, int *found, tfjob_error **err)
{
	struct stat st;
	if (!must_exist && stat(path, &st) != 0)
		return 0;
	char *text;
	size_t len;
	int rc = tfjob__read_file(&text, &len, path, err);
	if (rc)
		return rc;
	*found = 1;
	json_t *doc = NULL;
	tfjob_error *parse_err = NULL;
	if (len > 0 && (rc = tfjob__load_one(&doc, text, len, path, &parse_err))) {
		free(text);
		return without_content(err, rc, parse_err, path);
	}
	free(text);
	if (doc && !json_is_object(doc)) {
		json_decref(doc);
		return tfjob__fail(err, TFJOB_ESCHEMA, "%s: a kubeconfig must be a mapping", path);
	}
	char *dir = dir_of(path);
	if (!dir) {
		json_decref(doc);
		return tfjob__oom(err);
	}
	merge_section(merged, doc, "clusters", dir);
	merge_section(merged, doc, "users", dir);
	merge_section(merged, doc, "contexts", dir);
	const char *cur = json_string_value(json_object_get(doc, "current-context"));
	if (cur && cur[0] && !json_object_get(merged, "current-context"))
		json_object_set_new(merged, "current-context", json_string(cur));
	free(dir);
	json_decref(doc);
	return 0;
}

/* Merge the files of explicit, $KUBECONFIG or ~/.kube/config into one mapping. */
static int load_merged(json_t **out, const char *explicit_path, int *found, char **source, tfjob_error **err)
{
	json_t *merged = json_pack("{s:{}, s:{}, s:{}}", "clusters", "users", "contexts");
	if (!merged)
		return tfjob__oom(err);
	int rc = 0;
	*found = 0;
	const char *env = getenv("KUBECONFIG");
	if (explicit_path) {
		rc = merge_file(merged, explicit_path, 1, found, err);
		*source = tfjob__strdup(explicit_path);
	} else if (env && env[0]) {
		char *list = tfjob__strdup(env);
		for (char *save = NULL, *p = list ? strtok_r(list, ":", &save) : NULL; p && !rc; p = strtok_r(NULL, ":", &save))
			rc = merge_file(merged, p, 0, found, err);
		free(list);
		*source = tfjob__strdup(env);
	} else {
		const char *home = getenv("HOME");
		char *path = home ? tfjob__strdup_printf("%s/.kube/config", home) : NULL;
		if (path)
			rc = merge_file(merged, path, 0, found, err);
		*source = path;
	}
	if (rc) {
		json_decref(merged);
		return rc;
	}
	*out = merged;
	return 0;
}

/* ---- Resolving a context ---- */

static int copy_str(char **out, const json_t *obj, const char *key)
{
	const char *v = json_string_value(json_object_get(obj, key));
	if (!v || !v[0])
		return 0;
	*out = tfjob__strdup(v);
	return *out ? 0 : TFJOB_ENOMEM;
}

/* A PEM blob from KEY-data (base64) or from the file KEY. */
static int load_blob(char **out, size_t *len, const json_t *obj, const char *key, tfjob_error **err)
{
	char data_key[64];
	snprintf(data_key, sizeof(data_key), "%s-data", key);
	const char *data = json_string_value(json_object_get(obj, data_key));
	if (data && data[0])
		return tfjob__base64_decode(out, len, data, data_key, err);
	const char *path = json_string_value(json_object_get(obj, key));
	if (path && path[0])
		return tfjob__read_file(out, len, path, err);
	return 0;
}

static int load_exec(struct tfjob__exec_config **out, const json_t *exec, tfjob_error **err)
{
	struct tfjob__exec_config *e = calloc(1, sizeof(*e));
	if (!e)
		return tfjob__oom(err);
	int rc = copy_str(&e->api_version, exec, "apiVersion") | copy_str(&e->command, exec, "command") |
	         copy_str(&e->install_hint, exec, "installHint");
	const json_t *args = json_object_get(exec, "args"), *env = json_object_get(exec, "env");
	e->args = calloc(json_array_size(args) + 1, sizeof(char *));
	e->env = calloc(json_array_size(env) + 1, sizeof(char *));
	if (rc || !e->args || !e->env) {
		tfjob__exec_config_free(e);
		return tfjob__oom(err);
	}
	size_t i;
	json_t *v;
	json_array_foreach(args, i, v) {
		if (json_is_string(v))
			e->args[e->nargs++] = tfjob__strdup(json_string_value(v));
	}
	json_array_foreach(env, i, v) {
		const char *name = json_string_value(json_object_get(v, "name"));
		const char *value = json_string_value(json_object_get(v, "value"));
		if (name)
			e->env[e->nenv++] = tfjob__strdup_printf("%s=%s", name, value ? value : "");
	}
	e->provide_cluster_info = json_is_true(json_object_get(exec, "provideClusterInfo"));
	/* There is no terminal to talk to: a plugin that must be interactive cannot work. */
	const char *mode = json_string_value(json_object_get(exec, "interactiveMode"));
	if (mode && !strcmp(mode, "Always")) {
		int r = tfjob__fail(err, TFJOB_ESCHEMA, "kubeconfig: exec plugin '%s' needs interactiveMode Always, "
		                    "which a library cannot offer", e->command ? e->command : "");
		tfjob__exec_config_free(e);
		return r;
	}
	if (!e->command) {
		tfjob__exec_config_free(e);
		return tfjob__fail(err, TFJOB_ESCHEMA, "kubeconfig: exec plugin without a command");
	}
	if (!e->api_version || (strcmp(e->api_version, "client.authentication.k8s.io/v1") &&
	                        strcmp(e->api_version, "client.authentication.k8s.io/v1beta1"))) {
		int r = tfjob__fail(err, TFJOB_ESCHEMA, "kubeconfig: exec plugin apiVersion '%s' is not supported "
		                    "(client.authentication.k8s.io/v1 or v1beta1)", e->api_version ? e->api_version : "");
		tfjob__exec_config_free(e);
		return r;
	}
	*out = e;
	return 0;
}

static int load_cluster(struct tfjob__kube_config *c, const json_t *cluster, tfjob_error **err)
{
	if (copy_str(&c->server, cluster, "server") || copy_str(&c->tls_server_name, cluster, "tls-server-name") ||
	    copy_str(&c->proxy_url, cluster, "proxy-url"))
		return tfjob__oom(err);
	if (!c->server)
		return tfjob__fail(err, TFJOB_ESCHEMA, "kubeconfig: the cluster has no server");
	c->insecure = json_is_true(json_object_get(cluster, "insecure-skip-tls-verify"));
	return load_blob(&c->ca_data, &c->ca_len, cluster, "certificate-authority", err);
}

static int load_user(struct tfjob__kube_config *c, const json_t *user, tfjob_error **err)
{
	if (copy_str(&c->token, user, "token") || copy_str(&c->token_file, user, "tokenFile") ||
	    copy_str(&c->username, user, "username") || copy_str(&c->password, user, "password"))
		return tfjob__oom(err);
	int rc = load_blob(&c->cert_data, &c->cert_len, user, "client-certificate", err);
	if (rc || (rc = load_blob(&c->key_data, &c->key_len, user, "client-key", err)))
		return rc;
	/* Auth providers (gcp, azure, oidc, ...) run code of client-go itself: refuse them rather than
	 * send requests without the credentials the user expects. */
	const json_t *provider = json_object_get(user, "auth-provider");
	if (provider && !json_is_null(provider)) {
		const char *name = json_string_value(json_object_get(provider, "name"));
		return tfjob__fail(err, TFJOB_ESCHEMA, "kubeconfig: auth-provider '%s' is not supported; use an exec "
		                   "credential plugin (users[].user.exec) instead", name ? name : "");
	}
	const json_t *exec = json_object_get(user, "exec");
	if (json_is_object(exec))
		return load_exec(&c->exec, exec, err);
	return 0;
}

static const json_t *named(const json_t *merged, const char *section, const char *name, const char *field)
{
	return json_object_get(json_object_get(json_object_get(merged, section), name ? name : ""), field);
}

static int resolve_context(struct tfjob__kube_config *c, const json_t *merged, const char *context, tfjob_error **err)
{
	const char *ctx_name = context ? context : json_string_value(json_object_get(merged, "current-context"));
	if (!ctx_name || !ctx_name[0])
		return tfjob__fail(err, TFJOB_ENOTFOUND, "kubeconfig %s: no current-context and no context given", c->source);
	const json_t *ctx = named(merged, "contexts", ctx_name, "context");
	if (!ctx)
		return tfjob__fail(err, TFJOB_ENOTFOUND, "kubeconfig %s: context \"%s\" not found", c->source, ctx_name);
	const char *cluster_name = json_string_value(json_object_get(ctx, "cluster"));
	const char *user_name = json_string_value(json_object_get(ctx, "user"));
	const json_t *cluster = named(merged, "clusters", cluster_name, "cluster");
	if (!cluster)
		return tfjob__fail(err, TFJOB_ENOTFOUND, "kubeconfig %s: cluster \"%s\" of context \"%s\" not found",
		                   c->source, cluster_name ? cluster_name : "", ctx_name);
	int rc = load_cluster(c, cluster, err);
	if (rc)
		return rc;
	const json_t *user = named(merged, "users", user_name, "user");
	if (user_name && user_name[0] && !user)
		return tfjob__fail(err, TFJOB_ENOTFOUND, "kubeconfig %s: user \"%s\" of context \"%s\" not found",
		                   c->source, user_name, ctx_name);
	if (user && (rc = load_user(c, user, err)))
		return rc;
	return copy_str(&c->namespace_name, ctx, "namespace") ? tfjob__oom(err) : 0;
}

int tfjob__kubeconfig_load(struct tfjob__kube_config *out, const char *explicit_path, const char *context,
                           tfjob_error **err)
{
	memset(out, 0, sizeof(*out));
	json_t *merged = NULL;
	int found = 0;
	char *source = NULL;
	int rc = load_merged(&merged, explicit_path, &found, &source, err);
	if (rc) {
		free(source);
		return rc;
	}
	out->source = tfjob__strdup_printf("%s", source ? source : "");
	free(source);
	if (!found)
		rc = tfjob__fail(err, TFJOB_ENOTFOUND, "no kubeconfig found (%s)", out->source ? out->source : "");
	else
		rc = resolve_context(out, merged, context, err);
	json_decref(merged);
	if (rc)
		tfjob__kube_config_clear(out);
	return rc;
}
