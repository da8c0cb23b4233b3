/*
 * Every input limit of docs/limits.md, at the limit (accepted) and one past it (a clear error
 * naming the limit, the field or the position; no crash; memory bounded by the limit).
 * Links the internal archive to reach the limits of internal readers (watch streams, HTTP
 * bodies, exec plugins, quantities); the transport cases need libcurl (TFJOB_HAVE_TRANSPORT).
 * SPDX-License-Identifier: Apache-2.0
 */
#include "testutil.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/common.h"
#include "util/quantity.h"
#ifdef TFJOB_HAVE_TRANSPORT
#include "transport/kube_internal.h"
#include "transport/watch_splitter.h"
#endif

#define HEAD "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata:\n  name: t\n"
/* Values of HEAD: the root mapping, 3 keys + 2 scalars, metadata's mapping, its key and value. */
#define HEAD_VALUES 9

#define JOB_YAML HEAD "spec:\n  tfReplicaSpecs:\n    Worker:\n      replicas: %s\n" \
                      "      template:\n        spec:\n          containers:\n" \
                      "            - name: tensorflow\n              image: busybox\n" \
                      "%s"

/* ---- a growable text buffer ---- */

struct buf {
	char *p;
	size_t n, cap;
};

static void add(struct buf *b, const char *s, size_t n)
{
	if (b->n + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 4096;
		while (cap < b->n + n + 1)
			cap *= 2;
		b->p = realloc(b->p, cap);
		ck_assert_ptr_nonnull(b->p);
		b->cap = cap;
	}
	memcpy(b->p + b->n, s, n);
	b->n += n;
	b->p[b->n] = '\0';
}

static void adds(struct buf *b, const char *s) { add(b, s, strlen(s)); }

static void repeat(struct buf *b, const char *s, size_t times)
{
	for (size_t i = 0; i < times; i++)
		adds(b, s);
}

/* Pad b with a YAML comment (or JSON blanks) so that it is exactly size bytes. */
static void pad_to(struct buf *b, size_t size, int json)
{
	ck_assert_uint_ge(size, b->n + 3);
	size_t fill = size - b->n - 2;
	char *line = malloc(fill);
	memset(line, json ? ' ' : 'x', fill);
	if (!json)
		line[0] = '#';
	adds(b, "\n");
	add(b, line, fill);
	adds(b, "\n");
	free(line);
	ck_assert_uint_eq(b->n, size);
}

static tfjob_error *parse_fails(const char *text, size_t len, const tfjob_parse_options *opts, int code)
{
	tfjob_job **jobs = NULL;
	size_t n = 0;
	tfjob_error *err = NULL;
	int rc = tfjob_job_parse_all(&jobs, &n, text, len, opts, &err);
	ck_assert_msg(rc == code, "expected %s, got %s: %s", tfjob_error_code_name(code), tfjob_error_code_name(rc),
	              err ? tfjob_error_message(err) : "");
	ck_assert_ptr_null(jobs);
	return err;
}

static size_t parse_ok(const char *text, size_t len, const tfjob_parse_options *opts)
{
	tfjob_job **jobs = NULL;
	size_t n = 0;
	tfjob_error *err = NULL;
	int rc = tfjob_job_parse_all(&jobs, &n, text, len, opts, &err);
	ck_assert_msg(rc == 0, "expected success: %s", tfjob_error_message(err));
	tfjob_job_array_free(jobs, n);
	return n;
}

static void expect_message(tfjob_error *err, const char *want)
{
	ck_assert_msg(strstr(tfjob_error_message(err), want) != NULL, "message '%s' lacks '%s'", tfjob_error_message(err),
	              want);
	tfjob_error_free(err);
}

/* ---- parsing: tfjob_parse_options ---- */

START_TEST(input_size_default)
{
	/* Exactly 16 MiB parses (YAML and JSON); one byte more is refused before parsing. */
	struct buf b = { 0 };
	adds(&b, HEAD);
	pad_to(&b, TFJOB_DEFAULT_MAX_INPUT_BYTES, 0);
	ck_assert_uint_eq(parse_ok(b.p, b.n, NULL), 1);
	adds(&b, "\n");
	tfjob_parse_options opts = TFJOB_PARSE_OPTIONS_INIT;
	opts.filename = "big.yaml";
	expect_message(parse_fails(b.p, b.n, &opts, TFJOB_ELIMIT),
	               "big.yaml: input is 16777217 bytes, more than the limit of 16777216 bytes");
	b.n = 0;
	adds(&b, "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"t\"}}");
	pad_to(&b, TFJOB_DEFAULT_MAX_INPUT_BYTES, 1);
	ck_assert_uint_eq(parse_ok(b.p, b.n, NULL), 1);
	adds(&b, " ");
	expect_message(parse_fails(b.p, b.n, NULL, TFJOB_ELIMIT), "<input>: input is 16777217 bytes");
	free(b.p);
}
END_TEST

START_TEST(input_size_option)
{
	const char *t = HEAD;
	tfjob_parse_options opts = TFJOB_PARSE_OPTIONS_INIT;
	opts.max_input_bytes = strlen(t);
	ck_assert_uint_eq(parse_ok(t, strlen(t), &opts), 1);
	opts.max_input_bytes = strlen(t) - 1;
	expect_message(parse_fails(t, strlen(t), &opts, TFJOB_ELIMIT), "more than the limit of 59 bytes");
}
END_TEST

/*
 * Builders of documents that reach `amount` of one limit (they empty b first), and the check of
 * a limit: a document at it parses (into `docs` documents), one past it is refused. Returns the
 * error, for the caller to check its message and position.
 */
typedef void (*build_fn)(struct buf *b, unsigned long amount);

static tfjob_error *at_and_past(struct buf *b, build_fn build, unsigned long limit, const tfjob_parse_options *opts,
                                size_t docs)
{
	build(b, limit);
	ck_assert_uint_eq(parse_ok(b->p, b->n, opts), docs);
	build(b, limit + 1);
	return parse_fails(b->p, b->n, opts, TFJOB_ELIMIT);
}

/* HEAD plus "x: " and depth-1 nested flow sequences: depth levels in all (the root is level 1). */
static void nested_yaml(struct buf *b, unsigned long depth)
{
	b->n = 0;
	adds(b, HEAD "x: ");
	repeat(b, "[", depth - 1);
	repeat(b, "]", depth - 1);
	adds(b, "\n");
}

static void nested_json(struct buf *b, unsigned long depth)
{
	b->n = 0;
	adds(b, "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"t\"},\"x\":");
	repeat(b, "[", depth - 1);
	repeat(b, "]", depth - 1);
	adds(b, "}");
}

START_TEST(depth_default)
{
	struct buf b = { 0 };
	tfjob_error *err = at_and_past(&b, nested_yaml, TFJOB_DEFAULT_MAX_DEPTH, NULL, 1);
	/* At the bracket that opens level 129: line 5, after "x: " and 127 brackets. */
	ck_assert_int_eq(tfjob_error_line(err), 5);
	ck_assert_int_eq(tfjob_error_column(err), 4 + 127);
	expect_message(err, "<input>:5:131: nesting deeper than 128 levels");
	err = at_and_past(&b, nested_json, TFJOB_DEFAULT_MAX_DEPTH, NULL, 1);
	ck_assert_int_eq(tfjob_error_line(err), 1);
	expect_message(err, "nesting deeper than 128 levels");
	/* Through an alias: 127 nested sequences anchored at level 2 reach level 128; the same alias
	 * one level deeper goes past it. */
	b.n = 0;
	adds(&b, HEAD "a: &deep ");
	repeat(&b, "[", TFJOB_DEFAULT_MAX_DEPTH - 1);
	repeat(&b, "]", TFJOB_DEFAULT_MAX_DEPTH - 1);
	adds(&b, "\nb: *deep\nc: [*deep]\n");
	expect_message(parse_fails(b.p, b.n, NULL, TFJOB_ELIMIT), "<input>:7:5: nesting deeper than 128 levels (through alias 'deep')");
	free(b.p);
}
END_TEST

static void aliases_yaml(struct buf *b, unsigned long aliases)
{
	b->n = 0;
	adds(b, HEAD "x: [&a 0");
	repeat(b, ", *a", aliases);
	adds(b, "]\n");
}

START_TEST(aliases_default)
{
	struct buf b = { 0 };
	tfjob_error *err = at_and_past(&b, aliases_yaml, TFJOB_DEFAULT_MAX_ALIASES, NULL, 1);
	ck_assert_int_eq(tfjob_error_line(err), 5);
	ck_assert_int_eq(tfjob_error_column(err), (int)strlen("x: [&a 0") + 3 + 4 * 1000);
	expect_message(err, "more than 1000 aliases in one document (alias bomb?)");
	/* The count is per document. */
	b.n = 0;
	for (int d = 0; d < 2; d++) {
		adds(&b, "---\n");
		adds(&b, HEAD "x: [&a 0");
		repeat(&b, ", *a", TFJOB_DEFAULT_MAX_ALIASES);
		adds(&b, "]\n");
	}
	ck_assert_uint_eq(parse_ok(b.p, b.n, NULL), 2);
	free(b.p);
}
END_TEST

/*
 * A document of exactly `values` values, most of them made by aliases: HEAD, "x:" and a sequence
 * of an anchored sequence of n scalars, `aliases` aliases of it and fillers.
 */
static void values_yaml(struct buf *b, unsigned long values, unsigned int aliases, unsigned int n)
{
	unsigned long fixed = HEAD_VALUES + 2 + (unsigned long)(aliases + 1) * (n + 1);
	ck_assert_uint_ge(values, fixed);
	b->n = 0;
	adds(b, HEAD "x: [&a [0");
	repeat(b, ",0", n - 1);
	adds(b, "]");
	repeat(b, ",*a", aliases);
	repeat(b, ",1", values - fixed);
	adds(b, "]\n");
}

/* 1000 copies of a 1999-element sequence: 1,999,000 values from 999 aliases. */
static void values_yaml_large(struct buf *b, unsigned long values) { values_yaml(b, values, 999, 1998); }

static void values_yaml_small(struct buf *b, unsigned long values) { values_yaml(b, values, 2, 9); }

START_TEST(values_default)
{
	struct buf b = { 0 };
	expect_message(at_and_past(&b, values_yaml_large, TFJOB_DEFAULT_MAX_NODES, NULL, 1),
	               "document has more than 2000000 values (after alias expansion)");
	free(b.p);
}
END_TEST

START_TEST(values_option_json)
{
	/* JSON counts the same way as YAML: keys, scalars, objects and arrays. */
	struct buf b = { 0 };
	tfjob_parse_options opts = TFJOB_PARSE_OPTIONS_INIT;
	opts.max_nodes = 100;
	adds(&b, "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"t\"},\"x\":[");
	/* Strings with separators, brackets, escaped quotes and an escaped backslash count once. */
	adds(&b, "\"s,:\\\",[{\",\"a\\\\\",{},[],true");
	for (int i = 0; i < 100 - HEAD_VALUES - 2 - 5; i++)
		adds(&b, ",-1.5e3");
	adds(&b, "]}");
	parse_ok(b.p, b.n, &opts);
	b.n -= 2;
	adds(&b, ",null]}");
	tfjob_error *err = parse_fails(b.p, b.n, &opts, TFJOB_ELIMIT);
	ck_assert_int_eq(tfjob_error_column(err), (int)b.n - 6); /* at the comma before the 101st value */
	expect_message(err, "document has more than 100 values");
	/* Per document of a stream. */
	b.n -= 7;
	adds(&b, "]}");
	char *one = strdup(b.p);
	adds(&b, one);
	free(one);
	ck_assert_uint_eq(parse_ok(b.p, b.n, &opts), 2);
	free(b.p);
}
END_TEST

START_TEST(json_nesting_before_values)
{
	/* The value count passes its limit early, the nesting limit only at the end of the text: the
	 * nesting error is the one reported (the whole text is checked for it first). */
	struct buf b = { 0 };
	tfjob_parse_options opts = TFJOB_PARSE_OPTIONS_INIT;
	opts.max_nodes = 10;
	opts.max_depth = 4;
	adds(&b, "{\"a\":[1,2,3,4,5,6,7,8,9,10,11,12],\"b\":[[[[[]]]]]}");
	tfjob_error *err = parse_fails(b.p, b.n, &opts, TFJOB_ELIMIT);
	ck_assert_int_eq(tfjob_error_column(err), (int)strlen("{\"a\":[1,2,3,4,5,6,7,8,9,10,11,12],\"b\":[[[") + 1); /* the fifth level */
	expect_message(err, "nesting deeper than 4 levels"); /* frees err */
	/* Within the nesting limit, the count error, at the first value past the limit. */
	opts.max_depth = 8;
	err = parse_fails(b.p, b.n, &opts, TFJOB_ELIMIT);
	ck_assert_int_eq(tfjob_error_column(err), (int)strlen("{\"a\":[1,2,3,4,5,6,7") + 1); /* the comma after 7 */
	expect_message(err, "document has more than 10 values");
	free(b.p);
}
END_TEST

START_TEST(values_default_json)
{
	/* Before this limit was enforced for JSON, 16 MiB of "[0,0,...]" built 8 million values. */
	struct buf b = { 0 };
	adds(&b, "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"t\"},\"x\":[0");
	repeat(&b, ",0", TFJOB_DEFAULT_MAX_NODES - HEAD_VALUES - 3);
	adds(&b, "]}");
	parse_ok(b.p, b.n, NULL);
	b.n -= 2;
	adds(&b, ",0]}");
	expect_message(parse_fails(b.p, b.n, NULL, TFJOB_ELIMIT), "document has more than 2000000 values");
	free(b.p);
}
END_TEST

static void documents_yaml(struct buf *b, unsigned long documents)
{
	b->n = 0;
	repeat(b, "---\n" HEAD, documents);
}

START_TEST(documents_default)
{
	struct buf b = { 0 };
	documents_yaml(&b, TFJOB_DEFAULT_MAX_DOCUMENTS);
	ck_assert_uint_eq(parse_ok(b.p, b.n, NULL), TFJOB_DEFAULT_MAX_DOCUMENTS);
	/* Empty documents don't count. */
	adds(&b, "---\n# nothing\n---\n");
	ck_assert_uint_eq(parse_ok(b.p, b.n, NULL), TFJOB_DEFAULT_MAX_DOCUMENTS);
	adds(&b, HEAD);
	tfjob_error *err = parse_fails(b.p, b.n, NULL, TFJOB_ELIMIT);
	/* Documents are counted when they end: the position is the end of the 10,001st. */
	ck_assert_int_eq(tfjob_error_line(err), 5 * TFJOB_DEFAULT_MAX_DOCUMENTS + 8);
	expect_message(err, "more than 10000 documents in one stream");
	b.n = 0;
	repeat(&b, "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"t\"}}\n",
	       TFJOB_DEFAULT_MAX_DOCUMENTS);
	ck_assert_uint_eq(parse_ok(b.p, b.n, NULL), TFJOB_DEFAULT_MAX_DOCUMENTS);
	adds(&b, "{}");
	expect_message(parse_fails(b.p, b.n, NULL, TFJOB_ELIMIT), "<input>: more than 10000 JSON values in one stream");
	free(b.p);
}
END_TEST

/* The limits of tfjob_parse_options set to small values. */
#define OPTS(...) { .version = TFJOB_PARSE_OPTIONS_VERSION, .format = TFJOB_FORMAT_AUTO, __VA_ARGS__ }

static const struct option_case {
	tfjob_parse_options opts;
	build_fn build;
	unsigned long limit;
	size_t docs; /* documents at the limit */
	const char *message;
} option_cases[] = {
	{ OPTS(.max_depth = 5), nested_yaml, 5, 1, "nesting deeper than 5 levels" },
	{ OPTS(.max_depth = 5), nested_json, 5, 1, "nesting deeper than 5 levels" },
	{ OPTS(.max_aliases = 3), aliases_yaml, 3, 1, "more than 3 aliases" },
	{ OPTS(.max_nodes = 100), values_yaml_small, 100, 1, "more than 100 values" },
	{ OPTS(.max_documents = 3), documents_yaml, 3, 3, "more than 3 documents" },
};

START_TEST(limit_options)
{
	const struct option_case *c = &option_cases[_i];
	struct buf b = { 0 };
	expect_message(at_and_past(&b, c->build, c->limit, &c->opts, c->docs), c->message);
	free(b.p);
}
END_TEST

START_TEST(number_length)
{
	/* A plain scalar of 127 characters can be a number; of 128, it is kept as a string. */
	for (int len = 127; len <= 128; len++) {
		char num[200], text[512];
		memset(num, '0', sizeof(num));
		memcpy(num, "1.", 2);
		num[len] = '\0';
		snprintf(text, sizeof(text), HEAD "x: %s\n", num);
		tfjob_job *job = tu_parse(text);
		char *json = NULL;
		ck_assert_int_eq(tfjob_job_to_json(&json, job, TFJOB_JSON_COMPACT, NULL), 0);
		if (len == 127)
			ck_assert_msg(strstr(json, "\"x\":1}") != NULL, "%s", json);
		else
			ck_assert_msg(strstr(json, num) != NULL && strstr(json, "\"x\":\"1.") != NULL, "%s", json);
		tfjob_free(json);
		tfjob_job_free(job);
	}
}
END_TEST

/* ---- integers ---- */

static tfjob_field_errors *validate_text(const char *text)
{
	tfjob_job *job = tu_parse(text);
	tfjob_field_errors *errs = tu_validate(job, TFJOB_COMPAT_DOCUMENTED, NULL);
	tfjob_job_free(job);
	return errs;
}

static int has_detail(const tfjob_field_errors *errs, const char *field, const char *needle)
{
	for (size_t i = 0; i < tfjob_field_errors_count(errs); i++)
		if (!strcmp(tfjob_field_errors_field(errs, i), field) && strstr(tfjob_field_errors_detail(errs, i), needle))
			return 1;
	return 0;
}

START_TEST(int32_fields)
{
	static const struct {
		const char *yaml; /* the value follows, then a newline */
		const char *field;
	} cases[] = {
		{ "  runPolicy:\n    backoffLimit: ", "spec.runPolicy.backoffLimit" },
		{ "  runPolicy:\n    ttlSecondsAfterFinished: ", "spec.runPolicy.ttlSecondsAfterFinished" },
		{ "  runPolicy:\n    schedulingPolicy:\n      minAvailable: ", "spec.runPolicy.schedulingPolicy.minAvailable" },
		{ "  runPolicy:\n    schedulingPolicy:\n      scheduleTimeoutSeconds: ",
		  "spec.runPolicy.schedulingPolicy.scheduleTimeoutSeconds" },
	};
	static const struct {
		const char *value;
		int bad;
	} values[] = { { "2147483647", 0 }, { "2147483648", 1 }, { "-2147483648", 0 }, { "-2147483649", 1 } };
	for (size_t c = 0; c < TFJOB_ARRAY_LEN(cases); c++) {
		for (size_t v = 0; v < TFJOB_ARRAY_LEN(values); v++) {
			char extra[256], text[2048];
			snprintf(extra, sizeof(extra), "%s%s\n", cases[c].yaml, values[v].value);
			snprintf(text, sizeof(text), JOB_YAML, "1", extra);
			tfjob_field_errors *errs = validate_text(text);
			ck_assert_msg(has_detail(errs, cases[c].field, "must be a 32-bit integer") == values[v].bad, "%s = %s",
			              cases[c].field, values[v].value);
			tfjob_field_errors_free(errs);
		}
	}
	/* replicas and containerPort too. */
	char text[2048];
	snprintf(text, sizeof(text), JOB_YAML, "2147483648", "");
	tfjob_field_errors *errs = validate_text(text);
	ck_assert(has_detail(errs, "spec.tfReplicaSpecs[Worker].replicas", "must be a 32-bit integer"));
	tfjob_field_errors_free(errs);
	snprintf(text, sizeof(text), JOB_YAML, "1", "");
	size_t n = strlen(text);
	snprintf(text + n, sizeof(text) - n, "              ports: [{name: p, containerPort: 2147483648}]\n");
	errs = validate_text(text);
	ck_assert(has_detail(errs, "spec.tfReplicaSpecs[Worker].template.spec.containers[0].ports[0].containerPort",
	                     "must be a 32-bit integer"));
	tfjob_field_errors_free(errs);
}
END_TEST

START_TEST(json_integer_beyond_int64)
{
	/*
	 * As Kubernetes' JSON reader (sigs.k8s.io/json) and go-yaml do, integers beyond int64 are
	 * read as float64, not refused: the int64 ends stay integers, one step past them is a real.
	 */
	const char *text = "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"t\"},"
	                   "\"x\":[9223372036854775807,-9223372036854775808,9223372036854775808,-9223372036854775809,"
	                   "123456789012345678901234567890,\"9223372036854775808\",0]}";
	tfjob_job *job = tu_parse(text);
	char *out = NULL;
	ck_assert_int_eq(tfjob_job_to_json(&out, job, TFJOB_JSON_COMPACT, NULL), 0);
	json_t *doc = json_loads(out, 0, NULL);
	json_t *root = json_object_get(doc, "x");
	ck_assert_ptr_nonnull(root);
	ck_assert(json_is_integer(json_array_get(root, 0)));
	ck_assert_int_eq(json_integer_value(json_array_get(root, 0)), INT64_MAX);
	ck_assert(json_is_integer(json_array_get(root, 1)));
	ck_assert_int_eq(json_integer_value(json_array_get(root, 1)), INT64_MIN);
	ck_assert(json_is_real(json_array_get(root, 2)));
	ck_assert(json_real_value(json_array_get(root, 2)) == 9223372036854775808.0);
	ck_assert(json_is_real(json_array_get(root, 3)));
	ck_assert(json_real_value(json_array_get(root, 3)) == -9223372036854775808.0);
	ck_assert(json_is_real(json_array_get(root, 4)));
	ck_assert(json_real_value(json_array_get(root, 4)) == 123456789012345678901234567890.0);
	ck_assert_str_eq(json_string_value(json_array_get(root, 5)), "9223372036854775808"); /* strings untouched */
	ck_assert(json_is_integer(json_array_get(root, 6)));
	ck_assert_ptr_nonnull(strstr(out, "\"x\":[9223372036854775807,-9223372036854775808,9.223372036854776e18,"
	                                  "-9.223372036854776e18,1.2345678901234568e29,\"9223372036854775808\",0]"));
	json_decref(doc);
	tfjob_free(out);
	tfjob_job_free(job);

	/* In an integer field it is a number, not an integer, as the API server reports it. */
	const char *replicas = "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"t\"},"
	                       "\"spec\":{\"tfReplicaSpecs\":{\"Worker\":{\"replicas\":99999999999999999999,"
	                       "\"template\":{\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"i\"}]}}}}}}";
	tfjob_field_errors *errs = validate_text(replicas);
	ck_assert_int_ge(tu_find_error(errs, "spec.tfReplicaSpecs[Worker].replicas", TFJOB_FIELD_VALUE_TYPE_INVALID), 0);
	ck_assert(has_detail(errs, "spec.tfReplicaSpecs[Worker].replicas", "must be of type integer: \"number\""));
	tfjob_field_errors_free(errs);

	/* Positions of later syntax errors are those of the text as given. */
	const char *bad = "{\"a\":[18446744073709551616, -18446744073709551616, 1],\n \"b\": tru}";
	tfjob_error *err = parse_fails(bad, strlen(bad), NULL, TFJOB_EPARSE);
	ck_assert_int_eq(tfjob_error_line(err), 2);
	ck_assert_int_eq(tfjob_error_column(err), 7);
	expect_message(err, "invalid token near 'tru'");
	const char *same_line = "{\"a\":18446744073709551616,\"b\":-18446744073709551616,\"c\":1e999}";
	err = parse_fails(same_line, strlen(same_line), NULL, TFJOB_EPARSE);
	ck_assert_int_eq(tfjob_error_line(err), 1);
	ck_assert_int_eq(tfjob_error_column(err), 57);
	expect_message(err, "real number overflow");
	/* A literal too large even for a double is an error, as in Go. */
	char huge[400] = "{\"x\":";
	memset(huge + 5, '9', 320);
	strcpy(huge + 325, "}");
	err = parse_fails(huge, strlen(huge), NULL, TFJOB_EPARSE);
	ck_assert_int_eq(tfjob_error_column(err), 6);
	expect_message(err, "real number overflow");
}
END_TEST

/* ---- names ---- */

START_TEST(name_length)
{
	char name[80], text[512];
	memset(name, 'a', sizeof(name));
	name[63] = '\0';
	snprintf(text, sizeof(text), "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata:\n  name: %s\n", name);
	tfjob_field_errors *errs = validate_text(text);
	ck_assert_int_lt(tu_find_error(errs, "metadata.name", TFJOB_FIELD_VALUE_INVALID), 0);
	tfjob_field_errors_free(errs);
	name[63] = 'a';
	name[64] = '\0';
	snprintf(text, sizeof(text), "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata:\n  name: %s\n", name);
	errs = validate_text(text);
	ck_assert(has_detail(errs, "metadata.name", "must be no more than 63 characters"));
	tfjob_field_errors_free(errs);
	/* generateName: the API server keeps 58 characters of it, so a longer prefix is fine. */
	snprintf(text, sizeof(text), "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata:\n  generateName: %s-\n", name);
	errs = validate_text(text);
	ck_assert_int_lt(tu_find_error(errs, "metadata.generateName", TFJOB_FIELD_VALUE_INVALID), 0);
	tfjob_field_errors_free(errs);
}
END_TEST

/* ---- replicas ---- */

static int graph_of(const char *text, tfjob_error **err)
{
	tfjob_job *job = tu_parse(text);
	tfjob_graph *g = NULL;
	int rc = tfjob_graph_new(&g, job, NULL, err);
	if (!rc)
		ck_assert_int_le(tfjob_graph_total_replicas(g), TFJOB_MAX_REPLICAS);
	tfjob_graph_free(g);
	tfjob_job_free(job);
	return rc;
}

/* The one field error validation gives the job in text (both modes), or none when field is NULL. */
static void expect_validation(const char *text, const char *field, const char *detail)
{
	tfjob_job *job = tu_parse(text);
	for (int m = 0; m < 2; m++) {
		tfjob_field_errors *errs =
			tu_validate(job, m ? TFJOB_COMPAT_TRAINING_OPERATOR_1_9 : TFJOB_COMPAT_DOCUMENTED, NULL);
		if (!field) {
			ck_assert_uint_eq(tfjob_field_errors_count(errs), 0);
		} else {
			ck_assert_uint_eq(tfjob_field_errors_count(errs), 1);
			ck_assert_str_eq(tfjob_field_errors_field(errs, 0), field);
			ck_assert_int_eq(tfjob_field_errors_type(errs, 0), TFJOB_FIELD_VALUE_INVALID);
			ck_assert_str_eq(tfjob_field_errors_detail(errs, 0), detail);
		}
		tfjob_field_errors_free(errs);
	}
	tfjob_job_free(job);
}

/* The replica limit is a validation rule too: what tfjobctl, the webhook and the planner refuse alike. */
START_TEST(replicas_limit_validated)
{
	char text[2048], count[32];
	snprintf(count, sizeof(count), "%d", TFJOB_MAX_REPLICAS);
	snprintf(text, sizeof(text), JOB_YAML, count, "");
	expect_validation(text, NULL, NULL);
	const char *one = "must be less than or equal to 100000 (the limit of replicas of one type)";
	snprintf(count, sizeof(count), "%d", TFJOB_MAX_REPLICAS + 1);
	snprintf(text, sizeof(text), JOB_YAML, count, "");
	expect_validation(text, "spec.tfReplicaSpecs[Worker].replicas", one);
	snprintf(text, sizeof(text), JOB_YAML, "100000000", "");
	expect_validation(text, "spec.tfReplicaSpecs[Worker].replicas", one);
	const char *ps = "    PS:\n      replicas: 40000\n      template:\n        spec:\n          containers:\n"
	                 "            - name: tensorflow\n              image: busybox\n";
	snprintf(text, sizeof(text), JOB_YAML, "60000", ps);
	expect_validation(text, NULL, NULL);
	snprintf(text, sizeof(text), JOB_YAML, "60001", ps);
	expect_validation(text, "spec.tfReplicaSpecs", "the replicas of all types must add up to at most 100000");
	/* a type without replicas counts 1, as the graph counts it */
	const char *ps_one = "    PS:\n      template:\n        spec:\n          containers:\n"
	                     "            - name: tensorflow\n              image: busybox\n";
	snprintf(text, sizeof(text), JOB_YAML, "99999", ps_one);
	expect_validation(text, NULL, NULL);
	snprintf(text, sizeof(text), JOB_YAML, "100000", ps_one);
	expect_validation(text, "spec.tfReplicaSpecs", "the replicas of all types must add up to at most 100000");
}
END_TEST

START_TEST(replicas_limit)
{
	char text[2048], count[32];
	snprintf(count, sizeof(count), "%d", TFJOB_MAX_REPLICAS);
	snprintf(text, sizeof(text), JOB_YAML, count, "");
	ck_assert_int_eq(graph_of(text, NULL), 0);
	/* TF_CONFIG of the last of 100,000 workers. */
	tfjob_job *job = tu_parse(text);
	char *tf = NULL;
	ck_assert_int_eq(tfjob_tf_config(&tf, job, "Worker", TFJOB_MAX_REPLICAS - 1, NULL, NULL), 0);
	ck_assert_ptr_nonnull(strstr(tf, "\"index\":99999"));
	tfjob_free(tf);
	tfjob_job_free(job);
	snprintf(count, sizeof(count), "%d", TFJOB_MAX_REPLICAS + 1);
	snprintf(text, sizeof(text), JOB_YAML, count, "");
	tfjob_error *err = NULL;
	ck_assert_int_eq(graph_of(text, &err), TFJOB_ELIMIT);
	ck_assert_str_eq(tfjob_error_field(err), "spec.tfReplicaSpecs[Worker].replicas");
	expect_message(err, "exceeds the limit of 100000 replicas");
	/* In total over the types. */
	snprintf(text, sizeof(text), JOB_YAML, "60000",
	         "    PS:\n      replicas: 40000\n      template:\n        spec:\n          containers:\n"
	         "            - name: tensorflow\n              image: busybox\n");
	ck_assert_int_eq(graph_of(text, NULL), 0);
	snprintf(text, sizeof(text), JOB_YAML, "60001",
	         "    PS:\n      replicas: 40000\n      template:\n        spec:\n          containers:\n"
	         "            - name: tensorflow\n              image: busybox\n");
	err = NULL;
	ck_assert_int_eq(graph_of(text, &err), TFJOB_ELIMIT);
	ck_assert_str_eq(tfjob_error_field(err), "spec.tfReplicaSpecs");
	expect_message(err, "more than 100000 replicas in total");
}
END_TEST

/* ---- observed objects (the planner's pods and services) ---- */

START_TEST(objects_list_bytes)
{
	/* The default, 1 GiB: one byte more is refused before anything is read (the pages of this
	 * mapping are never touched, so it costs no memory). */
	size_t len = TFJOB_DEFAULT_MAX_LIST_BYTES + 1;
	char *big = mmap(NULL, len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	ck_assert_ptr_ne(big, MAP_FAILED);
	tfjob_objects *objs = NULL;
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_objects_parse(&objs, big, len, NULL, &err), TFJOB_ELIMIT);
	ck_assert_ptr_null(objs);
	expect_message(err, "<input>: input is 1073741825 bytes, more than the limit of 1073741824 bytes");
	munmap(big, len);
	/* At a chosen limit. */
	const char *pods = "[{\"metadata\":{\"name\":\"a\"}},{\"metadata\":{\"name\":\"b\"}}]";
	tfjob_parse_options opts = TFJOB_PARSE_OPTIONS_INIT;
	opts.max_input_bytes = strlen(pods);
	ck_assert_int_eq(tfjob_objects_parse(&objs, pods, strlen(pods), &opts, NULL), 0);
	ck_assert_uint_eq(tfjob_objects_count(objs), 2);
	tfjob_objects_free(objs);
	opts.max_input_bytes--;
	err = NULL;
	ck_assert_int_eq(tfjob_objects_parse(&objs, pods, strlen(pods), &opts, &err), TFJOB_ELIMIT);
	tfjob_error_free(err);
}
END_TEST

START_TEST(objects_values_and_documents)
{
	/* The number of pods has no limit of its own: a List is one document (max_nodes values), a
	 * stream holds at most max_documents objects. */
	struct buf b = { 0 };
	tfjob_parse_options opts = TFJOB_PARSE_OPTIONS_INIT;
	opts.max_nodes = 3 + 5 * 10; /* {items: [...]} and 10 pods of {metadata: {name: p}} */
	adds(&b, "{\"items\":[");
	for (int i = 0; i < 10; i++)
		adds(&b, i ? ",{\"metadata\":{\"name\":\"p\"}}" : "{\"metadata\":{\"name\":\"p\"}}");
	adds(&b, "]}");
	tfjob_objects *objs = NULL;
	ck_assert_int_eq(tfjob_objects_parse(&objs, b.p, b.n, &opts, NULL), 0);
	ck_assert_uint_eq(tfjob_objects_count(objs), 10);
	tfjob_objects_free(objs);
	opts.max_nodes--;
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_objects_parse(&objs, b.p, b.n, &opts, &err), TFJOB_ELIMIT);
	expect_message(err, "more than 52 values");
	b.n = 0;
	repeat(&b, "---\nmetadata: {name: p}\n", 5);
	opts = (tfjob_parse_options)TFJOB_PARSE_OPTIONS_INIT;
	opts.max_documents = 5;
	ck_assert_int_eq(tfjob_objects_parse(&objs, b.p, b.n, &opts, NULL), 0);
	ck_assert_uint_eq(tfjob_objects_count(objs), 5);
	tfjob_objects_free(objs);
	adds(&b, "---\nmetadata: {name: p}\n");
	err = NULL;
	ck_assert_int_eq(tfjob_objects_parse(&objs, b.p, b.n, &opts, &err), TFJOB_ELIMIT);
	expect_message(err, "more than 5 documents");
	free(b.p);
}
END_TEST

/* Pods the planner creates when one stray worker pod has index `stray` (replicas: 1). */
static size_t pods_created(int64_t stray, tfjob_compat compat)
{
	char text[2048], pods[512];
	snprintf(text, sizeof(text), JOB_YAML, "1", "");
	tfjob_job *job = tu_parse(text);
	snprintf(pods, sizeof(pods),
	         "[{\"metadata\":{\"name\":\"t-worker-%lld\",\"ownerReferences\":[{\"uid\":\"\",\"controller\":true}],"
	         "\"labels\":{\"training.kubeflow.org/job-name\":\"t\","
	         "\"training.kubeflow.org/operator-name\":\"tfjob-controller\","
	         "\"training.kubeflow.org/replica-type\":\"worker\",\"training.kubeflow.org/replica-index\":\"%lld\"}},"
	         "\"status\":{\"phase\":\"Running\"}}]",
	         (long long)stray, (long long)stray);
	tfjob_plan_options opts = TFJOB_PLAN_OPTIONS_INIT;
	opts.compat = compat;
	opts.now = 1700000000;
	tfjob_plan *plan = NULL;
	tfjob_error *err = NULL;
	ck_assert_msg(tfjob_plan_new(&plan, job, pods, NULL, &opts, &err) == 0, "%s", tfjob_error_message(err));
	size_t n = 0;
	for (size_t i = 0; i < tfjob_plan_action_count(plan); i++)
		n += tfjob_plan_action_type(plan, i) == TFJOB_ACTION_CREATE && tfjob_plan_action_kind(plan, i) == TFJOB_OBJECT_POD;
	tfjob_plan_free(plan);
	tfjob_job_free(job);
	return n;
}

START_TEST(compat_gap_cap)
{
	/* v1.9 creates every missing index below the highest one observed; here at most
	 * replicas + 1024 indices (0 ... 1024) in one step. */
	ck_assert_uint_eq(pods_created(1024, TFJOB_COMPAT_TRAINING_OPERATOR_1_9), 1024);
	ck_assert_uint_eq(pods_created(1025, TFJOB_COMPAT_TRAINING_OPERATOR_1_9), 1025);
	ck_assert_uint_eq(pods_created(1026, TFJOB_COMPAT_TRAINING_OPERATOR_1_9), 1025);
	ck_assert_uint_eq(pods_created(2147483647, TFJOB_COMPAT_TRAINING_OPERATOR_1_9), 1025);
	/* The documented mode creates only index 0. */
	ck_assert_uint_eq(pods_created(2147483647, TFJOB_COMPAT_DOCUMENTED), 1);
}
END_TEST

/* ---- status ---- */

START_TEST(status_json_depth)
{
	/* tfjob_job_set_status_json() uses jansson's parser: at most 2048 levels. */
	tfjob_job *job = tu_parse(HEAD);
	struct buf b = { 0 };
	adds(&b, "{\"x\":");
	repeat(&b, "[", 2047);
	repeat(&b, "]", 2047);
	adds(&b, "}");
	tfjob_error *err = NULL;
	ck_assert_msg(tfjob_job_set_status_json(job, b.p, &err) == 0, "%s", tfjob_error_message(err));
	b.n = 0;
	adds(&b, "{\"x\":");
	repeat(&b, "[", 2048);
	repeat(&b, "]", 2048);
	adds(&b, "}");
	ck_assert_int_eq(tfjob_job_set_status_json(job, b.p, &err), TFJOB_EPARSE);
	expect_message(err, "maximum parsing depth");
	free(b.p);
	tfjob_job_free(job);
}
END_TEST

/* ---- quantities (schedulingPolicy.minResources, the PodGroup's sums) ---- */

START_TEST(quantity_magnitude)
{
	tfjob__quantity q;
	ck_assert_int_eq(tfjob__quantity_parse(&q, "1e27"), 0);
	ck_assert_int_eq(tfjob__quantity_parse(&q, "1000000000000000000000000000"), 0);
	ck_assert_int_eq(tfjob__quantity_parse(&q, "1000000000000000000000000001"), TFJOB_ELIMIT);
	ck_assert_int_eq(tfjob__quantity_parse(&q, "1e28"), TFJOB_ELIMIT);
	ck_assert_int_eq(tfjob__quantity_parse(&q, "-1e27"), 0);
	ck_assert_int_eq(tfjob__quantity_parse(&q, "-1e28"), TFJOB_ELIMIT);
}
END_TEST

#ifdef TFJOB_HAVE_TRANSPORT

/* ---- the Kubernetes backend: kubeconfig and the files it names ---- */

static void setup_dir(void) { tu_tmpdir_make("limits"); }

static int kube_new(const char *kubeconfig, tfjob_error **err)
{
	tfjob_kube_options o = TFJOB_KUBE_OPTIONS_INIT;
	o.source = TFJOB_KUBE_SOURCE_KUBECONFIG;
	o.kubeconfig = kubeconfig;
	tfjob_transport *t = NULL;
	int rc = tfjob_kube_transport_new(&t, &o, err);
	if (!rc)
		ck_assert_str_eq(tfjob_kube_transport_server(t), "https://kube.example:6443");
	tfjob_transport_free(t);
	return rc;
}

#define KUBECONFIG_HEAD "apiVersion: v1\nkind: Config\ncurrent-context: a\n" \
	"clusters:\n- {name: c, cluster: {server: \"https://kube.example:6443\"}}\n" \
	"contexts:\n- {name: a, context: {cluster: c, user: u}}\n"

START_TEST(kubeconfig_size)
{
	struct buf b = { 0 };
	adds(&b, KUBECONFIG_HEAD "users:\n- {name: u, user: {token: abc}}\n");
	pad_to(&b, TFJOB__MAX_FILE_BYTES, 0);
	tu_write_tmp("config", b.p, b.n);
	tfjob_error *err = NULL;
	ck_assert_msg(kube_new(tu_tmp_path("config"), &err) == 0, "%s", tfjob_error_message(err));
	adds(&b, "\n");
	tu_write_tmp("config", b.p, b.n);
	ck_assert_int_eq(kube_new(tu_tmp_path("config"), &err), TFJOB_ELIMIT);
	char want[512];
	snprintf(want, sizeof(want), "%s: file is larger than the limit of 16777216 bytes", tu_tmp_path("config"));
	expect_message(err, want);
	free(b.p);
}
END_TEST

START_TEST(kubeconfig_referenced_file_size)
{
	/* client-key (read as is, not parsed): 16 MiB is accepted, one byte more is refused. */
	const char *config = KUBECONFIG_HEAD "users:\n- {name: u, user: {client-certificate: crt, client-key: key}}\n";
	tu_write_tmp("config", config, strlen(config));
	tu_write_tmp("crt", "-----BEGIN CERTIFICATE-----\n", 28);
	char *key = malloc(TFJOB__MAX_FILE_BYTES + 1);
	memset(key, 'k', TFJOB__MAX_FILE_BYTES + 1);
	tu_write_tmp("key", key, TFJOB__MAX_FILE_BYTES);
	tfjob_error *err = NULL;
	ck_assert_msg(kube_new(tu_tmp_path("config"), &err) == 0, "%s", tfjob_error_message(err));
	tu_write_tmp("key", key, TFJOB__MAX_FILE_BYTES + 1);
	ck_assert_int_eq(kube_new(tu_tmp_path("config"), &err), TFJOB_ELIMIT);
	expect_message(err, "/key: file is larger than the limit of 16777216 bytes");
	/* Token files are read by the same reader. */
	char *text = NULL;
	size_t len = 0;
	ck_assert_int_eq(tfjob__read_file(&text, &len, tu_tmp_path("key"), NULL), TFJOB_ELIMIT);
	tu_write_tmp("key", key, TFJOB__MAX_FILE_BYTES);
	ck_assert_int_eq(tfjob__read_file(&text, &len, tu_tmp_path("key"), NULL), 0);
	ck_assert_uint_eq(len, TFJOB__MAX_FILE_BYTES);
	free(text);
	free(key);
}
END_TEST

START_TEST(kubeconfig_parse_limits)
{
	/* The kubeconfig goes through the same reader as TFJobs, with the default limits. */
	struct buf b = { 0 };
	adds(&b, KUBECONFIG_HEAD "users:\n- {name: u, user: {token: abc}}\nx: [&a 0");
	repeat(&b, ", *a", TFJOB_DEFAULT_MAX_ALIASES + 1);
	adds(&b, "]\n");
	tu_write_tmp("config", b.p, b.n);
	tfjob_error *err = NULL;
	ck_assert_int_eq(kube_new(tu_tmp_path("config"), &err), TFJOB_ELIMIT);
	expect_message(err, "more than 1000 aliases");
	b.n = 0;
	adds(&b, KUBECONFIG_HEAD "users:\n- {name: u, user: {token: abc}}\nx: ");
	repeat(&b, "[", TFJOB_DEFAULT_MAX_DEPTH);
	repeat(&b, "]", TFJOB_DEFAULT_MAX_DEPTH);
	tu_write_tmp("config", b.p, b.n);
	ck_assert_int_eq(kube_new(tu_tmp_path("config"), &err), TFJOB_ELIMIT);
	expect_message(err, "nesting deeper than 128 levels");
	free(b.p);
}
END_TEST

/* ---- exec credential plugins: their output ---- */

static int run_plugin_printing(size_t size, tfjob_error **err)
{
	/* An ExecCredential padded with blanks to exactly size bytes, printed by cat. */
	struct buf b = { 0 };
	adds(&b, "{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
	         "\"status\":{\"token\":\"tok\"}}");
	pad_to(&b, size, 1);
	tu_write_tmp("cred.json", b.p, b.n);
	free(b.p);
	char *args[] = { (char *)tu_tmp_path("cred.json"), NULL };
	struct tfjob__exec_config exec = { .api_version = (char *)"client.authentication.k8s.io/v1",
	                                   .command = (char *)"cat", .args = args, .nargs = 1 };
	struct tfjob__exec_result res;
	int rc = tfjob__exec_credential_run(&res, &exec, NULL, err);
	if (!rc) {
		ck_assert_str_eq(res.token, "tok");
		tfjob__exec_result_clear(&res);
	}
	return rc;
}

START_TEST(exec_plugin_output)
{
	tfjob_error *err = NULL;
	ck_assert_msg(run_plugin_printing(1u << 20, &err) == 0, "%s", tfjob_error_message(err));
	ck_assert_int_eq(run_plugin_printing((1u << 20) + 1, &err), TFJOB_ELIMIT);
	expect_message(err, "exec plugin 'cat': its output is larger than the limit of 1048576 bytes");
	/* A plugin that writes far more is stopped (the pipe closes), with the same error. */
	ck_assert_int_eq(run_plugin_printing(8u << 20, &err), TFJOB_ELIMIT);
	expect_message(err, "larger than the limit of 1048576 bytes");
}
END_TEST

/* ---- HTTP response bodies ---- */

START_TEST(http_body)
{
	struct tfjob__http_response r = { 0 };
	char chunk[1000];
	memset(chunk, 'b', sizeof(chunk));
	/* At a small limit: 2,500 bytes in pieces; the piece that would pass it is refused. */
	ck_assert_int_eq(tfjob__http_body_append(&r, chunk, 1000, 2500), 0);
	ck_assert_int_eq(tfjob__http_body_append(&r, chunk, 1000, 2500), 0);
	ck_assert_int_eq(tfjob__http_body_append(&r, chunk, 500, 2500), 0);
	ck_assert_uint_eq(r.len, 2500);
	ck_assert_uint_eq(strlen(r.body), 2500);
	ck_assert_int_eq(r.too_large, 0);
	ck_assert_int_eq(tfjob__http_body_append(&r, chunk, 1, 2500), -1);
	ck_assert_int_eq(r.too_large, 1);
	ck_assert_uint_eq(r.len, 2500);
	tfjob__http_response_clear(&r);
	/* The real limit, 256 MiB, in one piece and one byte more. */
	size_t max = TFJOB__HTTP_MAX_BODY;
	char *big = malloc(max);
	ck_assert_ptr_nonnull(big);
	memset(big, ' ', max);
	ck_assert_int_eq(tfjob__http_body_append(&r, big, max, TFJOB__HTTP_MAX_BODY), 0);
	ck_assert_int_eq(tfjob__http_body_append(&r, "x", 1, TFJOB__HTTP_MAX_BODY), -1);
	ck_assert_int_eq(r.too_large, 1);
	ck_assert_uint_le(r.cap, max + 1);
	free(big);
	tfjob__http_response_clear(&r);
	ck_assert_uint_eq(max, (size_t)256 * 1024 * 1024);
}
END_TEST

static int64_t retry_after(const char *line)
{
	struct tfjob__http_response r = { 0 };
	r.retry_after_ms = -1;
	ck_assert_uint_eq(tfjob__http_on_header((char *)line, 1, strlen(line), &r), strlen(line));
	return r.retry_after_ms;
}

START_TEST(retry_after_cap)
{
	ck_assert_int_eq(retry_after("Retry-After: 600\r\n"), 600000);
	ck_assert_int_eq(retry_after("retry-after: 601\r\n"), 600000);
	ck_assert_int_eq(retry_after("Retry-After: 99999999999999999999999999999999\r\n"), 600000);
	ck_assert_int_eq(retry_after("Retry-After: -1\r\n"), -1);
	ck_assert_int_eq(retry_after("Retry-After: soon\r\n"), -1);
}
END_TEST

/* ---- watch streams: one event ---- */

static int count_values(const char *value, size_t len, void *payload)
{
	(void)value;
	(void)len;
	(*(int *)payload)++;
	return 0;
}

START_TEST(watch_event_size)
{
	tfjob__splitter s;
	tfjob__splitter_init(&s, 0);
	ck_assert_uint_eq(s.max, (size_t)64 * 1024 * 1024);
	tfjob__splitter_free(&s);
	/* At a small limit: a value of exactly max bytes, then one of max + 1, fed in pieces. */
	char value[101];
	memset(value, ' ', sizeof(value));
	value[0] = '{';
	value[99] = '}';
	int got = 0;
	tfjob__splitter_init(&s, 100);
	ck_assert_int_eq(tfjob__splitter_feed(&s, value, 50, count_values, &got), 0);
	ck_assert_int_eq(tfjob__splitter_feed(&s, value + 50, 50, count_values, &got), 0);
	ck_assert_int_eq(got, 1);
	value[99] = ' ';
	value[100] = '}';
	ck_assert_int_eq(tfjob__splitter_feed(&s, value, 60, count_values, &got), 0);
	ck_assert_int_eq(tfjob__splitter_feed(&s, value + 60, 41, count_values, &got), -1);
	ck_assert_int_eq(s.too_large, 1);
	ck_assert_int_eq(got, 1);
	/* Failed until reset. */
	ck_assert_int_eq(tfjob__splitter_feed(&s, "{}", 2, count_values, &got), -1);
	tfjob__splitter_reset(&s);
	ck_assert_int_eq(s.too_large, 0);
	ck_assert_int_eq(tfjob__splitter_feed(&s, "{}", 2, count_values, &got), 0);
	ck_assert_int_eq(got, 2);
	tfjob__splitter_free(&s);
}
END_TEST

#endif /* TFJOB_HAVE_TRANSPORT */

static Suite *limits_suite(void)
{
	Suite *s = suite_create("limits");
	TCase *tc = tu_tcase(s, "parse", 300);
	tcase_add_test(tc, input_size_default);
	tcase_add_test(tc, input_size_option);
	tcase_add_test(tc, depth_default);
	tcase_add_test(tc, aliases_default);
	tcase_add_test(tc, values_default);
	tcase_add_test(tc, values_option_json);
	tcase_add_test(tc, values_default_json);
	tcase_add_test(tc, documents_default);
	tcase_add_loop_test(tc, limit_options, 0, (int)TFJOB_ARRAY_LEN(option_cases));
	tcase_add_test(tc, json_nesting_before_values);
	tcase_add_test(tc, number_length);
	tc = tu_tcase(s, "fields", 300);
	tcase_add_test(tc, int32_fields);
	tcase_add_test(tc, json_integer_beyond_int64);
	tcase_add_test(tc, name_length);
	tcase_add_test(tc, replicas_limit);
	tcase_add_test(tc, replicas_limit_validated);
	tcase_add_test(tc, objects_list_bytes);
	tcase_add_test(tc, objects_values_and_documents);
	tcase_add_test(tc, compat_gap_cap);
	tcase_add_test(tc, status_json_depth);
	tcase_add_test(tc, quantity_magnitude);
#ifdef TFJOB_HAVE_TRANSPORT
	tc = tu_tcase(s, "transport", 300);
	tcase_add_checked_fixture(tc, setup_dir, tu_tmpdir_remove);
	tcase_add_test(tc, kubeconfig_size);
	tcase_add_test(tc, kubeconfig_referenced_file_size);
	tcase_add_test(tc, kubeconfig_parse_limits);
	tcase_add_test(tc, exec_plugin_output);
	tcase_add_test(tc, http_body);
	tcase_add_test(tc, retry_after_cap);
	tcase_add_test(tc, watch_event_size);
#endif
	return s;
}

int main(void)
{
	return tu_run_global(limits_suite());
}
