/*
 * Versioned structs (lib/util/versioned.h): the size table of every public struct matches its
 * header, and init/copy/fill touch exactly the bytes of the caller's version. A simulated struct
 * with two versions stands for the day a field is appended; its version-1 callers' buffers are
 * heap blocks of exactly the version-1 size, so under AddressSanitizer (tests/suites/20-sanitizers.sh)
 * any byte read or written past them fails the test.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "util/versioned_structs.h"
#include "testutil.h"

START_TEST(size_tables_match_the_headers)
{
	for (size_t i = 0; tfjob__versioned_all[i]; i++) {
		const tfjob__versioned *vs = tfjob__versioned_all[i];
		ck_assert_uint_ge(vs->latest, 1);
		ck_assert_uint_gt(vs->sizes[0], sizeof(unsigned int));
		for (unsigned int v = 1; v < vs->latest; v++)
			ck_assert_msg(vs->sizes[v] > vs->sizes[v - 1], "%s: version %u is not larger than %u", vs->name, v + 1,
			              v);
		/* the newest version ends where the struct ends (up to its tail padding): a field appended
		 * without a new version and size entry fails here */
		size_t last = vs->sizes[vs->latest - 1];
		size_t rounded = (last + vs->align - 1) / vs->align * vs->align;
		ck_assert_msg(rounded == vs->size, "%s: version %u ends at byte %zu but the struct has %zu bytes", vs->name,
		              vs->latest, last, vs->size);
		unsigned int version;
		memcpy(&version, vs->defaults, sizeof version);
		ck_assert_msg(version == vs->latest, "%s: defaults carry version %u, not %u", vs->name, version, vs->latest);
	}
}
END_TEST

/* A struct as it would be after a field was appended: version 1 ends at b, version 2 adds c. */
typedef struct grown {
	unsigned int version;
	int a;
	const char *b;
	long c; /* version 2 */
} grown;

TFJOB__VERSIONED_DEFINE(grown_v, grown, 2, ((grown){ 2, 7, "dflt", 42 }), TFJOB__SIZE_THROUGH(grown, b),
                        TFJOB__SIZE_THROUGH(grown, c));

/* The same struct as a caller built against version 1 declares it. */
typedef struct grown_v1 {
	unsigned int version;
	int a;
	const char *b;
} grown_v1;
_Static_assert(sizeof(grown_v1) == TFJOB__SIZE_THROUGH(grown, b), "grown_v1 is version 1 of grown");

/* A caller of version 1: a heap block of exactly the version-1 size. */
static grown_v1 *v1_block(void) { return malloc(sizeof(grown_v1)); }

START_TEST(init_writes_only_the_callers_version)
{
	grown *full = malloc(sizeof *full);
	memset(full, 0xab, sizeof *full);
	ck_assert_int_eq(tfjob__versioned_init(&grown_v, full, 1), 0);
	ck_assert_uint_eq(full->version, 1);
	ck_assert_int_eq(full->a, 7);
	long untouched;
	memset(&untouched, 0xab, sizeof untouched);
	ck_assert_mem_eq(&full->c, &untouched, sizeof untouched); /* past version 1: not written */
	free(full);

	grown_v1 *old = v1_block(); /* ASan: a write past it fails */
	ck_assert_int_eq(tfjob__versioned_init(&grown_v, old, 1), 0);
	ck_assert_str_eq(old->b, "dflt");
	free(old);

	grown g;
	ck_assert_int_eq(tfjob__versioned_init(&grown_v, &g, 2), 0);
	ck_assert_uint_eq(g.version, 2);
	ck_assert_int_eq(g.c, 42);
	ck_assert_int_eq(tfjob__versioned_init(&grown_v, &g, 0), TFJOB_EVERSION);
	ck_assert_int_eq(tfjob__versioned_init(&grown_v, &g, 3), TFJOB_EVERSION);
	ck_assert_int_eq(tfjob__versioned_init(&grown_v, NULL, 1), TFJOB_EINVAL);
}
END_TEST

START_TEST(copy_reads_only_the_callers_version)
{
	grown_v1 *old = v1_block(); /* ASan: a read past it fails */
	ck_assert_int_eq(tfjob__versioned_init(&grown_v, old, 1), 0);
	old->a = 99;
	grown got;
	ck_assert_int_eq(tfjob__versioned_copy(&grown_v, &got, old, NULL), 0);
	ck_assert_uint_eq(got.version, 2); /* the library's copy is always the newest version */
	ck_assert_int_eq(got.a, 99);       /* the caller's fields */
	ck_assert_int_eq(got.c, 42);       /* the default of what version 1 lacks */
	free(old);

	ck_assert_int_eq(tfjob__versioned_copy(&grown_v, &got, NULL, NULL), 0); /* NULL: defaults */
	ck_assert_int_eq(got.a, 7);

	grown bad = { 3, 0, NULL, 0 };
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob__versioned_copy(&grown_v, &got, &bad, &err), TFJOB_EVERSION);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "grown version 3"));
	tfjob_error_free(err);
}
END_TEST

START_TEST(fill_writes_only_the_callers_version)
{
	grown full = { 2, 1, "x", 5 };
	grown_v1 *old = v1_block(); /* ASan: a write past it fails */
	old->version = 1;
	ck_assert_int_eq(tfjob__versioned_fill(&grown_v, old, &full, NULL), 0);
	ck_assert_uint_eq(old->version, 1);
	ck_assert_int_eq(old->a, 1);
	free(old);
	grown zero = { 0, 0, NULL, 0 };
	ck_assert_int_eq(tfjob__versioned_fill(&grown_v, &zero, &full, NULL), TFJOB_EVERSION);
}
END_TEST

/* Every public _init follows the one policy: versions 1..latest, nothing past the version's size. */
START_TEST(public_inits_accept_every_known_version)
{
	tfjob_plan_options p;
	ck_assert_int_eq(tfjob_plan_options_init(&p, 1), 0);
	ck_assert_int_eq(tfjob_plan_options_init(&p, TFJOB_PLAN_OPTIONS_VERSION + 1), TFJOB_EVERSION);
	tfjob_controller_hooks h; /* once accepted only its newest version */
	ck_assert_int_eq(tfjob_controller_hooks_init(&h, 1), 0);
	ck_assert_int_eq(h.log_level, TFJOB_LOG_INFO);
	tfjob_transport_backend be = TFJOB_TRANSPORT_BACKEND_INIT;
	ck_assert_uint_eq(be.version, TFJOB_TRANSPORT_BACKEND_VERSION);
	ck_assert_ptr_null(be.free);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("versions");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, size_tables_match_the_headers);
	tcase_add_test(tc, init_writes_only_the_callers_version);
	tcase_add_test(tc, copy_reads_only_the_callers_version);
	tcase_add_test(tc, fill_writes_only_the_callers_version);
	tcase_add_test(tc, public_inits_accept_every_known_version);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
