/*
 * The validating admission webhook (webhook.h).
 * SPDX-License-Identifier: Apache-2.0
 */
#include "webhook.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int seen_before(const tfjob_field_errors *errors, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (!strcmp(tfjob_field_errors_message(errors, j), tfjob_field_errors_message(errors, i)))
			return 1;
	return 0;
}

char *op_webhook_denial_message(const tfjob_field_errors *errors)
{
	size_t n = tfjob_field_errors_count(errors), cap = 64, len = 0, distinct = 0;
	char *out = malloc(cap);
	if (!out)
		return NULL;
	out[len++] = '[';
	for (size_t i = 0; i < n; i++) {
		if (seen_before(errors, i))
			continue;
		const char *m = tfjob_field_errors_message(errors, i);
		size_t ml = strlen(m);
		if (len + ml + 4 > cap) {
			while (len + ml + 4 > cap)
				cap *= 2;
			char *o = realloc(out, cap);
			if (!o) {
				free(out);
				return NULL;
			}
			out = o;
		}
		if (distinct++) {
			memcpy(out + len, ", ", 2);
			len += 2;
		}
		memcpy(out + len, m, ml);
		len += ml;
	}
	out[len++] = ']';
	out[len] = 0;
	if (distinct == 1) { /* one error: no brackets */
		memmove(out, out + 1, len - 2);
		out[len - 2] = 0;
	}
	return out;
}

/* {"uid":..., "allowed":..., "status":{...}} of an AdmissionReview response. */
static json_t *response(const char *uid, int allowed, int code, const char *reason, const char *message)
{
	json_t *status = json_pack("{s:{},s:i}", "metadata", "code", code);
	if (reason)
		json_object_set_new(status, "reason", json_string(reason));
	if (message)
		json_object_set_new(status, "message", json_string(message));
	return json_pack("{s:s,s:b,s:o}", "uid", uid, "allowed", allowed, "status", status);
}

static int parse_job(tfjob_job **out, json_t *obj, char **why)
{
	char *text = json_dumps(obj, JSON_COMPACT);
	tfjob_error *err = NULL;
	int rc = text ? tfjob_job_parse(out, text, strlen(text), NULL, &err) : TFJOB_ENOMEM;
	if (rc) {
		const char *m = err ? tfjob_error_message(err) : "out of memory";
		*why = strdup(m ? m : "cannot decode the object");
	}
	tfjob_error_free(err);
	free(text);
	return rc;
}

/*
 * The admitted job's warnings (tfjob_job_warnings) as the response's `warnings`, which the API
 * server passes on and kubectl prints as "Warning: ...". The request does not tell whether the
 * namespace injects the Istio sidecar, so that rule is left out. 0 or -1 (out of memory).
 */
static int add_warnings(json_t *res, const tfjob_job *job)
{
	tfjob_warnings *ws = NULL;
	if (tfjob_job_warnings(&ws, job, NULL, NULL))
		return -1;
	size_t n = tfjob_warnings_count(ws);
	json_t *list = n ? json_array() : NULL;
	int rc = n && !list ? -1 : 0;
	for (size_t i = 0; i < n && !rc; i++)
		rc = json_array_append_new(list, json_string(tfjob_warnings_message(ws, i)));
	if (!rc && list)
		rc = json_object_set_new(res, "warnings", list);
	else
		json_decref(list);
	tfjob_warnings_free(ws);
	return rc ? -1 : 0;
}

/* The review of one request: allowed, denied with every field error, or errored (400). */
static json_t *review(op_webhook *w, json_t *req, const char *uid)
{
	const char *op = json_string_value(json_object_get(req, "operation"));
	int update = op && !strcmp(op, "UPDATE");
	if (!op || (strcmp(op, "CREATE") && !update))
		return response(uid, 1, 200, NULL, NULL);
	tfjob_job *job = NULL, *old = NULL;
	char *why = NULL;
	json_t *res = NULL;
	if (parse_job(&job, json_object_get(req, "object"), &why) ||
	    (update && parse_job(&old, json_object_get(req, "oldObject"), &why))) {
		res = response(uid, 0, 400, "BadRequest", why);
		goto out;
	}
	tfjob_validate_options vo = TFJOB_VALIDATE_OPTIONS_INIT;
	vo.compat = w->compat;
	vo.old = old;
	tfjob_field_errors *errors = NULL;
	tfjob_error *err = NULL;
	if (tfjob_job_validate(&errors, job, &vo, &err)) {
		res = response(uid, 0, 500, "InternalError", tfjob_error_message(err));
		tfjob_error_free(err);
		goto out;
	}
	if (tfjob_field_errors_count(errors) == 0) {
		res = response(uid, 1, 200, NULL, NULL);
		if (res && w->compat == TFJOB_COMPAT_DOCUMENTED && add_warnings(res, job)) {
			json_decref(res);
			res = response(uid, 0, 500, "InternalError", "out of memory");
		}
	} else {
		char *msg = op_webhook_denial_message(errors);
		res = response(uid, 0, 403, "Forbidden", msg ? msg : "denied");
		if (w->on_denied && msg) {
			char who[512];
			const char *ns = json_string_value(json_object_get(req, "namespace"));
			const char *name = json_string_value(json_object_get(req, "name"));
			snprintf(who, sizeof(who), "%s/%s", ns ? ns : "", name ? name : "");
			w->on_denied(who, msg);
		}
		free(msg);
	}
	tfjob_field_errors_free(errors);
out:
	free(why);
	tfjob_job_free(job);
	tfjob_job_free(old);
	return res;
}

static char *bad_request(int *status, const char *why)
{
	*status = 400;
	json_t *o = json_pack("{s:s}", "error", why);
	char *s = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	return s;
}

char *op_webhook_review(void *payload, const char *path, const char *body, size_t len, int *status)
{
	(void)path;
	json_error_t jerr;
	json_t *in = json_loadb(body, len, 0, &jerr);
	json_t *req = json_object_get(in, "request");
	const char *uid = json_string_value(json_object_get(req, "uid"));
	const char *kind = json_string_value(json_object_get(in, "kind"));
	const char *api = json_string_value(json_object_get(in, "apiVersion"));
	char *out = NULL;
	if (!in)
		out = bad_request(status, "the body is not JSON");
	else if (!kind || strcmp(kind, "AdmissionReview") || !api || strcmp(api, "admission.k8s.io/v1"))
		out = bad_request(status, "expected an admission.k8s.io/v1 AdmissionReview");
	else if (!json_is_object(req) || !uid)
		out = bad_request(status, "the AdmissionReview has no request or no request.uid");
	if (out) {
		json_decref(in);
		return out;
	}
	json_t *res = review(payload, req, uid);
	json_t *o = res ? json_pack("{s:s,s:s,s:o}", "apiVersion", "admission.k8s.io/v1", "kind", "AdmissionReview",
	                            "response", res)
	                : NULL;
	out = o ? json_dumps(o, JSON_COMPACT) : NULL;
	json_decref(o);
	json_decref(in);
	*status = 200;
	return out;
}
