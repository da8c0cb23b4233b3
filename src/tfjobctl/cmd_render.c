/*
 * tfjobctl tf-config [--cluster-domain D] [--compat C] [--namespace NS] [--exclude-evaluator] FILE|-f F... TYPE INDEX
 * tfjobctl render [--cluster-domain D] [--compat C] [--namespace NS] [--exclude-evaluator] [--pretty] [-o F] FILE|-f F...
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
	"  -n, --namespace NS    namespace used when metadata.namespace is absent (default 'default')\n"          \
	"  --exclude-evaluator   leave the evaluator out of TF_CONFIG's cluster (v1.9 lists it)\n"      \
	"  -f, --filename F      a file, a directory (its .yaml, .yml and .json files) or '-' instead\n"  \
	"                        of FILE; repeatable; every TFJob of a multi-document stream\n"

void usage_tf_config(FILE *out)
{
	fprintf(out,
	        "usage: tfjobctl tf-config [--cluster-domain D] [--compat C] [--namespace NS] [--exclude-evaluator]\n"
	        "                          FILE TYPE INDEX\n"
	        "       tfjobctl tf-config [OPTIONS] -f FILE [-f ...] TYPE INDEX   (a line per TFJob)\n\n"
	        "Print the TF_CONFIG of replica INDEX of replica type TYPE (matched case-insensitively) of the\n"
	        "TFJob in FILE, on one line, byte for byte as training-operator v1.9 sets it. The output is\n"
	        "empty when the job is not distributed (one replica in total; stderr then says so).\n"
	        "Defaults are applied first.\n\n"
	        COMMON_FLAGS_HELP "\n"
	        "Exit status: 0 ok, 2 usage or input error (unknown type, index out of range, bad file).\n");
}

void usage_render(FILE *out)
{
	fprintf(out,
	        "usage: tfjobctl render [--cluster-domain D] [--compat C] [--namespace NS] [--exclude-evaluator]\n"
	        "                       [--pretty] [-o yaml|list|json|name|wide] FILE | -f FILE [-f ...]\n\n"
	        "Print every Pod and headless Service the operator creates for the new TFJob in FILE, as\n"
	        "{\"pods\":[...],\"services\":[...]} (types in canonical order chief, evaluator, master, ps,\n"
	        "worker; then by index; one line per TFJob). Defaults are applied first.\n\n"
	        COMMON_FLAGS_HELP
	        "  --pretty              indent the JSON (default: one line)\n"
	        "  -o, --output F        'yaml': every Pod and Service as a YAML stream; 'list': one\n"
	        "                        'kind: List' (YAML); 'json': that List as JSON; each one for\n"
	        "                        'kubectl apply -f -' (an owner reference without a uid, as a TFJob\n"
	        "                        that has none gives, is left out: the API server refuses it);\n"
	        "                        'name': pod/NAME and service/NAME; 'wide': a table\n\n"
	        "Exit status: 0 ok, 2 usage or input error.\n");
}

/* Flags of tf-config and render. */
struct render_flags {
	tfjob_render_options ro;
	bool pretty;
	enum ctl_format format;
	struct ctl_sources sources;
};

/* Parse the shared flags; returns -1 to go on, else an exit status. */
static int parse_flags(int argc, char **argv, const char *cmd, struct render_flags *f, bool is_render)
{
	static const struct option longopts[] = {
		{ "cluster-domain", required_argument, NULL, 'd' },
		{ "compat", required_argument, NULL, 'c' },
		{ "namespace", required_argument, NULL, 'n' },
		{ "exclude-evaluator", no_argument, NULL, 'e' },
		{ "pretty", no_argument, NULL, 'p' },
		{ "filename", required_argument, NULL, 'f' },
		{ "output", required_argument, NULL, 'o' },
		{ NULL, 0, NULL, 0 },
	};
	static const unsigned int formats = CTL_FORMAT_BIT(CTL_FORMAT_JSON) | CTL_FORMAT_BIT(CTL_FORMAT_YAML) |
	                                    CTL_FORMAT_BIT(CTL_FORMAT_NAME) | CTL_FORMAT_BIT(CTL_FORMAT_WIDE) |
	                                    CTL_FORMAT_BIT(CTL_FORMAT_LIST);
	int ch;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":f:o:n:", longopts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			f->ro.cluster_domain = optarg;
			break;
		case 'c':
			if (!ctl_parse_compat(&f->ro.compat, optarg))
				return EXIT_USAGE;
			break;
		case 'n':
			f->ro.default_namespace = optarg;
			break;
		case 'e':
			f->ro.exclude_evaluator = 1;
			break;
		case 'f':
			if (ctl_sources_add(&f->sources, optarg))
				return EXIT_USAGE;
			break;
		case 'p':
		case 'o':
			if (!is_render)
				return ctl_fail("%s: unknown option '%s' (see tfjobctl %s --help)", cmd, argv[optind - 1], cmd);
			if (ch == 'p')
				f->pretty = true;
			else if (!ctl_parse_format(&f->format, optarg, formats, cmd))
				return EXIT_USAGE;
			break;
		case ':':
			return ctl_fail("%s: option '%s' needs a value", cmd, argv[optind - 1]);
		default:
			return ctl_fail("%s: unknown option '%s' (see tfjobctl %s --help)", cmd, argv[optind - 1], cmd);
		}
	}
	return -1;
}

/*
 * The TFJobs to work on, defaults applied: the positional FILE (exactly one TFJob, the contract's
 * form) or every TFJob of the -f sources. `positional` arguments follow FILE (TYPE INDEX). A job
 * whose defaults fail is reported and left out. Returns the status of what failed (EXIT_OK: none).
 */
static int load_defaulted(struct ctl_inputs *in, struct render_flags *f, int argc, char **argv, int positional,
                          const char *cmd)
{
	int status = EXIT_OK;
	if (f->sources.count) {
		if (argc - optind != positional) {
			free(f->sources.paths);
			return ctl_fail("%s: unexpected arguments (see tfjobctl %s --help)", cmd, cmd);
		}
		status = ctl_inputs_read(in, &f->sources);
	} else {
		tfjob_job *job = NULL;
		if (ctl_load_job(&job, argv[optind]))
			return EXIT_USAGE;
		in->docs = malloc(sizeof(*in->docs));
		if (!in->docs) {
			tfjob_job_free(job);
			return ctl_fail("out of memory");
		}
		in->docs[0] = (struct ctl_doc){ job, argv[optind], 0, NULL, 0, 0 };
		in->count = 1;
	}
	tfjob_default_options dopts = TFJOB_DEFAULT_OPTIONS_INIT;
	dopts.compat = f->ro.compat;
	size_t kept = 0;
	for (size_t i = 0; i < in->count; i++) {
		tfjob_error *err = NULL;
		if (tfjob_job_apply_defaults(in->docs[i].job, &dopts, &err)) {
			if (in->docs[i].line) {
				fputs("tfjobctl: ", stderr);
				ctl_doc_prefix(stderr, &in->docs[i]);
				fprintf(stderr, "%s\n", tfjob_error_message(err));
				tfjob_error_free(err);
				status = EXIT_USAGE;
			} else {
				status = ctl_fail_err(err);
			}
			tfjob_job_free(in->docs[i].job);
			continue;
		}
		in->docs[kept++] = in->docs[i];
	}
	in->count = kept;
	return status;
}

/* Say on stderr why a replica gets no TF_CONFIG (stdout stays empty, as the contract says). */
static void explain_no_tf_config(char *empty, const tfjob_job *job)
{
	tfjob_free(empty);
	fprintf(stderr, "tfjobctl: tf-config: TFJob %s gets no TF_CONFIG: it has one replica in total, and the operator "
	        "sets TF_CONFIG only on the replicas of a distributed job (more than one replica)\n", ctl_job_label(job));
}

int cmd_tf_config(int argc, char **argv)
{
	struct render_flags f = { .ro = TFJOB_RENDER_OPTIONS_INIT };
	int rc = parse_flags(argc, argv, "tf-config", &f, false);
	if (rc >= 0) {
		free(f.sources.paths);
		return rc;
	}
	if (optind != argc - 3 + (f.sources.count ? 1 : 0)) {
		free(f.sources.paths);
		return ctl_fail("tf-config: expected FILE TYPE INDEX (see tfjobctl tf-config --help)");
	}
	const char *type = argv[argc - 2], *index_s = argv[argc - 1];
	char *end = NULL;
	errno = 0;
	long long index = strtoll(index_s, &end, 10);
	if (!*index_s || *end || errno || index < 0) {
		free(f.sources.paths);
		return ctl_fail("tf-config: INDEX must be a non-negative integer, got '%s'", index_s);
	}
	struct ctl_inputs in = { 0 };
	int status = load_defaulted(&in, &f, argc, argv, 2, "tf-config");
	for (size_t i = 0; i < in.count; i++) {
		char *text = NULL;
		tfjob_error *err = NULL;
		if (tfjob_tf_config(&text, in.docs[i].job, type, (int64_t)index, &f.ro, &err))
			status = ctl_fail_err(err);
		else if (!*text)
			explain_no_tf_config(text, in.docs[i].job); /* not distributed: nothing on stdout, the reason on stderr */
		else
			ctl_print_owned(text);
	}
	ctl_inputs_free(&in);
	return status;
}

/* An owner reference needs a uid: a TFJob without one (a file, not the server's object) gives "". */
static void drop_references_without_uid(json_t *obj)
{
	json_t *meta = json_object_get(obj, "metadata");
	json_t *refs = json_object_get(meta, "ownerReferences");
	for (size_t i = json_array_size(refs); i-- > 0;) {
		const char *uid = json_string_value(json_object_get(json_array_get(refs, i), "uid"));
		if (!uid || !uid[0])
			json_array_remove(refs, i);
	}
	if (refs && json_array_size(refs) == 0)
		json_object_del(meta, "ownerReferences");
}

static void print_children_table(const json_t *objects)
{
	struct ctl_table tb = { 0, 6, NULL };
	static const char *const head[] = { "KIND", "NAME", "REPLICA-TYPE", "INDEX", "PORT", "IMAGE" };
	ctl_table_add(&tb, head);
	size_t i;
	json_t *o;
	json_array_foreach(objects, i, o) {
		const json_t *labels = json_object_get(json_object_get(o, "metadata"), "labels");
		const json_t *spec = json_object_get(o, "spec");
		const json_t *c0 = json_array_get(json_object_get(spec, "containers"), 0);
		const json_t *port = json_array_get(json_object_get(spec, "ports"), 0);
		char port_s[32] = "";
		if (port)
			snprintf(port_s, sizeof(port_s), "%lld", (long long)json_integer_value(json_object_get(port, "port")));
		const char *image = json_string_value(json_object_get(c0, "image"));
		const char *row[] = { json_string_value(json_object_get(o, "kind")),
			                  json_string_value(json_object_get(json_object_get(o, "metadata"), "name")),
			                  json_string_value(json_object_get(labels, "training.kubeflow.org/replica-type")),
			                  json_string_value(json_object_get(labels, "training.kubeflow.org/replica-index")),
			                  port ? port_s : "<none>", image ? image : "<none>" };
		ctl_table_add(&tb, row);
	}
	ctl_table_print(stdout, &tb);
}

/* Every Pod, then every Service, of the rendered text {"pods":[...],"services":[...]} into objects. */
static void collect_children(json_t *objects, const char *rendered)
{
	json_t *all = json_loads(rendered, 0, NULL);
	static const char *const keys[] = { "pods", "services" };
	for (size_t k = 0; k < 2; k++) {
		size_t i;
		json_t *o;
		json_array_foreach(json_object_get(all, keys[k]), i, o) {
			drop_references_without_uid(o);
			json_array_append(objects, o);
		}
	}
	json_decref(all);
}

static void print_children(const json_t *objects, enum ctl_format format)
{
	size_t i;
	json_t *o;
	if (format == CTL_FORMAT_YAML) {
		ctl_print_yaml_stream(stdout, objects);
	} else if (format == CTL_FORMAT_LIST || format == CTL_FORMAT_JSON) {
		json_t *list = ctl_list_of(objects);
		if (format == CTL_FORMAT_LIST)
			ctl_print_yaml(stdout, list);
		else
			ctl_print_json(stdout, list);
		json_decref(list);
	} else if (format == CTL_FORMAT_NAME) {
		json_array_foreach(objects, i, o)
			ctl_print_name(stdout, o);
	} else {
		print_children_table(objects);
	}
}

int cmd_render(int argc, char **argv)
{
	struct render_flags f = { .ro = TFJOB_RENDER_OPTIONS_INIT };
	int rc = parse_flags(argc, argv, "render", &f, true);
	if (rc >= 0) {
		free(f.sources.paths);
		return rc;
	}
	if (!f.sources.count && optind != argc - 1)
		return ctl_fail("render: expected exactly one FILE (see tfjobctl render --help)");
	struct ctl_inputs in = { 0 };
	int status = load_defaulted(&in, &f, argc, argv, 0, "render");
	json_t *objects = json_array();
	int json_flags = f.pretty ? TFJOB_JSON_PRETTY : TFJOB_JSON_COMPACT;
	for (size_t i = 0; i < in.count; i++) {
		char *text = NULL;
		tfjob_error *err = NULL;
		if (f.format == CTL_FORMAT_DEFAULT) {
			/* streamed: the output of a large job (gigabytes) is never held in memory */
			if (tfjob_render_all_write(in.docs[i].job, &f.ro, json_flags, ctl_write_stdout, NULL, &err))
				status = ctl_fail_err(err);
			else
				ctl_write_stdout("\n", 1, NULL);
		} else if (tfjob_render_all(&text, in.docs[i].job, &f.ro, json_flags, &err)) {
			status = ctl_fail_err(err);
		} else {
			collect_children(objects, text);
			tfjob_free(text);
		}
	}
	if (f.format != CTL_FORMAT_DEFAULT && in.count)
		print_children(objects, f.format);
	json_decref(objects);
	ctl_inputs_free(&in);
	return status;
}
