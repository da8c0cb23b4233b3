/*
 * The Kubernetes backend when the library is built without libcurl: every call says so.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "transport/internal.h"
#include "util/versions.h"

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
