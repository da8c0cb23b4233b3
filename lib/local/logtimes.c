/*
 * The time index of a replica's log: replicas write their output straight into <pod>.log (no
 * pipe through the runner, so the log outlives a killed runner and stays byte for byte what the
 * process wrote). Beside it the engine keeps <pod>.log.times, one line "OFFSET MILLISECONDS" each
 * time it sees the log grown: the log held OFFSET bytes at that Unix time. Every byte before
 * OFFSET was written at or before that time; tfjobctl logs --since/--timestamps read it.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "local/internal.h"

static int64_t wall_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Best effort: a log whose index cannot be written still works, its lines then take the log's
 * modification time. */
static void append_record(const char *log_path, int64_t size, int64_t at_ms)
{
	char path[4096], line[64];
	if ((size_t)snprintf(path, sizeof path, "%s%s", log_path, TFJOB_LOCAL_LOG_TIMES_SUFFIX) >= sizeof path)
		return;
	int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
	if (fd < 0)
		return;
	int n = snprintf(line, sizeof line, "%lld %lld\n", (long long)size, (long long)at_ms);
	ssize_t written = write(fd, line, (size_t)n); /* O_APPEND: one record, whole */
	(void)written;
	close(fd);
}

void tfjob__local_log_times_sample(lpod *p)
{
	struct stat st;
	if (!p->log_path || stat(p->log_path, &st) != 0 || (int64_t)st.st_size <= p->log_times_size)
		return;
	p->log_times_size = (int64_t)st.st_size;
	append_record(p->log_path, p->log_times_size, wall_ms());
}

void tfjob__local_log_times_tick(tfjob_local *l, int64_t now_ms)
{
	if (now_ms - l->log_times_at_ms < TFJOB__LOCAL_LOG_TIMES_EVERY_MS)
		return;
	l->log_times_at_ms = now_ms;
	for (lpod *p = l->pods; p; p = p->next)
		if (p->state == LPOD_RUNNING)
			tfjob__local_log_times_sample(p);
}
