package diff

import (
	"context"
	"encoding/json"
	"fmt"
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
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	k8sschema "k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	schedulinglisters "k8s.io/client-go/listers/scheduling/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	schedulerpluginsv1alpha1 "sigs.k8s.io/scheduler-plugins/apis/scheduling/v1alpha1"
	volcanov1beta1 "volcano.sh/apis/pkg/apis/scheduling/v1beta1"
)

// Gang scheduling: v1.9's TFJobReconciler.Reconcile with its JobController configured as
// GenVolcanoSetupFunc / GenSchedulerPluginsSetupFunc do (Config.GangScheduling and the real
// VolcanoControl / SchedulerPluginsControl for decorating pods, the scheduler name and the
// volcano delay rule), the PodGroup API calls recorded, and a PriorityClass lister holding the
// cluster's classes; against one libtfjob planner step with the same gang scheduler
// (tfjob_render_options.gang_scheduler, scheduler_name, priority_cb) and the same observed
// PodGroup (tfjob_plan_options.pod_group_json). Compared: the PodGroup v1.9 creates (name,
// namespace, annotations, owner reference, spec) with the plan's create action, or the spec it
// writes into an existing one with the plan's patch applied to it; none written on either side;
// the pods created in full (schedulerName, annotations, labels and all; none while a volcano
// PodGroup is new or Pending: the plan's wait); the events (with the executor's
// SuccessfulDeletePodGroup after the plan's delete of a finished job's PodGroup).

// recPodGroups is v1.9's real PodGroup control with its API calls recorded instead of sent.
type recPodGroups struct {
	control.PodGroupControlInterface
	existing client.Object
	written  []client.Object // created or updated
	deleted  bool
}

func (p *recPodGroups) GetPodGroup(namespace, name string) (metav1.Object, error) {
	if p.existing == nil {
		return nil, apierrors.NewNotFound(k8sschema.GroupResource{Group: "scheduling", Resource: "podgroups"}, name)
	}
	return p.existing.DeepCopyObject().(metav1.Object), nil
}

func (p *recPodGroups) CreatePodGroup(pg client.Object) error {
	p.written = append(p.written, pg.DeepCopyObject().(client.Object))
	p.existing = pg
	return nil
}

func (p *recPodGroups) UpdatePodGroup(pg client.Object) error {
	p.written = append(p.written, pg.DeepCopyObject().(client.Object))
	p.existing = pg
	return nil
}

func (p *recPodGroups) DeletePodGroup(namespace, name string) error {
	p.deleted = true
	return nil
}

var gangPriorityClasses = map[string]int32{"high": 1000, "low": 10, "below-zero": -5} // as gang_cgo.go's diff_priority

func priorityLister() schedulinglisters.PriorityClassLister {
	idx := cache.NewIndexer(cache.MetaNamespaceKeyFunc, cache.Indexers{})
	for name, v := range gangPriorityClasses {
		_ = idx.Add(&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Value: v})
	}
	return schedulinglisters.NewPriorityClassLister(idx)
}

type gangCase struct {
	job       *kubeflowv1.TFJob
	jobJSON   []byte
	pods      []*corev1.Pod
	now       time.Time
	gang      int
	scheduler string // scheduler-plugins: the gang scheduler name (v1.9's --gang-scheduler-name)
	existing  bool   // a PodGroup exists already
	group     client.Object // the existing PodGroup (volcano: Running or Pending)
	finished  bool   // the job has succeeded: v1.9 deletes the PodGroup
}

func genGangCase(r *rand.Rand, i int) gangCase {
	now := time.Now().Truncate(time.Second)
	name := fmt.Sprintf("gang-%d", i)
	specs := map[string]any{}
	all := []string{"Chief", "PS", "Worker", "Evaluator"}
	for len(specs) < 1+r.Intn(2) {
		res := func() map[string]any {
			m := map[string]any{}
			for _, k := range []string{"cpu", "memory", "nvidia.com/gpu"} {
				if r.Intn(2) == 0 {
					m[k] = map[string][]string{"cpu": {"500m", "1", "2", "0.25", "1500m"}, "memory": {"1Gi", "512Mi", "1G", "100M"},
						"nvidia.com/gpu": {"1", "2"}}[k][r.Intn(map[string]int{"cpu": 5, "memory": 4, "nvidia.com/gpu": 2}[k])]
				}
			}
			return m
		}
		c := map[string]any{"name": "tensorflow", "image": "tf:1"}
		resources := map[string]any{}
		if req := res(); len(req) > 0 && r.Intn(4) > 0 {
			// never "requests": {}: the fake client stores the typed job, whose JSON (omitempty)
			// drops it, while an API server keeps it and v1.9 then ignores the limits (as libtfjob)
			resources["requests"] = req
		}
		if r.Intn(3) == 0 {
			resources["limits"] = res()
		}
		if len(resources) > 0 {
			c["resources"] = resources
		}
		containers := []any{c}
		if r.Intn(4) == 0 {
			containers = append(containers, map[string]any{"name": "sidecar", "image": "busybox",
				"resources": map[string]any{"requests": map[string]any{"cpu": "100m"}}})
		}
		podSpec := map[string]any{"containers": containers}
		if pc := []string{"", "", "high", "low", "below-zero", "unknown-class"}[r.Intn(6)]; pc != "" {
			podSpec["priorityClassName"] = pc
		}
		if sn := []string{"", "", "", "volcano", "scheduler-plugins-scheduler", "other-scheduler"}[r.Intn(6)]; sn != "" {
			podSpec["schedulerName"] = sn
		}
		tmpl := map[string]any{"spec": podSpec}
		if r.Intn(3) == 0 {
			tmpl["metadata"] = map[string]any{"annotations": map[string]any{"note": "kept"}, "labels": map[string]any{"app": "tf"}}
		}
		specs[all[r.Intn(len(all))]] = map[string]any{"replicas": 1 + r.Intn(3),
			"restartPolicy": []string{"OnFailure", "Never", "ExitCode"}[r.Intn(3)], "template": tmpl}
	}
	rp := map[string]any{"cleanPodPolicy": "None"}
	if r.Intn(4) > 0 {
		sp := map[string]any{}
		if r.Intn(2) == 0 {
			sp["minAvailable"] = r.Intn(6)
		}
		if r.Intn(2) == 0 {
			sp["queue"] = []string{"q1", "research"}[r.Intn(2)]
		}
		if r.Intn(2) == 0 {
			sp["priorityClass"] = []string{"high", "low", "unknown-class"}[r.Intn(3)]
		}
		if r.Intn(3) == 0 {
			sp["minResources"] = map[string]any{"cpu": []string{"3", "2500m"}[r.Intn(2)], "memory": "4Gi"}
		}
		if r.Intn(2) == 0 {
			sp["scheduleTimeoutSeconds"] = []int{0, 30, 600}[r.Intn(3)]
		}
		rp["schedulingPolicy"] = sp
	}
	meta := map[string]any{"name": name, "namespace": "ns", "uid": "uid-" + name, "resourceVersion": "1"}
	if r.Intn(3) == 0 {
		meta["annotations"] = map[string]any{"team": "ml", "scheduling.k8s.io/group-name": "x"}
	}
	t0 := "2020-01-01T00:00:00Z"
	status := map[string]any{"conditions": []any{map[string]any{"type": "Created", "status": "True", "reason": "TFJobCreated",
		"message": "TFJob " + name + " is created.", "lastUpdateTime": t0, "lastTransitionTime": t0}},
		"startTime": now.Add(-10 * time.Second).UTC().Format(time.RFC3339)}
	finished := r.Intn(6) == 0
	if finished {
		status["conditions"] = append(status["conditions"].([]any), map[string]any{"type": "Succeeded", "status": "True",
			"reason": "TFJobSucceeded", "message": "done", "lastUpdateTime": t0, "lastTransitionTime": t0})
		status["completionTime"] = now.Add(-5 * time.Second).UTC().Format(time.RFC3339)
	}
	jobMap := map[string]any{"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": meta,
		"spec": map[string]any{"tfReplicaSpecs": specs, "runPolicy": rp}, "status": status}
	data, _ := json.Marshal(jobMap)
	job, err := v19Decode(data)
	if err != nil {
		panic(err)
	}
	kubeflowv1.SetDefaults_TFJob(job)
	c := gangCase{job: job, jobJSON: data, now: now, gang: gangVolcano, existing: r.Intn(2) == 0, finished: finished}
	if r.Intn(2) == 0 {
		c.gang = gangSchedulerPlugins
		c.scheduler = []string{"scheduler-plugins-scheduler", "my-gang"}[r.Intn(2)]
	}
	if c.existing && c.gang == gangVolcano {
		phase := volcanov1beta1.PodGroupRunning
		if r.Intn(3) == 0 {
			phase = volcanov1beta1.PodGroupPending
		}
		c.group = &volcanov1beta1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
			Status: volcanov1beta1.PodGroupStatus{Phase: phase}}
	} else if c.existing {
		c.group = &schedulerpluginsv1alpha1.PodGroup{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "ns"},
			Spec: schedulerpluginsv1alpha1.PodGroupSpec{MinMember: 99}}
	}
	// some pods exist already (Running), the others are created
	truth := true
	for _, ty := range sortedKeys(specs) {
		n := int(*job.Spec.TFReplicaSpecs[kubeflowv1.ReplicaType(ty)].Replicas)
		for idx := 0; idx < n; idx++ {
			if r.Intn(3) > 0 {
				continue
			}
			labels := map[string]string{"training.kubeflow.org/operator-name": "tfjob-controller", "training.kubeflow.org/job-name": name,
				labelType: strings.ToLower(ty), labelIndex: fmt.Sprint(idx)}
			c.pods = append(c.pods, &corev1.Pod{TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
				ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("%s-%s-%d", name, strings.ToLower(ty), idx), Namespace: "ns", Labels: labels,
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubeflow.org/v1", Kind: "TFJob", Name: name, UID: job.UID,
						Controller: &truth, BlockOwnerDeletion: &truth}}},
				Status: corev1.PodStatus{Phase: corev1.PodRunning, ContainerStatuses: []corev1.ContainerStatus{{Name: "tensorflow"}}}})
		}
	}
	return c
}

type gangOutcome struct {
	PodGroup string   // the PodGroup written (JSON of the compared fields), "" when none
	Objects  []string // created pods in full (objectText), sorted
	Events   []string
	Deleted  bool // PodGroup deleted
	Requeue  string
}

// pgFields is the part of a PodGroup both sides write: name, namespace, annotations, owner
// references and spec, as JSON-decoded values.
func pgFields(obj any) map[string]any {
	data, _ := json.Marshal(obj)
	var m map[string]any
	_ = json.Unmarshal(data, &m)
	meta, _ := m["metadata"].(map[string]any)
	out := map[string]any{"spec": m["spec"], "metadata": map[string]any{}}
	for _, k := range []string{"name", "namespace", "annotations", "ownerReferences"} {
		if v, ok := meta[k]; ok {
			out["metadata"].(map[string]any)[k] = v
		}
	}
	return out
}

func v19Gang(t *testing.T, c gangCase) (gangOutcome, map[string]any) {
	objs := []client.Object{c.job.DeepCopy()}
	for _, p := range c.pods {
		objs = append(objs, p.DeepCopy())
	}
	cl := fake.NewClientBuilder().WithScheme(statusScheme).WithObjects(objs...).WithStatusSubresource(&kubeflowv1.TFJob{}).Build()
	r := &tfcontroller.TFJobReconciler{Client: cl, Scheme: statusScheme, Log: logr.Discard()}
	rec := record.NewFakeRecorder(100000)
	setUnexported(r, "recorder", record.EventRecorder(rec))
	setUnexported(r, "apiReader", client.Reader(cl))
	pc := &control.FakePodControl{}
	pg := &recPodGroups{}
	var cfg common.JobControllerConfiguration
	if c.gang == gangVolcano {
		cfg.GangScheduling = common.GangSchedulerVolcano
		pg.PodGroupControlInterface = control.NewVolcanoControl(nil)
	} else {
		cfg.GangScheduling = common.GangScheduler(c.scheduler)
		pg.PodGroupControlInterface = control.NewSchedulerPluginsControl(nil, c.scheduler)
	}
	if c.group != nil {
		pg.existing = c.group.DeepCopyObject().(client.Object)
	}
	r.JobController = common.JobController{Controller: r, Config: cfg, Expectations: expectation.NewControllerExpectations(),
		WorkQueue: &commonutil.FakeWorkQueue[string]{}, Recorder: rec, PodControl: pc, ServiceControl: &control.FakeServiceControl{},
		PodGroupControl: pg, PriorityClassLister: priorityLister()}
	var err error
	if perr := catch(func() {
		_, err = r.Reconcile(context.Background(), ctrl.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: c.job.Name}})
	}); perr != nil {
		return gangOutcome{Requeue: "panic: " + firstLine(perr.Error())}, nil
	}
	o := gangOutcome{Events: recorderEvents(rec), Deleted: pg.deleted}
	if err != nil {
		o.Requeue = "error: " + err.Error()
	}
	for i, tpl := range pc.Templates {
		o.Objects = append(o.Objects, objectText("Pod", tpl.Name, tpl.Labels, tpl.Annotations, pc.ControllerRefs[i], tpl.Spec))
	}
	sort.Strings(o.Objects)
	var written map[string]any
	if n := len(pg.written); n > 0 {
		written = pgFields(pg.written[n-1])
		data, _ := json.Marshal(written)
		o.PodGroup = string(data)
	}
	return o, written
}

// mergePatch applies a JSON merge patch (RFC 7386) to dst.
func mergePatch(dst, patch map[string]any) {
	for k, v := range patch {
		if v == nil {
			delete(dst, k)
		} else if pm, ok := v.(map[string]any); ok {
			dm, ok := dst[k].(map[string]any)
			if !ok {
				dm = map[string]any{}
				dst[k] = dm
			}
			mergePatch(dm, pm)
		} else {
			dst[k] = v
		}
	}
}

// oursGangStep is one libtfjob planner step with the case's gang scheduler and observed PodGroup:
// the PodGroup its create or patch action writes (the patch applied to the observed one), the pods
// it creates, its events (with the executor's outcome events), whether it waits and deletes.
func oursGangStep(t *testing.T, c gangCase) (gangOutcome, map[string]any, bool) {
	var observed []byte
	if c.group != nil {
		observed, _ = json.Marshal(c.group)
	}
	p, err := oursGang(c.jobJSON, marshalOrNil(c.pods), observed, c.now, c.gang, c.scheduler)
	if err != nil {
		t.Fatalf("%v: %s", err, c.jobJSON)
	}
	o := gangOutcome{Events: planEvents(p)}
	var written map[string]any
	wait := false
	for _, a := range p.Actions {
		switch {
		case a.Action == "create" && a.Kind == "Pod":
			data, _ := json.Marshal(a.Object)
			var pod corev1.Pod
			_ = json.Unmarshal(data, &pod)
			o.Objects = append(o.Objects, objectText("Pod", pod.Name, pod.Labels, pod.Annotations, ownerOf(pod.OwnerReferences), pod.Spec))
		case a.Action == "create" && a.Kind == "PodGroup":
			written = pgFields(a.Object)
		case a.Action == "patch" && a.Kind == "PodGroup":
			var group map[string]any
			_ = json.Unmarshal(observed, &group)
			mergePatch(group, a.Patch)
			written = pgFields(group)
		case a.Action == "delete" && a.Kind == "PodGroup":
			o.Deleted = true
		case a.Action == "wait":
			wait = true
		}
	}
	sort.Strings(o.Objects)
	if written != nil {
		data, _ := json.Marshal(written)
		o.PodGroup = string(data)
	}
	return o, written, wait
}

func TestGangScheduling(t *testing.T) {
	seed, r, count := seededRun(10)
	tl := newTally()
	checked := map[string]int{}
	for i := 0; i < count; i++ {
		c := genGangCase(r, i)
		ours, ourpg, wait := oursGangStep(t, c)
		kind := "volcano"
		if c.gang == gangSchedulerPlugins {
			kind = "scheduler-plugins"
		}
		checked["steps-"+kind]++
		if c.job.Spec.RunPolicy.SchedulingPolicy != nil {
			checked["steps-with-schedulingPolicy"]++
		}
		switch {
		case c.finished:
			checked["steps-of-a-finished-job"]++
		case c.existing:
			checked["steps-updating-a-podgroup"]++
		default:
			checked["steps-creating-a-podgroup"]++
		}
		if wait {
			checked["steps-where-pods-wait-"+kind]++
		}
		// v1.9 sorts the replica types by priority with sort.Sort over a Go map's order, so types of
		// equal priority give minResources in either order: run v1.9 again (up to 32 times in all)
		// while its outcome differs from libtfjob's.
		var class, detail string
		for run := 0; run < 32; run++ {
			class, detail = compareGang(t, c, kind, ours, ourpg, checked, run == 0)
			if class == "" && wait && len(ours.Objects) > 0 {
				class, detail = kind+": libtfjob waits and creates pods", fmt.Sprint(ours.Objects)
			}
			if class == "" {
				if run > 0 {
					checked["steps-where-v1.9-depends-on-map-order"]++
				}
				break
			}
		}
		if class != "" {
			tl.add(class, "", finding{"gang", detail, c.jobJSON})
		}
	}
	tl.report(t, fmt.Sprintf("gang scheduling (Reconcile with volcano / scheduler-plugins): seed %d, %d steps", seed, count), checked)
}

// compareGang runs v1.9 once on c and compares with libtfjob's outcome: the class of the
// disagreement ("" when none) and its description.
func compareGang(t *testing.T, c gangCase, kind string, ours gangOutcome, ourpg map[string]any, checked map[string]int, count bool) (string, string) {
	v19, v19pg := v19Gang(t, c)
	detail := fmt.Sprintf("v1.9 podgroup %s\n      ours podgroup %s\n      v1.9 pods %v events %q requeue %q\n      ours pods %v events %q",
		v19.PodGroup, ours.PodGroup, v19.Objects, v19.Events, v19.Requeue, ours.Objects, ours.Events)
	if (v19pg == nil) != (ourpg == nil) {
		return kind + ": one side writes a PodGroup, the other does not", detail
	}
	var diffs []string
	if c.existing && v19pg != nil {
		// an update: v1.9 writes the spec into the PodGroup it read (libtfjob's plan patches the
		// spec); its metadata is the existing object's
		diffJSON("podgroup.spec", v19pg["spec"], ourpg["spec"], &diffs)
	} else if v19pg != nil {
		diffJSON("podgroup", v19pg, ourpg, &diffs)
	}
	if count && c.gang == gangVolcano && !c.finished && len(v19.Objects) == 0 && len(ours.Objects) == 0 {
		checked["steps-volcano-pods-delayed"]++
	} else if count && len(v19.Objects) > 0 {
		checked["steps-creating-pods-"+kind]++
	}
	switch {
	case v19.Requeue != "":
		return kind + ": v1.9 fails the step", detail
	case len(diffs) > 0:
		return kind + ": PodGroup differs", strings.Join(diffs, "\n      ") + "\n      " + detail
	case fmt.Sprint(v19.Objects) != fmt.Sprint(ours.Objects):
		return kind + ": created pods differ", detail
	case fmt.Sprint(v19.Events) != fmt.Sprint(ours.Events):
		return kind + ": events differ", detail
	}
	return "", ""
}
