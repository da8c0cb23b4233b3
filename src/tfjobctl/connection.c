/*
 * tfjobctl: what the cluster commands (apply, get, describe, delete, watch) share: the
 * --kubeconfig/--context/--namespace flags, the connection, error reporting, ages, YAML output.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "connection.h"

const tfjob_resource ctl_tfjobs = TFJOB_RESOURCE_TFJOBS_INIT;
const tfjob_resource ctl_events = TFJOB_RESOURCE_EVENTS_INIT;

int ctl_cluster_option(struct ctl_cluster *c, int ch, const char *value)
{
	switch (ch) {
	case CTL_OPT_KUBECONFIG:
		c->kubeconfig = value;
		return 1;
	case CTL_OPT_CONTEXT:
		c->context = value;
		return 1;
	case 'n':
		c->namespace_name = ctl_flag_value(value);
		return 1;
	case CTL_OPT_COMPAT:
		if (!ctl_parse_compat(&c->compat, value))
			c->bad = 1;
		return 1;
	case CTL_OPT_REQUEST_TIMEOUT:
		if (!ctl_parse_duration_ms(&c->request_timeout_ms, value)) {
			ctl_fail("invalid --request-timeout '%s' (e.g. 30s, 1m, 500ms or a number of seconds)", value);
			c->bad = 1;
		}
		return 1;
	default:
		return 0;
	}
}

const char *ctl_flag_value(const char *value) { return value && value[0] == '=' ? value + 1 : value; }

const char *ctl_object_name(const char *arg, const char *command)
{
	const char *slash = strchr(arg, '/');
	if (!slash)
		return arg;
	static const char *const types[] = { "tfjob", "tfjobs", "tfjob.kubeflow.org", "tfjobs.kubeflow.org",
	                                     "tfjob.v1.kubeflow.org", "tfjobs.v1.kubeflow.org" };
	size_t n = (size_t)(slash - arg);
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strlen(types[i]) == n && !strncmp(arg, types[i], n) && slash[1] && !strchr(slash + 1, '/'))
			return slash + 1;
	ctl_fail("%s: '%s' is not a TFJob (NAME or tfjob.kubeflow.org/NAME)", command, arg);
	return NULL;
}

int ctl_connect(tfjob_transport **out, const struct ctl_cluster *c)
{
	if (c->bad)
		return EXIT_USAGE;
	if (tfjob_global_init())
		return ctl_fail("cannot initialise the transport layer");
	tfjob_kube_options opts = TFJOB_KUBE_OPTIONS_INIT;
	opts.kubeconfig = c->kubeconfig;
	opts.context = c->context;
	opts.namespace_name = c->namespace_name;
	opts.user_agent = "tfjobctl/" TFJOB_VERSION;
	if (c->request_timeout_ms > 0)
		opts.request_timeout_ms = c->request_timeout_ms;
	/* A command line gives up sooner than a controller: about 1.5 s of backoff (Retry-After
	 * still honoured) before an unreachable server is reported, not the library's 6 s. */
	opts.max_retries = 3;
	tfjob_error *err = NULL;
	if (tfjob_kube_transport_new(out, &opts, &err)) {
		tfjob_global_cleanup();
		return ctl_fail_err(err);
	}
	return 0;
}

void ctl_disconnect(tfjob_transport *t)
{
	tfjob_transport_free(t);
	tfjob_global_cleanup();
}

/* The reason client-go gives an answer without a Status (NewGenericServerResponse), or NULL. */
static const char *reason_of_http(int status)
{
	switch (status) {
	case 400:
		return "BadRequest";
	case 401:
		return "Unauthorized";
	case 403:
		return "Forbidden";
	case 404:
		return "NotFound";
	case 405:
		return "MethodNotAllowed";
	case 406:
		return "NotAcceptable";
	case 409:
		return "Conflict";
	case 413:
		return "RequestEntityTooLarge";
	case 415:
		return "UnsupportedMediaType";
	case 422:
		return "Invalid";
	case 429:
		return "TooManyRequests";
	case 503:
		return "ServiceUnavailable";
	case 504:
		return "Timeout";
	default:
		return status >= 500 ? "InternalError" : NULL;
	}
}

int ctl_api_fail(tfjob_error *err)
{
	int status = tfjob_error_http_status(err);
	if (status) {
		/* kubectl's StandardErrorMessage: the server's own reason, else the one of the status code. */
		const char *reason = tfjob_error_reason(err);
		if (status == 404 && (!reason || !reason[0])) {
			/* Not a Status: the API server does not know the resource (the CRD is not installed). */
			fprintf(stderr, "error: the server doesn't have a resource type \"tfjobs\"\n");
			tfjob_error_free(err);
			return EXIT_NEGATIVE;
		}
		if (!reason || !reason[0])
			reason = tfjob_error_code_of(err) == TFJOB_EEXISTS ? "AlreadyExists" : reason_of_http(status);
		if (reason && !strcmp(reason, "Unauthorized"))
			fprintf(stderr, "error: You must be logged in to the server (%s)\n", tfjob_error_message(err));
		else if (reason)
			fprintf(stderr, "Error from server (%s): %s\n", reason, tfjob_error_message(err));
		else
			fprintf(stderr, "Error from server: %s\n", tfjob_error_message(err));
		tfjob_error_free(err);
		return EXIT_NEGATIVE;
	}
	return ctl_fail_err(err);
}

json_t *ctl_parse_json(const char *text)
{
	json_t *v = text ? json_loads(text, 0, NULL) : NULL;
	if (!v)
		ctl_fail("the server sent something that is not JSON");
	return v;
}

void ctl_age(char *buf, size_t size, const char *timestamp, time_t now)
{
	int64_t t;
	if (!timestamp || tfjob_time_parse(&t, timestamp) != 0) {
		snprintf(buf, size, "<unknown>");
		return;
	}
	long long s = (long long)(now - t);
	if (s < 0)
		s = 0;
	long long m = s / 60, h = s / 3600, d = s / 86400;
	if (s < 120)
		snprintf(buf, size, "%llds", s);
	else if (m < 10)
		snprintf(buf, size, s % 60 ? "%lldm%llds" : "%lldm", m, s % 60);
	else if (h < 3)
		snprintf(buf, size, "%lldm", m);
	else if (h < 8)
		snprintf(buf, size, m % 60 ? "%lldh%lldm" : "%lldh", h, m % 60);
	else if (h < 48)
		snprintf(buf, size, "%lldh", h);
	else if (d < 8)
		snprintf(buf, size, h % 24 ? "%lldd%lldh" : "%lldd", d, h % 24);
	else if (h < 24 * 365 * 2)
		snprintf(buf, size, "%lldd", d);
	else if (h < 24 * 365 * 8)
		snprintf(buf, size, d % 365 ? "%lldy%lldd" : "%lldy", d / 365, d % 365);
	else
		snprintf(buf, size, "%lldy", d / 365);
}

const char *ctl_job_state(const json_t *job)
{
	const json_t *conds = json_object_get(json_object_get(job, "status"), "conditions");
	size_t n = json_array_size(conds);
	const char *t = n ? json_string_value(json_object_get(json_array_get(conds, n - 1), "type")) : NULL;
	return t ? t : "";
}

const char *ctl_job_foreign_manager(const json_t *job)
{
	const char *m = json_string_value(
		json_object_get(json_object_get(json_object_get(job, "spec"), "runPolicy"), "managedBy"));
	return m && m[0] && strcmp(m, TFJOB_MANAGED_BY_TRAINING_OPERATOR) ? m : NULL;
}

int ctl_targets_of(struct ctl_target **out, size_t *n, int argc, char **argv, const struct ctl_inputs *in,
                   const char *command)
{
	size_t count = in->count ? in->count : (size_t)(argc - optind);
	struct ctl_target *targets = calloc(count ? count : 1, sizeof(*targets));
	if (!targets)
		return ctl_fail("out of memory");
	for (size_t i = 0; i < count; i++) {
		if (in->count) {
			targets[i] = (struct ctl_target){ tfjob_job_namespace(in->docs[i].job), tfjob_job_name(in->docs[i].job) };
			if (!targets[i].name || !targets[i].name[0]) {
				free(targets);
				fprintf(stderr, "tfjobctl: %s: ", command);
				ctl_doc_prefix(stderr, &in->docs[i]);
				fputs("a TFJob without metadata.name cannot be found by its file\n", stderr);
				return EXIT_USAGE;
			}
		} else {
			targets[i] = (struct ctl_target){ NULL, ctl_object_name(argv[optind + (int)i], command) };
			if (!targets[i].name) {
				free(targets);
				return EXIT_USAGE;
			}
		}
	}
	*out = targets;
	*n = count;
	return 0;
}
