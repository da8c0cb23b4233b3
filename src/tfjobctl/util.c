/*
 * tfjobctl: file reading, error printing and other shared helpers.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfjobctl.h"

int ctl_read_file(char **out, size_t *out_len, const char *path, size_t max)
{
	FILE *f = strcmp(path, "-") ? fopen(path, "rb") : stdin;
	if (!f)
		return ctl_fail("%s: %s", path, strerror(errno));
	size_t cap = 65536, len = 0;
	char *buf = malloc(cap + 1);
	if (!buf) {
		if (f != stdin)
			fclose(f);
		return ctl_fail("out of memory");
	}
	for (;;) {
		if (len == cap) {
			if (cap > max) /* the parser reports the limit with the file name */
				break;
			cap *= 2;
			char *grown = realloc(buf, cap + 1);
			if (!grown) {
				free(buf);
				if (f != stdin)
					fclose(f);
				return ctl_fail("out of memory");
			}
			buf = grown;
		}
		size_t n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	int failed = ferror(f);
	bool truncated = len > max;
	if (f != stdin)
		fclose(f);
	if (failed) {
		free(buf);
		return ctl_fail("%s: read error", path);
	}
	if (truncated) {
		free(buf);
		return ctl_fail("%s: input is larger than the limit of %zu bytes", path, max);
	}
	buf[len] = '\0';
	*out = buf;
	*out_len = len;
	return 0;
}

/* Parse a file's TFJobs (one, or all); *text (when text is not NULL) receives the file's text. */
static int parse_file(tfjob_job ***jobs, size_t *count, tfjob_job **one, const char *path, char **text, size_t *text_len)
{
	char *data;
	size_t len;
	int rc = ctl_read_file(&data, &len, path, TFJOB_DEFAULT_MAX_INPUT_BYTES);
	if (rc)
		return rc;
	tfjob_parse_options opts = TFJOB_PARSE_OPTIONS_INIT;
	opts.filename = strcmp(path, "-") ? path : "<stdin>";
	tfjob_error *err = NULL;
	rc = one ? tfjob_job_parse(one, data, len, &opts, &err) : tfjob_job_parse_all(jobs, count, data, len, &opts, &err);
	if (rc == 0 && text) {
		*text = data;
		*text_len = len;
	} else {
		free(data);
	}
	return rc ? ctl_fail_err(err) : 0;
}

int ctl_load_job(tfjob_job **out, const char *path) { return parse_file(NULL, NULL, out, path, NULL, NULL); }

static int load_jobs(tfjob_job ***out, size_t *count, const char *path, char **text, size_t *len)
{
	int rc = parse_file(out, count, NULL, path, text, len);
	if (rc == 0 && *count == 0) {
		tfjob_job_array_free(*out, 0);
		if (text) {
			free(*text);
			*text = NULL;
		}
		return ctl_fail("%s: empty input: no TFJob document", path);
	}
	return rc;
}

int ctl_load_jobs(tfjob_job ***out, size_t *count, const char *path) { return load_jobs(out, count, path, NULL, NULL); }

/* One TFJob per document (no JSON array or List of several): the i-th job is the i-th document. */
static bool one_job_per_document(const struct ctl_source *src, size_t count)
{
	unsigned int line, column;
	return tfjob_field_locate(&line, &column, src->text, src->len, count - 1, "kind", NULL) == 0 &&
	       tfjob_field_locate(&line, &column, src->text, src->len, count, "kind", NULL) == TFJOB_ENOTFOUND;
}

int ctl_load_jobs_source(tfjob_job ***out, size_t *count, struct ctl_source *src)
{
	src->text = NULL;
	src->len = 0;
	int rc = load_jobs(out, count, src->path, &src->text, &src->len);
	if (rc == 0 && !one_job_per_document(src, *count)) {
		free(src->text); /* no positions: they could point into the wrong document */
		src->text = NULL;
	}
	return rc;
}

void ctl_print_field_errors(FILE *out, const tfjob_field_errors *errs, const struct ctl_source *src, size_t doc,
                            const char *prefix)
{
	for (size_t i = 0; i < tfjob_field_errors_count(errs); i++) {
		unsigned int line, column;
		if (src->text &&
		    tfjob_field_locate(&line, &column, src->text, src->len, doc, tfjob_field_errors_field(errs, i), NULL) == 0)
			fprintf(out, "%s%s:%u:%u: %s\n", prefix, src->path, line, column, tfjob_field_errors_message(errs, i));
		else
			fprintf(out, "%s%s: %s\n", prefix, src->path, tfjob_field_errors_message(errs, i));
	}
}

int ctl_fail_err(tfjob_error *err)
{
	fprintf(stderr, "tfjobctl: %s\n", err ? tfjob_error_message(err) : "error");
	tfjob_error_free(err);
	return EXIT_USAGE;
}

int ctl_fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("tfjobctl: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	return EXIT_USAGE;
}

bool ctl_parse_compat(tfjob_compat *out, const char *value)
{
	if (tfjob_compat_from_string(out, value) == 0)
		return true;
	ctl_fail("unknown --compat value '%s' (expected 'documented' or 'training-operator-1.9')", value);
	return false;
}

void ctl_print_owned(char *text)
{
	if (text)
		puts(text);
	tfjob_free(text);
}
