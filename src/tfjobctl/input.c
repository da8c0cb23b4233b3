/*
 * tfjobctl: the TFJobs of -f sources, as kubectl reads them: files, '-' (standard input),
 * directories (their .yaml, .yml and .json files, sorted), each file a stream of documents.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <getopt.h>

#include "tfjobctl.h"

static int add_doc(struct ctl_inputs *in, tfjob_job *job, const char *file, unsigned int line)
{
	if (in->count >= TFJOB_DEFAULT_MAX_DOCUMENTS) {
		tfjob_job_free(job);
		return ctl_fail("%s:%u: more than %u TFJobs in the inputs", file, line, TFJOB_DEFAULT_MAX_DOCUMENTS);
	}
	struct ctl_doc *grown = realloc(in->docs, (in->count + 1) * sizeof(*grown));
	if (!grown) {
		tfjob_job_free(job);
		return ctl_fail("out of memory");
	}
	in->docs = grown;
	in->docs[in->count++] = (struct ctl_doc){ job, file, line, NULL, 0, 0 };
	return 0;
}

/* Make the inputs own text (the docs point at it): it lives as long as they do. Frees it and
 * returns false when out of memory. */
static bool keep_owned(struct ctl_inputs *in, char *text)
{
	char **grown = realloc(in->names, (in->nnames + 1) * sizeof(*grown));
	if (!grown) {
		free(text);
		return false;
	}
	in->names = grown;
	in->names[in->nnames++] = text;
	return true;
}

/* A copy of name that lives as long as the inputs (the docs point at it), or NULL. */
static const char *keep_copy(struct ctl_inputs *in, const char *name)
{
	char *copy = strdup(name);
	return copy && keep_owned(in, copy) ? copy : NULL;
}

/* One TFJob per document of text (no JSON array or List of several): the i-th job of the text is
 * its i-th document, so that tfjob_field_locate() finds the job's fields. */
static bool one_job_per_document(const char *text, size_t len, size_t count)
{
	unsigned int line, column;
	return count > 0 && tfjob_field_locate(&line, &column, text, len, count - 1, "kind", NULL) == 0 &&
	       tfjob_field_locate(&line, &column, text, len, count, "kind", NULL) == TFJOB_ENOTFOUND;
}

/* The docs from `first` on were parsed from text: let them point at it when positions are sure. */
static void attach_text(struct ctl_inputs *in, size_t first, const char *text, size_t len)
{
	if (!one_job_per_document(text, len, in->count - first))
		return; /* no positions: they could point into the wrong document */
	for (size_t i = first; i < in->count; i++) {
		in->docs[i].text = text;
		in->docs[i].len = len;
		in->docs[i].index = i - first;
	}
}

/* The source's name as -f results name it ("-" is "<stdin>", as the parser's errors say). */
static const char *keep_name(struct ctl_inputs *in, const char *path)
{
	return keep_copy(in, strcmp(path, "-") ? path : "<stdin>");
}

/* kubectl's YAML reader splits a stream at lines that start with "---" followed by nothing but
 * blanks or a comment. The length of the separator line at p, or 0 when it is none. */
static size_t separator_length(const char *p, const char *end)
{
	if (end - p < 3 || strncmp(p, "---", 3))
		return 0;
	const char *q = p + 3;
	while (q < end && (*q == ' ' || *q == '\t' || *q == '\r'))
		q++;
	if (q < end && *q == '#')
		while (q < end && *q != '\n')
			q++;
	if (q < end && *q != '\n')
		return 0; /* "--- {inline}": part of the document, the parser reads it */
	return (size_t)(q - p) + (q < end);
}

/* Move *p past the lines that hold only blanks or a comment, counting them in *line: the document
 * then starts on its own first line, which its errors count from. */
static void skip_to_content(const char **p, const char *end, unsigned int *line)
{
	const char *q = *p;
	while (q < end) {
		const char *start = q;
		while (q < end && (*q == ' ' || *q == '\t' || *q == '\r'))
			q++;
		if (q < end && *q == '#')
			while (q < end && *q != '\n')
				q++;
		if (q == end || *q != '\n') {
			*p = start; /* content on this line */
			return;
		}
		q++;
		(*line)++;
	}
	*p = end;
}

/* Parse one document (text [p, end) starting at line); its TFJobs go into in. A document that is
 * not one is reported and counted as failed; the others are read all the same. */
static int add_document(struct ctl_inputs *in, const char *name, const char *p, const char *end, unsigned int line)
{
	skip_to_content(&p, end, &line);
	tfjob_parse_options opts = TFJOB_PARSE_OPTIONS_INIT;
	opts.filename = name;
	opts.first_line = line;
	tfjob_job **jobs = NULL;
	size_t n = 0;
	tfjob_error *err = NULL;
	if (tfjob_job_parse_all(&jobs, &n, p, (size_t)(end - p), &opts, &err))
		return ctl_fail_err(err);
	int rc = 0;
	size_t first = in->count;
	for (size_t i = 0; i < n; i++) {
		if (!rc)
			rc = add_doc(in, jobs[i], name, opts.first_line);
		else
			tfjob_job_free(jobs[i]);
	}
	free(jobs);
	if (!rc)
		attach_text(in, first, p, (size_t)(end - p));
	return rc;
}

static bool looks_like_json(const char *p, const char *end)
{
	if (end - p >= 3 && !memcmp(p, "\xEF\xBB\xBF", 3))
		p += 3;
	while (p < end && (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n'))
		p++;
	return p < end && (*p == '{' || *p == '[');
}

static int add_file(struct ctl_inputs *in, const char *path)
{
	char *data;
	size_t len;
	if (ctl_read_file(&data, &len, path, TFJOB_DEFAULT_MAX_INPUT_BYTES))
		return EXIT_USAGE;
	const char *name = keep_name(in, path);
	if (!name) {
		free(data);
		return ctl_fail("out of memory");
	}
	size_t before = in->count;
	int status = EXIT_OK;
	const char *end = data + len, *doc = data, *p = data;
	unsigned int line = 1, doc_line = 1;
	bool json = looks_like_json(data, end);
	while (!json && p < end) {
		size_t sep = (p == data || p[-1] == '\n') ? separator_length(p, end) : 0;
		if (sep) {
			if (add_document(in, name, doc, p, doc_line))
				status = EXIT_USAGE;
			p += sep;
			line++;
			doc = p;
			doc_line = line;
			continue;
		}
		if (*p++ == '\n')
			line++;
	}
	if (add_document(in, name, doc, end, doc_line))
		status = EXIT_USAGE;
	if (in->count == before)
		free(data);
	else if (!keep_owned(in, data)) /* the docs' texts point into it */
		return ctl_fail("out of memory");
	if (status == EXIT_OK && in->count == before)
		return ctl_fail("%s: empty input: no TFJob document", name);
	return status;
}

static int add_dir(struct ctl_inputs *in, const char *dir)
{
	static const char *const manifests[] = { ".yaml", ".yml", ".json", NULL };
	char **names;
	size_t n;
	if (ctl_list_dir(&names, &n, dir, manifests))
		return EXIT_USAGE;
	int status = n ? EXIT_OK : ctl_fail("%s: no .yaml, .yml or .json file in this directory", dir);
	for (size_t i = 0; i < n; i++) {
		size_t size = strlen(dir) + strlen(names[i]) + 2;
		char *path = malloc(size);
		int rc = path ? 0 : ctl_fail("out of memory");
		if (path) {
			snprintf(path, size, "%s/%s", dir, names[i]);
			rc = add_file(in, path);
		}
		free(path);
		if (rc > status)
			status = rc;
	}
	ctl_free_names(names, n);
	return status;
}

int ctl_inputs_add(struct ctl_inputs *in, const char *source)
{
	struct stat st;
	if (strcmp(source, "-") && stat(source, &st) == 0 && S_ISDIR(st.st_mode))
		return add_dir(in, source);
	return add_file(in, source);
}

int ctl_sources_add(struct ctl_sources *s, const char *path)
{
	const char **grown = realloc(s->paths, (s->count + 1) * sizeof(*grown));
	if (!grown)
		return ctl_fail("out of memory");
	s->paths = grown;
	s->paths[s->count++] = path;
	return 0;
}

int ctl_inputs_read(struct ctl_inputs *in, struct ctl_sources *s)
{
	int status = EXIT_OK;
	for (size_t i = 0; i < s->count; i++) {
		int rc = ctl_inputs_add(in, s->paths[i]);
		if (rc > status)
			status = rc;
	}
	free(s->paths);
	*s = (struct ctl_sources){ 0 };
	return status;
}

int ctl_inputs_whole_file(struct ctl_inputs *in, const char *path)
{
	tfjob_job **jobs = NULL;
	size_t n = 0;
	char *text = NULL;
	size_t len = 0;
	if (ctl_load_jobs_text(&jobs, &n, path, &text, &len))
		return EXIT_USAGE;
	const char *name = keep_copy(in, path); /* as given: the positional form's outputs name FILE so */
	int rc = name ? 0 : ctl_fail("out of memory");
	size_t first = in->count;
	for (size_t i = 0; i < n; i++) {
		if (!rc)
			rc = add_doc(in, jobs[i], name, 0);
		else
			tfjob_job_free(jobs[i]);
	}
	free(jobs);
	if (rc) {
		free(text);
		return rc;
	}
	if (!keep_owned(in, text))
		return ctl_fail("out of memory");
	attach_text(in, first, text, len);
	return EXIT_OK;
}

int ctl_inputs_of_command(struct ctl_inputs *in, struct ctl_sources *s, int argc, char **argv, const char *command)
{
	int rest = argc - optind;
	if (s->count && rest > 0) {
		free(s->paths);
		*s = (struct ctl_sources){ 0 };
		return ctl_fail("%s: give FILE or -f, not both (see tfjobctl %s --help)", command, command);
	}
	if (s->count)
		return ctl_inputs_read(in, s);
	if (rest != 1)
		return ctl_fail("%s: expected exactly one FILE (see tfjobctl %s --help)", command, command);
	return ctl_inputs_whole_file(in, argv[optind]);
}

void ctl_inputs_free(struct ctl_inputs *in)
{
	for (size_t i = 0; i < in->count; i++)
		tfjob_job_free(in->docs[i].job);
	free(in->docs);
	for (size_t i = 0; i < in->nnames; i++)
		free(in->names[i]);
	free(in->names);
	*in = (struct ctl_inputs){ 0 };
}

const char *ctl_job_label(const tfjob_job *job)
{
	const char *name = tfjob_job_name(job);
	if (name && name[0])
		return name;
	name = tfjob_job_generate_name(job);
	return name && name[0] ? name : "(unnamed)";
}

void ctl_doc_prefix(FILE *out, const struct ctl_doc *d)
{
	if (d->line)
		fprintf(out, "%s:%u: tfjob/%s: ", d->file, d->line, ctl_job_label(d->job));
	else
		fprintf(out, "%s: ", d->file); /* the positional FILE's form */
}

void ctl_print_doc_errors(FILE *out, const tfjob_field_errors *errs, const struct ctl_doc *d, const char *prefix)
{
	unsigned int first = d->line ? d->line : 1; /* the line the text starts on in its file */
	for (size_t i = 0; i < tfjob_field_errors_count(errs); i++) {
		unsigned int line, column;
		fputs(prefix, out);
		if (d->text && tfjob_field_locate(&line, &column, d->text, d->len, d->index,
		                                  tfjob_field_errors_field(errs, i), NULL) == 0) {
			fprintf(out, "%s:%u:%u: ", d->file, first + line - 1, column);
			if (d->line)
				fprintf(out, "tfjob/%s: ", ctl_job_label(d->job));
		} else {
			ctl_doc_prefix(out, d);
		}
		fprintf(out, "%s\n", tfjob_field_errors_message(errs, i));
	}
}

/* " tfjob/a (x.yaml:1), tfjob/b (x.yaml:12)": the TFJobs of the inputs, for a refusal. */
static void print_jobs(FILE *out, const struct ctl_inputs *in)
{
	for (size_t i = 0; i < in->count; i++)
		fprintf(out, "%s tfjob/%s (%s:%u)", i ? "," : "", ctl_job_label(in->docs[i].job), in->docs[i].file,
		        in->docs[i].line);
}

int ctl_inputs_one_job(tfjob_job **job, char **file, struct ctl_sources *s, const char *command, const char *why)
{
	struct ctl_inputs in = { 0 };
	int rc = ctl_inputs_read(&in, s);
	if (rc == EXIT_OK && in.count != 1) {
		fprintf(stderr, "tfjobctl: %s: the input holds %zu TFJobs%s", command, in.count, in.count ? ":" : "");
		print_jobs(stderr, &in);
		fprintf(stderr, "; %s\n", why);
		rc = EXIT_USAGE;
	}
	if (rc == EXIT_OK) {
		const char *from = in.docs[0].file;
		*file = strdup(strcmp(from, "<stdin>") ? from : "-");
		*job = in.docs[0].job;
		in.docs[0].job = NULL;
		rc = *file ? EXIT_OK : ctl_fail("out of memory");
	}
	ctl_inputs_free(&in);
	return rc;
}
