/*
 * tfjob_local_report(): what happened to each replica of a local run, read back from its run
 * directory (job.json, pods.json, replicas.json and the logs), in one JSON object that
 * `tfjobctl run`, `tfjobctl get --run-dir` and the bindings all show.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/job.h"
#include "util/sbuf.h"
#include "local/internal.h"

#define DEFAULT_TAIL_LINES 20
#define MAX_TAIL_LINES 10000
#define TAIL_READ_BYTES (256 * 1024) /* the tail is looked for in the log's last bytes only */

static json_t *load(const char *dir, const char *file)
{
	char *path = tfjob__strdup_printf("%s/%s", dir, file);
	json_t *v = path ? json_load_file(path, 0, NULL) : NULL;
	free(path);
	return v;
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 when invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
	size_t len = s[0] < 0x80 ? 1 : (s[0] & 0xE0) == 0xC0 ? 2 : (s[0] & 0xF0) == 0xE0 ? 3 : (s[0] & 0xF8) == 0xF0 ? 4 : 0;
	if (!len || len > n || (len == 2 && s[0] < 0xC2))
		return 0;
	for (size_t i = 1; i < len; i++)
		if ((s[i] & 0xC0) != 0x80)
			return 0;
	return len;
}

/* A log line as a JSON string: invalid UTF-8 bytes become U+FFFD, control characters stay. */
static json_t *line_json(const char *s, size_t n)
{
	char *buf = malloc(n * 3 + 1);
	if (!buf)
		return NULL;
	size_t k = 0;
	for (size_t i = 0; i < n;) {
		size_t len = utf8_len((const unsigned char *)s + i, n - i);
		if (len) {
			memcpy(buf + k, s + i, len);
			k += len;
			i += len;
		} else {
			memcpy(buf + k, "\xEF\xBF\xBD", 3);
			k += 3;
			i++;
		}
	}
	json_t *v = json_stringn(buf, k);
	free(buf);
	return v;
}

/* The last `lines` lines of a file (JSON array of strings), or NULL when it cannot be read. */
static json_t *tail_of(const char *path, int64_t lines)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	struct stat st;
	long size = fstat(fileno(f), &st) == 0 ? (long)st.st_size : 0;
	long from = size > TAIL_READ_BYTES ? size - TAIL_READ_BYTES : 0;
	char *buf = malloc(TAIL_READ_BYTES + 1);
	size_t n = 0;
	if (buf && fseek(f, from, SEEK_SET) == 0)
		n = fread(buf, 1, TAIL_READ_BYTES, f);
	fclose(f);
	json_t *out = json_array();
	if (!buf || !out) {
		free(buf);
		json_decref(out);
		return NULL;
	}
	size_t end = n;
	if (end && buf[end - 1] == '\n')
		end--;
	/* Walk back over `lines` newlines; a partial first line (cut by the read window) is dropped. */
	size_t start = end;
	int64_t found = 0;
	while (start > 0 && found < lines) {
		if (buf[start - 1] == '\n' && ++found == lines)
			break;
		start--;
	}
	if (start == 0 && from > 0) {
		while (start < end && buf[start] != '\n')
			start++;
		start += start < end;
	}
	for (size_t i = start; n && i <= end && lines > 0;) {
		size_t len = strcspn(buf + i, "\n");
		if (i + len > end)
			len = end - i;
		json_array_append_new(out, line_json(buf + i, len));
		i += len + 1;
	}
	free(buf);
	return out;
}

static const char *times_word(int64_t n)
{
	static const char *const words[] = { "no times", "once", "twice", "three times", "four times", "five times",
		                                 "six times", "seven times", "eight times", "nine times", "ten times" };
	return n >= 0 && n <= 10 ? words[n] : NULL;
}

static void add(tfjob__sbuf *b, const char *fmt, ...) TFJOB_PRINTF(2, 3);
static void add(tfjob__sbuf *b, const char *fmt, ...)
{
	char part[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(part, sizeof part, fmt, ap);
	va_end(ap);
	tfjob__sbuf_adds(b, part);
}

static void append_times(tfjob__sbuf *b, int64_t n)
{
	const char *w = times_word(n);
	if (w)
		add(b, " %s", w);
	else
		add(b, " %lld times", (long long)n);
}

static int64_t num(json_t *o, const char *key)
{
	int64_t v = 0;
	tfjob__int(&v, o, key);
	return v;
}

static json_t *find_pod(json_t *pods, const char *name)
{
	size_t i;
	json_t *p;
	json_array_foreach(json_object_get(pods, "items"), i, p)
		if (tfjob__str(tfjob__obj(p, "metadata"), "name") && !strcmp(tfjob__str(tfjob__obj(p, "metadata"), "name"), name))
			return p;
	return NULL;
}

static json_t *tf_container_status(json_t *pod)
{
	size_t i;
	json_t *c, *cs = json_object_get(tfjob__obj(pod, "status"), "containerStatuses");
	json_array_foreach(cs, i, c)
		if (tfjob__str(c, "name") && !strcmp(tfjob__str(c, "name"), "tensorflow"))
			return c;
	return json_array_get(cs, 0);
}

/* One sentence: what happened to the replica, as far as the run directory tells. */
static void summarize(tfjob__sbuf *b, json_t *h, const char *label, const char *phase, int64_t now)
{
	int64_t failures = num(h, "failures"), exits = num(h, "exits"), code = num(h, "exitCode");
	const char *deleted = tfjob__str(h, "deleted"), *stopped = tfjob__str(h, "stoppedBy");
	const char *restart_at = tfjob__str(h, "restartAt");
	int64_t at = 0;
	if (restart_at && !json_is_true(json_object_get(h, "finished")) && tfjob_time_parse(&at, restart_at) == 0) {
		char wait[32];
		add(b, "%s exited %lld", label, (long long)code);
		append_times(b, exits);
		if (at > now)
			add(b, ", next restart in %s", tfjob__local_duration(wait, sizeof wait, (at - now) * 1000));
		else
			add(b, ", restarting now");
		return;
	}
	if (failures > 0) {
		add(b, "%s failed with exit %lld", label, (long long)num(h, "failedExitCode"));
		if (failures > 1)
			append_times(b, failures);
		if (exits > failures && code == 0 && !stopped)
			add(b, ", then succeeded");
	} else if (exits > 0 && code == 0 && !stopped) {
		add(b, "%s succeeded", label);
	} else if (stopped) {
		add(b, "%s was still running: %s (exit %lld)", label, deleted ? deleted : "stopped as the run ended",
		    (long long)code);
		return;
	} else {
		add(b, "%s is %s", label, phase[0] ? phase : "gone");
	}
	if (deleted)
		add(b, ", then %s", deleted);
	else if (stopped && !strcmp(stopped, "the end of the run"))
		add(b, ", then stopped as the run ended");
}

static json_t *replica_entry(json_t *h, json_t *pods, int64_t tail, int64_t now)
{
	const char *pod_name = tfjob__str(h, "pod"), *type = tfjob__str(h, "replicaType");
	char label[160];
	snprintf(label, sizeof label, "%s-%lld", type && type[0] ? type : "replica", (long long)num(h, "replicaIndex"));
	json_t *pod = pod_name ? find_pod(pods, pod_name) : NULL;
	const char *phase = pod ? tfjob__str(tfjob__obj(pod, "status"), "phase") : "Deleted";
	tfjob__sbuf b = TFJOB__SBUF_INIT;
	summarize(&b, h, label, phase ? phase : "", now);
	json_t *e = json_deep_copy(h);
	char *summary = tfjob__sbuf_take(&b);
	if (!e || !summary) {
		json_decref(e);
		free(summary);
		return NULL;
	}
	json_object_set_new(e, "name", json_string(label));
	json_object_set_new(e, "phase", json_string(phase ? phase : ""));
	json_object_set_new(e, "restarts", json_integer(num(tf_container_status(pod), "restartCount")));
	json_object_set_new(e, "summary", json_string(summary));
	free(summary);
	const char *log = tfjob__str(h, "log");
	json_t *lines = num(h, "failures") > 0 && tail > 0 && log ? tail_of(log, tail) : NULL;
	json_object_set_new(e, "tail", lines ? lines : json_array());
	return e;
}

static const char *outcome_of(json_t *job)
{
	size_t i;
	json_t *c;
	const char *out = "Unfinished";
	json_array_foreach(json_object_get(tfjob__obj(job, "status"), "conditions"), i, c) {
		const char *type = tfjob__str(c, "type"), *status = tfjob__str(c, "status");
		if (type && status && !strcmp(status, "True") && (!strcmp(type, "Succeeded") || !strcmp(type, "Failed")))
			out = !strcmp(type, "Succeeded") ? "Succeeded" : "Failed";
	}
	return out;
}

int tfjob_local_report(char **out, const char *run_dir, int64_t tail_lines, tfjob_error **err)
{
	if (!out || !run_dir)
		return tfjob__fail(err, TFJOB_EINVAL, "tfjob_local_report: out and run_dir are required");
	*out = NULL;
	if (tail_lines < 0)
		tail_lines = DEFAULT_TAIL_LINES;
	if (tail_lines > MAX_TAIL_LINES)
		tail_lines = MAX_TAIL_LINES;
	json_t *job = load(run_dir, "job.json");
	if (!job)
		return tfjob__fail(err, TFJOB_ENOTFOUND, "%s holds no local run (no readable job.json)", run_dir);
	json_t *pods = load(run_dir, "pods.json"), *history = load(run_dir, "replicas.json");
	json_t *replicas = json_array();
	int64_t now = tfjob__local_wall();
	size_t i;
	json_t *h;
	json_array_foreach(history, i, h) {
		json_t *e = replica_entry(h, pods, tail_lines, now);
		if (e)
			json_array_append_new(replicas, e);
	}
	json_t *meta = tfjob__obj(job, "metadata");
	json_t *report = json_pack("{s:s, s:s, s:s, s:o}", "name", tfjob__str(meta, "name") ? tfjob__str(meta, "name") : "",
	                           "outcome", outcome_of(job), "runDir", run_dir, "replicas", replicas);
	json_decref(job);
	json_decref(pods);
	json_decref(history);
	*out = report ? json_dumps(report, JSON_INDENT(2)) : NULL;
	json_decref(report);
	return *out ? 0 : tfjob__oom(err);
}
