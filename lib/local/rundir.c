/*
 * The state of a local run and its run directory: job.json, pods.json, events.json.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/job.h"
#include "local/run.h"

int tfjob__write_file(const char *dir, const char *name, const char *text, tfjob_error **err)
{
	char *tmp = tfjob__strdup_printf("%s/.%s.tmp", dir, name), *path = tfjob__strdup_printf("%s/%s", dir, name);
	int rc = 0;
	if (!tmp || !path) {
		rc = tfjob__oom(err);
		goto out;
	}
	int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	size_t len = strlen(text), done = 0;
	while (fd >= 0 && done < len) {
		ssize_t n = write(fd, text + done, len - done);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		done += (size_t)n;
	}
	if (fd < 0 || done < len || write(fd, "\n", 1) != 1 || close(fd) != 0 || rename(tmp, path) != 0) {
		rc = tfjob__fail(err, TFJOB_EIO, "%s: %s", path, strerror(errno));
		unlink(tmp);
	}
out:
	free(tmp);
	free(path);
	return rc;
}

int tfjob__run_init(run *r, tfjob_local *local, const tfjob_local_run_options *opts, tfjob_error **err)
{
	memset(r, 0, sizeof *r);
	r->local = local;
	r->compat = opts->compat;
	r->on_update = opts->on_update;
	r->payload = opts->payload;
	tfjob_render_options ropts = TFJOB_RENDER_OPTIONS_INIT;
	ropts.compat = opts->compat;
	ropts.address_cb = tfjob_local_address;
	ropts.address_payload = local;
	r->ropts = ropts;
	tfjob_plan_options popts = TFJOB_PLAN_OPTIONS_INIT;
	popts.compat = opts->compat;
	r->popts = popts;
	r->popts.render = &r->ropts;
	r->events = json_array();
	r->pending = json_array();
	if (!r->events || !r->pending) {
		tfjob__run_free(r);
		return tfjob__oom(err);
	}
	int rc = tfjob_local_transport_new(&r->t, local, err);
	if (rc)
		tfjob__run_free(r);
	return rc;
}

void tfjob__run_free(run *r)
{
	tfjob_transport_free(r->t);
	tfjob_job_free(r->job);
	json_decref(r->events);
	json_decref(r->pending);
	free(r->last_pods);
	memset(r, 0, sizeof *r);
}

void tfjob__run_event(run *r, const char *kind, const char *name, const char *type, const char *reason,
                      const char *message, bool flush)
{
	char buf[48];
	json_t *e = json_pack("{s:s, s:s, s:s, s:s, s:s}", "type", type ? type : "Normal", "reason", reason ? reason : "",
	                      "message", message ? message : "", "object", "", "time",
	                      tfjob_time_format(buf, sizeof buf, tfjob__local_wall()));
	if (!e)
		return;
	char *obj = tfjob__strdup_printf("%s/%s", kind, name ? name : "");
	json_object_set_new(e, "object", json_string(obj ? obj : kind));
	free(obj);
	/* The same event again (planner events repeat every step) is counted, as Kubernetes'
	 * event recorder aggregates it, and not reported again. */
	size_t i;
	json_t *old;
	json_array_foreach(r->events, i, old) {
		static const char *const keys[] = { "type", "reason", "object", "message" };
		bool same = true;
		for (size_t k = 0; k < 4 && same; k++)
			same = !strcmp(tfjob__str(old, keys[k]), tfjob__str(e, keys[k]));
		if (same) {
			int64_t n = 1;
			tfjob__int(&n, old, "count");
			json_object_set_new(old, "count", json_integer(n + 1));
			json_object_set(old, "lastTime", json_object_get(e, "time"));
			json_decref(e);
			return;
		}
	}
	json_object_set_new(e, "count", json_integer(1));
	json_array_append(r->events, e);
	json_array_append_new(r->pending, e);
	if (flush)
		tfjob__run_flush_events(r, NULL);
}

static void send_event(run *r, json_t *e)
{
	const char *object = tfjob__str(e, "object");
	bool pod = object && !strncmp(object, "Pod/", 4);
	char *involved = NULL;
	if (pod) {
		json_t *o = json_pack("{s:s, s:s, s:{s:s, s:s}}", "kind", "Pod", "apiVersion", "v1", "metadata", "name", object + 4,
		                      "namespace", r->ns ? r->ns : "default");
		involved = o ? json_dumps(o, JSON_COMPACT) : NULL;
		json_decref(o);
	} else if (r->job) {
		tfjob_job_to_json(&involved, r->job, 0, NULL);
	}
	if (involved)
		tfjob_transport_create_event(NULL, r->t, r->ns, involved, tfjob__str(e, "type"), tfjob__str(e, "reason"),
		                             tfjob__str(e, "message"), pod ? "local-kubelet" : TFJOB_OPERATOR_NAME, NULL);
	free(involved);
}

int tfjob__run_flush_events(run *r, tfjob_error **err)
{
	if (!json_array_size(r->pending))
		return 0;
	size_t i;
	json_t *e;
	json_array_foreach(r->pending, i, e) {
		if (r->t)
			send_event(r, e);
		if (r->on_update) {
			char *text = json_dumps(e, JSON_COMPACT);
			if (text)
				r->on_update(TFJOB_LOCAL_UPDATE_EVENT, text, r->payload);
			free(text);
		}
	}
	json_array_clear(r->pending);
	char *text = json_dumps(r->events, JSON_INDENT(2));
	if (!text)
		return tfjob__oom(err);
	int rc = tfjob__write_file(r->local->run_dir, "events.json", text, err);
	free(text);
	return rc;
}

int tfjob__run_pods_changed(run *r, const char *pods, tfjob_error **err)
{
	if (r->last_pods && !strcmp(r->last_pods, pods))
		return 0;
	free(r->last_pods);
	r->last_pods = tfjob__strdup(pods);
	if (!r->last_pods)
		return tfjob__oom(err);
	json_t *arr = json_loads(pods, 0, NULL);
	json_t *list = json_pack("{s:s, s:s, s:o}", "kind", "PodList", "apiVersion", "v1", "items", arr ? arr : json_array());
	char *text = list ? json_dumps(list, JSON_INDENT(2)) : NULL;
	json_decref(list);
	if (!text)
		return tfjob__oom(err);
	int rc = tfjob__write_file(r->local->run_dir, "pods.json", text, err);
	free(text);
	if (r->on_update)
		r->on_update(TFJOB_LOCAL_UPDATE_PODS, pods, r->payload);
	return rc;
}

int tfjob__run_save_job(run *r, tfjob_error **err)
{
	char *text = NULL;
	int rc = tfjob_job_to_json(&text, r->job, TFJOB_JSON_PRETTY, err);
	if (rc)
		return rc;
	rc = tfjob__write_file(r->local->run_dir, "job.json", text, err);
	tfjob_free(text);
	return rc;
}
