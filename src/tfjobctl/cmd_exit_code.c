/*
 * tfjobctl exit-code [--compat C] CODE
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tfjobctl.h"

void usage_exit_code(FILE *out)
{
	fprintf(out,
	        "usage: tfjobctl exit-code [--compat C] CODE\n\n"
	        "Print \"retryable\" or \"permanent\": how restartPolicy ExitCode treats the exit code CODE\n"
	        "of a replica's tensorflow container; \"success\" for 0 (the replica completed: it is not\n"
	        "restarted, and counts as succeeded).\n\n"
	        "  --compat C   'documented' (default: 1 2 126 127 128 139 permanent; 130 137 138 143\n"
	        "               retryable; other codes as v1.9) or 'training-operator-1.9' (retryable\n"
	        "               exactly when CODE >= 128)\n\n"
	        "CODE is what a container can report: 0 to 255 (a process's exit status is 8 bits; a\n"
	        "process killed by signal N reports 128+N). Anything else is refused.\n\n"
	        "Exit status: 0 ok, 2 usage error.\n");
}

static bool parse_code(int *out, const char *s)
{
	char *end;
	/* Only an optional sign and decimal digits: no blanks, no hex, no fraction. */
	const char *digits = (*s == '-' || *s == '+') ? s + 1 : s;
	if (!(*digits >= '0' && *digits <= '9'))
		return false;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < INT_MIN || v > INT_MAX)
		return false;
	*out = (int)v;
	return true;
}

int cmd_exit_code(int argc, char **argv)
{
	tfjob_compat compat = TFJOB_COMPAT_DOCUMENTED;
	const char *code_text = NULL;
	/* Parsed by hand: a negative CODE must not be taken for an option. */
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (!strcmp(a, "--compat") || !strncmp(a, "--compat=", 9)) {
			const char *v = a[8] == '=' ? a + 9 : (i + 1 < argc ? argv[++i] : NULL);
			if (!v)
				return ctl_fail("exit-code: option '--compat' needs a value");
			if (!ctl_parse_compat(&compat, v))
				return EXIT_USAGE;
		} else if (!strcmp(a, "--")) {
			if (i + 1 < argc && !code_text && i + 2 == argc)
				code_text = argv[i + 1];
			else
				return ctl_fail("exit-code: expected exactly one CODE");
			break;
		} else if (a[0] == '-' && !(a[1] >= '0' && a[1] <= '9')) {
			return ctl_fail("exit-code: unknown option '%s' (see tfjobctl exit-code --help)", a);
		} else if (code_text) {
			return ctl_fail("exit-code: expected exactly one CODE");
		} else {
			code_text = a;
		}
	}
	if (!code_text)
		return ctl_fail("exit-code: expected a CODE (see tfjobctl exit-code --help)");
	int code;
	if (!parse_code(&code, code_text))
		return ctl_fail("exit-code: '%s' is not an integer exit code", code_text);
	if (code < 0 || code > 255)
		return ctl_fail("exit-code: %d is not an exit code a container can report: exit codes are 0 to 255 "
		                "(the 8 bits of a process's exit status; killed by signal N is 128+N)", code);
	/* 0 is no failure: the pod Succeeded; the classifier's answer (not restarted) says nothing more */
	puts(code == 0 ? "success" : tfjob_exit_class_name(tfjob_exit_code_classify(code, compat)));
	return EXIT_OK;
}
