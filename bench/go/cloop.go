package main

/*
#cgo pkg-config: tfjob
#include <stdlib.h>
#include <tfjob/tfjob.h>

// pdv_loop runs parse + default + validate n times entirely in C (one cgo call per batch, so
// the figure has no cgo overhead); returns 0 or the first failure.
static int pdv_loop(const char *data, size_t len, long n, int compat)
{
	for (long i = 0; i < n; i++) {
		tfjob_job *job = NULL;
		int rc = tfjob_job_parse(&job, data, len, NULL, NULL);
		if (rc)
			return rc;
		tfjob_default_options d = TFJOB_DEFAULT_OPTIONS_INIT;
		d.compat = (tfjob_compat)compat;
		rc = tfjob_job_apply_defaults(job, &d, NULL);
		if (rc == 0) {
			tfjob_validate_options v = TFJOB_VALIDATE_OPTIONS_INIT;
			v.compat = (tfjob_compat)compat;
			tfjob_field_errors *errs = NULL;
			rc = tfjob_job_validate(&errs, job, &v, NULL);
			if (rc == 0 && tfjob_field_errors_count(errs) != 0)
				rc = TFJOB_EINVALID;
			tfjob_field_errors_free(errs);
		}
		tfjob_job_free(job);
		if (rc)
			return rc;
	}
	return 0;
}
*/
import "C"

import (
	"fmt"
	"unsafe"
)

// cLoop returns a batch function: n operations of parse+default+validate in C.
func cLoop(data []byte) func(n int) error {
	buf := C.CBytes(data) // kept for the life of the program
	return func(n int) error {
		if rc := C.pdv_loop((*C.char)(buf), C.size_t(len(data)), C.long(n), C.TFJOB_COMPAT_TRAINING_OPERATOR_1_9); rc != 0 {
			return fmt.Errorf("pdv_loop: %d", int(rc))
		}
		return nil
	}
}

var _ = unsafe.Pointer(nil)
