/*
 * The webhook's swappable serving certificate (tlsstore.h).
 *
 * GnuTLS keeps using what the callback returned for the rest of the handshake, so a replaced
 * certificate is not freed at once: it is retired and freed once it has been retired for longer
 * than any handshake may last (the server's whole-request deadline is far shorter).
 * SPDX-License-Identifier: Apache-2.0
 */
#include "tlsstore.h"

#include <gnutls/x509.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_CHAIN 8
#define RETIRED_KEEP_S 600

typedef struct generation {
	gnutls_pcert_st chain[MAX_CHAIN];
	unsigned int count;
	gnutls_privkey_t key;
	char fingerprint[65];
	time_t retired_at;
	struct generation *next; /* older ones */
} generation;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static generation *current;
static generation *retired;

static void free_generation(generation *g)
{
	for (unsigned int i = 0; i < g->count; i++)
		gnutls_pcert_deinit(&g->chain[i]);
	gnutls_privkey_deinit(g->key);
	free(g);
}

static void fingerprint_of(generation *g)
{
	unsigned char md[32];
	size_t len = sizeof(md);
	g->fingerprint[0] = 0;
	if (g->count && gnutls_fingerprint(GNUTLS_DIG_SHA256, &g->chain[0].cert, md, &len) >= 0)
		for (size_t i = 0; i < len && i < 32; i++)
			snprintf(g->fingerprint + 2 * i, 3, "%02x", md[i]);
}

static generation *load(const char *crt_pem, const char *key_pem, char *errbuf, size_t errlen)
{
	generation *g = calloc(1, sizeof(*g));
	if (!g) {
		snprintf(errbuf, errlen, "out of memory");
		return NULL;
	}
	gnutls_datum_t c = { (unsigned char *)(uintptr_t)crt_pem, (unsigned int)strlen(crt_pem) };
	gnutls_datum_t k = { (unsigned char *)(uintptr_t)key_pem, (unsigned int)strlen(key_pem) };
	g->count = MAX_CHAIN;
	int rc = gnutls_pcert_list_import_x509_raw(g->chain, &g->count, &c, GNUTLS_X509_FMT_PEM, 0);
	if (rc < 0) {
		g->count = 0;
		snprintf(errbuf, errlen, "the certificate does not parse: %s", gnutls_strerror(rc));
		free_generation(g);
		return NULL;
	}
	if ((rc = gnutls_privkey_init(&g->key)) < 0 ||
	    (rc = gnutls_privkey_import_x509_raw(g->key, &k, GNUTLS_X509_FMT_PEM, NULL, 0)) < 0) {
		snprintf(errbuf, errlen, "the key does not parse: %s", gnutls_strerror(rc));
		free_generation(g);
		return NULL;
	}
	fingerprint_of(g);
	return g;
}

/* Free what has been retired long enough. Called with mu held. */
static void reap_retired(time_t now)
{
	generation **p = &retired;
	while (*p) {
		if (now - (*p)->retired_at > RETIRED_KEEP_S) {
			generation *dead = *p;
			*p = dead->next;
			free_generation(dead);
		} else {
			p = &(*p)->next;
		}
	}
}

int op_tls_store_set(const char *crt_pem, const char *key_pem, char *errbuf, size_t errlen)
{
	generation *g = load(crt_pem, key_pem, errbuf, errlen);
	if (!g)
		return -1;
	time_t now = time(NULL);
	pthread_mutex_lock(&mu);
	if (current) {
		current->retired_at = now;
		current->next = retired;
		retired = current;
	}
	current = g;
	reap_retired(now);
	pthread_mutex_unlock(&mu);
	return 0;
}

int op_tls_store_ready(void)
{
	pthread_mutex_lock(&mu);
	int ready = current != NULL;
	pthread_mutex_unlock(&mu);
	return ready;
}

void op_tls_store_fingerprint(char *buf, size_t len)
{
	pthread_mutex_lock(&mu);
	snprintf(buf, len, "%s", current ? current->fingerprint : "");
	pthread_mutex_unlock(&mu);
}

int op_tls_store_retrieve(gnutls_session_t session, const gnutls_datum_t *req_ca_dn, int nreqs,
                          const gnutls_pk_algorithm_t *pk_algos, int pk_algos_length, gnutls_pcert_st **pcert,
                          unsigned int *pcert_length, gnutls_privkey_t *pkey)
{
	(void)session, (void)req_ca_dn, (void)nreqs, (void)pk_algos, (void)pk_algos_length;
	pthread_mutex_lock(&mu);
	generation *g = current;
	pthread_mutex_unlock(&mu);
	if (!g)
		return -1; /* no certificate yet: the handshake fails */
	*pcert = g->chain;
	*pcert_length = g->count;
	*pkey = g->key;
	return 0;
}

void op_tls_store_clear(void)
{
	pthread_mutex_lock(&mu);
	if (current)
		free_generation(current);
	current = NULL;
	while (retired) {
		generation *g = retired;
		retired = g->next;
		free_generation(g);
	}
	pthread_mutex_unlock(&mu);
}
