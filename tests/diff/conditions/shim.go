// Package conditions compares libtfjob's condition state machine (the planner's
// tfjob__cond_set, linked from the internal static archive libtfjob_internal.a because it is
// not exported) with training-operator v1.9's commonutil.UpdateJobConditions.
//
// Build: CGO_LDFLAGS must name libtfjob_internal.a (tests/suites/90-diff.sh does it).
package conditions

/*
#cgo CFLAGS: -I${SRCDIR}/../../../lib -I${SRCDIR}/../../../include -DTFJOB_BUILDING_LIBRARY
#cgo pkg-config: jansson yaml-0.1
#cgo LDFLAGS: -lm
#include <stdlib.h>
#include <jansson.h>
#include "plan/planner.h"

static int cond_set(char **out, const char *status_json, const char *type, const char *cstatus,
                    const char *reason, const char *message, int64_t now, int compat)
{
	json_error_t jerr;
	json_t *status = json_loads(status_json, 0, &jerr);
	if (!status)
		return -1;
	int rc = tfjob__cond_set(status, type, cstatus, reason, message, now, (tfjob_compat)compat);
	if (rc == 0)
		*out = json_dumps(status, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(status);
	return rc;
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// Compat modes of libtfjob.
const (
	Documented         = 0
	TrainingOperator19 = 1
)

// condSet applies one condition update to a status (JSON) at time now (Unix seconds).
func condSet(status, ctype, cstatus, reason, message string, now int64, compat int) (string, error) {
	cs := C.CString(status)
	ct := C.CString(ctype)
	cst := C.CString(cstatus)
	cr := C.CString(reason)
	cm := C.CString(message)
	defer func() {
		for _, p := range []*C.char{cs, ct, cst, cr, cm} {
			C.free(unsafe.Pointer(p))
		}
	}()
	var out *C.char
	if rc := C.cond_set(&out, cs, ct, cst, cr, cm, C.int64_t(now), C.int(compat)); rc != 0 {
		return "", fmt.Errorf("tfjob__cond_set: %d", int(rc))
	}
	defer C.free(unsafe.Pointer(out))
	return C.GoString(out), nil
}
