/*
 * tfjob-supervise: the supervisor of one replica (supervise.c) as a program of its own, which
 * the engine starts with posix_spawn (spawn.c): the engine never fork()s itself, as a fork copies
 * its page tables, in time and memory that grow with its heap, once per replica. The command
 * line is in supervise.h; it is no tool for people, and says so when misused.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "local/supervise.h"

extern char **environ;

static _Noreturn void refuse(const char *why, const char *arg)
{
	const char *parts[] = { TFJOB__SUPERVISE_NAME ": ", why, arg, "\n" };
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
		ssize_t n = write(2, parts[i], strlen(parts[i]));
		(void)n;
	}
	_exit(127);
}

/* A decimal pid, or -1. */
static long parse_pid(const char *s)
{
	long pid = 0;
	for (const char *c = s; *c; c++) {
		if (*c < '0' || *c > '9' || pid > 99999999)
			return -1;
		pid = pid * 10 + (*c - '0');
	}
	return s[0] ? pid : -1;
}

int main(int argc, char **argv)
{
	if (argc < 6 || strcmp(argv[4], "--") != 0)
		refuse("started by libtfjob only: ", TFJOB__SUPERVISE_NAME " PROTOCOL RUNNER_PID WORKDIR -- COMMAND [ARG...]");
	if (strcmp(argv[1], TFJOB__SUPERVISE_PROTOCOL) != 0)
		refuse("libtfjob and this program are of different versions: this one speaks protocol "
		       TFJOB__SUPERVISE_PROTOCOL ", not ", argv[1]);
	long runner = parse_pid(argv[2]);
	if (runner <= 0)
		refuse("no runner pid: ", argv[2]);
	/* Every signal blocked, as in the engine's fork: the engine's spawn attributes already did
	 * (so that none arrives before this), this only keeps it so when started otherwise. */
	sigset_t all;
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, NULL);
	tfjob__exec x = { argv[3], argv + 5, environ, 0, 1 };
	tfjob__local_supervise(&x, TFJOB__SUPERVISE_REPORT_FD, (pid_t)runner);
}
