/*
 * tfjobctl: file reading, error printing and other shared helpers.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <dirent.h>
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
		errno = 0;
		size_t n = fread(buf + len, 1, cap - len, f);
		len += n;
		if (n == 0)
			break;
	}
	int failed = ferror(f), read_errno = errno; /* EISDIR for a directory, EIO, ... */
	bool truncated = len > max;
	if (f != stdin)
		fclose(f);
	if (failed) {
		free(buf);
		return ctl_fail("%s: %s", path, strerror(read_errno ? read_errno : EIO));
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

int ctl_load_jobs_text(tfjob_job ***out, size_t *count, const char *path, char **text, size_t *len)
{
	return load_jobs(out, count, path, text, len);
}

const char *ctl_str(const json_t *obj, const char *key)
{
	const char *s = json_string_value(json_object_get(obj, key));
	return s ? s : "";
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

bool ctl_parse_gang(tfjob_gang_scheduler *out, const char *value)
{
	if (!strcmp(value, "volcano"))
		*out = TFJOB_GANG_VOLCANO;
	else if (!strcmp(value, "scheduler-plugins"))
		*out = TFJOB_GANG_SCHEDULER_PLUGINS;
	else {
		ctl_fail("unknown --gang-scheduler value '%s' (expected 'volcano' or 'scheduler-plugins')", value);
		return false;
	}
	return true;
}

int ctl_print_warnings(const tfjob_job *job, bool istio_injection)
{
	tfjob_warning_options opts = TFJOB_WARNING_OPTIONS_INIT;
	opts.istio_injection = istio_injection;
	tfjob_warnings *w = NULL;
	tfjob_error *err = NULL;
	if (tfjob_job_warnings(&w, job, &opts, &err)) {
		ctl_fail_err(err);
		return -1;
	}
	size_t n = tfjob_warnings_count(w);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "Warning: tfjob/%s: %s\n", ctl_job_label(job), tfjob_warnings_message(w, i));
	tfjob_warnings_free(w);
	return (int)n;
}

static int compare_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static bool has_suffix(const char *name, const char *const *suffixes)
{
	size_t n = strlen(name);
	for (const char *const *s = suffixes; *s; s++)
		if (n > strlen(*s) && !strcmp(name + n - strlen(*s), *s))
			return true;
	return false;
}

int ctl_list_dir(char ***out, size_t *count, const char *dir, const char *const *suffixes)
{
	*out = NULL;
	*count = 0;
	DIR *d = opendir(dir);
	if (!d)
		return ctl_fail("%s: %s", dir, strerror(errno));
	char **names = NULL;
	size_t n = 0;
	bool oom = false;
	struct dirent *e;
	while (!oom && (e = readdir(d))) {
		if (e->d_name[0] == '.' || !has_suffix(e->d_name, suffixes))
			continue;
		char **grown = realloc(names, (n + 1) * sizeof(*names));
		if (grown)
			names = grown;
		char *name = grown ? strdup(e->d_name) : NULL;
		if (name)
			names[n++] = name;
		oom = !name;
	}
	closedir(d);
	if (oom) {
		ctl_free_names(names, n);
		return ctl_fail("out of memory");
	}
	if (n > 1)
		qsort(names, n, sizeof(*names), compare_names);
	*out = names;
	*count = n;
	return 0;
}

void ctl_free_names(char **names, size_t count)
{
	for (size_t i = 0; i < count; i++)
		free(names[i]);
	free(names);
}

void ctl_print_owned(char *text)
{
	if (text)
		puts(text);
	tfjob_free(text);
}

int ctl_write_stdout(const char *data, size_t len, void *payload)
{
	(void)payload;
	return fwrite(data, 1, len, stdout) != len;
}

int ctl_parse_duration_ms(long *out, const char *s)
{
	char *end;
	double total = 0;
	if (!s || !s[0])
		return 0;
	double v = strtod(s, &end);
	if (end == s || v < 0)
		return 0;
	if (*end == '\0') {
		*out = (long)(v * 1000.0);
		return *out >= 0 && v < 1e9;
	}
	const char *p = s;
	while (*p) {
		v = strtod(p, &end);
		if (end == p || v < 0)
			return 0;
		p = end;
		double unit;
		if (!strncmp(p, "ms", 2)) {
			unit = 1;
			p += 2;
		} else if (*p == 's') {
			unit = 1000;
			p++;
		} else if (*p == 'm') {
			unit = 60000;
			p++;
		} else if (*p == 'h') {
			unit = 3600000;
			p++;
		} else {
			return 0;
		}
		total += v * unit;
	}
	if (total >= 1e12)
		return 0;
	*out = (long)total;
	return 1;
}
