/*
 * Field error lists: construction, formatting as Kubernetes does, JSON output.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdlib.h>
#include <string.h>

#include "core/fielderr.h"
#include "core/job.h"
#include "util/sbuf.h"

static const char *const type_names[] = {
	[TFJOB_FIELD_VALUE_NOT_FOUND] = "FieldValueNotFound",
	[TFJOB_FIELD_VALUE_REQUIRED] = "FieldValueRequired",
	[TFJOB_FIELD_VALUE_DUPLICATE] = "FieldValueDuplicate",
	[TFJOB_FIELD_VALUE_INVALID] = "FieldValueInvalid",
	[TFJOB_FIELD_VALUE_NOT_SUPPORTED] = "FieldValueNotSupported",
	[TFJOB_FIELD_VALUE_FORBIDDEN] = "FieldValueForbidden",
	[TFJOB_FIELD_VALUE_TOO_LONG] = "FieldValueTooLong",
	[TFJOB_FIELD_VALUE_TOO_MANY] = "FieldValueTooMany",
	[TFJOB_FIELD_VALUE_INTERNAL] = "InternalError",
	[TFJOB_FIELD_VALUE_TYPE_INVALID] = "FieldValueTypeInvalid",
};

/* What Kubernetes prints before the value or detail (field.ErrorType.String()). */
static const char *const type_phrases[] = {
	[TFJOB_FIELD_VALUE_NOT_FOUND] = "Not found",
	[TFJOB_FIELD_VALUE_REQUIRED] = "Required value",
	[TFJOB_FIELD_VALUE_DUPLICATE] = "Duplicate value",
	[TFJOB_FIELD_VALUE_INVALID] = "Invalid value",
	[TFJOB_FIELD_VALUE_NOT_SUPPORTED] = "Unsupported value",
	[TFJOB_FIELD_VALUE_FORBIDDEN] = "Forbidden",
	[TFJOB_FIELD_VALUE_TOO_LONG] = "Too long",
	[TFJOB_FIELD_VALUE_TOO_MANY] = "Too many",
	[TFJOB_FIELD_VALUE_INTERNAL] = "Internal error",
	[TFJOB_FIELD_VALUE_TYPE_INVALID] = "Invalid value",
};

const char *tfjob_field_error_type_name(tfjob_field_error_type type)
{
	if ((unsigned)type >= TFJOB_ARRAY_LEN(type_names))
		return "FieldValueUnknown";
	return type_names[type];
}

tfjob_field_errors *tfjob__field_errors_new(void) { return calloc(1, sizeof(tfjob_field_errors)); }

/* Types whose message shows the value, as field.Error.ErrorBody() does. */
static bool shows_value(tfjob_field_error_type type)
{
	switch (type) {
	case TFJOB_FIELD_VALUE_REQUIRED:
	case TFJOB_FIELD_VALUE_FORBIDDEN:
	case TFJOB_FIELD_VALUE_TOO_LONG:
	case TFJOB_FIELD_VALUE_INTERNAL:
		return false;
	default:
		return true;
	}
}

static char *format_message(const struct tfjob__field_error *e)
{
	const char *phrase = type_phrases[e->type];
	bool detail = e->detail && e->detail[0];
	/* Go prints a nil bad value as the quoted string "null". */
	const char *value = strcmp(e->value, "null") ? e->value : "\"null\"";
	if (shows_value(e->type))
		return tfjob__strdup_printf("%s: %s: %s%s%s", e->field, phrase, value, detail ? ": " : "",
		                            detail ? e->detail : "");
	return tfjob__strdup_printf("%s: %s%s%s", e->field, phrase, detail ? ": " : "", detail ? e->detail : "");
}

void tfjob__field_errors_add(tfjob_field_errors *list, tfjob_field_error_type type, const char *field,
                             const json_t *value, const char *detail)
{
	if (!list || list->oom)
		return;
	if (!field) {
		list->oom = true; /* a NULL path only comes from a failed path allocation */
		return;
	}
	if (list->count == list->cap) {
		size_t cap = list->cap ? list->cap * 2 : 8;
		struct tfjob__field_error *grown = realloc(list->items, cap * sizeof(*grown));
		if (!grown) {
			list->oom = true;
			return;
		}
		list->items = grown;
		list->cap = cap;
	}
	struct tfjob__field_error *e = &list->items[list->count];
	memset(e, 0, sizeof(*e));
	e->type = type;
	e->field = tfjob__strdup(field);
	e->detail = tfjob__strdup(detail ? detail : "");
	e->value = value ? tfjob__dump(value, 0) : tfjob__strdup("null");
	if (e->field && e->detail && e->value)
		e->message = format_message(e);
	if (!e->message) {
		free(e->field);
		free(e->detail);
		free(e->value);
		list->oom = true;
		return;
	}
	list->count++;
}

char *tfjob__supported_values_detail(const char *const *supported)
{
	tfjob__sbuf b = TFJOB__SBUF_INIT;
	tfjob__sbuf_adds(&b, "supported values: ");
	for (const char *const *s = supported; *s; s++) {
		if (s != supported)
			tfjob__sbuf_adds(&b, ", ");
		tfjob__sbuf_addc(&b, '"');
		tfjob__sbuf_adds(&b, *s);
		tfjob__sbuf_addc(&b, '"');
	}
	if (b.oom) {
		tfjob__sbuf_free(&b);
		return NULL;
	}
	return tfjob__sbuf_take(&b);
}

char *tfjob__path_child(const char *parent, const char *child)
{
	if (!parent)
		return NULL;
	return parent[0] ? tfjob__strdup_printf("%s.%s", parent, child) : tfjob__strdup(child);
}

char *tfjob__path_key(const char *parent, const char *key) { return parent ? tfjob__strdup_printf("%s[%s]", parent, key) : NULL; }
char *tfjob__path_index(const char *parent, size_t index) { return parent ? tfjob__strdup_printf("%s[%zu]", parent, index) : NULL; }

size_t tfjob_field_errors_count(const tfjob_field_errors *errors) { return errors ? errors->count : 0; }

static const struct tfjob__field_error *item(const tfjob_field_errors *errors, size_t i)
{
	return errors && i < errors->count ? &errors->items[i] : NULL;
}

const char *tfjob_field_errors_field(const tfjob_field_errors *errors, size_t i)
{
	const struct tfjob__field_error *e = item(errors, i);
	return e ? e->field : NULL;
}

tfjob_field_error_type tfjob_field_errors_type(const tfjob_field_errors *errors, size_t i)
{
	const struct tfjob__field_error *e = item(errors, i);
	return e ? e->type : TFJOB_FIELD_VALUE_INTERNAL;
}

const char *tfjob_field_errors_detail(const tfjob_field_errors *errors, size_t i)
{
	const struct tfjob__field_error *e = item(errors, i);
	return e ? e->detail : NULL;
}

const char *tfjob_field_errors_value(const tfjob_field_errors *errors, size_t i)
{
	const struct tfjob__field_error *e = item(errors, i);
	return e ? e->value : NULL;
}

const char *tfjob_field_errors_message(const tfjob_field_errors *errors, size_t i)
{
	const struct tfjob__field_error *e = item(errors, i);
	return e ? e->message : NULL;
}

int tfjob_field_errors_to_json(char **out, const tfjob_field_errors *errors, unsigned int flags, tfjob_error **err)
{
	if (!out)
		return tfjob__fail(err, TFJOB_EINVAL, "out is NULL");
	json_t *list = json_array();
	json_t *doc = json_pack("{s:b,s:o}", "valid", tfjob_field_errors_count(errors) == 0, "errors", list);
	if (!doc)
		return tfjob__oom(err);
	for (size_t i = 0; i < tfjob_field_errors_count(errors); i++) {
		const struct tfjob__field_error *e = &errors->items[i];
		json_t *entry = json_pack("{s:s,s:s,s:s}", "field", e->field, "type", tfjob_field_error_type_name(e->type),
		                          "detail", e->detail);
		if (!entry || json_array_append_new(list, entry)) {
			json_decref(doc);
			return tfjob__oom(err);
		}
	}
	*out = tfjob__dump(doc, flags);
	json_decref(doc);
	return *out ? 0 : tfjob__oom(err);
}

void tfjob_field_errors_free(tfjob_field_errors *errors)
{
	if (!errors)
		return;
	for (size_t i = 0; i < errors->count; i++) {
		free(errors->items[i].field);
		free(errors->items[i].detail);
		free(errors->items[i].value);
		free(errors->items[i].message);
	}
	free(errors->items);
	free(errors);
}
