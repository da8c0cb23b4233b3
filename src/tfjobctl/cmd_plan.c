/*
 * tfjobctl plan --job FILE [--pods FILE] [--services FILE] [--now RFC3339] [--requeues N]
 *               [--compat C] [--cluster-domain D] [--gang-scheduler G] [--pod-group FILE]
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "tfjobctl.h"

void usage_plan(FILE *out)
{
	fprintf(out,
	        "usage: tfjobctl plan --job FILE [--pods FILE] [--services FILE] [--now RFC3339]\n"
	        "                     [--requeues N] [--compat C] [--cluster-domain D]\n"
	        "                     [--gang-scheduler G] [--pod-group FILE]\n\n"
	        "Plan one reconcile step of the TFJob in FILE (with its status) given the Pods and Services\n"
	        "observed for it (a JSON/YAML array or a Kubernetes List), and print the plan as one line:\n"
	        "  {\"actions\":[{\"action\":\"create\",\"kind\":\"Pod|Service|PodGroup\",\"name\":N,\"object\":{...}},\n"
	        "               {\"action\":\"delete\",\"kind\":\"Pod|Service|PodGroup|TFJob\",\"name\":N},\n"
	        "               {\"action\":\"adopt|release\",\"kind\":\"Pod|Service\",\"name\":N,\"patch\":{...}},\n"
	        "               {\"action\":\"patch\",\"kind\":\"PodGroup\",\"name\":N,\"patch\":{...}},\n"
	        "               {\"action\":\"wait\",\"kind\":\"PodGroup\",\"name\":N},\n"
	        "               {\"action\":\"event\",\"type\":\"Normal|Warning\",\"reason\":R,\"message\":M}],\n"
	        "   \"status\":{...},\"statusChanged\":bool,\"requeueAfterSeconds\":number|null}\n\n"
	        "  --job FILE, -f FILE the TFJob, with its status ('-' = standard input)\n"
	        "  --pods FILE         the observed Pods (default: none)\n"
	        "  --services FILE     the observed Services (default: none)\n"
	        "  --now T             the current time, RFC 3339 (default: the system clock)\n"
	        "  --requeues N        how often the work queue has requeued the job (default 0)\n"
	        "  --compat C          'documented' (default) or 'training-operator-1.9'\n"
	        "  --cluster-domain D  cluster domain of the addresses in TF_CONFIG of created pods\n"
	        "  --gang-scheduler G  gang scheduling: 'volcano' or 'scheduler-plugins' (default: none)\n"
	        "  --pod-group FILE    the job's observed PodGroup, with --gang-scheduler (default: none)\n"
	        "  -o, --output F      'json' (the plan, indented), 'yaml' (the plan as YAML), 'name'\n"
	        "                      (ACTION KIND/NAME of each create and delete) or 'wide' (a table of\n"
	        "                      the actions); default: the plan as one line of JSON\n\n"
	        "Exit status: 0 ok, 2 usage or input error.\n");
}

/* The observed objects of FILE (NULL: none), parsed with the file's name for error messages. */
static int load_objects(tfjob_objects **out, const char *path)
{
	*out = NULL;
	if (!path)
		return 0;
	char *data;
	size_t len;
	int rc = ctl_read_file(&data, &len, path, TFJOB_DEFAULT_MAX_LIST_BYTES);
	if (rc)
		return rc;
	tfjob_parse_options popts = TFJOB_PARSE_OPTIONS_INIT;
	popts.filename = strcmp(path, "-") ? path : "<stdin>";
	popts.max_input_bytes = TFJOB_DEFAULT_MAX_LIST_BYTES;
	tfjob_error *err = NULL;
	rc = tfjob_objects_parse(out, data, len, &popts, &err);
	free(data);
	return rc ? ctl_fail_err(err) : 0;
}

int ctl_parse_now(int64_t *out, const char *value)
{
	if (!value) {
		*out = (int64_t)time(NULL);
		return 0;
	}
	if (tfjob_time_parse(out, value))
		return ctl_fail("--now: '%s' is not an RFC 3339 time (e.g. 2024-05-01T10:00:00Z)", value);
	return 0;
}

static void print_actions_table(const json_t *actions)
{
	struct ctl_table tb = { 0, 4, NULL };
	static const char *const head[] = { "ACTION", "KIND", "NAME", "DETAIL" };
	ctl_table_add(&tb, head);
	size_t i;
	json_t *a;
	json_array_foreach(actions, i, a) {
		const char *action = json_string_value(json_object_get(a, "action"));
		char detail[1024] = "";
		if (action && !strcmp(action, "event"))
			snprintf(detail, sizeof(detail), "%s: %s", json_string_value(json_object_get(a, "reason")),
			         json_string_value(json_object_get(a, "message")));
		const char *row[] = { action, json_string_value(json_object_get(a, json_object_get(a, "kind") ? "kind" : "type")),
			                  json_string_value(json_object_get(a, "name")), detail };
		ctl_table_add(&tb, row);
	}
	ctl_table_print(stdout, &tb);
}

/* The plan in another format than the contract's line: text is the plan's JSON. */
static void print_plan(char *text, enum ctl_format format)
{
	json_t *plan = json_loads(text, 0, NULL);
	tfjob_free(text);
	const json_t *actions = json_object_get(plan, "actions");
	size_t i;
	json_t *a;
	switch (format) {
	case CTL_FORMAT_JSON:
		ctl_print_json(stdout, plan);
		break;
	case CTL_FORMAT_YAML:
		ctl_print_yaml(stdout, plan);
		break;
	case CTL_FORMAT_NAME:
		json_array_foreach(actions, i, a) {
			const char *kind = json_string_value(json_object_get(a, "kind"));
			if (!kind)
				continue; /* events name no object */
			printf("%s ", json_string_value(json_object_get(a, "action")));
			json_t *obj = json_object_get(a, "object");
			json_t *named = obj ? json_incref(obj)
			                    : json_pack("{s:s, s:s, s:{s:O}}", "kind", kind, "apiVersion",
			                                strcmp(kind, "TFJob") ? "v1" : "kubeflow.org/v1", "metadata", "name",
			                                json_object_get(a, "name"));
			ctl_print_name(stdout, named);
			json_decref(named);
		}
		break;
	default:
		print_actions_table(actions);
		break;
	}
	json_decref(plan);
}

/* --job FILE or -f FILE|DIR: a directory (its .yaml, .yml and .json files) must hold exactly one
 * TFJob, as a file must. */
static int load_plan_job(tfjob_job **job, const char *path)
{
	struct stat st;
	if (strcmp(path, "-") && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
		struct ctl_sources sources = { 0 };
		char *file = NULL;
		int rc = ctl_sources_add(&sources, path);
		if (!rc)
			rc = ctl_inputs_one_job(job, &file, &sources, "plan", "a plan is one reconcile of one TFJob: give one");
		free(file);
		return rc;
	}
	return ctl_load_job(job, path) ? EXIT_USAGE : EXIT_OK;
}

/* What `tfjobctl plan` was asked for. */
struct plan_args {
	enum ctl_format format;
	tfjob_plan_options opts;
	tfjob_render_options ropts;
	const char *job_path, *pods_path, *services_path, *now, *pg_path;
};

static int parse_requeues(int64_t *out, const char *text)
{
	char *end;
	errno = 0;
	long long v = strtoll(text, &end, 10);
	if (errno || end == text || *end || v < 0)
		return ctl_fail("plan: --requeues needs a non-negative integer, got '%s'", text);
	*out = v;
	return EXIT_OK;
}

/* One option of the command line into a; EXIT_OK or the exit status of a usage error. */
static int plan_option(struct plan_args *a, int ch, char **argv)
{
	switch (ch) {
	case 'j':
	case 'f':
		if (a->job_path)
			return ctl_fail("plan: one TFJob only: --job (or -f) is given twice");
		a->job_path = optarg;
		return EXIT_OK;
	case 'o':
		return ctl_parse_format(&a->format, optarg, CTL_FORMAT_BIT(CTL_FORMAT_JSON) | CTL_FORMAT_BIT(CTL_FORMAT_YAML) |
		                                            CTL_FORMAT_BIT(CTL_FORMAT_NAME) | CTL_FORMAT_BIT(CTL_FORMAT_WIDE),
		                        "plan") ? EXIT_OK : EXIT_USAGE;
	case 'p': a->pods_path = optarg; return EXIT_OK;
	case 's': a->services_path = optarg; return EXIT_OK;
	case 'n': a->now = optarg; return EXIT_OK;
	case 'd': a->ropts.cluster_domain = optarg; return EXIT_OK;
	case 'G': a->pg_path = optarg; return EXIT_OK;
	case 'g': return ctl_parse_gang(&a->ropts.gang_scheduler, optarg) ? EXIT_OK : EXIT_USAGE;
	case 'r': return parse_requeues(&a->opts.requeues, optarg);
	case 'c': return ctl_parse_compat(&a->opts.compat, optarg) ? EXIT_OK : EXIT_USAGE;
	case ':': return ctl_fail("plan: option '%s' needs a value", argv[optind - 1]);
	default: return ctl_fail("plan: unknown option '%s' (see tfjobctl plan --help)", argv[optind - 1]);
	}
}

static int parse_plan_args(struct plan_args *a, int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "job", required_argument, NULL, 'j' },
		{ "pods", required_argument, NULL, 'p' },
		{ "services", required_argument, NULL, 's' },
		{ "now", required_argument, NULL, 'n' },
		{ "requeues", required_argument, NULL, 'r' },
		{ "compat", required_argument, NULL, 'c' },
		{ "cluster-domain", required_argument, NULL, 'd' },
		{ "gang-scheduler", required_argument, NULL, 'g' },
		{ "pod-group", required_argument, NULL, 'G' },
		{ "filename", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	int ch, status;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":f:o:", longopts, NULL)) != -1)
		if ((status = plan_option(a, ch, argv)) != EXIT_OK)
			return status;
	if (optind != argc)
		return ctl_fail("plan: unexpected argument '%s' (see tfjobctl plan --help)", argv[optind]);
	if (!a->job_path)
		return ctl_fail("plan: --job FILE is required (see tfjobctl plan --help)");
	int stdin_uses = !strcmp(a->job_path, "-") + (a->pods_path && !strcmp(a->pods_path, "-")) +
	                 (a->services_path && !strcmp(a->services_path, "-")) + (a->pg_path && !strcmp(a->pg_path, "-"));
	if (stdin_uses > 1)
		return ctl_fail("plan: only one of --job, --pods, --services and --pod-group can be '-' (standard input)");
	if (a->pg_path && a->ropts.gang_scheduler == TFJOB_GANG_NONE)
		return ctl_fail("plan: --pod-group needs --gang-scheduler");
	return ctl_parse_now(&a->opts.now, a->now) ? EXIT_USAGE : EXIT_OK;
}

/* Plan one step of the job over the observed children and print it. */
static int print_one_plan(tfjob_job *job, tfjob_objects *pods, tfjob_objects *services, struct plan_args *a)
{
	tfjob_plan *plan = NULL;
	tfjob_error *err = NULL;
	char *text = NULL;
	int rc = tfjob_plan_new_with_objects(&plan, job, pods, services, &a->opts, &err);
	if (rc == 0 && a->format == CTL_FORMAT_DEFAULT)
		/* streamed: the created children of a large job (gigabytes) are rendered one at a time */
		rc = tfjob_plan_write_json(plan, TFJOB_JSON_COMPACT, ctl_write_stdout, NULL, &err);
	else if (rc == 0)
		rc = tfjob_plan_to_json(&text, plan, TFJOB_JSON_COMPACT, &err);
	tfjob_plan_free(plan);
	if (rc) {
		ctl_fail_err(err);
		return EXIT_USAGE;
	}
	if (a->format == CTL_FORMAT_DEFAULT)
		ctl_write_stdout("\n", 1, NULL);
	else
		print_plan(text, a->format);
	return EXIT_OK;
}

int cmd_plan(int argc, char **argv)
{
	struct plan_args a = { .format = CTL_FORMAT_DEFAULT };
	tfjob_plan_options pinit = TFJOB_PLAN_OPTIONS_INIT;
	tfjob_render_options rinit = TFJOB_RENDER_OPTIONS_INIT;
	a.opts = pinit;
	a.ropts = rinit;
	int status = parse_plan_args(&a, argc, argv);
	if (status != EXIT_OK)
		return status;
	a.opts.render = &a.ropts;
	tfjob_job *job = NULL;
	if (load_plan_job(&job, a.job_path))
		return EXIT_USAGE;
	tfjob_objects *pods = NULL, *services = NULL;
	char *pg = NULL;
	size_t pg_len;
	status = EXIT_USAGE;
	if (!load_objects(&pods, a.pods_path) && !load_objects(&services, a.services_path) &&
	    !(a.pg_path && ctl_read_file(&pg, &pg_len, a.pg_path, TFJOB_DEFAULT_MAX_INPUT_BYTES))) {
		a.opts.pod_group_json = pg;
		status = print_one_plan(job, pods, services, &a);
	}
	free(pg);
	tfjob_objects_free(pods);
	tfjob_objects_free(services);
	tfjob_job_free(job);
	return status;
}
