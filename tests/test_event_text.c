/*
 * Events written as text in one pass (lib/transport/event.h) against the jansson tree they were
 * once built as: for awkward strings (quotes, backslashes, control characters, non-ASCII UTF-8,
 * empty, long) the text is byte for byte what json_dumps(JSON_COMPACT) wrote for that tree, from
 * tfjob__event_text(), from tfjob_transport_create_event() and from the controller's recorder,
 * whose count PATCH is checked the same way. Strings that are not UTF-8 fail as they did.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "controller/internal.h"
#include "testutil.h"
#include "tfjob/sys/transport.h"
#include "transport/event.h"

static const char *const nasty[] = {
	"",
	"plain",
	"quote \" and backslash \\ and slash /",
	"\\\"\\\\",
	"controls \x01\x02\b\f\n\r\t\x1f\x7f end",
	"\xc3\xa9t\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xe2\x80\xa8 \xef\xbf\xbf",
	"<tag attr='x'>&amp;</tag>",
	"{\"not\":\"json\"},",
	"\\u0000 literal",
};
#define N_NASTY (sizeof(nasty) / sizeof(nasty[0]))

/* A message of n bytes cycling through every nasty string. */
static char *long_message(size_t n)
{
	char *m = malloc(n + 1);
	size_t k = 0;
	for (size_t i = 1; k < n; i++) {
		const char *s = nasty[i % N_NASTY];
		size_t len = strlen(s);
		if (len > n - k)
			len = 0;
		memcpy(m + k, s, len);
		k += len;
		if (len == 0)
			m[k++] = 'x';
	}
	m[n] = '\0';
	return m;
}

/* ---- the Event as it was built before: a jansson tree (kept here as the reference) ---- */

static void set_str(json_t *obj, const char *key, const char *value)
{
	if (value)
		ck_assert_int_eq(json_object_set_new(obj, key, json_string(value)), 0);
}

static json_t *old_event(const char *ns, const json_t *involved, const char *type, const char *reason,
                         const char *message, const char *component, const char *name, const char *now)
{
	const json_t *meta = json_object_get(involved, "metadata");
	json_t *ev = json_object(), *ref = json_object(), *src = json_object(), *evmeta = json_object();
	set_str(ref, "kind", json_string_value(json_object_get(involved, "kind")));
	set_str(ref, "apiVersion", json_string_value(json_object_get(involved, "apiVersion")));
	set_str(ref, "name", json_string_value(json_object_get(meta, "name")));
	const char *ins = json_string_value(json_object_get(meta, "namespace"));
	set_str(ref, "namespace", ins ? ins : ns);
	set_str(ref, "uid", json_string_value(json_object_get(meta, "uid")));
	set_str(ref, "resourceVersion", json_string_value(json_object_get(meta, "resourceVersion")));
	set_str(src, "component", component ? component : TFJOB_OPERATOR_NAME);
	set_str(evmeta, "name", name);
	set_str(evmeta, "namespace", ns);
	set_str(ev, "apiVersion", "v1");
	set_str(ev, "kind", "Event");
	json_object_set_new(ev, "metadata", evmeta);
	json_object_set_new(ev, "involvedObject", ref);
	set_str(ev, "type", type);
	set_str(ev, "reason", reason);
	set_str(ev, "message", message);
	json_object_set_new(ev, "source", src);
	set_str(ev, "firstTimestamp", now);
	set_str(ev, "lastTimestamp", now);
	json_object_set_new(ev, "count", json_integer(1));
	set_str(ev, "reportingComponent", component ? component : TFJOB_OPERATOR_NAME);
	return ev;
}

/* The involved object as the recorder used to write it (every field a string). */
static json_t *involved_of(const tfjob__involved *inv)
{
	json_t *meta = json_object(), *o = json_object();
	set_str(o, "kind", inv->kind);
	set_str(o, "apiVersion", inv->api_version);
	set_str(meta, "name", inv->name);
	set_str(meta, "namespace", inv->ns);
	set_str(meta, "uid", inv->uid);
	set_str(meta, "resourceVersion", inv->rv);
	json_object_set_new(o, "metadata", meta);
	return o;
}

/* text is exactly the old tree's compact dump, and parses back to that tree. */
static void assert_same(const char *text, const json_t *want_tree)
{
	char *want = json_dumps(want_tree, JSON_COMPACT);
	ck_assert_ptr_nonnull(want);
	size_t at = 0;
	while (text[at] && text[at] == want[at])
		at++;
	/* short: the message of a failed check has a bounded size */
	ck_assert_msg(text[at] == want[at], "at byte %zu: \"%.60s\", jansson wrote \"%.60s\"", at, text + at, want + at);
	json_error_t jerr;
	json_t *got = json_loads(text, JSON_REJECT_DUPLICATES, &jerr);
	ck_assert_msg(got != NULL, "%s", jerr.text);
	ck_assert(json_equal(got, want_tree));
	json_decref(got);
	free(want);
}

START_TEST(text_matches_the_tree)
{
	char *big = long_message(100000);
	char now[32];
	tfjob_time_format(now, sizeof(now), 1700000000);
	for (size_t i = 0; i < N_NASTY; i++) {
		const char *s = nasty[i], *t = nasty[(i + 3) % N_NASTY];
		/* every string field awkward; then the fields left out one by one (NULL) */
		tfjob__involved inv = { s, t, s[0] ? s : "n", s, t, s };
		for (int drop = -1; drop < 6; drop++) {
			tfjob__involved v = inv;
			const char **f[] = { &v.kind, &v.api_version, &v.ns, &v.uid, &v.rv, &v.kind };
			if (drop >= 0)
				*f[drop] = NULL;
			const char *msg = drop == 5 ? big : t;
			char *text = tfjob__event_text(s[0] ? s : "ns", &v, "Warning", t[0] ? t : "R", msg, drop == 4 ? NULL : s,
			                               1700000000, 0xdeadbeefull);
			ck_assert_ptr_nonnull(text);
			char *name = tfjob__strdup_printf("%s.00000000deadbeef", v.name);
			json_t *inv_tree = involved_of(&v);
			json_t *want = old_event(s[0] ? s : "ns", inv_tree, "Warning", t[0] ? t : "R", msg, drop == 4 ? NULL : s,
			                         name, now);
			assert_same(text, want);
			json_decref(want);
			json_decref(inv_tree);
			free(name);
			free(text);
		}
	}
	free(big);
}
END_TEST

START_TEST(text_refuses_what_jansson_refused)
{
	tfjob__involved inv = { "TFJob", "kubeflow.org/v1", "j", "ns", "u", "1" };
	static const char *const bad[] = { "\xff", "a\xc3", "\xed\xa0\x80", "\xc0\xaf", "\xf4\x90\x80\x80" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		ck_assert_ptr_null(json_string(bad[i]));
		ck_assert_ptr_null(tfjob__event_text("ns", &inv, "Normal", "R", bad[i], NULL, 1, 1));
		ck_assert_ptr_null(tfjob__event_text("ns", &inv, "Normal", bad[i], "m", NULL, 1, 1));
		tfjob__involved v = inv;
		v.uid = bad[i];
		ck_assert_ptr_null(tfjob__event_text("ns", &v, "Normal", "R", "m", NULL, 1, 1));
		v = inv;
		v.name = bad[i];
		ck_assert_ptr_null(tfjob__event_text("ns", &v, "Normal", "R", "m", NULL, 1, 1));
	}
}
END_TEST

/* ---- a backend that keeps the last request bodies ---- */

typedef struct capture {
	char *event, *patch, *event_ns;
	int creates, patches;
} capture;

static int cap_create(void *data, char **out, const tfjob_resource *res, const char *ns, const char *object_json,
                      tfjob_error **err)
{
	(void)err;
	capture *c = data;
	ck_assert_str_eq(res->resource, "events");
	free(c->event);
	free(c->event_ns);
	c->event = strdup(object_json);
	c->event_ns = strdup(ns);
	c->creates++;
	*out = strdup("{\"metadata\":{\"name\":\"captured\"}}");
	return 0;
}

static int cap_patch(void *data, char **out, const tfjob_resource *res, const char *ns, const char *name,
                     const char *sub, const char *patch, tfjob_error **err)
{
	(void)res, (void)ns, (void)sub, (void)err;
	capture *c = data;
	ck_assert_str_eq(name, "captured");
	free(c->patch);
	c->patch = strdup(patch);
	c->patches++;
	*out = strdup("{}");
	return 0;
}

static void cap_free(void *data)
{
	capture *c = data;
	free(c->event);
	free(c->patch);
	free(c->event_ns);
}

static capture CAP;
static tfjob_transport *T;

static void setup(void)
{
	memset(&CAP, 0, sizeof(CAP));
	tfjob_transport_backend be = TFJOB_TRANSPORT_BACKEND_INIT;
	be.data = &CAP;
	be.free = cap_free;
	be.create = cap_create;
	be.patch = cap_patch;
	ck_assert_int_eq(tfjob_transport_new(&T, &be, NULL), 0);
}

static void teardown(void)
{
	tfjob_transport_free(T);
	T = NULL;
}

/* The system clock's seconds as the transport reads them (CLOCK_REALTIME). Not time(): it reads a
   coarser clock that can still show the last second a tick after the transport's has moved on. */
static time_t wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return ts.tv_sec;
}

/*
 * The captured Event against the old tree: its name is the involved name and 16 hex digits, its
 * timestamps one time within [t0, t1]; those taken from it, the rest must be the tree's.
 */
static void assert_captured(const char *ns, const json_t *involved, const char *type, const char *reason,
                            const char *message, const char *component, time_t t0, time_t t1)
{
	json_t *ev = json_loads(CAP.event, 0, NULL);
	ck_assert_ptr_nonnull(ev);
	const char *name = json_string_value(json_object_get(json_object_get(ev, "metadata"), "name"));
	const char *iname = json_string_value(json_object_get(json_object_get(involved, "metadata"), "name"));
	size_t n = strlen(iname);
	ck_assert_uint_eq(strlen(name), n + 17);
	ck_assert_int_eq(strncmp(name, iname, n), 0);
	ck_assert_int_eq(name[n], '.');
	ck_assert_uint_eq(strspn(name + n + 1, "0123456789abcdef"), 16);
	const char *now = json_string_value(json_object_get(ev, "firstTimestamp"));
	char lo[32], hi[32];
	tfjob_time_format(lo, sizeof(lo), t0);
	tfjob_time_format(hi, sizeof(hi), t1);
	ck_assert_msg(strcmp(lo, now) <= 0 && strcmp(now, hi) <= 0, "%s not in [%s, %s]", now, lo, hi);
	json_t *want = old_event(ns, involved, type, reason, message, component, name, now);
	assert_same(CAP.event, want);
	ck_assert_str_eq(CAP.event_ns, ns);
	json_decref(want);
	json_decref(ev);
}

START_TEST(public_create_event_matches_the_tree)
{
	for (size_t i = 0; i < N_NASTY; i++) {
		const char *s = nasty[i], *t = nasty[(i + 5) % N_NASTY];
		/* the involved object as JSON text, with its namespace given, empty, and absent */
		for (int nsform = 0; nsform < 3; nsform++) {
			json_t *inv = json_pack("{s:s,s:s,s:{s:s,s:s,s:s}}", "kind", s, "apiVersion", t, "metadata", "name",
			                        s[0] ? s : "n", "uid", t, "resourceVersion", s);
			json_t *meta = json_object_get(inv, "metadata");
			if (nsform == 0)
				set_str(meta, "namespace", t[0] ? t : "tns");
			else if (nsform == 1)
				set_str(meta, "namespace", "");
			char *text = json_dumps(inv, 0); /* with escapes of jansson's own, and spaces */
			const char *ns_arg = i % 2 ? NULL : "given";
			const char *ns = nsform == 0 ? (t[0] ? t : "tns") : ns_arg ? ns_arg : "default";
			time_t t0 = wall_s();
			tfjob_error *err = NULL;
			char *out = NULL;
			int rc = tfjob_transport_create_event(&out, T, ns_arg, text, i % 2 ? "Normal" : "Warning", t[0] ? t : "R", s,
			                                      i % 3 ? s : NULL, &err);
			ck_assert_msg(rc == 0, "create_event: %s", tfjob_error_message(err));
			ck_assert_str_eq(out, "{\"metadata\":{\"name\":\"captured\"}}");
			assert_captured(ns, inv, i % 2 ? "Normal" : "Warning", t[0] ? t : "R", s, i % 3 ? s : NULL, t0, wall_s());
			tfjob_free(out);
			free(text);
			json_decref(inv);
		}
	}
}
END_TEST

START_TEST(public_create_event_checks_as_before)
{
	const char *job = "{\"kind\":\"TFJob\",\"metadata\":{\"name\":\"j\"}}";
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_transport_create_event(NULL, T, NULL, job, "Bad", "R", "m", NULL, &err), TFJOB_EINVAL);
	ck_assert_str_eq(tfjob_error_message(err), "create_event: type must be Normal or Warning");
	tfjob_error_free(err);
	ck_assert_int_eq(tfjob_transport_create_event(NULL, T, NULL, job, "Normal", "", "m", NULL, &err), TFJOB_EINVAL);
	ck_assert_str_eq(tfjob_error_message(err), "create_event: a reason is required");
	tfjob_error_free(err);
	ck_assert_int_eq(tfjob_transport_create_event(NULL, T, NULL, "{\"metadata\":{}}", "Normal", "R", "m", NULL, &err),
	                 TFJOB_EINVAL);
	ck_assert_str_eq(tfjob_error_message(err), "create_event: the involved object has no metadata.name");
	tfjob_error_free(err);
	ck_assert_int_eq(tfjob_transport_create_event(NULL, T, NULL, "[1]", "Normal", "R", "m", NULL, NULL), TFJOB_ESCHEMA);
	/* jansson refused a string that is not UTF-8, which read as out of memory */
	ck_assert_int_eq(tfjob_transport_create_event(NULL, T, NULL, job, "Normal", "R", "bad \xff", NULL, &err),
	                 TFJOB_ENOMEM);
	tfjob_error_free(err);
	ck_assert_int_eq(tfjob_transport_create_event(NULL, T, NULL, job, "Normal", "R\xc3", "m", NULL, NULL), TFJOB_ENOMEM);
	ck_assert_int_eq(CAP.creates, 0);
	/* a message NULL is "" */
	ck_assert_int_eq(tfjob_transport_create_event(NULL, T, NULL, job, "Normal", "R", NULL, NULL, NULL), 0);
	json_t *ev = json_loads(CAP.event, 0, NULL);
	ck_assert_str_eq(json_string_value(json_object_get(ev, "message")), "");
	json_decref(ev);
}
END_TEST

/* The recorder's create and count PATCH, for awkward objects and messages. */
START_TEST(recorder_writes_as_the_tree)
{
	tfjob_controller *c = NULL;
	tfjob_controller_options o = TFJOB_CONTROLLER_OPTIONS_INIT;
	ck_assert_int_eq(tfjob_controller_new(&c, T, &o, NULL), 0);
	ck_assert_int_eq(tfjob__recorder_start(c->events), 0);
	char *big = long_message(20000);
	for (size_t i = 0; i <= N_NASTY; i++) {
		const char *s = i < N_NASTY ? nasty[i] : "big", *msg = i < N_NASTY ? nasty[(i + 2) % N_NASTY] : big;
		char name[64];
		snprintf(name, sizeof(name), "job-%zu", i); /* an object each: a fresh spam bucket */
		const tfjob__involved inv = { s, s, name, i % 2 ? s : "default", s, s };
		for (int times = 1; times <= 2; times++) {
			time_t t0 = wall_s();
			tfjob__event_batch b = { NULL, NULL };
			ck_assert_int_eq(tfjob__event_batch_add(&b, &inv, "Warning", "Nasty", msg), 0);
			tfjob__recorder_post(c->events, &b);
			ck_assert_int_eq(tfjob__recorder_wait_empty(c->events, 10000), 0);
			if (times == 1) {
				ck_assert_int_eq(CAP.creates, (int)i + 1);
				json_t *tree = involved_of(&inv);
				assert_captured(i % 2 ? s : "default", tree, "Warning", "Nasty", msg, TFJOB_OPERATOR_NAME, t0, wall_s());
				json_decref(tree);
				continue;
			}
			/* the repeat: a PATCH of count, lastTimestamp (the controller's clock) and message */
			ck_assert_int_eq(CAP.patches, (int)i + 1);
			char now[32];
			json_t *p = json_loads(CAP.patch, 0, NULL);
			ck_assert_ptr_nonnull(p);
			const char *ts = json_string_value(json_object_get(p, "lastTimestamp"));
			ck_assert_ptr_nonnull(ts);
			snprintf(now, sizeof(now), "%s", ts);
			json_t *want = json_pack("{s:I,s:s,s:s}", "count", (json_int_t)2, "lastTimestamp", now, "message", msg);
			char *want_text = json_dumps(want, JSON_COMPACT);
			ck_assert_str_eq(CAP.patch, want_text);
			ck_assert(json_equal(p, want));
			free(want_text);
			json_decref(want);
			json_decref(p);
		}
	}
	ck_assert_uint_eq(c->m.events_failed, 0);
	tfjob_controller_free(c);
	free(big);
}
END_TEST

/* The name of the last captured Event (a copy). */
static char *captured_name(void)
{
	json_t *ev = json_loads(CAP.event, 0, NULL);
	ck_assert_ptr_nonnull(ev);
	char *name = strdup(json_string_value(json_object_get(json_object_get(ev, "metadata"), "name")));
	json_decref(ev);
	return name;
}

/* Events made one after the other are named in that order, as the API server lists them. */
START_TEST(consecutive_event_names_sort_in_creation_order)
{
	enum { N = 5000 };
	char *prev = NULL;
	struct timespec t0;
	clock_gettime(CLOCK_REALTIME, &t0);
	uint64_t start_ns = (uint64_t)t0.tv_sec * 1000000000ull + (uint64_t)t0.tv_nsec;
	for (int i = 0; i < N; i++) {
		tfjob_error *err = NULL;
		int rc = tfjob_transport_create_event(NULL, T, "ns", "{\"kind\":\"TFJob\",\"metadata\":{\"name\":\"job\"}}",
		                                      "Normal", "R", "m", NULL, &err);
		ck_assert_msg(rc == 0, "create_event: %s", tfjob_error_message(err));
		char *name = captured_name();
		ck_assert_int_eq(strncmp(name, "job.", 4), 0);
		if (prev)
			ck_assert_msg(strcmp(prev, name) < 0, "event %d: %s after %s", i, name, prev);
		else /* the suffix is the wall clock's nanoseconds, in hex, as client-go's */
			ck_assert_uint_ge(strtoull(name + 4, NULL, 16), start_ns);
		free(prev);
		prev = name;
	}
	free(prev);
}
END_TEST

/* The suffix never repeats nor goes back, whatever the clock does. */
START_TEST(event_unique_is_monotonic)
{
	uint64_t a = tfjob__event_unique(UINT64_C(0x1800000000000000));
	ck_assert_uint_ge(a, UINT64_C(0x1800000000000000));
	ck_assert_uint_eq(tfjob__event_unique(a), a + 1);       /* the same nanosecond */
	ck_assert_uint_eq(tfjob__event_unique(a - 1000), a + 2); /* a clock stepped back */
	ck_assert_uint_eq(tfjob__event_unique(a + 1000), a + 1000);
}
END_TEST

#define THREADS 4
#define PER_THREAD 20000
static uint64_t seen[THREADS][PER_THREAD];

static void *take_uniques(void *arg)
{
	uint64_t *out = arg;
	for (int i = 0; i < PER_THREAD; i++)
		out[i] = tfjob__event_unique(0); /* a clock that never moves: every value is last + 1 */
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Threads taking suffixes at once each get values of their own, increasing in each thread. */
START_TEST(event_unique_is_thread_safe)
{
	pthread_t th[THREADS];
	for (int i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_create(&th[i], NULL, take_uniques, seen[i]), 0);
	for (int i = 0; i < THREADS; i++)
		ck_assert_int_eq(pthread_join(th[i], NULL), 0);
	for (int i = 0; i < THREADS; i++)
		for (int k = 1; k < PER_THREAD; k++)
			ck_assert_uint_gt(seen[i][k], seen[i][k - 1]);
	uint64_t *all = &seen[0][0];
	qsort(all, THREADS * PER_THREAD, sizeof *all, cmp_u64);
	for (int k = 1; k < THREADS * PER_THREAD; k++)
		ck_assert_uint_ne(all[k], all[k - 1]);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("event_text");
	TCase *tc = tcase_create("text");
	tcase_add_test(tc, text_matches_the_tree);
	tcase_add_test(tc, text_refuses_what_jansson_refused);
	tcase_add_test(tc, event_unique_is_monotonic);
	tcase_add_test(tc, event_unique_is_thread_safe);
	suite_add_tcase(s, tc);
	tc = tcase_create("transport");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, public_create_event_matches_the_tree);
	tcase_add_test(tc, public_create_event_checks_as_before);
	tcase_add_test(tc, recorder_writes_as_the_tree);
	tcase_add_test(tc, consecutive_event_names_sort_in_creation_order);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_global(suite());
}
