package tfjob

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestLookupResource(t *testing.T) {
	if r, ok := LookupResource("TFJob"); !ok || r != TFJobs {
		t.Fatalf("TFJob: %v %v", r, ok)
	}
	if r, ok := LookupResource("svc"); !ok || r != Services {
		t.Fatalf("svc: %v", r)
	}
	if _, ok := LookupResource("deployments"); ok {
		t.Fatal("deployments found")
	}
}

func TestMemoryVerbs(t *testing.T) {
	m := newMemory(t, MemoryOptions{Seed: 3})
	if m.Namespace() != "default" {
		t.Fatalf("namespace %q", m.Namespace())
	}
	created, err := m.CreateTFJob("", testJob("a", map[string]int{"Worker": 2}, "", nil))
	if err != nil {
		t.Fatal(err)
	}
	meta := created["metadata"].(map[string]any)
	if meta["uid"] == "" || meta["resourceVersion"] == "" {
		t.Fatalf("not stored: %v", meta)
	}
	if rv := m.ResourceVersion(); strconv.FormatUint(rv, 10) != meta["resourceVersion"] {
		t.Fatalf("resource version %d, stored %v", rv, meta["resourceVersion"])
	}
	j, _ := Parse([]byte(simple), "")
	defer j.Close()
	if _, err := m.Create(TFJobs, "default", j); !errors.Is(err, ErrInvalidArgument) { // namespace mismatch: 400
		t.Fatalf("namespace mismatch: %v", err)
	}
	if _, err := m.Create(TFJobs, "", j); err != nil { // a *Job is accepted; its own namespace (ml)
		t.Fatal(err)
	}
	if _, err := m.CreateTFJob("default", "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: c}\n"+
		"spec: {tfReplicaSpecs: {Worker: {template: {spec: {containers: [{name: tensorflow, image: x}]}}}}}"); err != nil {
		t.Fatal(err)
	}
	all, err := m.ListAll(TFJobs, NamespaceAll, ListOptions{}, 1)
	if err != nil || strings.Join(names(all), ",") != "a,c,mnist" {
		t.Fatalf("list: %v %v", names(all), err)
	}
	page, err := m.List(TFJobs, NamespaceAll, ListOptions{Limit: 1})
	if err != nil || len(page.Items) != 1 || page.Continue == "" || page.ResourceVersion == "" {
		t.Fatalf("page: %+v %v", page, err)
	}
	got, err := m.Get(TFJobs, "default", "a")
	if err != nil {
		t.Fatal(err)
	}
	got["metadata"].(map[string]any)["labels"] = map[string]any{"team": "x"}
	if _, err := m.Update(TFJobs, "", got); err != nil {
		t.Fatal(err)
	}
	sel, _ := m.List(TFJobs, "", ListOptions{LabelSelector: "team=x"})
	if strings.Join(names(sel.Items), ",") != "a" {
		t.Fatalf("selector: %v", names(sel.Items))
	}
	p, err := m.Patch(TFJobs, "", "a", "status", map[string]any{"status": map[string]any{
		"conditions": []any{map[string]any{"type": "Succeeded", "status": "True"}}}})
	if err != nil || !HasCondition(p, "Succeeded") || HasCondition(p, "Failed") {
		t.Fatalf("patch status: %v %v", p["status"], err)
	}
	ev, err := m.CreateEvent("", p, "Normal", "Tested", "a test event", "")
	if err != nil || ev["reason"] != "Tested" {
		t.Fatalf("event: %v %v", ev, err)
	}
	if _, err := m.Delete(TFJobs, "", "c", DeleteOptions{Propagation: PropagationForeground}); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Get(TFJobs, "", "c"); !IsNotFound(err) {
		t.Fatalf("after delete: %v", err)
	}
	if _, err := m.Create(Pods, "", []byte(`{"apiVersion":"v1","kind":"Pod","metadata":{"generateName":"p-"}}`)); err != nil {
		t.Fatal(err)
	}
}

func TestAPIErrors(t *testing.T) {
	m := newMemory(t, MemoryOptions{})
	if _, err := m.CreateTFJob("", testJob("a", map[string]int{"Worker": 1}, "", nil)); err != nil {
		t.Fatal(err)
	}
	_, err := m.Get(TFJobs, "", "missing")
	var api *APIError
	if !errors.As(err, &api) || !errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict) {
		t.Fatalf("not found: %#v", err)
	}
	if api.HTTPStatus != 404 || api.Reason != "NotFound" || api.Message != `tfjobs.kubeflow.org "missing" not found` ||
		api.Details == nil || api.Details.Name != "missing" {
		t.Fatalf("not found: %+v", api)
	}
	if !strings.Contains(err.Error(), "HTTP 404") {
		t.Fatalf("message: %v", err)
	}

	_, err = m.CreateTFJob("", testJob("a", map[string]int{"Worker": 1}, "", nil))
	if !errors.As(err, &api) || !IsAlreadyExists(err) || IsConflict(err) || api.HTTPStatus != 409 ||
		api.Reason != "AlreadyExists" || api.Message != `tfjobs.kubeflow.org "a" already exists` {
		t.Fatalf("already exists: %v", err)
	}

	stale, _ := m.Get(TFJobs, "", "a")
	if _, err := m.Patch(TFJobs, "", "a", "", `{"metadata":{"labels":{"x":"1"}}}`); err != nil {
		t.Fatal(err)
	}
	_, err = m.Update(TFJobs, "", stale)
	if !errors.As(err, &api) || !IsConflict(err) || api.HTTPStatus != 409 || api.Reason != "Conflict" ||
		!strings.Contains(api.Message, "the object has been modified") {
		t.Fatalf("conflict: %v", err)
	}
	_, err = m.Delete(TFJobs, "", "a", DeleteOptions{PreconditionUID: "nope"})
	if !IsConflict(err) {
		t.Fatalf("precondition: %v", err)
	}
	delete(stale["metadata"].(map[string]any), "resourceVersion")
	_, err = m.Update(TFJobs, "", stale)
	if !errors.As(err, &api) || !errors.Is(err, ErrInvalid) || api.HTTPStatus != 422 || api.Reason != "Invalid" {
		t.Fatalf("invalid: %v", err)
	}
	if _, err := m.Create(TFJobs, "", nil); err == nil {
		t.Fatal("nil object accepted")
	}
}

func TestWatchEventsAndStop(t *testing.T) {
	m := newMemory(t, MemoryOptions{})
	if _, err := m.Create(Pods, "", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"before"}}`); err != nil {
		t.Fatal(err)
	}
	w, err := m.Watch(Pods, "default", WatchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	next := func() WatchEvent {
		select {
		case ev := <-w.ResultChan():
			return ev
		case <-time.After(5 * time.Second):
			t.Fatal("no event")
		}
		return WatchEvent{}
	}
	if ev := next(); ev.Type != Added || names([]Object{ev.Object})[0] != "before" {
		t.Fatalf("synthetic added: %v", ev)
	}
	m.Create(Pods, "", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}`)
	m.Patch(Pods, "", "p", "", `{"metadata":{"labels":{"a":"b"}}}`)
	m.Delete(Pods, "", "p", DeleteOptions{})
	var got []string
	for i := 0; i < 3; i++ {
		ev := next()
		got = append(got, string(ev.Type)+":"+names([]Object{ev.Object})[0])
	}
	if strings.Join(got, " ") != "ADDED:p MODIFIED:p DELETED:p" {
		t.Fatalf("events: %v", got)
	}
	w.Stop()
	select {
	case <-w.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("watch did not stop")
	}
	for range w.ResultChan() {
	}
	if w.Err() != nil {
		t.Fatalf("stopped watch error: %v", w.Err())
	}
}

func TestWatchGoneAfterCompaction(t *testing.T) {
	m := newMemory(t, MemoryOptions{})
	m.CreateTFJob("", testJob("a", map[string]int{"Worker": 1}, "", nil))
	old := m.ResourceVersion()
	m.CreateTFJob("", testJob("b", map[string]int{"Worker": 1}, "", nil))
	if err := m.Compact(); err != nil {
		t.Fatal(err)
	}
	w, err := m.Watch(TFJobs, "", WatchOptions{ResourceVersion: strconv.FormatUint(old, 10), NoReconnect: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	for range w.ResultChan() {
	}
	var api *APIError
	if err := w.Err(); !errors.Is(err, ErrGone) || !errors.As(err, &api) || api.HTTPStatus != 410 || api.Reason != "Expired" {
		t.Fatalf("gone: %v", err)
	}
}

func mustJSON(v any) []byte { b, _ := json.Marshal(v); return b }

func TestUnreadWatchDoesNotBlockClose(t *testing.T) {
	m := newMemory(t, MemoryOptions{})
	w, err := m.Watch(Pods, "", WatchOptions{Buffer: 1})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 5; i++ { // more events than the buffer: the watch thread blocks sending
		m.Create(Pods, "", map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p" + strconv.Itoa(i)}})
	}
	done := make(chan struct{})
	go func() { w.Close(); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Close blocked on an unread watch")
	}
}

func TestBackendCloseClosesWatchesAndGC(t *testing.T) {
	m, err := NewMemoryBackend(MemoryOptions{})
	if err != nil {
		t.Fatal(err)
	}
	w, _ := m.Watch(Pods, "", WatchOptions{})
	m.Close()
	select {
	case <-w.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("watch still running after the backend was closed")
	}
	if _, err := m.Get(Pods, "", "x"); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed backend: %v", err)
	}
	m.Close()
	w.Close()
	// Dropped backends and watches are released by their finalizers.
	for i := 0; i < 50; i++ {
		b, _ := NewMemoryBackend(MemoryOptions{})
		b.Watch(Pods, "", WatchOptions{})
		b.Create(Pods, "", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}`)
	}
	runtime.GC()
	runtime.GC()
}

func TestMemoryClockPanicIsRecovered(t *testing.T) {
	calls := 0
	m, err := NewMemoryBackend(MemoryOptions{Clock: func() time.Time {
		calls++
		if calls > 1 {
			panic("clock broke")
		}
		return time.Unix(1700000000, 0)
	}})
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Create(Pods, "", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"}}`)
	if err != nil || p["metadata"].(map[string]any)["creationTimestamp"] != "2023-11-14T22:13:20Z" {
		t.Fatalf("clock: %v %v", p, err)
	}
	if _, err := m.Create(Pods, "", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"q"}}`); err != nil {
		t.Fatal(err) // the system clock took over
	}
	var pe *PanicError
	if err := m.Close(); !errors.As(err, &pe) || pe.Callback != "clock" || pe.Value != "clock broke" {
		t.Fatalf("close: %v", err)
	}
}

func TestKubeBackendConfigErrors(t *testing.T) {
	dir := t.TempDir()
	_, err := NewKubeBackendFromKubeconfig(filepath.Join(dir, "missing"), "")
	if err == nil {
		t.Fatal("missing kubeconfig accepted")
	}
	cfg := filepath.Join(dir, "config")
	os.WriteFile(cfg, mustJSON(map[string]any{
		"apiVersion": "v1", "kind": "Config", "current-context": "c",
		"clusters": []any{map[string]any{"name": "k", "cluster": map[string]any{"server": "https://127.0.0.1:1", "insecure-skip-tls-verify": true}}},
		"users":    []any{map[string]any{"name": "u", "user": map[string]any{"token": "secret-token"}}},
		"contexts": []any{map[string]any{"name": "c", "context": map[string]any{"cluster": "k", "user": "u", "namespace": "ml"}}},
	}), 0o600)
	if _, err := NewKubeBackendFromKubeconfig(cfg, "nope"); !IsNotFound(err) {
		t.Fatalf("unknown context: %v", err)
	}
	k, err := NewKubeBackend(KubeOptions{Source: KubeKubeconfig, Kubeconfig: cfg, MaxRetries: -1, ConnectTimeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	if k.Server() != "https://127.0.0.1:1" || k.Namespace() != "ml" {
		t.Fatalf("server %q namespace %q", k.Server(), k.Namespace())
	}
	_, err = k.Get(TFJobs, "", "x")
	var api *APIError
	if !errors.Is(err, ErrNetwork) || !errors.As(err, &api) || api.HTTPStatus != 0 || strings.Contains(err.Error(), "secret-token") {
		t.Fatalf("network: %v", err)
	}
}

func TestCloseWaitsForCallsInFlight(t *testing.T) {
	m, _ := NewMemoryBackend(MemoryOptions{})
	for i := 0; i < 20; i++ {
		m.Create(Pods, "", map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p" + strconv.Itoa(i)}})
	}
	type outcome struct {
		calls int
		err   error
	}
	results := make(chan outcome, 4)
	var running sync.WaitGroup // every goroutine has made a call: Close meets calls in flight
	running.Add(4)
	for g := 0; g < 4; g++ {
		go func() {
			n := 0
			for {
				if _, err := m.ListAll(Pods, "", ListOptions{}, 5); err != nil {
					if n == 0 {
						running.Done()
					}
					results <- outcome{n, err}
					return
				}
				n++
				if n == 1 {
					running.Done()
				}
			}
		}()
	}
	running.Wait()
	time.Sleep(10 * time.Millisecond)
	m.Close() // waits for the lists in flight; never frees under them
	for g := 0; g < 4; g++ {
		select {
		case r := <-results:
			if !errors.Is(r.err, ErrClosed) || r.calls == 0 {
				t.Fatalf("goroutine: %d calls, %v", r.calls, r.err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a caller never saw the backend closed")
		}
	}
}
