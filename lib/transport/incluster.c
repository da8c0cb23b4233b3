/*
 * In-cluster configuration: KUBERNETES_SERVICE_HOST/PORT and the pod's service account files.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <stdlib.h>
#include <string.h>

#include "transport/kube_internal.h"

#define SERVICE_ACCOUNT_DIR "/var/run/secrets/kubernetes.io/serviceaccount"

static void trim(char *s)
{
	size_t n = strlen(s);
	while (n > 0 && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' ' || s[n - 1] == '\t'))
		s[--n] = '\0';
}

int tfjob__incluster_load(struct tfjob__kube_config *out, const char *dir, tfjob_error **err)
{
	memset(out, 0, sizeof(*out));
	const char *host = getenv("KUBERNETES_SERVICE_HOST");
	const char *port = getenv("KUBERNETES_SERVICE_PORT");
	if (!host || !host[0] || !port || !port[0])
		return tfjob__fail(err, TFJOB_ENOTFOUND,
		                   "not running in a cluster: KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT are not set");
	if (!dir)
		dir = SERVICE_ACCOUNT_DIR;
	int ipv6 = strchr(host, ':') != NULL && host[0] != '[';
	out->server = tfjob__strdup_printf(ipv6 ? "https://[%s]:%s" : "https://%s:%s", host, port);
	out->token_file = tfjob__strdup_printf("%s/token", dir);
	out->source = tfjob__strdup("in-cluster");
	char *ca_path = tfjob__strdup_printf("%s/ca.crt", dir);
	char *ns_path = tfjob__strdup_printf("%s/namespace", dir);
	int rc = (!out->server || !out->token_file || !out->source || !ca_path || !ns_path) ? tfjob__oom(err) : 0;
	/* As client-go: a missing ca.crt is not fatal (the system's authorities are used then). */
	if (!rc && tfjob__read_file(&out->ca_data, &out->ca_len, ca_path, NULL) != 0)
		out->ca_data = NULL;
	char *ns = NULL;
	if (!rc && tfjob__read_file(&ns, NULL, ns_path, NULL) == 0) {
		trim(ns);
		if (ns[0])
			out->namespace_name = ns;
		else
			free(ns);
	}
	/* The token must be readable now; it is re-read later as it rotates. */
	char *token = NULL;
	if (!rc && (rc = tfjob__read_file(&token, NULL, out->token_file, err)) == 0) {
		memset(token, 0, strlen(token));
		free(token);
	}
	free(ca_path);
	free(ns_path);
	if (rc)
		tfjob__kube_config_clear(out);
	return rc;
}
