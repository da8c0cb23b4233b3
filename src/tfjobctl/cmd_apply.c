/*
 * tfjobctl apply -f FILE|DIR|- [-f ...] [--kubeconfig F] [--context C] [-n NS]: kubectl apply's read, then
 * create or update
 * SPDX-License-Identifier: Apache-2.0
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "connection.h"

void usage_apply(FILE *out)
{
	fprintf(out,
	        "usage: tfjobctl apply -f FILE [-f ...] [--server-side [--force-conflicts] [--field-manager M]]\n"
	        "                      [--validate=V] [--compat C] [--warnings-as-errors] [--kubeconfig F]\n"
	        "                      [--context C] [-n NS]\n\n"
	        "Create the TFJobs of FILE in the cluster, or update those that exist: their spec, labels\n"
	        "and annotations are replaced by FILE's (the server's metadata and status are kept).\n"
	        "A metadata.resourceVersion in FILE is a precondition (a stale one is a Conflict).\n"
	        "Every TFJob is validated first (as tfjobctl validate); if one is invalid (or cannot be\n"
	        "read), none is sent. Errors read FILE:LINE:COLUMN: tfjob/NAME: FIELD: ...\n"
	        "What the TFJob docs advise against is printed as \"Warning: ...\" on stderr, as kubectl\n"
	        "prints an API server's warnings: restartPolicy Never, GPUs without cpu/memory requests,\n"
	        "and pod templates without sidecar.istio.io/inject: \"false\" when the job's namespace is\n"
	        "labelled istio-injection=enabled.\n\n"
	        "  -f, --filename F     a file, a directory (its .yaml, .yml and .json files, in name\n"
	        "                       order) or '-' for standard input; repeatable; YAML or JSON,\n"
	        "                       multi-document\n"
	        "  --validate=V         what to do with fields the TFJob schema does not declare, as\n"
	        "                       kubectl's --validate: strict (default: refuse the TFJob),\n"
	        "                       warn (print them as warnings; the server prunes them) or\n"
	        "                       ignore (say nothing; the server prunes them). Checked here\n"
	        "                       and, with --server-side, by the API server (fieldValidation;\n"
	        "                       it cannot apply unknown fields at all: warn and ignore fail)\n"
	        "  --server-side        server-side apply: PATCH application/apply-patch+yaml; the\n"
	        "                       server merges FILE with what it stores by field ownership, so\n"
	        "                       an unchanged FILE changes nothing (prints 'serverside-applied')\n"
	        "  --force-conflicts    with --server-side: take over fields another manager owns\n"
	        "  --field-manager M    with --server-side: the manager name (default tfjobctl)\n"
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

/* kubectl's line for an object the server returned: "tfjob.kubeflow.org/NAME VERB". */
static void print_result_line(const char *stored_json, const char *verb)
{
	json_t *stored = json_loads(stored_json, 0, NULL);
	const char *name = json_string_value(json_object_get(json_object_get(stored, "metadata"), "name"));
	printf("tfjob.kubeflow.org/%s %s\n", name ? name : "", verb);
	json_decref(stored);
}

/* Create; returns TFJOB_EEXISTS untouched (err set) so that the caller can update instead. */
static int create_new(tfjob_transport *t, const char *ns, const char *text, tfjob_error **err)
{
	char *out = NULL;
	int rc = tfjob_transport_create(&out, t, &ctl_tfjobs, ns, text, err);
	if (rc == 0)
		print_result_line(out, "created");
	tfjob_free(out);
	return rc;
}

/* kubectl apply's --validate (what unknown fields do), --server-side and its flags. */
struct apply_mode {
	tfjob_field_validation validation;
	bool server_side;
	bool force;
	const char *field_manager;
};

/* Server-side apply of one TFJob, the server's warnings printed as kubectl prints them. */
static int server_side_apply(tfjob_transport *t, const char *ns, const char *text, const struct apply_mode *m,
                             tfjob_error **err)
{
	tfjob_apply_options ao = TFJOB_APPLY_OPTIONS_INIT;
	ao.field_manager = m->field_manager;
	ao.force = m->force;
	ao.field_validation = m->validation;
	char *out = NULL, *warnings = NULL;
	int rc = tfjob_transport_apply(&out, &warnings, t, &ctl_tfjobs, ns, text, &ao, err);
	for (char *line = warnings; line && *line;) {
		size_t len = strcspn(line, "\n");
		fprintf(stderr, "Warning: %.*s\n", (int)len, line);
		line += len + (line[len] != '\0');
	}
	if (rc == 0)
		print_result_line(out, "serverside-applied");
	tfjob_free(warnings);
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
static int apply_one(tfjob_transport *t, const char *flag_ns, tfjob_job *job, const struct apply_mode *m)
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
	if (m->server_side && (!name || !name[0])) {
		json_decref(desired);
		tfjob_free(text);
		return ctl_fail("apply: --server-side needs metadata.name (generateName is not supported by server-side apply)");
	} else if (m->server_side) {
		rc = server_side_apply(t, ns, text, m, &err);
	} else if (!name || !name[0]) {
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

/* Unknown fields reported by a strict check that the non-strict one lets pass, as warnings. */
static int warn_unknown_fields(const struct ctl_doc *d, const tfjob_validate_options *lax)
{
	tfjob_validate_options vo = *lax;
	vo.strict = 1;
	tfjob_field_errors *errs = NULL;
	tfjob_error *err = NULL;
	if (tfjob_job_validate(&errs, d->job, &vo, &err))
		return ctl_fail_err(err);
	/* The lax check found nothing: every error of the strict one is an unknown field. */
	ctl_print_doc_errors(stderr, errs, d, "Warning: ");
	tfjob_field_errors_free(errs);
	return EXIT_OK;
}

/*
 * The library's validation of every TFJob, unknown fields as --validate says. Also before a
 * server-side apply (which sends fieldValidation too): the API server cannot build the apply
 * configuration of a custom resource with unknown fields and answers 500 "field not declared in
 * schema" whatever fieldValidation says, so the library's message is the useful one.
 */
static int validate_all(const struct ctl_inputs *in, tfjob_compat compat, const struct apply_mode *m)
{
	int status = EXIT_OK;
	tfjob_field_validation fv = m->validation;
	for (size_t i = 0; i < in->count; i++) {
		tfjob_validate_options vo = TFJOB_VALIDATE_OPTIONS_INIT;
		vo.compat = compat;
		vo.strict = fv == TFJOB_FIELD_VALIDATION_STRICT;
		tfjob_field_errors *errs = NULL;
		tfjob_error *err = NULL;
		if (tfjob_job_validate(&errs, in->docs[i].job, &vo, &err))
			return ctl_fail_err(err);
		ctl_print_doc_errors(stderr, errs, &in->docs[i], "");
		bool invalid = tfjob_field_errors_count(errs) > 0;
		tfjob_field_errors_free(errs);
		if (invalid)
			status = EXIT_NEGATIVE;
		else if (fv == TFJOB_FIELD_VALIDATION_WARN && warn_unknown_fields(&in->docs[i], &vo))
			return EXIT_USAGE;
	}
	return status;
}

static bool parse_field_validation(tfjob_field_validation *out, const char *value)
{
	static const char *const names[] = { "strict", "warn", "ignore" }; /* indexed by tfjob_field_validation */
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(value, names[i])) {
			*out = (tfjob_field_validation)i;
			return true;
		}
	/* kubectl's older spellings: true is strict, false is ignore. */
	if (!strcmp(value, "true") || !strcmp(value, "false")) {
		*out = value[0] == 't' ? TFJOB_FIELD_VALIDATION_STRICT : TFJOB_FIELD_VALIDATION_IGNORE;
		return true;
	}
	return false;
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
		{ "validate", required_argument, NULL, 'V' },
		{ "server-side", no_argument, NULL, 'S' },
		{ "force-conflicts", no_argument, NULL, 'F' },
		{ "field-manager", required_argument, NULL, 'M' },
		{ "warnings-as-errors", no_argument, NULL, 'W' },
		{ NULL, 0, NULL, 0 },
	};
	struct ctl_cluster cl = { 0 };
	struct apply_mode mode = { TFJOB_FIELD_VALIDATION_STRICT, false, false, "tfjobctl" };
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
		else if (ch == 'V' && !parse_field_validation(&mode.validation, optarg))
			bad = ctl_fail("apply: --validate must be strict, warn or ignore, not '%s'", optarg);
		else if (ch == 'V')
			continue;
		else if (ch == 'S')
			mode.server_side = true;
		else if (ch == 'F')
			mode.force = true;
		else if (ch == 'M' && optarg[0])
			mode.field_manager = optarg;
		else if (ch == 'M')
			bad = ctl_fail("apply: --field-manager needs a name");
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
	int usage = EXIT_OK;
	if (cl.bad)
		usage = EXIT_USAGE;
	else if (!sources.count || optind != argc)
		usage = ctl_fail("apply: expected -f FILE and nothing else (see tfjobctl apply --help)");
	else if ((mode.force || strcmp(mode.field_manager, "tfjobctl")) && !mode.server_side)
		usage = ctl_fail("apply: --force-conflicts and --field-manager need --server-side");
	if (usage) {
		free(sources.paths);
		return usage;
	}
	struct ctl_inputs in = { 0 };
	int status = ctl_inputs_read(&in, &sources);
	if (status == EXIT_OK)
		status = validate_all(&in, cl.compat, &mode);
	tfjob_transport *t = NULL;
	if (status == EXIT_OK)
		status = ctl_connect(&t, &cl);
	if (status == EXIT_OK)
		status = warn_all(t, &in, cl.namespace_name, warnings_as_errors);
	/* As kubectl apply: every object is tried after a refusal; the worst outcome is the exit status. */
	int connected = status == EXIT_OK;
	for (size_t i = 0; connected && i < in.count; i++) {
		int r = apply_one(t, cl.namespace_name, in.docs[i].job, &mode);
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
