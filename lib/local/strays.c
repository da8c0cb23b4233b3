/*
 * Strays: processes of a replica that outlived its supervisor. A replica's supervisor is a child
 * subreaper and stops everything its replica leaves behind (supervise.c); only when the
 * supervisor itself is killed with SIGKILL (by hand, by the OOM killer) do the replica's
 * descendants that left its process group (setsid) go on, reparented to the next subreaper or
 * to init. Every replica's environment carries TFJOB_RUN_DIR=<the engine's run directory>
 * (spawn.c), which its descendants inherit: that marker finds them, whoever their parent is now,
 * with no subreaper set on the embedding process (which would make it inherit every orphan of
 * its own). A descendant that cleared or replaced its environment is not found.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "local/internal.h"

/* Rounds of looking again: a stray may fork while it is being stopped. */
#define STRAY_ROUNDS 50
#define STRAY_ROUND_PAUSE_US (10 * 1000)

/* Whether NUL-separated environment text holds the entry exactly. Reads the file in pieces, so
 * that an environment of any size is read in bounded memory; an entry longer than a piece is
 * read whole by keeping the unfinished tail. */
static bool environ_has(const char *path, const char *entry)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	size_t want = strlen(entry) + 1, have = 0;
	char buf[8192];
	bool found = false;
	ssize_t n;
	while (!found && (n = read(fd, buf + have, sizeof buf - have)) > 0) {
		have += (size_t)n;
		size_t start = 0;
		for (size_t i = 0; i < have; i++) {
			if (buf[i] != '\0')
				continue;
			if (i + 1 - start == want && !memcmp(buf + start, entry, want - 1))
				found = true;
			start = i + 1;
		}
		if (start == 0 && have == sizeof buf)
			start = have; /* one entry longer than the buffer: not ours (ours fits), skip it */
		memmove(buf, buf + start, have - start);
		have -= start;
	}
	close(fd);
	return found;
}

/* One pass over /proc: SIGKILL to every live process but this one whose environment holds
 * entry (and to the group it leads). Returns how many. */
static int kill_marked(const char *entry)
{
	DIR *d = opendir("/proc");
	if (!d)
		return 0;
	pid_t self = getpid();
	int killed = 0;
	struct dirent *e;
	while ((e = readdir(d)) != NULL) {
		char *end;
		long pid = strtol(e->d_name, &end, 10);
		if (*end || pid <= 0 || (pid_t)pid == self)
			continue;
		char path[64];
		snprintf(path, sizeof path, "/proc/%ld/environ", pid);
		if (!environ_has(path, entry)) /* a zombie's environment reads empty */
			continue;
		if (getpgid((pid_t)pid) == (pid_t)pid)
			kill(-(pid_t)pid, SIGKILL);
		kill((pid_t)pid, SIGKILL);
		waitpid((pid_t)pid, NULL, WNOHANG); /* reaped when it is a child of ours */
		killed++;
	}
	closedir(d);
	return killed;
}

int tfjob__local_stop_strays(const char *run_dir)
{
	if (!run_dir || !*run_dir)
		return 0;
	char *entry = tfjob__strdup_printf("TFJOB_RUN_DIR=%s", run_dir);
	if (!entry)
		return 0;
	int stopped = 0;
	for (int round = 0; round < STRAY_ROUNDS; round++) {
		int n = kill_marked(entry);
		if (!n)
			break;
		stopped += n;
		usleep(STRAY_ROUND_PAUSE_US);
	}
	free(entry);
	return stopped;
}
