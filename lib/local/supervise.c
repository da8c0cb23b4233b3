/*
 * The supervisor of one replica and the replica's exec, shared by the program tfjob-supervise
 * (supervise_main.c) and the engine's fallback, a fork() of itself (spawn.c).
 *
 * The runner starts a supervisor per replica; the supervisor forks the replica, which execs the
 * command in a process group of its own. On Linux the supervisor is the subreaper of everything
 * the replica starts (setsid and daemons included) and gets a catchable parent-death signal:
 * when the replica exits, or when the runner dies (even by SIGKILL), it kills every descendant,
 * then exits as the replica did (same code, or the same signal), so the runner sees the
 * replica's own status.
 *
 * In the fallback this runs between fork() and exec()/_exit() of a runner that may be
 * multi-threaded (the library is embedded in Python and Go): everything here is
 * async-signal-safe: no malloc, no stdio.
 * SPDX-License-Identifier: Apache-2.0
 */
#define _GNU_SOURCE /* _Fork */
#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#include <sys/syscall.h>
#endif

#include "local/supervise.h"

extern char **environ;

/* The parent-death signal of a supervisor: catchable, so that it can kill the replica's tree
 * first. Blocked and only taken by sigtimedwait(), like SIGCHLD. */
#define RUNNER_GONE_SIGNAL SIGUSR1
/* How often a supervisor checks that its runner is still there (should the signal be lost). */
#define RUNNER_CHECK_SECONDS 1

/* fork() without the atfork handlers of the embedding process (they are not async-signal-safe
 * in the child of a multi-threaded process). */
static pid_t fork_safely(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
	return _Fork();
#else
	return fork();
#endif
}

/* Every signal back to its default action; the mask is left as it is. */
static void default_signals(void)
{
	for (int sig = 1; sig < 32; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
}

static void child_fail(const char *what, const char *arg, int code)
{
	int e = errno;
	const char *parts[] = { "tfjob local: ", what, " '", arg, "': ", strerror(e), "\n" };
	for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
		ssize_t n = write(2, parts[i], strlen(parts[i]));
		(void)n;
	}
	_exit(code);
}

/* The replica: its own process group, dies with its supervisor, default signals, /dev/null in,
 * the log out, then exec. */
static _Noreturn void replica(const tfjob__exec *x, pid_t supervisor)
{
	setpgid(0, 0);
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != supervisor)
		_exit(128 + SIGKILL);
#else
	(void)supervisor;
#endif
	default_signals();
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(x->devnull, 0) < 0 || dup2(x->log, 1) < 0 || dup2(x->log, 2) < 0)
		_exit(127);
	if (chdir(x->cwd) != 0)
		child_fail("cannot change to the working directory", x->cwd, 127);
	environ = x->envp;
	execvp(x->argv[0], x->argv);
	child_fail("cannot run", x->argv[0], errno == ENOENT || errno == ENOTDIR ? 127 : 126);
	_exit(127);
}

#ifdef __linux__
/* The parent pid in a /proc/PID/stat line (after the last ')': state, ppid), or -1; *zombie
 * says whether it has already ended. */
static long stat_ppid(const char *line, bool *zombie)
{
	const char *rp = strrchr(line, ')');
	if (!rp || rp[1] != ' ' || !rp[2] || rp[3] != ' ')
		return -1;
	*zombie = rp[2] == 'Z';
	long ppid = 0;
	for (const char *c = rp + 4; *c >= '0' && *c <= '9'; c++)
		ppid = ppid * 10 + (*c - '0');
	return ppid;
}

/* "/proc/" + the digits of name + "/stat" into path (size >= 64); false when name is no pid. */
static bool stat_path(char *path, const char *name)
{
	size_t n = strlen(name);
	if (n == 0 || n > 20)
		return false;
	for (size_t i = 0; i < n; i++)
		if (name[i] < '0' || name[i] > '9')
			return false;
	memcpy(path, "/proc/", 6);
	memcpy(path + 6, name, n);
	memcpy(path + 6 + n, "/stat", 6);
	return true;
}

/* The parent of process `name` (a /proc entry), or -1. */
static long parent_of(const char *name, bool *zombie)
{
	char path[64], line[512];
	if (!stat_path(path, name))
		return -1;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	ssize_t n = read(fd, line, sizeof line - 1);
	close(fd);
	if (n <= 0)
		return -1;
	line[n] = '\0';
	return stat_ppid(line, zombie);
}

/* SIGKILL to every live child of this process and to the group it leads, if any (setsid). Reads
 * /proc with getdents64 into a buffer on the stack. Returns how many it found. */
static int kill_children(void)
{
	long self = (long)getpid();
	int fd = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	int found = 0;
	char buf[8192];
	long n;
	while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0) {
		for (long off = 0; off < n;) {
			/* struct linux_dirent64: d_ino (8), d_off (8), d_reclen (2), d_type (1), d_name */
			unsigned short reclen;
			memcpy(&reclen, buf + off + 16, sizeof reclen);
			const char *name = buf + off + 19;
			off += reclen;
			bool zombie = false;
			if (parent_of(name, &zombie) != self || zombie)
				continue;
			pid_t pid = 0;
			for (const char *c = name; *c; c++)
				pid = pid * 10 + (*c - '0');
			kill(-pid, SIGKILL);
			kill(pid, SIGKILL);
			found++;
		}
	}
	close(fd);
	return found;
}
#endif

/* Reap every child that has ended; true while some child is still running. */
static bool children_left(void)
{
	pid_t w;
	while ((w = waitpid(-1, NULL, WNOHANG)) > 0)
		;
	return w == 0;
}

/* Kill every descendant, repeatedly (a killed process's children become ours, as we are their
 * subreaper), and reap them until no child is left. Without a child there is no descendant
 * either, so the common case (the replica left nothing) reads nothing of /proc. */
static void kill_tree(pid_t replica_pid)
{
	kill(-replica_pid, SIGKILL);
	while (children_left()) {
#ifdef __linux__
		kill_children();
#endif
		waitpid(-1, NULL, 0);
	}
}

/* Wait for the replica, reaping the descendants that end meanwhile (they are reparented to us).
 * Returns its wait status, or -1 when the runner is gone. */
static int wait_replica(pid_t replica_pid, pid_t runner)
{
	sigset_t wake;
	sigemptyset(&wake);
	sigaddset(&wake, SIGCHLD);
	sigaddset(&wake, RUNNER_GONE_SIGNAL);
	for (;;) {
		int status;
		pid_t w;
		while ((w = waitpid(-1, &status, WNOHANG)) > 0)
			if (w == replica_pid)
				return status;
		if (w < 0 && errno == ECHILD)
			return 0; /* cannot happen: the replica is our child until we reap it */
		if (getppid() != runner)
			return -1;
		struct timespec check = { RUNNER_CHECK_SECONDS, 0 };
		sigtimedwait(&wake, NULL, &check);
	}
}

/* Exit as the replica did: the same exit code, or the same signal (without a core dump). */
static _Noreturn void exit_like(int status)
{
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
#ifdef __linux__
		prctl(PR_SET_DUMPABLE, 0); /* the replica dumped its core if it had to, not us */
#endif
		signal(sig, SIG_DFL);
		sigset_t only;
		sigemptyset(&only);
		sigaddset(&only, sig);
		sigprocmask(SIG_UNBLOCK, &only, NULL);
		kill(getpid(), sig);
		_exit(128 + sig);
	}
	_exit(WIFEXITED(status) ? WEXITSTATUS(status) : 255);
}

void tfjob__local_supervise(const tfjob__exec *x, int report_fd, pid_t runner)
{
	/* Signals stay blocked (the runner blocked them around fork): SIGCHLD and the runner's
	 * death are taken with sigtimedwait(); no handler of the embedding process may run here. */
	default_signals();
	setpgid(0, 0); /* not in the runner's group: a terminal's ^C or ^Z is for the runner */
#ifdef __linux__
	prctl(PR_SET_CHILD_SUBREAPER, 1);
	prctl(PR_SET_PDEATHSIG, RUNNER_GONE_SIGNAL);
	if (getppid() != runner)
		_exit(128 + SIGKILL); /* the runner died before the signal was armed */
#endif
	pid_t self = getpid();
	pid_t pid = fork_safely();
	if (pid == 0)
		replica(x, self);
	int report = pid > 0 ? (int)pid : -errno;
	if (pid > 0)
		setpgid(pid, pid); /* also in the replica: the group exists before the runner signals it */
	ssize_t n = write(report_fd, &report, sizeof report);
	(void)n;
	close(report_fd);
	if (pid < 0)
		_exit(127);
	int status = wait_replica(pid, runner);
	kill_tree(pid);
	if (status < 0)
		_exit(128 + SIGKILL); /* nobody waits for us any more */
	exit_like(status);
}
