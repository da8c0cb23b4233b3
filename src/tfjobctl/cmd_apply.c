/*
 * tfjobctl apply -f FILE|DIR|- [-f ...] [--kubeconfig F] [--context C] [-n NS]: kubectl apply's read, then
 * create or update
 * SPDX-License-Identifier: Apache-2.0
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster.h"

void usage_apply(FILE *out)
{
	fprintf(out,
	        "usage: tfjobctl apply -f FILE [-f ...] [--compat C] [--warnings-as-errors] [--kubeconfig F]\n"
	        "                      [--context C] [-n NS]\n\n"
	        "Create the TFJobs of FILE in the cluster, or update those that exist: their spec, labels\n"
	        "and annotations are replaced by FILE's (the server's metadata and status are kept).\n"
	        "A metadata.resourceVersion in FILE is a precondition (a stale one is a Conflict).\n"
	        "Every TFJob is validated first; if one is invalid (or cannot be read), none is sent.\n"
	        "What the TFJob docs advise against is printed as \"Warning: ...\" on stderr, as kubectl\n"
	        "prints an API server's warnings: restartPolicy Never, GPUs without cpu/memory requests,\n"
	        "and pod templates without sidecar.istio.io/inject: \"false\" when the job's namespace is\n"
	        "labelled istio-injection=enabled.\n\n"
	        "  -f, --filename F  a file, a directory (its .yaml, .yml and .json files, in name order)\n"
	        "                  or '-' for standard input; repeatable; YAML or JSON, multi-document\n"
	        CTL_WARNINGS_AS_ERRORS_USAGE
	        "                  (checked before anything is sent: then nothing is)\n"
	        CTL_CLUSTER_USAGE "\n"
	        "Exit status: 0 applied, 1 invalid or refused by the server, 2 usage, input,\n"
	        "configuration or connection error.\n");
}

/* The server's object with the desired spec, labels and annotations. */
static json_t *merged_object(const json_t *server, const json_t *desired)
{
	json_t *next = json_deep_copy(server);
	const char *key;
	json_t *v;
	json_object_foreach((json_t *)desired, key, v) {
		if (strcmp(key, "metadata") && strcmp(key, "status"))
			json_object_set(next, key, v);
	}
	json_t *meta = json_object_get(next, "metadata");
	const json_t *dmeta = json_object_get(desired, "metadata");
	static const char *const keys[] = { "labels", "annotations", "finalizers", "ownerReferences" };
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		json_t *dv = json_object_get(dmeta, keys[i]);
		if (dv)
			json_object_set(meta, keys[i], dv);
		else if (i < 2)
			json_object_del(meta, keys[i]);
	}
	return next;
}

/*
 * Whether the object we would PUT (`next`) is what the server has: as json_equal(), except that
 * a null in `next` where the server has no such field is equal (the server drops or prunes a
 * null: e.g. template.metadata.creationTimestamp: null, which a CRD with a pod template schema
 * prunes, so a PUT of it would store nothing new).
 */
static int same_object(const json_t *next, const json_t *server)
{
	if (json_is_object(next) && json_is_object(server)) {
		const char *key;
		json_t *v;
		size_t n = 0;
		json_object_foreach((json_t *)next, key, v) {
			json_t *sv = json_object_get(server, key);
			if (!sv && json_is_null(v))
				continue;
			if (!sv || !same_object(v, sv))
				return 0;
			n++;
		}
		return n == json_object_size(server);
	}
	if (json_is_array(next) && json_is_array(server)) {
		if (json_array_size(next) != json_array_size(server))
			return 0;
		for (size_t i = 0; i < json_array_size(next); i++)
			if (!same_object(json_array_get(next, i), json_array_get(server, i)))
				return 0;
		return 1;
	}
	return json_equal(next, server);
}

/*
 * Update the TFJob the server has (server: its JSON, consumed) to what FILE says. A resourceVersion
 * in FILE is a precondition, as kubectl apply's patch carries it: a stale one is a Conflict.
 * Without one, the update is made at the server's version, read again after a conflict.
 */
static int update_existing(tfjob_transport *t, const char *ns, const char *name, const json_t *desired, char *server_text,
                           tfjob_error **err)
{
	const char *want_rv = json_string_value(json_object_get(json_object_get(desired, "metadata"), "resourceVersion"));
	for (int attempt = 0;; attempt++) {
		int rc = 0;
		char *text = server_text;
		server_text = NULL;
		if (!text && (rc = tfjob_transport_get(&text, t, &ctl_tfjobs, ns, name, err)))
			return rc;
		json_t *server = json_loads(text, 0, NULL);
		tfjob_free(text);
		if (!json_is_object(server)) {
			json_decref(server);
			ctl_fail("apply: the server sent something that is not JSON");
			return TFJOB_EPARSE;
		}
		json_t *next = merged_object(server, desired);
		if (want_rv && want_rv[0])
			json_object_set_new(json_object_get(next, "metadata"), "resourceVersion", json_string(want_rv));
		if (same_object(next, server)) {
			/* Nothing to change: no request, as kubectl apply sends no empty patch. */
			printf("tfjob.kubeflow.org/%s unchanged\n", name);
			json_decref(next);
			json_decref(server);
			return 0;
		}
		char *body = json_dumps(next, JSON_COMPACT);
		char *out = NULL;
		rc = tfjob_transport_update(&out, t, &ctl_tfjobs, ns, body, err);
		if (rc == 0) {
			json_t *stored = json_loads(out, 0, NULL);
			const char *before = json_string_value(json_object_get(json_object_get(server, "metadata"), "resourceVersion"));
			const char *after = json_string_value(json_object_get(json_object_get(stored, "metadata"), "resourceVersion"));
			printf("tfjob.kubeflow.org/%s %s\n", name, before && after && !strcmp(before, after) ? "unchanged" : "configured");
			json_decref(stored);
		}
		tfjob_free(out);
		free(body);
		json_decref(next);
		json_decref(server);
		if (rc != TFJOB_ECONFLICT || (want_rv && want_rv[0]) || attempt == 4)
			return rc;
		tfjob_error_free(*err);
		*err = NULL;
	}
}

/* Create; returns TFJOB_EEXISTS untouched (err set) so that the caller can update instead. */
static int create_new(tfjob_transport *t, const char *ns, const char *text, tfjob_error **err)
{
	char *out = NULL;
	int rc = tfjob_transport_create(&out, t, &ctl_tfjobs, ns, text, err);
	if (rc == 0) {
		json_t *created = json_loads(out, 0, NULL);
		const char *name = json_string_value(json_object_get(json_object_get(created, "metadata"), "name"));
		printf("tfjob.kubeflow.org/%s created\n", name ? name : "");
		json_decref(created);
	}
	tfjob_free(out);
	return rc;
}

/* The namespace a job goes to: its own, else -n, else the context's. */
static const char *target_namespace(tfjob_transport *t, const char *flag_ns, const tfjob_job *job)
{
	const char *ons = tfjob_job_namespace(job);
	return ons ? ons : flag_ns ? flag_ns : tfjob_transport_namespace(t);
}

/* As kubectl apply: read the object; create it when there is none, else update it. */
static int apply_one(tfjob_transport *t, const char *flag_ns, tfjob_job *job)
{
	char *text = NULL;
	tfjob_error *err = NULL;
	if (tfjob_job_to_json(&text, job, TFJOB_JSON_COMPACT, &err))
		return ctl_fail_err(err);
	json_t *desired = json_loads(text, 0, NULL);
	const char *name = tfjob_job_name(job);
	const char *ons = tfjob_job_namespace(job);
	if (ons && flag_ns && strcmp(ons, flag_ns)) {
		json_decref(desired);
		tfjob_free(text);
		return ctl_fail("apply: the namespace from the provided object \"%s\" does not match the namespace \"%s\". "
		                "You must pass '--namespace=%s' to perform this operation.", ons, flag_ns, ons);
	}
	const char *ns = target_namespace(t, flag_ns, job);
	int rc;
	if (!name || !name[0]) {
		rc = create_new(t, ns, text, &err); /* generateName */
	} else {
		char *current = NULL;
		rc = tfjob_transport_get(&current, t, &ctl_tfjobs, ns, name, &err);
		if (rc == TFJOB_ENOTFOUND) {
			tfjob_error_free(err);
			err = NULL;
			rc = create_new(t, ns, text, &err);
			if (rc == TFJOB_EEXISTS) { /* created meanwhile by someone else */
				tfjob_error_free(err);
				err = NULL;
				rc = update_existing(t, ns, name, desired, NULL, &err);
			}
		} else if (rc == 0) {
			rc = update_existing(t, ns, name, desired, current, &err);
			current = NULL;
		}
		tfjob_free(current);
	}
	json_decref(desired);
	tfjob_free(text);
	if (rc == TFJOB_EPARSE && !err)
		return EXIT_USAGE;
	return rc ? ctl_api_fail(err) : EXIT_OK;
}

static int validate_all(const struct ctl_inputs *in, tfjob_compat compat)
{
	int status = EXIT_OK;
	for (size_t i = 0; i < in->count; i++) {
		tfjob_validate_options vo = TFJOB_VALIDATE_OPTIONS_INIT;
		vo.compat = compat;
		tfjob_field_errors *errs = NULL;
		tfjob_error *err = NULL;
		if (tfjob_job_validate(&errs, in->docs[i].job, &vo, &err))
			return ctl_fail_err(err);
		for (size_t j = 0; j < tfjob_field_errors_count(errs); j++) {
			ctl_doc_prefix(stderr, &in->docs[i]);
			fprintf(stderr, "%s\n", tfjob_field_errors_message(errs, j));
			status = EXIT_NEGATIVE;
		}
		tfjob_field_errors_free(errs);
	}
	return status;
}

/* The namespace is labelled istio-injection=enabled. A namespace we may not read is taken as
 * not injecting: the warning is advice, never a reason to fail. */
static bool injects_istio(tfjob_transport *t, const char *ns)
{
	static const tfjob_resource namespaces = TFJOB_RESOURCE_NAMESPACES_INIT;
	char *text = NULL;
	tfjob_error *err = NULL;
	if (tfjob_transport_get(&text, t, &namespaces, NULL, ns, &err)) {
		tfjob_error_free(err);
		return false;
	}
	json_t *obj = json_loads(text, 0, NULL);
	tfjob_free(text);
	const char *v = json_string_value(
		json_object_get(json_object_get(json_object_get(obj, "metadata"), "labels"), "istio-injection"));
	bool on = v && !strcmp(v, "enabled");
	json_decref(obj);
	return on;
}

/* Print every job's warnings; EXIT_NEGATIVE when there are some and they count as errors. */
static int warn_all(tfjob_transport *t, const struct ctl_inputs *in, const char *flag_ns, bool as_errors)
{
	int warned = 0;
	const char *last_ns = NULL;
	bool istio = false;
	for (size_t i = 0; i < in->count; i++) {
		const char *ns = target_namespace(t, flag_ns, in->docs[i].job);
		if (!last_ns || strcmp(ns, last_ns)) /* one read per run of jobs in the same namespace */
			istio = injects_istio(t, ns);
		last_ns = ns;
		int n = ctl_print_warnings(in->docs[i].job, istio);
		if (n < 0)
			return EXIT_USAGE;
		warned += n;
	}
	return warned && as_errors ? EXIT_NEGATIVE : EXIT_OK;
}

int cmd_apply(int argc, char **argv)
{
	static const struct option longopts[] = {
		CTL_CLUSTER_LONGOPTS,
		{ "filename", required_argument, NULL, 'f' },
		{ "warnings-as-errors", no_argument, NULL, 'W' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl_cluster cl = { 0 };
	struct ctl_sources sources = { 0 };
	bool warnings_as_errors = false;
	int ch;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":f:n:", longopts, NULL)) != -1) {
		if (ctl_cluster_option(&cl, ch, optarg))
			continue;
		int bad = 0;
		if (ch == 'f')
			bad = ctl_sources_add(&sources, ctl_flag_value(optarg));
		else if (ch == 'W')
			warnings_as_errors = true;
		else if (ch == ':')
			bad = ctl_fail("apply: option '%s' needs a value", argv[optind - 1]);
		else
			bad = ctl_fail("apply: unknown option '%s' (see tfjobctl apply --help)", argv[optind - 1]);
		if (bad) {
			free(sources.paths);
			return EXIT_USAGE;
		}
	}
	if (cl.bad || !sources.count || optind != argc) {
		free(sources.paths);
		return cl.bad ? EXIT_USAGE : ctl_fail("apply: expected -f FILE and nothing else (see tfjobctl apply --help)");
	}
	struct ctl_inputs in = { 0 };
	int status = ctl_inputs_read(&in, &sources);
	if (status == EXIT_OK)
		status = validate_all(&in, cl.compat);
	tfjob_transport *t = NULL;
	if (status == EXIT_OK)
		status = ctl_connect(&t, &cl);
	if (status == EXIT_OK)
		status = warn_all(t, &in, cl.namespace_name, warnings_as_errors);
	/* As kubectl apply: every object is tried after a refusal; the worst outcome is the exit status. */
	int connected = status == EXIT_OK;
	for (size_t i = 0; connected && i < in.count; i++) {
		int r = apply_one(t, cl.namespace_name, in.docs[i].job);
		if (r > status)
			status = r;
		if (r == EXIT_USAGE)
			break; /* no connection (or no sense from the server): the rest would fare the same */
	}
	if (t)
		ctl_disconnect(t);
	ctl_inputs_free(&in);
	return status;
}
