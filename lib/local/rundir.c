/*
 * The state of a local run and its run directory: job.json, pods.json, events.json.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/job.h"
#include "core/objects.h"
#include "local/run.h"
#include "transport/internal.h"
#include "util/sbuf.h"

/* mkdir -p: path and its parents. 0, or -1 with errno. */
static int make_dirs(const char *path)
{
	char *buf = tfjob__strdup(path);
	if (!buf) {
		errno = ENOMEM;
		return -1;
	}
	int rc = 0;
	for (char *p = buf + 1; *p && !rc; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(buf, 0777) != 0 && errno != EEXIST)
			rc = -1;
		*p = '/';
	}
	if (!rc && mkdir(buf, 0777) != 0 && errno != EEXIST)
		rc = -1;
	struct stat st;
	if (!rc && stat(buf, &st) != 0)
		rc = -1;
	else if (!rc && !S_ISDIR(st.st_mode)) {
		errno = ENOTDIR; /* not "File exists": it does, but is no directory */
		rc = -1;
	}
	free(buf);
	return rc;
}

static bool holds_run(const char *dir)
{
	char *path = tfjob__strdup_printf("%s/job.json", dir);
	bool held = path && access(path, F_OK) == 0;
	free(path);
	return held;
}

/* A new "<parent>/<name>-<YYYYMMDD-HHMMSS>[-N]" directory, or NULL (errno). */
static char *new_under(const char *parent, const char *name)
{
	if (make_dirs(parent) != 0 || access(parent, W_OK) != 0)
		return NULL;
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	localtime_r(&now, &tm);
	strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
	for (int n = 0; n < 100; n++) {
		char *dir = n ? tfjob__strdup_printf("%s/%s-%s-%d", parent, name, stamp, n)
		              : tfjob__strdup_printf("%s/%s-%s", parent, name, stamp);
		if (!dir || mkdir(dir, 0777) == 0)
			return dir;
		int e = errno;
		free(dir);
		if (e != EEXIST)
			return NULL;
	}
	return NULL;
}

int tfjob_local_run_dir(char **out, const char *dir, const char *name, tfjob_error **err)
{
	if (!out)
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_local_run_dir: out is required");
	*out = NULL;
	char *made = NULL;
	if (dir && dir[0]) {
		/* One run per directory: a second one would append to the first one's logs and find
		 * the files its replicas left (markers, checkpoints). */
		if (holds_run(dir))
			return tfjob__fail(err, TFJOB_EEXISTS,
			                   "%s already holds a run (%s/job.json): give a new run directory, or remove that one first",
			                   dir, dir);
		if (make_dirs(dir) != 0)
			return tfjob__fail(err, TFJOB_EIO, "cannot make the run directory %s: %s", dir, strerror(errno));
		made = realpath(dir, NULL);
	} else {
		char label[256];
		snprintf(label, sizeof label, "%s", name && name[0] ? name : "tfjob");
		size_t len = strlen(label);
		while (len > 1 && label[len - 1] == '-') /* metadata.generateName's prefix */
			label[--len] = '\0';
		if (strchr(label, '/'))
			return tfjob__fail(err, TFJOB_EINVAL, "tfjob_local_run_dir: name '%s' has a '/'", label);
		const char *tmp = getenv("TMPDIR");
		char *under_tmp = tfjob__strdup_printf("%s/tfjob-runs", tmp && tmp[0] ? tmp : "/tmp");
		char *fresh = new_under("tfjob-runs", label);
		if (!fresh && under_tmp)
			fresh = new_under(under_tmp, label);
		free(under_tmp);
		if (!fresh)
			return tfjob__fail(err, TFJOB_EIO, "cannot make a run directory under ./tfjob-runs or $TMPDIR/tfjob-runs: %s",
			                   strerror(errno));
		made = realpath(fresh, NULL);
		free(fresh);
	}
	if (!made)
		return tfjob__fail(err, TFJOB_EIO, "run directory: %s", strerror(errno));
	*out = made;
	return 0;
}

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
	r->event_index = json_object();
	r->services_stale = true;
	if (!r->events || !r->pending || !r->event_index) {
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
	json_decref(r->event_index);
	tfjob_objects_free(r->services);
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
	char *key = tfjob__strdup_printf("%s\n%s\n%s\n%s", tfjob__str(e, "type"), tfjob__str(e, "reason"),
	                                 tfjob__str(e, "object"), tfjob__str(e, "message"));
	json_t *old = key ? json_object_get(r->event_index, key) : NULL;
	if (old) {
		int64_t n = 1;
		tfjob__int(&n, old, "count");
		json_object_set_new(old, "count", json_integer(n + 1));
		json_object_set(old, "lastTime", json_object_get(e, "time"));
		json_decref(e);
		free(key);
		return;
	}
	if (key)
		json_object_set(r->event_index, key, e);
	free(key);
	r->events_dirty = true;
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
	return tfjob__run_save_files(r, false, err);
}

/* May a file be rewritten now? Unless forced, not before its spacing after the last write. */
static bool spacing_allows(int64_t not_before_ms, bool force)
{
	return force || tfjob__monotonic_ms() >= not_before_ms;
}

/* The spacing after a write of bytes that began at began_ms (monotonic). */
static int64_t spaced_after(int64_t began_ms, size_t bytes)
{
	int64_t ended = tfjob__monotonic_ms();
	return bytes < RUN_FILE_SPACED_BYTES ? ended : ended + RUN_FILE_SPACING * (ended - began_ms);
}

static int save_events(run *r, bool force, tfjob_error **err)
{
	if (!r->events_dirty || !spacing_allows(r->events_not_before_ms, force))
		return 0;
	int64_t began = tfjob__monotonic_ms();
	char *text = json_dumps(r->events, JSON_INDENT(2));
	if (!text)
		return tfjob__oom(err);
	int rc = tfjob__write_file(r->local->run_dir, "events.json", text, err);
	r->events_not_before_ms = spaced_after(began, strlen(text));
	free(text);
	r->events_dirty = false;
	return rc;
}

int tfjob__run_save_files(run *r, bool force, tfjob_error **err)
{
	int rc = save_events(r, force, err);
	if (!rc && r->name)
		rc = tfjob__run_save_pods(r, force, err);
	return rc;
}

int tfjob__run_selector(char *buf, size_t size, const run *r)
{
	int n = snprintf(buf, size, TFJOB_LABEL_JOB_NAME "=%s", r->name ? r->name : "");
	return n >= 0 && (size_t)n < size ? 0 : TFJOB_EINVAL;
}

static bool pods_changed(run *r)
{
	pthread_mutex_lock(&r->local->lock);
	bool changed = !r->pods_saved || r->local->generation != r->pods_generation;
	pthread_mutex_unlock(&r->local->lock);
	return changed;
}

/* Milliseconds until a write deferred to not_before_ms is due; -1 when none waits. */
static int64_t due_ms(bool waiting, int64_t not_before_ms)
{
	if (!waiting)
		return -1;
	int64_t left = not_before_ms - tfjob__monotonic_ms();
	return left > 0 ? left : 0;
}

int64_t tfjob__run_files_due_ms(run *r)
{
	int64_t pods = due_ms(pods_changed(r), r->pods_not_before_ms);
	int64_t events = due_ms(r->events_dirty, r->events_not_before_ms);
	return pods < 0 || (events >= 0 && events < pods) ? events : pods;
}

/* Every Pod of the run with its live status (a JSON array), and the generation it shows. */
int tfjob__run_pods(json_t **out, run *r, bool full, uint64_t *generation, tfjob_error **err)
{
	char text[512];
	tfjob__selector *sel = NULL;
	int rc = tfjob__run_selector(text, sizeof text, r);
	if (rc)
		return tfjob__fail(err, rc, "TFJob name too long for a label selector: %s", r->name);
	rc = tfjob__selector_parse(&sel, text, err);
	if (rc)
		return rc;
	*out = tfjob__local_pods_matching(r->local, r->ns, sel, NULL, full, generation);
	tfjob__selector_free(sel);
	return *out ? 0 : tfjob__oom(err);
}

/* v as JSON text (indent 2 or compact; reals in their shortest form), or NULL (out of memory).
 * The Pods' text is O(n^2) bytes (each spec holds the whole TF_CONFIG): written by the library's
 * writer (one tight pass per string, room reserved once), not json_dumps() (a call per run of
 * bytes between two escapes: several per address of TF_CONFIG, whose quotes are escaped). */
static char *pods_text(const json_t *v, unsigned int indent)
{
	tfjob__sbuf b = TFJOB__SBUF_INIT;
	tfjob__sbuf_add_json_ex(&b, v, indent, false);
	if (b.oom) {
		tfjob__sbuf_free(&b);
		return NULL;
	}
	return tfjob__sbuf_take(&b);
}

/* Write pods.json (*bytes: its size), then tell on_update. */
static int write_pods(run *r, json_t *items, size_t *bytes, tfjob_error **err)
{
	json_t *list = json_pack("{s:s, s:s, s:O}", "kind", "PodList", "apiVersion", "v1", "items", items);
	char *text = list ? pods_text(list, 2) : NULL;
	json_decref(list);
	if (!text)
		return tfjob__oom(err);
	*bytes = strlen(text);
	int rc = tfjob__write_file(r->local->run_dir, "pods.json", text, err);
	free(text);
	if (!rc) /* before the update: a view of the Pods reads the report of this moment */
		rc = tfjob__run_save_replicas(r, err);
	if (r->on_update) {
		char *arr = pods_text(items, 0);
		if (!arr)
			return rc ? rc : tfjob__oom(err);
		r->on_update(TFJOB_LOCAL_UPDATE_PODS, arr, r->payload);
		free(arr);
	}
	return rc;
}

int tfjob__run_save_pods(run *r, bool force, tfjob_error **err)
{
	if (!pods_changed(r) || !spacing_allows(r->pods_not_before_ms, force))
		return 0;
	int64_t began = tfjob__monotonic_ms();
	uint64_t generation = 0;
	json_t *items = NULL;
	int rc = tfjob__run_pods(&items, r, true, &generation, err);
	if (rc)
		return rc;
	size_t bytes = 0;
	rc = write_pods(r, items, &bytes, err);
	json_decref(items);
	r->pods_generation = generation;
	r->pods_saved = true;
	r->pods_not_before_ms = spaced_after(began, bytes);
	return rc;
}

int tfjob__run_save_replicas(run *r, tfjob_error **err)
{
	uint64_t generation = 0;
	json_t *history = NULL;
	pthread_mutex_lock(&r->local->lock);
	bool behind = !r->replicas_saved || r->local->history_generation != r->replicas_generation;
	if (behind)
		history = tfjob__local_history(r->local, &generation);
	pthread_mutex_unlock(&r->local->lock);
	if (!behind)
		return 0;
	char *text = history ? json_dumps(history, JSON_INDENT(2)) : NULL;
	json_decref(history);
	if (!text)
		return tfjob__oom(err);
	int rc = tfjob__write_file(r->local->run_dir, "replicas.json", text, err);
	free(text);
	r->replicas_generation = generation;
	r->replicas_saved = true;
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
