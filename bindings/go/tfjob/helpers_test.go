package tfjob

import (
	"context"
	"errors"
	"testing"
	"time"
)

// testJob is a TFJob with the given replica counts per type.
func testJob(name string, replicas map[string]int, restartPolicy string, container map[string]any) Object {
	if restartPolicy == "" {
		restartPolicy = "Never"
	}
	if container == nil {
		container = map[string]any{"name": "tensorflow", "image": "tf:2"}
	}
	specs := map[string]any{}
	for typ, n := range replicas {
		specs[typ] = map[string]any{"replicas": n, "restartPolicy": restartPolicy,
			"template": map[string]any{"spec": map[string]any{"containers": []any{container}}}}
	}
	return Object{"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
		"metadata": map[string]any{"name": name, "namespace": "default"},
		"spec":     map[string]any{"runPolicy": map[string]any{"cleanPodPolicy": "None"}, "tfReplicaSpecs": specs}}
}

// setPod writes a pod's status as a kubelet would (tests/ctlutil.c cu_set_pod), retrying on
// conflicts.
func setPod(t *testing.T, b *Backend, ns, name, phase string, exitCode int) {
	t.Helper()
	for i := 0; i < 20; i++ {
		pod, err := b.Get(Pods, ns, name)
		if err != nil {
			t.Fatalf("get pod %s: %v", name, err)
		}
		state := map[string]any{}
		if exitCode >= 0 {
			reason := "Completed"
			if exitCode != 0 {
				reason = "Error"
			}
			state["terminated"] = map[string]any{"exitCode": exitCode, "reason": reason}
		} else if phase == "Running" {
			state["running"] = map[string]any{}
		}
		pod["status"] = map[string]any{"phase": phase, "containerStatuses": []any{map[string]any{
			"name": "tensorflow", "image": "tf", "imageID": "", "ready": phase == "Running", "restartCount": 0,
			"state": state}}}
		_, err = b.UpdateStatus(Pods, ns, pod)
		if err == nil {
			return
		}
		if !errors.Is(err, ErrConflict) {
			t.Fatalf("set status of pod %s: %v", name, err)
		}
	}
	t.Fatalf("set status of pod %s: too many conflicts", name)
}

// eventually polls cond every 5 ms for at most d.
// patience stretches every wait of eventually: a wait ends as soon as its condition holds, so
// a long limit costs a passing run nothing, and the suites run on loaded 2-core machines (the
// race detector, other suites and builds beside them) where a few seconds are not enough.
const patience = 6

func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	if !within(d, cond) {
		t.Fatalf("timed out waiting for %s", what)
	}
}

// within reports whether cond holds within d (times patience), polling every 5 ms.
func within(d time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(d * patience)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

func names(items []Object) []string {
	var out []string
	for _, o := range items {
		out = append(out, o["metadata"].(map[string]any)["name"].(string))
	}
	return out
}

func children(t *testing.T, b *Backend, res Resource, job string) []string {
	t.Helper()
	items, err := b.ListAll(res, "default", ListOptions{LabelSelector: "training.kubeflow.org/job-name=" + job}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return names(items)
}

// runController makes a controller on b (closed when the test ends) and runs it in the
// background; stop cancels the run and fails the test if Run returned an error.
func runController(t *testing.T, b *Backend, o ControllerOptions) (c *Controller, stop func()) {
	t.Helper()
	c, err := NewController(b, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithCancel(context.Background())
	runErr := make(chan error, 1)
	go func() { runErr <- c.Run(ctx) }()
	return c, func() {
		t.Helper()
		cancel()
		if err := <-runErr; err != nil {
			t.Fatalf("Run: %v", err)
		}
	}
}

func newMemory(t *testing.T, o MemoryOptions) *MemoryBackend {
	t.Helper()
	m, err := NewMemoryBackend(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { m.Close() })
	return m
}
