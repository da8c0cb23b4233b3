package tfjob

/*
#include "cgo_glue.h"

extern void goLocalEvent(char *pod, char *type, char *reason, char *message, uintptr_t handle);
extern void goLocalUpdate(int what, char *json, uintptr_t handle);

static void local_event_cb(const char *pod, const char *type, const char *reason, const char *message, void *payload)
{
	goLocalEvent((char *)pod, (char *)type, (char *)reason, (char *)message, (uintptr_t)payload);
}

static void local_update_cb(tfjob_local_update what, const char *json, void *payload)
{
	goLocalUpdate((int)what, (char *)json, (uintptr_t)payload);
}

TFJOB_GO_SETTER(set_local_event_cb, tfjob_local_options, on_event, local_event_cb, event_payload)
TFJOB_GO_SETTER(set_local_update_cb, tfjob_local_run_options, on_update, local_update_cb, payload)
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"runtime/cgo"
	"runtime/debug"
	"strings"
	"sync"
	"time"
	"unsafe"
)

// LocalOptions configure a LocalEngine.
type LocalOptions struct {
	RunDir         string        // required: logs and state; created when missing
	BaseDir        string        // relative working directories; "": the current directory
	BackoffInitial time.Duration // first restart delay of Always/OnFailure; 0: 10 s (kubelet)
	BackoffMax     time.Duration // restart delay cap; 0: 300 s
	GracePeriod    time.Duration // 0: the Pod's terminationGracePeriodSeconds; negative: SIGKILL at once
	// GPUs are the GPU ids to hand out; nil: this machine's (nvidia-smi -L, else
	// /proc/driver/nvidia/gpus); empty and non-nil: none. A replica whose container asks for
	// nvidia.com/gpu: N gets N of its own in CUDA_VISIBLE_DEVICES; one asking for none gets "".
	GPUs []string
	// OnEvent is told what the engine does and notices ("Started", "Exited", "BackOff",
	// "Killing", "Ignored", "FailedToStart"), with the engine's lock held: do not call back into
	// the engine from it. A panic in it is recovered and returned by the engine call that
	// triggered it (or Close).
	OnEvent func(pod, eventType, reason, message string)
}

type localState struct {
	onEvent func(pod, eventType, reason, message string)
	mu      sync.Mutex
	errs    []error
}

func (s *localState) record(err error) {
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
}

func (s *localState) take() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := errors.Join(s.errs...)
	s.errs = nil
	return err
}

//export goLocalEvent
func goLocalEvent(pod, typ, reason, message *C.char, h C.uintptr_t) {
	s := cgo.Handle(h).Value().(*localState)
	defer func() {
		if r := recover(); r != nil {
			s.record(&PanicError{Callback: "local_event", Value: r, Stack: debug.Stack()})
		}
	}()
	s.onEvent(C.GoString(pod), C.GoString(typ), C.GoString(reason), C.GoString(message))
}

// LocalEngine is a tiny kubelet whose Pods are process groups on this machine (local.h). Run
// runs a TFJob to its end with the planner; Backend gives the engine as a transport for a loop
// of your own (call Poll from one goroutine locked to its thread with runtime.LockOSThread:
// processes die with the thread that started them). Close terminates what still runs; a
// finalizer does so for a dropped engine that has no backends (a backend keeps its engine).
type LocalEngine struct {
	mu       sync.RWMutex
	h        *C.tfjob_local
	state    *localState
	handle   cgo.Handle
	runDir   string
	backends []*Backend
}

// NewLocalEngine makes a process engine; nothing starts until a Pod is created.
func NewLocalEngine(o LocalOptions) (*LocalEngine, error) {
	if err := noNUL(append([]string{o.RunDir, o.BaseDir}, o.GPUs...)...); err != nil {
		return nil, err
	}
	var cs cstrings
	defer cs.free()
	var opts C.tfjob_local_options
	C.tfjob_local_options_init(&opts, C.TFJOB_LOCAL_OPTIONS_VERSION)
	opts.run_dir = cs.of(o.RunDir, false)
	opts.base_dir = cs.of(o.BaseDir, false)
	if o.GPUs != nil {
		opts.gpus = cs.of(strings.Join(o.GPUs, ","), true)
	}
	opts.backoff_initial_ms = C.int64_t(o.BackoffInitial.Milliseconds())
	opts.backoff_max_ms = C.int64_t(o.BackoffMax.Milliseconds())
	switch {
	case o.GracePeriod < 0:
		opts.grace_period_ms = 0
	case o.GracePeriod > 0:
		opts.grace_period_ms = C.int64_t(o.GracePeriod.Milliseconds())
	}
	e := &LocalEngine{state: &localState{onEvent: o.OnEvent}, runDir: o.RunDir}
	if o.OnEvent != nil {
		e.handle = cgo.NewHandle(e.state)
		C.set_local_event_cb(&opts, C.uintptr_t(e.handle))
	}
	var cerr *C.tfjob_error
	if rc := C.tfjob_local_new(&e.h, &opts, &cerr); rc != 0 {
		if e.handle != 0 {
			e.handle.Delete()
		}
		return nil, takeError(rc, cerr)
	}
	runtime.SetFinalizer(e, (*LocalEngine).Close)
	return e, nil
}

func (e *LocalEngine) with(fn func(h *C.tfjob_local) error) error {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.h == nil {
		return ErrClosed
	}
	err := fn(e.h)
	runtime.KeepAlive(e)
	return errors.Join(err, e.state.take())
}

// Close closes the engine's backends, terminates every process still running, reaps them and
// releases the engine; a Run in progress is interrupted and waited for. Not from the engine's
// own callbacks. It returns a recovered panic of OnEvent, if any.
func (e *LocalEngine) Close() error {
	e.Interrupt() // a run in progress ends (it holds the engine until then)
	e.mu.Lock()
	backends := e.backends
	e.backends = nil
	e.mu.Unlock()
	for _, b := range backends {
		b.Close()
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.h != nil {
		C.tfjob_local_free(e.h)
		e.h = nil
		if e.handle != 0 {
			e.handle.Delete()
		}
		runtime.SetFinalizer(e, nil)
	}
	return e.state.take()
}

// RunDir is the run directory.
func (e *LocalEngine) RunDir() string { return e.runDir }

// Backend returns a transport whose Pods are this engine's processes (TFJobs, Services and
// Events live in memory; Pod update, patch and watch fail with ErrState). It is closed with
// the engine.
func (e *LocalEngine) Backend() (*Backend, error) {
	var h *C.tfjob_transport
	err := e.with(func(l *C.tfjob_local) error {
		var cerr *C.tfjob_error
		if rc := C.tfjob_local_transport_new(&h, l, &cerr); rc != 0 {
			return takeError(rc, cerr)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	b := newBackend(h, e)
	e.mu.Lock()
	e.backends = append(e.backends, b)
	e.mu.Unlock()
	return b, nil
}

// Poll does the engine's work and waits up to timeout (negative: no limit) for a Pod to
// change; it returns the number of changes (0 on timeout or interrupt).
func (e *LocalEngine) Poll(timeout time.Duration) (int, error) {
	ms := timeout.Milliseconds()
	if timeout < 0 {
		ms = -1
	}
	var n int
	err := e.with(func(l *C.tfjob_local) error {
		var cerr *C.tfjob_error
		rc := C.tfjob_local_poll(l, C.int64_t(ms), &cerr)
		if rc < 0 {
			return takeError(rc, cerr)
		}
		n = int(rc)
		return nil
	})
	return n, err
}

// Interrupt interrupts a run: it shuts down cleanly (a second interrupt kills at once). Safe
// from any goroutine.
func (e *LocalEngine) Interrupt() {
	if !e.mu.TryRLock() {
		return // being closed: Close interrupted it already
	}
	defer e.mu.RUnlock()
	if e.h != nil {
		C.tfjob_local_interrupt(e.h)
	}
}

// Interrupted is the number of times Interrupt was called.
func (e *LocalEngine) Interrupted() int {
	var n int
	_ = e.with(func(l *C.tfjob_local) error { n = int(C.tfjob_local_interrupted(l)); return nil })
	return n
}

// Shutdown stops every process as a node shutdown does and returns how many it stopped.
func (e *LocalEngine) Shutdown() (int, error) {
	var n int
	err := e.with(func(l *C.tfjob_local) error {
		var cerr *C.tfjob_error
		rc := C.tfjob_local_shutdown(l, &cerr)
		if rc < 0 {
			return takeError(rc, cerr)
		}
		n = int(rc)
		return nil
	})
	return n, err
}

// RunningCount is the number of processes running now.
func (e *LocalEngine) RunningCount() int {
	var n int
	_ = e.with(func(l *C.tfjob_local) error { n = int(C.tfjob_local_running_count(l)); return nil })
	return n
}

// Address is the "127.0.0.1:PORT" the engine gives replica (type, index) in TF_CONFIG: a free
// port, the same for the engine's whole life.
func (e *LocalEngine) Address(replicaType string, index int64) (string, error) {
	if err := noNUL(replicaType); err != nil {
		return "", err
	}
	var cs cstrings
	defer cs.free()
	buf := (*C.char)(C.malloc(64))
	defer C.free(unsafe.Pointer(buf))
	err := e.with(func(l *C.tfjob_local) error {
		lower := []rune(replicaType)
		for i, r := range lower {
			if r >= 'A' && r <= 'Z' {
				lower[i] = r + 'a' - 'A'
			}
		}
		if rc := C.tfjob_local_address(buf, 64, cs.of(string(lower), true), C.int64_t(index), 2222,
			unsafe.Pointer(l)); rc != 0 {
			return convertError(rc, nil)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return C.GoString(buf), nil
}

// LocalOutcome is how a local run ended.
type LocalOutcome int

// Outcomes of a local run.
const (
	LocalSucceeded   LocalOutcome = C.TFJOB_LOCAL_SUCCEEDED
	LocalFailed      LocalOutcome = C.TFJOB_LOCAL_FAILED
	LocalInterrupted LocalOutcome = C.TFJOB_LOCAL_INTERRUPTED
)

func (o LocalOutcome) String() string {
	return C.GoString(C.tfjob_local_outcome_name(C.tfjob_local_outcome(o)))
}

// LocalUpdate is a progress update of a local run: exactly one of the fields is set.
type LocalUpdate struct {
	Status Object   // the job's new status
	Pods   []Object // the Pods with their status
	Event  Object   // {"type","reason","message","object","time"}
}

// LocalRunOptions tune Run.
type LocalRunOptions struct {
	Compat Compat
	// OnUpdate is called on the run's thread; a panic in it is recovered, interrupts the run
	// and is returned by Run.
	OnUpdate func(LocalUpdate)
}

type updateState struct {
	fn    func(LocalUpdate)
	err   error
	local *C.tfjob_local
}

//export goLocalUpdate
func goLocalUpdate(what C.int, text *C.char, h C.uintptr_t) {
	s := cgo.Handle(h).Value().(*updateState)
	defer func() {
		if r := recover(); r != nil {
			if s.err == nil {
				s.err = &PanicError{Callback: "local_update", Value: r, Stack: debug.Stack()}
			}
			C.tfjob_local_interrupt(s.local)
		}
	}()
	data := []byte(C.GoString(text))
	var u LocalUpdate
	var err error
	switch what {
	case C.TFJOB_LOCAL_UPDATE_STATUS:
		err = json.Unmarshal(data, &u.Status)
	case C.TFJOB_LOCAL_UPDATE_PODS:
		var list struct {
			Items []Object `json:"items"`
		}
		if err = json.Unmarshal(data, &list); err != nil {
			err = json.Unmarshal(data, &u.Pods) // a plain array
		} else {
			u.Pods = list.Items
		}
	default:
		err = json.Unmarshal(data, &u.Event)
	}
	if err == nil {
		s.fn(u)
	}
}

// Run runs a job to its end (validated and defaulted first: ErrInvalid when invalid;
// ErrInvalidArgument when a replica cannot run locally). Cancelling ctx interrupts it: every
// process is stopped and the outcome is LocalInterrupted. One run per engine.
func (e *LocalEngine) Run(ctx context.Context, job *Job, o LocalRunOptions) (LocalOutcome, error) {
	if job == nil || job.h == nil {
		return 0, ErrClosed
	}
	var opts C.tfjob_local_run_options
	C.tfjob_local_run_options_init(&opts, C.TFJOB_LOCAL_RUN_OPTIONS_VERSION)
	opts.compat = C.tfjob_compat(o.Compat)
	var us *updateState
	if o.OnUpdate != nil {
		us = &updateState{fn: o.OnUpdate}
		h := cgo.NewHandle(us)
		defer h.Delete()
		C.set_local_update_cb(&opts, C.uintptr_t(h))
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case <-ctx.Done():
			e.Interrupt()
		case <-done:
		}
	}()
	var out C.tfjob_local_outcome
	err := e.with(func(l *C.tfjob_local) error {
		if us != nil {
			us.local = l
		}
		// The whole run is one C call: its processes belong to this thread for its duration.
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		var cerr *C.tfjob_error
		if rc := C.tfjob_local_run(&out, l, job.h, &opts, &cerr); rc != 0 {
			return takeError(rc, cerr)
		}
		return nil
	})
	runtime.KeepAlive(job)
	if us != nil && us.err != nil {
		err = errors.Join(us.err, err)
	}
	return LocalOutcome(out), err
}

// CheckLocal reports (ErrInvalidArgument, naming the field) a replica that cannot run locally:
// no command in its tensorflow container, env valueFrom, envFrom.
func CheckLocal(job *Job) error {
	if job == nil || job.h == nil {
		return ErrClosed
	}
	var cerr *C.tfjob_error
	rc := C.tfjob_local_check(job.h, &cerr)
	runtime.KeepAlive(job)
	if rc != 0 {
		return takeError(rc, cerr)
	}
	return nil
}

// LocalReplica is what happened to one replica of a local run (an entry of LocalReport).
type LocalReplica struct {
	Name           string   `json:"name"` // "worker-1"
	Pod            string   `json:"pod"`
	ReplicaType    string   `json:"replicaType"`
	ReplicaIndex   int64    `json:"replicaIndex"`
	Phase          string   `json:"phase"` // the Pod's; "Deleted" once it is gone
	Exits          int64    `json:"exits"`
	Failures       int64    `json:"failures"` // non-zero exits the engine did not cause
	ExitCode       int64    `json:"exitCode"`
	FailedExitCode int64    `json:"failedExitCode"`
	FailedAt       string   `json:"failedAt"`
	StoppedBy      string   `json:"stoppedBy"` // "deletion", "the end of the run"
	Deleted        string   `json:"deleted"`   // why: "deleted by cleanPodPolicy All as the job finished"
	RestartAt      string   `json:"restartAt"` // waiting to restart in place until then
	Restarts       int64    `json:"restarts"`
	Log            string   `json:"log"`     // the whole log
	Tail           []string `json:"tail"`    // its last lines, when the replica failed
	Summary        string   `json:"summary"` // "worker-1 failed with exit 1, then deleted by ..."
}

// LocalReport is what happened to each replica of a local run: the report tfjobctl run and
// tfjobctl get --run-dir print (tfjob_local_report()).
type LocalReport struct {
	Name     string         `json:"name"`
	Outcome  string         `json:"outcome"` // "Succeeded", "Failed", "Unfinished"
	RunDir   string         `json:"runDir"`
	Replicas []LocalReplica `json:"replicas"`
}

// Failures are the replicas that exited non-zero.
func (r *LocalReport) Failures() []LocalReplica {
	var out []LocalReplica
	for _, rep := range r.Replicas {
		if rep.Failures > 0 {
			out = append(out, rep)
		}
	}
	return out
}

// ReadLocalReport reads the report of a run directory, with the last tail lines of each failed
// replica's output (negative: 20).
func ReadLocalReport(runDir string, tail int) (*LocalReport, error) {
	if err := noNUL(runDir); err != nil {
		return nil, err
	}
	var cs cstrings
	defer cs.free()
	var out *C.char
	var cerr *C.tfjob_error
	if rc := C.tfjob_local_report(&out, cs.of(runDir, true), C.int64_t(tail), &cerr); rc != 0 {
		return nil, takeError(rc, cerr)
	}
	var r LocalReport
	if err := json.Unmarshal([]byte(takeString(out)), &r); err != nil {
		return nil, err
	}
	return &r, nil
}

// NewRunDir makes a fresh run directory as tfjobctl run does: dir and its parents (ErrAlreadyExists
// when it already holds a run), or, for "", a new ./tfjob-runs/NAME-YYYYMMDD-HHMMSS (else under
// $TMPDIR/tfjob-runs). It returns the absolute path.
func NewRunDir(dir, name string) (string, error) {
	if err := noNUL(dir, name); err != nil {
		return "", err
	}
	var cs cstrings
	defer cs.free()
	var out *C.char
	var cerr *C.tfjob_error
	if rc := C.tfjob_local_run_dir(&out, cs.of(dir, false), cs.of(name, false), &cerr); rc != 0 {
		return "", takeError(rc, cerr)
	}
	return takeString(out), nil
}

// LocalResult is what a local run left: the outcome, the TFJob with its status, the Pods and the
// events (read back from the run directory), and the report of what happened to each replica.
type LocalResult struct {
	Outcome LocalOutcome
	RunDir  string
	Job     Object
	Pods    []Object
	Events  []Object
	Report  *LocalReport
}

// Log returns a replica's output ("NAME-worker-0" or "worker-0").
func (r *LocalResult) Log(pod string) (string, error) {
	path := filepath.Join(r.RunDir, pod+".log")
	if _, err := os.Stat(path); err != nil {
		meta, _ := r.Job["metadata"].(map[string]any)
		name, _ := meta["name"].(string)
		path = filepath.Join(r.RunDir, name+"-"+pod+".log")
	}
	data, err := os.ReadFile(path)
	return string(data), err
}

// RunLocal runs a TFJob on this machine as `tfjobctl run` does and reads back its final state
// and report (with the last 20 lines of each failed replica's output). The run directory is
// fresh, as NewRunDir makes it: o.RunDir with its parents (refused when it already holds a run),
// or for "" a new one under ./tfjob-runs. Relative paths resolve against o.BaseDir.
func RunLocal(ctx context.Context, job *Job, o LocalOptions, ro LocalRunOptions) (*LocalResult, error) {
	if job == nil || job.h == nil {
		return nil, ErrClosed
	}
	name := job.Name()
	if name == "" {
		name = goString(C.tfjob_job_generate_name(job.h))
	}
	dir, err := NewRunDir(o.RunDir, name)
	if err != nil {
		return nil, err
	}
	o.RunDir = dir
	e, err := NewLocalEngine(o)
	if err != nil {
		return nil, err
	}
	outcome, runErr := e.Run(ctx, job, ro)
	closeErr := e.Close()
	if err := errors.Join(runErr, closeErr); err != nil {
		return nil, err
	}
	r := &LocalResult{Outcome: outcome, RunDir: o.RunDir}
	if r.Report, err = ReadLocalReport(o.RunDir, -1); err != nil {
		return nil, err
	}
	read := func(name string, v any) error {
		data, err := os.ReadFile(filepath.Join(o.RunDir, name))
		if err != nil {
			return err
		}
		return json.Unmarshal(data, v)
	}
	var pods struct {
		Items []Object `json:"items"`
	}
	if err := errors.Join(read("job.json", &r.Job), read("pods.json", &pods), read("events.json", &r.Events)); err != nil {
		return nil, err
	}
	r.Pods = pods.Items
	return r, nil
}
