/*
 * TF_CONFIG addresses of local replicas: 127.0.0.1 and a free port per replica, found by
 * binding port 0, stable for the engine's life.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "local/internal.h"

static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_in a;
	memset(&a, 0, sizeof a);
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	a.sin_port = 0;
	socklen_t len = sizeof a;
	int port = -1;
	if (bind(fd, (struct sockaddr *)&a, sizeof a) == 0 && getsockname(fd, (struct sockaddr *)&a, &len) == 0)
		port = ntohs(a.sin_port);
	close(fd);
	return port;
}

static bool taken(json_t *ports, int port)
{
	const char *k;
	json_t *v;
	json_object_foreach(ports, k, v)
		if (json_integer_value(v) == port)
			return true;
	return false;
}

int tfjob_local_address(char *out, size_t out_size, const char *type, int64_t index, int32_t port, void *payload)
{
	(void)port;
	tfjob_local *l = payload;
	if (!out || out_size < 32 || !type || !l)
		return TFJOB_EINVAL;
	char key[300];
	snprintf(key, sizeof key, "%s/%lld", type, (long long)index);
	pthread_mutex_lock(&l->lock);
	json_t *v = json_object_get(l->ports, key);
	int p = v ? (int)json_integer_value(v) : -1;
	for (int tries = 0; p < 0 && tries < 100; tries++) {
		int cand = free_port();
		if (cand > 0 && !taken(l->ports, cand)) {
			p = cand;
			json_object_set_new(l->ports, key, json_integer(p));
		}
	}
	pthread_mutex_unlock(&l->lock);
	if (p < 0)
		return TFJOB_EIO;
	snprintf(out, out_size, "127.0.0.1:%d", p);
	return 0;
}
