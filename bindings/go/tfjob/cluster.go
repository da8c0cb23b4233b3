package tfjob

/*
#include "cgo_glue.h"

extern int goAddressTrampoline(char *out, size_t out_size, char *type, int64_t index, int32_t port, uintptr_t handle);
extern int goPriorityTrampoline(int32_t *out, char *name, uintptr_t handle);

static int address_cb(char *out, size_t out_size, const char *type, int64_t index, int32_t port, void *payload)
{
	return goAddressTrampoline(out, out_size, (char *)type, index, port, (uintptr_t)payload);
}

static int priority_cb(int32_t *out, const char *name, void *payload)
{
	return goPriorityTrampoline(out, (char *)name, (uintptr_t)payload);
}

TFJOB_GO_SETTER(set_address_cb, tfjob_render_options, address_cb, address_cb, address_payload)
TFJOB_GO_SETTER(set_priority_cb, tfjob_render_options, priority_cb, priority_cb, priority_payload)
*/
import "C"

import (
	"encoding/json"
	"fmt"
	"runtime"
	"runtime/cgo"
	"runtime/debug"
	"strings"
	"unsafe"
)

// AddressFunc maps a replica (lower-case type, index, its tfjob-port) to "host:port".
type AddressFunc func(replicaType string, index int64, port int32) (string, error)

// PriorityFunc maps a PriorityClass name to its value, for the PodGroup's minResources (the
// replicas taken first are those of the highest priority). name is "" for replicas without
// spec.priorityClassName; found = false means priority 0.
type PriorityFunc func(name string) (value int32, found bool)

// RenderOptions tunes TF_CONFIG and rendering (tfjob_render_options); the zero value is the
// library's default: DNS names, no gang scheduling.
type RenderOptions struct {
	Compat           Compat
	ClusterDomain    string      // "" = {name}.{ns}.svc
	Namespace        string      // used when metadata.namespace is absent ("" = "default")
	ExcludeEvaluator bool        // leave the evaluator out of the cluster spec
	Address          AddressFunc // nil = DNS names
	// GangScheduler decorates the pods for gang scheduling (GangVolcano, GangSchedulerPlugins)
	// and selects the PodGroup kind of (*Job).PodGroup; GangNone (default): none.
	GangScheduler GangScheduler
	SchedulerName string       // the pods' spec.schedulerName under gang scheduling; "" = the scheduler's default
	Priority      PriorityFunc // nil: every priority is 0
}

// callbackState is what the C callbacks of one call reach through their cgo.Handle.
type callbackState struct {
	address  AddressFunc
	priority PriorityFunc
	err      error // the first error or panic of a callback
}

func (st *callbackState) fail(err error) {
	if st.err == nil {
		st.err = err
	}
}

//export goAddressTrampoline
func goAddressTrampoline(out *C.char, size C.size_t, ctype *C.char, index C.int64_t, port C.int32_t, h C.uintptr_t) (rc C.int) {
	st := cgo.Handle(h).Value().(*callbackState)
	defer func() {
		if r := recover(); r != nil { // never unwind into C
			st.fail(&PanicError{Callback: "address", Value: r, Stack: debug.Stack()})
			rc = C.TFJOB_ERROR
		}
	}()
	addr, err := st.address(C.GoString(ctype), int64(index), int32(port))
	if err != nil {
		st.fail(err)
		return C.TFJOB_ERROR
	}
	if len(addr)+1 > int(size) {
		st.fail(fmt.Errorf("tfjob: address %q of %s %d is longer than %d bytes", truncate(addr, 64), C.GoString(ctype), int64(index), int(size)-1))
		return C.TFJOB_EINVAL
	}
	if strings.IndexByte(addr, 0) >= 0 {
		st.fail(fmt.Errorf("tfjob: address of %s %d contains a NUL byte", C.GoString(ctype), int64(index)))
		return C.TFJOB_EINVAL
	}
	buf := unsafe.Slice((*byte)(unsafe.Pointer(out)), int(size))
	copy(buf, addr)
	buf[len(addr)] = 0
	return 0
}

//export goPriorityTrampoline
func goPriorityTrampoline(out *C.int32_t, name *C.char, h C.uintptr_t) (rc C.int) {
	st := cgo.Handle(h).Value().(*callbackState)
	defer func() {
		if r := recover(); r != nil { // never unwind into C
			st.fail(&PanicError{Callback: "priority", Value: r, Stack: debug.Stack()})
			rc = C.TFJOB_ENOTFOUND
		}
	}()
	value, found := st.priority(C.GoString(name))
	if !found {
		return C.TFJOB_ENOTFOUND
	}
	*out = C.int32_t(value)
	return 0
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// cRenderOptions holds C memory for the duration of one call; call free when done. The
// options themselves are in C memory, so that they can be passed (and pointed at from other
// options) without cgo pointer rules getting in the way.
type cRenderOptions struct {
	c      *C.tfjob_render_options
	allocs []unsafe.Pointer
	handle cgo.Handle
	state  *callbackState
}

func newCRenderOptions(o RenderOptions) (*cRenderOptions, error) {
	if strings.IndexByte(o.ClusterDomain, 0) >= 0 || strings.IndexByte(o.Namespace, 0) >= 0 ||
		strings.IndexByte(o.SchedulerName, 0) >= 0 {
		return nil, &Error{Code: CodeInvalidArgument, Message: "render options: a string contains a NUL byte"}
	}
	if o.GangScheduler < GangNone || o.GangScheduler > GangSchedulerPlugins {
		return nil, &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf("render options: unknown gang scheduler %d", int(o.GangScheduler))}
	}
	r := &cRenderOptions{c: (*C.tfjob_render_options)(C.calloc(1, C.sizeof_tfjob_render_options))}
	if r.c == nil {
		return nil, &Error{Code: CodeNoMemory, Message: "out of memory"}
	}
	r.allocs = append(r.allocs, unsafe.Pointer(r.c))
	C.tfjob_render_options_init(r.c, C.TFJOB_RENDER_OPTIONS_VERSION)
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
	r.c.gang_scheduler = C.tfjob_gang_scheduler(o.GangScheduler)
	r.c.scheduler_name = str(o.SchedulerName)
	if o.Address != nil || o.Priority != nil {
		r.state = &callbackState{address: o.Address, priority: o.Priority}
		r.handle = cgo.NewHandle(r.state)
		if o.Address != nil {
			C.set_address_cb(r.c, C.uintptr_t(r.handle))
		}
		if o.Priority != nil {
			C.set_priority_cb(r.c, C.uintptr_t(r.handle))
		}
	}
	return r, nil
}

func (r *cRenderOptions) free() {
	for _, p := range r.allocs {
		C.free(p)
	}
	if r.handle != 0 {
		r.handle.Delete()
	}
}

// callbackError returns the error a callback (AddressFunc, PriorityFunc) reported during the last call, if any.
func (r *cRenderOptions) callbackError() error {
	if r.state != nil {
		return r.state.err
	}
	return nil
}

// renderCall runs one rendering call of libtfjob on the job with defaults applied (o.Compat)
// and returns its text. A callback's error or panic wins over the library's result.
func (j *Job) renderCall(o RenderOptions, call func(d *C.tfjob_job, opts *C.tfjob_render_options, out **C.char, cerr **C.tfjob_error) C.int) (string, error) {
	if j == nil || j.h == nil {
		return "", ErrClosed
	}
	opts, err := newCRenderOptions(o)
	if err != nil {
		return "", err
	}
	defer opts.free()
	d, err := j.WithDefaults(o.Compat)
	if err != nil {
		return "", err
	}
	defer d.Close()
	var out *C.char
	var cerr *C.tfjob_error
	rc := call(d.h, opts.c, &out, &cerr)
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

// replicaCall is renderCall for a function of one replica (type, index).
func (j *Job) replicaCall(replicaType string, o RenderOptions, call func(d *C.tfjob_job, ctype *C.char, opts *C.tfjob_render_options, out **C.char, cerr **C.tfjob_error) C.int) (string, error) {
	if strings.IndexByte(replicaType, 0) >= 0 {
		return "", &Error{Code: CodeInvalidArgument, Message: "replica type contains a NUL byte"}
	}
	ctype := C.CString(replicaType)
	defer C.free(unsafe.Pointer(ctype))
	return j.renderCall(o, func(d *C.tfjob_job, opts *C.tfjob_render_options, out **C.char, cerr **C.tfjob_error) C.int {
		return call(d, ctype, opts, out, cerr)
	})
}

// TFConfig returns the TF_CONFIG of replica (type, index) of a job after defaults ("" when the
// job is not distributed), byte-compatible with training-operator v1.9.
func (j *Job) TFConfig(replicaType string, index int64, o RenderOptions) (string, error) {
	return j.replicaCall(replicaType, o, func(d *C.tfjob_job, ctype *C.char, opts *C.tfjob_render_options, out **C.char, cerr **C.tfjob_error) C.int {
		return C.tfjob_tf_config(out, d, ctype, C.int64_t(index), opts, cerr)
	})
}

// RenderPod returns the Pod of replica (type, index) of the job (defaults applied first), as
// the controller creates it: TF_CONFIG, restartPolicy, labels and gang-scheduling decoration
// per o (tfjob_render_pod).
func (j *Job) RenderPod(replicaType string, index int64, o RenderOptions) (map[string]any, error) {
	return decodeObject(j.replicaCall(replicaType, o, func(d *C.tfjob_job, ctype *C.char, opts *C.tfjob_render_options, out **C.char, cerr **C.tfjob_error) C.int {
		return C.tfjob_render_pod(out, d, ctype, C.int64_t(index), opts, C.TFJOB_JSON_COMPACT, cerr)
	}))
}

// RenderService returns the headless Service of replica (type, index) (tfjob_render_service).
func (j *Job) RenderService(replicaType string, index int64, o RenderOptions) (map[string]any, error) {
	return decodeObject(j.replicaCall(replicaType, o, func(d *C.tfjob_job, ctype *C.char, opts *C.tfjob_render_options, out **C.char, cerr **C.tfjob_error) C.int {
		return C.tfjob_render_service(out, d, ctype, C.int64_t(index), opts, C.TFJOB_JSON_COMPACT, cerr)
	}))
}

// PodGroup returns the gang-scheduling PodGroup of the job (tfjob_render_pod_group): a volcano
// scheduling.volcano.sh/v1beta1 or scheduler-plugins scheduling.x-k8s.io/v1alpha1 PodGroup per
// o.GangScheduler, which must not be GangNone (ErrInvalidArgument).
func (j *Job) PodGroup(o RenderOptions) (map[string]any, error) {
	return decodeObject(j.renderCall(o, func(d *C.tfjob_job, opts *C.tfjob_render_options, out **C.char, cerr **C.tfjob_error) C.int {
		return C.tfjob_render_pod_group(out, d, opts, C.TFJOB_JSON_COMPACT, cerr)
	}))
}

func decodeObject(text string, err error) (map[string]any, error) {
	if err != nil {
		return nil, err
	}
	var obj map[string]any
	if err := json.Unmarshal([]byte(text), &obj); err != nil {
		return nil, err
	}
	return obj, nil
}

// Children are the Kubernetes objects of a new job.
type Children struct {
	Pods     []map[string]any `json:"pods"`
	Services []map[string]any `json:"services"`
}

// Render returns every Pod and Service of the job (defaults applied first).
func (j *Job) Render(o RenderOptions) (*Children, error) {
	text, err := j.renderCall(o, func(d *C.tfjob_job, opts *C.tfjob_render_options, out **C.char, cerr **C.tfjob_error) C.int {
		return C.tfjob_render_all(out, d, opts, C.TFJOB_JSON_COMPACT, cerr)
	})
	if err != nil {
		return nil, err
	}
	var children Children
	if err := json.Unmarshal([]byte(text), &children); err != nil {
		return nil, err
	}
	return &children, nil
}
