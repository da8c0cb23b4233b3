/*
 * Process-wide initialisation of the transport layer: libcurl's global state.
 * SPDX-License-Identifier: Apache-2.0
 */
#include <curl/curl.h>

#include "transport/internal.h"

int tfjob__transport_global_init(void);
void tfjob__transport_global_cleanup(void);

int tfjob__transport_global_init(void)
{
	return curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK ? 0 : TFJOB_ERROR;
}

void tfjob__transport_global_cleanup(void) { curl_global_cleanup(); }
