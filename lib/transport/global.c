/*
 * Process-wide initialisation (tfjob_global_init(), tfjob_global_cleanup()): the only global
 * state of the library is libcurl's, owned by the transport layer, so both calls live here. A
 * build without libcurl still has them: they then only count.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifdef TFJOB_HAVE_TRANSPORT
#include <curl/curl.h>
#endif

#include "transport/internal.h"

static int init_count;

int tfjob_global_init(void)
{
	if (init_count++ > 0)
		return 0;
#ifdef TFJOB_HAVE_TRANSPORT
	if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		init_count = 0;
		return TFJOB_ERROR;
	}
#endif
	return 0;
}

void tfjob_global_cleanup(void)
{
	if (init_count == 0 || --init_count > 0)
		return;
#ifdef TFJOB_HAVE_TRANSPORT
	curl_global_cleanup();
#endif
}
