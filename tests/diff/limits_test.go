package diff

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"sort"
	"strings"
	"testing"
	"time"

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	"github.com/kubeflow/training-operator/pkg/controller.v1/common"
	"github.com/kubeflow/training-operator/pkg/controller.v1/control"
	"github.com/kubeflow/training-operator/pkg/core"
	trainutil "github.com/kubeflow/training-operator/pkg/util"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The limit rules and the cleanup set, driven through v1.9's exported functions:
//   - core.PastBackoffLimit (sum of restartCounts of Running pods of OnFailure/Always/ExitCode
//     replicas against runPolicy.backoffLimit) and core.PastActiveDeadline, with backoff taking
//     precedence as in JobController.ReconcileJobs; the steps have no Failed pod, so
//     ReconcileJobs' requeue-based rule (a new failure) cannot fire and is not exercised here;
//   - JobController.DeletePodsAndServices on fake pod/service controls: what a limit failure
//     deletes (v1.9.4's ReconcileJobs sets the Failed condition first, with
//     trainutil.UpdateJobConditions, so cleanPodPolicy decides: the fix of kubeflow/trainer
//     issue 3419) and what cleanPodPolicy deletes once the job has finished;
// against one libtfjob planner step (PlanStep, compat training-operator-1.9) on the same job,
// pods and services: its Failed condition (message) and its delete actions.

type limitCase struct {
	job      *kubeflowv1.TFJob // defaulted
	jobJSON  []byte
	pods     []*corev1.Pod
	services []map[string]any
}

var limitTypes = []string{"Chief", "PS", "Worker", "Evaluator"}

func genLimitCase(r *rand.Rand, i int, finished bool, now time.Time) limitCase {
	name := fmt.Sprintf("lim-%d", i)
	specs := map[string]any{}
	for _, t := range limitTypes {
		if (t == "Worker" && r.Intn(5) > 0) || r.Intn(3) == 0 {
			specs[t] = map[string]any{
				"replicas":      1 + r.Intn(3),
				"restartPolicy": []string{"OnFailure", "Always", "ExitCode", "Never"}[r.Intn(4)],
				"template": map[string]any{"spec": map[string]any{"containers": []any{
					map[string]any{"name": "tensorflow", "image": "tf:1"}}}},
			}
		}
	}
	if len(specs) == 0 {
		specs["Worker"] = map[string]any{"replicas": 2, "restartPolicy": "OnFailure", "template": map[string]any{
			"spec": map[string]any{"containers": []any{map[string]any{"name": "tensorflow", "image": "tf:1"}}}}}
	}
	rp := map[string]any{"cleanPodPolicy": []string{"All", "Running", "None"}[r.Intn(3)]}
	if r.Intn(3) > 0 {
		rp["backoffLimit"] = r.Intn(5)
	}
	deadline := 0
	if r.Intn(2) == 0 {
		deadline = 10 + r.Intn(90)
		rp["activeDeadlineSeconds"] = deadline
	}
	// startTime well before or after the deadline (never within 2 s of it: v1.9 reads the clock).
	age := 5 + r.Intn(200)
	if deadline > 0 && age >= deadline-2 && age <= deadline+2 {
		age = deadline + 3
	}
	status := map[string]any{
		"startTime": now.Add(-time.Duration(age) * time.Second).UTC().Format(time.RFC3339),
		"conditions": []any{
			map[string]any{"type": "Created", "status": "True", "reason": "TFJobCreated", "message": "c",
				"lastUpdateTime": "2020-01-01T00:00:00Z", "lastTransitionTime": "2020-01-01T00:00:00Z"},
			map[string]any{"type": "Running", "status": "True", "reason": "TFJobRunning", "message": "r",
				"lastUpdateTime": "2020-01-01T00:00:00Z", "lastTransitionTime": "2020-01-01T00:00:00Z"},
		},
	}
	if finished {
		ct := []string{"Succeeded", "Failed"}[r.Intn(2)]
		status["conditions"] = append(status["conditions"].([]any), map[string]any{"type": ct, "status": "True",
			"reason": "TFJob" + ct, "message": "done", "lastUpdateTime": "2020-01-01T00:00:00Z",
			"lastTransitionTime": "2020-01-01T00:00:00Z"})
		status["completionTime"] = now.Add(-time.Second).UTC().Format(time.RFC3339)
	}
	job := map[string]any{"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
		"metadata": map[string]any{"name": name, "namespace": "ns", "uid": "uid-" + name},
		"spec":     map[string]any{"runPolicy": rp, "tfReplicaSpecs": specs}, "status": status}
	data, _ := json.Marshal(job)
	v19, err := v19Decode(data)
	if err != nil {
		panic(err)
	}
	kubeflowv1.SetDefaults_TFJob(v19)

	c := limitCase{job: v19, jobJSON: data}
	phases := []corev1.PodPhase{corev1.PodRunning, corev1.PodRunning, corev1.PodRunning, corev1.PodPending, corev1.PodSucceeded}
	if finished {
		phases = append(phases, corev1.PodFailed)
	}
	types := make([]string, 0, len(specs))
	for t := range specs {
		types = append(types, t)
	}
	sort.Strings(types)
	truth := true
	for _, t := range types {
		n := int(*v19.Spec.TFReplicaSpecs[kubeflowv1.ReplicaType(t)].Replicas)
		for idx := 0; idx < n; idx++ {
			pname := fmt.Sprintf("%s-%s-%d", name, strings.ToLower(t), idx)
			labels := map[string]string{
				"training.kubeflow.org/operator-name": "tfjob-controller",
				"training.kubeflow.org/job-name":      name,
				"training.kubeflow.org/replica-type":  strings.ToLower(t),
				"training.kubeflow.org/replica-index": fmt.Sprint(idx),
			}
			p := &corev1.Pod{
				TypeMeta: metav1.TypeMeta{APIVersion: "v1", Kind: "Pod"},
				ObjectMeta: metav1.ObjectMeta{Name: pname, Namespace: "ns", Labels: labels,
					OwnerReferences: []metav1.OwnerReference{{APIVersion: "kubeflow.org/v1", Kind: "TFJob", Name: name,
						UID: v19.UID, Controller: &truth, BlockOwnerDeletion: &truth}}},
				Status: corev1.PodStatus{Phase: phases[r.Intn(len(phases))]},
			}
			restarts := 0
			if r.Intn(4) == 0 {
				restarts = r.Intn(3)
			}
			p.Status.ContainerStatuses = []corev1.ContainerStatus{{Name: "tensorflow", RestartCount: int32(restarts)}}
			if p.Status.Phase == corev1.PodSucceeded {
				p.Status.ContainerStatuses[0].State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 0}
			}
			if p.Status.Phase == corev1.PodFailed {
				p.Status.ContainerStatuses[0].State.Terminated = &corev1.ContainerStateTerminated{ExitCode: 1}
			}
			if r.Intn(8) == 0 {
				p.Status.InitContainerStatuses = []corev1.ContainerStatus{{Name: "init", RestartCount: int32(r.Intn(2))}}
			}
			c.pods = append(c.pods, p)
			c.services = append(c.services, map[string]any{"apiVersion": "v1", "kind": "Service",
				"metadata": map[string]any{"name": pname, "namespace": "ns", "labels": labels,
					"ownerReferences": p.OwnerReferences},
				"spec": map[string]any{"clusterIP": "None", "selector": labels}})
		}
	}
	return c
}

// v19Deletes runs DeletePodsAndServices on fake controls and returns "Pod/name" and "Service/name".
func v19Deletes(c limitCase, status kubeflowv1.JobStatus) ([]string, error) {
	pc := &control.FakePodControl{}
	sc := &control.FakeServiceControl{}
	jc := &common.JobController{PodControl: pc, ServiceControl: sc}
	if err := jc.DeletePodsAndServices(c.job, &c.job.Spec.RunPolicy, status, c.pods); err != nil {
		return nil, err
	}
	var out []string
	for _, n := range pc.DeletePodName {
		out = append(out, "Pod/"+n)
	}
	for _, n := range sc.DeleteServiceName {
		out = append(out, "Service/"+n)
	}
	sort.Strings(out)
	return out, nil
}

func oursStep(t *testing.T, c limitCase, now time.Time) (failedMsg string, deletes []string) {
	p := oursPlan(t, c.jobJSON, c.pods, c.services, now)
	for _, a := range p.Actions {
		if a.Action == "delete" && (a.Kind == "Pod" || a.Kind == "Service") {
			deletes = append(deletes, a.Kind+"/"+a.Name)
		}
	}
	sort.Strings(deletes)
	conds, _ := p.Status["conditions"].([]any)
	for _, cv := range conds {
		cm, _ := cv.(map[string]any)
		if cm["type"] == "Failed" && cm["status"] == "True" {
			failedMsg, _ = cm["message"].(string)
		}
	}
	return failedMsg, deletes
}

func TestLimitsAndCleanup(t *testing.T) {
	seed, r, count := seededRun(2)
	tl := newTally()
	checked := map[string]int{}
	for i := 0; i < count; i++ {
		now := time.Now().Truncate(time.Second)
		finished := i%2 == 1
		c := genLimitCase(r, i, finished, now)
		gotMsg, gotDel := oursStep(t, c, now)
		if finished {
			// Cleanup once finished: cleanPodPolicy decides (v1.9 ReconcileJobs' first branch).
			want, err := v19Deletes(c, c.job.Status)
			if err != nil {
				t.Fatal(err)
			}
			checked["cleanup"]++
			if strings.Join(want, ",") != strings.Join(gotDel, ",") {
				tl.add("cleanup set", "", finding{"cleanup", fmt.Sprintf("cleanPodPolicy %s: v1.9 deletes %v, ours %v",
					*c.job.Spec.RunPolicy.CleanPodPolicy, want, gotDel), c.jobJSON})
			}
			continue
		}
		// Limits (job running): the v1.9 decision from its exported rule functions.
		backoff, err := core.PastBackoffLimit(c.job.Name, &c.job.Spec.RunPolicy, c.job.Spec.TFReplicaSpecs, c.pods, core.FilterPodsForReplicaType)
		if err != nil {
			t.Fatal(err)
		}
		wantMsg := ""
		if backoff {
			wantMsg = fmt.Sprintf("Job %s has failed because it has reached the specified backoff limit", c.job.Name)
		} else if core.PastActiveDeadline(&c.job.Spec.RunPolicy, c.job.Status) {
			wantMsg = fmt.Sprintf("Job %s has failed because it was active longer than specified deadline", c.job.Name)
		}
		checked["limits"]++
		if wantMsg != gotMsg {
			tl.add("limit decision", "", finding{"limits", fmt.Sprintf("v1.9 %q, ours %q (pods %s)", wantMsg, gotMsg, podSummary(c.pods)), c.jobJSON})
			continue
		}
		if wantMsg != "" {
			// v1.9.4: Failed before the cleanup (v1.9.2 cleaned up first and deleted every pod)
			status := c.job.Status.DeepCopy()
			trainutil.UpdateJobConditions(status, kubeflowv1.JobFailed, corev1.ConditionTrue,
				trainutil.NewReason(kubeflowv1.TFJobKind, trainutil.JobFailedReason), wantMsg)
			want, err := v19Deletes(c, *status)
			if err != nil {
				t.Fatal(err)
			}
			checked["limit-deletes"]++
			if strings.Join(want, ",") != strings.Join(gotDel, ",") {
				tl.add("limit deletes", "", finding{"limits", fmt.Sprintf("v1.9 deletes %v, ours %v", want, gotDel), c.jobJSON})
			}
		}
	}
	tl.report(t, fmt.Sprintf("limits and cleanup: seed %d, %d steps", seed, count), checked)
}

func podSummary(pods []*corev1.Pod) string {
	var b strings.Builder
	for _, p := range pods {
		n := int32(0)
		for _, s := range p.Status.ContainerStatuses {
			n += s.RestartCount
		}
		for _, s := range p.Status.InitContainerStatuses {
			n += s.RestartCount
		}
		fmt.Fprintf(&b, "%s:%s:%d ", p.Name, p.Status.Phase, n)
	}
	return b.String()
}
