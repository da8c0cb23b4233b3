/*
 * The Kubernetes backend when the library is built without libcurl: every call says so.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "transport/internal.h"
#include "util/versioned_structs.h"

int tfjob_kube_options_init(tfjob_kube_options *opts, unsigned int version)
{
	return tfjob__versioned_init(&tfjob__kube_options_v, opts, version);
}

int tfjob_kube_transport_new(tfjob_transport **out, const tfjob_kube_options *opts, tfjob_error **err)
{
	(void)out;
	(void)opts;
	return tfjob__fail(err, TFJOB_ESTATE, "the Kubernetes backend is not available: libtfjob was built without libcurl");
}

int tfjob_kube_transport_is(const tfjob_transport *t)
{
	(void)t;
	return 0;
}

const char *tfjob_kube_transport_server(const tfjob_transport *t)
{
	(void)t;
	return NULL;
}

int tfjob_pod_log_options_init(tfjob_pod_log_options *opts, unsigned int version)
{
	return tfjob__versioned_init(&tfjob__pod_log_options_v, opts, version);
}

int tfjob_kube_pod_log(tfjob_transport *t, const char *ns, const char *pod, const tfjob_pod_log_options *opts,
                       tfjob_pod_log_cb on_data, void *payload, tfjob_error **err)
{
	(void)t;
	(void)ns;
	(void)pod;
	(void)opts;
	(void)on_data;
	(void)payload;
	return tfjob__fail(err, TFJOB_ESTATE, "the Kubernetes backend is not available: libtfjob was built without libcurl");
}
