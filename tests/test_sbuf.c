/*
 * The JSON text writers (internal): the fast compact writer matches jansson byte for byte, and
 * Go-compatible quoting as encoding/json does it.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "internal/sbuf.h"
#include "testutil.h"

START_TEST(compact_writer_matches_jansson)
{
	static const char *const docs[] = {
		"{}", "[]", "null", "true", "false", "0", "-12", "9223372036854775807", "1.5", "1e300", "-0.0", "3.0",
		"\"\"", "\"a\\\"b\\\\c\\/d\\b\\f\\n\\r\\t\\u0001\\u001f\\u007f é \\u2028 😀\"",
		"{\"k\\n\":[1,{\"x\":null,\"y\":[true,false,\"<>&\"]},2.25],\"z\":{}}",
	};
	for (size_t i = 0; i < sizeof(docs) / sizeof(docs[0]); i++) {
		json_error_t jerr;
		json_t *v = json_loads(docs[i], JSON_DECODE_ANY, &jerr);
		ck_assert_msg(v != NULL, "%s: %s", docs[i], jerr.text);
		char *want = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT | JSON_REAL_PRECISION(17));
		tfjob__sbuf b = TFJOB__SBUF_INIT;
		tfjob__sbuf_add_json(&b, v);
		char *got = tfjob__sbuf_take(&b);
		ck_assert_str_eq(got, want);
		free(got);
		free(want);
		json_decref(v);
	}
}
END_TEST

START_TEST(go_quoting)
{
	tfjob__sbuf b = TFJOB__SBUF_INIT;
	tfjob__sbuf_add_quoted(&b, "a\"b\\c\n\r\t\x01<>&\xe2\x80\xa8\xe2\x80\xa9 é/");
	char *got = tfjob__sbuf_take(&b);
	ck_assert_str_eq(got, "\"a\\\"b\\\\c\\n\\r\\t\\u0001\\u003c\\u003e\\u0026\\u2028\\u2029 é/\"");
	free(got);
	got = tfjob__sbuf_take(&b); /* an empty buffer gives "" */
	ck_assert_str_eq(got, "");
	free(got);
	tfjob__sbuf_add_i64(&b, -42);
	tfjob__sbuf_add_quoted(&b, "");
	got = tfjob__sbuf_take(&b);
	ck_assert_str_eq(got, "-42\"\"");
	free(got);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("sbuf");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, compact_writer_matches_jansson);
	tcase_add_test(tc, go_quoting);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
