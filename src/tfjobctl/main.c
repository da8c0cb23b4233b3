/*
 * tfjobctl: the command-line face of libtfjob. Exit codes: 0 ok, 1 negative answer, 2 usage or
 * input error.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfjobctl.h"

static const struct command commands[] = {
	{ "validate", "validate a TFJob as the API server and the training-operator webhook would", cmd_validate, usage_validate },
	{ "default", "print the TFJob with defaults applied, as JSON", cmd_default, usage_default },
	{ "exit-code", "classify a container exit code as retryable or permanent", cmd_exit_code, usage_exit_code },
	{ "tf-config", "print the TF_CONFIG of one replica of a TFJob", cmd_tf_config, usage_tf_config },
	{ "render", "print the Pods and Services the operator creates for a new TFJob", cmd_render, usage_render },
	{ "plan", "plan one reconcile step of a TFJob given its observed pods and services", cmd_plan, usage_plan },
	{ "simulate", "run a scenario of pod phase changes through the planner, step by step", cmd_simulate, usage_simulate },
	{ "apply", "create or update TFJobs in the cluster of the current kubeconfig", cmd_apply, usage_apply },
	{ "get", "list TFJobs of the cluster, or show some (table, json, yaml, wide, name)", cmd_get, usage_get },
	{ "describe", "describe a TFJob: conditions, replica statuses, events", cmd_describe, usage_describe },
	{ "delete", "delete TFJobs from the cluster", cmd_delete, usage_delete },
	{ "diagnose", "say which step from a TFJob to its running containers fails, and why", cmd_diagnose,
	  usage_diagnose },
	{ "watch", "follow a TFJob until it finishes", cmd_watch, usage_watch },
	{ "run", "run a TFJob on this machine, its replicas as local processes", cmd_run, usage_run },
	{ "logs", "print or follow replicas' logs of a TFJob in the cluster, or of a local run", cmd_logs, usage_logs },
	{ "completion", "print a shell completion script: bash, zsh or fish", cmd_completion, usage_completion },
};
/* The commands and their help, which tfjobctl completion reads (cmd_completion.c). */
const struct command *const ctl_commands = commands;
const size_t ctl_command_count = sizeof(commands) / sizeof(commands[0]);

static void usage(FILE *out)
{
	fprintf(out, "usage: tfjobctl COMMAND [OPTIONS] ...\n\n"
	             "Reference implementation of Kubeflow TFJob (kubeflow.org/v1) semantics.\n\n"
	             "Commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\nEvery command accepts --compat C: 'documented' (default: the documented semantics with\n"
	             "training-operator v1.9's defects fixed) or 'training-operator-1.9' (v1.9 exactly).\n"
	             "FILE may be '-' for standard input; YAML or JSON is detected. As with kubectl, commands\n"
	             "that read TFJobs take -f FILE|DIR|- (repeatable; every document of a multi-document\n"
	             "stream, one result each) and print objects with -o json|yaml|name|wide.\n"
	             "The flags of the cluster connection (-n/--namespace, --context, --kubeconfig,\n"
	             "--request-timeout) and --compat may also come before COMMAND, as kubectl takes them.\n"
	             "Exit codes: 0 ok, 1 negative answer (e.g. invalid), 2 usage or input error.\n"
	             "Run 'tfjobctl COMMAND --help' for a command's options. 'tfjobctl --version' prints the version.\n");
}

/*
 * kubectl takes its global flags before the command as well as after it ("kubectl -n ns apply
 * ..."): the flags of the cluster connection given before COMMAND are moved just after it, where
 * the command's own option parser reads them. Returns the number of words moved (argv is
 * rewritten in place), or -1 (reported) when a flag lacks its value.
 */
static int hoist_global_flags(int argc, char **argv)
{
	static const char *const with_value[] = { "--namespace", "--context", "--kubeconfig", "--compat",
	                                          "--request-timeout", NULL };
	int a = 1;
	while (a < argc && argv[a][0] == '-' && argv[a][1]) {
		const char *w = argv[a];
		int words = 0;
		if (!strcmp(w, "-n"))
			words = 2;
		else if (w[1] == 'n')
			words = 1; /* -nNS, -n=NS */
		for (size_t i = 0; !words && with_value[i]; i++) {
			size_t len = strlen(with_value[i]);
			if (!strncmp(w, with_value[i], len) && (w[len] == '=' || !w[len]))
				words = w[len] == '=' ? 1 : 2;
		}
		if (!words)
			break; /* --help, --version, or an unknown flag: main() reports it */
		if (a + words > argc || (words == 2 && a + 1 >= argc)) {
			fprintf(stderr, "tfjobctl: flag needs an argument: %s\n", w);
			return -1;
		}
		a += words;
	}
	if (a == 1 || a >= argc)
		return a == 1 ? 0 : (fprintf(stderr, "tfjobctl: no COMMAND after the flags %s ...\n", argv[1]), -1);
	/* argv[1..a-1]: the flags; argv[a]: the command. Rotate the command to the front. */
	char *command = argv[a];
	memmove(argv + 2, argv + 1, (size_t)(a - 1) * sizeof(*argv));
	argv[1] = command;
	return a - 1;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && hoist_global_flags(argc, argv) < 0) {
		fprintf(stderr, "Run 'tfjobctl --help' for usage.\n");
		return EXIT_USAGE;
	}
	if (argc < 2) {
		usage(stderr);
		return EXIT_USAGE;
	}
	const char *name = argv[1];
	if (!strcmp(name, "--help") || !strcmp(name, "-h") || !strcmp(name, "help")) {
		usage(stdout);
		return EXIT_OK;
	}
	if (!strcmp(name, "--version") || !strcmp(name, "version")) {
		printf("tfjobctl %s (libtfjob %s)\n", TFJOB_VERSION, tfjob_version());
		return EXIT_OK;
	}
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (!strcmp(name, commands[i].name)) {
			bool run_dir = false; /* get --run-dir: a local run instead of the cluster */
			for (int a = 2; a < argc; a++) {
				if (!strcmp(argv[a], "--"))
					break;
				if (!strncmp(argv[a], "--run-dir", 9))
					run_dir = true;
				if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
					commands[i].usage(stdout);
					if (commands[i].run == cmd_get) {
						printf("\n");
						usage_get_run_dir(stdout);
					}
					return EXIT_OK;
				}
			}
			if (run_dir && commands[i].run == cmd_get)
				return cmd_get_run_dir(argc - 1, argv + 1);
			return commands[i].run(argc - 1, argv + 1);
		}
	}
	fprintf(stderr, "tfjobctl: unknown command '%s'\n\n", name);
	usage(stderr);
	return EXIT_USAGE;
}
