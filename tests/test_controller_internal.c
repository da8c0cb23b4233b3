/*
 * The controller's internals: work queue (dedup, processing, backoff, delayed adds, rate limit,
 * requeue count), expectations, object stores.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdlib.h>
#include <string.h>

#include "controller/internal.h"
#include "testutil.h"

static int64_t fake_ms;
static int64_t fake_clock(void *p)
{
	(void)p;
	return fake_ms;
}

static tfjob__queue *new_queue(double qps, int burst)
{
	tfjob__queue_opts o = { 0, 0, qps, burst, fake_clock, NULL };
	tfjob__queue *q = NULL;
	ck_assert_int_eq(tfjob__queue_new(&q, &o), 0);
	return q;
}

static char *get(tfjob__queue *q)
{
	char *k = NULL;
	int rc = tfjob__queue_get(q, &k, 0);
	return rc ? NULL : k;
}

START_TEST(queue_dedup_and_processing)
{
	fake_ms = 0;
	tfjob__queue *q = new_queue(10, 100);
	tfjob__queue_add(q, "a/x");
	tfjob__queue_add(q, "a/y");
	tfjob__queue_add(q, "a/x");
	ck_assert_uint_eq(tfjob__queue_len(q), 2);
	char *k = get(q);
	ck_assert_str_eq(k, "a/x");
	/* re-added while processing: not handed to a second worker */
	tfjob__queue_add(q, "a/x");
	char *k2 = get(q);
	ck_assert_str_eq(k2, "a/y");
	ck_assert_ptr_null(get(q));
	tfjob__queue_done(q, "a/x"); /* now it comes back */
	char *k3 = get(q);
	ck_assert_str_eq(k3, "a/x");
	tfjob__queue_done(q, "a/x");
	tfjob__queue_done(q, "a/y");
	ck_assert_ptr_null(get(q));
	ck_assert_int_eq(tfjob__queue_wait_empty(q, 0), 0);
	free(k);
	free(k2);
	free(k3);
	tfjob__queue_shutdown(q);
	char *none = NULL;
	ck_assert_int_eq(tfjob__queue_get(q, &none, -1), TFJOB_ESTATE);
	tfjob__queue_free(q);
}
END_TEST

START_TEST(queue_delayed_adds)
{
	fake_ms = 1000;
	tfjob__queue *q = new_queue(10, 100);
	tfjob__queue_add_after(q, "k", 500);
	tfjob__queue_add_after(q, "k", 200); /* the earlier time wins */
	ck_assert_uint_eq(tfjob__queue_waiting(q), 1);
	ck_assert_ptr_null(get(q));
	fake_ms = 1199;
	ck_assert_ptr_null(get(q));
	fake_ms = 1200;
	char *k = get(q);
	ck_assert_str_eq(k, "k");
	free(k);
	ck_assert_uint_eq(tfjob__queue_waiting(q), 0);
	tfjob__queue_done(q, "k");
	tfjob__queue_add_after(q, "z", 0); /* no delay: at once */
	k = get(q);
	ck_assert_str_eq(k, "z");
	free(k);
	tfjob__queue_free(q);
}
END_TEST

START_TEST(queue_backoff_and_requeues)
{
	fake_ms = 0;
	tfjob__queue *q = new_queue(-1, 100); /* no bucket: per-item backoff only */
	int64_t expect[] = { 5, 10, 20, 40, 80, 160 };
	for (size_t i = 0; i < 6; i++) {
		ck_assert_int_eq(tfjob__queue_add_rate_limited(q, "j"), expect[i]);
		ck_assert_int_eq(tfjob__queue_num_requeues(q, "j"), (int64_t)i + 1);
	}
	ck_assert_int_eq(tfjob__queue_num_requeues(q, "other"), 0);
	for (int i = 0; i < 40; i++)
		tfjob__queue_add_rate_limited(q, "j");
	ck_assert_int_eq(tfjob__queue_add_rate_limited(q, "j"), 1000 * 1000); /* capped at 1000 s */
	tfjob__queue_forget(q, "j");
	ck_assert_int_eq(tfjob__queue_num_requeues(q, "j"), 0);
	ck_assert_int_eq(tfjob__queue_add_rate_limited(q, "j"), 5);
	tfjob__queue_free(q);
}
END_TEST

START_TEST(queue_global_rate_limit)
{
	fake_ms = 0;
	tfjob__queue *q = new_queue(10, 100);
	/* 100 distinct keys use the burst (each 5 ms: its own first backoff) */
	char key[32];
	for (int i = 0; i < 100; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		ck_assert_int_eq(tfjob__queue_add_rate_limited(q, key), 5);
	}
	/* then 10 per second: 100 ms, 200 ms, ... */
	ck_assert_int_eq(tfjob__queue_add_rate_limited(q, "x1"), 100);
	ck_assert_int_eq(tfjob__queue_add_rate_limited(q, "x2"), 200);
	fake_ms = 1000; /* 10 tokens back: debt of 2 repaid, 8 left */
	for (int i = 0; i < 8; i++) {
		snprintf(key, sizeof(key), "y%d", i);
		ck_assert_int_eq(tfjob__queue_add_rate_limited(q, key), 5);
	}
	ck_assert_int_eq(tfjob__queue_add_rate_limited(q, "z"), 100);
	tfjob__queue_free(q);
}
END_TEST

START_TEST(queue_blocking_get_wakes)
{
	tfjob__queue_opts o = { 0, 0, 0, 0, NULL, NULL };
	tfjob__queue *q = NULL;
	ck_assert_int_eq(tfjob__queue_new(&q, &o), 0);
	tfjob__queue_add_after(q, "later", 30);
	char *k = NULL;
	int64_t t0 = tfjob__mono_ms(NULL);
	ck_assert_int_eq(tfjob__queue_get(q, &k, 2000), 0);
	ck_assert_str_eq(k, "later");
	ck_assert_int_ge(tfjob__mono_ms(NULL) - t0, 29);
	free(k);
	ck_assert_int_eq(tfjob__queue_get(q, &k, 10), TFJOB_ETIMEOUT);
	tfjob__queue_free(q);
}
END_TEST

START_TEST(expectations)
{
	fake_ms = 0;
	tfjob__expectations *e = NULL;
	ck_assert_int_eq(tfjob__exp_new(&e, 300000, fake_clock, NULL), 0);
	ck_assert(tfjob__exp_satisfied(e, "ns/j"));
	tfjob__exp_expect(e, "ns/j", "worker/pods", 2, 0);
	tfjob__exp_expect(e, "ns/j", "worker/services", 0, 1);
	ck_assert(!tfjob__exp_satisfied(e, "ns/j"));
	ck_assert(tfjob__exp_satisfied(e, "ns/other"));
	tfjob__exp_observed(e, "ns/j", "worker/pods", 1, 0);
	ck_assert(!tfjob__exp_satisfied(e, "ns/j"));
	tfjob__exp_observed(e, "ns/j", "worker/pods", 1, 0);
	tfjob__exp_observed(e, "ns/j", "worker/services", 0, 1);
	ck_assert(tfjob__exp_satisfied(e, "ns/j"));
	/* expiry after 5 minutes */
	tfjob__exp_expect(e, "ns/j", "ps/pods", 1, 0);
	fake_ms = 299999;
	ck_assert(!tfjob__exp_satisfied(e, "ns/j"));
	fake_ms = 300000;
	ck_assert(tfjob__exp_satisfied(e, "ns/j"));
	/* deleted with its job */
	tfjob__exp_expect(e, "ns/k", "ps/pods", 1, 0);
	tfjob__exp_delete(e, "ns/k");
	ck_assert(tfjob__exp_satisfied(e, "ns/k"));
	tfjob__exp_free(e);
}
END_TEST

static json_t *pod(const char *name, const char *rv, const char *owner_uid, const char *job_label)
{
	json_t *p = json_pack("{s:{s:s,s:s,s:s,s:{}}}", "metadata", "name", name, "namespace", "ns", "resourceVersion", rv,
	                      "labels");
	if (job_label)
		json_object_set_new(json_object_get(json_object_get(p, "metadata"), "labels"),
		                    "training.kubeflow.org/job-name", json_string(job_label));
	if (owner_uid)
		json_object_set_new(json_object_get(p, "metadata"), "ownerReferences",
		                    json_pack("[{s:s,s:s,s:s,s:b}]", "kind", "TFJob", "name", "j", "uid", owner_uid,
		                              "controller", 1));
	return p;
}

START_TEST(store_index_and_versions)
{
	tfjob__store s;
	tfjob__store_init(&s, 1);
	ck_assert_int_eq(tfjob__store_put(&s, pod("a", "5", "U1", "j")), 0);
	ck_assert_int_eq(tfjob__store_put(&s, pod("b", "6", "U1", "j")), 0);
	ck_assert_int_eq(tfjob__store_put(&s, pod("c", "7", NULL, "j")), 0);
	ck_assert_int_eq(tfjob__store_put(&s, pod("d", "8", NULL, NULL)), 0);
	json_t *kids = tfjob__store_children(&s, "uid:U1");
	ck_assert_uint_eq(json_array_size(kids), 2);
	json_decref(kids);
	kids = tfjob__store_children(&s, "orphan:ns/j");
	ck_assert_uint_eq(json_array_size(kids), 1);
	json_decref(kids);
	/* an older version does not replace a newer one */
	ck_assert_int_eq(tfjob__store_put(&s, pod("a", "4", NULL, "j")), 1);
	/* adoption moves c between indexes */
	ck_assert_int_eq(tfjob__store_put(&s, pod("c", "9", "U1", "j")), 0);
	kids = tfjob__store_children(&s, "uid:U1");
	ck_assert_uint_eq(json_array_size(kids), 3);
	json_decref(kids);
	kids = tfjob__store_children(&s, "orphan:ns/j");
	ck_assert_uint_eq(json_array_size(kids), 0);
	json_decref(kids);
	json_t *key = pod("b", "0", NULL, NULL);
	json_decref(tfjob__store_del(&s, key));
	json_decref(key);
	kids = tfjob__store_children(&s, "uid:U1");
	ck_assert_uint_eq(json_array_size(kids), 2);
	json_decref(kids);
	tfjob__store_clear(&s);
}
END_TEST

START_TEST(map_basics)
{
	tfjob__map m = { 0 };
	char key[32];
	for (int i = 0; i < 1000; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		ck_assert_int_eq(tfjob__map_put(&m, key, (void *)(intptr_t)(i + 1), NULL), 0);
	}
	ck_assert_uint_eq(m.len, 1000);
	ck_assert_ptr_eq(tfjob__map_get(&m, "k500"), (void *)(intptr_t)501);
	ck_assert_ptr_eq(tfjob__map_del(&m, "k500"), (void *)(intptr_t)501);
	ck_assert_ptr_null(tfjob__map_get(&m, "k500"));
	size_t n = 0, b = 0;
	for (tfjob__map_node *it = tfjob__map_next(&m, &b, NULL); it; it = tfjob__map_next(&m, &b, it))
		n++;
	ck_assert_uint_eq(n, 999);
	tfjob__map_clear(&m, NULL);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("controller_internal");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, queue_dedup_and_processing);
	tcase_add_test(tc, queue_delayed_adds);
	tcase_add_test(tc, queue_backoff_and_requeues);
	tcase_add_test(tc, queue_global_rate_limit);
	tcase_add_test(tc, queue_blocking_get_wakes);
	tcase_add_test(tc, expectations);
	tcase_add_test(tc, store_index_and_versions);
	tcase_add_test(tc, map_basics);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run(suite());
}
