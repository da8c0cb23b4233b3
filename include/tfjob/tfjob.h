/*
 * libtfjob - the whole public API.
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef TFJOB_TFJOB_H
#define TFJOB_TFJOB_H

#include "common.h"
#include "version.h"
#include "error.h"
#include "job.h"
#include "validate.h"
#include "exitcode.h"
#include "graph.h"
#include "objects.h"
#include "plan.h"
#include "transport.h"
#include "memstore.h"
#include "kube.h"
#include "controller.h"
#include "local.h"

#endif
