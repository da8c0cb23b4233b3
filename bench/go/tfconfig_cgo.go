//go:build tfconfig

package main

/*
#cgo pkg-config: tfjob
#include <stdlib.h>
#include <tfjob/tfjob.h>
*/
import "C"

import (
	"fmt"
	"unsafe"

	tfjob "github.com/libtfjob/libtfjob/bindings/go/tfjob"
)

// The Go binding has no TF_CONFIG call yet, so this file calls tfjob_tf_config through cgo
// itself, on a job parsed and defaulted once in C (the same cost as a binding would have).
const haveTFConfig = true

type cjob struct{ h *C.tfjob_job }

func parseDefaulted(data []byte) (*cjob, error) {
	buf := C.CBytes(data)
	defer C.free(buf)
	var h *C.tfjob_job
	if rc := C.tfjob_job_parse(&h, (*C.char)(buf), C.size_t(len(data)), nil, nil); rc != 0 {
		return nil, fmt.Errorf("tfjob_job_parse: %d", int(rc))
	}
	var opts C.tfjob_default_options
	C.tfjob_default_options_init(&opts, C.TFJOB_DEFAULT_OPTIONS_VERSION)
	opts.compat = C.TFJOB_COMPAT_TRAINING_OPERATOR_1_9
	if rc := C.tfjob_job_apply_defaults(h, &opts, nil); rc != 0 {
		C.tfjob_job_free(h)
		return nil, fmt.Errorf("tfjob_job_apply_defaults: %d", int(rc))
	}
	return &cjob{h}, nil
}

func (j *cjob) tfConfig(ctype *C.char, index int) (string, error) {
	var ropts C.tfjob_render_options
	C.tfjob_render_options_init(&ropts, C.TFJOB_RENDER_OPTIONS_VERSION)
	ropts.compat = C.TFJOB_COMPAT_TRAINING_OPERATOR_1_9
	var out *C.char
	if rc := C.tfjob_tf_config(&out, j.h, ctype, C.int64_t(index), &ropts, nil); rc != 0 {
		return "", fmt.Errorf("tfjob_tf_config: %d", int(rc))
	}
	s := C.GoString(out)
	C.tfjob_free(unsafe.Pointer(out))
	return s, nil
}

func bindingTFConfig(data []byte, rtype string, index int) func() error {
	j, err := parseDefaulted(data)
	if err != nil {
		return func() error { return err }
	}
	ctype := C.CString(rtype)
	// Check once that both implementations give the same bytes.
	want, err := v19TFConfigString(data, rtype, index)
	if err != nil {
		return func() error { return err }
	}
	got, err := j.tfConfig(ctype, index)
	if err != nil {
		return func() error { return err }
	}
	if got != want {
		return func() error { return fmt.Errorf("TF_CONFIG differs:\n v1.9: %s\n ours: %s", want, got) }
	}
	_ = tfjob.LibraryVersion
	return func() error {
		_, err := j.tfConfig(ctype, index)
		return err
	}
}
