/*
 * tfjobctl: printing objects as kubectl does (-o json, -o yaml, -o name), shared by every command
 * that prints an object or a list.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfjobctl.h"

/* ---- YAML output (block style; strings quoted whenever plain style could be misread) ---- */

static int plain_safe(const char *s)
{
	static const char *const reserved[] = { "", "~", "null", "Null", "NULL", "true", "True", "TRUE", "false", "False",
	                                        "FALSE", "yes", "Yes", "YES", "no", "No", "NO", "on", "On", "ON", "off", "Off", "OFF",
	                                        "y", "n", "Y", "N" };
	for (size_t i = 0; i < sizeof(reserved) / sizeof(reserved[0]); i++)
		if (!strcmp(s, reserved[i]))
			return 0;
	if (strchr("-?:,[]{}#&*!|>'\"%@` \t", s[0]) || s[strlen(s) - 1] == ' ')
		return 0;
	if (strstr(s, ": ") || strstr(s, " #") || strchr(s, '\n') || s[strlen(s) - 1] == ':')
		return 0;
	char *end;
	strtod(s, &end);
	if (*end == '\0')
		return 0; /* looks like a number */
	/* What a YAML 1.1 reader (PyYAML, go-yaml v2) would take for a timestamp, a sexagesimal, a
	 * number with '_', 0b/0o/0x, .inf/.nan or a merge key: quoted, as kubectl's output does. */
	if ((s[0] >= '0' && s[0] <= '9') || ((s[0] == '+' || s[0] == '-' || s[0] == '.') &&
	                                     ((s[1] >= '0' && s[1] <= '9') || s[1] == '.')))
		return 0;
	static const char *const special[] = { ".inf", ".Inf", ".INF", ".nan", ".NaN", ".NAN", "<<", "=" };
	for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++)
		if (!strcmp(s, special[i]))
			return 0;
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20)
			return 0;
	return 1;
}

static void yaml_scalar(FILE *out, const json_t *v)
{
	if (json_is_string(v) && plain_safe(json_string_value(v))) {
		fputs(json_string_value(v), out);
		return;
	}
	char *s = json_dumps(v, JSON_ENCODE_ANY);
	fputs(s ? s : "null", out);
	free(s);
}

static int is_empty_container(const json_t *v)
{
	return (json_is_object(v) && json_object_size(v) == 0) || (json_is_array(v) && json_array_size(v) == 0);
}

static void yaml_value(FILE *out, const json_t *v, int indent);

static void yaml_key(FILE *out, const char *key)
{
	json_t *k = json_string(key);
	yaml_scalar(out, k);
	json_decref(k);
	fputc(':', out);
}

static void yaml_object(FILE *out, const json_t *v, int indent, int first_inline)
{
	const char *key;
	json_t *val;
	int first = 1;
	json_object_foreach((json_t *)v, key, val) {
		if (!(first && first_inline))
			fprintf(out, "%*s", indent, "");
		first = 0;
		yaml_key(out, key);
		if ((json_is_object(val) || json_is_array(val)) && !is_empty_container(val)) {
			fputc('\n', out);
			yaml_value(out, val, json_is_array(val) ? indent : indent + 2);
		} else {
			fputc(' ', out);
			if (is_empty_container(val))
				fputs(json_is_object(val) ? "{}" : "[]", out);
			else
				yaml_scalar(out, val);
			fputc('\n', out);
		}
	}
}

static void yaml_value(FILE *out, const json_t *v, int indent)
{
	if (json_is_object(v)) {
		yaml_object(out, v, indent, 0);
	} else if (json_is_array(v)) {
		size_t i;
		json_t *item;
		json_array_foreach((json_t *)v, i, item) {
			fprintf(out, "%*s- ", indent, "");
			if (json_is_object(item) && json_object_size(item) > 0)
				yaml_object(out, item, indent + 2, 1);
			else if (json_is_array(item) && json_array_size(item) > 0) {
				fputc('\n', out);
				yaml_value(out, item, indent + 2);
			} else {
				if (is_empty_container(item))
					fputs(json_is_object(item) ? "{}" : "[]", out);
				else
					yaml_scalar(out, item);
				fputc('\n', out);
			}
		}
	} else {
		fprintf(out, "%*s", indent, "");
		yaml_scalar(out, v);
		fputc('\n', out);
	}
}

void ctl_print_yaml(FILE *out, const json_t *v) { yaml_value(out, v, 0); }

void ctl_print_json(FILE *out, const json_t *v)
{
	char *s = json_dumps(v, JSON_INDENT(4) | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	if (s) {
		fputs(s, out);
		fputc('\n', out);
	}
	free(s);
}

void ctl_print_yaml_stream(FILE *out, const json_t *items)
{
	size_t i;
	json_t *item;
	json_array_foreach((json_t *)items, i, item) {
		if (i > 0)
			fputs("---\n", out);
		ctl_print_yaml(out, item);
	}
}

json_t *ctl_list_of(const json_t *items)
{
	return json_pack("{s:s, s:O, s:s, s:{s:s}}", "apiVersion", "v1", "items", items, "kind", "List", "metadata",
	                 "resourceVersion", "");
}

void ctl_print_name(FILE *out, const json_t *obj)
{
	const char *kind = json_string_value(json_object_get(obj, "kind"));
	const char *api = json_string_value(json_object_get(obj, "apiVersion"));
	const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
	char lower[128];
	snprintf(lower, sizeof(lower), "%s", kind ? kind : "");
	for (char *p = lower; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	/* The group is the apiVersion's part before '/'; the core group ("v1") has none. */
	const char *slash = api ? strchr(api, '/') : NULL;
	if (slash)
		fprintf(out, "%s.%.*s/%s\n", lower, (int)(slash - api), api, name ? name : "");
	else
		fprintf(out, "%s/%s\n", lower, name ? name : "");
}

static const char *const format_names[] = { "", "json", "yaml", "name", "wide", "list" };

bool ctl_parse_format(enum ctl_format *out, const char *value, unsigned int allowed, const char *command)
{
	if (value && value[0] == '=')
		value++;
	for (size_t f = 1; f < sizeof(format_names) / sizeof(format_names[0]); f++) {
		if ((allowed & CTL_FORMAT_BIT(f)) && value && !strcmp(value, format_names[f])) {
			*out = (enum ctl_format)f;
			return true;
		}
	}
	char expected[128] = "";
	for (size_t f = 1; f < sizeof(format_names) / sizeof(format_names[0]); f++)
		if (allowed & CTL_FORMAT_BIT(f))
			snprintf(expected + strlen(expected), sizeof(expected) - strlen(expected), "%s%s", expected[0] ? ", " : "",
			         format_names[f]);
	ctl_fail("%s: unknown output format '%s' (expected %s)", command, value ? value : "", expected);
	return false;
}

int ctl_table_add(struct ctl_table *tb, const char *const *row)
{
	char **grown = realloc(tb->cells, (tb->rows + 1) * tb->cols * sizeof(char *));
	if (!grown)
		return -1;
	tb->cells = grown;
	for (size_t c = 0; c < tb->cols; c++)
		grown[tb->rows * tb->cols + c] = strdup(row[c] ? row[c] : "");
	tb->rows++;
	return 0;
}

void ctl_table_print(FILE *out, struct ctl_table *tb)
{
	size_t width[CTL_TABLE_MAX_COLS] = { 0 };
	for (size_t r = 0; r < tb->rows; r++)
		for (size_t c = 0; c < tb->cols; c++) {
			const char *cell = tb->cells[r * tb->cols + c];
			size_t n = cell ? strlen(cell) : 0;
			if (n + 3 > width[c])
				width[c] = n + 3 < 10 ? 10 : n + 3;
		}
	for (size_t r = 0; r < tb->rows; r++) {
		size_t last = tb->cols; /* no padding after the last cell that is not empty */
		while (last > 1 && (!tb->cells[r * tb->cols + last - 1] || !tb->cells[r * tb->cols + last - 1][0]))
			last--;
		for (size_t c = 0; c < last; c++) {
			const char *cell = tb->cells[r * tb->cols + c];
			if (c + 1 < last)
				fprintf(out, "%-*s", (int)width[c], cell ? cell : "");
			else
				fprintf(out, "%s", cell ? cell : "");
		}
		fputc('\n', out);
	}
	for (size_t i = 0; i < tb->rows * tb->cols; i++)
		free(tb->cells[i]);
	free(tb->cells);
	tb->cells = NULL;
	tb->rows = 0;
}
