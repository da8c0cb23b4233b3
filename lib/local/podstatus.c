/*
 * A local Pod as Kubernetes reports it: phase, container state, last state, restart count,
 * exit code, plus the process group id as an annotation.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/job.h"
#include "local/internal.h"

static json_t *time_str(int64_t t)
{
	char buf[48];
	return json_string(tfjob_time_format(buf, sizeof buf, t));
}

static json_t *terminated(int code, int sig, int64_t started, int64_t finished, const char *message)
{
	json_t *t = json_pack("{s:i, s:s, s:o, s:o}", "exitCode", code, "reason", code == 0 ? "Completed" : "Error",
	                      "startedAt", time_str(started), "finishedAt", time_str(finished));
	if (t && sig)
		json_object_set_new(t, "signal", json_integer(sig));
	if (t && message)
		json_object_set_new(t, "message", json_string(message));
	return t;
}

static const char *phase_of(const lpod *p)
{
	switch (p->state) {
	case LPOD_PENDING: return "Pending";
	case LPOD_RUNNING:
	case LPOD_BACKOFF: return "Running";
	default: return p->code == 0 && !p->spawn_error ? "Succeeded" : "Failed";
	}
}

static json_t *container_status(const lpod *p)
{
	json_t *state = NULL;
	switch (p->state) {
	case LPOD_PENDING:
		state = json_pack("{s:{s:s}}", "waiting", "reason", "ContainerCreating");
		break;
	case LPOD_RUNNING:
		state = json_pack("{s:{s:o}}", "running", "startedAt", time_str(p->started_wall));
		break;
	case LPOD_BACKOFF: {
		/* The kubelet's words: "back-off 2m40s restarting failed container=NAME pod=NAME_NS(UID)". */
		char wait[32], *msg = tfjob__strdup_printf(
			"back-off %s restarting failed container=%s pod=%s_%s(%s)",
			tfjob__local_duration(wait, sizeof wait, p->backoff_wait_ms), p->launch.container, p->name, p->ns,
			tfjob__str(tfjob__obj(p->obj, "metadata"), "uid") ? tfjob__str(tfjob__obj(p->obj, "metadata"), "uid") : "");
		state = json_pack("{s:{s:s, s:s}}", "waiting", "reason", "CrashLoopBackOff", "message",
		                  msg ? msg : "back-off restarting failed container");
		free(msg);
		break;
	}
	default:
		state = json_pack("{s:o}", "terminated",
		                  terminated(p->code, p->signal, p->started_wall ? p->started_wall : p->created_wall,
		                             p->finished_wall ? p->finished_wall : p->created_wall, p->spawn_error));
	}
	json_t *cs = json_pack("{s:s, s:o, s:i, s:b, s:b}", "name", p->launch.container, "state", state, "restartCount",
	                       p->restarts, "ready", p->state == LPOD_RUNNING, "started", p->state == LPOD_RUNNING);
	if (!cs)
		return NULL;
	json_t *last = NULL;
	if (p->state == LPOD_BACKOFF)
		last = terminated(p->code, p->signal, p->started_wall, p->finished_wall, NULL);
	else if (p->has_last)
		last = terminated(p->last_code, p->last_signal, p->last_started_wall, p->last_finished_wall, NULL);
	json_object_set_new(cs, "lastState", last ? json_pack("{s:o}", "terminated", last) : json_object());
	return cs;
}

/* What the engine adds to the Pod's metadata: deletionTimestamp while it is deleted, the pid
 * annotation while a process runs. meta is the Pod's own copy. */
static void add_live_metadata(json_t *meta, const lpod *p)
{
	if (p->deleting)
		json_object_set_new(meta, "deletionTimestamp", time_str(p->deletion_wall));
	if (p->pid <= 0)
		return;
	json_t *ann = tfjob__obj(meta, "annotations");
	ann = ann ? json_copy(ann) : json_object(); /* shallow: the engine's annotations stay as created */
	if (!ann)
		return;
	char buf[32];
	snprintf(buf, sizeof buf, "%d", (int)p->pid);
	json_object_set_new(ann, TFJOB__LOCAL_PID_ANNOTATION, json_string(buf));
	json_object_set_new(meta, "annotations", ann);
}

static json_t *pod_status(const lpod *p)
{
	json_t *status = json_pack("{s:s, s:s, s:s, s:o}", "phase", phase_of(p), "hostIP", "127.0.0.1", "podIP", "127.0.0.1",
	                           "containerStatuses", json_pack("[o]", container_status(p)));
	if (!status)
		return NULL;
	if (p->started_wall)
		json_object_set_new(status, "startTime", time_str(p->started_wall));
	if (p->spawn_error) {
		json_object_set_new(status, "reason", json_string("FailedToStart"));
		json_object_set_new(status, "message", json_string(p->spawn_error));
	}
	return status;
}

/* The Pod with its live metadata and status; with_spec false leaves out everything but
 * apiVersion, kind, metadata and status (the spec holds the whole TF_CONFIG: O(n) bytes). The
 * engine's JSON is shared, never changed: only the objects changed here are copies. */
static json_t *pod_view(const lpod *p, bool with_spec)
{
	json_t *pod = json_object(), *status = pod_status(p);
	if (!pod || !status)
		goto fail;
	const char *key;
	json_t *v;
	json_object_foreach(p->obj, key, v) {
		if (!strcmp(key, "metadata")) {
			json_t *meta = json_copy(v); /* shallow: labels and the rest stay shared */
			if (!meta || json_object_set_new(pod, key, meta))
				goto fail;
			add_live_metadata(meta, p);
		} else if ((with_spec || !strcmp(key, "apiVersion") || !strcmp(key, "kind")) && json_object_set(pod, key, v)) {
			goto fail;
		}
	}
	if (json_object_set_new(pod, "status", status) == 0)
		return pod;
	status = NULL; /* taken, also on failure */
fail:
	json_decref(status);
	json_decref(pod);
	return NULL;
}

json_t *tfjob__local_pod_json(const lpod *p) { return pod_view(p, true); }

static void shown_of(lpod_shown *out, const lpod *p)
{
	memset(out, 0, sizeof *out); /* padding too: compared with memcmp */
	out->created_wall = p->created_wall;
	out->started_wall = p->started_wall;
	out->finished_wall = p->finished_wall;
	out->deletion_wall = p->deletion_wall;
	out->backoff_wait_ms = p->backoff_wait_ms;
	out->last_started_wall = p->last_started_wall;
	out->last_finished_wall = p->last_finished_wall;
	out->spawn_error = p->spawn_error;
	out->pid = p->pid;
	out->state = (int)p->state;
	out->restarts = p->restarts;
	out->code = p->code;
	out->signal = p->signal;
	out->last_code = p->last_code;
	out->last_signal = p->last_signal;
	out->deleting = p->deleting;
	out->has_last = p->has_last;
}

/* Made again only when what it shows changed: a steady step shares the Pods' summaries. The
 * summary is never changed once made (the planner may still read the last one). */
json_t *tfjob__local_pod_summary_json(lpod *p)
{
	lpod_shown now;
	shown_of(&now, p);
	if (!p->summary || memcmp(&now, &p->shown, sizeof now)) {
		json_t *fresh = pod_view(p, false);
		if (!fresh)
			return NULL;
		json_decref(p->summary);
		p->summary = fresh;
		p->shown = now;
	}
	return json_incref(p->summary);
}
