package diff

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"regexp"
	"strconv"
	"strings"
	"time"

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// Children as a live cluster also shows them, besides the steady ones the generators make:
// pods and services being deleted (metadata.deletionTimestamp, in every phase), more than one
// child for one replica index, replica-index labels that are missing, not numbers, negative or
// beyond the replica count, and replica-type labels that are missing, unknown or not lower case.
// The generators of the step comparisons pass about a third of their cases through messUp.

const (
	labelType  = "training.kubeflow.org/replica-type"
	labelIndex = "training.kubeflow.org/replica-index"
	// holdFinalizer keeps an object being deleted in the fake client (controller-runtime's fake
	// client refuses an object with a deletionTimestamp and no finalizer, as the API server would
	// have removed it already).
	holdFinalizer = "diff.test/hold"
)

// messKinds names what messUp did to a case (for the "checked" counts of the report).
type messKinds map[string]bool

// messUp changes 1-3 of objs (pods or services of one job; replicas: the count of each lower-case
// type) and returns the new list; copies get new names (the fake client needs unique names).
func messUp[T client.Object](r *rand.Rand, objs []T, replicas map[string]int, now time.Time, kinds messKinds, kind string) []T {
	if len(objs) == 0 || r.Intn(3) > 0 {
		return objs
	}
	n := 1 + r.Intn(3)
	for k := 0; k < n; k++ {
		i := r.Intn(len(objs))
		o := objs[i]
		clone := func() T {
			c := o.DeepCopyObject().(T)
			c.SetName(fmt.Sprintf("%s-x%d", o.GetName(), k))
			objs = append(objs, c)
			return c
		}
		relabel := func(c T, key, value string, drop bool) {
			labels := map[string]string{}
			for k, v := range c.GetLabels() {
				labels[k] = v
			}
			if drop {
				delete(labels, key)
			} else {
				labels[key] = value
			}
			c.SetLabels(labels)
		}
		switch r.Intn(7) {
		case 0, 1, 2:
			if o.GetDeletionTimestamp() != nil {
				continue
			}
			ts := metav1.NewTime(now.Add(-5 * time.Second))
			o.SetDeletionTimestamp(&ts)
			o.SetFinalizers([]string{holdFinalizer})
			kinds[kind+"-being-deleted"] = true
		case 3:
			c := clone()
			if p, ok := any(c).(*corev1.Pod); ok && r.Intn(2) == 0 {
				// the second pod of the index in another phase
				p.Status.Phase = []corev1.PodPhase{corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded, corev1.PodFailed}[r.Intn(4)]
				if p.Status.Phase != corev1.PodFailed && len(p.Status.ContainerStatuses) > 0 {
					p.Status.ContainerStatuses[0].State = corev1.ContainerState{}
				}
			}
			kinds["two-"+kind+"s-for-one-index"] = true
		case 4, 5:
			var c T
			if r.Intn(2) == 0 {
				c = clone()
			} else {
				c = o
			}
			rt := c.GetLabels()[labelType]
			switch v := r.Intn(10); {
			case v == 0:
				relabel(c, labelIndex, "", true)
				kinds[kind+"-index-missing"] = true
			case v <= 3:
				relabel(c, labelIndex, []string{"", "x", "1.5", "0x1", "1e1", " 1", "01", "+1"}[r.Intn(8)], false)
				kinds[kind+"-index-not-a-number"] = true
			case v == 4:
				// not a valid label value, so no API server holds it; v1.9 panics on it (R5)
				relabel(c, labelIndex, "-1", false)
				kinds[kind+"-index-negative"] = true
			default:
				relabel(c, labelIndex, strconv.Itoa(replicas[rt]+r.Intn(3)), false)
				kinds[kind+"-index-out-of-range"] = true
			}
		case 6:
			c := clone()
			rt := c.GetLabels()[labelType]
			if rt == "" {
				rt = "worker"
			}
			switch r.Intn(4) {
			case 0:
				relabel(c, labelType, "", true)
				kinds[kind+"-type-missing"] = true
			case 1:
				relabel(c, labelType, "foo", false)
				kinds[kind+"-type-unknown"] = true
			case 2:
				relabel(c, labelType, strings.ToUpper(rt[:1])+rt[1:], false)
				kinds[kind+"-type-not-lower-case"] = true
			case 3:
				relabel(c, labelType, "", false)
				kinds[kind+"-type-empty"] = true
			}
		}
	}
	return objs
}

// beingDeleted: the names of the objects with a deletionTimestamp.
func beingDeleted[T client.Object](objs []T) map[string]bool {
	out := map[string]bool{}
	for _, o := range objs {
		if o.GetDeletionTimestamp() != nil {
			out[o.GetName()] = true
		}
	}
	return out
}

// negativeIndex: some object has a negative replica-index label (v1.9 panics: R5).
func negativeIndex[T client.Object](objs []T) bool {
	for _, o := range objs {
		if v, err := strconv.Atoi(o.GetLabels()[labelIndex]); err == nil && v < 0 {
			return true
		}
	}
	return false
}

// withoutNames: names less those in drop (v1.9 deletes objects already being deleted again; libtfjob
// does not, intended difference E2).
func withoutNames(names []string, drop map[string]bool) []string {
	var out []string
	for _, n := range names {
		if !drop[n] {
			out = append(out, n)
		}
	}
	return out
}

// libtfjobOnlyEvent: the Warning events libtfjob records where v1.9 only logs (intended difference E1).
func libtfjobOnlyEvent(e string) bool {
	f := strings.Fields(e + " _ _")
	return f[0] == "Warning" && (f[1] == "InvalidReplicaIndex" || f[1] == "InvalidReplicaType" || f[1] == "TooManyPods" || f[1] == "TooManyServices")
}

var createdIndexType = regexp.MustCompile(`replica-index=(\d+),training\.kubeflow\.org/replica-type=(\w+) `)

// createsBeyondReplicas: with enableDynamicWorker, one of the created pods (podSummaryOf texts) has
// an index at or beyond its type's replicas (replicas: 0, or a gap below a stray index): v1.9
// panics building its sparse TF_CONFIG there (R3).
func createsBeyondReplicas(job *kubeflowv1.TFJob, created []string) bool {
	if !job.Spec.EnableDynamicWorker {
		return false
	}
	for _, c := range created {
		m := createdIndexType.FindStringSubmatch(c)
		if m == nil {
			continue
		}
		idx, _ := strconv.Atoi(m[1])
		for rt, spec := range job.Spec.TFReplicaSpecs {
			if strings.ToLower(string(rt)) == m[2] && spec.Replicas != nil && idx >= int(*spec.Replicas) {
				return true
			}
		}
	}
	return false
}

// mixOwners gives each child a uid ("uid-" + its name) and turns about one in eight into an orphan
// (no owner reference: v1.9 ignores such pods and adopts such services) and one in eight into
// another object's child (a controller reference of another uid: ignored by both).
func mixOwners[T client.Object](r *rand.Rand, objs []T, kinds messKinds, kind string) {
	truth := true
	for _, o := range objs {
		o.SetUID(types.UID("uid-" + o.GetName()))
		switch r.Intn(8) {
		case 0:
			o.SetOwnerReferences(nil)
			kinds[kind+"-orphan"] = true
		case 1:
			o.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: "other",
				UID: "other-uid", Controller: &truth}})
			kinds[kind+"-of-another-owner"] = true
		}
	}
}

// patchedChildren: "Kind name" of each child a v1.9 fake control patched (adoption: the patch
// names the child by its uid).
func patchedChildren[T client.Object](kind string, patches [][]byte, objs []T) []string {
	var out []string
	for _, p := range patches {
		var patch struct {
			Metadata struct {
				UID string `json:"uid"`
			} `json:"metadata"`
		}
		_ = json.Unmarshal(p, &patch)
		name := "uid " + patch.Metadata.UID
		for _, o := range objs {
			if string(o.GetUID()) == patch.Metadata.UID {
				name = o.GetName()
			}
		}
		out = append(out, kind+" "+name)
	}
	return out
}
