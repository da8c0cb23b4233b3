package diff

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"
	"unsafe"

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	commonutil "github.com/kubeflow/training-operator/pkg/common/util"
	"github.com/kubeflow/training-operator/pkg/controller.v1/common"
	"github.com/kubeflow/training-operator/pkg/controller.v1/control"
	"github.com/kubeflow/training-operator/pkg/controller.v1/expectation"
	tfcontroller "github.com/kubeflow/training-operator/pkg/controller.v1/tensorflow"
	tfjob "github.com/libtfjob/libtfjob/bindings/go/tfjob"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// One ordinary reconcile step (job running, every pod present, no limits, not suspended), as
// v1.9's JobController.ReconcileJobs does it: ReconcilePods for each replica type (restarts
// of failed pods, exit codes, Restarting, replica counts), then TFJobReconciler.UpdateJobStatus
// (Running, Succeeded, Failed by the chief or the workers, successPolicy, enableDynamicWorker).
// v1.9 runs the types in Go map order, so the harness runs v1.9 once per order of the types and
// libtfjob's result must be one of the outcomes. Compared: the conditions (type, status, reason,
// message, in order), the replica counts, whether completionTime is set, and the pods deleted.
// v1.9 runs on a fake controller-runtime client holding the pods, fake pod/service controls and
// a fake event recorder (set into its unexported field by reflection).

var statusScheme = func() *runtime.Scheme {
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	_ = kubeflowv1.AddToScheme(s)
	return s
}()

type stepOutcome struct {
	Conditions []string
	Counts     string
	Completion bool
	Deleted    []string
	Created    []string // name, labels, restartPolicy and TF_CONFIG of each created pod
	Events     []string // "Type Reason Message" of each event, in order
}

func (o stepOutcome) String() string {
	return fmt.Sprintf("conditions %v, counts %s, completionTime %v, deleted %v, created %v, events %q", o.Conditions, o.Counts, o.Completion, o.Deleted, o.Created, o.Events)
}

// recorderEvents drains v1.9's fake recorder: "Type Reason Message" per event (its own format), in
// the order recorded (which follows Go map order for several replica types: v1.9 runs in every order).
func recorderEvents(rec *record.FakeRecorder) []string {
	var out []string
	for {
		select {
		case e := <-rec.Events:
			out = append(out, e)
		default:
			return out
		}
	}
}

// planEvents: the event actions of a libtfjob plan in the fake recorder's format, in plan order,
// with the outcome events an executor records after carrying out a delete.
func planEvents(p *tfjob.Plan) []string {
	var out []string
	for _, a := range p.Actions {
		if a.Action == "event" && !libtfjobOnlyEvent(a.Type+" "+a.Reason+" "+a.Message) {
			out = append(out, a.Type+" "+a.Reason+" "+a.Message)
		}
		// the outcome events the executor records after carrying out a delete (as v1.9 records them)
		if a.Action == "delete" && a.Kind == "TFJob" {
			out = append(out, "Normal SuccessfulDeleteJob Deleted job: "+a.Name)
		}
		if a.Action == "delete" && a.Kind == "PodGroup" {
			out = append(out, "Normal SuccessfulDeletePodGroup Deleted PodGroup: "+a.Name)
		}
	}
	return out
}

// podSummaryOf describes a created pod by what v1.9's createNewPod sets.
func podSummaryOf(name string, labels map[string]string, restart corev1.RestartPolicy, containers []corev1.Container) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k+"="+labels[k])
	}
	sort.Strings(keys)
	tf := "-"
	for _, c := range containers {
		if c.Name == "tensorflow" {
			for _, e := range c.Env {
				if e.Name == "TF_CONFIG" {
					tf = e.Value
				}
			}
		}
	}
	return fmt.Sprintf("%s{%s restartPolicy=%s TF_CONFIG=%s}", name, strings.Join(keys, ","), restart, tf)
}

func condStrings(conds []kubeflowv1.JobCondition) []string {
	var out []string
	for _, c := range conds {
		out = append(out, fmt.Sprintf("%s=%s/%s/%s", c.Type, c.Status, c.Reason, c.Message))
	}
	return out
}

func setUnexported(obj any, field string, value any) {
	f := reflect.ValueOf(obj).Elem().FieldByName(field)
	reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().Set(reflect.ValueOf(value))
}

func permutations(xs []kubeflowv1.ReplicaType) [][]kubeflowv1.ReplicaType {
	if len(xs) <= 1 {
		return [][]kubeflowv1.ReplicaType{append([]kubeflowv1.ReplicaType(nil), xs...)}
	}
	var out [][]kubeflowv1.ReplicaType
	for i := range xs {
		rest := append(append([]kubeflowv1.ReplicaType(nil), xs[:i]...), xs[i+1:]...)
		for _, p := range permutations(rest) {
			out = append(out, append([]kubeflowv1.ReplicaType{xs[i]}, p...))
		}
	}
	return out
}

func countsOf(rs map[string][3]int64) string {
	keys := make([]string, 0, len(rs))
	for k := range rs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		v := rs[k]
		fmt.Fprintf(&b, "%s:%d/%d/%d ", k, v[0], v[1], v[2])
	}
	return b.String()
}

// v19Step runs one step with the types in the given order.
func v19Step(t *testing.T, job *kubeflowv1.TFJob, pods []*corev1.Pod, order []kubeflowv1.ReplicaType) stepOutcome {
	job = job.DeepCopy()
	objs := make([]client.Object, 0, len(pods))
	var podCopies []*corev1.Pod
	for _, p := range pods {
		c := p.DeepCopy()
		objs = append(objs, c)
		podCopies = append(podCopies, c.DeepCopy())
	}
	r := &tfcontroller.TFJobReconciler{}
	r.Client = fake.NewClientBuilder().WithScheme(statusScheme).WithObjects(objs...).Build()
	rec := record.NewFakeRecorder(100000)
	setUnexported(r, "recorder", record.EventRecorder(rec))
	pc := &control.FakePodControl{}
	r.JobController = common.JobController{Controller: r, Expectations: expectation.NewControllerExpectations(),
		WorkQueue: &commonutil.FakeWorkQueue[string]{}, Recorder: rec, PodControl: pc, ServiceControl: &control.FakeServiceControl{}}
	status := job.Status.DeepCopy()
	replicas := job.Spec.TFReplicaSpecs
	for _, rt := range order {
		var err error
		if perr := catch(func() { err = r.JobController.ReconcilePods(job, status, podCopies, rt, replicas[rt], replicas) }); perr != nil {
			return stepOutcome{Conditions: []string{firstLine(perr.Error())}}
		}
		if err != nil {
			t.Fatalf("v1.9 ReconcilePods: %v", err)
		}
	}
	if err := r.UpdateJobStatus(job, replicas, status); err != nil {
		t.Fatalf("v1.9 UpdateJobStatus: %v", err)
	}
	counts := map[string][3]int64{}
	for rt, s := range status.ReplicaStatuses {
		counts[string(rt)] = [3]int64{int64(s.Active), int64(s.Succeeded), int64(s.Failed)}
	}
	// v1.9 deletes pods already being deleted again, libtfjob does not (E2)
	del := withoutNames(pc.DeletePodName, beingDeleted(pods))
	sort.Strings(del)
	var created []string
	for _, tpl := range pc.Templates {
		created = append(created, podSummaryOf(tpl.Name, tpl.Labels, tpl.Spec.RestartPolicy, tpl.Spec.Containers))
	}
	sort.Strings(created)
	return stepOutcome{condStrings(status.Conditions), countsOf(counts), status.CompletionTime != nil, del, created, recorderEvents(rec)}
}

func oursStatusStep(t *testing.T, jobJSON []byte, pods []*corev1.Pod, now time.Time) stepOutcome {
	p := oursPlan(t, jobJSON, pods, nil, now)
	st := oursPlanStatus(t, p)
	counts := map[string][3]int64{}
	for k, v := range st.ReplicaStatuses {
		counts[k] = [3]int64{v.Active, v.Succeeded, v.Failed}
	}
	var del, created []string
	for _, a := range p.Actions {
		if a.Action == "delete" && a.Kind == "Pod" {
			del = append(del, a.Name)
		}
		if a.Action == "create" && a.Kind == "Pod" {
			data, _ := json.Marshal(a.Object)
			var pod corev1.Pod
			if err := json.Unmarshal(data, &pod); err != nil {
				t.Fatalf("created pod %s: %v", data, err)
			}
			created = append(created, podSummaryOf(pod.Name, pod.Labels, pod.Spec.RestartPolicy, pod.Spec.Containers))
		}
	}
	sort.Strings(del)
	sort.Strings(created)
	return stepOutcome{condStrings(st.Conditions), countsOf(counts), st.CompletionTime != nil, del, created, planEvents(p)}
}

func genStatusCase(r *rand.Rand, i int, now time.Time, kinds messKinds) (*kubeflowv1.TFJob, []byte, []*corev1.Pod) {
	name := fmt.Sprintf("st-%d", i)
	specs := map[string]any{}
	types := []string{"Chief", "Master", "PS", "Worker", "Evaluator"}
	for _, ty := range types {
		p := 0.3
		if ty == "Worker" {
			p = 0.85
		}
		if ty == "Master" && specs["Chief"] != nil {
			continue
		}
		if r.Float64() < p {
			specs[ty] = map[string]any{"replicas": 1 + r.Intn(3),
				"restartPolicy": []string{"OnFailure", "Always", "ExitCode", "Never"}[r.Intn(4)],
				"template": map[string]any{"spec": map[string]any{"containers": []any{
					map[string]any{"name": "tensorflow", "image": "tf:1"}}}}}
		}
	}
	if len(specs) == 0 {
		specs["Worker"] = map[string]any{"replicas": 2, "template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "tensorflow", "image": "tf:1"}}}}}
	}
	spec := map[string]any{"tfReplicaSpecs": specs, "runPolicy": map[string]any{"cleanPodPolicy": "None"}}
	if r.Intn(3) == 0 {
		spec["successPolicy"] = "AllWorkers"
	}
	if r.Intn(4) == 0 {
		spec["enableDynamicWorker"] = true
	}
	conds := []any{map[string]any{"type": "Created", "status": "True", "reason": "TFJobCreated",
		"message": "TFJob " + name + " is created.", "lastUpdateTime": "2020-01-01T00:00:00Z", "lastTransitionTime": "2020-01-01T00:00:00Z"}}
	switch r.Intn(3) {
	case 1:
		conds = append(conds, map[string]any{"type": "Running", "status": "True", "reason": "TFJobRunning",
			"message": "TFJob ns/" + name + " is running.", "lastUpdateTime": "2020-01-01T00:00:00Z", "lastTransitionTime": "2020-01-01T00:00:00Z"})
	case 2:
		conds = append(conds, map[string]any{"type": "Restarting", "status": "True", "reason": "TFJobRestarting",
			"message": "job " + name + " is restarting because Worker replica(s) failed.", "lastUpdateTime": "2020-01-01T00:00:00Z", "lastTransitionTime": "2020-01-01T00:00:00Z"})
	}
	status := map[string]any{"startTime": now.Add(-time.Minute).UTC().Format(time.RFC3339), "conditions": conds}
	jobMap := map[string]any{"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
		"metadata": map[string]any{"name": name, "namespace": "ns", "uid": "uid-" + name},
		"spec":     spec, "status": status}
	data, _ := json.Marshal(jobMap)
	job, err := v19Decode(data)
	if err != nil {
		panic(err)
	}
	kubeflowv1.SetDefaults_TFJob(job)

	truth := true
	var pods []*corev1.Pod
	replicas := map[string]int{}
	for _, ty := range sortedKeys(specs) {
		replicas[strings.ToLower(ty)] = int(*job.Spec.TFReplicaSpecs[kubeflowv1.ReplicaType(ty)].Replicas)
	}
	for _, ty := range sortedKeys(specs) {
		n := int(*job.Spec.TFReplicaSpecs[kubeflowv1.ReplicaType(ty)].Replicas)
		for idx := 0; idx < n; idx++ {
			pname := fmt.Sprintf("%s-%s-%d", name, strings.ToLower(ty), idx)
			labels := map[string]string{
				"training.kubeflow.org/operator-name": "tfjob-controller",
				"training.kubeflow.org/job-name":      name,
				"training.kubeflow.org/replica-type":  strings.ToLower(ty),
				"training.kubeflow.org/replica-index": fmt.Sprint(idx),
			}
			phase := []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed}[r.Intn(5)]
			p := &corev1.Pod{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
				ObjectMeta: metav1.ObjectMeta{Name: pname, Namespace: "ns", Labels: labels, ResourceVersion: "1",
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubeflow.org/v1", Kind: "TFJob", Name: name,
						UID: job.UID, Controller: &truth, BlockOwnerDeletion: &truth}}},
				Status: corev1.PodStatus{Phase: phase},
			}
			cs := corev1.ContainerStatus{Name: "tensorflow"}
			switch phase {
			case corev1.PodSucceeded:
				cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 0}
			case corev1.PodFailed:
				cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: []int32{1, 2, 137, 130, 143, 128, 139}[r.Intn(7)]}
			case corev1.PodRunning:
				cs.State.Running = &corev1.ContainerStateRunning{}
			}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
			if r.Intn(8) == 0 {
				continue // missing: the step creates it
			}
			pods = append(pods, p)
			if idx == n-1 && r.Intn(10) == 0 {
				// a pod beyond the replica count: the step deletes it (scale down)
				extra := p.DeepCopy()
				extra.Name = fmt.Sprintf("%s-%s-%d", name, strings.ToLower(ty), n)
				extra.Labels = map[string]string{}
				for k, v := range labels {
					extra.Labels[k] = v
				}
				extra.Labels["training.kubeflow.org/replica-index"] = fmt.Sprint(n)
				pods = append(pods, extra)
			}
		}
	}
	pods = messUp(r, pods, replicas, now, kinds, "pod")
	return job, data, pods
}

func TestStatusStep(t *testing.T) {
	seed, r, count := seededRun(4)
	tl := newTally()
	checked := map[string]int{}
	for i := 0; i < count; i++ {
		now := time.Now().Truncate(time.Second)
		kinds := messKinds{}
		job, data, pods := genStatusCase(r, i, now, kinds)
		for k := range kinds {
			checked["steps-with-"+k]++
		}
		var types []kubeflowv1.ReplicaType
		for rt := range job.Spec.TFReplicaSpecs {
			types = append(types, rt)
		}
		sort.Slice(types, func(a, b int) bool { return types[a] < types[b] })
		outcomes := map[string]stepOutcome{}
		for _, order := range permutations(types) {
			o := v19Step(t, job, pods, order)
			outcomes[o.String()] = o
		}
		ours := oursStatusStep(t, data, pods, now)
		checked["steps"]++
		if len(ours.Created) > 0 {
			checked["steps-creating-pods"]++
		}
		if len(ours.Deleted) > 0 {
			checked["steps-deleting-pods"]++
		}
		if len(outcomes) > 1 {
			checked["steps-where-v1.9-depends-on-map-order"]++
			if checked["steps-where-v1.9-depends-on-map-order"] == 1 {
				var os []string
				for k := range outcomes {
					os = append(os, k)
				}
				sort.Strings(os)
				t.Logf("first step whose v1.9 outcome depends on Go map order (pods %s):\n  %s\n  libtfjob: %s\n  input: %s",
					podPhases(pods), strings.Join(os, "\n  "), ours, data)
			}
		}
		if _, ok := outcomes[ours.String()]; ok {
			continue
		}
		var v19s []string
		for k := range outcomes {
			v19s = append(v19s, k)
		}
		sort.Strings(v19s)
		class, known := classifyStatus(ours, outcomes)
		for _, o := range outcomes {
			if len(o.Conditions) == 1 && strings.Contains(o.Conditions[0], "runtime error: index out of range") && createsBeyondReplicas(job, ours.Created) {
				class, known = "status step: v1.9 panics (sparse TF_CONFIG of a pod beyond replicas: a type with replicas: 0 or a gap, enableDynamicWorker)", "R3"
			}
		}
		if negativeIndex(pods) {
			for _, o := range outcomes {
				if len(o.Conditions) == 1 && strings.Contains(o.Conditions[0], "index out of range [-1]") {
					class, known = "status step: v1.9 panics on a negative replica-index label", "R5"
				}
			}
		}
		tl.add(class, known, finding{"status", fmt.Sprintf("v1.9 %s\n      ours %s\n      pods %s", strings.Join(v19s, "\n       or "), ours, podPhases(pods)), data})
	}
	tl.report(t, fmt.Sprintf("one reconcile step (pods, conditions, counts): seed %d, %d steps", seed, count), checked)
}

func classifyStatus(ours stepOutcome, v19 map[string]stepOutcome) (string, string) {
	for _, o := range v19 {
		switch {
		case !reflect.DeepEqual(o.Created, ours.Created):
			return "status step: pods created differ", ""
		case !reflect.DeepEqual(o.Deleted, ours.Deleted):
			return "status step: pods deleted differ", ""
		case o.Counts != ours.Counts:
			return "status step: replica counts differ", ""
		case o.Completion != ours.Completion:
			return "status step: completionTime differs", ""
		case fmt.Sprint(o.Conditions) != fmt.Sprint(ours.Conditions):
			return "status step: conditions differ", ""
		}
	}
	return "status step: events differ", ""
}

// childNote is an observed child's name without the job's prefix, and what is unusual about
// it: being deleted, and its type and index labels when its name does not match them.
func childNote(m *metav1.ObjectMeta) (string, string) {
	note := ""
	if m.DeletionTimestamp != nil {
		note += "(being deleted)"
	}
	job := m.Labels["training.kubeflow.org/job-name"]
	it, okt := m.Labels[labelType]
	ii, oki := m.Labels[labelIndex]
	if m.Name != fmt.Sprintf("%s-%s-%s", job, it, ii) {
		note += fmt.Sprintf("[type %q %v, index %q %v]", it, okt, ii, oki)
	}
	return strings.TrimPrefix(m.Name, job+"-"), note
}

func podPhases(pods []*corev1.Pod) string {
	var b strings.Builder
	for _, p := range pods {
		code := ""
		if s := p.Status.ContainerStatuses; len(s) > 0 && s[0].State.Terminated != nil {
			code = fmt.Sprintf("(%d)", s[0].State.Terminated.ExitCode)
		}
		short, note := childNote(&p.ObjectMeta)
		fmt.Fprintf(&b, "%s:%s%s%s ", short, p.Status.Phase, code, note)
	}
	return b.String()
}
