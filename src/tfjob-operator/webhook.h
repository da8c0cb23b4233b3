/*
 * tfjob-operator's validating admission webhook: AdmissionReview v1 in, AdmissionReview v1 out,
 * with the library's validation (tfjob_job_validate) for CREATE and UPDATE, as training-operator
 * v1.9's validator.tfjob.training-operator.kubeflow.org answers them.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_OPERATOR_WEBHOOK_H
#define TFJOB_OPERATOR_WEBHOOK_H

#include <stddef.h>
#include <tfjob/tfjob.h>

/* The path training-operator v1.9 serves the TFJob validator on. */
#define OP_WEBHOOK_PATH "/validate-kubeflow-org-v1-tfjob"

typedef struct op_webhook {
	tfjob_compat compat;
	/* Told about every denial (may be NULL): the job's namespace/name and the message. */
	void (*on_denied)(const char *job, const char *message);
} op_webhook;

/* op_http_webhook_fn: payload is an op_webhook. Returns malloc'd JSON and the HTTP status. */
char *op_webhook_review(void *payload, const char *path, const char *body, size_t len, int *status);

/* The message of a denial, as training-operator's field.ErrorList.ToAggregate() words it: one
   error alone, or "[e1, e2, ...]" with repeated messages once. malloc'd; NULL when out of memory. */
char *op_webhook_denial_message(const tfjob_field_errors *errors);

#endif
