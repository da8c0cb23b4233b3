/*
 * tfjobctl default [--compat C] [-o json|yaml|name|wide] FILE | -f FILE...
 * SPDX-License-Identifier: Apache-2.0
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfjobctl.h"

void usage_default(FILE *out)
{
	fprintf(out,
	        "usage: tfjobctl default [--compat C] [-o json|yaml|name|wide] FILE\n"
	        "       tfjobctl default [--compat C] [-o ...] -f FILE|DIR|- [-f ...]\n\n"
	        "Print each TFJob of FILE with the TFJob defaults applied, as JSON. Fields the defaults do\n"
	        "not touch (pod templates, unknown fields) are kept as they are.\n\n"
	        "  --compat C   'documented' (default; cleanPodPolicy Running) or 'training-operator-1.9'\n"
	        "               (cleanPodPolicy None)\n"
	        "  -f, --filename F  a file, a directory (its .yaml, .yml and .json files) or '-';\n"
	        "               repeatable; each document of a multi-document stream on its own\n"
	        "  -o, --output F  'json' (kubectl's form; several TFJobs as a List), 'yaml' (a YAML\n"
	        "               stream, one document per TFJob), 'name' (tfjob.kubeflow.org/NAME) or 'wide'\n"
	        "               (a table); default: each TFJob as indented JSON\n\n"
	        "Exit status: 0 ok, 2 usage or input error (including fields of the wrong JSON type).\n");
}

static void print_wide(const json_t *jobs)
{
	struct ctl_table tb = { 0, 5, NULL };
	static const char *const head[] = { "NAME", "NAMESPACE", "REPLICAS", "CLEAN-POD-POLICY", "SUCCESS-POLICY" };
	ctl_table_add(&tb, head);
	size_t i;
	json_t *job;
	json_array_foreach(jobs, i, job) {
		const json_t *meta = json_object_get(job, "metadata"), *spec = json_object_get(job, "spec");
		char reps[256] = "";
		const char *type;
		json_t *rs;
		json_object_foreach(json_object_get(spec, "tfReplicaSpecs"), type, rs)
			snprintf(reps + strlen(reps), sizeof(reps) - strlen(reps), "%s%s:%lld", reps[0] ? "," : "", type,
			         (long long)json_integer_value(json_object_get(rs, "replicas")));
		const char *ns = json_string_value(json_object_get(meta, "namespace"));
		const char *success = json_string_value(json_object_get(spec, "successPolicy"));
		const char *row[] = { json_string_value(json_object_get(meta, "name")), ns ? ns : "default", reps,
			                  json_string_value(json_object_get(json_object_get(spec, "runPolicy"), "cleanPodPolicy")),
			                  success && success[0] ? success : "<default>" };
		ctl_table_add(&tb, row);
	}
	ctl_table_print(stdout, &tb);
}

/* Print the defaulted jobs (JSON texts of the library) in the format asked for. */
static void print_jobs(const json_t *jobs, enum ctl_format format)
{
	size_t i;
	json_t *job;
	switch (format) {
	case CTL_FORMAT_JSON: {
		json_t *v = json_array_size(jobs) == 1 ? json_incref(json_array_get(jobs, 0)) : ctl_list_of(jobs);
		ctl_print_json(stdout, v);
		json_decref(v);
		break;
	}
	case CTL_FORMAT_YAML:
		ctl_print_yaml_stream(stdout, jobs);
		break;
	case CTL_FORMAT_NAME:
		json_array_foreach(jobs, i, job)
			ctl_print_name(stdout, job);
		break;
	default:
		print_wide(jobs);
		break;
	}
}

int cmd_default(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "compat", required_argument, NULL, 'c' },
		{ "filename", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	tfjob_default_options opts = TFJOB_DEFAULT_OPTIONS_INIT;
	enum ctl_format format = CTL_FORMAT_DEFAULT;
	struct ctl_sources sources = { 0 };
	int ch;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":f:o:", longopts, NULL)) != -1) {
		int bad = 0;
		if (ch == 'c')
			bad = !ctl_parse_compat(&opts.compat, optarg);
		else if (ch == 'f')
			bad = ctl_sources_add(&sources, optarg);
		else if (ch == 'o')
			bad = !ctl_parse_format(&format, optarg, CTL_FORMAT_BIT(CTL_FORMAT_JSON) | CTL_FORMAT_BIT(CTL_FORMAT_YAML) |
			                                          CTL_FORMAT_BIT(CTL_FORMAT_NAME) | CTL_FORMAT_BIT(CTL_FORMAT_WIDE),
			                        "default");
		else if (ch == ':')
			bad = ctl_fail("default: option '%s' needs a value", argv[optind - 1]);
		else
			bad = ctl_fail("default: unknown option '%s' (see tfjobctl default --help)", argv[optind - 1]);
		if (bad) {
			free(sources.paths);
			return EXIT_USAGE;
		}
	}
	struct ctl_inputs in = { 0 };
	int status = ctl_inputs_of_command(&in, &sources, argc, argv, "default");
	json_t *done = json_array();
	for (size_t i = 0; i < in.count && done; i++) {
		tfjob_error *err = NULL;
		char *text = NULL;
		if (tfjob_job_apply_defaults(in.docs[i].job, &opts, &err) ||
		    tfjob_job_to_json(&text, in.docs[i].job, TFJOB_JSON_PRETTY, &err)) {
			/* The job no longer knows its file: name it here ("FILE: field: detail"). */
			fputs("tfjobctl: ", stderr);
			ctl_doc_prefix(stderr, &in.docs[i]);
			fprintf(stderr, "%s\n", tfjob_error_message(err));
			tfjob_error_free(err);
			status = EXIT_USAGE;
			if (!in.docs[i].line)
				break; /* the positional FILE: the first error ends it, as it always has */
			continue;
		}
		if (format == CTL_FORMAT_DEFAULT)
			ctl_print_owned(text);
		else {
			json_array_append_new(done, json_loads(text, 0, NULL));
			tfjob_free(text);
		}
	}
	if (format != CTL_FORMAT_DEFAULT && json_array_size(done))
		print_jobs(done, format);
	json_decref(done);
	ctl_inputs_free(&in);
	return status;
}
