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
	{ "validate", "validate a TFJob as the API server and the training-operator webhook would", cmd_validate, usage_validate,
	  CTL_TAKES_COMPAT },
	{ "default", "print the TFJob with defaults applied, as JSON", cmd_default, usage_default, CTL_TAKES_COMPAT },
	{ "exit-code", "classify a container exit code: success, retryable or permanent", cmd_exit_code, usage_exit_code,
	  0 },
	{ "tf-config", "print the TF_CONFIG of one replica of a TFJob", cmd_tf_config, usage_tf_config,
	  CTL_TAKES_NAMESPACE | CTL_TAKES_COMPAT },
	{ "render", "print the Pods and Services the operator creates for a new TFJob", cmd_render, usage_render,
	  CTL_TAKES_NAMESPACE | CTL_TAKES_COMPAT },
	{ "plan", "plan one reconcile step of a TFJob given its observed pods and services", cmd_plan, usage_plan,
	  CTL_TAKES_COMPAT },
	{ "simulate", "run a scenario of pod phase changes through the planner, step by step", cmd_simulate, usage_simulate,
	  CTL_TAKES_COMPAT },
	{ "apply", "create or update TFJobs in the cluster of the current kubeconfig", cmd_apply, usage_apply,
	  CTL_TAKES_CONNECTION },
	{ "get", "list TFJobs of the cluster, or show some (table, json, yaml, wide, name)", cmd_get, usage_get,
	  CTL_TAKES_CONNECTION },
	{ "describe", "describe a TFJob: conditions, replica statuses, events", cmd_describe, usage_describe,
	  CTL_TAKES_CONNECTION },
	{ "delete", "delete TFJobs from the cluster", cmd_delete, usage_delete, CTL_TAKES_CONNECTION },
	{ "diagnose", "say which step from a TFJob to its running containers fails, and why", cmd_diagnose,
	  usage_diagnose, CTL_TAKES_CONNECTION },
	{ "watch", "follow a TFJob until it finishes", cmd_watch, usage_watch, CTL_TAKES_CONNECTION },
	{ "run", "run a TFJob on this machine, its replicas as local processes", cmd_run, usage_run, CTL_TAKES_COMPAT },
	{ "logs", "print or follow replicas' logs of a TFJob in the cluster, or of a local run", cmd_logs, usage_logs,
	  CTL_TAKES_CONNECTION },
	{ "completion", "print a shell completion script: bash, zsh or fish", cmd_completion, usage_completion, 0 },
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

/* The number of words (1 or 2) of the global flag at w, its CTL_TAKES_* kind in *kind; 0: not one. */
static int global_flag_words(const char *w, unsigned *kind)
{
	static const struct {
		const char *name;
		unsigned kind;
	} flags[] = {
		{ "--namespace", CTL_TAKES_NAMESPACE },      { "--context", CTL_TAKES_CONNECTION },
		{ "--kubeconfig", CTL_TAKES_CONNECTION },    { "--request-timeout", CTL_TAKES_CONNECTION },
		{ "--compat", CTL_TAKES_COMPAT },
	};
	*kind = CTL_TAKES_NAMESPACE;
	if (!strcmp(w, "-n"))
		return 2;
	if (w[0] == '-' && w[1] == 'n')
		return 1; /* -nNS, -n=NS */
	for (size_t i = 0; i < sizeof(flags) / sizeof(flags[0]); i++) {
		size_t len = strlen(flags[i].name);
		if (!strncmp(w, flags[i].name, len) && (w[len] == '=' || !w[len])) {
			*kind = flags[i].kind;
			return w[len] == '=' ? 1 : 2;
		}
	}
	return 0;
}

static const struct command *find_command(const char *name)
{
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(name, commands[i].name))
			return &commands[i];
	return NULL;
}

/* Whether a command reads a global flag of that kind (the connection's flags include -n). */
static bool command_takes(const struct command *cmd, unsigned kind)
{
	unsigned takes = cmd ? cmd->globals : ~0u; /* unknown: main() says so */
	if (takes & CTL_TAKES_CONNECTION)
		takes |= CTL_TAKES_NAMESPACE;
	return (takes & kind) != 0;
}

/*
 * kubectl takes its global flags before the command as well as after it ("kubectl -n ns apply
 * ..."), and every command accepts them: the global flags given before COMMAND are moved just
 * after it, where the command's own option parser reads them, and those the command has no use
 * for are dropped (tfjobctl -n ns validate F validates F). *argc and argv are rewritten in place;
 * returns 0, or -1 (reported) when a flag lacks its value or no COMMAND follows the flags.
 */
static int hoist_global_flags(int *argc, char **argv)
{
	int a = 1;
	unsigned kind;
	for (int words; a < *argc && (words = global_flag_words(argv[a], &kind)) > 0; a += words) {
		if (a + words > *argc) {
			fprintf(stderr, "tfjobctl: flag needs an argument: %s\n", argv[a]);
			return -1;
		}
	}
	if (a == 1)
		return 0; /* --help, --version, a command, or an unknown flag: main() handles it */
	if (a >= *argc) {
		fprintf(stderr, "tfjobctl: no COMMAND after the flags %s ...\n", argv[1]);
		return -1;
	}
	const struct command *cmd = find_command(argv[a]);
	char **flags = malloc((size_t)(a - 1) * sizeof(*flags)); /* argv[1..a-1]; argv[a]: the command */
	if (!flags) {
		fprintf(stderr, "tfjobctl: out of memory\n");
		return -1;
	}
	memcpy(flags, argv + 1, (size_t)(a - 1) * sizeof(*flags));
	argv[1] = argv[a];
	int kept = 2;
	for (int i = 0, words; i < a - 1; i += words) {
		words = global_flag_words(flags[i], &kind);
		for (int k = 0; k < words && command_takes(cmd, kind); k++)
			argv[kept++] = flags[i + k];
	}
	free(flags);
	memmove(argv + kept, argv + a + 1, (size_t)(*argc - a) * sizeof(*argv)); /* the rest and NULL */
	*argc -= a + 1 - kept;
	return 0;
}

int main(int argc, char **argv)
{
	if (argc >= 2 && hoist_global_flags(&argc, argv) < 0) {
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
	const struct command *cmd = find_command(name);
	if (!cmd) {
		fprintf(stderr, "tfjobctl: unknown command '%s'\n\n", name);
		usage(stderr);
		return EXIT_USAGE;
	}
	bool run_dir = false; /* get --run-dir: a local run instead of the cluster */
	for (int a = 2; a < argc; a++) {
		if (!strcmp(argv[a], "--"))
			break;
		if (!strncmp(argv[a], "--run-dir", 9))
			run_dir = true;
		if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h")) {
			cmd->usage(stdout);
			if (cmd->run == cmd_get) {
				printf("\n");
				usage_get_run_dir(stdout);
			}
			return EXIT_OK;
		}
	}
	if (run_dir && cmd->run == cmd_get)
		return cmd_get_run_dir(argc - 1, argv + 1);
	return cmd->run(argc - 1, argv + 1);
}
