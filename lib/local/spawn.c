/*
 * Starting a Pod's process: a supervisor (supervise.c) that forks + execvp's it in a new process
 * group, no shell, logs to the run directory; signals to the process group; wait statuses as
 * exit codes. The supervisor is the program tfjob-supervise, started with posix_spawn, or when
 * that is not found a fork() of this process.
 * SPDX-License-Identifier: Apache-2.0
 */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <poll.h>
#include <spawn.h>

#include "local/internal.h"

extern char **environ;

void tfjob__local_decode_status(int status, int *code, int *sig)
{
	*sig = 0;
	if (WIFEXITED(status)) {
		*code = WEXITSTATUS(status);
	} else if (WIFSIGNALED(status)) {
		*sig = WTERMSIG(status);
		*code = 128 + *sig;
	} else {
		*code = 255;
	}
}

void tfjob__local_signal(lpod *p, int sig)
{
	if (p->pid <= 0)
		return;
	if (kill(-p->pid, sig) != 0 && errno == ESRCH)
		kill(p->pid, sig);
}

static size_t count(char **v)
{
	size_t n = 0;
	while (v && v[n])
		n++;
	return n;
}

static bool overridden(const char *entry, char **env)
{
	size_t len = strcspn(entry, "=");
	for (size_t i = 0; env && env[i]; i++)
		if (!strncmp(env[i], entry, len) && env[i][len] == '=')
			return true;
	return false;
}

/* environ, minus what ours override, + TFJOB_RUN_DIR, TFJOB_POD_NAME, HOSTNAME + the container's env. */
static char **build_env(tfjob_local *l, lpod *p, char **owned, size_t n_owned)
{
	size_t ne = count(environ), nc = count(p->launch.env);
	char **out = calloc(ne + nc + n_owned + 1, sizeof *out);
	if (!out)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < ne; i++)
		if (!overridden(environ[i], p->launch.env) && !overridden(environ[i], owned))
			out[k++] = environ[i];
	for (size_t i = 0; i < n_owned; i++)
		if (!overridden(owned[i], p->launch.env))
			out[k++] = owned[i];
	for (size_t i = 0; i < nc; i++)
		out[k++] = p->launch.env[i];
	out[k] = NULL;
	(void)l;
	return out;
}

static char *work_dir(tfjob_local *l, lpod *p)
{
	const char *w = p->launch.workdir;
	if (!w || !w[0])
		return tfjob__strdup(l->base_dir);
	if (w[0] == '/')
		return tfjob__strdup(w);
	return tfjob__strdup_printf("%s/%s", l->base_dir, w);
}

/* The PATH the process will see: its env's, else ours. */
static const char *path_of(char **envp)
{
	for (size_t i = 0; envp && envp[i]; i++)
		if (!strncmp(envp[i], "PATH=", 5))
			return envp[i] + 5;
	return "/usr/local/bin:/usr/bin:/bin";
}

/* 0 when argv0 can be executed (found in PATH, or relative to cwd), else an errno value. */
static int check_executable(const char *argv0, const char *cwd, char **envp)
{
	char buf[4096];
	if (strchr(argv0, '/')) {
		if (argv0[0] == '/')
			snprintf(buf, sizeof buf, "%s", argv0);
		else
			snprintf(buf, sizeof buf, "%s/%s", cwd, argv0);
		return access(buf, X_OK) == 0 ? 0 : errno;
	}
	const char *path = path_of(envp);
	int found = ENOENT;
	while (*path) {
		size_t len = strcspn(path, ":");
		snprintf(buf, sizeof buf, "%.*s%s%s", (int)len, path, len ? "/" : "", argv0);
		if (access(buf, X_OK) == 0)
			return 0;
		if (errno == EACCES)
			found = EACCES;
		path += len + (path[len] == ':');
	}
	return found;
}

/* 0 when dir is a directory we can enter, else an errno value. */
static int check_dir(const char *dir)
{
	struct stat st;
	if (stat(dir, &st) != 0)
		return errno;
	if (!S_ISDIR(st.st_mode))
		return ENOTDIR;
	return access(dir, X_OK) == 0 ? 0 : errno;
}

/* The command cannot run: exit 127 (not found) or 126 (not executable), as a shell reports it;
 * what/arg say why ("cannot run", the command). */
static void cannot_run(tfjob_local *l, lpod *p, int log, int e, const char *what, const char *arg)
{
	char msg[600];
	snprintf(msg, sizeof msg, "tfjob local: %s '%.400s': %s\n", what, arg, strerror(e));
	ssize_t n = write(log, msg, strlen(msg));
	(void)n;
	p->state = LPOD_DONE;
	p->code = e == ENOENT || e == ENOTDIR ? 127 : 126;
	p->started_wall = p->finished_wall = tfjob__local_wall();
	msg[strlen(msg) - 1] = '\0';
	tfjob__local_event(l, p->name, "Warning", "Exited", "Container %s exited with code %d: %s", p->launch.container,
	                   p->code, msg + 13);
}

static void start_failed(tfjob_local *l, lpod *p, const char *what)
{
	free(p->spawn_error);
	p->spawn_error = tfjob__strdup_printf("%s: %s", what, strerror(errno));
	p->state = LPOD_DONE;
	p->code = 128;
	p->finished_wall = tfjob__local_wall();
	tfjob__local_event(l, p->name, "Warning", "FailedToStart", "%s", p->spawn_error ? p->spawn_error : what);
}

/* The replica's pid as its supervisor reports it: > 0, or -errno; 0 when the supervisor ended
 * without saying (killed). Polls so that a write end held by another process (a supervisor
 * forked meanwhile by another thread) cannot keep us waiting once this supervisor is gone. */
static int read_replica_pid(int fd, pid_t supervisor)
{
	int report = 0;
	size_t got = 0;
	while (got < sizeof report) {
		struct pollfd pfd = { fd, POLLIN, 0 };
		int ready = poll(&pfd, 1, 100);
		if (ready < 0 && errno != EINTR)
			return -errno;
		if (ready <= 0) {
			siginfo_t info = { 0 };
			if (waitid(P_PID, (id_t)supervisor, &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == supervisor)
				return 0; /* ended; left to be reaped by the caller */
			continue;
		}
		ssize_t n = read(fd, (char *)&report + got, sizeof report - got);
		if (n == 0)
			return 0;
		if (n < 0 && errno != EINTR)
			return -errno;
		got += n > 0 ? (size_t)n : 0;
	}
	return report;
}

/* fd, or a copy of it above TFJOB__SUPERVISE_REPORT_FD (closing fd): moving the descriptors to
 * 0 to 3 in the supervisor then overwrites none that is still to be moved. */
static int above_report_fd(int fd)
{
	if (fd < 0 || fd > TFJOB__SUPERVISE_REPORT_FD)
		return fd;
	int copy = fcntl(fd, F_DUPFD_CLOEXEC, TFJOB__SUPERVISE_REPORT_FD + 1);
	close(fd);
	return copy;
}

/* The program's descriptors (supervise.h): stdin /dev/null, stdout and stderr the log, the
 * report pipe; the rest of the engine's are close-on-exec. */
static int spawn_fds(posix_spawn_file_actions_t *fa, const tfjob__exec *x, int report_fd)
{
	int rc = posix_spawn_file_actions_adddup2(fa, x->devnull, 0);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(fa, x->log, 1);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(fa, x->log, 2);
	if (!rc)
		rc = posix_spawn_file_actions_adddup2(fa, report_fd, TFJOB__SUPERVISE_REPORT_FD);
	return rc;
}

/* Every signal blocked and at its default action in the program, as in a forked supervisor. */
static int spawn_signals(posix_spawnattr_t *at)
{
	sigset_t all;
	sigfillset(&all);
	int rc = posix_spawnattr_setflags(at, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
	if (!rc)
		rc = posix_spawnattr_setsigmask(at, &all);
	if (!rc)
		rc = posix_spawnattr_setsigdefault(at, &all);
	return rc;
}

/* Start the program tfjob-supervise with posix_spawn, which does not copy the engine's memory
 * (glibc: clone(CLONE_VM | CLONE_VFORK) + exec). The command and its arguments come after "--"
 * and the environment is the program's own, so any bytes pass. Returns its pid, or -1 with errno
 * set when it could not be started. */
static pid_t spawn_program(const char *program, const tfjob__exec *x, int report_fd, pid_t runner)
{
	char pid[24];
	snprintf(pid, sizeof pid, "%ld", (long)runner);
	size_t n = count(x->argv);
	char **argv = calloc(n + 6, sizeof *argv);
	if (!argv) {
		errno = ENOMEM;
		return -1;
	}
	char *head[] = { (char *)program, (char *)TFJOB__SUPERVISE_PROTOCOL, pid, (char *)x->cwd, (char *)"--" };
	memcpy(argv, head, sizeof head);
	memcpy(argv + 5, x->argv, n * sizeof *argv);
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	pid_t supervisor = -1;
	int rc = posix_spawn_file_actions_init(&fa);
	if (!rc) {
		rc = posix_spawnattr_init(&at);
		if (!rc) {
			rc = spawn_fds(&fa, x, report_fd);
			if (!rc)
				rc = spawn_signals(&at);
			if (!rc)
				rc = posix_spawn(&supervisor, program, &fa, &at, argv, x->envp);
			posix_spawnattr_destroy(&at);
		}
		posix_spawn_file_actions_destroy(&fa);
	}
	free(argv);
	if (rc) {
		errno = rc;
		return -1;
	}
	return supervisor;
}

/* The fallback: fork the supervisor (supervise.c runs in the child). Returns its pid, or -1 with
 * errno set. */
static pid_t fork_supervisor(const tfjob__exec *x, int report_fd, int read_fd, pid_t runner)
{
	/* No signal handler of the caller may run in the children: block everything around fork;
	 * the supervisor keeps them blocked, the replica resets the handlers, then unblocks. */
	sigset_t all, saved;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &saved);
	pid_t supervisor = fork();
	if (supervisor == 0) {
		close(read_fd);
		tfjob__local_supervise(x, report_fd, runner);
	}
	int fork_errno = errno;
	pthread_sigmask(SIG_SETMASK, &saved, NULL);
	errno = fork_errno;
	return supervisor;
}

/* Once per engine, an event on the Pod being started: its supervisor is a fork of this process
 * (why: the program was not found, or could not be started: e). */
static void note_in_process(tfjob_local *l, lpod *p, int e)
{
	if (l->supervise_noted)
		return;
	l->supervise_noted = true;
	if (l->supervise_path)
		tfjob__local_event(l, p->name, "Warning", "SupervisorInProcess",
		                   "Cannot start %s: %s; supervising replicas from forks of this process", l->supervise_path,
		                   strerror(e));
	else
		tfjob__local_event(l, p->name, "Warning", "SupervisorInProcess",
		                   "No " TFJOB__SUPERVISE_NAME " (looked for %s); supervising replicas from forks of this process",
		                   l->supervise_looked ? l->supervise_looked : "it");
}

/* Start the supervisor of one replica: the program tfjob-supervise, else a fork. Returns its pid
 * and the replica's in *replica, or -1 with errno set (the supervisor is then reaped). */
static pid_t start_supervisor(tfjob_local *l, lpod *p, const tfjob__exec *x, pid_t *replica)
{
	int ends[2];
	if (pipe2(ends, O_CLOEXEC) != 0)
		return -1;
	if ((ends[1] = above_report_fd(ends[1])) < 0) {
		close(ends[0]);
		return -1;
	}
	pid_t runner = getpid();
	pid_t supervisor = l->supervise_path ? spawn_program(l->supervise_path, x, ends[1], runner) : -1;
	if (supervisor < 0) {
		note_in_process(l, p, errno);
		supervisor = fork_supervisor(x, ends[1], ends[0], runner);
	}
	int start_errno = errno;
	close(ends[1]);
	if (supervisor < 0) {
		close(ends[0]);
		errno = start_errno;
		return -1;
	}
	int report = read_replica_pid(ends[0], supervisor);
	close(ends[0]);
	if (report > 0) {
		*replica = (pid_t)report;
		return supervisor;
	}
	kill(supervisor, SIGKILL);
	while (waitpid(supervisor, NULL, 0) < 0 && errno == EINTR)
		;
	errno = report < 0 ? -report : ECHILD;
	return -1;
}

int tfjob__local_spawn(tfjob_local *l, lpod *p)
{
	char *owned[4] = { tfjob__strdup_printf("TFJOB_RUN_DIR=%s", l->run_dir),
		               tfjob__strdup_printf("TFJOB_POD_NAME=%s", p->name),
		               tfjob__strdup_printf("HOSTNAME=%s", p->name), NULL };
	char **envp = build_env(l, p, owned, 3);
	char *cwd = work_dir(l, p);
	int devnull = above_report_fd(open("/dev/null", O_RDONLY | O_CLOEXEC));
	int log = above_report_fd(open(p->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644));
	int rc = 0;
	if (!envp || !cwd || !owned[0] || !owned[1] || !owned[2]) {
		errno = ENOMEM;
		start_failed(l, p, "out of memory");
		rc = TFJOB_ENOMEM;
	} else if (devnull < 0 || log < 0) {
		start_failed(l, p, log < 0 ? p->log_path : "/dev/null");
		rc = TFJOB_EIO;
	} else if ((rc = check_dir(cwd)) != 0) {
		cannot_run(l, p, log, rc, "cannot change to the working directory", cwd);
		rc = 0;
	} else if ((rc = check_executable(p->launch.argv[0], cwd, envp)) != 0) {
		cannot_run(l, p, log, rc, "cannot run", p->launch.argv[0]);
		rc = 0;
	} else {
		tfjob__exec x = { cwd, p->launch.argv, envp, devnull, log };
		pid_t replica;
		pid_t supervisor = start_supervisor(l, p, &x, &replica);
		if (supervisor < 0) {
			start_failed(l, p, "starting its supervisor");
			rc = TFJOB_EIO;
		} else {
			p->supervisor = supervisor;
			p->pid = replica;
			p->state = LPOD_RUNNING;
			p->started_ms = tfjob__monotonic_ms();
			p->started_wall = tfjob__local_wall();
			p->code = p->signal = 0;
			p->killed = false;
			tfjob__local_event(l, p->name, "Normal", "Started", "Started container %s: process group %d, log %s",
			                   p->launch.container, (int)replica, p->log_path);
		}
	}
	if (devnull >= 0)
		close(devnull);
	if (log >= 0)
		close(log);
	free(envp);
	free(cwd);
	for (int i = 0; i < 3; i++)
		free(owned[i]);
	return rc;
}
