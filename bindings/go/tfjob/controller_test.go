package tfjob

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"
)

const now = 1700000000

func TestControllerJobSucceeds(t *testing.T) {
	m := newMemory(t, MemoryOptions{Seed: 1})
	var mu sync.Mutex
	var statuses []map[string]any
	jw, err := m.Watch(TFJobs, "default", WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		for ev := range jw.ResultChan() {
			if ev.Type == Modified {
				st, _ := ev.Object["status"].(map[string]any)
				mu.Lock()
				statuses = append(statuses, st)
				mu.Unlock()
			}
		}
	}()
	defer jw.Close()
	c, stop := runController(t, m.Backend, ControllerOptions{Workers: 2, Clock: func() time.Time { return time.Unix(now, 0) }})

	if _, err := m.CreateTFJob("", testJob("mnist", map[string]int{"PS": 1, "Worker": 2}, "", nil)); err != nil {
		t.Fatal(err)
	}
	want := "mnist-ps-0,mnist-worker-0,mnist-worker-1"
	eventually(t, 10*time.Second, "pods", func() bool { return strings.Join(children(t, m.Backend, Pods, "mnist"), ",") == want })
	eventually(t, 10*time.Second, "services", func() bool {
		return strings.Join(children(t, m.Backend, Services, "mnist"), ",") == want
	})
	for _, p := range strings.Split(want, ",") {
		setPod(t, m.Backend, "default", p, "Running", -1)
	}
	eventually(t, 10*time.Second, "Running", func() bool {
		j, err := m.Get(TFJobs, "", "mnist")
		return err == nil && HasCondition(j, "Running")
	})
	setPod(t, m.Backend, "default", "mnist-worker-0", "Succeeded", 0)
	setPod(t, m.Backend, "default", "mnist-worker-1", "Succeeded", 0)
	wctx, wcancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer wcancel()
	job, err := m.WaitForTFJob(wctx, "", "mnist")
	if err != nil {
		t.Fatal(err)
	}
	if !HasCondition(job, "Succeeded") || HasCondition(job, "Failed") || Condition(job, "Succeeded")["reason"] != "TFJobSucceeded" {
		t.Fatalf("conditions: %v", job["status"])
	}
	if st := job["status"].(map[string]any); st["startTime"] != "2023-11-14T22:13:20Z" {
		t.Fatalf("startTime from the controller's clock: %v", st["startTime"])
	}
	if err := c.WaitIdle(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	metrics, err := c.Metrics()
	if err != nil {
		t.Fatal(err)
	}
	if metrics.JobsCreated != 1 || metrics.JobsSucceeded != 1 || metrics.APICalls["create"] != 6 || !metrics.IsLeader {
		t.Fatalf("metrics: %+v", metrics)
	}
	var inBuckets uint64
	for _, b := range metrics.ReconcileLatency {
		inBuckets += b.Count
	}
	if inBuckets != metrics.Reconciles || len(metrics.ReconcileLatency) != 12 {
		t.Fatalf("latency buckets %d, reconciles %d", inBuckets, metrics.Reconciles)
	}
	// One status write per status change, none that changes nothing.
	seen := func() int {
		mu.Lock()
		defer mu.Unlock()
		return len(statuses)
	}
	writes := metrics.APICalls["update_status"]
	if !within(5*time.Second, func() bool { return uint64(seen()) == writes }) {
		t.Fatalf("%d status writes, %d status changes seen by the watch", writes, seen())
	}
	if text, err := c.MetricsText(); err != nil || !strings.Contains(text, "tfjob_controller_reconcile_total") {
		t.Fatalf("metrics text: %v", err)
	}
	if !c.IsReady() || !c.IsLeader() {
		t.Fatal("not ready or not leader")
	}
	stop()
	if c.IsReady() {
		t.Fatal("ready after Run returned")
	}
}

func TestControllerInvalidSpec(t *testing.T) {
	m := newMemory(t, MemoryOptions{})
	c, err := NewController(m.Backend, ControllerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); !errors.Is(err, ErrState) {
		t.Fatalf("second start: %v", err)
	}
	m.CreateTFJob("", testJob("bad", map[string]int{"Worker": 1}, "", map[string]any{"name": "tensorflow"}))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	job, err := m.WaitForTFJob(ctx, "default", "bad", "Failed")
	if err != nil {
		t.Fatal(err)
	}
	cond := Condition(job, "Failed")
	if cond["reason"] != "TFJobFailedValidation" || !strings.Contains(cond["message"].(string), "image") {
		t.Fatalf("condition: %v", cond)
	}
	if err := c.WaitIdle(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if len(children(t, m.Backend, Pods, "bad")) != 0 {
		t.Fatal("pods created for an invalid job")
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
}

func TestControllerHooks(t *testing.T) {
	m := newMemory(t, MemoryOptions{})
	var mu sync.Mutex
	var before, after []string
	var logs []string
	c, err := NewController(m.Backend, ControllerOptions{
		Workers:  2,
		LogLevel: LogInfo,
		Log: func(l LogLevel, msg string, fields map[string]any) {
			mu.Lock()
			logs = append(logs, l.String()+" "+msg)
			mu.Unlock()
		},
		BeforeReconcile: func(ns, name string) bool {
			mu.Lock()
			before = append(before, ns+"/"+name)
			mu.Unlock()
			return name != "skipped"
		},
		AfterReconcile: func(ns, name string, err error) {
			mu.Lock()
			after = append(after, ns+"/"+name)
			mu.Unlock()
		},
		MutatePod: func(pod, job Object) (Object, error) {
			meta := pod["metadata"].(map[string]any)
			labels, _ := meta["labels"].(map[string]any)
			labels["sidecar"] = job["metadata"].(map[string]any)["name"]
			return pod, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	m.CreateTFJob("", testJob("m", map[string]int{"Worker": 1}, "", nil))
	m.CreateTFJob("", testJob("skipped", map[string]int{"Worker": 1}, "", nil))
	eventually(t, 10*time.Second, "pod", func() bool { return len(children(t, m.Backend, Pods, "m")) == 1 })
	eventually(t, 10*time.Second, "the skipped job's before hook", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return strings.Contains(strings.Join(before, " "), "default/skipped")
	})
	if err := c.WaitIdle(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	pod, _ := m.Get(Pods, "", "m-worker-0")
	if pod["metadata"].(map[string]any)["labels"].(map[string]any)["sidecar"] != "m" {
		t.Fatalf("mutate: %v", pod["metadata"])
	}
	if len(children(t, m.Backend, Pods, "skipped")) != 0 {
		t.Fatal("skipped job reconciled")
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	joined := strings.Join(before, " ") + "|" + strings.Join(after, " ")
	if !strings.Contains(joined, "default/skipped") || strings.Contains(strings.Join(after, " "), "skipped") ||
		!strings.Contains(strings.Join(after, " "), "default/m") {
		t.Fatalf("before/after: %s", joined)
	}
	if !strings.Contains(strings.Join(logs, "\n"), "info controller running") {
		t.Fatalf("logs: %v", logs)
	}
}

func TestControllerHookPanicsAreRecovered(t *testing.T) {
	m := newMemory(t, MemoryOptions{})
	c, err := NewController(m.Backend, ControllerOptions{
		BackoffBase: 10 * time.Second,
		MutatePod: func(pod, job Object) (Object, error) {
			panic("no sidecar today")
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	m.CreateTFJob("", testJob("y", map[string]int{"Worker": 1}, "", nil))
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	err = c.Run(ctx) // returns at the first panic
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Callback != "mutate_pod" || pe.Value != "no sidecar today" || len(pe.Stack) == 0 {
		t.Fatalf("Run: %v", err)
	}
	if ctx.Err() != nil {
		t.Fatal("Run waited for the context instead of returning the panic")
	}
	events, _ := m.ListAll(Events, "", ListOptions{}, 0)
	found := false
	for _, e := range events {
		found = found || e["reason"] == "FailedCreatePod"
	}
	if !found || len(children(t, m.Backend, Pods, "y")) != 0 {
		t.Fatalf("the failed creation: events %v", events)
	}
}

// waitHookFailure waits until c has recorded a hook's error or panic.
func waitHookFailure(t *testing.T, c *Controller, what string) {
	t.Helper()
	eventually(t, 10*time.Second, what, func() bool {
		select {
		case <-c.inner.hooks.fail:
			return true
		default:
			return false
		}
	})
}

func TestControllerErrorFromMutateAndBeforePanic(t *testing.T) {
	m := newMemory(t, MemoryOptions{})
	boom := errors.New("mutation refused")
	c, err := NewController(m.Backend, ControllerOptions{
		BackoffBase:     10 * time.Second,
		BeforeReconcile: func(ns, name string) bool { return true },
		MutatePod:       func(pod, job Object) (Object, error) { return nil, boom },
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	m.CreateTFJob("", testJob("z", map[string]int{"Worker": 1}, "", nil))
	waitHookFailure(t, c, "hook error")
	if err := c.Close(); !errors.Is(err, boom) {
		t.Fatalf("Close: %v", err)
	}
	if err := c.Start(); !errors.Is(err, ErrClosed) {
		t.Fatalf("start after close: %v", err)
	}
	c2, _ := NewController(m.Backend, ControllerOptions{BeforeReconcile: func(ns, name string) bool { panic(errors.New("before")) }})
	c2.Start()
	m.CreateTFJob("", testJob("w", map[string]int{"Worker": 1}, "", nil))
	waitHookFailure(t, c2, "panic")
	err = c2.Stop()
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Callback != "before_reconcile" || pe.Unwrap().Error() != "before" {
		t.Fatalf("Stop: %v", err)
	}
	if len(children(t, m.Backend, Pods, "w")) != 0 {
		t.Fatal("a job whose before hook panicked was reconciled")
	}
}

func TestBackendCloseClosesControllers(t *testing.T) {
	m, _ := NewMemoryBackend(MemoryOptions{})
	c, err := NewController(m.Backend, ControllerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	m.Close()
	if c.IsReady() {
		t.Fatal("controller still running after its backend was closed")
	}
	if _, err := c.Metrics(); !errors.Is(err, ErrClosed) {
		t.Fatalf("metrics after close: %v", err)
	}
	if _, err := NewController(m.Backend, ControllerOptions{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("new controller on a closed backend: %v", err)
	}
}

// The zero LogLevel is the default, info: a controller given only Log gets no debug records.
func TestControllerZeroLogLevelIsInfo(t *testing.T) {
	if LogLevel(0) != LogInfo || LogInfo.String() != "info" {
		t.Fatalf("zero LogLevel: %v", LogLevel(0))
	}
	m := newMemory(t, MemoryOptions{})
	var mu sync.Mutex
	levels := map[LogLevel]int{}
	c, err := NewController(m.Backend, ControllerOptions{Log: func(l LogLevel, msg string, fields map[string]any) {
		mu.Lock()
		levels[l]++
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	m.CreateTFJob("", testJob("quiet", map[string]int{"Worker": 1}, "", nil))
	eventually(t, 10*time.Second, "pod", func() bool { return len(children(t, m.Backend, Pods, "quiet")) == 1 })
	if err := c.WaitIdle(10 * time.Second); err != nil {
		t.Fatal(err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if levels[LogInfo] == 0 || levels[LogDebug] != 0 {
		t.Fatalf("records by level with the zero LogLevel: %v (want info records and no debug ones)", levels)
	}
}

// Stop and Close from a hook would wait for the worker running it: they return ErrInHook at once.
func TestControllerStopFromHookIsAnError(t *testing.T) {
	m := newMemory(t, MemoryOptions{})
	var c *Controller
	results := make(chan [2]error, 1)
	var once sync.Once
	c, err := NewController(m.Backend, ControllerOptions{AfterReconcile: func(ns, name string, _ error) {
		once.Do(func() { results <- [2]error{c.Stop(), c.Close()} })
	}})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	m.CreateTFJob("", testJob("hooked", map[string]int{"Worker": 1}, "", nil))
	select {
	case errs := <-results:
		for _, e := range errs {
			if !errors.Is(e, ErrInHook) || !errors.Is(e, ErrState) {
				t.Fatalf("Stop/Close from a hook: %v", errs)
			}
		}
	case <-time.After(20 * time.Second):
		t.Fatal("Stop from a hook did not return (deadlock)")
	}
	if err := c.Stop(); err != nil { // from the test's goroutine it works
		t.Fatal(err)
	}
}
