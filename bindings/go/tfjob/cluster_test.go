package tfjob

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"
)

const distJob = `apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: dist, namespace: ml, uid: u-1}
spec:
  tfReplicaSpecs:
    PS: {replicas: 1, template: {spec: {containers: [{name: tensorflow, image: i}]}}}
    Worker:
      replicas: 2
      restartPolicy: ExitCode
      template: {spec: {containers: [{name: tensorflow, image: i}]}}
`

func mustParse(t testing.TB, s string) *Job {
	j, err := Parse([]byte(s), "")
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func TestTFConfigTable(t *testing.T) {
	j := mustParse(t, distJob)
	cases := []struct {
		typ   string
		index int64
		opts  RenderOptions
		want  string
	}{
		{"Worker", 1, RenderOptions{}, `{"cluster":{"ps":["dist-ps-0.ml.svc:2222"],"worker":["dist-worker-0.ml.svc:2222","dist-worker-1.ml.svc:2222"]},"task":{"type":"worker","index":1},"environment":"cloud"}`},
		{"ps", 0, RenderOptions{ClusterDomain: "cluster.local"}, `{"cluster":{"ps":["dist-ps-0.ml.svc.cluster.local:2222"],"worker":["dist-worker-0.ml.svc.cluster.local:2222","dist-worker-1.ml.svc.cluster.local:2222"]},"task":{"type":"ps","index":0},"environment":"cloud"}`},
	}
	for _, tc := range cases {
		got, err := j.TFConfig(tc.typ, tc.index, tc.opts)
		if err != nil || got != tc.want {
			t.Errorf("%s %d: got %s (%v), want %s", tc.typ, tc.index, got, err, tc.want)
		}
	}
}

func TestTFConfigAddressCallback(t *testing.T) {
	j := mustParse(t, distJob)
	got, err := j.TFConfig("worker", 0, RenderOptions{Address: func(typ string, i int64, port int32) (string, error) {
		return fmt.Sprintf("127.0.0.1:%d", 4000+10*len(typ)+int(i)), nil
	}})
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]map[string]any
	json.Unmarshal([]byte(got), &cfg)
	if fmt.Sprint(cfg["cluster"]["worker"]) != "[127.0.0.1:4060 127.0.0.1:4061]" {
		t.Fatalf("resolver not used: %s", got)
	}
	boom := errors.New("no port")
	if _, err := j.TFConfig("worker", 0, RenderOptions{Address: func(string, int64, int32) (string, error) {
		return "", boom
	}}); !errors.Is(err, boom) {
		t.Fatalf("callback error lost: %v", err)
	}
	// A panicking resolver never unwinds into C: it comes back as a *PanicError.
	_, err = j.Render(RenderOptions{Address: func(string, int64, int32) (string, error) { panic("resolver broke") }})
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Callback != "address" || pe.Value != "resolver broke" {
		t.Fatalf("panic: %v", err)
	}
}

func TestRenderAndPlan(t *testing.T) {
	j := mustParse(t, distJob)
	children, err := j.Render(RenderOptions{})
	if err != nil || len(children.Pods) != 3 || len(children.Services) != 3 {
		t.Fatalf("render: %v %+v", err, children)
	}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	p, err := PlanStep(j, nil, nil, PlanOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	creates := 0
	for _, a := range p.Actions {
		if a.Action == "create" {
			creates++
		}
	}
	if creates != 6 || !p.Changed || p.Status["startTime"] != "2026-01-01T00:00:00Z" {
		t.Fatalf("plan: %+v", p)
	}
	if _, err := PlanStep(j, []byte("[1, 2"), nil, PlanOptions{Now: now}); !errors.Is(err, ErrParse) {
		t.Fatalf("bad pods: %v", err)
	}
}

func FuzzPlan(f *testing.F) {
	f.Add([]byte(`[{"metadata":{"name":"dist-worker-0","labels":{"training.kubeflow.org/replica-type":"worker","training.kubeflow.org/replica-index":"0"}},"status":{"phase":"Failed","containerStatuses":[{"name":"tensorflow","state":{"terminated":{"exitCode":137}}}]}}]`))
	f.Add([]byte(`{"kind":"PodList","items":[]}`))
	j := mustParse(f, distJob)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, pods []byte) {
		// Every gang scheduler in turn, so that its decoration of created pods is fuzzed too.
		p, err := PlanStep(j, pods, nil, PlanOptions{Now: now, Render: RenderOptions{GangScheduler: GangScheduler(len(pods) % 3)}})
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Message == "" {
				t.Fatalf("unexplained error %v", err)
			}
			return
		}
		if p.Status == nil {
			t.Fatal("no status")
		}
	})
}
