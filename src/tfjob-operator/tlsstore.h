/*
 * The serving certificate of the webhook's HTTPS server, swappable while it runs: every TLS
 * handshake takes the certificate current at that moment (libmicrohttpd's certificate
 * callback), so a rotated or reloaded certificate is served without a restart.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_OPERATOR_TLSSTORE_H
#define TFJOB_OPERATOR_TLSSTORE_H

#include <stddef.h>
#include <gnutls/gnutls.h>
#include <gnutls/abstract.h>

/* Serve this certificate chain and key (PEM) from the next handshake on. Thread-safe.
   0, or -1 with a message in errbuf (the previous certificate stays). */
int op_tls_store_set(const char *crt_pem, const char *key_pem, char *errbuf, size_t errlen);

/* 1 once a certificate has been set. Thread-safe. */
int op_tls_store_ready(void);

/* The SHA-256 fingerprint (hex) of the served certificate into buf ("" when none). Thread-safe. */
void op_tls_store_fingerprint(char *buf, size_t len);

/* gnutls_certificate_retrieve_function2 for MHD_OPTION_HTTPS_CERT_CALLBACK. */
int op_tls_store_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
                          const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length, gnutls_pcert_st **pcert,
                          unsigned int *pcert_length, gnutls_privkey_t *pkey);

/* Release every certificate (at exit, after the server has stopped). */
void op_tls_store_clear(void);

#endif
