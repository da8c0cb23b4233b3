/*
 * Small helpers of the transport layer: time, paths, JSON, merge patch.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "parse/jscan.h"
#include "transport/internal.h"

int tfjob__api_fail(tfjob_error **err, int code, int http_status, const char *details_json, const char *fmt, ...)
{
	if (!err)
		return code;
	va_list ap;
	va_start(ap, fmt);
	tfjob__failv(err, code, fmt, ap);
	va_end(ap);
	if (*err) {
		(*err)->http_status = http_status;
		if (details_json)
			(*err)->details_json = tfjob__strdup(details_json);
	}
	return code;
}

void tfjob__sleep_ms(int64_t ms)
{
	if (ms <= 0)
		return;
	struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts) == -1 && errno == EINTR)
		;
}

char *tfjob__resource_path(const tfjob_resource *res, const char *ns, const char *name, const char *sub)
{
	char *base = (!res->group || !res->group[0]) ? tfjob__strdup_printf("/api/%s", res->version)
	                                             : tfjob__strdup_printf("/apis/%s/%s", res->group, res->version);
	if (!base)
		return NULL;
	char *path;
	if (res->namespaced && ns && ns[0])
		path = tfjob__strdup_printf("%s/namespaces/%s/%s%s%s%s%s", base, ns, res->resource, name ? "/" : "",
		                            name ? name : "", sub ? "/" : "", sub ? sub : "");
	else
		path = tfjob__strdup_printf("%s/%s%s%s%s%s", base, res->resource, name ? "/" : "", name ? name : "",
		                            sub ? "/" : "", sub ? sub : "");
	free(base);
	return path;
}


json_t *tfjob__merge_patch(const json_t *target, const json_t *patch)
{
	if (!json_is_object(patch))
		return json_deep_copy(patch);
	json_t *result = json_is_object(target) ? json_deep_copy(target) : json_object();
	if (!result)
		return NULL;
	const char *key;
	json_t *value;
	json_object_foreach((json_t *)patch, key, value) {
		if (json_is_null(value)) {
			json_object_del(result, key);
			continue;
		}
		json_t *merged = tfjob__merge_patch(json_object_get(result, key), value);
		if (!merged || json_object_set_new(result, key, merged)) {
			json_decref(result);
			return NULL;
		}
	}
	return result;
}

static char *string_copy(json_t *v)
{
	return json_is_string(v) ? tfjob__strdup(json_string_value(v)) : NULL;
}

int tfjob__object_meta(const char *text, const char *what, char **name, char **ns, tfjob_error **err)
{
	if (name)
		*name = NULL;
	if (ns)
		*ns = NULL;
	if (text && tfjob__jscan_certain(text, strlen(text))) {
		const char *md, *md_end;
		if (!tfjob__jscan_member(text, "\"metadata\"", &md, &md_end) || *md != '{')
			md = NULL;
		if ((!name || !tfjob__jscan_string_member(md, "\"name\"", name)) &&
		    (!ns || !tfjob__jscan_string_member(md, "\"namespace\"", ns)))
			return 0;
		if (name) {
			free(*name);
			*name = NULL;
		}
		if (ns) {
			free(*ns);
			*ns = NULL;
		}
	}
	json_t *obj;
	int rc = tfjob__parse_object(&obj, text, what, err);
	if (rc)
		return rc;
	json_t *md = json_object_get(obj, "metadata");
	if (name)
		*name = string_copy(json_object_get(md, "name"));
	if (ns)
		*ns = string_copy(json_object_get(md, "namespace"));
	json_decref(obj);
	return 0;
}

int tfjob__parse_object(json_t **out, const char *text, const char *what, tfjob_error **err)
{
	if (!text)
		return tfjob__fail(err, TFJOB_EINVAL, "%s: no JSON given", what);
	json_error_t jerr;
	json_t *v = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	if (!v)
		return tfjob__fail(err, TFJOB_EPARSE, "%s: %d:%d: %s", what, jerr.line, jerr.column, jerr.text);
	if (!json_is_object(v)) {
		json_decref(v);
		return tfjob__fail(err, TFJOB_ESCHEMA, "%s: expected a JSON object", what);
	}
	*out = v;
	return 0;
}

int tfjob__tr_dump(char **out, const json_t *value, tfjob_error **err)
{
	if (!out)
		return 0;
	char *s = json_dumps(value, JSON_COMPACT | JSON_ENCODE_ANY);
	if (!s)
		return tfjob__oom(err);
	*out = s;
	return 0;
}
