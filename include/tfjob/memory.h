/*
 * libtfjob - the former name of <tfjob/memstore.h> (the in-memory API store), kept so that code
 * written against 0.1 still builds; its name shadowed libc's <memory.h> for anyone who put
 * include/tfjob on the include path. New code includes <tfjob/memstore.h> (or <tfjob/tfjob.h>).
 * This header will be removed with the next soname.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "memstore.h"
