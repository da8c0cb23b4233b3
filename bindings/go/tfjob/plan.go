package tfjob

/*
#include <stdlib.h>
#include <tfjob/tfjob.h>
*/
import "C"

import (
	"encoding/json"
	"runtime"
	"time"
	"unsafe"
)

// Action is one step of a plan: Action is "create", "delete" or "event".
type Action struct {
	Action  string         `json:"action"`
	Kind    string         `json:"kind,omitempty"`
	Name    string         `json:"name,omitempty"`
	Object  map[string]any `json:"object,omitempty"`
	Type    string         `json:"type,omitempty"`
	Reason  string         `json:"reason,omitempty"`
	Message string         `json:"message,omitempty"`
}

// Plan is the outcome of one reconcile step.
type Plan struct {
	Actions      []Action       `json:"actions"`
	Status       map[string]any `json:"status"`
	Changed      bool           `json:"statusChanged"`
	RequeueAfter *float64       `json:"requeueAfterSeconds"` // nil: no requeue needed
}

// PlanOptions are the inputs of a step besides the job and its children.
type PlanOptions struct {
	Compat   Compat
	Now      time.Time // required
	Requeues int64     // times the work queue requeued the job
	Render   RenderOptions
}

// PlanStep plans one reconcile step of job given its observed pods and services (each a JSON
// array or Kubernetes List; nil or empty = none).
func PlanStep(job *Job, pods, services []byte, o PlanOptions) (*Plan, error) {
	if job == nil || job.h == nil {
		return nil, ErrClosed
	}
	render := o.Render
	render.Compat = o.Compat
	ropts := newCRenderOptions(render)
	defer ropts.free()
	var opts C.tfjob_plan_options
	C.tfjob_plan_options_init(&opts, C.TFJOB_PLAN_OPTIONS_VERSION)
	opts.compat = C.tfjob_compat(o.Compat)
	opts.now = C.int64_t(o.Now.Unix())
	opts.requeues = C.int64_t(o.Requeues)
	// opts (Go memory) points at ropts.c (Go memory): pin it for the duration of the call.
	var pinner runtime.Pinner
	pinner.Pin(&ropts.c)
	defer pinner.Unpin()
	opts.render = &ropts.c
	cstr := func(b []byte) *C.char {
		if len(b) == 0 {
			return nil
		}
		return C.CString(string(b))
	}
	cpods, csvcs := cstr(pods), cstr(services)
	defer C.free(unsafe.Pointer(cpods))
	defer C.free(unsafe.Pointer(csvcs))
	var plan *C.tfjob_plan
	var cerr *C.tfjob_error
	rc := C.tfjob_plan_new(&plan, job.h, cpods, csvcs, &opts, &cerr)
	runtime.KeepAlive(job)
	if rc != 0 {
		return nil, takeError(rc, cerr)
	}
	defer C.tfjob_plan_free(plan)
	var out *C.char
	if rc := C.tfjob_plan_to_json(&out, plan, C.TFJOB_JSON_COMPACT, &cerr); rc != 0 {
		return nil, takeError(rc, cerr)
	}
	var p Plan
	if err := json.Unmarshal([]byte(takeString(out)), &p); err != nil {
		return nil, err
	}
	return &p, nil
}
