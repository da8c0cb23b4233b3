/*
 * Driving tests/transport/fault_server.py from the C tests: start it, script it, read its log.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_TEST_FAULT_H
#define TFJOB_TEST_FAULT_H

#include <jansson.h>
#include <sys/types.h>

struct fault_server {
	pid_t pid;
	int port;
	int tls;
	char url[128];
};

/* Start the server (TLS when cert is non-NULL; client_ca enables client certificates). */
void fault_start(struct fault_server *fs, const char *dir, const char *cert, const char *key, const char *client_ca);
void fault_stop(struct fault_server *fs);
/* Append rules (a JSON array as text). */
void fault_rules(struct fault_server *fs, const char *rules_json);
void fault_reset(struct fault_server *fs);
/* The request log: a new reference to a JSON array. */
json_t *fault_log(struct fault_server *fs);

/* A scratch directory (removed by the caller with rm_rf). */
char *make_temp_dir(void);
void rm_rf(const char *dir);
void write_text(const char *path, const char *text);

#endif
