/*
 * The Kubernetes backend against a real kube-apiserver + etcd (tests/kube/harness.sh, started by
 * tests/suites/63-transport-kube.sh, which passes the harness's env file as environment). Every
 * verb on TFJobs, Pods, Services and Events, 409 conflicts and AlreadyExists, 422 causes, watch
 * resume and 410 relist, RBAC 403 messages, token rotation through tokenFile, exec plugins and
 * the in-cluster configuration. Skipped (exit 77) when KUBE_ADMIN_KUBECONFIG is not set.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testutil.h"
#include "transport/fault.h"

static const tfjob_resource TFJOBS = TFJOB_RESOURCE_TFJOBS_INIT;
static const tfjob_resource PODS = TFJOB_RESOURCE_PODS_INIT;
static const tfjob_resource SERVICES = TFJOB_RESOURCE_SERVICES_INIT;
static const tfjob_resource EVENTS = TFJOB_RESOURCE_EVENTS_INIT;
static const tfjob_resource NAMESPACES = TFJOB_RESOURCE_NAMESPACES_INIT;
static char ns[64];
static char *dir;

static const char *env(const char *name)
{
	const char *v = getenv(name);
	ck_assert_msg(v != NULL, "%s is not set", name);
	return v;
}

static tfjob_transport *connect_with(const char *kubeconfig)
{
	tfjob_kube_options o = TFJOB_KUBE_OPTIONS_INIT;
	o.kubeconfig = kubeconfig;
	o.namespace_name = ns;
	o.qps = -1;
	o.retry_base_ms = 50;
	tfjob_transport *t = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_kube_transport_new(&t, &o, &err);
	ck_assert_msg(rc == 0, "kube: %s", tfjob_error_message(err));
	return t;
}

static tfjob_transport *admin(void) { return connect_with(env("KUBE_ADMIN_KUBECONFIG")); }

static void setup(void)
{
	tfjob_global_init();
	dir = make_temp_dir();
	snprintf(ns, sizeof(ns), "transport-%d", (int)getpid());
	tfjob_transport *t = admin();
	char body[128];
	snprintf(body, sizeof(body), "{\"apiVersion\":\"v1\",\"kind\":\"Namespace\",\"metadata\":{\"name\":\"%s\"}}", ns);
	tfjob_error *err = NULL;
	int rc = tfjob_transport_create(NULL, t, &NAMESPACES, NULL, body, &err);
	ck_assert_msg(rc == 0, "namespace: %s", tfjob_error_message(err));
	tfjob_transport_free(t);
}

static void teardown(void)
{
	tfjob_transport *t = admin();
	tfjob_transport_delete(NULL, t, &NAMESPACES, NULL, ns, NULL, NULL);
	tfjob_transport_free(t);
	rm_rf(dir);
	free(dir);
	tfjob_global_cleanup();
}

static json_t *parse(char *text)
{
	json_t *v = json_loads(text, 0, NULL);
	ck_assert_msg(v != NULL, "not JSON: %s", text);
	tfjob_free(text);
	return v;
}

static const char *meta(const json_t *o, const char *f)
{
	return json_string_value(json_object_get(json_object_get(o, "metadata"), f));
}

static char *tfjob_text(const char *name, int workers)
{
	char *s = malloc(1024);
	snprintf(s, 1024,
	         "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"%s\",\"labels\":{\"suite\":\"transport\"}},"
	         "\"spec\":{\"tfReplicaSpecs\":{\"Worker\":{\"replicas\":%d,\"restartPolicy\":\"Never\",\"template\":{\"spec\":"
	         "{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"tf:2\"}]}}}}}}",
	         name, workers);
	return s;
}

static json_t *create_job(tfjob_transport *t, const char *name)
{
	char *text = tfjob_text(name, 1), *out = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_transport_create(&out, t, &TFJOBS, NULL, text, &err);
	free(text);
	ck_assert_msg(rc == 0, "create %s: %s", name, tfjob_error_message(err));
	return parse(out);
}

static char *dumps(const json_t *v)
{
	char *s = json_dumps(v, JSON_COMPACT);
	ck_assert_ptr_nonnull(s);
	return s;
}

START_TEST(tfjob_verbs_and_conflicts)
{
	tfjob_transport *t = admin();
	json_t *a = create_job(t, "a");
	ck_assert_str_eq(meta(a, "namespace"), ns);
	ck_assert_int_eq(strlen(meta(a, "uid")), 36);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(a, "metadata"), "generation")), 1);

	/* AlreadyExists. */
	tfjob_error *err = NULL;
	char *text = tfjob_text("a", 1);
	ck_assert_int_eq(tfjob_transport_create(NULL, t, &TFJOBS, NULL, text, &err), TFJOB_EEXISTS);
	ck_assert_int_eq(tfjob_error_http_status(err), 409);
	ck_assert_str_eq(tfjob_error_reason(err), "AlreadyExists");
	ck_assert_str_eq(tfjob_error_message(err), "tfjobs.kubeflow.org \"a\" already exists");
	tfjob_error_free(err);
	free(text);

	/* get. */
	char *out = NULL;
	ck_assert_int_eq(tfjob_transport_get(&out, t, &TFJOBS, NULL, "a", NULL), 0);
	json_t *g = parse(out);
	ck_assert_str_eq(meta(g, "resourceVersion"), meta(a, "resourceVersion"));

	/* update: the generation follows the spec; a stale resourceVersion is a 409 Conflict. */
	json_object_set_new(json_object_get(json_object_get(json_object_get(g, "spec"), "tfReplicaSpecs"), "Worker"),
	                    "replicas", json_integer(3));
	text = dumps(g);
	ck_assert_int_eq(tfjob_transport_update(&out, t, &TFJOBS, NULL, text, NULL), 0);
	json_t *u = parse(out);
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(u, "metadata"), "generation")), 2);
	ck_assert_int_eq(tfjob_transport_update(NULL, t, &TFJOBS, NULL, text, &err), TFJOB_ECONFLICT);
	ck_assert_int_eq(tfjob_error_http_status(err), 409);
	ck_assert_str_eq(tfjob_error_reason(err), "Conflict");
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "the object has been modified"));
	tfjob_error_free(err);
	free(text);

	/* update_status: only status changes. */
	json_t *s = json_deep_copy(u);
	json_object_set_new(s, "status", json_pack("{s:[{s:s, s:s, s:s}]}", "conditions", "type", "Created", "status",
	                                           "True", "reason", "TFJobCreated"));
	json_object_set_new(json_object_get(json_object_get(json_object_get(s, "spec"), "tfReplicaSpecs"), "Worker"),
	                    "replicas", json_integer(9));
	text = dumps(s);
	ck_assert_int_eq(tfjob_transport_update_status(&out, t, &TFJOBS, NULL, text, &err), 0);
	free(text);
	json_t *st = parse(out);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(json_object_get(st, "status"),
	                                                                                  "conditions"), 0), "type")), "Created");
	ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(json_object_get(json_object_get(st, "spec"),
	                                                                                    "tfReplicaSpecs"), "Worker"), "replicas")), 3);

	/* merge patch of the object and of its status. */
	ck_assert_int_eq(tfjob_transport_patch(&out, t, &TFJOBS, NULL, "a", NULL, "{\"metadata\":{\"labels\":{\"p\":\"1\"}}}", NULL), 0);
	json_t *p = parse(out);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(json_object_get(p, "metadata"), "labels"), "p")), "1");
	ck_assert_int_eq(tfjob_transport_patch(&out, t, &TFJOBS, NULL, "a", "status", "{\"status\":{\"startTime\":\"2024-01-01T00:00:00Z\"}}", &err), 0);
	json_t *ps = parse(out);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(ps, "status"), "startTime")), "2024-01-01T00:00:00Z");
	char patch[128];
	snprintf(patch, sizeof(patch), "{\"metadata\":{\"resourceVersion\":\"%s\"},\"spec\":{}}", meta(a, "resourceVersion"));
	ck_assert_int_eq(tfjob_transport_patch(NULL, t, &TFJOBS, NULL, "a", NULL, patch, &err), TFJOB_ECONFLICT);
	tfjob_error_free(err);

	/* list with a selector and pages. */
	json_decref(create_job(t, "b"));
	json_decref(create_job(t, "c"));
	tfjob_list_options lo = TFJOB_LIST_OPTIONS_INIT;
	lo.label_selector = "suite=transport";
	lo.limit = 2;
	ck_assert_int_eq(tfjob_transport_list(&out, t, &TFJOBS, NULL, &lo, NULL), 0);
	json_t *l1 = parse(out);
	ck_assert_int_eq(json_array_size(json_object_get(l1, "items")), 2);
	lo.continue_token = json_string_value(json_object_get(json_object_get(l1, "metadata"), "continue"));
	ck_assert_ptr_nonnull(lo.continue_token);
	ck_assert_int_eq(tfjob_transport_list(&out, t, &TFJOBS, NULL, &lo, NULL), 0);
	json_t *l2 = parse(out);
	ck_assert_int_eq(json_array_size(json_object_get(l2, "items")), 1);
	lo.continue_token = NULL;
	lo.limit = 0;
	lo.label_selector = "p=1";
	ck_assert_int_eq(tfjob_transport_list(&out, t, &TFJOBS, NULL, &lo, NULL), 0);
	json_t *l3 = parse(out);
	ck_assert_int_eq(json_array_size(json_object_get(l3, "items")), 1);

	/* 422 with the API server's causes. */
	ck_assert_int_eq(tfjob_transport_create(NULL, t, &TFJOBS, NULL,
	                                        "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"metadata\":{\"name\":\"bad\"},"
	                                        "\"spec\":{\"tfReplicaSpecs\":{\"Worker\":{\"replicas\":\"two\"}}}}", &err),
	                 TFJOB_EINVALID);
	ck_assert_int_eq(tfjob_error_http_status(err), 422);
	ck_assert_str_eq(tfjob_error_reason(err), "Invalid");
	ck_assert_ptr_nonnull(tfjob_error_details_json(err));
	ck_assert_ptr_nonnull(strstr(tfjob_error_details_json(err), "spec.tfReplicaSpecs.Worker.replicas"));
	tfjob_error_free(err);

	/* delete: preconditions, then for real. */
	tfjob_delete_options d = TFJOB_DELETE_OPTIONS_INIT;
	d.precondition_uid = "00000000-0000-0000-0000-000000000000";
	ck_assert_int_eq(tfjob_transport_delete(NULL, t, &TFJOBS, NULL, "a", &d, &err), TFJOB_ECONFLICT);
	ck_assert_msg(strstr(tfjob_error_message(err), "the UID in the precondition (") != NULL, "%s", tfjob_error_message(err));
	tfjob_error_free(err);
	d.precondition_uid = meta(a, "uid");
	d.propagation = TFJOB_PROPAGATION_BACKGROUND; /* Foreground needs the garbage collector, which is not running */
	ck_assert_int_eq(tfjob_transport_delete(NULL, t, &TFJOBS, NULL, "a", &d, NULL), 0);
	for (int i = 0; i < 100 && tfjob_transport_get(NULL, t, &TFJOBS, NULL, "a", NULL) == 0; i++)
		usleep(100000);
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &TFJOBS, NULL, "a", &err), TFJOB_ENOTFOUND);
	ck_assert_int_eq(tfjob_error_http_status(err), 404);
	ck_assert_str_eq(tfjob_error_reason(err), "NotFound");
	ck_assert_str_eq(tfjob_error_message(err), "tfjobs.kubeflow.org \"a\" not found");
	tfjob_error_free(err);
	json_t *objs[] = { a, g, u, s, st, p, ps, l1, l2, l3 };
	for (size_t i = 0; i < sizeof(objs) / sizeof(objs[0]); i++)
		json_decref(objs[i]);
	tfjob_transport_free(t);
}
END_TEST

START_TEST(pods_services_events)
{
	tfjob_transport *t = admin();
	json_t *job = create_job(t, "owner");
	char body[1024];
	snprintf(body, sizeof(body),
	         "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"owner-worker-0\",\"labels\":{\"job\":\"owner\"},"
	         "\"ownerReferences\":[{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\",\"name\":\"owner\",\"uid\":\"%s\","
	         "\"controller\":true,\"blockOwnerDeletion\":true}]},"
	         "\"spec\":{\"containers\":[{\"name\":\"tensorflow\",\"image\":\"tf:2\"}],\"restartPolicy\":\"Never\"}}",
	         meta(job, "uid"));
	char *out = NULL;
	tfjob_error *err = NULL;
	int rc = tfjob_transport_create(&out, t, &PODS, NULL, body, &err);
	ck_assert_msg(rc == 0, "pod: %s", tfjob_error_message(err));
	json_t *pod = parse(out);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(pod, "status"), "phase")), "Pending");
	/* A status update of the pod (what a kubelet does). */
	json_object_set_new(pod, "status", json_pack("{s:s}", "phase", "Running"));
	char *text = dumps(pod);
	ck_assert_int_eq(tfjob_transport_update_status(&out, t, &PODS, NULL, text, &err), 0);
	free(text);
	json_t *running = parse(out);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(running, "status"), "phase")), "Running");
	ck_assert_int_eq(tfjob_transport_create(NULL, t, &SERVICES, NULL,
	                                        "{\"apiVersion\":\"v1\",\"kind\":\"Service\",\"metadata\":{\"name\":\"owner-worker-0\"},"
	                                        "\"spec\":{\"clusterIP\":\"None\",\"selector\":{\"job\":\"owner\"},"
	                                        "\"ports\":[{\"name\":\"tfjob-port\",\"port\":2222}]}}", &err), 0);
	tfjob_list_options lo = TFJOB_LIST_OPTIONS_INIT;
	lo.label_selector = "job in (owner)";
	ck_assert_int_eq(tfjob_transport_list(&out, t, &PODS, NULL, &lo, NULL), 0);
	json_t *pl = parse(out);
	ck_assert_int_eq(json_array_size(json_object_get(pl, "items")), 1);
	/* An event about the job, found again by field selector. */
	char *jtext = dumps(job);
	rc = tfjob_transport_create_event(NULL, t, NULL, jtext, "Normal", "SuccessfulCreatePod", "Created pod: owner-worker-0",
	                                  NULL, &err);
	ck_assert_msg(rc == 0, "event: %s", tfjob_error_message(err));
	free(jtext);
	lo.label_selector = NULL;
	lo.field_selector = "involvedObject.name=owner,involvedObject.kind=TFJob";
	ck_assert_int_eq(tfjob_transport_list(&out, t, &EVENTS, NULL, &lo, NULL), 0);
	json_t *el = parse(out);
	ck_assert_int_eq(json_array_size(json_object_get(el, "items")), 1);
	ck_assert_str_eq(json_string_value(json_object_get(json_array_get(json_object_get(el, "items"), 0), "reason")),
	                 "SuccessfulCreatePod");
	ck_assert_int_eq(tfjob_transport_delete(NULL, t, &SERVICES, NULL, "owner-worker-0", NULL, NULL), 0);
	tfjob_delete_options d = TFJOB_DELETE_OPTIONS_INIT;
	d.grace_period_seconds = 0;
	ck_assert_int_eq(tfjob_transport_delete(NULL, t, &PODS, NULL, "owner-worker-0", &d, NULL), 0);
	json_decref(job);
	json_decref(pod);
	json_decref(running);
	json_decref(pl);
	json_decref(el);
	tfjob_transport_free(t);
}
END_TEST

/* ---- watches ---- */

struct collector {
	pthread_mutex_t mu;
	char log[8192];
	char last_rv[32];
	int count, closed, closed_code;
};

static int on_event(tfjob_watch_event type, const char *json, void *payload)
{
	struct collector *c = payload;
	json_t *v = json_loads(json, 0, NULL);
	pthread_mutex_lock(&c->mu);
	if (type != TFJOB_WATCH_BOOKMARK) {
		char line[128];
		snprintf(line, sizeof(line), "%s %s;", tfjob_watch_event_name(type), meta(v, "name"));
		strncat(c->log, line, sizeof(c->log) - strlen(c->log) - 1);
		c->count++;
	}
	snprintf(c->last_rv, sizeof(c->last_rv), "%s", meta(v, "resourceVersion") ? meta(v, "resourceVersion") : "");
	pthread_mutex_unlock(&c->mu);
	json_decref(v);
	return 0;
}

static void on_closed(int code, const tfjob_error *err, void *payload)
{
	(void)err;
	struct collector *c = payload;
	pthread_mutex_lock(&c->mu);
	c->closed = 1;
	c->closed_code = code;
	pthread_mutex_unlock(&c->mu);
}

static tfjob_watch *watch_from(tfjob_transport *t, struct collector *c, const char *rv)
{
	memset(c, 0, sizeof(*c));
	pthread_mutex_init(&c->mu, NULL);
	tfjob_watch_options wo = TFJOB_WATCH_OPTIONS_INIT;
	wo.on_event = on_event;
	wo.on_closed = on_closed;
	wo.payload = c;
	wo.resource_version = rv;
	wo.allow_bookmarks = 1;
	wo.label_selector = "suite=transport";
	tfjob_watch *w = NULL;
	ck_assert_int_eq(tfjob_transport_watch(&w, t, &TFJOBS, NULL, &wo, NULL), 0);
	return w;
}

static void wait_count(struct collector *c, int n)
{
	for (int i = 0; i < 300; i++) {
		pthread_mutex_lock(&c->mu);
		int have = c->count;
		pthread_mutex_unlock(&c->mu);
		if (have >= n)
			return;
		usleep(20000);
	}
	ck_abort_msg("timed out waiting for %d events: %s", n, c->log);
}

START_TEST(watch_resume_and_relist)
{
	tfjob_transport *t = admin();
	char *out = NULL;
	tfjob_list_options lo = TFJOB_LIST_OPTIONS_INIT;
	ck_assert_int_eq(tfjob_transport_list(&out, t, &TFJOBS, NULL, &lo, NULL), 0);
	json_t *l = parse(out);
	char start_rv[32];
	snprintf(start_rv, sizeof(start_rv), "%s", json_string_value(json_object_get(json_object_get(l, "metadata"), "resourceVersion")));
	json_decref(l);

	struct collector c;
	tfjob_watch *w = watch_from(t, &c, start_rv);
	json_t *x = create_job(t, "wx");
	ck_assert_int_eq(tfjob_transport_patch(NULL, t, &TFJOBS, NULL, "wx", NULL, "{\"metadata\":{\"annotations\":{\"a\":\"1\"}}}", NULL), 0);
	ck_assert_int_eq(tfjob_transport_delete(NULL, t, &TFJOBS, NULL, "wx", NULL, NULL), 0);
	wait_count(&c, 3);
	ck_assert_str_eq(c.log, "ADDED wx;MODIFIED wx;DELETED wx;");
	tfjob_watch_free(w);
	ck_assert_int_eq(c.closed_code, 0);

	/* Resume after the ADDED event: the later two only. */
	w = watch_from(t, &c, meta(x, "resourceVersion"));
	wait_count(&c, 2);
	usleep(300000);
	ck_assert_str_eq(c.log, "MODIFIED wx;DELETED wx;");
	tfjob_watch_free(w);

	/* A version from before the watch cache: 410, the caller must list again. */
	w = watch_from(t, &c, "1");
	ck_assert_int_eq(tfjob_watch_wait(w, 20000), 0);
	ck_assert_int_eq(c.closed_code, TFJOB_EGONE);
	tfjob_watch_free(w);
	/* Relist and watch from the list's version. */
	ck_assert_int_eq(tfjob_transport_list(&out, t, &TFJOBS, NULL, &lo, NULL), 0);
	l = parse(out);
	w = watch_from(t, &c, json_string_value(json_object_get(json_object_get(l, "metadata"), "resourceVersion")));
	json_decref(create_job(t, "wy"));
	wait_count(&c, 1);
	ck_assert_str_eq(c.log, "ADDED wy;");
	tfjob_watch_free(w);
	json_decref(l);
	json_decref(x);
	tfjob_transport_free(t);
}
END_TEST

/* ---- authorization and credentials ---- */

START_TEST(rbac_forbidden_message)
{
	tfjob_transport *t = connect_with(env("KUBE_USER_KUBECONFIG"));
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_transport_list(NULL, t, &TFJOBS, NULL, NULL, &err), TFJOB_EFORBIDDEN);
	ck_assert_int_eq(tfjob_error_http_status(err), 403);
	char want[256];
	snprintf(want, sizeof(want), "tfjobs.kubeflow.org is forbidden: User \"libtfjob-user\" cannot list resource "
	         "\"tfjobs\" in API group \"kubeflow.org\" in the namespace \"%s\"", ns);
	ck_assert_str_eq(tfjob_error_message(err), want);
	tfjob_error_free(err);
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &PODS, NULL, "x", &err), TFJOB_EFORBIDDEN);
	tfjob_error_free(err);
	tfjob_transport_free(t);
}
END_TEST

/* A kubeconfig for the API server with the given user YAML lines. */
static const char *user_kubeconfig(const char *name, const char *user)
{
	char path[1024], text[8192];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	snprintf(text, sizeof(text),
	         "current-context: c\nclusters:\n- name: k\n  cluster:\n    server: %s\n    certificate-authority: %s\n"
	         "users:\n- name: u\n  user:\n%s"
	         "contexts:\n- name: c\n  context: {cluster: k, user: u}\n",
	         env("KUBE_APISERVER_URL"), env("KUBE_CA_CERT"), user);
	write_text(path, text);
	static char out[1024];
	snprintf(out, sizeof(out), "%s", path);
	return out;
}

START_TEST(token_rotation)
{
	char token_file[1024], user[2048];
	snprintf(token_file, sizeof(token_file), "%s/token", dir);
	write_text(token_file, "not-a-valid-token\n");
	snprintf(user, sizeof(user), "    tokenFile: %s\n", token_file);
	tfjob_transport *t = connect_with(user_kubeconfig("token.yaml", user));
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &TFJOBS, NULL, "x", &err), TFJOB_EUNAUTHORIZED);
	ck_assert_int_eq(tfjob_error_http_status(err), 401);
	ck_assert_ptr_null(strstr(tfjob_error_message(err), "not-a-valid-token"));
	tfjob_error_free(err);
	/* The token rotates: the next request gets 401 with the cached token, reads the file again
	 * and is authenticated (as a user without rights: 403 naming it). */
	write_text(token_file, env("KUBE_USER_TOKEN"));
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &TFJOBS, NULL, "x", &err), TFJOB_EFORBIDDEN);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "User \"libtfjob-token-user\""));
	tfjob_error_free(err);
	tfjob_transport_free(t);
}
END_TEST

START_TEST(exec_plugin_and_in_cluster)
{
	char plugin[1024], text[2048];
	snprintf(plugin, sizeof(plugin), "%s/plugin.sh", dir);
	snprintf(text, sizeof(text),
	         "#!/bin/sh\nprintf '{\"apiVersion\":\"client.authentication.k8s.io/v1\",\"kind\":\"ExecCredential\","
	         "\"status\":{\"token\":\"%s\"}}'\n", env("KUBE_USER_TOKEN"));
	write_text(plugin, text);
	chmod(plugin, 0755);
	snprintf(text, sizeof(text), "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      command: %s\n", plugin);
	tfjob_transport *t = connect_with(user_kubeconfig("exec.yaml", text));
	tfjob_error *err = NULL;
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &TFJOBS, NULL, "x", &err), TFJOB_EFORBIDDEN);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "User \"libtfjob-token-user\""));
	tfjob_error_free(err);
	tfjob_transport_free(t);

	/* In-cluster: the service-account directory and KUBERNETES_SERVICE_HOST/PORT. */
	char sa[1024], path[1100], cmd[2400];
	snprintf(sa, sizeof(sa), "%s/sa", dir);
	mkdir(sa, 0700);
	snprintf(path, sizeof(path), "%s/token", sa);
	write_text(path, env("KUBE_USER_TOKEN"));
	snprintf(path, sizeof(path), "%s/namespace", sa);
	write_text(path, ns);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/ca.crt'", env("KUBE_CA_CERT"), sa);
	ck_assert_int_eq(system(cmd), 0);
	const char *url = env("KUBE_APISERVER_URL");
	const char *port = strrchr(url, ':') + 1;
	setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1", 1);
	setenv("KUBERNETES_SERVICE_PORT", port, 1);
	tfjob_kube_options o = TFJOB_KUBE_OPTIONS_INIT;
	o.source = TFJOB_KUBE_SOURCE_IN_CLUSTER;
	o.in_cluster_dir = sa;
	ck_assert_int_eq(tfjob_kube_transport_new(&t, &o, &err), 0);
	ck_assert_str_eq(tfjob_transport_namespace(t), ns);
	ck_assert_int_eq(tfjob_transport_get(NULL, t, &TFJOBS, NULL, "x", &err), TFJOB_EFORBIDDEN);
	ck_assert_ptr_nonnull(strstr(tfjob_error_message(err), "libtfjob-token-user"));
	tfjob_error_free(err);
	tfjob_transport_free(t);
}
END_TEST

/* ---- the memory backend answers as the API server does ---- */

/* Append "step: CODE HTTP message" (the message cut before the first '(' to drop versions and uids). */
static void note(char *log, size_t size, const char *step, int rc, tfjob_error *err)
{
	char msg[512];
	snprintf(msg, sizeof(msg), "%s", tfjob_error_message(err));
	char *paren = strchr(msg, '(');
	if (paren)
		*paren = '\0';
	char line[700];
	snprintf(line, sizeof(line), "%s: %s %d %s\n", step, tfjob_error_code_name(rc), tfjob_error_http_status(err), msg);
	strncat(log, line, size - strlen(log) - 1);
	tfjob_error_free(err);
}

static long generation_of(tfjob_transport *t, const char *name)
{
	char *out = NULL;
	if (tfjob_transport_get(&out, t, &TFJOBS, NULL, name, NULL))
		return -1;
	json_t *v = parse(out);
	long g = (long)json_integer_value(json_object_get(json_object_get(v, "metadata"), "generation"));
	json_decref(v);
	return g;
}

/* Run one call and note its outcome. */
#define STEP(name, call)                               \
	do {                                           \
		tfjob_error *err = NULL;               \
		int step_rc = (call);                  \
		note(log, size, name, step_rc, err);   \
	} while (0)

static void scenario(tfjob_transport *t, char *log, size_t size)
{
	char *text = tfjob_text("p1", 1), *out = NULL;
	STEP("create", tfjob_transport_create(&out, t, &TFJOBS, NULL, text, &err));
	json_t *created = parse(out);
	STEP("create again", tfjob_transport_create(NULL, t, &TFJOBS, NULL, text, &err));
	STEP("get missing", tfjob_transport_get(NULL, t, &TFJOBS, NULL, "nope", &err));
	free(text);
	json_object_set_new(json_object_get(created, "metadata"), "labels", json_pack("{s:s}", "step", "update"));
	text = dumps(created);
	STEP("update", tfjob_transport_update(NULL, t, &TFJOBS, NULL, text, &err));
	STEP("update stale", tfjob_transport_update(NULL, t, &TFJOBS, NULL, text, &err));
	free(text);
	STEP("update without version", tfjob_transport_update(NULL, t, &TFJOBS, NULL, "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\","
	                            "\"metadata\":{\"name\":\"p1\"},\"spec\":{}}", &err));
	STEP("update missing", tfjob_transport_update(NULL, t, &TFJOBS, NULL, "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\","
	                            "\"metadata\":{\"name\":\"nope\",\"resourceVersion\":\"1\"},\"spec\":{}}", &err));
	STEP("update_status missing", tfjob_transport_update_status(NULL, t, &TFJOBS, NULL, "{\"apiVersion\":\"kubeflow.org/v1\",\"kind\":\"TFJob\","
	                                   "\"metadata\":{\"name\":\"nope\",\"resourceVersion\":\"1\"}}", &err));
	STEP("patch missing", tfjob_transport_patch(NULL, t, &TFJOBS, NULL, "nope", NULL, "{}", &err));
	STEP("patch stale", tfjob_transport_patch(NULL, t, &TFJOBS, NULL, "p1", NULL, "{\"metadata\":{\"resourceVersion\":\"123456789\"}}", &err));
	char line[64];
	long g1 = generation_of(t, "p1");
	tfjob_transport_patch(NULL, t, &TFJOBS, NULL, "p1", NULL, "{\"metadata\":{\"labels\":{\"x\":\"y\"}}}", NULL);
	long g2 = generation_of(t, "p1");
	tfjob_transport_patch(NULL, t, &TFJOBS, NULL, "p1", NULL, "{\"spec\":{\"runPolicy\":{\"backoffLimit\":3}}}", NULL);
	long g3 = generation_of(t, "p1");
	tfjob_transport_patch(NULL, t, &TFJOBS, NULL, "p1", "status", "{\"status\":{\"startTime\":\"2024-01-01T00:00:00Z\"}}", NULL);
	long g4 = generation_of(t, "p1");
	snprintf(line, sizeof(line), "generations: %ld %ld %ld %ld\n", g1, g2, g3, g4);
	strncat(log, line, size - strlen(log) - 1);
	/* An update that also changes status: the status part is ignored. */
	char *cur = NULL;
	ck_assert_int_eq(tfjob_transport_get(&cur, t, &TFJOBS, NULL, "p1", NULL), 0);
	json_t *obj = parse(cur);
	json_object_set_new(obj, "status", json_pack("{s:s}", "startTime", "2030-01-01T00:00:00Z"));
	json_object_set_new(json_object_get(obj, "metadata"), "annotations", json_pack("{s:s}", "a", "b"));
	char *upd = dumps(obj);
	STEP("update with status", tfjob_transport_update(&cur, t, &TFJOBS, NULL, upd, &err));
	free(upd);
	json_decref(obj);
	obj = parse(cur);
	snprintf(line, sizeof(line), "status kept: %s\n",
	         json_string_value(json_object_get(json_object_get(obj, "status"), "startTime")));
	strncat(log, line, size - strlen(log) - 1);
	json_decref(obj);
	tfjob_delete_options d = TFJOB_DELETE_OPTIONS_INIT;
	d.precondition_uid = "00000000-0000-0000-0000-000000000001";
	STEP("delete wrong uid", tfjob_transport_delete(NULL, t, &TFJOBS, NULL, "p1", &d, &err));
	d.precondition_uid = NULL;
	d.precondition_resource_version = "123456789";
	STEP("delete wrong version", tfjob_transport_delete(NULL, t, &TFJOBS, NULL, "p1", &d, &err));
	STEP("delete", tfjob_transport_delete(NULL, t, &TFJOBS, NULL, "p1", NULL, &err));
	for (int i = 0; i < 50 && tfjob_transport_get(NULL, t, &TFJOBS, NULL, "p1", NULL) == 0; i++)
		usleep(100000);
	STEP("delete missing", tfjob_transport_delete(NULL, t, &TFJOBS, NULL, "p1", NULL, &err));
	json_decref(created);
}

/* Watch events with selector transitions, as a log of types. */
static void watch_scenario(tfjob_transport *t, char *log, size_t size)
{
	char *text = tfjob_text("wp", 1), *out = NULL;
	ck_assert_int_eq(tfjob_transport_create(&out, t, &TFJOBS, NULL, text, NULL), 0);
	free(text);
	json_t *created = parse(out);
	struct collector c;
	tfjob_watch *w = watch_from(t, &c, meta(created, "resourceVersion"));
	tfjob_transport_patch(NULL, t, &TFJOBS, NULL, "wp", NULL, "{\"metadata\":{\"labels\":{\"suite\":\"other\"}}}", NULL);
	tfjob_transport_patch(NULL, t, &TFJOBS, NULL, "wp", NULL, "{\"spec\":{\"runPolicy\":{\"backoffLimit\":1}}}", NULL);
	tfjob_transport_patch(NULL, t, &TFJOBS, NULL, "wp", NULL, "{\"metadata\":{\"labels\":{\"suite\":\"transport\"}}}", NULL);
	tfjob_transport_patch(NULL, t, &TFJOBS, NULL, "wp", "status", "{\"status\":{\"startTime\":\"2024-01-01T00:00:00Z\"}}", NULL);
	tfjob_transport_delete(NULL, t, &TFJOBS, NULL, "wp", NULL, NULL);
	wait_count(&c, 4);
	usleep(300000);
	tfjob_watch_free(w);
	strncat(log, c.log, size - strlen(log) - 1);
	json_decref(created);
}

START_TEST(memory_backend_watch_parity)
{
	char real[4096] = "", fake[4096] = "";
	tfjob_transport *t = admin();
	watch_scenario(t, real, sizeof(real));
	tfjob_transport_free(t);
	tfjob_memory_options mo = TFJOB_MEMORY_OPTIONS_INIT;
	mo.default_namespace = ns;
	ck_assert_int_eq(tfjob_memory_transport_new(&t, &mo, NULL), 0);
	watch_scenario(t, fake, sizeof(fake));
	tfjob_transport_free(t);
	ck_assert_str_eq(real, "DELETED wp;ADDED wp;MODIFIED wp;DELETED wp;");
	ck_assert_str_eq(fake, real);
}
END_TEST

START_TEST(memory_backend_parity)
{
	char real[8192] = "", fake[8192] = "";
	tfjob_transport *t = admin();
	scenario(t, real, sizeof(real));
	tfjob_transport_free(t);
	tfjob_memory_options mo = TFJOB_MEMORY_OPTIONS_INIT;
	mo.default_namespace = ns;
	ck_assert_int_eq(tfjob_memory_transport_new(&t, &mo, NULL), 0);
	scenario(t, fake, sizeof(fake));
	tfjob_transport_free(t);
	ck_assert_msg(!strcmp(real, fake), "kube-apiserver:\n%s\nmemory backend:\n%s", real, fake);
	if (getenv("TFJOB_SHOW_PARITY"))
		fputs(real, stderr);
}
END_TEST

int main(void)
{
	if (!getenv("KUBE_ADMIN_KUBECONFIG")) {
		fprintf(stderr, "test_kube_apiserver: KUBE_ADMIN_KUBECONFIG is not set (run tests/suites/63-transport-kube.sh)\n");
		return 77;
	}
	Suite *s = suite_create("kube-apiserver");
	TCase *tc = tcase_create("kube-apiserver");
	tcase_set_timeout(tc, 120);
	tcase_add_unchecked_fixture(tc, setup, teardown);
	tcase_add_test(tc, tfjob_verbs_and_conflicts);
	tcase_add_test(tc, pods_services_events);
	tcase_add_test(tc, watch_resume_and_relist);
	tcase_add_test(tc, rbac_forbidden_message);
	tcase_add_test(tc, token_rotation);
	tcase_add_test(tc, exec_plugin_and_in_cluster);
	tcase_add_test(tc, memory_backend_parity);
	tcase_add_test(tc, memory_backend_watch_parity);
	suite_add_tcase(s, tc);
	return tu_run(s);
}
