package tfjob

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// These tests need a real kube-apiserver (tests/kube/harness.sh, run by
// tests/suites/86-bindings-kube.sh); they are skipped without its environment.
func kubeBackend(t *testing.T) (*KubeBackend, string) {
	t.Helper()
	cfg := os.Getenv("KUBE_ADMIN_KUBECONFIG")
	if cfg == "" {
		t.Skip("needs a kube-apiserver (tests/suites/86-bindings-kube.sh)")
	}
	k, err := NewKubeBackend(KubeOptions{Source: KubeKubeconfig, Kubeconfig: cfg, QPS: -1})
	if err != nil {
		t.Fatal(err)
	}
	ns := fmt.Sprintf("go-%d", time.Now().UnixNano()%1000000000)
	if _, err := k.Create(Namespaces, "", Object{"apiVersion": "v1", "kind": "Namespace", "metadata": map[string]any{"name": ns}}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		k.Delete(Namespaces, "", ns, DeleteOptions{})
		k.Close()
	})
	return k, ns
}

func nsJob(name, ns string, replicas map[string]int, container map[string]any) Object {
	j := testJob(name, replicas, "", container)
	j["metadata"].(map[string]any)["namespace"] = ns
	return j
}

func TestKubeAPIErrors(t *testing.T) {
	k, ns := kubeBackend(t)
	if k.Server() != os.Getenv("KUBE_APISERVER_URL") {
		t.Fatalf("server %q", k.Server())
	}
	var api *APIError
	_, err := k.Get(TFJobs, ns, "missing")
	if !errors.As(err, &api) || !IsNotFound(err) || api.HTTPStatus != 404 || api.Reason != "NotFound" ||
		api.Message != `tfjobs.kubeflow.org "missing" not found` {
		t.Fatalf("not found: %v", err)
	}
	if _, err := k.CreateTFJob(ns, nsJob("a", ns, map[string]int{"Worker": 1}, nil)); err != nil {
		t.Fatal(err)
	}
	_, err = k.CreateTFJob(ns, nsJob("a", ns, map[string]int{"Worker": 1}, nil))
	if !errors.As(err, &api) || !IsAlreadyExists(err) || api.HTTPStatus != 409 || api.Reason != "AlreadyExists" {
		t.Fatalf("already exists: %v", err)
	}
	stale, _ := k.Get(TFJobs, ns, "a")
	k.Patch(TFJobs, ns, "a", "", `{"metadata":{"labels":{"x":"1"}}}`)
	_, err = k.Update(TFJobs, ns, stale)
	if !errors.As(err, &api) || !IsConflict(err) || api.Reason != "Conflict" || !strings.Contains(api.Message, "the object has been modified") {
		t.Fatalf("conflict: %v", err)
	}
	_, err = k.Create(Pods, ns, `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},"spec":{"containers":[]}}`)
	if !errors.As(err, &api) || !errors.Is(err, ErrInvalid) || api.HTTPStatus != 422 || api.Details == nil || len(api.Details.Causes) == 0 {
		t.Fatalf("invalid: %v", err)
	}
	user, err := NewKubeBackendFromKubeconfig(os.Getenv("KUBE_USER_KUBECONFIG"), "")
	if err != nil {
		t.Fatal(err)
	}
	defer user.Close()
	_, err = user.List(TFJobs, ns, ListOptions{})
	if !errors.As(err, &api) || !errors.Is(err, ErrForbidden) || api.HTTPStatus != 403 || api.Reason != "Forbidden" {
		t.Fatalf("forbidden: %v", err)
	}
}

func TestKubeControllerRunsAJob(t *testing.T) {
	k, ns := kubeBackend(t)
	_, stop := runController(t, k.Backend, ControllerOptions{Namespace: ns, Workers: 2})
	if _, err := k.CreateTFJob(ns, nsJob("mnist", ns, map[string]int{"Worker": 2}, nil)); err != nil {
		t.Fatal(err)
	}
	list := func(res Resource) string {
		items, err := k.ListAll(res, ns, ListOptions{}, 0)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(names(items), ",")
	}
	eventually(t, 30*time.Second, "children", func() bool {
		return list(Pods) == "mnist-worker-0,mnist-worker-1" && list(Services) == "mnist-worker-0,mnist-worker-1"
	})
	for _, p := range []string{"mnist-worker-0", "mnist-worker-1"} {
		setPod(t, k.Backend, ns, p, "Running", -1)
	}
	for _, p := range []string{"mnist-worker-0", "mnist-worker-1"} {
		setPod(t, k.Backend, ns, p, "Succeeded", 0)
	}
	wctx, wcancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer wcancel()
	job, err := k.WaitForTFJob(wctx, ns, "mnist")
	if err != nil || !HasCondition(job, "Succeeded") {
		t.Fatalf("job: %v %v", job["status"], err)
	}
	stop()
}
