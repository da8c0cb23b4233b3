/*
 * Error codes and error objects: the bottom of every layer (each one reports errors with them).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/common.h"

struct code_info {
	int code;
	const char *name;
	const char *text;
};

static const struct code_info code_table[] = {
	{ TFJOB_OK, "TFJOB_OK", "success" },
	{ TFJOB_ERROR, "TFJOB_ERROR", "internal error" },
	{ TFJOB_ENOMEM, "TFJOB_ENOMEM", "out of memory" },
	{ TFJOB_EINVAL, "TFJOB_EINVAL", "invalid argument" },
	{ TFJOB_EVERSION, "TFJOB_EVERSION", "unsupported structure version" },
	{ TFJOB_EPARSE, "TFJOB_EPARSE", "syntax error" },
	{ TFJOB_ELIMIT, "TFJOB_ELIMIT", "input limit exceeded" },
	{ TFJOB_ESCHEMA, "TFJOB_ESCHEMA", "wrong object shape" },
	{ TFJOB_EINVALID, "TFJOB_EINVALID", "validation failed" },
	{ TFJOB_ENOTFOUND, "TFJOB_ENOTFOUND", "not found" },
	{ TFJOB_EEXISTS, "TFJOB_EEXISTS", "already exists" },
	{ TFJOB_ECONFLICT, "TFJOB_ECONFLICT", "conflict" },
	{ TFJOB_EGONE, "TFJOB_EGONE", "resource version expired" },
	{ TFJOB_EUNAUTHORIZED, "TFJOB_EUNAUTHORIZED", "unauthorized" },
	{ TFJOB_EFORBIDDEN, "TFJOB_EFORBIDDEN", "forbidden" },
	{ TFJOB_ETOOMANYREQUESTS, "TFJOB_ETOOMANYREQUESTS", "too many requests" },
	{ TFJOB_ETIMEOUT, "TFJOB_ETIMEOUT", "timeout" },
	{ TFJOB_ESERVER, "TFJOB_ESERVER", "server error" },
	{ TFJOB_ENETWORK, "TFJOB_ENETWORK", "network error" },
	{ TFJOB_EIO, "TFJOB_EIO", "I/O error" },
	{ TFJOB_ESTATE, "TFJOB_ESTATE", "invalid state" },
};

static const struct code_info *find_code(int code)
{
	for (size_t i = 0; i < TFJOB_ARRAY_LEN(code_table); i++)
		if (code_table[i].code == code)
			return &code_table[i];
	return NULL;
}

const char *tfjob_strerror(int code)
{
	const struct code_info *info = find_code(code);
	return info ? info->text : "unknown error";
}

const char *tfjob_error_code_name(int code)
{
	const struct code_info *info = find_code(code);
	return info ? info->name : "TFJOB_UNKNOWN";
}

int tfjob_error_code_of(const tfjob_error *err) { return err ? err->code : TFJOB_OK; }
const char *tfjob_error_message(const tfjob_error *err) { return err && err->message ? err->message : ""; }
const char *tfjob_error_field(const tfjob_error *err) { return err ? err->field : NULL; }
const char *tfjob_error_file(const tfjob_error *err) { return err ? err->file : NULL; }
int tfjob_error_line(const tfjob_error *err) { return err ? err->line : 0; }
int tfjob_error_column(const tfjob_error *err) { return err ? err->column : 0; }
int tfjob_error_http_status(const tfjob_error *err) { return err ? err->http_status : 0; }
const char *tfjob_error_details_json(const tfjob_error *err) { return err ? err->details_json : NULL; }
const char *tfjob_error_reason(const tfjob_error *err) { return err ? err->reason : NULL; }

void tfjob_error_free(tfjob_error *err)
{
	if (!err)
		return;
	free(err->message);
	free(err->field);
	free(err->file);
	free(err->details_json);
	free(err->reason);
	free(err);
}

char *tfjob__strdup(const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *copy = malloc(n);
	if (copy)
		memcpy(copy, s, n);
	return copy;
}

char *tfjob__strdup_vprintf(const char *fmt, va_list ap)
{
	va_list ap2;
	va_copy(ap2, ap);
	int n = vsnprintf(NULL, 0, fmt, ap2);
	va_end(ap2);
	if (n < 0)
		return NULL;
	char *s = malloc((size_t)n + 1);
	if (s)
		vsnprintf(s, (size_t)n + 1, fmt, ap);
	return s;
}

char *tfjob__strdup_printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	char *s = tfjob__strdup_vprintf(fmt, ap);
	va_end(ap);
	return s;
}

/*
 * A static error for out-of-memory reports would be shared between callers and so could not
 * be freed; instead a tiny allocation is tried, and when even that fails *err stays NULL.
 */
tfjob_error *tfjob__error_new(int code, const char *message)
{
	tfjob_error *e = calloc(1, sizeof(*e));
	if (!e)
		return NULL;
	e->code = code;
	e->message = tfjob__strdup(message ? message : tfjob_strerror(code));
	if (!e->message) {
		free(e);
		return NULL;
	}
	return e;
}

int tfjob__failv(tfjob_error **err, int code, const char *fmt, va_list ap)
{
	if (!err)
		return code;
	char *msg = tfjob__strdup_vprintf(fmt, ap);
	tfjob_error *e = calloc(1, sizeof(*e));
	if (!msg || !e) {
		free(msg);
		free(e);
		*err = tfjob__error_new(code == TFJOB_ENOMEM ? code : TFJOB_ENOMEM, NULL);
		return code;
	}
	e->code = code;
	e->message = msg;
	*err = e;
	return code;
}

int tfjob__fail(tfjob_error **err, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	tfjob__failv(err, code, fmt, ap);
	va_end(ap);
	return code;
}

int tfjob__fail_at(tfjob_error **err, int code, const char *file, int line, int column, const char *fmt, ...)
{
	if (!err)
		return code;
	va_list ap;
	va_start(ap, fmt);
	char *body = tfjob__strdup_vprintf(fmt, ap);
	va_end(ap);
	char *msg;
	const char *shown = file ? file : "<input>";
	if (line > 0 && column > 0)
		msg = tfjob__strdup_printf("%s:%d:%d: %s", shown, line, column, body ? body : "");
	else if (line > 0)
		msg = tfjob__strdup_printf("%s:%d: %s", shown, line, body ? body : "");
	else
		msg = tfjob__strdup_printf("%s: %s", shown, body ? body : "");
	free(body);
	tfjob__fail(err, code, "%s", msg ? msg : "out of memory");
	free(msg);
	if (*err) {
		(*err)->line = line;
		(*err)->column = column;
		(*err)->file = tfjob__strdup(file);
	}
	return code;
}

void tfjob__error_shift_line(tfjob_error *e, int by)
{
	if (!e || e->line <= 0 || by <= 0 || !e->message)
		return;
	char *old_prefix = tfjob__strdup_printf("%s:%d:", e->file ? e->file : "<input>", e->line);
	char *moved = NULL;
	if (old_prefix && !strncmp(e->message, old_prefix, strlen(old_prefix)))
		moved = tfjob__strdup_printf("%s:%d:%s", e->file ? e->file : "<input>", e->line + by,
		                             e->message + strlen(old_prefix));
	free(old_prefix);
	if (!moved)
		return; /* out of memory or another message: keep it as it is */
	free(e->message);
	e->message = moved;
	e->line += by;
}

int tfjob__fail_field(tfjob_error **err, int code, const char *field, const char *fmt, ...)
{
	if (!err)
		return code;
	va_list ap;
	va_start(ap, fmt);
	char *body = tfjob__strdup_vprintf(fmt, ap);
	va_end(ap);
	tfjob__fail(err, code, "%s: %s", field, body ? body : "");
	free(body);
	if (*err)
		(*err)->field = tfjob__strdup(field);
	return code;
}

int tfjob__oom(tfjob_error **err)
{
	if (err)
		*err = tfjob__error_new(TFJOB_ENOMEM, NULL);
	return TFJOB_ENOMEM;
}

int tfjob__check_version(tfjob_error **err, unsigned int version, unsigned int max_known, const char *what)
{
	if (version == 0 || version > max_known)
		return tfjob__fail(err, TFJOB_EVERSION, "%s version %u is not supported (this library knows 1 to %u)",
		                   what, version, max_known);
	return 0;
}
