/*
 * tfjobctl: reading the time index of a local replica's log (see log_times.h, docs/local.md).
 * SPDX-License-Identifier: Apache-2.0
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <tfjob/local.h>

#include "log_times.h"

bool log_times_open(struct log_times *t, const char *log_path)
{
	memset(t, 0, sizeof *t);
	size_t len = strlen(log_path) + sizeof TFJOB_LOCAL_LOG_TIMES_SUFFIX;
	t->path = malloc(len);
	if (!t->path)
		return false;
	snprintf(t->path, len, "%s%s", log_path, TFJOB_LOCAL_LOG_TIMES_SUFFIX);
	log_times_refresh(t);
	return true;
}

void log_times_close(struct log_times *t)
{
	if (t->f)
		fclose(t->f);
	free(t->path);
	free(t->offset);
	free(t->ms);
	memset(t, 0, sizeof *t);
}

static bool append(struct log_times *t, int64_t offset, int64_t ms)
{
	if (t->n && offset <= t->offset[t->n - 1])
		return true; /* the log did not grow (a replica of the same name started again) */
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		int64_t *o = realloc(t->offset, cap * sizeof *o);
		if (o)
			t->offset = o;
		int64_t *m = o ? realloc(t->ms, cap * sizeof *m) : NULL;
		if (!m)
			return false;
		t->ms = m;
		t->cap = cap;
	}
	t->offset[t->n] = offset;
	t->ms[t->n++] = ms;
	return true;
}

/* One record, "OFFSET MILLISECONDS\n"; false when the line is not one. */
static bool parse_record(const char *line, int64_t *offset, int64_t *ms)
{
	char *end;
	errno = 0;
	long long o = strtoll(line, &end, 10);
	if (errno || end == line || *end != ' ' || o < 0)
		return false;
	const char *second = end + 1;
	long long m = strtoll(second, &end, 10);
	if (errno || end == second || *end != '\n' || m < 0)
		return false;
	*offset = o;
	*ms = m;
	return true;
}

void log_times_refresh(struct log_times *t)
{
	if (t->broken || (!t->f && !(t->f = fopen(t->path, "r"))))
		return;
	char line[128];
	for (;;) {
		off_t at = ftello(t->f);
		if (!fgets(line, sizeof line, t->f))
			break;
		bool whole = strchr(line, '\n') != NULL;
		if (!whole && strlen(line) < sizeof line - 1) { /* the engine is writing it: read it whole next time */
			fseeko(t->f, at, SEEK_SET);
			break;
		}
		int64_t offset, ms;
		t->line++;
		if (!whole || !parse_record(line, &offset, &ms) || !append(t, offset, ms)) {
			fprintf(stderr, "tfjobctl logs: %s:%ld: not a record 'OFFSET MILLISECONDS'; the lines after "
			        "byte %" PRId64 " of the log take its modification time\n", t->path, t->line,
			        t->n ? t->offset[t->n - 1] : 0);
			t->broken = true;
			break;
		}
	}
	clearerr(t->f);
}

/* The index of the first record past pos (t->n when none is). */
static size_t first_after(const struct log_times *t, int64_t pos)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (t->offset[mid] > pos)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

int64_t log_times_of(const struct log_times *t, int64_t pos, int64_t mtime_ms)
{
	size_t k = first_after(t, pos);
	return k < t->n ? t->ms[k] : mtime_ms;
}

int64_t log_times_since(const struct log_times *t, int64_t since_ms, int64_t size, int64_t mtime_ms)
{
	/* The bytes after record k-1 up to record k were written in (ms[k-1], ms[k]]. */
	for (size_t k = 0; k < t->n; k++)
		if (t->ms[k] >= since_ms)
			return k ? t->offset[k - 1] : 0;
	if (mtime_ms >= since_ms)
		return t->n ? t->offset[t->n - 1] : 0;
	return size;
}

void log_times_format(char *buf, size_t size, int64_t ms)
{
	time_t s = (time_t)(ms / 1000);
	struct tm tm;
	gmtime_r(&s, &tm);
	char date[24];
	strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%S", &tm);
	snprintf(buf, size, "%s.%03dZ", date, (int)(ms % 1000));
}
