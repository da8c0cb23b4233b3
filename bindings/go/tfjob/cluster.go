package tfjob

/*
#include "cgo_glue.h"

extern int goAddressTrampoline(char *out, size_t out_size, char *type, int64_t index, int32_t port, uintptr_t handle);

static int address_cb(char *out, size_t out_size, const char *type, int64_t index, int32_t port, void *payload)
{
	return goAddressTrampoline(out, out_size, (char *)type, index, port, (uintptr_t)payload);
}

TFJOB_GO_SETTER(set_address_cb, tfjob_render_options, address_cb, address_cb, address_payload)
*/
import "C"

import (
	"encoding/json"
	"runtime"
	"runtime/cgo"
	"runtime/debug"
	"unsafe"
)

// AddressFunc maps a replica (lower-case type, index, its tfjob-port) to "host:port".
type AddressFunc func(replicaType string, index int64, port int32) (string, error)

// RenderOptions tunes TF_CONFIG and rendering; the zero value is v1.9's behaviour with DNS names.
type RenderOptions struct {
	Compat           Compat
	ClusterDomain    string      // "" = {name}.{ns}.svc
	Namespace        string      // used when metadata.namespace is absent ("" = "default")
	ExcludeEvaluator bool        // leave the evaluator out of the cluster spec
	Address          AddressFunc // nil = DNS names
}

type addressState struct {
	fn  AddressFunc
	err error
}

//export goAddressTrampoline
func goAddressTrampoline(out *C.char, size C.size_t, ctype *C.char, index C.int64_t, port C.int32_t, h C.uintptr_t) (rc C.int) {
	st := cgo.Handle(h).Value().(*addressState)
	defer func() {
		if r := recover(); r != nil { // never unwind into C
			st.err = &PanicError{Callback: "address", Value: r, Stack: debug.Stack()}
			rc = C.TFJOB_ERROR
		}
	}()
	addr, err := st.fn(C.GoString(ctype), int64(index), int32(port))
	if err != nil {
		st.err = err
		return C.TFJOB_ERROR
	}
	if len(addr)+1 > int(size) {
		return C.TFJOB_EINVAL
	}
	buf := unsafe.Slice((*byte)(unsafe.Pointer(out)), int(size))
	copy(buf, addr)
	buf[len(addr)] = 0
	return 0
}

// cRenderOptions holds C memory for the duration of one call; call free when done.
type cRenderOptions struct {
	c      C.tfjob_render_options
	allocs []unsafe.Pointer
	handle cgo.Handle
	state  *addressState
}

func newCRenderOptions(o RenderOptions) *cRenderOptions {
	r := &cRenderOptions{}
	C.tfjob_render_options_init(&r.c, C.TFJOB_RENDER_OPTIONS_VERSION)
	r.c.compat = C.tfjob_compat(o.Compat)
	str := func(s string) *C.char {
		if s == "" {
			return nil
		}
		cs := C.CString(s)
		r.allocs = append(r.allocs, unsafe.Pointer(cs))
		return cs
	}
	r.c.cluster_domain = str(o.ClusterDomain)
	r.c.default_namespace = str(o.Namespace)
	if o.ExcludeEvaluator {
		r.c.exclude_evaluator = 1
	}
	if o.Address != nil {
		r.state = &addressState{fn: o.Address}
		r.handle = cgo.NewHandle(r.state)
		C.set_address_cb(&r.c, C.uintptr_t(r.handle))
	}
	return r
}

func (r *cRenderOptions) free() {
	for _, p := range r.allocs {
		C.free(p)
	}
	if r.handle != 0 {
		r.handle.Delete()
	}
}

// callbackError returns the error an AddressFunc reported during the last call, if any.
func (r *cRenderOptions) callbackError() error {
	if r.state != nil {
		return r.state.err
	}
	return nil
}

// TFConfig returns the TF_CONFIG of replica (type, index) of a job after defaults ("" when the
// job is not distributed), byte-compatible with training-operator v1.9.
func (j *Job) TFConfig(replicaType string, index int64, o RenderOptions) (string, error) {
	d, err := j.WithDefaults(o.Compat)
	if err != nil {
		return "", err
	}
	defer d.Close()
	opts := newCRenderOptions(o)
	defer opts.free()
	ctype := C.CString(replicaType)
	defer C.free(unsafe.Pointer(ctype))
	var out *C.char
	var cerr *C.tfjob_error
	rc := C.tfjob_tf_config(&out, d.h, ctype, C.int64_t(index), &opts.c, &cerr)
	runtime.KeepAlive(d)
	if cbErr := opts.callbackError(); cbErr != nil {
		if rc != 0 {
			C.tfjob_error_free(cerr)
		} else {
			C.tfjob_free(unsafe.Pointer(out))
		}
		return "", cbErr
	}
	if rc != 0 {
		return "", takeError(rc, cerr)
	}
	return takeString(out), nil
}

// Children are the Kubernetes objects of a new job.
type Children struct {
	Pods     []map[string]any `json:"pods"`
	Services []map[string]any `json:"services"`
}

// Render returns every Pod and Service of the job (defaults applied first).
func (j *Job) Render(o RenderOptions) (*Children, error) {
	d, err := j.WithDefaults(o.Compat)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	opts := newCRenderOptions(o)
	defer opts.free()
	var out *C.char
	var cerr *C.tfjob_error
	rc := C.tfjob_render_all(&out, d.h, &opts.c, C.TFJOB_JSON_COMPACT, &cerr)
	runtime.KeepAlive(d)
	if cbErr := opts.callbackError(); cbErr != nil {
		if rc == 0 {
			C.tfjob_free(unsafe.Pointer(out))
		} else {
			C.tfjob_error_free(cerr)
		}
		return nil, cbErr
	}
	if rc != 0 {
		return nil, takeError(rc, cerr)
	}
	var children Children
	if err := json.Unmarshal([]byte(takeString(out)), &children); err != nil {
		return nil, err
	}
	return &children, nil
}
