/*
 * Webhook certificates with GnuTLS (certs.h).
 * SPDX-License-Identifier: Apache-2.0
 */
#include "certs.h"

#include <arpa/inet.h>
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <gnutls/x509.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Certificates start a little in the past: clocks of the API server and of this pod differ. */
#define CLOCK_SKEW_S 300

void op_cert_pem_clear(op_cert_pem *p)
{
	free(p->crt);
	free(p->key);
	p->crt = p->key = NULL;
}

static int fail(char *errbuf, size_t errlen, const char *what, int rc)
{
	snprintf(errbuf, errlen, "%s: %s", what, gnutls_strerror(rc));
	return -1;
}

static char *datum_text(gnutls_datum_t *d)
{
	char *s = malloc(d->size + 1);
	if (s) {
		memcpy(s, d->data, d->size);
		s[d->size] = 0;
	}
	gnutls_free(d->data);
	d->data = NULL;
	return s;
}

static gnutls_datum_t text_datum(const char *s)
{
	gnutls_datum_t d = { (unsigned char *)(uintptr_t)s, (unsigned int)strlen(s) };
	return d;
}

/* Export crt and key into out (PEM; the key as unencrypted PKCS#8). */
static int export_pair(op_cert_pem *out, gnutls_x509_crt_t crt, gnutls_x509_privkey_t key, char *errbuf,
                       size_t errlen)
{
	gnutls_datum_t c = { NULL, 0 }, k = { NULL, 0 };
	int rc = gnutls_x509_crt_export2(crt, GNUTLS_X509_FMT_PEM, &c);
	if (rc < 0)
		return fail(errbuf, errlen, "exporting the certificate", rc);
	rc = gnutls_x509_privkey_export2_pkcs8(key, GNUTLS_X509_FMT_PEM, NULL, GNUTLS_PKCS_PLAIN, &k);
	if (rc < 0) {
		gnutls_free(c.data);
		return fail(errbuf, errlen, "exporting the key", rc);
	}
	out->crt = datum_text(&c);
	out->key = datum_text(&k);
	if (!out->crt || !out->key) {
		op_cert_pem_clear(out);
		snprintf(errbuf, errlen, "out of memory");
		return -1;
	}
	return 0;
}

/* A fresh certificate for a fresh P-256 key: version, random serial, validity, subject. */
static int new_cert(gnutls_x509_crt_t *crt, gnutls_x509_privkey_t *key, const char *cn, const char *org,
                    time_t not_after, char *errbuf, size_t errlen)
{
	*crt = NULL;
	*key = NULL;
	unsigned char serial[16];
	time_t now = time(NULL);
	int rc;
	if ((rc = gnutls_x509_privkey_init(key)) < 0 ||
	    (rc = gnutls_x509_privkey_generate(*key, GNUTLS_PK_ECDSA,
	                                       GNUTLS_CURVE_TO_BITS(GNUTLS_ECC_CURVE_SECP256R1), 0)) < 0 ||
	    (rc = gnutls_x509_crt_init(crt)) < 0 || (rc = gnutls_rnd(GNUTLS_RND_NONCE, serial, sizeof(serial))) < 0)
		goto bad;
	serial[0] &= 0x7f; /* a positive serial number */
	if ((rc = gnutls_x509_crt_set_version(*crt, 3)) < 0 ||
	    (rc = gnutls_x509_crt_set_serial(*crt, serial, sizeof(serial))) < 0 ||
	    (rc = gnutls_x509_crt_set_activation_time(*crt, now - CLOCK_SKEW_S)) < 0 ||
	    (rc = gnutls_x509_crt_set_expiration_time(*crt, not_after)) < 0 ||
	    (rc = gnutls_x509_crt_set_dn_by_oid(*crt, GNUTLS_OID_X520_COMMON_NAME, 0, cn, (unsigned)strlen(cn))) < 0 ||
	    (org && (rc = gnutls_x509_crt_set_dn_by_oid(*crt, GNUTLS_OID_X520_ORGANIZATION_NAME, 0, org,
	                                                 (unsigned)strlen(org))) < 0) ||
	    (rc = gnutls_x509_crt_set_key(*crt, *key)) < 0)
		goto bad;
	return 0;
bad:
	gnutls_x509_crt_deinit(*crt);
	gnutls_x509_privkey_deinit(*key);
	*crt = NULL;
	*key = NULL;
	return fail(errbuf, errlen, "making a certificate", rc);
}

static int set_subject_key_id(gnutls_x509_crt_t crt)
{
	unsigned char id[64];
	size_t len = sizeof(id);
	int rc = gnutls_x509_crt_get_key_id(crt, 0, id, &len);
	return rc < 0 ? rc : gnutls_x509_crt_set_subject_key_id(crt, id, len);
}

int op_certs_make_ca(op_cert_pem *out, const char *common_name, const char *organization, long long validity_s,
                     char *errbuf, size_t errlen)
{
	gnutls_x509_crt_t crt;
	gnutls_x509_privkey_t key;
	if (new_cert(&crt, &key, common_name, organization, time(NULL) + (time_t)validity_s, errbuf, errlen))
		return -1;
	int rc;
	if ((rc = gnutls_x509_crt_set_basic_constraints(crt, 1, -1)) < 0 ||
	    (rc = gnutls_x509_crt_set_key_usage(crt, GNUTLS_KEY_KEY_CERT_SIGN | GNUTLS_KEY_CRL_SIGN |
	                                                 GNUTLS_KEY_DIGITAL_SIGNATURE)) < 0 ||
	    (rc = set_subject_key_id(crt)) < 0 || (rc = gnutls_x509_crt_sign2(crt, crt, key, GNUTLS_DIG_SHA256, 0)) < 0)
		rc = fail(errbuf, errlen, "making the CA", rc);
	else
		rc = export_pair(out, crt, key, errbuf, errlen);
	gnutls_x509_crt_deinit(crt);
	gnutls_x509_privkey_deinit(key);
	return rc;
}

static int import_crt(gnutls_x509_crt_t *crt, const char *pem)
{
	gnutls_datum_t d = text_datum(pem);
	int rc = gnutls_x509_crt_init(crt);
	if (rc < 0)
		return rc;
	if ((rc = gnutls_x509_crt_import(*crt, &d, GNUTLS_X509_FMT_PEM)) < 0) {
		gnutls_x509_crt_deinit(*crt);
		*crt = NULL;
	}
	return rc;
}

static int import_key(gnutls_x509_privkey_t *key, const char *pem)
{
	gnutls_datum_t d = text_datum(pem);
	int rc = gnutls_x509_privkey_init(key);
	if (rc < 0)
		return rc;
	if ((rc = gnutls_x509_privkey_import2(*key, &d, GNUTLS_X509_FMT_PEM, NULL, GNUTLS_PKCS_PLAIN)) < 0) {
		gnutls_x509_privkey_deinit(*key);
		*key = NULL;
	}
	return rc;
}

static int add_name(gnutls_x509_crt_t crt, const char *name)
{
	unsigned char ip[16];
	if (inet_pton(AF_INET, name, ip) == 1)
		return gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, ip, 4, GNUTLS_FSAN_APPEND);
	if (inet_pton(AF_INET6, name, ip) == 1)
		return gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_IPADDRESS, ip, 16, GNUTLS_FSAN_APPEND);
	return gnutls_x509_crt_set_subject_alt_name(crt, GNUTLS_SAN_DNSNAME, name, (unsigned)strlen(name),
	                                            GNUTLS_FSAN_APPEND);
}

static int sign_serving(gnutls_x509_crt_t crt, gnutls_x509_crt_t ca, gnutls_x509_privkey_t ca_key,
                        const char *const *names, size_t count)
{
	unsigned char id[64];
	size_t len = sizeof(id);
	int rc;
	if ((rc = gnutls_x509_crt_set_basic_constraints(crt, 0, -1)) < 0 ||
	    (rc = gnutls_x509_crt_set_key_usage(crt, GNUTLS_KEY_DIGITAL_SIGNATURE | GNUTLS_KEY_KEY_ENCIPHERMENT)) < 0 ||
	    (rc = gnutls_x509_crt_set_key_purpose_oid(crt, GNUTLS_KP_TLS_WWW_SERVER, 0)) < 0 ||
	    (rc = set_subject_key_id(crt)) < 0 || (rc = gnutls_x509_crt_get_subject_key_id(ca, id, &len, NULL)) < 0 ||
	    (rc = gnutls_x509_crt_set_authority_key_id(crt, id, len)) < 0)
		return rc;
	for (size_t i = 0; i < count; i++)
		if ((rc = add_name(crt, names[i])) < 0)
			return rc;
	return gnutls_x509_crt_sign2(crt, ca, ca_key, GNUTLS_DIG_SHA256, 0);
}

int op_certs_make_serving(op_cert_pem *out, const op_cert_pem *ca, const char *const *names, size_t count,
                          long long validity_s, char *errbuf, size_t errlen)
{
	if (count == 0) {
		snprintf(errbuf, errlen, "a serving certificate needs at least one name");
		return -1;
	}
	gnutls_x509_crt_t ca_crt = NULL, crt = NULL;
	gnutls_x509_privkey_t ca_key = NULL, key = NULL;
	int rc;
	if ((rc = import_crt(&ca_crt, ca->crt)) < 0 || (rc = import_key(&ca_key, ca->key)) < 0) {
		rc = fail(errbuf, errlen, "reading the CA", rc);
		goto out;
	}
	time_t not_after = time(NULL) + (time_t)validity_s, ca_end = gnutls_x509_crt_get_expiration_time(ca_crt);
	if (ca_end != (time_t)-1 && ca_end < not_after)
		not_after = ca_end;
	if (new_cert(&crt, &key, names[0], NULL, not_after, errbuf, errlen)) {
		rc = -1;
		goto out;
	}
	if ((rc = sign_serving(crt, ca_crt, ca_key, names, count)) < 0)
		rc = fail(errbuf, errlen, "signing the serving certificate", rc);
	else
		rc = export_pair(out, crt, key, errbuf, errlen);
out:
	gnutls_x509_crt_deinit(crt);
	gnutls_x509_privkey_deinit(key);
	gnutls_x509_crt_deinit(ca_crt);
	gnutls_x509_privkey_deinit(ca_key);
	return rc < 0 ? -1 : 0;
}

static int same_key(gnutls_x509_crt_t crt, gnutls_x509_privkey_t key)
{
	unsigned char a[64], b[64];
	size_t al = sizeof(a), bl = sizeof(b);
	return gnutls_x509_crt_get_key_id(crt, 0, a, &al) >= 0 && gnutls_x509_privkey_get_key_id(key, 0, b, &bl) >= 0 &&
	       al == bl && !memcmp(a, b, al);
}

static int signed_by(gnutls_x509_crt_t crt, const char *ca_pem)
{
	gnutls_x509_crt_t ca;
	if (import_crt(&ca, ca_pem) < 0)
		return 0;
	unsigned int status = 0;
	int rc = gnutls_x509_crt_verify(crt, &ca, 1, GNUTLS_VERIFY_DISABLE_TIME_CHECKS, &status);
	gnutls_x509_crt_deinit(ca);
	return rc >= 0 && status == 0;
}

int op_certs_check(const op_cert_pem *cert, const char *ca_crt, const char *const *names, size_t count,
                   time_t until, char *why, size_t whylen)
{
	if (!cert->crt || !cert->key) {
		snprintf(why, whylen, "no certificate or key");
		return -1;
	}
	gnutls_x509_crt_t crt = NULL;
	gnutls_x509_privkey_t key = NULL;
	int ok = -1;
	if (import_crt(&crt, cert->crt) < 0 || import_key(&key, cert->key) < 0) {
		snprintf(why, whylen, "the certificate or key does not parse");
		goto out;
	}
	if (!same_key(crt, key)) {
		snprintf(why, whylen, "the key does not belong to the certificate");
		goto out;
	}
	if (gnutls_x509_crt_get_activation_time(crt) > time(NULL) + CLOCK_SKEW_S ||
	    gnutls_x509_crt_get_expiration_time(crt) < until) {
		snprintf(why, whylen, "the certificate expires soon or is not valid yet");
		goto out;
	}
	if (ca_crt && !signed_by(crt, ca_crt)) {
		snprintf(why, whylen, "the certificate is not signed by the CA");
		goto out;
	}
	for (size_t i = 0; i < count; i++)
		if (!gnutls_x509_crt_check_hostname2(crt, names[i], GNUTLS_VERIFY_DO_NOT_ALLOW_WILDCARDS)) {
			snprintf(why, whylen, "the certificate is not for %s", names[i]);
			goto out;
		}
	ok = 0;
out:
	gnutls_x509_crt_deinit(crt);
	gnutls_x509_privkey_deinit(key);
	return ok;
}

time_t op_certs_not_after(const char *pem)
{
	gnutls_x509_crt_t crt;
	if (!pem || import_crt(&crt, pem) < 0)
		return (time_t)-1;
	time_t t = gnutls_x509_crt_get_expiration_time(crt);
	gnutls_x509_crt_deinit(crt);
	return t;
}
