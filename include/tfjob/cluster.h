/*
 * libtfjob - the former name of <tfjob/graph.h> (the replica graph, TF_CONFIG, rendering),
 * kept so that code written against 0.1 still builds. New code includes <tfjob/graph.h> (or
 * <tfjob/tfjob.h>). This header will be removed with the next soname.
 * SPDX-License-Identifier: Apache-2.0
 */
#include "graph.h"
