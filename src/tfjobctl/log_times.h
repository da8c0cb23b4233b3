/*
 * tfjobctl: the time index of a local replica's log (<pod>.log.times, written by the engine,
 * lib/local/logtimes.c): when each byte of the log was written, at the latest.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOBCTL_LOG_TIMES_H
#define TFJOBCTL_LOG_TIMES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

struct log_times {
	char *path;        /* the index file */
	FILE *f;           /* NULL until it exists */
	int64_t *offset;   /* strictly increasing log sizes ... */
	int64_t *ms;       /* ... and when the engine saw them (Unix ms) */
	size_t n, cap;
	long line;         /* records read, for messages */
	bool broken;       /* a bad record: nothing after it is used */
};

/* Start reading the index of the log at log_path (what exists now). false: out of memory. */
bool log_times_open(struct log_times *t, const char *log_path);
/* Read the records appended since (a -f reader). */
void log_times_refresh(struct log_times *t);
void log_times_close(struct log_times *t);
/* When the byte at pos was written, at the latest: the first record past it, else mtime_ms (the
 * log's modification time: bytes the engine has not recorded yet were written before it). */
int64_t log_times_of(const struct log_times *t, int64_t pos, int64_t mtime_ms);
/* The offset of the first byte written at or after since_ms in a log of `size` bytes. */
int64_t log_times_since(const struct log_times *t, int64_t since_ms, int64_t size, int64_t mtime_ms);
/* "2026-01-02T03:04:05.678Z" (RFC 3339, UTC, milliseconds) into buf (at least 32 bytes). */
void log_times_format(char *buf, size_t size, int64_t ms);

#endif
