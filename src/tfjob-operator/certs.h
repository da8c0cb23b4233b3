/*
 * tfjob-operator's webhook certificates, made and checked with GnuTLS: a self-signed CA and a
 * serving certificate it signs (as training-operator v1.9's certificate rotator keeps them in
 * its Secret), all PEM text.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_OPERATOR_CERTS_H
#define TFJOB_OPERATOR_CERTS_H

#include <stddef.h>
#include <time.h>

/* A certificate and its key, PEM; either may be NULL when absent. */
typedef struct op_cert_pem {
	char *crt;
	char *key;
} op_cert_pem;

void op_cert_pem_clear(op_cert_pem *p);

/* A new CA (P-256, valid from now for validity_s seconds). 0, or -1 with a message in errbuf. */
int op_certs_make_ca(op_cert_pem *out, const char *common_name, const char *organization, long long validity_s,
                     char *errbuf, size_t errlen);

/* A serving certificate signed by ca for every name (DNS names, or IP addresses as text), valid
   from now for validity_s seconds but never past the CA's own expiry. */
int op_certs_make_serving(op_cert_pem *out, const op_cert_pem *ca, const char *const *names, size_t count,
                          long long validity_s, char *errbuf, size_t errlen);

/* 0 when cert is a serving certificate signed by ca_crt (NULL: not checked), whose key is key,
   that covers every name and is valid from now until at least `until`; else -1 and why. */
int op_certs_check(const op_cert_pem *cert, const char *ca_crt, const char *const *names, size_t count,
                   time_t until, char *why, size_t whylen);

/* The notAfter of the first certificate of pem, or (time_t)-1 when it does not parse. */
time_t op_certs_not_after(const char *pem);

#endif
