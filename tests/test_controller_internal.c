/*
 * The controller's internals: work queue (dedup, processing, backoff, delayed adds, rate limit,
 * requeue count), expectations, object stores.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	int64_t t0 = tfjob__monotonic_ms(); /* before the add: the delay counts from it */
	tfjob__queue_add_after(q, "later", 30);
	char *k = NULL;
	ck_assert_int_eq(tfjob__queue_get(q, &k, 2000), 0);
	ck_assert_str_eq(k, "later");
	ck_assert_int_ge(tfjob__monotonic_ms() - t0, 29);
	free(k);
	ck_assert_int_eq(tfjob__queue_get(q, &k, 10), TFJOB_ETIMEOUT);
	tfjob__queue_free(q);
}
END_TEST

struct getter {
	tfjob__queue *q;
	char *key;
	int64_t got_ms;
};

static void *get_blocking(void *arg)
{
	struct getter *g = arg;
	if (tfjob__queue_get(g->q, &g->key, -1) == 0)
		g->got_ms = tfjob__monotonic_ms();
	return NULL;
}

/* A worker asleep until a far item is due takes a nearer one added meanwhile when it is due: the
   add wakes it (a waiting worker has no periodic wake-up to fall back on). */
START_TEST(queue_sleeper_takes_nearer_item)
{
	tfjob__queue_opts o = { 0, 0, 0, 0, NULL, NULL };
	struct getter g = { NULL, NULL, 0 };
	ck_assert_int_eq(tfjob__queue_new(&g.q, &o), 0);
	tfjob__queue_add_after(g.q, "far", 60 * 1000);
	pthread_t th;
	ck_assert_int_eq(pthread_create(&th, NULL, get_blocking, &g), 0);
	usleep(100 * 1000); /* the getter is asleep by now */
	int64_t t0 = tfjob__monotonic_ms();
	tfjob__queue_add_after(g.q, "near", 50);
	pthread_join(th, NULL);
	ck_assert_str_eq(g.key, "near");
	ck_assert_int_ge(g.got_ms - t0, 49);
	ck_assert_int_lt(g.got_ms - t0, 900);
	free(g.key);
	tfjob__queue_free(g.q);
}
END_TEST

/* The reflector sleeps until an informer says it is due: a retry at its time, the one-second mark
   of a resumed stream (counted connected, failures forgotten), else never (its stream's end wakes
   the reflector). */
START_TEST(informer_next_due)
{
	tfjob__informer inf;
	memset(&inf, 0, sizeof(inf));
	ck_assert_int_eq(tfjob__informer_tick(&inf, 0), INT64_MAX); /* not enabled */
	inf.enabled = 1;
	inf.watch_open = 1;
	inf.watch_started_ms = 5000;
	inf.failures = 2;
	ck_assert_int_eq(tfjob__informer_tick(&inf, 5200), 6000);
	ck_assert_int_eq(inf.connected, 0);
	ck_assert_int_eq(tfjob__informer_tick(&inf, 6000), INT64_MAX);
	ck_assert_int_eq(inf.connected, 1);
	ck_assert_int_eq(inf.failures, 0);
	inf.need_rewatch = 1; /* its stream broke: retried at next_try_ms */
	inf.watch_open = 0;
	inf.next_try_ms = 9000;
	ck_assert_int_eq(tfjob__informer_tick(&inf, 8000), 9000);
	inf.need_rewatch = 0;
	inf.need_relist = 1;
	ck_assert_int_eq(tfjob__informer_tick(&inf, 8999), 9000);
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

static void put(tfjob__child_store *s, json_t *obj, int want)
{
	tfjob__child *ch = NULL;
	ck_assert_int_eq(tfjob__child_new(&ch, obj), 0);
	json_decref(obj);
	ck_assert_int_eq(tfjob__child_store_put(s, ch), want);
}

static size_t count_children(tfjob__child_store *s, const char *owner)
{
	tfjob__child **kids = NULL;
	size_t n = tfjob__child_store_children(s, owner, &kids);
	ck_assert_ptr_nonnull(kids);
	tfjob__children_free(kids, n);
	return n;
}

START_TEST(store_index_and_versions)
{
	tfjob__child_store s;
	tfjob__child_store_init(&s);
	put(&s, pod("a", "5", "U1", "j"), 0);
	put(&s, pod("b", "6", "U1", "j"), 0);
	put(&s, pod("c", "7", NULL, "j"), 0);
	put(&s, pod("d", "8", NULL, NULL), 0);
	ck_assert_uint_eq(count_children(&s, "uid:U1"), 2);
	ck_assert_uint_eq(count_children(&s, "orphan:ns/j"), 1);
	/* an older version does not replace a newer one */
	put(&s, pod("a", "4", NULL, "j"), 1);
	/* adoption moves c between indexes */
	put(&s, pod("c", "9", "U1", "j"), 0);
	ck_assert_uint_eq(count_children(&s, "uid:U1"), 3);
	ck_assert_uint_eq(count_children(&s, "orphan:ns/j"), 0);
	size_t before = s.bytes;
	tfjob__child *b = tfjob__child_store_del(&s, "ns/b");
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(s.bytes, before - b->bytes);
	tfjob__child_unref(b);
	ck_assert_uint_eq(count_children(&s, "uid:U1"), 2);
	tfjob__child_store_clear(&s);
	ck_assert_uint_eq(s.bytes, 0);
}
END_TEST

/* TFJobs and PodGroups are kept as text and parsed when read; versions are respected. */
START_TEST(store_keeps_text)
{
	tfjob__store s;
	tfjob__store_init(&s);
	json_t *job = json_pack("{s:{s:s,s:s,s:s},s:{s:[i,i]}}", "metadata", "name", "j", "namespace", "ns",
	                        "resourceVersion", "7", "spec", "x", 1, 2);
	ck_assert_int_eq(tfjob__store_put(&s, json_incref(job)), 0);
	json_t *got = tfjob__store_get(&s, "ns/j");
	ck_assert(json_equal(got, job));
	json_decref(got);
	char *text = tfjob__store_text(&s, "ns/j");
	ck_assert_str_eq(text, "{\"metadata\":{\"name\":\"j\",\"namespace\":\"ns\",\"resourceVersion\":\"7\"},"
	                       "\"spec\":{\"x\":[1,2]}}");
	free(text);
	ck_assert_uint_gt(s.bytes, 0);
	/* an older version does not replace it; a newer one does */
	json_t *older = json_deep_copy(job);
	json_object_set_new(json_object_get(older, "metadata"), "resourceVersion", json_string("6"));
	ck_assert_int_eq(tfjob__store_put(&s, older), 1);
	json_t *newer = json_deep_copy(job);
	json_object_set_new(json_object_get(newer, "metadata"), "resourceVersion", json_string("8"));
	ck_assert_int_eq(tfjob__store_put(&s, json_incref(newer)), 0);
	got = tfjob__store_get(&s, "ns/j");
	ck_assert(json_equal(got, newer));
	json_decref(got);
	ck_assert_ptr_null(tfjob__store_get(&s, "ns/other"));
	ck_assert_int_eq(tfjob__store_put(&s, json_pack("{s:{}}", "metadata")), TFJOB_EINVAL);
	json_t *removed = NULL;
	ck_assert_int_eq(tfjob__store_del(&s, job, &removed), 1);
	ck_assert(json_equal(removed, newer));
	json_decref(removed);
	ck_assert_int_eq(tfjob__store_del(&s, job, &removed), 0);
	ck_assert_ptr_null(removed);
	ck_assert_uint_eq(s.bytes, 0);
	ck_assert_ptr_null(tfjob__store_get(&s, "ns/j"));
	json_decref(newer);
	json_decref(job);
	tfjob__store_clear(&s);
}
END_TEST

/* A job's watch text is stored as it came, without managedFields wherever they stand; texts the
   scan cannot take (escapes, not JSON) are left to the parse. */
static char *stored_text(const char *text, const char *want_key)
{
	tfjob__store s;
	tfjob__store_init(&s);
	char *key = NULL;
	tfjob__stored *so = tfjob__stored_from_text(text, &key);
	if (!so) {
		ck_assert_ptr_null(key);
		return NULL;
	}
	ck_assert_str_eq(key, want_key);
	ck_assert_int_eq(tfjob__store_put_stored(&s, key, so), 0);
	char *out = tfjob__store_text(&s, want_key);
	json_t *parsed = tfjob__store_get(&s, want_key);
	ck_assert_ptr_nonnull(parsed); /* still JSON */
	json_decref(parsed);
	tfjob__store_clear(&s);
	return out;
}

START_TEST(store_takes_text_without_managed_fields)
{
	const char *mf = "\"managedFields\":[{\"manager\":\"m\",\"note\":\"],}\"}]";
	char text[512], *got;
	snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"j\",%s,\"namespace\":\"ns\",\"resourceVersion\":\"7\"},\"spec\":{}}", mf);
	got = stored_text(text, "ns/j");
	ck_assert_str_eq(got, "{\"metadata\":{\"name\":\"j\",\"namespace\":\"ns\",\"resourceVersion\":\"7\"},\"spec\":{}}");
	free(got);
	snprintf(text, sizeof(text), "{\"metadata\":{\"name\":\"j\" , %s }, \"spec\":{}}", mf); /* last, spaces */
	got = stored_text(text, "/j");
	ck_assert_str_eq(got, "{\"metadata\":{\"name\":\"j\" }, \"spec\":{}}");
	free(got);
	snprintf(text, sizeof(text), "{\"metadata\":{%s}}", mf); /* alone: no name */
	ck_assert_ptr_null(stored_text(text, "/"));
	snprintf(text, sizeof(text), "{\"metadata\":{%s,\"name\":\"j\"}}", mf); /* first */
	got = stored_text(text, "/j");
	ck_assert_str_eq(got, "{\"metadata\":{\"name\":\"j\"}}");
	free(got);
	got = stored_text("{\"spec\":{\"managedFields\":1},\"metadata\":{\"name\":\"j\"}}", "/j"); /* not metadata's: kept */
	ck_assert_str_eq(got, "{\"spec\":{\"managedFields\":1},\"metadata\":{\"name\":\"j\"}}");
	free(got);
	ck_assert_ptr_null(stored_text("{\"metadata\":{\"name\":\"a\\u0062\"}}", "/ab"));
	ck_assert_ptr_null(stored_text("{\"metadata\":{\"name\":\"j\",\"resourceVersion\":\"\\u0037\"}}", "/j"));
	ck_assert_ptr_null(stored_text("{\"metadata\":{\"name\":\"j\"},\"x\":tru}", "/j"));
	ck_assert_ptr_null(stored_text("{\"metadata\":[]}", "/j"));
	/* versions: an older text does not replace a newer one */
	tfjob__store s;
	tfjob__store_init(&s);
	char *key;
	tfjob__stored *so = tfjob__stored_from_text("{\"metadata\":{\"name\":\"j\",\"resourceVersion\":\"8\"}}", &key);
	ck_assert_str_eq(tfjob__stored_rv(so), "8");
	ck_assert_int_eq(tfjob__store_put_stored(&s, key, so), 0);
	so = tfjob__stored_from_text("{\"metadata\":{\"name\":\"j\",\"resourceVersion\":\"7\"},\"old\":1}", &key);
	ck_assert_int_eq(tfjob__store_put_stored(&s, key, so), 1);
	got = tfjob__store_text(&s, "/j");
	ck_assert_str_eq(got, "{\"metadata\":{\"name\":\"j\",\"resourceVersion\":\"8\"}}");
	free(got);
	tfjob__store_clear(&s);
	ck_assert_uint_eq(s.bytes, 0);
}
END_TEST

/* A pod of a large job: its spec (the whole TF_CONFIG) is not kept; what the planner reads is. */
START_TEST(child_is_compact)
{
	json_t *p = pod("w-0", "11", "U1", "j");
	json_t *labels = json_object_get(json_object_get(p, "metadata"), "labels");
	json_object_set_new(labels, "training.kubeflow.org/replica-type", json_string("worker"));
	json_object_set_new(labels, "training.kubeflow.org/replica-index", json_string("0"));
	json_object_set_new(labels, "training.kubeflow.org/operator-name", json_string("tfjob-controller"));
	json_object_set_new(json_object_get(p, "metadata"), "uid", json_string("pod-uid"));
	char *big = malloc(200001);
	memset(big, 'x', 200000);
	big[200000] = '\0';
	json_object_set_new(p, "spec", json_pack("{s:[{s:s,s:[{s:s,s:s}]}]}", "containers", "name", "tensorflow", "env",
	                                         "name", "TF_CONFIG", "value", big));
	free(big);
	json_object_set_new(p, "status", json_pack("{s:s,s:[{s:s,s:i,s:{s:{s:s,s:s}},s:s,s:s}]}", "phase", "Pending",
	                                           "containerStatuses", "name", "tensorflow", "restartCount", 2, "state",
	                                           "waiting", "reason", "ImagePullBackOff", "message", "no such image",
	                                           "image", "tf:latest", "imageID", "sha256:abc"));
	tfjob__child *ch = NULL;
	ck_assert_int_eq(tfjob__child_new(&ch, p), 0);
	json_decref(p);
	ck_assert_uint_lt(ch->bytes, 2048);
	ck_assert_str_eq(ch->key, "ns/w-0");
	ck_assert_str_eq(ch->uid, "pod-uid");
	ck_assert_str_eq(ch->rv, "11");
	ck_assert_str_eq(ch->sum.operator_name, "tfjob-controller");
	ck_assert_str_eq(ch->ctrl_uid, "U1");
	ck_assert_str_eq(ch->ctrl_name, "j");
	ck_assert_ptr_nonnull(strstr(ch->sum.owner_refs, "\"uid\":\"U1\""));
	ck_assert_str_eq(ch->sum.name, "w-0");
	ck_assert_str_eq(ch->sum.rtype, "worker");
	ck_assert_int_eq(ch->sum.index, 0);
	ck_assert_int_eq(ch->sum.restarts, 2);
	ck_assert(ch->sum.maybe_abnormal);
	/* what RecordAbnormalPods reads is kept, the rest of the status is not */
	json_t *cs = json_array_get(json_object_get(json_object_get(ch->sum.obj, "status"), "containerStatuses"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(cs, "state"), "waiting"),
	                                                   "message")), "no such image");
	ck_assert_ptr_null(json_object_get(cs, "image"));
	char buf[128];
	ck_assert_str_eq(tfjob__child_owner_key(buf, sizeof(buf), ch), "uid:U1");
	tfjob__child_unref(ch);
	/* finished pods keep no status at all */
	p = pod("w-1", "12", NULL, "j");
	json_object_set_new(p, "status", json_pack("{s:s,s:[{s:s,s:{s:{s:i}}}]}", "phase", "Succeeded",
	                                           "containerStatuses", "name", "tensorflow", "state", "terminated",
	                                           "exitCode", 0));
	ck_assert_int_eq(tfjob__child_new(&ch, p), 0);
	json_decref(p);
	ck_assert_ptr_null(ch->sum.obj);
	ck_assert(ch->sum.exit_found);
	ck_assert_str_eq(tfjob__child_owner_key(buf, sizeof(buf), ch), "orphan:ns/j");
	tfjob__child_unref(ch);
}
END_TEST

/* Watch events of children are parsed without their spec; anything else as it is. */
START_TEST(child_loads_without_spec)
{
	const char *big = "{\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\",\"labels\":{\"a\":\"}{\"}},"
	                  " \"spec\" : {\"containers\":[{\"name\":\"tensorflow\",\"env\":[{\"name\":\"TF_CONFIG\","
	                  "\"value\":\"{\\\"cluster\\\":{\\\"worker\\\":[\\\"a:2222\\\"]}} ]\"}]}]},"
	                  "\"status\":{\"phase\":\"Running\"}}";
	json_t *o = tfjob__child_loads(big);
	ck_assert_ptr_nonnull(o);
	ck_assert(json_is_null(json_object_get(o, "spec")));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "status"), "phase")), "Running");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(o, "metadata"), "labels"), "a")),
	                 "}{");
	json_decref(o);
	/* a small spec, none, or text that is not a plain object: parsed whole */
	o = tfjob__child_loads("{\"spec\":{\"x\":1},\"status\":{}}");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(o, "spec"), "x")), 1);
	json_decref(o);
	o = tfjob__child_loads("{\"metadata\":{\"name\":\"s\"}}");
	ck_assert_ptr_nonnull(o);
	json_decref(o);
	ck_assert_ptr_null(tfjob__child_loads("{\"spec\":{\"containers\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["));
	ck_assert_ptr_null(tfjob__child_loads("[1,2"));
}
END_TEST

/* Objects are parsed without metadata.managedFields; everything else is kept. */
START_TEST(object_loads_without_managed_fields)
{
	const char *job = "{\"metadata\":{\"name\":\"j\",\"managedFields\":[{\"manager\":\"x\",\"fieldsV1\":"
	                  "{\"f:status\":{\"f:conditions\":{}}},\"note\":\"]}\"}],\"labels\":{\"a\":\"b\"}},"
	                  "\"spec\":{\"x\":1},\"status\":{\"phase\":\"Running\"}}";
	json_t *o = tfjob__object_loads(job);
	json_t *md = json_object_get(o, "metadata");
	ck_assert_ptr_null(json_object_get(md, "managedFields"));
	ck_assert_str_eq(json_string_value(json_object_get(md, "name")), "j");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(md, "labels"), "a")), "b");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(o, "spec"), "x")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "status"), "phase")), "Running");
	json_decref(o);
	/* a "managedFields" outside metadata is data: kept */
	o = tfjob__object_loads("{\"spec\":{\"managedFields\":1},\"metadata\":{\"name\":\"j\"}}");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(o, "spec"), "managedFields")), 1);
	json_decref(o);
	ck_assert_ptr_null(tfjob__object_loads("{\"metadata\":{\"managedFields\":[1,2}}"));
	ck_assert_ptr_null(tfjob__object_loads("not json"));
	/* a child loses both its spec and its managedFields */
	o = tfjob__child_loads("{\"metadata\":{\"name\":\"p\",\"managedFields\":[{\"manager\":\"m\"}]},"
	                       "\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"a-long-image-name:1.2.3\"}]},"
	                       "\"status\":{\"phase\":\"Running\"}}");
	ck_assert(json_is_null(json_object_get(o, "spec")));
	ck_assert_ptr_null(json_object_get(json_object_get(o, "metadata"), "managedFields"));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "metadata"), "name")), "p");
	json_decref(o);
	/* the same with the spec first, and the rest kept around both cuts */
	o = tfjob__child_loads("{\"kind\":\"Pod\",\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"a-long-image:1.2.3\"}]},"
	                       "\"metadata\":{\"name\":\"q\",\"managedFields\":[{\"manager\":\"m\"}],\"uid\":\"u\"},"
	                       "\"status\":{\"phase\":\"Failed\"}}");
	ck_assert_ptr_nonnull(o);
	ck_assert(json_is_null(json_object_get(o, "spec")));
	ck_assert_ptr_null(json_object_get(json_object_get(o, "metadata"), "managedFields"));
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "metadata"), "uid")), "u");
	ck_assert_str_eq(json_string_value(json_object_get(o, "kind")), "Pod");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(o, "status"), "phase")), "Failed");
	json_decref(o);
}
END_TEST

static int collect_names(json_t *item, void *payload)
{
	json_t *names = payload;
	json_array_append_new(names, json_string(json_string_value(json_object_get(json_object_get(item, "metadata"),
	                                                                               "name"))));
	ck_assert(json_is_null(json_object_get(item, "spec")) || !json_object_get(item, "spec"));
	return 0;
}

/* Lists are read item by item, each item without its spec; the List's metadata is returned. */
START_TEST(list_parse_items_one_by_one)
{
	const char *list = " {\"kind\":\"PodList\",\"items\" : [ {\"metadata\":{\"name\":\"a\"},\"spec\":{\"x\":"
	                   "\"0123456789012345678901234567890123456789012345678901234567890123456789\"}} ,"
	                   "{\"metadata\":{\"name\":\"b]\"}} ],\"metadata\":{\"resourceVersion\":\"42\",\"continue\":\"c\"}}";
	json_t *names = json_array(), *meta = NULL;
	ck_assert_int_eq(tfjob__list_parse(list, 1, &meta, collect_names, names), 0);
	ck_assert_int_eq(json_array_size(names), 2);
	ck_assert_str_eq(json_string_value(json_array_get(names, 1)), "b]");
	ck_assert_str_eq(json_string_value(json_object_get(meta, "resourceVersion")), "42");
	json_decref(meta);
	json_array_clear(names);
	ck_assert_int_eq(tfjob__list_parse("{\"items\":[]}", 1, &meta, collect_names, names), 0);
	ck_assert_ptr_null(meta);
	ck_assert_int_eq(tfjob__list_parse("{\"items\":[{\"a\":1},", 1, &meta, collect_names, names), TFJOB_EPARSE);
	ck_assert_int_eq(tfjob__list_parse("{\"items\":[{\"a\":}]}", 1, &meta, collect_names, names), TFJOB_EPARSE);
	ck_assert_int_eq(tfjob__list_parse("[]", 1, &meta, collect_names, names), TFJOB_EPARSE);
	ck_assert_ptr_null(meta);
	json_decref(names);
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
	tcase_add_test(tc, queue_sleeper_takes_nearer_item);
	tcase_add_test(tc, informer_next_due);
	tcase_add_test(tc, expectations);
	tcase_add_test(tc, store_index_and_versions);
	tcase_add_test(tc, store_keeps_text);
	tcase_add_test(tc, store_takes_text_without_managed_fields);
	tcase_add_test(tc, child_is_compact);
	tcase_add_test(tc, child_loads_without_spec);
	tcase_add_test(tc, object_loads_without_managed_fields);
	tcase_add_test(tc, list_parse_items_one_by_one);
	tcase_add_test(tc, map_basics);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return tu_run(suite());
}
