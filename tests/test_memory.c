/*
 * The in-memory backend: every verb, conflicts, selectors, pagination, deletion and garbage
 * collection, watches with bookmarks and 410 Gone, and a concurrency smoke test.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <jansson.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <tfjob/sys/transport.h>

#include "testutil.h"

static const tfjob_resource TFJOBS = TFJOB_RESOURCE_TFJOBS_INIT;
static const tfjob_resource PODS = TFJOB_RESOURCE_PODS_INIT;
static const tfjob_resource EVENTS = TFJOB_RESOURCE_EVENTS_INIT;
static const tfjob_resource NAMESPACES = TFJOB_RESOURCE_NAMESPACES_INIT;

static int64_t fixed_clock(void *payload) { return *(int64_t *)payload; }
static int64_t clock_value = 1700000000;

static tfjob_transport *new_store(size_t history)
{
	tfjob_memory_options opts = TFJOB_MEMORY_OPTIONS_INIT;
	opts.history_limit = history;
	opts.clock = fixed_clock;
	opts.clock_payload = &clock_value;
	opts.seed = 42;
	opts.bookmark_interval_ms = -1;
	tfjob_transport *t = NULL;
	ck_assert_int_eq(tfjob_memory_transport_new(&t, &opts, NULL), 0);
	return t;
}

static json_t *parse(const char *text)
{
	json_error_t e;
	json_t *v = json_loads(text, 0, &e);
	ck_assert_msg(v != NULL, "bad JSON: %s", text);
	return v;
}

static const char *meta(json_t *obj, const char *field)
{
	return json_string_value(json_object_get(json_object_get(obj, "metadata"), field));
}

static json_t *create_ok(tfjob_transport *t, const tfjob_resource *res, const char *json)
{
	char *out = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_transport_create(&out, t, res, NULL, json, &err);
	ck_assert_msg(rc == 0, "create: %s", tfjob_error_message(err));
	json_t *v = parse(out);
	tfjob_free(out);
	return v;
}

static json_t *get_ok(tfjob_transport *t, const tfjob_resource *res, const char *name)
{
	char *out = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_transport_get(&out, t, res, NULL, name, &err);
	ck_assert_msg(rc == 0, "get: %s", tfjob_error_message(err));
	json_t *v = parse(out);
	tfjob_free(out);
	return v;
}

static char *dumps(json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT);
	ck_assert_ptr_nonnull(s);
	return s;
}

START_TEST(create_get_and_metadata)
{
	tfjob_transport *t = new_store(0);
	ck_assert(tfjob_memory_transport_is(t));
	ck_assert_str_eq(tfjob_transport_namespace(t), "default");
	json_t *a = create_ok(t, &TFJOBS, "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"a\"},"
	                                  "\"spec\":{\"x\":1},\"status\":{\"ignored\":true}}");
	ck_assert_str_eq(meta(a, "name"), "a");
	ck_assert_str_eq(meta(a, "namespace"), "default");
	ck_assert_str_eq(meta(a, "resourceVersion"), "2");
	ck_assert_str_eq(meta(a, "creationTimestamp"), "2023-11-14T22:13:20Z");
	ck_assert_int_eq(strlen(meta(a, "uid")), 36);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(a, "metadata"), "generation")), 1);
	ck_assert_ptr_null(json_object_get(a, "status"));
	json_t *g = get_ok(t, &TFJOBS, "a");
	ck_assert(json_equal(a, g));
	ck_assert_uint_eq(tfjob_memory_resource_version(t), 2);

	/* Duplicate create: 409 AlreadyExists. */
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_transport_create(NULL, t, &TFJOBS, NULL, "{\"metadata\":{\"name\":\"a\"}}", &err),
	                 TFJOB_EEXISTS);
	ck_assert_int_eq(tfjob_error_http_status(err), 409);
	ck_assert_str_eq(tfjob_error_message(err), "tfjobs.kubeflow.org \"a\" already exists");
	ck_assert_ptr_nonnull(strstr(tfjob_error_details_json(err), "\"name\":\"a\""));
	tfjob_error_free(err);
	err = NULL;
	/* Not found. */
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &TFJOBS, NULL, "zz", &err), TFJOB_ENOTFOUND);
	ck_assert_int_eq(tfjob_error_http_status(err), 404);
	ck_assert_str_eq(tfjob_error_message(err), "tfjobs.kubeflow.org \"zz\" not found");
	tfjob_error_free(err);
	err = NULL;
	/* Other namespace: a different object. */
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &TFJOBS, "other", "a", NULL), TFJOB_ENOTFOUND);
	/* Namespace mismatch: 400. */
	ck_assert_int_eq(tfjob_transport_create(NULL, t, &TFJOBS, "x", "{\"metadata\":{\"name\":\"b\",\"namespace\":\"y\"}}", &err),
	                 TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_error_http_status(err), 400);
	tfjob_error_free(err);
	/* resourceVersion on create, missing name, bad JSON. */
	ck_assert_int_eq(tfjob_transport_create(NULL, t, &TFJOBS, NULL, "{\"metadata\":{\"name\":\"c\",\"resourceVersion\":\"3\"}}", NULL),
	                 TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_transport_create(NULL, t, &TFJOBS, NULL, "{\"metadata\":{}}", NULL), TFJOB_EINVALID);
	ck_assert_int_eq(tfjob_transport_create(NULL, t, &TFJOBS, NULL, "{", NULL), TFJOB_EPARSE);
	ck_assert_int_eq(tfjob_transport_create(NULL, t, &TFJOBS, NULL, "[]", NULL), TFJOB_ESCHEMA);
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &TFJOBS, NULL, "a/b", NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &TFJOBS, "", "a", NULL), TFJOB_EINVAL);
	/* Cluster-scoped resources ignore the namespace. */
	json_t *ns = create_ok(t, &NAMESPACES, "{\"metadata\":{\"name\":\"team\"}}");
	ck_assert_ptr_null(meta(ns, "namespace"));
	ck_assert_str_eq(json_string_value(json_object_get(ns, "kind")), "Namespace");
	json_decref(ns);
	json_decref(a);
	json_decref(g);
	tfjob_transport_free(t);
}
END_TEST

START_TEST(generate_name_and_pods)
{
	tfjob_transport *t = new_store(0);
	json_t *p = create_ok(t, &PODS, "{\"metadata\":{\"generateName\":\"w-\"},\"spec\":{}}");
	const char *name = meta(p, "name");
	ck_assert_int_eq(strlen(name), 7);
	ck_assert_int_eq(strncmp(name, "w-", 2), 0);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(p, "status"), "phase")), "Pending");
	ck_assert_str_eq(json_string_value(json_object_get(p, "kind")), "Pod");
	ck_assert_str_eq(json_string_value(json_object_get(p, "apiVersion")), "v1");
	json_t *q = create_ok(t, &PODS, "{\"metadata\":{\"generateName\":\"w-\"}}");
	ck_assert_str_ne(meta(q, "name"), name);
	ck_assert_str_ne(meta(q, "uid"), meta(p, "uid"));
	json_decref(p);
	json_decref(q);
	tfjob_transport_free(t);
}
END_TEST

START_TEST(update_conflicts_and_status)
{
	tfjob_transport *t = new_store(0);
	json_t *a = create_ok(t, &TFJOBS, "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"x\":1}}");
	/* Status update: spec changes ignored. */
	json_t *s = json_deep_copy(a);
	json_object_set_new(s, "status", json_pack("{s:s}", "phase", "Running"));
	json_object_set_new(s, "spec", json_pack("{s:i}", "x", 99));
	char *text = dumps(s), *out = NULL;
	ck_assert_int_eq(tfjob_transport_update_status(&out, t, &TFJOBS, NULL, text, NULL), 0);
	json_t *after = parse(out);
	tfjob_free(out);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(after, "spec"), "x")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(after, "status"), "phase")), "Running");
	ck_assert_str_eq(meta(after, "resourceVersion"), "3");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(after, "metadata"), "generation")), 1);
	/* The same status again: a no-op, no new version. */
	ck_assert_int_eq(tfjob_transport_update_status(&out, t, &TFJOBS, NULL, text, NULL), TFJOB_ECONFLICT);
	free(text);
	json_decref(s);

	/* Stale resourceVersion: 409 Conflict. */
	text = dumps(a);
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_transport_update(NULL, t, &TFJOBS, NULL, text, &err), TFJOB_ECONFLICT);
	ck_assert_int_eq(tfjob_error_http_status(err), 409);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "the object has been modified"));
	tfjob_error_free(err);
	free(text);

	/* Update at the current version: status changes ignored, generation bumps on spec change. */
	json_t *u = json_deep_copy(after);
	json_object_set_new(u, "spec", json_pack("{s:i}", "x", 2));
	json_object_set_new(u, "status", json_pack("{s:s}", "phase", "Hacked"));
	json_object_set_new(json_object_get(u, "metadata"), "labels", json_pack("{s:s}", "k", "v"));
	text = dumps(u);
	ck_assert_int_eq(tfjob_transport_update(&out, t, &TFJOBS, NULL, text, NULL), 0);
	free(text);
	json_t *u2 = parse(out);
	tfjob_free(out);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(u2, "status"), "phase")), "Running");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(u2, "spec"), "x")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(u2, "metadata"), "generation")), 2);
	ck_assert_str_eq(meta(u2, "resourceVersion"), "4");
	/* Metadata-only change: no generation bump. */
	json_object_set_new(json_object_get(u2, "metadata"), "labels", json_pack("{s:s}", "k", "w"));
	text = dumps(u2);
	ck_assert_int_eq(tfjob_transport_update(&out, t, &TFJOBS, NULL, text, NULL), 0);
	free(text);
	json_t *u3 = parse(out);
	tfjob_free(out);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(u3, "metadata"), "generation")), 2);
	/* A no-op update keeps the version. */
	text = dumps(u3);
	ck_assert_int_eq(tfjob_transport_update(&out, t, &TFJOBS, NULL, text, NULL), 0);
	free(text);
	json_t *u4 = parse(out);
	tfjob_free(out);
	ck_assert_str_eq(meta(u4, "resourceVersion"), meta(u3, "resourceVersion"));
	/* Without resourceVersion: refused for custom resources (422), unconditional for core ones. */
	ck_assert_int_eq(tfjob_transport_update(NULL, t, &TFJOBS, NULL, "{\"metadata\":{\"name\":\"a\"},\"spec\":{\"x\":3}}", &err),
	                 TFJOB_EINVALID);
	ck_assert_int_eq(tfjob_error_http_status(err), 422);
	ck_assert_str_eq(tfjob_error_message(err), "tfjobs.kubeflow.org \"a\" is invalid: metadata.resourceVersion: Invalid "
	                                           "value: 0: must be specified for an update");
	tfjob_error_free(err);
	json_decref(create_ok(t, &PODS, "{\"metadata\":{\"name\":\"p\"}}"));
	ck_assert_int_eq(tfjob_transport_update(NULL, t, &PODS, NULL, "{\"metadata\":{\"name\":\"p\"},\"spec\":{\"x\":3}}", NULL), 0);
	/* Wrong uid: the storage layer's precondition failure. */
	ck_assert_int_eq(tfjob_transport_update(NULL, t, &PODS, NULL,
	                                        "{\"metadata\":{\"name\":\"p\",\"uid\":\"nope\"},\"spec\":{\"x\":3}}", &err),
	                 TFJOB_ECONFLICT);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "Operation cannot be fulfilled on pods \"p\": StorageError: "
	                                                       "invalid object, Code: 4, Key: /registry/pods/default/p, "
	                                                       "ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: "
	                                                       "UID in precondition: nope, UID in object meta: "));
	tfjob_error_free(err);
	/* Missing object, missing name. */
	ck_assert_int_eq(tfjob_transport_update(NULL, t, &TFJOBS, NULL, "{\"metadata\":{\"name\":\"zz\"}}", NULL), TFJOB_ENOTFOUND);
	ck_assert_int_eq(tfjob_transport_update(NULL, t, &TFJOBS, NULL, "{\"metadata\":{}}", NULL), TFJOB_EINVAL);
	/* Events have no status subresource. */
	json_t *ev = create_ok(t, &EVENTS, "{\"metadata\":{\"name\":\"e\"},\"reason\":\"R\"}");
	ck_assert_int_eq(tfjob_transport_update_status(NULL, t, &EVENTS, NULL, "{\"metadata\":{\"name\":\"e\"}}", NULL),
	                 TFJOB_ENOTFOUND);
	json_decref(ev);
	json_decref(a);
	json_decref(after);
	json_decref(u);
	json_decref(u2);
	json_decref(u3);
	json_decref(u4);
	tfjob_transport_free(t);
}
END_TEST

START_TEST(merge_patch)
{
	tfjob_transport *t = new_store(0);
	json_decref(create_ok(t, &TFJOBS, "{\"metadata\":{\"name\":\"a\",\"labels\":{\"x\":\"1\",\"y\":\"2\"}},\"spec\":{\"r\":1,\"s\":{\"t\":1}}}"));
	char *out = NULL;
	ck_assert_int_eq(tfjob_transport_patch(&out, t, &TFJOBS, NULL, "a", NULL,
	                                       "{\"metadata\":{\"labels\":{\"y\":null,\"z\":\"3\"}},\"spec\":{\"s\":{\"u\":2}},\"status\":{\"no\":1}}", NULL), 0);
	json_t *p = parse(out);
	tfjob_free(out);
	json_t *labels = json_object_get(json_object_get(p, "metadata"), "labels");
	ck_assert_str_eq(json_string_value(json_object_get(labels, "x")), "1");
	ck_assert_ptr_null(json_object_get(labels, "y"));
	ck_assert_str_eq(json_string_value(json_object_get(labels, "z")), "3");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(json_object_get(p, "spec"), "s"), "t")), 1);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(json_object_get(p, "spec"), "s"), "u")), 2);
	ck_assert_ptr_null(json_object_get(p, "status"));
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(p, "metadata"), "generation")), 2);
	/* Status patch. */
	ck_assert_int_eq(tfjob_transport_patch(&out, t, &TFJOBS, NULL, "a", "status", "{\"status\":{\"ok\":true},\"spec\":null}", NULL), 0);
	json_t *q = parse(out);
	tfjob_free(out);
	ck_assert(json_is_true(json_object_get(json_object_get(q, "status"), "ok")));
	ck_assert_ptr_nonnull(json_object_get(q, "spec"));
	/* A resourceVersion in the patch is a precondition. */
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_transport_patch(NULL, t, &TFJOBS, NULL, "a", NULL, "{\"metadata\":{\"resourceVersion\":\"1\"},\"spec\":{\"r\":5}}", &err),
	                 TFJOB_ECONFLICT);
	ck_assert_int_eq(tfjob_error_http_status(err), 409);
	tfjob_error_free(err);
	char patch[128];
	snprintf(patch, sizeof(patch), "{\"metadata\":{\"resourceVersion\":\"%s\"},\"spec\":{\"r\":5}}", meta(q, "resourceVersion"));
	ck_assert_int_eq(tfjob_transport_patch(NULL, t, &TFJOBS, NULL, "a", NULL, patch, NULL), 0);
	ck_assert_int_eq(tfjob_transport_patch(NULL, t, &TFJOBS, NULL, "zz", NULL, "{}", NULL), TFJOB_ENOTFOUND);
	ck_assert_int_eq(tfjob_transport_patch(NULL, t, &TFJOBS, NULL, "a", "scale", "{}", NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_transport_patch(NULL, t, &TFJOBS, NULL, "a", NULL, "nope", NULL), TFJOB_EPARSE);
	json_decref(p);
	json_decref(q);
	tfjob_transport_free(t);
}
END_TEST

static size_t list_names(tfjob_transport *t, const tfjob_resource *res, const char *ns, const char *labels,
                         const char *fields, char *names, size_t size)
{
	tfjob_list_options lo = TFJOB_LIST_OPTIONS_INIT;
	lo.label_selector = labels;
	lo.field_selector = fields;
	char *out = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_transport_list(&out, t, res, ns, &lo, &err);
	ck_assert_msg(rc == 0, "list: %s", tfjob_error_message(err));
	json_t *l = parse(out);
	tfjob_free(out);
	names[0] = '\0';
	size_t i;
	json_t *item;
	json_array_foreach(json_object_get(l, "items"), i, item) {
		if (i)
			strncat(names, ",", size - strlen(names) - 1);
		strncat(names, meta(item, "name"), size - strlen(names) - 1);
	}
	size_t n = json_array_size(json_object_get(l, "items"));
	json_decref(l);
	return n;
}

START_TEST(label_and_field_selectors)
{
	tfjob_transport *t = new_store(0);
	json_decref(create_ok(t, &PODS, "{\"metadata\":{\"name\":\"p1\",\"labels\":{\"app\":\"tf\",\"role\":\"worker\"}}}"));
	json_decref(create_ok(t, &PODS, "{\"metadata\":{\"name\":\"p2\",\"labels\":{\"app\":\"tf\",\"role\":\"ps\"}}}"));
	json_decref(create_ok(t, &PODS, "{\"metadata\":{\"name\":\"p3\",\"labels\":{\"app\":\"web\"}}}"));
	json_decref(create_ok(t, &PODS, "{\"metadata\":{\"name\":\"p4\"}}"));
	char names[256];
	static const struct { const char *sel; const char *want; } cases[] = {
		{ "", "p1,p2,p3,p4" },
		{ "app=tf", "p1,p2" },
		{ "app==tf", "p1,p2" },
		{ "app!=tf", "p3,p4" },
		{ "role in (worker, ps)", "p1,p2" },
		{ "role notin (ps)", "p1,p3,p4" },
		{ "role", "p1,p2" },
		{ "!role", "p3,p4" },
		{ "app=tf,role=ps", "p2" },
		{ "app in (tf,web),!role", "p3" },
		{ " app = web ", "p3" },
		{ "app=nothing", "" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		list_names(t, &PODS, NULL, cases[i].sel, NULL, names, sizeof(names));
		ck_assert_msg(!strcmp(names, cases[i].want), "selector '%s': got '%s', want '%s'", cases[i].sel, names,
		              cases[i].want);
	}
	list_names(t, &PODS, NULL, NULL, "metadata.name=p2", names, sizeof(names));
	ck_assert_str_eq(names, "p2");
	list_names(t, &PODS, NULL, NULL, "metadata.name!=p2,metadata.namespace==default", names, sizeof(names));
	ck_assert_str_eq(names, "p1,p3,p4");
	list_names(t, &PODS, NULL, "app=tf", "metadata.name!=p1", names, sizeof(names));
	ck_assert_str_eq(names, "p2");
	static const char *bad[] = { "app in tf", "app=(", "=x", "app in (a", "a b" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		tfjob_list_options lo = TFJOB_LIST_OPTIONS_INIT;
		lo.label_selector = bad[i];
		tfjob_error *err = NULL;
		ck_assert_msg(tfjob_transport_list(NULL, t, &PODS, NULL, &lo, &err) == TFJOB_EINVAL, "selector '%s'", bad[i]);
		ck_assert_int_eq(tfjob_error_http_status(err), 400);
		tfjob_error_free(err);
	}
	/* All namespaces. */
	json_decref(create_ok(t, &PODS, "{\"metadata\":{\"name\":\"o1\",\"namespace\":\"other\"}}"));
	ck_assert_uint_eq(list_names(t, &PODS, "", NULL, NULL, names, sizeof(names)), 5);
	ck_assert_uint_eq(list_names(t, &PODS, "other", NULL, NULL, names, sizeof(names)), 1);
	tfjob_transport_free(t);
}
END_TEST

START_TEST(pagination)
{
	tfjob_transport *t = new_store(0);
	for (int i = 0; i < 7; i++) {
		char buf[128];
		snprintf(buf, sizeof(buf), "{\"metadata\":{\"name\":\"p%d\",\"labels\":{\"even\":\"%s\"}}}", i, i % 2 ? "no" : "yes");
		json_decref(create_ok(t, &PODS, buf));
	}
	tfjob_list_options lo = TFJOB_LIST_OPTIONS_INIT;
	lo.limit = 3;
	char seen[64] = "";
	int pages = 0;
	char *cont = NULL;
	do {
		lo.continue_token = cont;
		char *out = NULL;
		ck_assert_int_eq(tfjob_transport_list(&out, t, &PODS, NULL, &lo, NULL), 0);
		json_t *l = parse(out);
		tfjob_free(out);
		ck_assert_str_eq(json_string_value(json_object_get(l, "kind")), "PodList");
		ck_assert_str_eq(json_string_value(json_object_get(json_object_get(l, "metadata"), "resourceVersion")), "8");
		size_t i;
		json_t *item;
		json_array_foreach(json_object_get(l, "items"), i, item) strcat(seen, meta(item, "name"));
		free(cont);
		const char *c = json_string_value(json_object_get(json_object_get(l, "metadata"), "continue"));
		cont = c ? strdup(c) : NULL;
		pages++;
		json_decref(l);
	} while (cont);
	ck_assert_str_eq(seen, "p0p1p2p3p4p5p6");
	ck_assert_int_eq(pages, 3);
	/* With a selector: pages hold only matching items. */
	lo.continue_token = NULL;
	lo.label_selector = "even=yes";
	lo.limit = 2;
	char *out = NULL;
	ck_assert_int_eq(tfjob_transport_list(&out, t, &PODS, NULL, &lo, NULL), 0);
	json_t *l = parse(out);
	tfjob_free(out);
	ck_assert_int_eq(json_array_size(json_object_get(l, "items")), 2);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(l, "metadata"), "remainingItemCount")), 2);
	json_decref(l);
	lo.continue_token = "zz";
	ck_assert_int_eq(tfjob_transport_list(NULL, t, &PODS, NULL, &lo, NULL), TFJOB_EINVAL);
	lo.continue_token = NULL;
	lo.limit = -1;
	ck_assert_int_eq(tfjob_transport_list(NULL, t, &PODS, NULL, &lo, NULL), TFJOB_EINVAL);
	lo.limit = 0;
	lo.version = 99;
	ck_assert_int_eq(tfjob_transport_list(NULL, t, &PODS, NULL, &lo, NULL), TFJOB_EVERSION);
	tfjob_transport_free(t);
}
END_TEST

START_TEST(delete_preconditions_finalizers_gc)
{
	tfjob_transport *t = new_store(0);
	json_t *job = create_ok(t, &TFJOBS, "{\"metadata\":{\"name\":\"j\"}}");
	char child[512];
	for (int i = 0; i < 3; i++) {
		snprintf(child, sizeof(child),
		         "{\"metadata\":{\"name\":\"j-worker-%d\",\"ownerReferences\":[{\"apiVersion\":\"kubeflow.org/v1\","
		         "\"kind\":\"TFJob\",\"name\":\"j\",\"uid\":\"%s\",\"controller\":true}]}}", i, meta(job, "uid"));
		json_decref(create_ok(t, &PODS, child));
	}
	json_decref(create_ok(t, &PODS, "{\"metadata\":{\"name\":\"unrelated\"}}"));
	tfjob_delete_options d = TFJOB_DELETE_OPTIONS_INIT;
	tfjob_error *err = NULL;
	d.precondition_uid = "wrong";
	ck_assert_int_eq(tfjob_transport_delete(NULL, t, &TFJOBS, NULL, "j", &d, &err), TFJOB_ECONFLICT);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "Operation cannot be fulfilled on TFJob.kubeflow.org \"j\": the "
	                                                       "UID in the precondition (wrong) does not match the UID in record ("));
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "The object might have been deleted and then recreated"));
	tfjob_error_free(err);
	err = NULL;
	d.precondition_uid = meta(job, "uid");
	d.precondition_resource_version = "999";
	ck_assert_int_eq(tfjob_transport_delete(NULL, t, &TFJOBS, NULL, "j", &d, &err), TFJOB_ECONFLICT);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "the ResourceVersion in the precondition (999) does not match "
	                                                       "the ResourceVersion in record ("));
	tfjob_error_free(err);
	d.precondition_resource_version = meta(job, "resourceVersion");
	char *out = NULL;
	ck_assert_int_eq(tfjob_transport_delete(&out, t, &TFJOBS, NULL, "j", &d, NULL), 0);
	tfjob_free(out);
	char names[256];
	/* Background: dependents go too. */
	ck_assert_uint_eq(list_names(t, &PODS, NULL, NULL, NULL, names, sizeof(names)), 1);
	ck_assert_str_eq(names, "unrelated");
	ck_assert_int_eq(tfjob_transport_delete(NULL, t, &TFJOBS, NULL, "j", NULL, &err), TFJOB_ENOTFOUND);
	ck_assert_int_eq(tfjob_error_http_status(err), 404);
	tfjob_error_free(err);
	json_decref(job);

	/* Orphan: dependents stay, without the owner reference. */
	job = create_ok(t, &TFJOBS, "{\"metadata\":{\"name\":\"k\"}}");
	snprintf(child, sizeof(child), "{\"metadata\":{\"name\":\"k-0\",\"ownerReferences\":[{\"uid\":\"%s\",\"name\":\"k\"}]}}",
	         meta(job, "uid"));
	json_decref(create_ok(t, &PODS, child));
	tfjob_delete_options orphan = TFJOB_DELETE_OPTIONS_INIT;
	orphan.propagation = TFJOB_PROPAGATION_ORPHAN;
	ck_assert_int_eq(tfjob_transport_delete(NULL, t, &TFJOBS, NULL, "k", &orphan, NULL), 0);
	json_t *k0 = get_ok(t, &PODS, "k-0");
	ck_assert_int_eq(json_array_size(json_object_get(json_object_get(k0, "metadata"), "ownerReferences")), 0);
	json_decref(k0);
	json_decref(job);

	/* Finalizers: deletionTimestamp set, the object stays until they are removed. */
	json_t *f = create_ok(t, &TFJOBS, "{\"metadata\":{\"name\":\"f\",\"finalizers\":[\"x/y\"]}}");
	ck_assert_int_eq(tfjob_transport_delete(&out, t, &TFJOBS, NULL, "f", NULL, NULL), 0);
	json_t *fd = parse(out);
	tfjob_free(out);
	ck_assert_str_eq(meta(fd, "deletionTimestamp"), "2023-11-14T22:13:20Z");
	json_t *still = get_ok(t, &TFJOBS, "f");
	ck_assert_str_eq(meta(still, "deletionTimestamp"), "2023-11-14T22:13:20Z");
	/* Deleting again changes nothing. */
	ck_assert_int_eq(tfjob_transport_delete(NULL, t, &TFJOBS, NULL, "f", NULL, NULL), 0);
	json_t *again = get_ok(t, &TFJOBS, "f");
	ck_assert_str_eq(meta(again, "resourceVersion"), meta(still, "resourceVersion"));
	ck_assert_int_eq(tfjob_transport_patch(NULL, t, &TFJOBS, NULL, "f", NULL, "{\"metadata\":{\"finalizers\":null}}", NULL), 0);
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &TFJOBS, NULL, "f", NULL), TFJOB_ENOTFOUND);
	d.version = 0;
	ck_assert_int_eq(tfjob_transport_delete(NULL, t, &TFJOBS, NULL, "f", &d, NULL), TFJOB_EVERSION);
	/* Deleting a namespace deletes what is in it. */
	static const tfjob_resource NS = TFJOB_RESOURCE_NAMESPACES_INIT;
	json_decref(create_ok(t, &NS, "{\"metadata\":{\"name\":\"team\"}}"));
	json_decref(create_ok(t, &PODS, "{\"metadata\":{\"name\":\"t1\",\"namespace\":\"team\"}}"));
	json_decref(create_ok(t, &TFJOBS, "{\"metadata\":{\"name\":\"t2\",\"namespace\":\"team\"}}"));
	json_decref(create_ok(t, &PODS, "{\"metadata\":{\"name\":\"t3\",\"namespace\":\"team2\"}}"));
	ck_assert_int_eq(tfjob_transport_delete(NULL, t, &NS, NULL, "team", NULL, NULL), 0);
	ck_assert_uint_eq(list_names(t, &PODS, "team", NULL, NULL, names, sizeof(names)), 0);
	ck_assert_uint_eq(list_names(t, &TFJOBS, "team", NULL, NULL, names, sizeof(names)), 0);
	ck_assert_uint_eq(list_names(t, &PODS, "team2", NULL, NULL, names, sizeof(names)), 1);
	json_decref(f);
	json_decref(fd);
	json_decref(still);
	json_decref(again);
	tfjob_transport_free(t);
}
END_TEST

START_TEST(create_event)
{
	tfjob_transport *t = new_store(0);
	json_t *job = create_ok(t, &TFJOBS, "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"j\",\"namespace\":\"ml\"}}");
	(void)job;
	char *jtext = dumps(job);
	json_decref(job);
	tfjob_transport_free(t);
	t = new_store(0);
	char *out = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_transport_create_event(&out, t, NULL, jtext, "Warning", "Failed", "boom", NULL, &err);
	ck_assert_msg(rc == 0, "create_event: %s", tfjob_error_message(err));
	json_t *ev = parse(out);
	tfjob_free(out);
	ck_assert_str_eq(meta(ev, "namespace"), "ml");
	ck_assert_int_eq(strncmp(meta(ev, "name"), "j.", 2), 0);
	json_t *io = json_object_get(ev, "involvedObject");
	ck_assert_str_eq(json_string_value(json_object_get(io, "kind")), "TFJob");
	ck_assert_str_eq(json_string_value(json_object_get(io, "name")), "j");
	ck_assert_str_eq(json_string_value(json_object_get(ev, "reason")), "Failed");
	ck_assert_str_eq(json_string_value(json_object_get(ev, "type")), "Warning");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(ev, "source"), "component")), "tfjob-controller");
	char names[128];
	ck_assert_uint_eq(list_names(t, &EVENTS, "ml", NULL, "involvedObject.name=j,reason=Failed", names, sizeof(names)), 1);
	ck_assert_int_eq(tfjob_transport_create_event(NULL, t, NULL, jtext, "Bad", "R", "m", NULL, NULL), TFJOB_EINVAL);
	ck_assert_int_eq(tfjob_transport_create_event(NULL, t, NULL, jtext, "Normal", "", "m", NULL, NULL), TFJOB_EINVAL);
	json_decref(ev);
	free(jtext);
	tfjob_transport_free(t);
}
END_TEST

/* ---- watches ---- */

struct collector {
	pthread_mutex_t mu;
	char log[16384];
	int count;
	int closed;
	int closed_code;
	int stop_after;
	char last_rv[32];
};

static int on_event(tfjob_watch_event type, const char *json, void *payload)
{
	struct collector *c = payload;
	json_t *v = parse(json);
	pthread_mutex_lock(&c->mu);
	const char *name = meta(v, "name");
	char line[128];
	snprintf(line, sizeof(line), "%s %s;", tfjob_watch_event_name(type), name ? name : "-");
	strncat(c->log, line, sizeof(c->log) - strlen(c->log) - 1);
	const char *rv = meta(v, "resourceVersion");
	snprintf(c->last_rv, sizeof(c->last_rv), "%s", rv ? rv : "");
	c->count++;
	int stop = c->stop_after && c->count >= c->stop_after;
	pthread_mutex_unlock(&c->mu);
	json_decref(v);
	return stop;
}

static void on_closed(int code, const tfjob_error *err, void *payload)
{
	struct collector *c = payload;
	pthread_mutex_lock(&c->mu);
	c->closed = 1;
	c->closed_code = code;
	if (code == TFJOB_EGONE)
		ck_assert_int_eq(tfjob_error_http_status(err), 410);
	pthread_mutex_unlock(&c->mu);
}

static void wait_count(struct collector *c, int n)
{
	for (int i = 0; i < 500; i++) {
		pthread_mutex_lock(&c->mu);
		int have = c->count;
		pthread_mutex_unlock(&c->mu);
		if (have >= n)
			return;
		usleep(10000);
	}
	ck_abort_msg("timed out waiting for %d events; log: %s", n, c->log);
}

static tfjob_watch *start_watch(tfjob_transport *t, const tfjob_resource *res, struct collector *c, const char *rv,
                                const char *labels, int bookmarks)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->mu, NULL);
	tfjob_watch_options wo = TFJOB_WATCH_OPTIONS_INIT;
	wo.on_event = on_event;
	wo.on_closed = on_closed;
	wo.payload = c;
	wo.resource_version = rv;
	wo.label_selector = labels;
	wo.allow_bookmarks = bookmarks;
	tfjob_watch *w = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_transport_watch(&w, t, res, NULL, &wo, &err);
	ck_assert_msg(rc == 0, "watch: %s", tfjob_error_message(err));
	return w;
}

START_TEST(watch_events_and_resume)
{
	tfjob_transport *t = new_store(0);
	json_decref(create_ok(t, &PODS, "{\"metadata\":{\"name\":\"a\"}}"));
	struct collector c;
	tfjob_watch *w = start_watch(t, &PODS, &c, NULL, NULL, 0);
	wait_count(&c, 1);
	ck_assert_str_eq(c.log, "ADDED a;");
	json_decref(create_ok(t, &PODS, "{\"metadata\":{\"name\":\"b\"}}"));
	ck_assert_int_eq(tfjob_transport_patch(NULL, t, &PODS, NULL, "a", NULL, "{\"spec\":{\"x\":1}}", NULL), 0);
	ck_assert_int_eq(tfjob_transport_delete(NULL, t, &PODS, NULL, "b", NULL, NULL), 0);
	json_decref(create_ok(t, &TFJOBS, "{\"metadata\":{\"name\":\"other-kind\"}}"));
	json_decref(create_ok(t, &PODS, "{\"metadata\":{\"name\":\"other-ns\",\"namespace\":\"x\"}}"));
	wait_count(&c, 4);
	ck_assert_str_eq(c.log, "ADDED a;ADDED b;MODIFIED a;DELETED b;");
	ck_assert_str_eq(c.last_rv, "5"); /* the deletion has its own version */
	tfjob_watch_free(w);
	ck_assert_int_eq(c.closed, 1);
	ck_assert_int_eq(c.closed_code, 0);

	/* Resume from version 3: the events after it, no synthetic ones. */
	w = start_watch(t, &PODS, &c, "3", NULL, 0);
	wait_count(&c, 2);
	usleep(50000);
	ck_assert_str_eq(c.log, "MODIFIED a;DELETED b;");
	tfjob_watch_free(w);
	/* A bad version. */
	w = start_watch(t, &PODS, &c, "abc", NULL, 0);
	ck_assert_int_eq(tfjob_watch_wait(w, 5000), 0);
	ck_assert_int_eq(c.closed_code, TFJOB_EINVAL);
	tfjob_watch_free(w);
	tfjob_transport_free(t);
}
END_TEST

/* An informer lists, then watches from the list's version on a thread that may start late: what
   happened in between must come as events. The list of an empty store must therefore name a
   version to resume from, never "0" (which means "from any version": the objects as they are). */
START_TEST(watch_from_the_list_of_an_empty_store)
{
	tfjob_transport *t = new_store(0);
	tfjob_list_options lo = TFJOB_LIST_OPTIONS_INIT;
	char *out = NULL;
	ck_assert_int_eq(tfjob_transport_list(&out, t, &PODS, NULL, &lo, NULL), 0);
	json_t *l = parse(out);
	tfjob_free(out);
	char rv[32];
	snprintf(rv, sizeof(rv), "%s", json_string_value(json_object_get(json_object_get(l, "metadata"), "resourceVersion")));
	json_decref(l);
	ck_assert_str_ne(rv, "0");
	json_decref(create_ok(t, &PODS, "{\"metadata\":{\"name\":\"brief\"}}"));
	ck_assert_int_eq(tfjob_transport_delete(NULL, t, &PODS, NULL, "brief", NULL, NULL), 0);
	struct collector c;
	tfjob_watch *w = start_watch(t, &PODS, &c, rv, NULL, 0);
	wait_count(&c, 2);
	ck_assert_str_eq(c.log, "ADDED brief;DELETED brief;");
	tfjob_watch_free(w);
	tfjob_transport_free(t);
}
END_TEST

START_TEST(watch_selector_transitions)
{
	tfjob_transport *t = new_store(0);
	struct collector c;
	json_decref(create_ok(t, &TFJOBS, "{\"metadata\":{\"name\":\"first\"}}"));
	tfjob_watch *w = start_watch(t, &PODS, &c, "2", "app=tf", 0);
	json_decref(create_ok(t, &PODS, "{\"metadata\":{\"name\":\"a\",\"labels\":{\"app\":\"web\"}}}"));
	ck_assert_int_eq(tfjob_transport_patch(NULL, t, &PODS, NULL, "a", NULL, "{\"metadata\":{\"labels\":{\"app\":\"tf\"}}}", NULL), 0);
	ck_assert_int_eq(tfjob_transport_patch(NULL, t, &PODS, NULL, "a", NULL, "{\"spec\":{\"v\":1}}", NULL), 0);
	ck_assert_int_eq(tfjob_transport_patch(NULL, t, &PODS, NULL, "a", NULL, "{\"metadata\":{\"labels\":{\"app\":\"x\"}}}", NULL), 0);
	ck_assert_int_eq(tfjob_transport_delete(NULL, t, &PODS, NULL, "a", NULL, NULL), 0);
	wait_count(&c, 3);
	usleep(50000);
	ck_assert_str_eq(c.log, "ADDED a;MODIFIED a;DELETED a;");
	tfjob_watch_free(w);
	tfjob_transport_free(t);
}
END_TEST

START_TEST(watch_bookmarks_and_gone)
{
	tfjob_transport *t = new_store(4);
	struct collector c;
	tfjob_watch *w = start_watch(t, &PODS, &c, NULL, NULL, 1);
	usleep(50000); /* let the watch start */
	ck_assert_int_eq(tfjob_memory_bookmark(t), 0);
	wait_count(&c, 1);
	ck_assert_str_eq(c.log, "BOOKMARK -;");
	ck_assert_str_eq(c.last_rv, "1");
	json_decref(create_ok(t, &PODS, "{\"metadata\":{\"name\":\"a\"}}"));
	wait_count(&c, 2);
	tfjob_memory_bookmark(t);
	wait_count(&c, 3);
	ck_assert_str_eq(c.log, "BOOKMARK -;ADDED a;BOOKMARK -;");
	ck_assert_str_eq(c.last_rv, "2");
	tfjob_watch_free(w);

	/* Without allowWatchBookmarks: none. */
	w = start_watch(t, &PODS, &c, "2", NULL, 0);
	tfjob_memory_bookmark(t);
	usleep(100000);
	ck_assert_int_eq(c.count, 0);
	tfjob_watch_free(w);

	/* History of 4 events: starting before it is 410 Gone. */
	for (int i = 0; i < 6; i++) {
		char buf[64];
		snprintf(buf, sizeof(buf), "{\"metadata\":{\"name\":\"p%d\"}}", i);
		json_decref(create_ok(t, &PODS, buf));
	}
	w = start_watch(t, &PODS, &c, "2", NULL, 0);
	ck_assert_int_eq(tfjob_watch_wait(w, 5000), 0);
	ck_assert_int_eq(c.closed_code, TFJOB_EGONE);
	tfjob_watch_free(w);
	w = start_watch(t, &PODS, &c, "4", NULL, 0); /* events 5..8 are kept */
	wait_count(&c, 4);
	tfjob_watch_free(w);
	ck_assert_int_eq(c.closed_code, 0);
	/* Compaction: a watch resuming from before it gets 410 too. */
	tfjob_memory_compact(t);
	w = start_watch(t, &PODS, &c, "7", NULL, 0);
	ck_assert_int_eq(tfjob_watch_wait(w, 5000), 0);
	ck_assert_int_eq(c.closed_code, TFJOB_EGONE);
	tfjob_watch_free(w);
	ck_assert_int_eq(tfjob_memory_bookmark(NULL), TFJOB_EINVAL);
	tfjob_transport_free(t);
}
END_TEST

static void *stopper(void *arg)
{
	usleep(50000);
	tfjob_watch_stop(arg);
	return NULL;
}

START_TEST(watch_stop_timeout_and_callback_stop)
{
	tfjob_transport *t = new_store(0);
	struct collector c;
	tfjob_watch *w = start_watch(t, &PODS, &c, NULL, NULL, 0);
	pthread_t th;
	pthread_create(&th, NULL, stopper, w);
	ck_assert_int_eq(tfjob_watch_wait(w, 5000), 0);
	pthread_join(th, NULL);
	ck_assert_int_eq(c.closed, 1);
	ck_assert_int_eq(c.closed_code, 0);
	tfjob_watch_free(w);

	/* The callback asks to stop after two events. */
	json_decref(create_ok(t, &PODS, "{\"metadata\":{\"name\":\"a\"}}"));
	json_decref(create_ok(t, &PODS, "{\"metadata\":{\"name\":\"b\"}}"));
	json_decref(create_ok(t, &PODS, "{\"metadata\":{\"name\":\"c\"}}"));
	memset(&c, 0, sizeof(c));
	pthread_mutex_init(&c.mu, NULL);
	c.stop_after = 2;
	tfjob_watch_options wo = TFJOB_WATCH_OPTIONS_INIT;
	wo.on_event = on_event;
	wo.on_closed = on_closed;
	wo.payload = &c;
	ck_assert_int_eq(tfjob_transport_watch(&w, t, &PODS, NULL, &wo, NULL), 0);
	ck_assert_int_eq(tfjob_watch_wait(w, 5000), 0);
	ck_assert_int_eq(c.count, 2);
	tfjob_watch_free(w);

	/* Server-side timeout without reconnect ends the watch. */
	memset(&c, 0, sizeof(c));
	pthread_mutex_init(&c.mu, NULL);
	wo.timeout_seconds = 1;
	wo.reconnect = 0;
	wo.resource_version = "3";
	ck_assert_int_eq(tfjob_transport_watch(&w, t, &PODS, NULL, &wo, NULL), 0);
	ck_assert_int_eq(tfjob_watch_wait(w, 100), TFJOB_ETIMEOUT);
	ck_assert_int_eq(tfjob_watch_wait(w, 5000), 0);
	ck_assert_int_eq(c.closed_code, 0);
	tfjob_watch_free(w);

	/* Argument errors. */
	wo.on_event = NULL;
	ck_assert_int_eq(tfjob_transport_watch(&w, t, &PODS, NULL, &wo, NULL), TFJOB_EINVAL);
	wo.on_event = on_event;
	wo.version = 7;
	ck_assert_int_eq(tfjob_transport_watch(&w, t, &PODS, NULL, &wo, NULL), TFJOB_EVERSION);
	tfjob_watch_stop(NULL);
	tfjob_watch_free(NULL);
	tfjob_transport_free(t);
}
END_TEST

START_TEST(watch_sleeps_until_something_happens)
{
	/* Idle, without a deadline or bookmarks: the watch thread sleeps until a write or a stop. */
	tfjob_transport *t = new_store(0);
	struct collector c;
	tu_threads others;
	tu_threads_now(&others);
	tfjob_watch *w = start_watch(t, &PODS, &c, "0", NULL, 0);
	json_decref(create_ok(t, &PODS, "{\"metadata\":{\"name\":\"a\"}}"));
	wait_count(&c, 1);
	usleep(50000); /* let it go back to sleep */
	long before = tu_new_threads_sleeps(&others);
	usleep(400000);
	long woke = tu_new_threads_sleeps(&others) - before;
	ck_assert_msg(woke <= 2, "an idle watch woke %ld times in 0.4 s", woke);
	json_decref(create_ok(t, &PODS, "{\"metadata\":{\"name\":\"b\"}}"));
	wait_count(&c, 2);
	tfjob_watch_free(w); /* stops it: never returns if the stop did not wake it */
	tfjob_transport_free(t);

	/* With bookmarks every 100 ms, an idle watch still sends them on time. */
	tfjob_memory_options opts = TFJOB_MEMORY_OPTIONS_INIT;
	opts.bookmark_interval_ms = 100;
	ck_assert_int_eq(tfjob_memory_transport_new(&t, &opts, NULL), 0);
	w = start_watch(t, &PODS, &c, "0", NULL, 1);
	wait_count(&c, 3);
	ck_assert_str_eq(c.log, "BOOKMARK -;BOOKMARK -;BOOKMARK -;");
	tfjob_watch_free(w);
	tfjob_transport_free(t);
}
END_TEST

/* ---- concurrency ---- */

static void *incrementer(void *arg)
{
	tfjob_transport *t = arg;
	for (int i = 0; i < 50; i++) {
		for (;;) {
			char *out = NULL;
			ck_assert_int_eq(tfjob_transport_get(&out, t, &TFJOBS, NULL, "counter", NULL), 0);
			json_t *v = parse(out);
			tfjob_free(out);
			json_t *spec = json_object_get(v, "spec");
			json_object_set_new(spec, "n", json_integer(json_integer_value(json_object_get(spec, "n")) + 1));
			char *text = dumps(v);
			int rc = tfjob_transport_update(NULL, t, &TFJOBS, NULL, text, NULL);
			free(text);
			json_decref(v);
			if (rc == 0)
				break;
			ck_assert_int_eq(rc, TFJOB_ECONFLICT);
		}
	}
	return NULL;
}

static int rv_order_ok = 1;
static long last_rv_seen;

static int monotonic_event(tfjob_watch_event type, const char *json, void *payload)
{
	json_t *v = parse(json);
	long rv = atol(meta(v, "resourceVersion"));
	if (rv <= last_rv_seen)
		rv_order_ok = 0;
	last_rv_seen = rv;
	atomic_fetch_add((atomic_int *)payload, 1); /* read by the test's thread while the watch runs */
	json_decref(v);
	return 0;
}

START_TEST(concurrency_smoke)
{
	tfjob_transport *t = new_store(0);
	json_decref(create_ok(t, &TFJOBS, "{\"metadata\":{\"name\":\"counter\"},\"spec\":{\"n\":0}}"));
	atomic_int events = 0;
	tfjob_watch_options wo = TFJOB_WATCH_OPTIONS_INIT;
	wo.on_event = monotonic_event;
	wo.payload = &events;
	wo.resource_version = "2";
	tfjob_watch *w = NULL;
	ck_assert_int_eq(tfjob_transport_watch(&w, t, &TFJOBS, NULL, &wo, NULL), 0);
	pthread_t th[4];
	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, incrementer, t);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	json_t *v = get_ok(t, &TFJOBS, "counter");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(v, "spec"), "n")), 200);
	ck_assert_str_eq(meta(v, "resourceVersion"), "202");
	json_decref(v);
	for (int i = 0; i < 500 && atomic_load(&events) < 200; i++)
		usleep(10000);
	tfjob_watch_free(w);
	ck_assert_int_eq(atomic_load(&events), 200);
	ck_assert(rv_order_ok);
	tfjob_transport_free(t);
}
END_TEST

START_TEST(descriptors_and_options)
{
	ck_assert_str_eq(tfjob_resource_lookup("TFJob")->resource, "tfjobs");
	ck_assert_str_eq(tfjob_resource_lookup("tfjobs")->group, "kubeflow.org");
	ck_assert_str_eq(tfjob_resource_lookup("pod")->resource, "pods");
	ck_assert_str_eq(tfjob_resource_lookup("svc")->resource, "services");
	ck_assert_str_eq(tfjob_resource_lookup("PodGroup")->group, "scheduling.volcano.sh");
	ck_assert_int_eq(tfjob_resource_lookup("namespaces")->namespaced, 0);
	ck_assert_ptr_null(tfjob_resource_lookup("deployments"));
	ck_assert_ptr_null(tfjob_resource_lookup(NULL));
	tfjob_list_options lo;
	tfjob_watch_options wo;
	tfjob_delete_options d;
	tfjob_memory_options mo;
	tfjob_kube_options ko;
	ck_assert_int_eq(tfjob_list_options_init(&lo, 1), 0);
	ck_assert_int_eq(tfjob_watch_options_init(&wo, 1), 0);
	ck_assert_int_eq(wo.reconnect, 1);
	ck_assert_int_eq(tfjob_delete_options_init(&d, 1), 0);
	ck_assert_int_eq(d.grace_period_seconds, -1);
	ck_assert_int_eq(tfjob_memory_options_init(&mo, 1), 0);
	ck_assert_int_eq(tfjob_kube_options_init(&ko, 1), 0);
	ck_assert_int_eq(tfjob_list_options_init(&lo, 2), TFJOB_EVERSION);
	ck_assert_int_eq(tfjob_watch_options_init(&wo, 0), TFJOB_EVERSION);
	ck_assert_int_eq(tfjob_memory_options_init(&mo, 2), TFJOB_EVERSION);
	ck_assert_int_eq(tfjob_kube_options_init(&ko, 2), TFJOB_EVERSION);
	ck_assert_str_eq(tfjob_watch_event_name(TFJOB_WATCH_BOOKMARK), "BOOKMARK");
	ck_assert_str_eq(tfjob_watch_event_name((tfjob_watch_event)9), "UNKNOWN");
	mo.default_namespace = "ml";
	tfjob_transport *t = NULL;
	ck_assert_int_eq(tfjob_memory_transport_new(&t, &mo, NULL), 0);
	ck_assert_str_eq(tfjob_transport_namespace(t), "ml");
	ck_assert(!tfjob_kube_transport_is(t));
	ck_assert_ptr_null(tfjob_kube_transport_server(t));
	tfjob_transport_free(t);
	tfjob_transport_free(NULL);
	mo.version = 5;
	ck_assert_int_eq(tfjob_memory_transport_new(&t, &mo, NULL), TFJOB_EVERSION);
}
END_TEST

/* A custom backend with only the required slot: every verb says it is unsupported. */
static int freed;
static void custom_free(void *data) { freed = *(int *)data; }

START_TEST(custom_backend)
{
	int data = 7;
	tfjob_transport_backend be = { TFJOB_TRANSPORT_BACKEND_VERSION, &data, custom_free, NULL, NULL, NULL, NULL,
	                               NULL, NULL, NULL, NULL, NULL, NULL, NULL };
	tfjob_transport *t = NULL;
	ck_assert_int_eq(tfjob_transport_new(&t, &be, NULL), 0);
	ck_assert_ptr_eq(tfjob_transport_backend_data(t), &data);
	ck_assert_str_eq(tfjob_transport_namespace(t), "default");
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "x", NULL), TFJOB_ESTATE);
	tfjob_transport_free(t);
	ck_assert_int_eq(freed, 7);
	be.free = NULL;
	ck_assert_int_eq(tfjob_transport_new(&t, &be, NULL), TFJOB_EINVAL);
	be.free = custom_free;
	be.version = 3;
	ck_assert_int_eq(tfjob_transport_new(&t, &be, NULL), TFJOB_EVERSION);
	/* A version 1 table has no apply slot: what lies after it is never read. */
	be.version = 1;
	be.apply = (void *)1;
	ck_assert_int_eq(tfjob_transport_new(&t, &be, NULL), 0);
	tfjob_apply_options ao = TFJOB_APPLY_OPTIONS_INIT;
	ao.field_manager = "m";
	ck_assert_int_eq(tfjob_transport_apply(NULL, NULL, t, &PODS, NULL, "{\"metadata\":{\"name\":\"x\"}}", &ao, NULL),
	                 TFJOB_ESTATE);
	tfjob_transport_free(t);
	tfjob_error *e = tfjob_transport_error_new(TFJOB_EINVALID, 422, "bad", "{\"causes\":[]}");
	ck_assert_int_eq(tfjob_error_code_of(e), TFJOB_EINVALID);
	ck_assert_int_eq(tfjob_error_http_status(e), 422);
	ck_assert_str_eq(tfjob_error_details_json(e), "{\"causes\":[]}");
	tfjob_error_free(e);
}
END_TEST

/* Server-side apply: the memory backend has none; the arguments are checked first. */
START_TEST(apply_options_and_memory_backend)
{
	tfjob_apply_options ao;
	ck_assert_int_eq(tfjob_apply_options_init(&ao, 1), 0);
	ck_assert_ptr_null(ao.field_manager);
	ck_assert_int_eq(ao.force, 0);
	ck_assert_int_eq(ao.field_validation, TFJOB_FIELD_VALIDATION_STRICT);
	ck_assert_int_eq(tfjob_apply_options_init(&ao, 2), TFJOB_EVERSION);
	ck_assert_int_eq(tfjob_apply_options_init(NULL, 1), TFJOB_EINVAL);
	tfjob_transport *t = NULL;
	ck_assert_int_eq(tfjob_memory_transport_new(&t, NULL, NULL), 0);
	const char *pod = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"}}";
	char *warnings = (char *)1;
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_transport_apply(NULL, &warnings, t, &PODS, NULL, pod, &ao, &err), TFJOB_ESTATE);
	ck_assert_ptr_null(warnings);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "apply: this transport backend does not support it"));
	tfjob_error_free(err);
	tfjob_transport_free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("memory");
	TCase *tc = tcase_create("memory");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, create_get_and_metadata);
	tcase_add_test(tc, generate_name_and_pods);
	tcase_add_test(tc, update_conflicts_and_status);
	tcase_add_test(tc, merge_patch);
	tcase_add_test(tc, apply_options_and_memory_backend);
	tcase_add_test(tc, label_and_field_selectors);
	tcase_add_test(tc, pagination);
	tcase_add_test(tc, delete_preconditions_finalizers_gc);
	tcase_add_test(tc, create_event);
	tcase_add_test(tc, watch_events_and_resume);
	tcase_add_test(tc, watch_from_the_list_of_an_empty_store);
	tcase_add_test(tc, watch_selector_transitions);
	tcase_add_test(tc, watch_bookmarks_and_gone);
	tcase_add_test(tc, watch_sleeps_until_something_happens);
	tcase_add_test(tc, watch_stop_timeout_and_callback_stop);
	tcase_add_test(tc, concurrency_smoke);
	tcase_add_test(tc, descriptors_and_options);
	tcase_add_test(tc, custom_backend);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
