/*
 * The controller's event recorder (lib/controller/events.c) on the memory backend: repeats
 * become count PATCHes, similar Events are combined, the spam filter and the bounded queue drop
 * and count, metrics in /metrics, a stopped recorder flushes within its bound.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "controller/internal.h"
#include "testutil.h"
#include "tfjob/memstore.h"

#define NS "default"

static int64_t now_s = 1700000000;
static int64_t clock_s(void *p)
{
	(void)p;
	return now_s;
}

static tfjob_transport *T;
static tfjob_controller *C;

static void setup(void)
{
	ck_assert_int_eq(tfjob_memory_transport_new(&T, NULL, NULL), 0);
	tfjob_controller_options o = TFJOB_CONTROLLER_OPTIONS_INIT;
	o.clock = clock_s;
	ck_assert_int_eq(tfjob_controller_new(&C, T, &o, NULL), 0);
}

static void teardown(void)
{
	tfjob_controller_free(C);
	tfjob_transport_free(T);
	C = NULL;
	T = NULL;
}

static const tfjob__involved JOB = { "TFJob", "kubeflow.org/v1", "job1", NS, "uid-1", "7" };

static void post(const tfjob__involved *ref, const char *reason, const char *message, int times)
{
	tfjob__event_batch b = { NULL, NULL };
	for (int i = 0; i < times; i++)
		ck_assert_int_eq(tfjob__event_batch_add(&b, ref, "Normal", reason, message), 0);
	tfjob__recorder_post(C->events, &b);
	ck_assert_ptr_null(b.head);
}

/* The stored Events (a new reference). */
static json_t *stored_events(void)
{
	static const tfjob_resource ev = TFJOB_RESOURCE_EVENTS_INIT;
	char *text = NULL;
	ck_assert_int_eq(tfjob_transport_list(&text, T, &ev, NS, NULL, NULL), 0);
	json_t *l = json_loads(text, 0, NULL);
	tfjob_free(text);
	json_t *items = json_incref(json_object_get(l, "items"));
	json_decref(l);
	return items;
}

static void flush(void)
{
	ck_assert_int_eq(tfjob__recorder_wait_empty(C->events, 10000), 0);
}

START_TEST(repeat_becomes_count_patch)
{
	ck_assert_int_eq(tfjob__recorder_start(C->events), 0);
	post(&JOB, "SuccessfulCreatePod", "Created pod: job1-worker-0", 3);
	flush();
	json_t *items = stored_events();
	ck_assert_int_eq(json_array_size(items), 1);
	json_t *e = json_array_get(items, 0);
	ck_assert_int_eq(json_integer_value(json_object_get(e, "count")), 3);
	ck_assert_str_eq(json_string_value(json_object_get(e, "message")), "Created pod: job1-worker-0");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(e, "involvedObject"), "uid")), "uid-1");
	json_decref(items);
	ck_assert_uint_eq(C->m.events_created, 1);
	ck_assert_uint_eq(C->m.events_patched, 2);
	/* another message, type or object is another Event */
	post(&JOB, "SuccessfulCreatePod", "Created pod: job1-worker-1", 1);
	tfjob__involved other = JOB;
	other.name = "job2";
	other.uid = "uid-2";
	post(&other, "SuccessfulCreatePod", "Created pod: job1-worker-0", 1);
	flush();
	items = stored_events();
	ck_assert_int_eq(json_array_size(items), 3);
	json_decref(items);
}
END_TEST

/* The correlator keeps at most 4,096 keys: the least recently used is forgotten first. */
START_TEST(correlator_forgets_least_recent_keys)
{
	ck_assert_int_eq(tfjob__recorder_start(C->events), 0);
	post(&JOB, "SuccessfulCreatePod", "Created pod: job1-worker-0", 1);
	flush();
	enum { OTHERS = 4100 };
	for (int i = 0; i < OTHERS; i++) {
		char name[32], uid[32];
		snprintf(name, sizeof(name), "other-%d", i);
		snprintf(uid, sizeof(uid), "uid-other-%d", i);
		tfjob__involved other = JOB;
		other.name = name;
		other.uid = uid;
		post(&other, "SuccessfulCreatePod", "Created pod: x", 1);
		if (i % 500 == 499)
			flush();
	}
	flush();
	ck_assert_uint_eq(C->m.events_created, 1 + OTHERS);
	/* the first key was evicted: a new Event, not a PATCH; then it is known again */
	post(&JOB, "SuccessfulCreatePod", "Created pod: job1-worker-0", 1);
	flush();
	ck_assert_uint_eq(C->m.events_created, 2 + OTHERS);
	ck_assert_uint_eq(C->m.events_patched, 0);
	post(&JOB, "SuccessfulCreatePod", "Created pod: job1-worker-0", 1);
	flush();
	ck_assert_uint_eq(C->m.events_patched, 1);
}
END_TEST

START_TEST(similar_events_are_combined)
{
	ck_assert_int_eq(tfjob__recorder_start(C->events), 0);
	char msg[64];
	for (int i = 0; i < 12; i++) {
		snprintf(msg, sizeof(msg), "Created pod: job1-worker-%d", i);
		post(&JOB, "SuccessfulCreatePod", msg, 1);
	}
	flush();
	json_t *items = stored_events();
	/* 9 distinct messages as they are; the 10th and later as one combined Event, counted */
	ck_assert_int_eq(json_array_size(items), 10);
	int combined = 0;
	size_t i;
	json_t *e;
	json_array_foreach(items, i, e) {
		const char *m = json_string_value(json_object_get(e, "message"));
		if (!strncmp(m, "(combined from similar events): ", 32)) {
			combined++;
			ck_assert_int_eq(json_integer_value(json_object_get(e, "count")), 3);
			ck_assert_str_eq(m, "(combined from similar events): Created pod: job1-worker-11");
		}
	}
	ck_assert_int_eq(combined, 1);
	json_decref(items);
	/* ten minutes later the messages count afresh */
	now_s += 601;
	post(&JOB, "SuccessfulCreatePod", "Created pod: job1-worker-20", 1);
	flush();
	items = stored_events();
	ck_assert_int_eq(json_array_size(items), 11);
	json_decref(items);
	now_s -= 601;
}
END_TEST

START_TEST(spam_filter_drops_and_counts)
{
	ck_assert_int_eq(tfjob__recorder_start(C->events), 0);
	post(&JOB, "Restarting", "again", 30);
	flush();
	ck_assert_uint_eq(C->m.events_created + C->m.events_patched, 25);
	ck_assert_uint_eq(C->m.events_filtered, 5);
	/* five minutes refill one token */
	now_s += 300;
	post(&JOB, "Restarting", "again", 2);
	flush();
	ck_assert_uint_eq(C->m.events_created + C->m.events_patched, 26);
	ck_assert_uint_eq(C->m.events_filtered, 6);
	json_t *items = stored_events();
	ck_assert_int_eq(json_integer_value(json_object_get(json_array_get(items, 0), "count")), 26);
	json_decref(items);
	char *text = NULL;
	ck_assert_int_eq(tfjob_controller_metrics_text(&text, C, NULL), 0);
	ck_assert_ptr_nonnull(strstr(text, "tfjob_controller_events_total{result=\"filtered\"} 6\n"));
	ck_assert_ptr_nonnull(strstr(text, "tfjob_controller_events_total{result=\"patched\"} 25\n"));
	tfjob_free(text);
	now_s -= 300;
}
END_TEST

START_TEST(full_queue_drops_and_counts)
{
	/* not started: nothing leaves the queue */
	char msg[64];
	tfjob__event_batch b = { NULL, NULL };
	for (int i = 0; i < 1200; i++) {
		tfjob__involved ref = JOB;
		snprintf(msg, sizeof(msg), "job%d", i);
		ref.name = msg;
		ck_assert_int_eq(tfjob__event_batch_add(&b, &ref, "Warning", "Failed", "boom"), 0);
	}
	tfjob__recorder_post(C->events, &b);
	ck_assert_uint_eq(C->m.events_dropped, 200);
	/* started and stopped at once with no time to flush: the rest is dropped, counted */
	ck_assert_int_eq(tfjob__recorder_start(C->events), 0);
	tfjob__recorder_stop(C->events, 0);
	ck_assert_uint_eq(C->m.events_created + C->m.events_dropped, 1200);
	ck_assert_uint_gt(C->m.events_dropped, 200);
	/* a stopped recorder takes nothing more */
	post(&JOB, "Failed", "late", 1);
	ck_assert_uint_eq(C->m.events_created + C->m.events_dropped, 1201);
}
END_TEST

START_TEST(stop_flushes_within_bound)
{
	ck_assert_int_eq(tfjob__recorder_start(C->events), 0);
	char msg[64];
	for (int i = 0; i < 40; i++) {
		tfjob__involved ref = JOB;
		snprintf(msg, sizeof(msg), "job%d", i);
		ref.name = msg;
		post(&ref, "SuccessfulCreatePod", "Created", 1);
	}
	tfjob__recorder_stop(C->events, 10000);
	ck_assert_uint_eq(C->m.events_created, 40);
	ck_assert_uint_eq(C->m.events_dropped, 0);
	json_t *items = stored_events();
	ck_assert_int_eq(json_array_size(items), 40);
	json_decref(items);
}
END_TEST

START_TEST(patch_of_a_deleted_event_creates_it_again)
{
	static const tfjob_resource ev = TFJOB_RESOURCE_EVENTS_INIT;
	ck_assert_int_eq(tfjob__recorder_start(C->events), 0);
	post(&JOB, "SuccessfulCreatePod", "Created pod: a", 1);
	flush();
	json_t *items = stored_events();
	const char *name = json_string_value(json_object_get(json_object_get(json_array_get(items, 0), "metadata"), "name"));
	ck_assert_int_eq(tfjob_transport_delete(NULL, T, &ev, NS, name, NULL, NULL), 0);
	json_decref(items);
	post(&JOB, "SuccessfulCreatePod", "Created pod: a", 1);
	flush();
	items = stored_events();
	ck_assert_int_eq(json_array_size(items), 1);
	json_decref(items);
	ck_assert_uint_eq(C->m.events_created, 2);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("events");
	TCase *tc = tcase_create("recorder");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, repeat_becomes_count_patch);
	tcase_add_test(tc, correlator_forgets_least_recent_keys);
	tcase_add_test(tc, similar_events_are_combined);
	tcase_add_test(tc, spam_filter_drops_and_counts);
	tcase_add_test(tc, full_queue_drops_and_counts);
	tcase_add_test(tc, stop_flushes_within_bound);
	tcase_add_test(tc, patch_of_a_deleted_event_creates_it_again);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run_global(suite());
}
