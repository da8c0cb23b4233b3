/*
 * The local process engine: the Pod table, the kubelet loop (start, reap, restart, escalate),
 * interrupts and shutdown.
 * SPDX-License-Identifier: Apache-2.0
 */
#define _GNU_SOURCE /* pipe2 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "core/job.h"
#include "local/internal.h"
#include "util/versioned_structs.h"

int tfjob_local_options_init(tfjob_local_options *opts, unsigned int version)
{
	return tfjob__versioned_init(&tfjob__local_options_v, opts, version);
}

static int make_dir(const char *path, tfjob_error **err)
{
	if (mkdir(path, 0777) == 0 || errno == EEXIST) {
		struct stat st;
		if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
			return 0;
		errno = ENOTDIR; /* not "File exists": it does, but is no directory */
	}
	return tfjob__fail(err, TFJOB_EIO, "run directory %s: %s", path, strerror(errno ? errno : ENOTDIR));
}

int tfjob_local_new(tfjob_local **out, const tfjob_local_options *caller_opts, tfjob_error **err)
{
	if (!out || !caller_opts)
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_local_new: out and options are required");
	*out = NULL;
	tfjob_local_options copy;
	int rc = tfjob__versioned_copy(&tfjob__local_options_v, &copy, caller_opts, err);
	if (rc)
		return rc;
	const tfjob_local_options *opts = &copy;
	if (!opts->run_dir || !opts->run_dir[0])
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_local_new: options.run_dir is required");
	rc = make_dir(opts->run_dir, err);
	if (rc)
		return rc;
	tfjob_local *l = calloc(1, sizeof *l);
	if (!l)
		return tfjob__oom(err);
	l->wake[0] = l->wake[1] = -1;
	char cwd[4096];
	const char *base = opts->base_dir && opts->base_dir[0] ? opts->base_dir : getcwd(cwd, sizeof cwd);
	l->run_dir = realpath(opts->run_dir, NULL);
	l->base_dir = base ? realpath(base, NULL) : NULL;
	if (!l->run_dir || !l->base_dir) {
		rc = tfjob__fail(err, TFJOB_EIO, "%s: %s", l->run_dir ? "base directory" : "run directory", strerror(errno));
		goto fail;
	}
	/* close-on-exec from the start: a process another thread starts meanwhile must not inherit it */
	if (pipe2(l->wake, O_CLOEXEC | O_NONBLOCK) != 0) {
		rc = tfjob__fail(err, TFJOB_EIO, "wake-up pipe: %s", strerror(errno));
		goto fail;
	}
	l->backoff_initial_ms = opts->backoff_initial_ms > 0 ? opts->backoff_initial_ms : 10000;
	l->backoff_max_ms = opts->backoff_max_ms > 0 ? opts->backoff_max_ms : 300000;
	l->grace_ms = opts->grace_period_ms;
	if (opts->gpus && !(l->gpus_option = tfjob__strdup(opts->gpus))) {
		rc = tfjob__oom(err);
		goto fail;
	}
	if (l->gpus_option && (rc = tfjob__local_gpus_known(l, err)) != 0)
		goto fail; /* a list that cannot be used is refused now, not when a job asks for GPUs */
	l->supervise_path = tfjob__local_supervise_path(&l->supervise_looked);
	l->on_event = opts->on_event;
	l->event_payload = opts->event_payload;
	l->ports = json_object();
	l->ignored = json_object();
	l->history = json_object();
	if (!l->ports || !l->ignored || !l->history) {
		rc = tfjob__oom(err);
		goto fail;
	}
	pthread_mutex_init(&l->lock, NULL);
	*out = l;
	return 0;
fail:
	free(l->run_dir);
	free(l->base_dir);
	free(l->gpus_option);
	free(l->supervise_path);
	free(l->supervise_looked);
	json_decref(l->gpus);
	json_decref(l->ports);
	json_decref(l->ignored);
	json_decref(l->history);
	for (int i = 0; i < 2; i++)
		if (l->wake[i] >= 0)
			close(l->wake[i]);
	free(l);
	return rc;
}

static void pod_free(lpod *p)
{
	json_decref(p->summary);
	free(p->ns);
	free(p->name);
	json_decref(p->obj);
	tfjob__launch_free(&p->launch);
	free(p->log_path);
	free(p->spawn_error);
	free(p);
}

void tfjob_local_free(tfjob_local *l)
{
	if (!l)
		return;
	tfjob_local_shutdown(l, NULL);
	tfjob__local_stop_strays(l->run_dir); /* what outlived a supervisor killed with SIGKILL */
	for (lpod *p = l->pods, *n; p; p = n) {
		n = p->next;
		pod_free(p);
	}
	close(l->wake[0]);
	close(l->wake[1]);
	json_decref(l->ports);
	json_decref(l->ignored);
	json_decref(l->history);
	json_decref(l->gpus);
	free(l->gpus_option);
	free(l->supervise_path);
	free(l->supervise_looked);
	free(l->run_dir);
	free(l->base_dir);
	pthread_mutex_destroy(&l->lock);
	free(l);
}

void tfjob__local_wake(tfjob_local *l)
{
	char c = 0;
	ssize_t n = write(l->wake[1], &c, 1);
	(void)n;
}

void tfjob_local_interrupt(tfjob_local *l)
{
	if (!l)
		return;
	int saved = errno;
	l->interrupts++;
	tfjob__local_wake(l);
	errno = saved;
}

int tfjob_local_interrupted(const tfjob_local *l) { return l ? (int)l->interrupts : 0; }

lpod *tfjob__local_find(tfjob_local *l, const char *ns, const char *name)
{
	for (lpod *p = l->pods; p; p = p->next)
		if (!strcmp(p->name, name) && !strcmp(p->ns, ns))
			return p;
	return NULL;
}

/* ---- what happened to each Pod (the report's source: a deleted Pod leaves the table) ---- */

/* The history entry of a Pod, to be changed: the history's generation moves on. */
static json_t *history_of(tfjob_local *l, const lpod *p)
{
	l->history_generation++;
	json_t *h = json_object_get(l->history, p->name);
	if (h)
		return h;
	json_t *labels = tfjob__obj(tfjob__obj(p->obj, "metadata"), "labels");
	const char *type = tfjob__str(labels, "training.kubeflow.org/replica-type");
	const char *index = tfjob__str(labels, "training.kubeflow.org/replica-index");
	h = json_pack("{s:s, s:s, s:s, s:I, s:i, s:i}", "pod", p->name, "replicaType", type ? type : "", "log", p->log_path,
	              "replicaIndex", (json_int_t)(index ? strtoll(index, NULL, 10) : 0), "exits", 0, "failures", 0);
	if (h && json_object_set_new(l->history, p->name, h) != 0)
		return NULL;
	return h;
}

static void set_time(json_t *h, const char *key, int64_t wall)
{
	char buf[48];
	json_object_set_new(h, key, json_string(tfjob_time_format(buf, sizeof buf, wall)));
}

/* An exit (or a start that failed): by_us when the engine stopped it (deletion, shutdown). */
static void record_exit(tfjob_local *l, const lpod *p, bool by_us)
{
	json_t *h = history_of(l, p);
	if (!h)
		return;
	int64_t n = 0;
	tfjob__int(&n, h, "exits");
	json_object_set_new(h, "exits", json_integer(n + 1));
	json_object_set_new(h, "exitCode", json_integer(p->code));
	json_object_set_new(h, "signal", json_integer(p->signal));
	json_object_del(h, "restartAt");
	json_object_del(h, "backoffSeconds");
	if (by_us) {
		json_object_set_new(h, "stoppedBy", json_string(l->stopping ? "the end of the run" : "deletion"));
	} else if (p->code != 0) {
		tfjob__int(&n, h, "failures");
		json_object_set_new(h, "failures", json_integer(n + 1));
		json_object_set_new(h, "failedExitCode", json_integer(p->code));
		set_time(h, "failedAt", p->finished_wall ? p->finished_wall : tfjob__local_wall());
	}
}

static void record_backoff(tfjob_local *l, const lpod *p)
{
	json_t *h = history_of(l, p);
	if (!h)
		return;
	set_time(h, "restartAt", tfjob__local_wall() + (p->backoff_wait_ms + 999) / 1000);
	json_object_set_new(h, "backoffSeconds", json_integer((p->backoff_wait_ms + 999) / 1000));
}

static void record_state(tfjob_local *l, const lpod *p)
{
	json_t *h = history_of(l, p);
	if (!h)
		return;
	if (p->state == LPOD_RUNNING) {
		json_object_del(h, "restartAt");
		json_object_del(h, "backoffSeconds");
	}
	json_object_set_new(h, "finished", json_boolean(p->state == LPOD_DONE));
	if (p->state == LPOD_DONE)
		tfjob__local_gpus_release(l, p);
}

void tfjob__local_note_deleted(tfjob_local *l, const char *name, const char *why)
{
	json_t *h = json_object_get(l->history, name);
	if (h && !json_object_get(h, "deleted")) {
		json_object_set_new(h, "deleted", json_string(why));
		l->history_generation++;
	}
}

json_t *tfjob__local_history(tfjob_local *l, uint64_t *generation)
{
	*generation = l->history_generation;
	json_t *out = json_array();
	const char *name;
	json_t *h;
	json_object_foreach(l->history, name, h)
		json_array_append_new(out, json_deep_copy(h));
	return out;
}

int tfjob__local_add(tfjob_local *l, const char *ns, json_t *obj, tfjob__launch *launch, tfjob_error **err)
{
	const char *name = json_string_value(json_object_get(json_object_get(obj, "metadata"), "name"));
	lpod *p = calloc(1, sizeof *p);
	if (!p || !name)
		goto oom;
	p->ns = tfjob__strdup(ns);
	p->name = tfjob__strdup(name);
	p->log_path = tfjob__strdup_printf("%s/%s.log", l->run_dir, name);
	if (!p->ns || !p->name || !p->log_path)
		goto oom;
	p->obj = obj;
	p->launch = *launch;
	memset(launch, 0, sizeof *launch);
	p->state = LPOD_PENDING;
	p->created_wall = tfjob__local_wall();
	p->backoff_ms = l->backoff_initial_ms;
	if (l->pods_tail)
		l->pods_tail->next = p;
	else
		l->pods = p;
	l->pods_tail = p;
	l->generation++;
	json_t *h = history_of(l, p);
	json_object_del(h, "deleted"); /* a replica created again under the same name */
	json_object_set_new(h, "finished", json_false());
	tfjob__local_wake(l);
	return 0;
oom:
	if (p) {
		free(p->ns);
		free(p->name);
		free(p->log_path);
		free(p);
	}
	json_decref(obj);
	tfjob__launch_free(launch);
	return tfjob__oom(err);
}

static void unlink_pod(tfjob_local *l, lpod *p)
{
	tfjob__local_gpus_release(l, p);
	l->generation++;
	lpod *prev = NULL;
	for (lpod **pp = &l->pods; *pp; prev = *pp, pp = &(*pp)->next) {
		if (*pp == p) {
			*pp = p->next;
			if (l->pods_tail == p)
				l->pods_tail = prev;
			pod_free(p);
			return;
		}
	}
}

static int64_t grace_of(tfjob_local *l, lpod *p, int64_t asked)
{
	if (asked >= 0)
		return asked;
	if (l->grace_ms >= 0)
		return l->grace_ms;
	if (p->launch.grace_ms >= 0)
		return p->launch.grace_ms;
	return TFJOB__LOCAL_DEFAULT_GRACE_MS;
}

static void terminate(tfjob_local *l, lpod *p, int64_t grace_ms)
{
	tfjob__local_event(l, p->name, "Normal", "Killing", "Stopping container %s (process group %d): SIGTERM, SIGKILL after %lld ms",
	                   p->launch.container, (int)p->pid, (long long)grace_ms);
	tfjob__local_signal(p, SIGTERM);
	p->kill_at_ms = tfjob__monotonic_ms() + grace_ms;
	if (grace_ms == 0) {
		tfjob__local_signal(p, SIGKILL);
		p->killed = true;
	}
}

int tfjob__local_delete(tfjob_local *l, const char *ns, const char *name, int64_t grace_ms)
{
	lpod *p = tfjob__local_find(l, ns, name);
	if (!p)
		return TFJOB_ENOTFOUND;
	if (p->state != LPOD_RUNNING) {
		unlink_pod(l, p);
		tfjob__local_wake(l);
		return 0;
	}
	if (!p->deleting) {
		p->deleting = true;
		l->generation++;
		p->deletion_wall = tfjob__local_wall();
		terminate(l, p, grace_of(l, p, grace_ms));
	} else if (grace_ms >= 0 && tfjob__monotonic_ms() + grace_ms < p->kill_at_ms) {
		p->kill_at_ms = tfjob__monotonic_ms() + grace_ms; /* a shorter grace period wins, as in Kubernetes */
	}
	tfjob__local_wake(l);
	return 0;
}

/* ---- the kubelet loop ---- */

static const char *signame(int sig)
{
	switch (sig) {
	case SIGTERM: return "SIGTERM";
	case SIGKILL: return "SIGKILL";
	case SIGINT: return "SIGINT";
	case SIGSEGV: return "SIGSEGV";
	case SIGABRT: return "SIGABRT";
	case SIGHUP: return "SIGHUP";
	case SIGUSR1: return "SIGUSR1";
	default: return "signal";
	}
}

static void exited(tfjob_local *l, lpod *p, int status)
{
	tfjob__local_decode_status(status, &p->code, &p->signal);
	tfjob__local_log_times_sample(p); /* all it wrote is in the log now */
	/* The rest of the group goes with the container. The group only: the pid itself is reaped
	 * and may already belong to another process. */
	if (p->pid > 0)
		kill(-p->pid, SIGKILL);
	p->pid = p->supervisor = 0;
	p->finished_wall = tfjob__local_wall();
	if (p->signal)
		tfjob__local_event(l, p->name, p->code ? "Warning" : "Normal", "Exited", "Container %s exited with code %d (%s)",
		                   p->launch.container, p->code, signame(p->signal));
	else
		tfjob__local_event(l, p->name, p->code ? "Warning" : "Normal", "Exited", "Container %s exited with code %d",
		                   p->launch.container, p->code);
	record_exit(l, p, p->deleting || l->stopping);
	bool restart = !l->stopping && !p->deleting &&
	               (p->launch.policy == LPOD_ALWAYS || (p->launch.policy == LPOD_ON_FAILURE && p->code != 0));
	if (!restart) {
		p->state = LPOD_DONE;
		record_state(l, p);
		return;
	}
	int64_t now = tfjob__monotonic_ms();
	if (now - p->started_ms >= 10 * 60 * 1000)
		p->backoff_ms = l->backoff_initial_ms; /* ran 10 minutes: the kubelet forgets the backoff */
	p->state = LPOD_BACKOFF;
	p->restart_at_ms = now + p->backoff_ms;
	p->backoff_wait_ms = p->backoff_ms;
	record_backoff(l, p);
	tfjob__local_event(l, p->name, "Warning", "BackOff", "Back-off %lld ms restarting container %s (restart %d)",
	                   (long long)p->backoff_ms, p->launch.container, p->restarts + 1);
	p->backoff_ms = p->backoff_ms * 2 > l->backoff_max_ms ? l->backoff_max_ms : p->backoff_ms * 2;
}

static void remember_last(lpod *p)
{
	p->has_last = true;
	p->last_code = p->code;
	p->last_signal = p->signal;
	p->last_started_wall = p->started_wall;
	p->last_finished_wall = p->finished_wall;
}

/* Start (or restart) a Pod's process and record the outcome: running, or an exit at once when
 * it could not start. */
static void start(tfjob_local *l, lpod *p)
{
	tfjob__local_spawn(l, p);
	if (p->state == LPOD_DONE) {
		tfjob__local_log_times_sample(p); /* why it could not start */
		record_exit(l, p, false);
	}
	record_state(l, p);
}

/* Has a child of this process exited and not been reaped? One system call per tick instead of a
 * waitpid per running Pod. Conservative: an error, or a child that is not ours (the embedding
 * program's), says yes, and each Pod's waitpid decides. */
static bool some_child_exited(void)
{
	siginfo_t info;
	memset(&info, 0, sizeof info);
	if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0)
		return true;
	return info.si_pid != 0;
}

/* One pass over the Pods; returns the number of changes and the next timer (monotonic ms, or -1). */
static int work(tfjob_local *l, int64_t *next_timer)
{
	int changes = 0;
	int64_t now = tfjob__monotonic_ms();
	bool reap = some_child_exited();
	*next_timer = -1;
	for (lpod *p = l->pods, *n; p; p = n) {
		n = p->next;
		if (p->state == LPOD_PENDING && !l->stopping) {
			if (tfjob__local_gpus_take(l, p)) {
				start(l, p);
				changes++;
			} else if (p->state == LPOD_DONE) { /* asks for more GPUs than there are */
				record_exit(l, p, false);
				record_state(l, p);
				changes++;
			}
		} else if (p->state == LPOD_BACKOFF && !l->stopping && !p->deleting) {
			if (now >= p->restart_at_ms) {
				remember_last(p);
				p->restarts++;
				start(l, p);
				changes++;
			} else if (*next_timer < 0 || p->restart_at_ms < *next_timer) {
				*next_timer = p->restart_at_ms;
			}
		} else if (p->state == LPOD_RUNNING) {
			int status = 0;
			pid_t r = reap ? waitpid(p->supervisor, &status, WNOHANG) : 0;
			if (r == p->supervisor || (r < 0 && errno == ECHILD)) {
				if (r < 0)
					status = 0; /* reaped by someone else (SIGCHLD ignored): nothing to report */
				bool deleting = p->deleting;
				exited(l, p, status);
				changes++;
				if (deleting)
					unlink_pod(l, p);
				continue;
			}
			if (p->deleting && !p->killed) {
				if (now >= p->kill_at_ms) {
					tfjob__local_event(l, p->name, "Warning", "Killing",
					                   "Grace period over: SIGKILL to process group %d", (int)p->pid);
					tfjob__local_signal(p, SIGKILL);
					p->killed = true;
				} else if (*next_timer < 0 || p->kill_at_ms < *next_timer) {
					*next_timer = p->kill_at_ms;
				}
			}
		}
	}
	l->generation += (uint64_t)changes;
	tfjob__local_log_times_tick(l, now);
	return changes;
}

static void drain(tfjob_local *l)
{
	char buf[64];
	while (read(l->wake[0], buf, sizeof buf) > 0)
		;
}

int tfjob_local_poll(tfjob_local *l, int64_t timeout_ms, tfjob_error **err)
{
	if (!l)
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_local_poll: local is required");
	int64_t start = tfjob__monotonic_ms();
	for (;;) {
		int64_t timer;
		pthread_mutex_lock(&l->lock);
		int changes = work(l, &timer);
		pthread_mutex_unlock(&l->lock);
		if (changes > 0)
			return changes;
		if (l->interrupts)
			return 0;
		int64_t now = tfjob__monotonic_ms();
		if (timeout_ms >= 0 && now - start >= timeout_ms)
			return 0;
		int64_t wait = TFJOB__LOCAL_TICK_MS;
		if (timeout_ms >= 0 && start + timeout_ms - now < wait)
			wait = start + timeout_ms - now;
		if (timer >= 0 && timer - now < wait)
			wait = timer - now > 0 ? timer - now : 0;
		struct pollfd pfd = { l->wake[0], POLLIN, 0 };
		poll(&pfd, 1, (int)wait);
		drain(l);
	}
}

size_t tfjob_local_running_count(const tfjob_local *cl)
{
	if (!cl)
		return 0;
	tfjob_local *l = (tfjob_local *)cl;
	size_t n = 0;
	pthread_mutex_lock(&l->lock);
	for (lpod *p = l->pods; p; p = p->next)
		n += p->state == LPOD_RUNNING;
	pthread_mutex_unlock(&l->lock);
	return n;
}

int tfjob_local_shutdown(tfjob_local *l, tfjob_error **err)
{
	if (!l)
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_local_shutdown: local is required");
	return tfjob__local_shutdown_tick(l, NULL, NULL);
}

int tfjob__local_shutdown_tick(tfjob_local *l, void (*tick)(void *payload), void *payload)
{
	int stopped = 0;
	pthread_mutex_lock(&l->lock);
	l->stopping = true;
	for (lpod *p = l->pods; p; p = p->next) {
		if (p->state == LPOD_PENDING && !p->spawn_error) {
			p->spawn_error = tfjob__strdup("never started: the engine was shut down");
			p->code = 128 + SIGTERM;
		}
		if (p->state == LPOD_BACKOFF || p->state == LPOD_PENDING) {
			p->state = LPOD_DONE;
			l->generation++;
			record_state(l, p);
		}
		if (p->state != LPOD_RUNNING)
			continue;
		stopped++;
		int64_t grace = l->interrupts > 1 ? 0 : grace_of(l, p, -1);
		if (!p->deleting || l->interrupts > 1) {
			if (p->deleting && !p->killed) {
				tfjob__local_signal(p, SIGKILL);
				p->killed = true;
			} else if (!p->deleting) {
				terminate(l, p, grace);
			}
		}
	}
	pthread_mutex_unlock(&l->lock);
	/* Reap everything; escalation happens in work() through kill_at_ms. */
	for (;;) {
		int64_t timer;
		pthread_mutex_lock(&l->lock);
		int running = 0;
		int64_t now = tfjob__monotonic_ms();
		for (lpod *p = l->pods; p; p = p->next) {
			if (p->state != LPOD_RUNNING)
				continue;
			if (!p->killed && (now >= p->kill_at_ms || l->interrupts > 1)) {
				tfjob__local_event(l, p->name, "Warning", "Killing", "SIGKILL to process group %d", (int)p->pid);
				tfjob__local_signal(p, SIGKILL);
				p->killed = true;
			}
		}
		work(l, &timer);
		for (lpod *p = l->pods; p; p = p->next)
			running += p->state == LPOD_RUNNING;
		pthread_mutex_unlock(&l->lock);
		if (tick)
			tick(payload);
		if (!running)
			break;
		struct pollfd pfd = { l->wake[0], POLLIN, 0 };
		poll(&pfd, 1, TFJOB__LOCAL_TICK_MS);
		drain(l);
	}
	return stopped;
}
