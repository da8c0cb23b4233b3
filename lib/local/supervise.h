/*
 * The supervisor of one replica (supervise.c): what the engine starts per replica, either as the
 * program tfjob-supervise (supervise_main.c, started with posix_spawn) or, when that program is
 * not found, in a fork() of the engine. Depends on libc only: the program does not link
 * libtfjob. Not installed.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_LOCAL_SUPERVISE_H
#define TFJOB_LOCAL_SUPERVISE_H

#include <sys/types.h>

/* The program's command line: tfjob-supervise PROTOCOL RUNNER_PID WORKDIR -- COMMAND [ARG...],
 * the replica's environment as its own, stdin /dev/null, stdout and stderr the log, and the
 * report pipe as this descriptor. PROTOCOL changes with any change of this contract, so that a
 * program of another version refuses to run rather than misread it. */
#define TFJOB__SUPERVISE_PROTOCOL "1"
#define TFJOB__SUPERVISE_REPORT_FD 3
/* The program's file name; the engine looks for it as docs/local.md says (supervisor_path.c). */
#define TFJOB__SUPERVISE_NAME "tfjob-supervise"

/* What the replica execs, and how. */
typedef struct tfjob__exec {
	const char *cwd;
	char **argv, **envp; /* NULL-terminated */
	int devnull, log;    /* stdin; stdout and stderr */
} tfjob__exec;

/* With every signal blocked, async-signal-safe only (it runs in the child of fork() when no
 * program is found): forks the replica (its own process group, exec of x), writes its pid (an
 * int; -errno when fork failed) to report_fd and closes it, waits for it, kills every descendant
 * left (and all of them when `runner` dies), then exits as the replica did. Never returns. */
_Noreturn void tfjob__local_supervise(const tfjob__exec *x, int report_fd, pid_t runner);

#endif
