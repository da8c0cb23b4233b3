/*
 * The webhook's certificates, kept as training-operator v1.9 keeps them (no cert-manager needed):
 * a CA and a serving certificate in a Secret (keys ca.crt, ca.key, tls.crt, tls.key) made when
 * missing, expiring or not for the webhook Service's name, the CA injected as caBundle into
 * every webhook of the ValidatingWebhookConfiguration, rotated ahead of expiry and served
 * without a restart. Or, with a certificate directory, tls.crt and tls.key read from it and
 * re-read when they change (nothing is written to the cluster).
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_OPERATOR_CERTMGR_H
#define TFJOB_OPERATOR_CERTMGR_H

#include <stddef.h>
#include <tfjob/tfjob.h>

typedef struct op_certmgr op_certmgr;

typedef void (*op_certmgr_log_fn)(tfjob_log_level level, const char *msg, const char *key, const char *value);

typedef struct op_certmgr_options {
	tfjob_transport *transport;   /* Secret and ValidatingWebhookConfiguration reads and writes */
	const char *namespace_name;   /* the Secret's */
	const char *secret_name;
	const char *service_name;     /* the certificate is for <service>.<namespace>.svc */
	const char *config_name;      /* the ValidatingWebhookConfiguration */
	const char *const *extra_names; /* more DNS names or IP addresses (a webhook registered by URL) */
	size_t extra_count;
	long long validity_s;         /* of the CA and of the serving certificate */
	const char *cert_dir;         /* non-NULL: tls.crt and tls.key from here; no Secret, no injection */
	op_certmgr_log_fn log;
} op_certmgr_options;

/* v1.9's defaults. */
#define OP_CERTMGR_DEFAULT_SECRET "training-operator-webhook-cert"
#define OP_CERTMGR_DEFAULT_SERVICE "training-operator"
#define OP_CERTMGR_DEFAULT_CONFIG "validator.training-operator.kubeflow.org"
#define OP_CERTMGR_DEFAULT_VALIDITY_S (10LL * 365 * 24 * 3600)

/* Start the manager's thread (the first certificate comes asynchronously). 0 or -1 + errbuf. */
int op_certmgr_start(op_certmgr **out, const op_certmgr_options *opts, char *errbuf, size_t errlen);
/* 1 once a certificate is served (and, with a Secret, its CA injected). payload: op_certmgr. */
int op_certmgr_ready(void *payload);
/* Stop the thread and free m. Accepts NULL. */
void op_certmgr_stop(op_certmgr *m);

#endif
