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
	in->docs[in->count++] = (struct ctl_doc){ job, file, line };
	return 0;
}

/* A copy of name that lives as long as the inputs (the docs point at it), or NULL. */
static const char *keep_copy(struct ctl_inputs *in, const char *name)
{
	char **grown = realloc(in->names, (in->nnames + 1) * sizeof(*grown));
	if (!grown)
		return NULL;
	in->names = grown;
	char *copy = strdup(name);
	if (copy)
		in->names[in->nnames++] = copy;
	return copy;
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
	for (size_t i = 0; i < n; i++) {
		if (!rc)
			rc = add_doc(in, jobs[i], name, opts.first_line);
		else
			tfjob_job_free(jobs[i]);
	}
	free(jobs);
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
	free(data);
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
	if (ctl_load_jobs(&jobs, &n, path))
		return EXIT_USAGE;
	const char *name = keep_copy(in, path); /* as given: the positional form's outputs name FILE so */
	int rc = name ? 0 : ctl_fail("out of memory");
	for (size_t i = 0; i < n; i++) {
		if (!rc)
			rc = add_doc(in, jobs[i], name, 0);
		else
			tfjob_job_free(jobs[i]);
	}
	free(jobs);
	return rc;
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
