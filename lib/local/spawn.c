/*
 * Starting a Pod's process: fork + execvp in a new process group, no shell, logs to the run
 * directory; signals to the process group; wait statuses as exit codes.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

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

static void child(const char *cwd, char **argv, char **envp, int devnull, int log, pid_t parent)
{
	setpgid(0, 0);
#ifdef __linux__
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(128 + SIGKILL);
#else
	(void)parent;
#endif
	for (int sig = 1; sig < 32; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			signal(sig, SIG_DFL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(devnull, 0) < 0 || dup2(log, 1) < 0 || dup2(log, 2) < 0)
		_exit(127);
	if (chdir(cwd) != 0)
		child_fail("cannot change to the working directory", cwd, 127);
	environ = envp;
	execvp(argv[0], argv);
	child_fail("cannot run", argv[0], errno == ENOENT || errno == ENOTDIR ? 127 : 126);
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

int tfjob__local_spawn(tfjob_local *l, lpod *p)
{
	char *owned[4] = { tfjob__strdup_printf("TFJOB_RUN_DIR=%s", l->run_dir),
		               tfjob__strdup_printf("TFJOB_POD_NAME=%s", p->name),
		               tfjob__strdup_printf("HOSTNAME=%s", p->name), NULL };
	char **envp = build_env(l, p, owned, 3);
	char *cwd = work_dir(l, p);
	int devnull = open("/dev/null", O_RDONLY | O_CLOEXEC);
	int log = open(p->log_path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
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
		pid_t parent = getpid();
		/* No signal handler of the caller may run in the child before exec: block everything
		 * around fork; the child resets the handlers, then unblocks. */
		sigset_t all, saved;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &saved);
		pid_t pid = fork();
		if (pid == 0)
			child(cwd, p->launch.argv, envp, devnull, log, parent);
		pthread_sigmask(SIG_SETMASK, &saved, NULL);
		if (pid < 0) {
			start_failed(l, p, "fork");
			rc = TFJOB_EIO;
		} else {
			setpgid(pid, pid); /* also in the child: whichever runs first */
			p->pid = pid;
			p->state = LPOD_RUNNING;
			p->started_ms = tfjob__local_now_ms();
			p->started_wall = tfjob__local_wall();
			p->code = p->signal = 0;
			p->killed = false;
			tfjob__local_event(l, p->name, "Normal", "Started", "Started container %s: process group %d, log %s",
			                   p->launch.container, (int)pid, p->log_path);
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
