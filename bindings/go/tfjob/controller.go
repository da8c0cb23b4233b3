package tfjob

/*
#include "cgo_glue.h"

extern void goLog(int level, char *message, char *fields_json, uintptr_t handle);
extern int goBeforeReconcile(char *ns, char *name, uintptr_t handle);
extern void goAfterReconcile(char *ns, char *name, int result, uintptr_t handle);
extern int goMutatePod(char **out, char *pod_json, char *job_json, uintptr_t handle);

// Hooks of this thread running now: Stop and Close from inside one would wait for the worker
// thread that runs it, which is this thread.
static __thread int hooks_running;

static int in_controller_hook(void)
{
	return hooks_running > 0;
}

static int64_t controller_clock_cb(void *payload)
{
	hooks_running++;
	int64_t now = go_clock_cb(payload);
	hooks_running--;
	return now;
}

TFJOB_GO_SETTER(set_controller_clock, tfjob_controller_options, clock, controller_clock_cb, clock_payload)

static void log_cb(tfjob_log_level level, const char *message, const char *fields_json, void *payload)
{
	hooks_running++;
	goLog((int)level, (char *)message, (char *)fields_json, (uintptr_t)payload);
	hooks_running--;
}

static int before_cb(const char *ns, const char *name, void *payload)
{
	hooks_running++;
	int rc = goBeforeReconcile((char *)ns, (char *)name, (uintptr_t)payload);
	hooks_running--;
	return rc;
}

static void after_cb(const char *ns, const char *name, int result, void *payload)
{
	hooks_running++;
	goAfterReconcile((char *)ns, (char *)name, result, (uintptr_t)payload);
	hooks_running--;
}

static int mutate_cb(char **out, const char *pod_json, const char *job_json, void *payload)
{
	hooks_running++;
	int rc = goMutatePod(out, (char *)pod_json, (char *)job_json, (uintptr_t)payload);
	hooks_running--;
	return rc;
}

// The hooks live on the C stack of this call (tfjob_controller_new copies them).
static int new_controller(tfjob_controller **out, tfjob_transport *t, tfjob_controller_options *o, int log_level,
                          int has_log, int has_before, int has_after, int has_mutate, uintptr_t handle,
                          tfjob_error **err)
{
	tfjob_controller_hooks hooks = TFJOB_CONTROLLER_HOOKS_INIT;
	hooks.log = has_log ? log_cb : NULL;
	hooks.log_level = (tfjob_log_level)log_level;
	hooks.before_reconcile = has_before ? before_cb : NULL;
	hooks.after_reconcile = has_after ? after_cb : NULL;
	hooks.mutate_pod = has_mutate ? mutate_cb : NULL;
	hooks.payload = (void *)handle;
	o->hooks = &hooks;
	int rc = tfjob_controller_new(out, t, o, err);
	o->hooks = NULL;
	return rc;
}
*/
import "C"

import (
	"context"
	"encoding/json"
	"errors"
	"runtime"
	"runtime/cgo"
	"runtime/debug"
	"sync"
	"time"
)

// LogLevel is the level of a controller log record.
type LogLevel int

// Log levels. The zero LogLevel is LogInfo, the default of ControllerOptions.LogLevel (as of
// the C hooks' initialiser), so that an option left out means the default, not debug.
const (
	LogDebug LogLevel = iota - 1
	LogInfo
	LogWarn
	LogError
)

// cLevel is the C library's level of l.
func (l LogLevel) cLevel() C.int { return C.int(int(l-LogDebug) + C.TFJOB_LOG_DEBUG) }

// logLevelOf is the LogLevel of a C library level.
func logLevelOf(level C.int) LogLevel { return LogDebug + LogLevel(int(level)-C.TFJOB_LOG_DEBUG) }

func (l LogLevel) String() string {
	switch l {
	case LogDebug:
		return "debug"
	case LogInfo:
		return "info"
	case LogWarn:
		return "warn"
	case LogError:
		return "error"
	}
	return "unknown"
}

// GangScheduler selects gang scheduling of a job's pods.
type GangScheduler int

// Gang schedulers.
const (
	GangNone             GangScheduler = C.TFJOB_GANG_NONE
	GangVolcano          GangScheduler = C.TFJOB_GANG_VOLCANO
	GangSchedulerPlugins GangScheduler = C.TFJOB_GANG_SCHEDULER_PLUGINS
)

// ControllerOptions configure a controller; zero values mean training-operator's defaults.
// The hooks run on the controller's threads (several at once when Workers > 1; AfterReconcile
// may run on a status writer's thread, once the job's status is written); a panic
// in one is recovered (it never unwinds into C): the hook counts as failed (BeforeReconcile
// skips the job, MutatePod fails that pod's creation, Clock falls back to the system clock),
// and the panic comes back as a *PanicError from Run, Stop or Close.
type ControllerOptions struct {
	Namespace               string // "": all namespaces
	Workers                 int    // worker threads (--threadiness); 0: 1
	StatusWriters           int    // status writes in flight off the workers; 0: 4; negative: none (the workers write)
	Compat                  Compat
	ClusterDomain           string
	GangScheduler           GangScheduler
	SchedulerName           string
	QueueQPS                float64
	QueueBurst              int
	BackoffBase             time.Duration
	BackoffMax              time.Duration
	ExpectationsTimeout     time.Duration
	LeaderElection          bool
	LeaderElectionID        string
	LeaderElectionNamespace string
	Identity                string
	LeaseDuration           time.Duration
	RenewDeadline           time.Duration
	RetryPeriod             time.Duration
	NoEvents                bool
	Clock                   func() time.Time // the planner's wall clock; nil: the system clock

	Log             func(level LogLevel, message string, fields map[string]any)
	LogLevel        LogLevel                              // the least level passed to Log (zero value: LogInfo)
	BeforeReconcile func(ns, name string) bool            // false skips the job this time
	AfterReconcile  func(ns, name string, err error)      // err: nil or the attempt's error
	MutatePod       func(pod, job Object) (Object, error) // nil Object: keep the pod as it is
}

// hookState is what the C hooks reach through a cgo.Handle; it refers to no Controller.
type hookState struct {
	o    ControllerOptions
	mu   sync.Mutex
	errs []error
	fail chan struct{} // closed at the first recorded error
	once sync.Once
}

func (s *hookState) record(err error) {
	s.mu.Lock()
	s.errs = append(s.errs, err)
	s.mu.Unlock()
	s.once.Do(func() { close(s.fail) })
}

func (s *hookState) take() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	err := errors.Join(s.errs...)
	s.errs = nil
	return err
}

func (s *hookState) recoverAs(name string) {
	if r := recover(); r != nil {
		s.record(&PanicError{Callback: name, Value: r, Stack: debug.Stack()})
	}
}

func hooks(h C.uintptr_t) *hookState { return cgo.Handle(h).Value().(*hookState) }

//export goLog
func goLog(level C.int, message, fields *C.char, h C.uintptr_t) {
	s := hooks(h)
	defer s.recoverAs("log")
	var f map[string]any
	if fields != nil {
		_ = json.Unmarshal([]byte(C.GoString(fields)), &f)
	}
	s.o.Log(logLevelOf(level), C.GoString(message), f)
}

//export goBeforeReconcile
func goBeforeReconcile(ns, name *C.char, h C.uintptr_t) (rc C.int) {
	s := hooks(h)
	rc = 1 // skipped unless the hook says otherwise (and when it panics)
	defer s.recoverAs("before_reconcile")
	if s.o.BeforeReconcile(C.GoString(ns), C.GoString(name)) {
		rc = 0
	}
	return rc
}

//export goAfterReconcile
func goAfterReconcile(ns, name *C.char, result C.int, h C.uintptr_t) {
	s := hooks(h)
	defer s.recoverAs("after_reconcile")
	var err error
	if result != 0 {
		err = convertError(result, nil)
	}
	s.o.AfterReconcile(C.GoString(ns), C.GoString(name), err)
}

//export goMutatePod
func goMutatePod(out **C.char, pod, job *C.char, h C.uintptr_t) (rc C.int) {
	s := hooks(h)
	rc = C.TFJOB_ERROR // the creation fails when the hook panics
	defer s.recoverAs("mutate_pod")
	var p, j Object
	if err := json.Unmarshal([]byte(C.GoString(pod)), &p); err != nil {
		s.record(err)
		return rc
	}
	if err := json.Unmarshal([]byte(C.GoString(job)), &j); err != nil {
		s.record(err)
		return rc
	}
	np, err := s.o.MutatePod(p, j)
	if err != nil {
		s.record(err)
		return rc
	}
	if np != nil {
		data, err := json.Marshal(np)
		if err != nil {
			s.record(err)
			return rc
		}
		*out = C.CString(string(data)) // malloc'd: the library frees it
	}
	return 0
}

// controllerInner owns the C controller and the callback handles; it refers to no Backend or
// Controller.
type controllerInner struct {
	mu          sync.RWMutex // read: calls; write: the free
	h           *C.tfjob_controller
	hookHandle  cgo.Handle
	clock       *clockState
	clockHandle cgo.Handle
	hooks       *hookState
}

func (c *controllerInner) closeDependent() {
	// Stop first (it waits for the hooks, which may still call methods), then free.
	c.mu.RLock()
	if c.h != nil {
		C.tfjob_controller_stop(c.h)
	}
	c.mu.RUnlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.h != nil {
		C.tfjob_controller_free(c.h)
		c.h = nil
		c.hookHandle.Delete()
		if c.clockHandle != 0 {
			c.clockHandle.Delete()
		}
		running.Delete(c)
	}
}

// running keeps started controllers reachable: a running controller is not stopped by the GC.
var running sync.Map

// Controller reconciles TFJobs on a backend as training-operator does: caches fed by
// list+watch, a rate-limited work queue, expectations, the planner's plans, Events, status
// writes (controller.h). Run(ctx) is the usual way to drive it; Start/Stop/Close otherwise.
// Its methods may be called from any goroutine, except Stop and Close from its own hooks.
type Controller struct {
	inner *controllerInner
	b     *Backend // the transport must outlive the controller
}

// NewController makes a controller on a backend; nothing runs until Start or Run.
func NewController(b *Backend, o ControllerOptions) (*Controller, error) {
	if err := noNUL(o.Namespace, o.ClusterDomain, o.SchedulerName, o.LeaderElectionID, o.LeaderElectionNamespace, o.Identity); err != nil {
		return nil, err
	}
	var cs cstrings
	defer cs.free()
	var opts C.tfjob_controller_options
	C.tfjob_controller_options_init(&opts, C.TFJOB_CONTROLLER_OPTIONS_VERSION)
	opts.namespace_name = cs.of(o.Namespace, false)
	opts.workers = C.int(o.Workers)
	opts.status_writers = C.int(o.StatusWriters)
	opts.compat = C.tfjob_compat(o.Compat)
	opts.cluster_domain = cs.of(o.ClusterDomain, false)
	opts.gang_scheduler = C.tfjob_gang_scheduler(o.GangScheduler)
	opts.scheduler_name = cs.of(o.SchedulerName, false)
	opts.queue_qps = C.double(o.QueueQPS)
	opts.queue_burst = C.int(o.QueueBurst)
	opts.backoff_base_ms = C.int64_t(o.BackoffBase.Milliseconds())
	opts.backoff_max_ms = C.int64_t(o.BackoffMax.Milliseconds())
	opts.expectations_timeout_ms = C.int64_t(o.ExpectationsTimeout.Milliseconds())
	if o.LeaderElection {
		opts.leader_election = 1
	}
	opts.leader_election_id = cs.of(o.LeaderElectionID, false)
	opts.leader_election_namespace = cs.of(o.LeaderElectionNamespace, false)
	opts.identity = cs.of(o.Identity, false)
	opts.lease_duration_ms = C.int64_t(o.LeaseDuration.Milliseconds())
	opts.renew_deadline_ms = C.int64_t(o.RenewDeadline.Milliseconds())
	opts.retry_period_ms = C.int64_t(o.RetryPeriod.Milliseconds())
	if o.NoEvents {
		opts.no_events = 1
	}
	inner := &controllerInner{hooks: &hookState{o: o, fail: make(chan struct{})}}
	inner.hookHandle = cgo.NewHandle(inner.hooks)
	if o.Clock != nil {
		inner.clock = &clockState{fn: o.Clock}
		inner.clockHandle = cgo.NewHandle(inner.clock)
		C.set_controller_clock(&opts, C.uintptr_t(inner.clockHandle))
	}
	flag := func(ok bool) C.int {
		if ok {
			return 1
		}
		return 0
	}
	release := func() {
		inner.hookHandle.Delete()
		if inner.clockHandle != 0 {
			inner.clockHandle.Delete()
		}
	}
	if err := b.addDependent(inner); err != nil {
		release()
		return nil, err
	}
	err := b.call(func(h *C.tfjob_transport) error {
		var cerr *C.tfjob_error
		rc := C.new_controller(&inner.h, h, &opts, o.LogLevel.cLevel(), flag(o.Log != nil), flag(o.BeforeReconcile != nil),
			flag(o.AfterReconcile != nil), flag(o.MutatePod != nil), C.uintptr_t(inner.hookHandle), &cerr)
		if rc != 0 {
			return takeError(rc, cerr)
		}
		return nil
	})
	if err != nil {
		b.removeDependent(inner)
		release()
		return nil, err
	}
	c := &Controller{inner: inner, b: b}
	runtime.SetFinalizer(c, (*Controller).Close)
	return c, nil
}

// with runs fn with the C handle (ErrClosed after Close).
func (c *Controller) with(fn func(h *C.tfjob_controller) error) error {
	c.inner.mu.RLock()
	defer c.inner.mu.RUnlock()
	if c.inner.h == nil {
		return ErrClosed
	}
	err := fn(c.inner.h)
	runtime.KeepAlive(c)
	return err
}

// hookErrors returns (and forgets) what the hooks and the clock reported.
func (c *Controller) hookErrors() error {
	var clockErr error
	if c.inner.clock != nil {
		clockErr = c.inner.clock.takeErr()
	}
	return errors.Join(c.inner.hooks.take(), clockErr)
}

// Start lists TFJobs, Pods and Services into the caches, starts the watches and the workers,
// and returns (without leader election, errors of the first lists are returned).
func (c *Controller) Start() error {
	err := c.with(func(h *C.tfjob_controller) error {
		var cerr *C.tfjob_error
		if rc := C.tfjob_controller_start(h, &cerr); rc != 0 {
			return takeError(rc, cerr)
		}
		return nil
	})
	if err == nil {
		running.Store(c.inner, c)
	}
	return err
}

// ErrInHook is returned by Stop and Close called from one of the controller's own hooks (Log,
// BeforeReconcile, AfterReconcile, MutatePod, Clock): they wait for the worker threads, one of
// which is running that hook. Cancel Run's context instead, or stop from another goroutine.
var ErrInHook = &Error{Code: CodeState, Message: "Stop and Close cannot be called from the controller's own hooks " +
	"(they wait for the worker that runs the hook): cancel Run's context or stop from another goroutine"}

// inHook tells whether the calling goroutine runs inside one of the controller's hooks: a hook
// is a cgo callback, so its goroutine stays on the C worker thread until it returns.
func inHook() bool {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	return C.in_controller_hook() != 0
}

// Stop stops gracefully (in-flight reconciles finish, the Lease is released) and returns the
// hooks' panics and errors, if any. Idempotent. From a hook it returns ErrInHook and does
// nothing.
func (c *Controller) Stop() error {
	if inHook() {
		return ErrInHook
	}
	_ = c.with(func(h *C.tfjob_controller) error {
		C.tfjob_controller_stop(h)
		return nil
	})
	running.Delete(c.inner)
	return c.hookErrors()
}

// Close stops (when running) and releases the controller; it returns what Stop returns.
func (c *Controller) Close() error {
	if inHook() {
		return ErrInHook
	}
	c.inner.closeDependent()
	c.b.removeDependent(c.inner)
	runtime.SetFinalizer(c, nil)
	return c.hookErrors()
}

// ErrLeadershipLost is returned by Run when the controller stopped because it lost the Lease.
var ErrLeadershipLost = errors.New("tfjob: leadership lost")

// Run starts the controller and runs it until ctx is done (then it stops gracefully and
// returns nil), it loses leadership (ErrLeadershipLost), or a hook panics or fails (that
// error). It stops the controller before returning; Close it afterwards.
func (c *Controller) Run(ctx context.Context) error {
	if err := c.Start(); err != nil {
		return err
	}
	lost := make(chan struct{})
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			var rc C.int
			if c.with(func(h *C.tfjob_controller) error {
				rc = C.tfjob_controller_wait_stopped(h, 200)
				return nil
			}) != nil || rc == 0 {
				close(lost)
				return
			}
		}
	}()
	var result error
	select {
	case <-ctx.Done():
	case <-lost:
		result = ErrLeadershipLost
	case <-c.inner.hooks.fail:
	}
	return errors.Join(result, c.Stop())
}

// WaitIdle waits until nothing is queued or being reconciled and the caches are synced (nil),
// or timeout passes (ErrTimeout; negative: no limit). Meant for tests. It also returns the
// hooks' errors.
func (c *Controller) WaitIdle(timeout time.Duration) error {
	ms := timeout.Milliseconds()
	if timeout < 0 {
		ms = -1
	}
	err := c.with(func(h *C.tfjob_controller) error {
		if rc := C.tfjob_controller_wait_idle(h, C.int64_t(ms)); rc != 0 {
			return convertError(rc, nil)
		}
		return nil
	})
	return errors.Join(c.hookErrors(), err)
}

// Enqueue queues the job ns/name for a reconcile now (e.g. after moving a test clock).
func (c *Controller) Enqueue(ns, name string) error {
	if err := noNUL(ns, name); err != nil {
		return err
	}
	var cs cstrings
	defer cs.free()
	return c.with(func(h *C.tfjob_controller) error {
		if rc := C.tfjob_controller_enqueue(h, cs.of(ns, true), cs.of(name, true)); rc != 0 {
			return convertError(rc, nil)
		}
		return nil
	})
}

// IsLeader reports whether the controller holds the Lease (always, when running without
// leader election).
func (c *Controller) IsLeader() bool {
	var ok bool
	_ = c.with(func(h *C.tfjob_controller) error { ok = C.tfjob_controller_is_leader(h) != 0; return nil })
	return ok
}

// IsReady reports whether the controller is started and every cache listed (/readyz).
func (c *Controller) IsReady() bool {
	var ok bool
	_ = c.with(func(h *C.tfjob_controller) error { ok = C.tfjob_controller_is_ready(h) != 0; return nil })
	return ok
}

// ControllerMetrics are a controller's counters.
type ControllerMetrics struct {
	JobsCreated, JobsSucceeded, JobsFailed, JobsRestarted, JobsDeleted uint64
	Reconciles, ReconcileErrors                                        uint64
	ReconcileLatency                                                   []LatencyBucket
	ReconcileLatencySum                                                time.Duration
	QueueDepth, QueueAdds, QueueRetries                                uint64
	APICalls                                                           map[string]uint64 // "get", "list", "create", ...
	APIErrors, StatusConflicts, Relists                                uint64
	IsLeader                                                           bool
	LeaderTransitions                                                  uint64
}

// LatencyBucket is one bucket of the reconcile latency histogram (not cumulative).
type LatencyBucket struct {
	UpperBound float64 // seconds; +Inf for the last
	Count      uint64
}

// Metrics reads the counters.
func (c *Controller) Metrics() (ControllerMetrics, error) {
	var m C.tfjob_controller_metrics
	m.version = C.TFJOB_CONTROLLER_METRICS_VERSION
	err := c.with(func(h *C.tfjob_controller) error {
		if rc := C.tfjob_controller_metrics_get(&m, h); rc != 0 {
			return convertError(rc, nil)
		}
		return nil
	})
	if err != nil {
		return ControllerMetrics{}, err
	}
	out := ControllerMetrics{
		JobsCreated: uint64(m.jobs_created), JobsSucceeded: uint64(m.jobs_succeeded), JobsFailed: uint64(m.jobs_failed),
		JobsRestarted: uint64(m.jobs_restarted), JobsDeleted: uint64(m.jobs_deleted), Reconciles: uint64(m.reconciles),
		ReconcileErrors:     uint64(m.reconcile_errors),
		ReconcileLatencySum: time.Duration(float64(m.reconcile_latency_sum) * float64(time.Second)),
		QueueDepth:          uint64(m.queue_depth), QueueAdds: uint64(m.queue_adds), QueueRetries: uint64(m.queue_retries),
		APICalls:  map[string]uint64{},
		APIErrors: uint64(m.api_errors), StatusConflicts: uint64(m.status_conflicts), Relists: uint64(m.relists),
		IsLeader: m.is_leader != 0, LeaderTransitions: uint64(m.leader_transitions),
	}
	for i := 0; i < C.TFJOB_CONTROLLER_LATENCY_BUCKETS; i++ {
		out.ReconcileLatency = append(out.ReconcileLatency, LatencyBucket{
			UpperBound: float64(C.tfjob_controller_latency_bucket_bound(C.size_t(i))),
			Count:      uint64(m.reconcile_latency[i])})
	}
	for v := 0; v < C.TFJOB_API_VERB_COUNT; v++ {
		out.APICalls[C.GoString(C.tfjob_api_verb_name(C.tfjob_api_verb(v)))] = uint64(m.api_calls[v])
	}
	return out, nil
}

// MetricsText is the counters in Prometheus text format (what /metrics serves).
func (c *Controller) MetricsText() (string, error) {
	var out *C.char
	err := c.with(func(h *C.tfjob_controller) error {
		var cerr *C.tfjob_error
		if rc := C.tfjob_controller_metrics_text(&out, h, &cerr); rc != 0 {
			return takeError(rc, cerr)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return takeString(out), nil
}
