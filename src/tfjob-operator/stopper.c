/*
 * A background thread's stop signal (stopper.h).
 * SPDX-License-Identifier: Apache-2.0
 */
#include "stopper.h"

#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

int64_t op_monotonic_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int op_stopper_init(op_stopper *s)
{
	s->fd = eventfd(0, EFD_CLOEXEC);
	return s->fd < 0 ? -1 : 0;
}

int op_stopper_poll(op_stopper *s, struct pollfd *extra, long long ms)
{
	struct pollfd fds[2] = { { .fd = s->fd, .events = POLLIN } };
	nfds_t n = 1;
	if (extra) {
		extra->revents = 0;
		fds[n++] = *extra;
	}
	int64_t end = op_monotonic_ms() + (ms > 0 ? ms : 0);
	long long left = ms;
	int rc;
	do /* a signal cuts poll() short: wait out the rest */
		rc = poll(fds, n, left <= 0 ? 0 : left > INT_MAX ? INT_MAX : (int)left);
	while (rc < 0 && errno == EINTR && (left = end - op_monotonic_ms()) > 0);
	if (extra)
		extra->revents = rc > 0 ? fds[1].revents : 0;
	return rc > 0 && fds[0].revents ? 1 : 0;
}

int op_stopper_wait_ms(op_stopper *s, long long ms)
{
	return op_stopper_poll(s, NULL, ms);
}

void op_stopper_stop(op_stopper *s)
{
	uint64_t one = 1;
	ssize_t written = write(s->fd, &one, sizeof(one));
	(void)written; /* an eventfd write of 1 only fails once the count is at 2^64-2 */
}

void op_stopper_destroy(op_stopper *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}
