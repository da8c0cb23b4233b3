package tfjob

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// The expectations below come from the rules of docs/cluster.md ("Gang scheduling", "PodGroup"),
// not from a previous run of the code.

const gangJob = `apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: gang, namespace: ml, uid: u-9, annotations: {team: a}}
spec:
  runPolicy: {schedulingPolicy: {minAvailable: 3, queue: q1, priorityClass: high}}
  tfReplicaSpecs:
    PS:
      replicas: 2
      template: {spec: {priorityClassName: low, containers: [{name: tensorflow, image: i, resources: {requests: {cpu: "1", memory: 1Gi}}}]}}
    Worker:
      replicas: 2
      template: {spec: {priorityClassName: high, containers: [{name: tensorflow, image: i, resources: {limits: {cpu: 500m, memory: 512Mi}}}]}}
`

func dig(obj map[string]any, path ...string) any {
	var cur any = obj
	for _, p := range path {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil
		}
		cur = m[p]
	}
	return cur
}

// undecorated removes what gang scheduling adds to a pod, per docs/cluster.md.
func undecorated(pod map[string]any) map[string]any {
	raw, _ := json.Marshal(pod)
	var c map[string]any
	json.Unmarshal(raw, &c)
	meta := c["metadata"].(map[string]any)
	if a, ok := meta["annotations"].(map[string]any); ok {
		delete(a, "scheduling.k8s.io/group-name")
		delete(a, "volcano.sh/task-spec")
		if len(a) == 0 {
			delete(meta, "annotations")
		}
	}
	delete(meta["labels"].(map[string]any), "scheduling.x-k8s.io/pod-group")
	delete(c["spec"].(map[string]any), "schedulerName")
	return c
}

func TestRenderGangDecoration(t *testing.T) {
	j := mustParse(t, gangJob)
	defer j.Close()
	plain, err := j.Render(RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name      string
		opts      RenderOptions
		scheduler string
		volcano   bool
	}{
		{"volcano", RenderOptions{GangScheduler: GangVolcano}, "volcano", true},
		{"volcano named", RenderOptions{GangScheduler: GangVolcano, SchedulerName: "vc2"}, "vc2", true},
		{"scheduler-plugins", RenderOptions{GangScheduler: GangSchedulerPlugins}, "scheduler-plugins-scheduler", false},
		{"scheduler-plugins named", RenderOptions{GangScheduler: GangSchedulerPlugins, SchedulerName: "sp"}, "sp", false},
	}
	for _, tc := range cases {
		got, err := j.Render(tc.opts)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(got.Pods) != 4 || !reflect.DeepEqual(got.Services, plain.Services) {
			t.Fatalf("%s: %d pods; services differ from the undecorated ones: %v", tc.name, len(got.Pods), !reflect.DeepEqual(got.Services, plain.Services))
		}
		for i, pod := range got.Pods {
			if s := dig(pod, "spec", "schedulerName"); s != tc.scheduler {
				t.Errorf("%s: pod %d schedulerName %v, want %s", tc.name, i, s, tc.scheduler)
			}
			typ := dig(pod, "metadata", "labels", "training.kubeflow.org/replica-type")
			if tc.volcano {
				if g := dig(pod, "metadata", "annotations", "scheduling.k8s.io/group-name"); g != "gang" {
					t.Errorf("%s: pod %d group-name %v", tc.name, i, g)
				}
				if ts := dig(pod, "metadata", "annotations", "volcano.sh/task-spec"); ts != typ {
					t.Errorf("%s: pod %d task-spec %v, want %v", tc.name, i, ts, typ)
				}
				if l := dig(pod, "metadata", "labels", "scheduling.x-k8s.io/pod-group"); l != nil {
					t.Errorf("%s: pod %d has the scheduler-plugins label", tc.name, i)
				}
			} else {
				if l := dig(pod, "metadata", "labels", "scheduling.x-k8s.io/pod-group"); l != "gang" {
					t.Errorf("%s: pod %d pod-group label %v", tc.name, i, l)
				}
				if a := dig(pod, "metadata", "annotations"); a != nil {
					t.Errorf("%s: pod %d has annotations %v", tc.name, i, a)
				}
			}
			if !reflect.DeepEqual(undecorated(pod), plain.Pods[i]) {
				t.Errorf("%s: pod %d differs from the undecorated pod beyond the gang decoration", tc.name, i)
			}
			// RenderPod gives the same pod as Render.
			one, err := j.RenderPod(strings.ToLower(typ.(string)), int64(i%2), tc.opts)
			if err != nil || !reflect.DeepEqual(one, pod) {
				t.Errorf("%s: RenderPod(%v, %d) differs from Render's pod (%v)", tc.name, typ, i%2, err)
			}
		}
	}
}

func TestRenderGangKeepsTemplateScheduler(t *testing.T) {
	j := mustParse(t, strings.Replace(gangJob, "priorityClassName: low,", "priorityClassName: low, schedulerName: mine,", 1))
	defer j.Close()
	pod, err := j.RenderPod("PS", 0, RenderOptions{GangScheduler: GangVolcano})
	if err != nil {
		t.Fatal(err)
	}
	if s := dig(pod, "spec", "schedulerName"); s != "mine" {
		t.Errorf("schedulerName %v, want the template's", s)
	}
}

func TestRenderServiceMatchesRender(t *testing.T) {
	j := mustParse(t, distJob)
	defer j.Close()
	all, err := j.Render(RenderOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []struct {
		typ   string
		index int64
	}{{"PS", 0}, {"Worker", 0}, {"worker", 1}} {
		svc, err := j.RenderService(want.typ, want.index, RenderOptions{})
		if err != nil || !reflect.DeepEqual(svc, all.Services[i]) {
			t.Errorf("RenderService(%s, %d) = %v (%v), want %v", want.typ, want.index, svc, err, all.Services[i])
		}
	}
	if _, err := j.RenderService("chief", 0, RenderOptions{}); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown type: %v, want ErrNotFound", err)
	}
	if _, err := j.RenderPod("worker", -1, RenderOptions{}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("negative index: %v, want ErrInvalidArgument", err)
	}
}

func TestPodGroup(t *testing.T) {
	j := mustParse(t, gangJob)
	defer j.Close()
	owner := []any{map[string]any{"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "name": "gang", "uid": "u-9",
		"controller": true, "blockOwnerDeletion": true}}
	// No priorities: ties in canonical order, so both PS replicas (requests 1 CPU, 1Gi) and
	// one worker (no requests: its limits 500m, 512Mi) make up minMember 3.
	vc, err := j.PodGroup(RenderOptions{GangScheduler: GangVolcano})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{
		"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
		"metadata": map[string]any{"name": "gang", "namespace": "ml", "annotations": map[string]any{"team": "a"}, "ownerReferences": owner},
		"spec": map[string]any{"minMember": 3.0, "queue": "q1", "priorityClassName": "high",
			"minResources": map[string]any{"cpu": "2500m", "memory": "2560Mi"}},
	}
	if !reflect.DeepEqual(vc, want) {
		t.Errorf("volcano PodGroup\n got %v\nwant %v", vc, want)
	}
	// Priorities: the workers (high) come first: 2 x (500m, 512Mi) + one PS (1, 1Gi).
	prio := func(name string) (int32, bool) {
		v, ok := map[string]int32{"high": 100, "low": 1}[name]
		return v, ok
	}
	sp, err := j.PodGroup(RenderOptions{GangScheduler: GangSchedulerPlugins, Priority: prio})
	if err != nil {
		t.Fatal(err)
	}
	if sp["apiVersion"] != "scheduling.x-k8s.io/v1alpha1" || sp["kind"] != "PodGroup" ||
		dig(sp, "spec", "minMember") != 3.0 || dig(sp, "spec", "queue") != nil ||
		!reflect.DeepEqual(dig(sp, "spec", "minResources"), map[string]any{"cpu": "2", "memory": "2Gi"}) {
		t.Errorf("scheduler-plugins PodGroup with priorities: %v", sp)
	}
	// Without minAvailable minMember is the total of replicas, and the queue defaults to "default".
	j2 := mustParse(t, strings.Replace(gangJob, "minAvailable: 3, queue: q1, ", "", 1))
	defer j2.Close()
	vc2, err := j2.PodGroup(RenderOptions{GangScheduler: GangVolcano})
	if err != nil || dig(vc2, "spec", "minMember") != 4.0 || dig(vc2, "spec", "queue") != "default" ||
		!reflect.DeepEqual(dig(vc2, "spec", "minResources"), map[string]any{"cpu": "3", "memory": "3Gi"}) {
		t.Errorf("PodGroup without minAvailable: %v (%v)", vc2, err)
	}
	if _, err := j.PodGroup(RenderOptions{}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("PodGroup without a gang scheduler: %v, want ErrInvalidArgument", err)
	}
	if _, err := j.PodGroup(RenderOptions{GangScheduler: GangScheduler(7)}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("unknown gang scheduler: %v, want ErrInvalidArgument", err)
	}
}

func TestPriorityCallbackPanic(t *testing.T) {
	j := mustParse(t, gangJob)
	defer j.Close()
	_, err := j.PodGroup(RenderOptions{GangScheduler: GangVolcano, Priority: func(string) (int32, bool) { panic("boom") }})
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Callback != "priority" {
		t.Errorf("panicking priority callback: %v, want a *PanicError", err)
	}
}

// actionKinds: "action Kind " of every action of a plan, in order.
func actionKinds(p *Plan) string {
	var b strings.Builder
	for _, a := range p.Actions {
		b.WriteString(a.Action + " " + a.Kind + " ")
	}
	return b.String()
}

func TestPlanStepGang(t *testing.T) {
	j := mustParse(t, gangJob)
	defer j.Close()
	now := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	// volcano's pods wait for a PodGroup that is scheduled: the observed one is Running
	running := []byte(`{"metadata":{"name":"gang"},"status":{"phase":"Running"}}`)
	p, err := PlanStep(j, nil, nil, PlanOptions{Now: now, Render: RenderOptions{GangScheduler: GangVolcano}})
	if err != nil {
		t.Fatal(err)
	}
	if kinds := actionKinds(p); !strings.Contains(kinds, "create PodGroup") || !strings.Contains(kinds, "wait PodGroup") ||
		strings.Contains(kinds, "create Pod ") {
		t.Errorf("volcano without a PodGroup: %s, want the PodGroup created and the pods waiting", kinds)
	}
	for _, gang := range []RenderOptions{{GangScheduler: GangVolcano}, {GangScheduler: GangSchedulerPlugins, SchedulerName: "sp"}} {
		p, err := PlanStep(j, nil, nil, PlanOptions{Now: now, Render: gang, PodGroup: running})
		if err != nil {
			t.Fatal(err)
		}
		pods := 0
		for _, a := range p.Actions {
			if a.Action == "event" && a.Reason == "SetPodTemplateSchedulerName" {
				t.Errorf("warning without a template scheduler: %v", a)
			}
			if a.Action != "create" || a.Kind != "Pod" {
				continue
			}
			pods++
			typ := dig(a.Object, "metadata", "labels", "training.kubeflow.org/replica-type").(string)
			idx := dig(a.Object, "metadata", "labels", "training.kubeflow.org/replica-index").(string)
			want, err := j.RenderPod(typ, int64(idx[0]-'0'), gang)
			if err != nil || !reflect.DeepEqual(want, a.Object) {
				t.Errorf("%v: planned pod %s differs from RenderPod with the same options (%v)", gang, a.Name, err)
			}
		}
		if pods != 4 {
			t.Errorf("%v: %d pods created, want 4", gang, pods)
		}
	}
	// A template naming another scheduler: a Warning SetPodTemplateSchedulerName with each pod created.
	j2 := mustParse(t, strings.Replace(gangJob, "priorityClassName: low,", "priorityClassName: low, schedulerName: mine,", 1))
	defer j2.Close()
	p, err = PlanStep(j2, nil, nil, PlanOptions{Now: now, Render: RenderOptions{GangScheduler: GangVolcano}, PodGroup: running})
	if err != nil {
		t.Fatal(err)
	}
	warnings, pods := 0, 0
	for _, a := range p.Actions {
		if a.Action == "event" && a.Type == "Warning" && a.Reason == "SetPodTemplateSchedulerName" {
			warnings++
		}
		if a.Action == "create" && a.Kind == "Pod" {
			pods++
		}
	}
	if pods != 4 || warnings != pods {
		t.Errorf("%d warnings SetPodTemplateSchedulerName for %d pods created, want one each", warnings, pods)
	}
	// Without gang scheduling no such warning.
	p, err = PlanStep(j2, nil, nil, PlanOptions{Now: now})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range p.Actions {
		if a.Reason == "SetPodTemplateSchedulerName" {
			t.Errorf("warning without gang scheduling: %v", a)
		}
		if a.Action == "create" && a.Kind == "Pod" && dig(a.Object, "metadata", "annotations") != nil {
			t.Errorf("gang annotations without gang scheduling: %v", a.Object)
		}
	}
}

// The controller's GangScheduler and SchedulerName: its pods are those RenderPod gives with the
// same options, its PodGroup is PodGroup's (docs/cluster.md); volcano pods wait for the
// PodGroup to leave phase Pending (docs/controller.md).
func TestControllerGangScheduling(t *testing.T) {
	cases := []struct {
		gang  GangScheduler
		name  string
		group Resource
	}{
		{GangVolcano, "vc2", PodGroups},
		{GangSchedulerPlugins, "", Resource{Group: "scheduling.x-k8s.io", Version: "v1alpha1", Resource: "podgroups", Namespaced: true}},
	}
	for _, tc := range cases {
		m := newMemory(t, MemoryOptions{Seed: 1})
		c, stop := runController(t, m.Backend, ControllerOptions{GangScheduler: tc.gang, SchedulerName: tc.name,
			Clock: func() time.Time { return time.Unix(now, 0) }})
		if _, err := m.CreateTFJob("", testJob("gang", map[string]int{"PS": 1, "Worker": 2}, "", nil)); err != nil {
			t.Fatal(err)
		}
		want := "gang-ps-0,gang-worker-0,gang-worker-1"
		if tc.gang == GangVolcano {
			eventually(t, 10*time.Second, "services", func() bool {
				return strings.Join(children(t, m.Backend, Services, "gang"), ",") == want
			})
			if err := c.WaitIdle(10 * time.Second); err != nil {
				t.Fatal(err)
			}
			if pods := children(t, m.Backend, Pods, "gang"); len(pods) != 0 {
				t.Fatalf("volcano pods created while the PodGroup is Pending: %v", pods)
			}
			for i := 0; ; i++ { // volcano moves the PodGroup on
				group, err := m.Get(tc.group, "default", "gang")
				if err != nil {
					t.Fatal(err)
				}
				group["status"] = map[string]any{"phase": "Inqueue"}
				if _, err = m.UpdateStatus(tc.group, "default", group); err == nil {
					break
				} else if !errors.Is(err, ErrConflict) || i > 20 {
					t.Fatal(err)
				}
			}
		}
		eventually(t, 10*time.Second, "pods", func() bool { return strings.Join(children(t, m.Backend, Pods, "gang"), ",") == want })
		obj, err := m.Get(TFJobs, "default", "gang")
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(obj)
		stored := mustParse(t, string(raw))
		opts := RenderOptions{GangScheduler: tc.gang, SchedulerName: tc.name}
		for _, name := range strings.Split(want, ",") {
			parts := strings.Split(name, "-")
			pod, err := m.Get(Pods, "default", name)
			if err != nil {
				t.Fatal(err)
			}
			rendered, err := stored.RenderPod(parts[1], int64(parts[2][0]-'0'), opts)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(pod["spec"], rendered["spec"]) ||
				!reflect.DeepEqual(dig(pod, "metadata", "labels"), dig(rendered, "metadata", "labels")) ||
				!reflect.DeepEqual(dig(pod, "metadata", "annotations"), dig(rendered, "metadata", "annotations")) {
				t.Errorf("%v: pod %s differs from RenderPod's", tc.gang, name)
			}
		}
		group, err := m.Get(tc.group, "default", "gang")
		if err != nil {
			t.Fatal(err)
		}
		wantGroup, err := stored.PodGroup(opts)
		if err != nil {
			t.Fatal(err)
		}
		if group["apiVersion"] != wantGroup["apiVersion"] || group["kind"] != wantGroup["kind"] ||
			!reflect.DeepEqual(group["spec"], wantGroup["spec"]) ||
			!reflect.DeepEqual(dig(group, "metadata", "ownerReferences"), dig(wantGroup, "metadata", "ownerReferences")) {
			t.Errorf("%v: PodGroup %v differs from PodGroup()'s %v", tc.gang, group, wantGroup)
		}
		stored.Close()
		stop()
	}
}
