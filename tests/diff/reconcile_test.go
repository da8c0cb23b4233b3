package diff

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/go-logr/logr"
	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	commonutil "github.com/kubeflow/training-operator/pkg/common/util"
	"github.com/kubeflow/training-operator/pkg/controller.v1/common"
	"github.com/kubeflow/training-operator/pkg/controller.v1/control"
	"github.com/kubeflow/training-operator/pkg/controller.v1/expectation"
	tfcontroller "github.com/kubeflow/training-operator/pkg/controller.v1/tensorflow"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// The whole reconcile step: v1.9's TFJobReconciler.Reconcile (managedBy, finished jobs with
// cleanPodPolicy and TTL, suspend and resume, backoff and deadline, pods and services, status,
// the returned requeue) on a fake controller-runtime client holding the job, its pods and its
// services, against one libtfjob planner step. Jobs have one or two replica types; v1.9 walks
// them in Go map order, so it runs 16 times per input and libtfjob's outcome must be one of
// v1.9's. Compared: pods and services created and deleted, TFJob deleted, status conditions
// (type, status, reason, message, in order), replica counts, completionTime set, and the
// requeue (whole seconds, ±1 s: v1.9 reads the clock itself).

type fullOutcome struct {
	Created, Deleted, SvcCreated, SvcDeleted []string
	JobDeleted                               bool
	Conditions                               []string
	Counts                                   string
	Completion                               bool
	Requeue                                  string
	Events                                   []string // "Type Reason Message", in order
	Objects                                  []string // every created Pod and Service in full (objectText), sorted
	Adopted                                  []string // "Kind name" of every child adopted (ClaimServices), sorted
}

// objectText is a created child as the API server would receive it, less what the pod and
// service controls fill in (namespace): kind, name, labels, annotations, the controller
// reference and the whole spec, through the corev1 types so that both sides have one JSON form.
// Service ports are sorted by name (v1.9 builds them from a map).
func objectText(kind, name string, labels, annotations map[string]string, owner metav1.OwnerReference, spec any) string {
	if svc, ok := spec.(corev1.ServiceSpec); ok {
		svc.Ports = append([]corev1.ServicePort(nil), svc.Ports...)
		sort.Slice(svc.Ports, func(i, j int) bool { return svc.Ports[i].Name < svc.Ports[j].Name })
		spec = svc
	}
	data, _ := json.Marshal(map[string]any{"labels": labels, "annotations": annotations, "owner": owner, "spec": spec})
	return kind + " " + name + " " + string(data)
}

func (o fullOutcome) key() string {
	return fmt.Sprintf("pods+%v pods-%v svc+%v svc-%v jobDeleted=%v conditions=%v counts=%s completion=%v events=%q requeue=%s objects=%v adopted=%v",
		o.Created, o.Deleted, o.SvcCreated, o.SvcDeleted, o.JobDeleted, o.Conditions, o.Counts, o.Completion, o.Events, o.Requeue, o.Objects, o.Adopted)
}

func requeueString(seconds *float64) string {
	if seconds == nil {
		return "none"
	}
	return fmt.Sprintf("%.0f", math.Round(*seconds))
}

type fullCase struct {
	job      *kubeflowv1.TFJob
	jobJSON  []byte
	pods     []*corev1.Pod
	services []*corev1.Service
	now      time.Time
	ntypes   int
	kinds    messKinds // what messUp did
}

// completionAge is how long ago a generated job finished: recently (well inside a 3600 s TTL) or
// two hours ago (past it).
func completionAge(r *rand.Rand) time.Duration {
	if r.Intn(3) == 0 {
		return 2 * time.Hour
	}
	return time.Duration(r.Intn(20)) * time.Second
}

func genFullCase(r *rand.Rand, i int) fullCase {
	now := time.Now().Truncate(time.Second)
	name := fmt.Sprintf("rc-%d", i)
	all := []string{"Chief", "PS", "Worker", "Evaluator", "Master"}
	specs := map[string]any{}
	nt := 1 + r.Intn(2)
	for len(specs) < nt {
		t := all[r.Intn(len(all))]
		if t == "Master" && specs["Chief"] != nil || t == "Chief" && specs["Master"] != nil {
			continue
		}
		podSpec := map[string]any{"containers": []any{map[string]any{"name": "tensorflow", "image": "tf:1"}}}
		tmpl := map[string]any{"spec": podSpec}
		if r.Intn(3) == 0 {
			// a template with more of its own fields, all to be carried into the pod
			podSpec["containers"] = []any{
				map[string]any{"name": "sidecar", "image": "busybox", "ports": []any{map[string]any{"name": "metrics", "containerPort": 9090}}},
				map[string]any{"name": "tensorflow", "image": "tf:1", "command": []any{"python", "train.py"},
					"env":       []any{map[string]any{"name": "A", "value": "1"}},
					"ports":     []any{map[string]any{"name": "tfjob-port", "containerPort": 2000 + r.Intn(3)}, map[string]any{"name": "grpc", "containerPort": 5000}},
					"resources": map[string]any{"limits": map[string]any{"cpu": "1", "memory": "1Gi"}, "requests": map[string]any{"cpu": "500m"}}}}
			podSpec["nodeSelector"] = map[string]any{"disk": "ssd"}
			podSpec["volumes"] = []any{map[string]any{"name": "data", "emptyDir": map[string]any{}}}
			tmpl["metadata"] = map[string]any{"labels": map[string]any{"app": "tf", "training.kubeflow.org/job-name": "overridden"},
				"annotations": map[string]any{"note": "kept"}}
		}
		if r.Intn(6) == 0 {
			podSpec["restartPolicy"] = "OnFailure" // v1.9 warns (SetPodTemplateRestartPolicy) on each create
		}
		specs[t] = map[string]any{"replicas": r.Intn(4),
			"restartPolicy": []string{"OnFailure", "Always", "ExitCode", "Never"}[r.Intn(4)],
			"template":      tmpl}
	}
	rp := map[string]any{"cleanPodPolicy": []string{"All", "Running", "None"}[r.Intn(3)]}
	if r.Intn(3) == 0 {
		rp["backoffLimit"] = r.Intn(3)
	}
	if r.Intn(4) == 0 {
		rp["activeDeadlineSeconds"] = []int{5, 30, 3600}[r.Intn(3)]
	}
	if r.Intn(3) == 0 {
		// No TTL near the generated completion times: v1.9 reads its own clock, which moves on while
		// the cases run, so an expiry within seconds of "now" would flip with the machine's load.
		rp["ttlSecondsAfterFinished"] = []int{0, 3600}[r.Intn(2)]
	}
	if r.Intn(6) == 0 {
		rp["suspend"] = true
	}
	if r.Intn(10) == 0 {
		rp["managedBy"] = []string{"kubeflow.org/training-operator", "kueue.x-k8s.io/multikueue"}[r.Intn(2)]
	}
	spec := map[string]any{"tfReplicaSpecs": specs, "runPolicy": rp}
	if r.Intn(3) == 0 {
		spec["successPolicy"] = "AllWorkers"
	}
	if r.Intn(5) == 0 {
		spec["enableDynamicWorker"] = true
	}
	t0 := "2020-01-01T00:00:00Z"
	cond := func(ty, st, reason, msg string) map[string]any {
		return map[string]any{"type": ty, "status": st, "reason": reason, "message": msg, "lastUpdateTime": t0, "lastTransitionTime": t0}
	}
	conds := []any{cond("Created", "True", "TFJobCreated", "TFJob "+name+" is created.")}
	status := map[string]any{"conditions": conds}
	if r.Intn(5) > 0 {
		status["startTime"] = now.Add(-time.Duration(20+r.Intn(40)) * time.Second).UTC().Format(time.RFC3339)
	}
	switch r.Intn(7) {
	case 0:
		conds = append(conds, cond("Running", "True", "TFJobRunning", "TFJob ns/"+name+" is running."))
	case 1:
		conds = append(conds, cond("Running", "False", "TFJobSucceeded", "r"), cond("Succeeded", "True", "TFJobSucceeded", "TFJob ns/"+name+" successfully completed."))
		status["completionTime"] = now.Add(-completionAge(r)).UTC().Format(time.RFC3339)
	case 2:
		conds = append(conds, cond("Failed", "True", "TFJobFailed", "f"))
		status["completionTime"] = now.Add(-completionAge(r)).UTC().Format(time.RFC3339)
	case 3:
		conds = append(conds, cond("Suspended", "True", "TFJobSuspended", "TFJob "+name+" is suspended."))
	}
	status["conditions"] = conds
	if r.Intn(2) == 0 {
		rs := map[string]any{}
		for t := range specs {
			rs[t] = map[string]any{"active": r.Intn(2), "failed": r.Intn(2)}
		}
		status["replicaStatuses"] = rs
	}
	jobMap := map[string]any{"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
		"metadata": map[string]any{"name": name, "namespace": "ns", "uid": "uid-" + name, "resourceVersion": "1"},
		"spec":     spec, "status": status}
	data, _ := json.Marshal(jobMap)
	job, err := v19Decode(data)
	if err != nil {
		panic(err)
	}
	kubeflowv1.SetDefaults_TFJob(job)

	c := fullCase{job: job, jobJSON: data, now: now, ntypes: len(specs), kinds: messKinds{}}
	truth := true
	owner := []metav1.OwnerReference{{APIVersion: "kubeflow.org/v1", Kind: "TFJob", Name: name, UID: job.UID,
		Controller: &truth, BlockOwnerDeletion: &truth}}
	for _, ty := range sortedKeys(specs) {
		n := int(*job.Spec.TFReplicaSpecs[kubeflowv1.ReplicaType(ty)].Replicas)
		for idx := 0; idx < n+1; idx++ {
			if idx == n && r.Intn(8) > 0 {
				break // usually no pod beyond the count
			}
			pname := fmt.Sprintf("%s-%s-%d", name, strings.ToLower(ty), idx)
			labels := map[string]string{
				"training.kubeflow.org/operator-name": "tfjob-controller",
				"training.kubeflow.org/job-name":      name,
				"training.kubeflow.org/replica-type":  strings.ToLower(ty),
				"training.kubeflow.org/replica-index": fmt.Sprint(idx),
			}
			if r.Intn(8) > 0 {
				phase := []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed}[r.Intn(5)]
				p := &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
					ObjectMeta: metav1.ObjectMeta{Name: pname, Namespace: "ns", Labels: labels, OwnerReferences: owner},
					Status:     corev1.PodStatus{Phase: phase}}
				cs := corev1.ContainerStatus{Name: "tensorflow", RestartCount: int32(r.Intn(3) / 2)}
				switch phase {
				case corev1.PodSucceeded:
					cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 0}
				case corev1.PodFailed:
					cs.State.Terminated = &corev1.ContainerStateTerminated{ExitCode: []int32{1, 137, 130, 2}[r.Intn(4)]}
				}
				p.Status.ContainerStatuses = []corev1.ContainerStatus{cs}
				abnormalPod(r, p)
				c.pods = append(c.pods, p)
			}
			if r.Intn(6) > 0 {
				c.services = append(c.services, &corev1.Service{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Service"},
					ObjectMeta: metav1.ObjectMeta{Name: pname, Namespace: "ns", Labels: labels, OwnerReferences: owner},
					Spec:       corev1.ServiceSpec{ClusterIP: "None", Selector: labels}})
			}
		}
	}
	replicas := map[string]int{}
	for _, ty := range sortedKeys(specs) {
		replicas[strings.ToLower(ty)] = int(*job.Spec.TFReplicaSpecs[kubeflowv1.ReplicaType(ty)].Replicas)
	}
	c.pods = messUp(r, c.pods, replicas, now, c.kinds, "pod")
	c.services = messUp(r, c.services, replicas, now, c.kinds, "service")
	mixOwners(r, c.pods, c.kinds, "pod")
	mixOwners(r, c.services, c.kinds, "service")
	// libtfjob gets the children in the order v1.9's client lists them (the fake client: by name;
	// an API server lists by name too) so that RecordAbnormalPods' events come in the same order
	sort.Slice(c.pods, func(i, j int) bool { return c.pods[i].Name < c.pods[j].Name })
	sort.Slice(c.services, func(i, j int) bool { return c.services[i].Name < c.services[j].Name })
	return c
}

// abnormalPod sometimes gives an active pod what v1.9's RecordAbnormalPods reports as Warning
// events: a sidecar that terminated with a non-zero code, a waiting container with a message, or
// (no container statuses) a latest pod condition that is not True.
func abnormalPod(r *rand.Rand, p *corev1.Pod) {
	if r.Intn(5) > 0 || (p.Status.Phase != corev1.PodRunning && p.Status.Phase != corev1.PodPending) {
		return
	}
	t0 := metav1.NewTime(time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC))
	switch r.Intn(3) {
	case 0:
		p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, corev1.ContainerStatus{Name: "sidecar",
			State: corev1.ContainerState{Terminated: &corev1.ContainerStateTerminated{ExitCode: 3, Reason: "Error", Message: "sidecar died"}}})
	case 1:
		p.Status.ContainerStatuses[0].State.Waiting = &corev1.ContainerStateWaiting{Reason: "ImagePullBackOff", Message: "Back-off pulling image \"tf:1\""}
	case 2:
		p.Status.ContainerStatuses = nil
		p.Status.Conditions = []corev1.PodCondition{
			{Type: corev1.PodInitialized, Status: corev1.ConditionTrue, LastTransitionTime: t0},
			{Type: corev1.PodScheduled, Status: corev1.ConditionFalse, Reason: "Unschedulable",
				Message: "0/3 nodes are available: 3 Insufficient cpu.", LastTransitionTime: metav1.NewTime(t0.Add(time.Minute))}}
	}
}

func v19Reconcile(t *testing.T, c fullCase) fullOutcome {
	objs := []client.Object{c.job.DeepCopy()}
	for _, p := range c.pods {
		objs = append(objs, p.DeepCopy())
	}
	for _, s := range c.services {
		objs = append(objs, s.DeepCopy())
	}
	cl := fake.NewClientBuilder().WithScheme(statusScheme).WithObjects(objs...).WithStatusSubresource(&kubeflowv1.TFJob{}).Build()
	r := &tfcontroller.TFJobReconciler{Client: cl, Scheme: statusScheme, Log: logr.Discard()}
	rec := record.NewFakeRecorder(100000)
	setUnexported(r, "recorder", record.EventRecorder(rec))
	setUnexported(r, "apiReader", client.Reader(cl))
	pc := &control.FakePodControl{}
	sc := &control.FakeServiceControl{}
	r.JobController = common.JobController{Controller: r, Expectations: expectation.NewControllerExpectations(),
		WorkQueue: &commonutil.FakeWorkQueue[string]{}, Recorder: rec, PodControl: pc, ServiceControl: sc}
	var res ctrl.Result
	var err error
	if perr := catch(func() {
		res, err = r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: c.job.Name}})
	}); perr != nil {
		return fullOutcome{Requeue: "panic: " + firstLine(perr.Error())}
	}
	o := fullOutcome{Requeue: "none", Events: recorderEvents(rec)}
	if err != nil {
		o.Requeue = "error: " + err.Error()
	} else if res.RequeueAfter > 0 || res.Requeue {
		s := res.RequeueAfter.Seconds()
		o.Requeue = requeueString(&s)
	}
	o.Adopted = append(patchedChildren("Pod", pc.Patches, c.pods), patchedChildren("Service", sc.Patches, c.services)...)
	for i, tpl := range pc.Templates {
		o.Created = append(o.Created, podSummaryOf(tpl.Name, tpl.Labels, tpl.Spec.RestartPolicy, tpl.Spec.Containers))
		o.Objects = append(o.Objects, objectText("Pod", tpl.Name, tpl.Labels, tpl.Annotations, pc.ControllerRefs[i], tpl.Spec))
	}
	// v1.9 deletes children already being deleted again, libtfjob does not (E2)
	o.Deleted = withoutNames(pc.DeletePodName, beingDeleted(c.pods))
	for i, s := range sc.Templates {
		o.SvcCreated = append(o.SvcCreated, s.Name)
		o.Objects = append(o.Objects, objectText("Service", s.Name, s.Labels, s.Annotations, sc.ControllerRefs[i], s.Spec))
	}
	o.SvcDeleted = withoutNames(sc.DeleteServiceName, beingDeleted(c.services))
	after := &kubeflowv1.TFJob{}
	if err := cl.Get(context.Background(), types.NamespacedName{Namespace: "ns", Name: c.job.Name}, after); apierrors.IsNotFound(err) {
		o.JobDeleted = true
		after = c.job
	} else if err != nil {
		t.Fatal(err)
	}
	o.Conditions = condStrings(after.Status.Conditions)
	counts := map[string][3]int64{}
	for rt, s := range after.Status.ReplicaStatuses {
		counts[string(rt)] = [3]int64{int64(s.Active), int64(s.Succeeded), int64(s.Failed)}
	}
	o.Counts = countsOf(counts)
	o.Completion = after.Status.CompletionTime != nil
	for _, l := range [][]string{o.Created, o.Deleted, o.SvcCreated, o.SvcDeleted, o.Objects, o.Adopted} {
		sort.Strings(l)
	}
	return o
}

// serviceList describes the observed services: name, and the labels when they do not match it.
func serviceList(svcs []*corev1.Service) string {
	var b strings.Builder
	for _, s := range svcs {
		short, note := childNote(&s.ObjectMeta)
		fmt.Fprintf(&b, "%s%s ", short, note)
	}
	return b.String()
}

// ownerOf is the single owner reference of a created object (the zero value when there is not exactly one).
func ownerOf(refs []metav1.OwnerReference) metav1.OwnerReference {
	if len(refs) != 1 {
		return metav1.OwnerReference{}
	}
	return refs[0]
}

func oursReconcile(t *testing.T, c fullCase) fullOutcome {
	p := oursPlan(t, c.jobJSON, c.pods, c.services, c.now)
	o := fullOutcome{Requeue: requeueString(p.RequeueAfter), Events: planEvents(p)}
	for _, a := range p.Actions {
		switch {
		case a.Action == "create" && a.Kind == "Pod":
			data, _ := json.Marshal(a.Object)
			var pod corev1.Pod
			_ = json.Unmarshal(data, &pod)
			o.Created = append(o.Created, podSummaryOf(pod.Name, pod.Labels, pod.Spec.RestartPolicy, pod.Spec.Containers))
			o.Objects = append(o.Objects, objectText("Pod", pod.Name, pod.Labels, pod.Annotations, ownerOf(pod.OwnerReferences), pod.Spec))
		case a.Action == "delete" && a.Kind == "Pod":
			o.Deleted = append(o.Deleted, a.Name)
		case a.Action == "create" && a.Kind == "Service":
			o.SvcCreated = append(o.SvcCreated, a.Name)
			data, _ := json.Marshal(a.Object)
			var svc corev1.Service
			_ = json.Unmarshal(data, &svc)
			o.Objects = append(o.Objects, objectText("Service", svc.Name, svc.Labels, svc.Annotations, ownerOf(svc.OwnerReferences), svc.Spec))
		case a.Action == "delete" && a.Kind == "Service":
			o.SvcDeleted = append(o.SvcDeleted, a.Name)
		case a.Action == "delete" && a.Kind == "TFJob":
			o.JobDeleted = true
		case a.Action == "adopt":
			o.Adopted = append(o.Adopted, a.Kind+" "+a.Name)
		case a.Action == "release" || a.Action == "patch" || a.Action == "wait":
			o.Adopted = append(o.Adopted, "unexpected "+a.Action+" "+a.Kind+" "+a.Name)
		}
	}
	st := oursPlanStatus(t, p)
	if o.JobDeleted {
		// v1.9's outcome for a deleted job is read from the input; so is ours.
		var in struct {
			Status json.RawMessage `json:"status"`
		}
		_ = json.Unmarshal(c.jobJSON, &in)
		st.Conditions, st.ReplicaStatuses, st.CompletionTime = nil, nil, nil
		_ = json.Unmarshal(in.Status, &st)
	}
	o.Conditions = condStrings(st.Conditions)
	counts := map[string][3]int64{}
	for k, v := range st.ReplicaStatuses {
		counts[k] = [3]int64{v.Active, v.Succeeded, v.Failed}
	}
	o.Counts = countsOf(counts)
	o.Completion = st.CompletionTime != nil
	for _, l := range [][]string{o.Created, o.Deleted, o.SvcCreated, o.SvcDeleted, o.Objects, o.Adopted} {
		sort.Strings(l)
	}
	return o
}

// zeroReplicaCreate: the created pods differ only in TF_CONFIG, for pods of types with replicas 0.
func zeroReplicaCreate(c fullCase, v19, ours fullOutcome) bool {
	if len(v19.Created) != len(ours.Created) {
		return false
	}
	strip := func(s string) string { return s[:strings.Index(s, " TF_CONFIG=")] }
	differs := false
	for i := range v19.Created {
		if strip(v19.Created[i]) != strip(ours.Created[i]) {
			return false
		}
		if v19.Created[i] != ours.Created[i] {
			differs = true
			zero := false
			for rt, spec := range c.job.Spec.TFReplicaSpecs {
				if *spec.Replicas == 0 && strings.Contains(v19.Created[i], "replica-type="+strings.ToLower(string(rt))+" ") {
					zero = true
				}
			}
			if !zero {
				return false
			}
		}
	}
	return differs
}

// requeueClose: the same requeue give or take a second (v1.9 computes it from its own clock).
func sameOutcome(a, b fullOutcome) bool {
	ra, rb := a.Requeue, b.Requeue
	a.Requeue, b.Requeue = "", ""
	if a.key() != b.key() {
		return false
	}
	if ra == rb {
		return true
	}
	var x, y float64
	if _, err := fmt.Sscan(ra, &x); err != nil {
		return false
	}
	if _, err := fmt.Sscan(rb, &y); err != nil {
		return false
	}
	return math.Abs(x-y) <= 1
}

func TestReconcileStep(t *testing.T) {
	seed, r, count := seededRun(8)
	tl := newTally()
	checked := map[string]int{}
	for i := 0; i < count; i++ {
		c := genFullCase(r, i)
		runs := 1
		if c.ntypes > 1 {
			runs = 16
		}
		outcomes := map[string]fullOutcome{}
		for k := 0; k < runs; k++ {
			o := v19Reconcile(t, c)
			outcomes[o.key()] = o
		}
		ours := oursReconcile(t, c)
		checked["steps"]++
		for k := range c.kinds {
			checked["steps-with-"+k]++
		}
		for _, e := range ours.Events {
			reason := strings.Fields(e + " _ _")[1]
			if reason == "SetPodTemplateRestartPolicy" || reason == "Error" || reason == "ImagePullBackOff" || reason == "Unschedulable" {
				checked["steps-with-template-or-abnormal-pod-events"]++
				break
			}
		}
		if len(ours.Events) > 0 {
			checked["steps-with-events"]++
		}
		if len(ours.Objects) > 0 {
			checked["steps-creating-children"]++
			if strings.Contains(fmt.Sprint(ours.Objects), `"sidecar"`) {
				checked["steps-creating-children-of-rich-templates"]++
			}
		}
		match := false
		for _, o := range outcomes {
			if sameOutcome(o, ours) {
				match = true
			}
		}
		if match {
			continue
		}
		var v19s []string
		for k := range outcomes {
			v19s = append(v19s, k)
		}
		sort.Strings(v19s)
		class, known := classifyReconcile(c, ours, outcomes)
		tl.add(class, known, finding{"reconcile", fmt.Sprintf("v1.9 %s\n      ours %s\n      pods %s", strings.Join(v19s, "\n       or "), ours.key(), podPhases(c.pods)+"\n      services "+serviceList(c.services)), c.jobJSON})
	}
	tl.report(t, fmt.Sprintf("whole reconcile step (TFJobReconciler.Reconcile): seed %d, %d steps", seed, count), checked)
}

func classifyReconcile(c fullCase, ours fullOutcome, v19 map[string]fullOutcome) (string, string) {
	for _, o := range v19 {
		if strings.Contains(o.Requeue, "index out of range [-1]") && (negativeIndex(c.pods) || negativeIndex(c.services)) {
			return "reconcile: v1.9 panics on a negative replica-index label", "R5"
		}
		// R2: v1.9's Reconcile fails after writing a terminal status without completionTime
		// (defect 3) when the job has a TTL; controller-runtime then retries with backoff.
		// libtfjob's plan has no error outcome: the same actions and status, requeue at 0 s.
		if strings.Contains(o.Requeue, "runtime error: index out of range") && createsBeyondReplicas(c.job, ours.Created) {
			return "reconcile: v1.9 panics (sparse TF_CONFIG of a pod beyond replicas: a type with replicas: 0 or a gap, enableDynamicWorker)", "R3"
		}
		// R4: the TTL deleted the job in this step (ttlSecondsAfterFinished 0 on a limit
		// failure); v1.9 then writes the status of the deleted object and fails with NotFound.
		if strings.HasPrefix(o.Requeue, "error: ") && strings.HasSuffix(o.Requeue, " not found") && o.JobDeleted && ours.JobDeleted {
			x, y := o, ours
			x.Requeue, y.Requeue = "", ""
			if x.key() == y.key() {
				return "reconcile: v1.9 writes the status of the TFJob it just deleted (NotFound), libtfjob does not", "R4"
			}
		}
		same := o
		same.Requeue = ours.Requeue
		if o.Requeue == "error: job completion time is nil, cannot cleanup" && ours.Requeue == "0" && same.key() == ours.key() {
			return "reconcile: v1.9 fails on a missing completionTime (TTL set), libtfjob requeues at 0 s", "R2"
		}
		if fmt.Sprint(o.Created) != fmt.Sprint(ours.Created) && zeroReplicaCreate(c, o, ours) {
			return "reconcile: the pod v1.9 creates for a type with replicas: 0 has no TF_CONFIG in libtfjob", "BUG-R1"
		}
		switch {
		case o.Requeue != ours.Requeue && strings.HasPrefix(o.Requeue, "error"):
			return "reconcile: v1.9 returns an error", ""
		case o.JobDeleted != ours.JobDeleted:
			return "reconcile: TFJob deletion differs", ""
		case fmt.Sprint(o.Created) != fmt.Sprint(ours.Created):
			return "reconcile: pods created differ", ""
		case fmt.Sprint(o.Deleted) != fmt.Sprint(ours.Deleted):
			return "reconcile: pods deleted differ", ""
		case fmt.Sprint(o.SvcCreated) != fmt.Sprint(ours.SvcCreated):
			return "reconcile: services created differ", ""
		case fmt.Sprint(o.SvcDeleted) != fmt.Sprint(ours.SvcDeleted):
			return "reconcile: services deleted differ", ""
		case fmt.Sprint(o.Conditions) != fmt.Sprint(ours.Conditions):
			return "reconcile: conditions differ", ""
		case o.Counts != ours.Counts:
			return "reconcile: replica counts differ", ""
		case o.Completion != ours.Completion:
			return "reconcile: completionTime differs", ""
		case fmt.Sprint(o.Events) != fmt.Sprint(ours.Events):
			return "reconcile: events differ", ""
		case fmt.Sprint(o.Objects) != fmt.Sprint(ours.Objects):
			return "reconcile: created objects differ (spec, labels, annotations or owner reference)", ""
		case fmt.Sprint(o.Adopted) != fmt.Sprint(ours.Adopted):
			return "reconcile: adopted children differ (controller references)", ""
		}
	}
	return "reconcile: requeue differs", ""
}
