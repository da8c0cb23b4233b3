package tfjob

/*
#include <stdlib.h>
#include <tfjob/tfjob.h>
*/
import "C"

import (
	"bytes"
	"encoding/json"
	"fmt"
	"runtime"
	"time"
	"unsafe"
)

// Action is one step of a plan: Action is "create", "delete", "event", "adopt", "release",
// "patch" or "wait" (docs/plan.md).
type Action struct {
	Action  string         `json:"action"`
	Kind    string         `json:"kind,omitempty"`
	Name    string         `json:"name,omitempty"`
	Object  map[string]any `json:"object,omitempty"` // create: the object
	Patch   map[string]any `json:"patch,omitempty"`  // adopt, release, patch: the merge patch
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

// PlanOptions are the inputs of a step besides the job and its children (tfjob_plan_options).
type PlanOptions struct {
	Compat   Compat
	Now      time.Time // required
	Requeues int64     // times the work queue requeued the job
	// Render tunes the children the plan creates: ClusterDomain, Namespace, Address,
	// GangScheduler, SchedulerName, Priority ... Its Compat is overridden by Compat above.
	Render RenderOptions
	// PodGroup is the job's observed PodGroup (JSON or YAML; nil: none), read with
	// Render.GangScheduler: the plan then creates, patches or deletes it and its pods wait for it.
	PodGroup []byte
}

// PlanStep plans one reconcile step of job given its observed pods and services (each a JSON
// array or Kubernetes List; nil or empty = none).
func PlanStep(job *Job, pods, services []byte, o PlanOptions) (*Plan, error) {
	if job == nil || job.h == nil {
		return nil, ErrClosed
	}
	if bytes.IndexByte(pods, 0) >= 0 || bytes.IndexByte(services, 0) >= 0 {
		return nil, &Error{Code: CodeInvalidArgument, Message: "pods/services text contains a NUL byte"}
	}
	if y := o.Now.Year(); y < 0 || y > 9999 {
		return nil, &Error{Code: CodeInvalidArgument, Message: fmt.Sprintf("now %v is outside the years 0000-9999", o.Now)}
	}
	render := o.Render
	render.Compat = o.Compat
	ropts, err := newCRenderOptions(render)
	if err != nil {
		return nil, err
	}
	defer ropts.free()
	var opts C.tfjob_plan_options
	C.tfjob_plan_options_init(&opts, C.TFJOB_PLAN_OPTIONS_VERSION)
	opts.compat = C.tfjob_compat(o.Compat)
	opts.now = C.int64_t(o.Now.Unix())
	opts.requeues = C.int64_t(o.Requeues)
	opts.render = ropts.c // C memory
	cstr := func(b []byte) *C.char {
		if len(b) == 0 {
			return nil
		}
		return C.CString(string(b))
	}
	cpods, csvcs, cgroup := cstr(pods), cstr(services), cstr(o.PodGroup)
	defer C.free(unsafe.Pointer(cpods))
	defer C.free(unsafe.Pointer(csvcs))
	defer C.free(unsafe.Pointer(cgroup))
	opts.pod_group_json = cgroup
	var plan *C.tfjob_plan
	var cerr *C.tfjob_error
	rc := C.tfjob_plan_new(&plan, job.h, cpods, csvcs, &opts, &cerr)
	runtime.KeepAlive(job)
	if cbErr := ropts.callbackError(); cbErr != nil {
		if rc == 0 {
			C.tfjob_plan_free(plan)
		} else {
			C.tfjob_error_free(cerr)
		}
		return nil, cbErr
	}
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

// SimulateOptions tune Simulate (tfjob_simulate_options); the zero value runs the scenario
// with its own compat mode, default rendering and at most 1000 steps.
type SimulateOptions struct {
	OverrideCompat bool   // use Compat instead of the scenario's `compat:`
	Compat         Compat // only with OverrideCompat
	MaxSteps       uint32 // reconcile steps before the run stops; 0 = 1000
	Render         RenderOptions
}

// Simulate runs a scenario (YAML or JSON, docs/simulate.md: a job and a timeline of pod phase
// and exit-code changes) through the planner on an in-memory cluster and returns the report
// (condition timeline, final status and events) as `tfjobctl simulate` prints it.
func Simulate(scenario []byte, o SimulateOptions) (string, error) {
	ropts, err := newCRenderOptions(o.Render)
	if err != nil {
		return "", err
	}
	defer ropts.free()
	var opts C.tfjob_simulate_options
	C.tfjob_simulate_options_init(&opts, C.TFJOB_SIMULATE_OPTIONS_VERSION)
	if o.OverrideCompat {
		opts.override_compat = 1
		opts.compat = C.tfjob_compat(o.Compat)
	}
	opts.max_steps = C.uint(o.MaxSteps)
	opts.render = ropts.c // C memory
	var buf *C.char
	if len(scenario) > 0 {
		buf = (*C.char)(C.CBytes(scenario))
		defer C.free(unsafe.Pointer(buf))
	}
	var out *C.char
	var cerr *C.tfjob_error
	rc := C.tfjob_simulate(&out, buf, C.size_t(len(scenario)), &opts, &cerr)
	if cbErr := ropts.callbackError(); cbErr != nil {
		if rc == 0 {
			C.tfjob_free(unsafe.Pointer(out))
		} else {
			C.tfjob_error_free(cerr)
		}
		return "", cbErr
	}
	if rc != 0 {
		return "", takeError(rc, cerr)
	}
	return takeString(out), nil
}
