/*
 * tfjobctl tf-config [--cluster-domain D] [--compat C] [--namespace NS] [--exclude-evaluator] FILE TYPE INDEX
 * tfjobctl render [--cluster-domain D] [--compat C] [--namespace NS] [--exclude-evaluator] [--pretty] FILE
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfjobctl.h"

#define COMMON_FLAGS_HELP                                                                                     \
	"  --cluster-domain D    append '.D' to the service addresses ({name}.{namespace}.svc.D:{port});\n"      \
	"                        default: none ({name}.{namespace}.svc:{port}), as v1.9 without CUSTOM_CLUSTER_DOMAIN\n" \
	"  --compat C            'documented' (default) or 'training-operator-1.9'; selects the defaults\n"      \
	"                        applied first and the TF_CONFIG variant (e.g. \"ps\":null for a dynamic\n"      \
	"                        worker without PS in v1.9)\n"                                                    \
	"  --namespace NS        namespace used when metadata.namespace is absent (default 'default')\n"          \
	"  --exclude-evaluator   leave the evaluator out of TF_CONFIG's cluster (v1.9 lists it)\n"

void usage_tf_config(FILE *out)
{
	fprintf(out,
	        "usage: tfjobctl tf-config [--cluster-domain D] [--compat C] [--namespace NS] [--exclude-evaluator]\n"
	        "                          FILE TYPE INDEX\n\n"
	        "Print the TF_CONFIG of replica INDEX of replica type TYPE (matched case-insensitively) of the\n"
	        "TFJob in FILE, on one line, byte for byte as training-operator v1.9 sets it. The output is\n"
	        "empty when the job is not distributed (one replica in total). Defaults are applied first.\n\n"
	        COMMON_FLAGS_HELP "\n"
	        "Exit status: 0 ok, 2 usage or input error (unknown type, index out of range, bad file).\n");
}

void usage_render(FILE *out)
{
	fprintf(out,
	        "usage: tfjobctl render [--cluster-domain D] [--compat C] [--namespace NS] [--exclude-evaluator]\n"
	        "                       [--pretty] FILE\n\n"
	        "Print every Pod and headless Service the operator creates for the new TFJob in FILE, as\n"
	        "{\"pods\":[...],\"services\":[...]} (types in canonical order chief, evaluator, master, ps,\n"
	        "worker; then by index). Defaults are applied first.\n\n"
	        COMMON_FLAGS_HELP
	        "  --pretty              indent the JSON (default: one line)\n\n"
	        "Exit status: 0 ok, 2 usage or input error.\n");
}

/* Parse the shared flags; returns -1 to go on, else an exit status. */
static int parse_flags(int argc, char **argv, const char *cmd, tfjob_render_options *ro, bool *pretty)
{
	static const struct option longopts[] = {
		{ "cluster-domain", required_argument, NULL, 'd' },
		{ "compat", required_argument, NULL, 'c' },
		{ "namespace", required_argument, NULL, 'n' },
		{ "exclude-evaluator", no_argument, NULL, 'e' },
		{ "pretty", no_argument, NULL, 'p' },
		{ NULL, 0, NULL, 0 },
	};
	int ch;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":", longopts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			ro->cluster_domain = optarg;
			break;
		case 'c':
			if (!ctl_parse_compat(&ro->compat, optarg))
				return EXIT_USAGE;
			break;
		case 'n':
			ro->default_namespace = optarg;
			break;
		case 'e':
			ro->exclude_evaluator = 1;
			break;
		case 'p':
			if (!pretty)
				return ctl_fail("%s: unknown option '--pretty' (see tfjobctl %s --help)", cmd, cmd);
			*pretty = true;
			break;
		case ':':
			return ctl_fail("%s: option '%s' needs a value", cmd, argv[optind - 1]);
		default:
			return ctl_fail("%s: unknown option '%s' (see tfjobctl %s --help)", cmd, argv[optind - 1], cmd);
		}
	}
	return -1;
}

/* Load one TFJob and apply the defaults of the compat mode. */
static int load_defaulted(tfjob_job **out, const char *path, tfjob_compat compat)
{
	if (ctl_load_job(out, path))
		return EXIT_USAGE;
	tfjob_default_options dopts = TFJOB_DEFAULT_OPTIONS_INIT;
	dopts.compat = compat;
	tfjob_error *err = NULL;
	if (tfjob_job_apply_defaults(*out, &dopts, &err)) {
		tfjob_job_free(*out);
		*out = NULL;
		return ctl_fail_err(err);
	}
	return 0;
}

int cmd_tf_config(int argc, char **argv)
{
	tfjob_render_options ro = TFJOB_RENDER_OPTIONS_INIT;
	int rc = parse_flags(argc, argv, "tf-config", &ro, NULL);
	if (rc >= 0)
		return rc;
	if (optind != argc - 3)
		return ctl_fail("tf-config: expected FILE TYPE INDEX (see tfjobctl tf-config --help)");
	const char *path = argv[optind], *type = argv[optind + 1], *index_s = argv[optind + 2];
	char *end = NULL;
	errno = 0;
	long long index = strtoll(index_s, &end, 10);
	if (!*index_s || *end || errno || index < 0)
		return ctl_fail("tf-config: INDEX must be a non-negative integer, got '%s'", index_s);
	tfjob_job *job = NULL;
	if (load_defaulted(&job, path, ro.compat))
		return EXIT_USAGE;
	char *text = NULL;
	tfjob_error *err = NULL;
	int status = EXIT_OK;
	if (tfjob_tf_config(&text, job, type, (int64_t)index, &ro, &err))
		status = ctl_fail_err(err);
	else if (!*text)
		tfjob_free(text); /* not distributed: no output at all */
	else
		ctl_print_owned(text);
	tfjob_job_free(job);
	return status;
}

int cmd_render(int argc, char **argv)
{
	tfjob_render_options ro = TFJOB_RENDER_OPTIONS_INIT;
	bool pretty = false;
	int rc = parse_flags(argc, argv, "render", &ro, &pretty);
	if (rc >= 0)
		return rc;
	if (optind != argc - 1)
		return ctl_fail("render: expected exactly one FILE (see tfjobctl render --help)");
	tfjob_job *job = NULL;
	if (load_defaulted(&job, argv[optind], ro.compat))
		return EXIT_USAGE;
	tfjob_error *err = NULL;
	int status = EXIT_OK;
	/* streamed: the output of a large job (gigabytes) is never held in memory */
	if (tfjob_render_all_write(job, &ro, pretty ? TFJOB_JSON_PRETTY : TFJOB_JSON_COMPACT, ctl_write_stdout, NULL,
	                           &err))
		status = ctl_fail_err(err);
	else
		ctl_write_stdout("\n", 1, NULL);
	tfjob_job_free(job);
	return status;
}
