/*
 * tfjob-operator's small HTTP/1.1 server: /healthz, /readyz, /metrics.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_OPERATOR_HTTP_H
#define TFJOB_OPERATOR_HTTP_H

#include <tfjob/tfjob.h>

typedef struct op_http op_http;

/* Listen on each "host:port" (":8080" = all interfaces; NULL, "" or "0" = off) and serve from a
   thread. Returns 0 or -1 with a message in errbuf. */
int op_http_start(op_http **out, const char *metrics_addr, const char *health_addr, tfjob_controller *c,
                  int leader_election, char *errbuf, size_t errlen);
/* The port actually bound (useful with port 0), or -1. which: 0 metrics, 1 health. */
int op_http_port(const op_http *h, int which);
void op_http_stop(op_http *h);

#endif
