/*
 * The Kubernetes REST backend: configuration, credentials, requests with rate limiting and
 * retries, and the verbs.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "util/quantity.h"
#include "transport/kube_internal.h"
#include "util/versioned_structs.h"

#define TOKEN_FILE_REFRESH_MS 60000
#define EXEC_EXPIRY_MARGIN_S 10

/* ---- Credentials ---- */

static int refresh_token_file(struct tfjob__kube *k, tfjob_error **err)
{
	int64_t now = tfjob__monotonic_ms();
	if (k->token && k->token_read_ms && now - k->token_read_ms < TOKEN_FILE_REFRESH_MS)
		return 0;
	char *text = NULL;
	int rc = tfjob__read_file(&text, NULL, k->cfg.token_file, err);
	if (rc)
		return k->token ? 0 : rc; /* keep the last good token when the file is briefly unreadable */
	size_t n = strlen(text);
	while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r' || text[n - 1] == ' '))
		text[--n] = '\0';
	if (k->token) {
		memset(k->token, 0, strlen(k->token));
		free(k->token);
	}
	k->token = text;
	k->token_read_ms = now;
	return 0;
}

static int refresh_exec(struct tfjob__kube *k, tfjob_error **err)
{
	time_t now = time(NULL);
	if (k->exec_valid && (!k->exec_cred.expiry || now + EXEC_EXPIRY_MARGIN_S < k->exec_cred.expiry))
		return 0;
	struct tfjob__exec_result fresh;
	int rc = tfjob__exec_credential_run(&fresh, k->cfg.exec, &k->cfg, err);
	if (rc)
		return rc;
	tfjob__exec_result_clear(&k->exec_cred);
	k->exec_cred = fresh;
	k->exec_valid = 1;
	return 0;
}

static void set_pem_blob(CURL *easy, CURLoption opt, const char *data, size_t len)
{
	struct curl_blob blob = { (void *)data, len, CURL_BLOB_COPY };
	curl_easy_setopt(easy, opt, &blob);
}

static int add_bearer(struct curl_slist **headers, const char *token)
{
	char *line = tfjob__strdup_printf("Authorization: Bearer %s", token);
	struct curl_slist *more = line ? curl_slist_append(*headers, line) : NULL;
	if (line) {
		memset(line, 0, strlen(line));
		free(line);
	}
	if (!more)
		return TFJOB_ENOMEM;
	*headers = more;
	return 0;
}

int tfjob__kube_auth_apply(struct tfjob__kube *k, CURL *easy, struct curl_slist **headers, tfjob_error **err)
{
	int rc = 0;
	pthread_mutex_lock(&k->auth_mu);
	const char *token = k->cfg.token;
	if (k->cfg.exec) {
		rc = refresh_exec(k, err);
		if (!rc && k->exec_cred.cert_data && k->exec_cred.key_data) {
			set_pem_blob(easy, CURLOPT_SSLCERT_BLOB, k->exec_cred.cert_data, k->exec_cred.cert_len);
			set_pem_blob(easy, CURLOPT_SSLKEY_BLOB, k->exec_cred.key_data, k->exec_cred.key_len);
		}
		token = rc ? NULL : k->exec_cred.token;
	} else if (k->cfg.token_file) {
		rc = refresh_token_file(k, err);
		token = rc ? NULL : k->token;
	}
	if (!rc && token && token[0] && add_bearer(headers, token))
		rc = tfjob__oom(err);
	if (!rc && !token && k->cfg.username && k->cfg.password) {
		curl_easy_setopt(easy, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(easy, CURLOPT_USERNAME, k->cfg.username);
		curl_easy_setopt(easy, CURLOPT_PASSWORD, k->cfg.password);
	}
	pthread_mutex_unlock(&k->auth_mu);
	return rc;
}

int tfjob__kube_auth_invalidate(struct tfjob__kube *k)
{
	pthread_mutex_lock(&k->auth_mu);
	int changed = 0;
	if (k->cfg.exec) {
		k->exec_valid = 0;
		changed = 1;
	} else if (k->cfg.token_file) {
		k->token_read_ms = 0;
		changed = 1;
	}
	pthread_mutex_unlock(&k->auth_mu);
	return changed;
}

/* ---- Requests ---- */

enum retry_class { NO_RETRY = 0, RETRY_SAFE = 1, RETRY_AMBIGUOUS = 2 };

/* Whether a failed exchange may be repeated, and whether the server may have acted on it. */
static enum retry_class classify(const struct tfjob__http_response *r)
{
	if (r->curl_code != CURLE_OK) {
		switch (r->curl_code) {
		case CURLE_COULDNT_RESOLVE_HOST:
		case CURLE_COULDNT_RESOLVE_PROXY:
		case CURLE_COULDNT_CONNECT:
			return RETRY_SAFE;
		case CURLE_OUT_OF_MEMORY:
		case CURLE_LOGIN_DENIED:
		case CURLE_PEER_FAILED_VERIFICATION:
		case CURLE_SSL_CERTPROBLEM:
		case CURLE_SSL_CACERT_BADFILE:
		case CURLE_SSL_CONNECT_ERROR:
		case CURLE_UNSUPPORTED_PROTOCOL:
		case CURLE_URL_MALFORMAT:
		case CURLE_FILESIZE_EXCEEDED: /* the same answer again */
			return NO_RETRY;
		default:
			return RETRY_AMBIGUOUS;
		}
	}
	if (r->status == 429 || r->status == 503)
		return RETRY_SAFE;
	if (r->status >= 500)
		return RETRY_AMBIGUOUS;
	return NO_RETRY;
}

struct request {
	const char *method;
	const char *path;
	const char *body;
	const char *content_type;
	const char *check_path; /* POST: where to read the object back after an ambiguous failure */
	char **warnings;        /* on success: the response's Warning texts (NULL: not wanted) */
};

/* Whether a request path is under core/v1 events: /api/v1[/namespaces/NS]/events[/...]. */
static int is_events_path(const char *path)
{
	static const char core[] = "/api/v1/", nsp[] = "namespaces/";
	if (strncmp(path, core, sizeof(core) - 1))
		return 0;
	const char *p = path + sizeof(core) - 1;
	if (!strncmp(p, nsp, sizeof(nsp) - 1)) {
		p = strchr(p + sizeof(nsp) - 1, '/');
		if (!p)
			return 0;
		p++;
	}
	return !strncmp(p, "events", 6) && (p[6] == '\0' || p[6] == '/' || p[6] == '?');
}

/* Wait for a token of the budget the request draws on. */
static void rate_limit(struct tfjob__kube *k, const char *path)
{
	tfjob__sleep_ms(tfjob__ratelimit_reserve(is_events_path(path) ? &k->events_rl : &k->rl));
}

static int take_body(char **out, struct tfjob__http_response *r)
{
	if (out) {
		*out = r->body ? r->body : tfjob__strdup("{}");
		r->body = NULL;
		if (!*out)
			return TFJOB_ENOMEM;
	}
	return 0;
}

/*
 * Whether a sent scalar and the stored one are the same resource quantity: the API server
 * rewrites quantities into their canonical form ("1000m" -> "1", cpu: 1 -> "1").
 */
static int same_quantity(const json_t *a, const json_t *b)
{
	char text[2][64];
	const json_t *v[2] = { a, b };
	for (int i = 0; i < 2; i++) {
		if (json_is_string(v[i]))
			snprintf(text[i], sizeof(text[i]), "%s", json_string_value(v[i]));
		else if (json_is_integer(v[i]))
			snprintf(text[i], sizeof(text[i]), "%" JSON_INTEGER_FORMAT, json_integer_value(v[i]));
		else if (json_is_real(v[i]))
			snprintf(text[i], sizeof(text[i]), "%.17g", json_real_value(v[i]));
		else
			return 0;
	}
	tfjob__quantity qa, qb;
	return !tfjob__quantity_parse(&qa, text[0]) && !tfjob__quantity_parse(&qb, text[1]) && qa.nanos == qb.nanos;
}

/* 1 when every field of a is in b with the same value (b may have more: the server's defaults). */
static int json_subset(const json_t *a, const json_t *b)
{
	if (json_is_object(a)) {
		const char *key;
		json_t *v;
		if (!json_is_object(b))
			return 0;
		json_object_foreach((json_t *)a, key, v) {
			if (!json_subset(v, json_object_get(b, key)))
				return 0;
		}
		return 1;
	}
	if (json_is_array(a)) {
		if (!json_is_array(b) || json_array_size(a) != json_array_size(b))
			return 0;
		for (size_t i = 0; i < json_array_size(a); i++)
			if (!json_subset(json_array_get(a, i), json_array_get(b, i)))
				return 0;
		return 1;
	}
	if (json_is_number(a) && json_is_number(b))
		return json_number_value(a) == json_number_value(b);
	return json_equal(a, b) || same_quantity(a, b);
}

/*
 * Whether the stored object is the one a create sent: everything sent but status and the
 * server-owned metadata is there with the same value. An object that existed before with other
 * content (or a resourceVersion the create should not have carried) is not ours.
 */
static int holds_created(const char *sent_json, const char *stored_json)
{
	json_t *sent = json_loads(sent_json, 0, NULL), *stored = json_loads(stored_json, 0, NULL);
	int same = 0;
	if (json_is_object(sent) && json_is_object(stored)) {
		json_t *a = json_deep_copy(sent);
		json_t *meta = json_object_get(a, "metadata");
		json_object_del(a, "status");
		static const char *const server_owned[] = { "generateName", "creationTimestamp", "managedFields", "selfLink" };
		for (size_t i = 0; meta && i < sizeof(server_owned) / sizeof(server_owned[0]); i++)
			json_object_del(meta, server_owned[i]);
		same = a && json_subset(a, stored);
		json_decref(a);
	}
	json_decref(sent);
	json_decref(stored);
	return same;
}

/*
 * After an ambiguous create: 1 when the object exists and holds what was sent (its JSON in *out),
 * 0 when absent, -1 unknown or someone else's object (the failure stands).
 */
static int created_anyway(struct tfjob__kube *k, char **out, const struct request *req)
{
	struct tfjob__http_response r = { 0 };
	rate_limit(k, req->check_path);
	tfjob__http_perform(k, "GET", req->check_path, NULL, NULL, &r);
	int result = -1;
	if (r.curl_code == CURLE_OK && r.status == 200 && holds_created(req->body, r.body))
		result = take_body(out, &r) ? -1 : 1;
	else if (r.curl_code == CURLE_OK && r.status == 404)
		result = 0;
	tfjob__http_response_clear(&r);
	return result;
}

/* The parts of an object a PUT sets: everything but metadata and status, plus labels and annotations. */
static json_t *put_content(const json_t *obj, int status)
{
	if (status)
		return json_pack("{s:O?}", "status", json_object_get(obj, "status"));
	json_t *c = json_deep_copy(obj);
	if (!c)
		return NULL;
	const json_t *meta = json_object_get(obj, "metadata");
	json_object_del(c, "status");
	json_object_del(c, "kind");
	json_object_del(c, "apiVersion");
	json_object_set_new(c, "metadata", json_pack("{s:O?, s:O?}", "labels", json_object_get(meta, "labels"),
	                                             "annotations", json_object_get(meta, "annotations")));
	return c;
}

/*
 * After an ambiguous failure a repeated PUT may meet the version its own first attempt made:
 * 409. When the stored object already holds what was sent, the update has happened: 1 (the
 * object in *out); 0 otherwise.
 */
static int updated_anyway(struct tfjob__kube *k, char **out, const struct request *req)
{
	struct tfjob__http_response r = { 0 };
	rate_limit(k, req->path);
	tfjob__http_perform(k, "GET", req->path, NULL, NULL, &r);
	int same = 0;
	if (r.curl_code == CURLE_OK && r.status == 200) {
		size_t n = strlen(req->path);
		int status = n > 7 && !strcmp(req->path + n - 7, "/status");
		json_t *sent = json_loads(req->body, 0, NULL), *stored = json_loads(r.body, 0, NULL);
		json_t *a = sent ? put_content(sent, status) : NULL, *b = stored ? put_content(stored, status) : NULL;
		same = a && b && json_equal(a, b) && take_body(out, &r) == 0;
		json_decref(a);
		json_decref(b);
		json_decref(sent);
		json_decref(stored);
	}
	tfjob__http_response_clear(&r);
	return same;
}

static int kube_request(struct tfjob__kube *k, char **out, const struct request *req, tfjob_error **err)
{
	struct tfjob__http_response r = { 0 };
	int auth_retried = 0, ambiguous = 0, is_post = !strcmp(req->method, "POST");
	for (int attempt = 0;; attempt++) {
		rate_limit(k, req->path);
		tfjob__http_perform(k, req->method, req->path, req->body, req->content_type, &r);
		int code = tfjob__http_code(&r);
		if (code == 0 || (code == TFJOB_ENOTFOUND && ambiguous && !strcmp(req->method, "DELETE"))) {
			code = take_body(out, &r) ? tfjob__oom(err) : 0;
			if (req->warnings) {
				*req->warnings = r.warnings;
				r.warnings = NULL;
			}
			tfjob__http_response_clear(&r);
			return code;
		}
		if (code == TFJOB_ECONFLICT && ambiguous && !strcmp(req->method, "PUT") && updated_anyway(k, out, req)) {
			tfjob__http_response_clear(&r);
			return 0;
		}
		if (code == TFJOB_EUNAUTHORIZED && r.curl_code == CURLE_OK && !auth_retried && tfjob__kube_auth_invalidate(k)) {
			auth_retried = 1;
			attempt--;
			continue;
		}
		enum retry_class rc = classify(&r);
		if (rc == NO_RETRY || attempt >= k->max_retries)
			break;
		if (rc == RETRY_AMBIGUOUS) {
			ambiguous = 1;
			if (is_post) {
				int found = req->check_path ? created_anyway(k, out, req) : -1;
				if (found == 1) {
					tfjob__http_response_clear(&r);
					return 0;
				}
				if (found < 0)
					break;
			}
		}
		tfjob__sleep_ms(r.retry_after_ms >= 0 ? r.retry_after_ms : tfjob__backoff_ms(k, attempt));
	}
	int code = tfjob__http_fail(err, req->method, req->path, &r);
	tfjob__http_response_clear(&r);
	return code;
}

/* ---- Verbs ---- */

static int verb_get(void *data, char **out, const tfjob_resource *res, const char *ns, const char *name,
                    tfjob_error **err)
{
	char *path = tfjob__resource_path(res, ns, name, NULL);
	if (!path)
		return tfjob__oom(err);
	struct request req = { "GET", path, NULL, NULL, NULL, NULL };
	int rc = kube_request(data, out, &req, err);
	free(path);
	return rc;
}

static int list_query(char **query, const tfjob_list_options *opts)
{
	char num[32];
	int rc = 0;
	if (opts->label_selector && opts->label_selector[0])
		rc |= tfjob__query_add(query, "labelSelector", opts->label_selector);
	if (opts->field_selector && opts->field_selector[0])
		rc |= tfjob__query_add(query, "fieldSelector", opts->field_selector);
	if (opts->limit > 0) {
		snprintf(num, sizeof(num), "%lld", (long long)opts->limit);
		rc |= tfjob__query_add(query, "limit", num);
	}
	if (opts->continue_token && opts->continue_token[0])
		rc |= tfjob__query_add(query, "continue", opts->continue_token);
	if (opts->resource_version)
		rc |= tfjob__query_add(query, "resourceVersion", opts->resource_version);
	return rc;
}

static int verb_list(void *data, char **out, const tfjob_resource *res, const char *ns, const tfjob_list_options *opts,
                     tfjob_error **err)
{
	char *base = tfjob__resource_path(res, ns, NULL, NULL), *query = NULL;
	char *path = NULL;
	int rc = (!base || list_query(&query, opts)) ? tfjob__oom(err) : 0;
	if (!rc && !(path = tfjob__strdup_printf("%s%s", base, query ? query : "")))
		rc = tfjob__oom(err);
	if (!rc) {
		struct request req = { "GET", path, NULL, NULL, NULL, NULL };
		rc = kube_request(data, out, &req, err);
	}
	free(base);
	free(query);
	free(path);
	return rc;
}

static int verb_create(void *data, char **out, const tfjob_resource *res, const char *ns, const char *object_json,
                       tfjob_error **err)
{
	char *name = NULL;
	int rc = tfjob__object_meta(object_json, "create", &name, NULL, err);
	if (rc)
		return rc;
	char *path = tfjob__resource_path(res, ns, NULL, NULL);
	char *check = name && name[0] ? tfjob__resource_path(res, ns, name, NULL) : NULL;
	free(name);
	if (!path)
		rc = tfjob__oom(err);
	if (!rc) {
		struct request req = { "POST", path, object_json, "application/json", check, NULL };
		rc = kube_request(data, out, &req, err);
	}
	free(path);
	free(check);
	return rc;
}

static int put(void *data, char **out, const tfjob_resource *res, const char *ns, const char *name,
               const char *sub, const char *object_json, tfjob_error **err)
{
	char *path = tfjob__resource_path(res, ns, name, sub);
	if (!path)
		return tfjob__oom(err);
	struct request req = { "PUT", path, object_json, "application/json", NULL, NULL };
	int rc = kube_request(data, out, &req, err);
	free(path);
	return rc;
}

static int verb_update(void *data, char **out, const tfjob_resource *res, const char *ns, const char *name,
                       const char *object_json, tfjob_error **err)
{
	return put(data, out, res, ns, name, NULL, object_json, err);
}

static int verb_update_status(void *data, char **out, const tfjob_resource *res, const char *ns, const char *name,
                              const char *object_json, tfjob_error **err)
{
	return put(data, out, res, ns, name, "status", object_json, err);
}

static int verb_patch(void *data, char **out, const tfjob_resource *res, const char *ns, const char *name,
                      const char *subresource, const char *merge_patch_json, tfjob_error **err)
{
	char *path = tfjob__resource_path(res, ns, name, subresource);
	if (!path)
		return tfjob__oom(err);
	struct request req = { "PATCH", path, merge_patch_json, "application/merge-patch+json", NULL, NULL };
	int rc = kube_request(data, out, &req, err);
	free(path);
	return rc;
}

/* The query of a server-side apply: ?fieldManager=M[&force=true]&fieldValidation=V. */
static int apply_query(char **query, const tfjob_apply_options *opts)
{
	static const char *const validation[] = { "Strict", "Warn", "Ignore" };
	int rc = tfjob__query_add(query, "fieldManager", opts->field_manager);
	if (!rc && opts->force)
		rc = tfjob__query_add(query, "force", "true");
	if (!rc)
		rc = tfjob__query_add(query, "fieldValidation", validation[opts->field_validation]);
	return rc;
}

static int verb_apply(void *data, char **out, char **warnings, const tfjob_resource *res, const char *ns,
                      const char *name, const char *object_json, const tfjob_apply_options *opts, tfjob_error **err)
{
	char *base = tfjob__resource_path(res, ns, name, NULL), *query = NULL, *path = NULL;
	int rc = (!base || apply_query(&query, opts)) ? tfjob__oom(err) : 0;
	if (!rc && !(path = tfjob__strdup_printf("%s%s", base, query)))
		rc = tfjob__oom(err);
	if (!rc) {
		/* JSON is YAML: the apply configuration goes as it is. */
		struct request req = { "PATCH", path, object_json, "application/apply-patch+yaml", NULL, warnings };
		rc = kube_request(data, out, &req, err);
	}
	free(base);
	free(query);
	free(path);
	return rc;
}

static char *delete_body(const tfjob_delete_options *opts)
{
	static const char *const policies[] = { NULL, "Background", "Foreground", "Orphan" };
	json_t *b = json_pack("{s:s, s:s}", "kind", "DeleteOptions", "apiVersion", "v1");
	if (b && policies[opts->propagation])
		json_object_set_new(b, "propagationPolicy", json_string(policies[opts->propagation]));
	if (b && opts->grace_period_seconds >= 0)
		json_object_set_new(b, "gracePeriodSeconds", json_integer(opts->grace_period_seconds));
	if (b && (opts->precondition_uid || opts->precondition_resource_version)) {
		json_t *pre = json_object();
		if (pre && opts->precondition_uid)
			json_object_set_new(pre, "uid", json_string(opts->precondition_uid));
		if (pre && opts->precondition_resource_version)
			json_object_set_new(pre, "resourceVersion", json_string(opts->precondition_resource_version));
		json_object_set_new(b, "preconditions", pre);
	}
	char *text = b ? json_dumps(b, JSON_COMPACT) : NULL;
	json_decref(b);
	return text;
}

static int verb_delete(void *data, char **out, const tfjob_resource *res, const char *ns, const char *name,
                       const tfjob_delete_options *opts, tfjob_error **err)
{
	char *path = tfjob__resource_path(res, ns, name, NULL);
	char *body = delete_body(opts);
	int rc = (!path || !body) ? tfjob__oom(err) : 0;
	if (!rc) {
		struct request req = { "DELETE", path, body, "application/json", NULL, NULL };
		rc = kube_request(data, out, &req, err);
	}
	free(path);
	free(body);
	return rc;
}

/* ---- Lifecycle ---- */

static void share_lock(CURL *h, curl_lock_data d, curl_lock_access a, void *arg)
{
	(void)h;
	(void)a;
	struct tfjob__kube *k = arg;
	pthread_mutex_lock(&k->share_locks[d]);
}

static void share_unlock(CURL *h, curl_lock_data d, void *arg)
{
	(void)h;
	struct tfjob__kube *k = arg;
	pthread_mutex_unlock(&k->share_locks[d]);
}

static void kube_free(void *data)
{
	struct tfjob__kube *k = data;
	if (!k)
		return;
	tfjob__http_pool_clear(k); /* kept handles hold the share */
	if (k->share)
		curl_share_cleanup(k->share);
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_destroy(&k->share_locks[i]);
	pthread_mutex_destroy(&k->auth_mu);
	pthread_mutex_destroy(&k->pool_mu);
	if (k->rl_ready) {
		tfjob__ratelimit_destroy(&k->rl);
		tfjob__ratelimit_destroy(&k->events_rl);
	}
	tfjob__kube_config_clear(&k->cfg);
	free(k->url_base);
	free(k->connect_to);
	free(k->host_header);
	free(k->user_agent);
	free(k->proxy);
	free(k->no_proxy);
	if (k->token) {
		memset(k->token, 0, strlen(k->token));
		free(k->token);
	}
	tfjob__exec_result_clear(&k->exec_cred);
	free(k);
}

static const char *kube_namespace(void *data) { return ((struct tfjob__kube *)data)->cfg.namespace_name; }

/* url_base and, with tls-server-name, the CONNECT_TO entry that keeps the real address. */
static int setup_url(struct tfjob__kube *k, tfjob_error **err)
{
	/* "host:port" without a scheme: https when there are TLS settings, else http (client-go). */
	char *full = NULL;
	if (!strstr(k->cfg.server, "://")) {
		const struct tfjob__kube_config *c = &k->cfg;
		int tls = c->ca_data || c->cert_data || c->insecure;
		if (!(full = tfjob__strdup_printf("%s://%s", tls ? "https" : "http", c->server)))
			return tfjob__oom(err);
	}
	CURLU *u = curl_url();
	char *host = NULL, *port = NULL, *url = NULL;
	int rc = 0;
	if (!u || curl_url_set(u, CURLUPART_URL, full ? full : k->cfg.server, 0) ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) ||
	    curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT))
		rc = tfjob__fail(err, TFJOB_ESCHEMA, "invalid server URL '%s'", k->cfg.server);
	if (!rc && full) {
		free(k->cfg.server);
		k->cfg.server = full;
		full = NULL;
	}
	free(full);
	if (!rc && k->cfg.tls_server_name) {
		k->connect_to = tfjob__strdup_printf("%s:%s:%s:%s", k->cfg.tls_server_name, port, host, port);
		/* The name only changes SNI and verification (as Go's tls.Config.ServerName): the Host
		 * header stays the server's, for proxies that route on it. */
		char *given_port = NULL;
		curl_url_get(u, CURLUPART_PORT, &given_port, 0);
		k->host_header = tfjob__strdup_printf("Host: %s%s%s", host, given_port ? ":" : "", given_port ? given_port : "");
		curl_free(given_port);
		curl_url_set(u, CURLUPART_HOST, k->cfg.tls_server_name, 0);
	}
	if (!rc && curl_url_get(u, CURLUPART_URL, &url, 0))
		rc = tfjob__oom(err);
	if (!rc) {
		size_t n = strlen(url);
		while (n > 0 && url[n - 1] == '/')
			url[--n] = '\0';
		k->url_base = tfjob__strdup(url);
		if (!k->url_base || (k->cfg.tls_server_name && (!k->connect_to || !k->host_header)))
			rc = tfjob__oom(err);
	}
	curl_free(host);
	curl_free(port);
	curl_free(url);
	curl_url_cleanup(u);
	return rc;
}

/*
 * The proxy, read once as client-go reads it (ProxyFromEnvironment caches the environment on
 * first use), with libcurl's rules: kubeconfig's proxy-url for everything; else <scheme>_proxy
 * (HTTPS_PROXY too for https; HTTP_PROXY is never read, as libcurl refuses it), then all_proxy
 * or ALL_PROXY; hosts in no_proxy or NO_PROXY go direct. A set but empty variable means none.
 */
static int setup_proxy(struct tfjob__kube *k, tfjob_error **err)
{
	const char *proxy = k->cfg.proxy_url, *no_proxy = "";
	if (!proxy) {
		int https = !strncasecmp(k->url_base, "https:", 6);
		proxy = getenv(https ? "https_proxy" : "http_proxy");
		if (!proxy && https)
			proxy = getenv("HTTPS_PROXY");
		if (!proxy)
			proxy = getenv("all_proxy");
		if (!proxy)
			proxy = getenv("ALL_PROXY");
		no_proxy = getenv("no_proxy");
		if (!no_proxy)
			no_proxy = getenv("NO_PROXY");
	}
	k->proxy = tfjob__strdup(proxy ? proxy : "");
	k->no_proxy = tfjob__strdup(no_proxy ? no_proxy : "");
	return k->proxy && k->no_proxy ? 0 : tfjob__oom(err);
}

static int load_config(struct tfjob__kube_config *cfg, const tfjob_kube_options *opts, tfjob_error **err)
{
	if (opts->source == TFJOB_KUBE_SOURCE_IN_CLUSTER)
		return tfjob__incluster_load(cfg, opts->in_cluster_dir, err);
	tfjob_error *kerr = NULL;
	int rc = tfjob__kubeconfig_load(cfg, opts->kubeconfig, opts->context, &kerr);
	/* AUTO: no kubeconfig at all (and none named) falls back to the in-cluster configuration. */
	if (rc == TFJOB_ENOTFOUND && opts->source == TFJOB_KUBE_SOURCE_AUTO && !opts->kubeconfig && !opts->context &&
	    getenv("KUBERNETES_SERVICE_HOST") && strstr(tfjob_error_message(kerr), "no kubeconfig found")) {
		tfjob_error_free(kerr);
		return tfjob__incluster_load(cfg, opts->in_cluster_dir, err);
	}
	if (rc && err)
		*err = kerr;
	else
		tfjob_error_free(kerr);
	return rc;
}

static int apply_options(struct tfjob__kube *k, const tfjob_kube_options *opts, tfjob_error **err)
{
	if (opts->namespace_name && opts->namespace_name[0]) {
		free(k->cfg.namespace_name);
		k->cfg.namespace_name = tfjob__strdup(opts->namespace_name);
	}
	if (!k->cfg.namespace_name)
		k->cfg.namespace_name = tfjob__strdup("default");
	k->user_agent = opts->user_agent ? tfjob__strdup(opts->user_agent) : tfjob__strdup_printf("libtfjob/%s", tfjob_version());
	k->connect_timeout_ms = opts->connect_timeout_ms > 0 ? opts->connect_timeout_ms : 10000;
	k->request_timeout_ms = opts->request_timeout_ms > 0 ? opts->request_timeout_ms : 60000;
	k->retry_base_ms = opts->retry_base_ms > 0 ? opts->retry_base_ms : 200;
	k->max_retries = opts->max_retries > 0 ? opts->max_retries : (opts->max_retries < 0 ? 0 : 5);
	double qps = opts->qps != 0 ? opts->qps : 5.0;
	tfjob__ratelimit_init(&k->rl, qps, opts->burst > 0 ? opts->burst : 10);
	tfjob__ratelimit_init(&k->events_rl, qps, opts->burst > 0 ? opts->burst : 10);
	k->rl_ready = 1;
	if (!k->cfg.namespace_name || !k->user_agent)
		return tfjob__oom(err);
	return 0;
}

static int setup_share(struct tfjob__kube *k, tfjob_error **err)
{
	k->share = curl_share_init();
	if (!k->share)
		return tfjob__oom(err);
	curl_share_setopt(k->share, CURLSHOPT_LOCKFUNC, share_lock);
	curl_share_setopt(k->share, CURLSHOPT_UNLOCKFUNC, share_unlock);
	curl_share_setopt(k->share, CURLSHOPT_USERDATA, k);
	curl_share_setopt(k->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_DNS);
	curl_share_setopt(k->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
	curl_share_setopt(k->share, CURLSHOPT_SHARE, CURL_LOCK_DATA_CONNECT);
	return 0;
}

int tfjob_kube_options_init(tfjob_kube_options *opts, unsigned int version)
{
	return tfjob__versioned_init(&tfjob__kube_options_v, opts, version);
}

static struct tfjob__kube *kube_alloc(void)
{
	struct tfjob__kube *k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	for (int i = 0; i < CURL_LOCK_DATA_LAST; i++)
		pthread_mutex_init(&k->share_locks[i], NULL);
	pthread_mutex_init(&k->auth_mu, NULL);
	pthread_mutex_init(&k->pool_mu, NULL);
	return k;
}

int tfjob_kube_transport_new(tfjob_transport **out, const tfjob_kube_options *caller_opts, tfjob_error **err)
{
	if (!out)
		return tfjob__fail(err, TFJOB_EINVAL, "kube transport: NULL out");
	tfjob_kube_options copy;
	int rc = tfjob__versioned_copy(&tfjob__kube_options_v, &copy, caller_opts, err);
	if (rc)
		return rc;
	const tfjob_kube_options *opts = &copy;
	struct tfjob__kube *k = kube_alloc();
	if (!k)
		return tfjob__oom(err);
	rc = load_config(&k->cfg, opts, err);
	if (!rc)
		rc = apply_options(k, opts, err);
	if (!rc)
		rc = setup_url(k, err);
	if (!rc)
		rc = setup_proxy(k, err);
	if (!rc)
		rc = setup_share(k, err);
	if (!rc) {
		tfjob_transport_backend be = {
			.version = TFJOB_TRANSPORT_BACKEND_VERSION,
			.data = k,
			.free = kube_free,
			.default_namespace = kube_namespace,
			.get = verb_get,
			.list = verb_list,
			.create = verb_create,
			.update = verb_update,
			.update_status = verb_update_status,
			.patch = verb_patch,
			.del = verb_delete,
			.watch = tfjob__kube_watch,
			.apply = verb_apply,
		};
		rc = tfjob_transport_new(out, &be, err);
	}
	if (rc)
		kube_free(k);
	return rc;
}

int tfjob_kube_transport_is(const tfjob_transport *t) { return t && t->be.free == kube_free; }

const char *tfjob_kube_transport_server(const tfjob_transport *t)
{
	return tfjob_kube_transport_is(t) ? ((struct tfjob__kube *)t->be.data)->cfg.server : NULL;
}
