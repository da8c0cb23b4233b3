package diff

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/kubeflow/training-operator/pkg/webhooks/tensorflow"
	tfjob "github.com/libtfjob/libtfjob/bindings/go/tfjob"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Update validation: v1.9's webhook ValidateUpdate(old, new) (managedBy is immutable, plus the
// create rules on the new object) against libtfjob's ValidateWith{Old}. Pairs differ in
// runPolicy.managedBy only (set, unset, changed); schedulingPolicy.queue stays the same, because
// its immutability is a CEL rule of the CRD that this harness does not evaluate.
func TestUpdateValidation(t *testing.T) {
	seed, r, count := seededRun(4)
	values := []string{absent, "kubeflow.org/training-operator", "kueue.x-k8s.io/multikueue", "example.com/other", ""}
	mk := func(managedBy string) []byte {
		rp := map[string]any{"schedulingPolicy": map[string]any{"queue": "q"}}
		if managedBy != absent {
			rp["managedBy"] = managedBy
		}
		job := map[string]any{"apiVersion": "kubeflow.org/v1", "kind": "TFJob",
			"metadata": map[string]any{"name": "upd", "namespace": "ns"},
			"spec": map[string]any{"runPolicy": rp, "tfReplicaSpecs": map[string]any{"Worker": map[string]any{
				"replicas": 2, "template": map[string]any{"spec": map[string]any{"containers": []any{
					map[string]any{"name": "tensorflow", "image": "tf"}}}}}}}}
		data, _ := json.Marshal(job)
		return data
	}
	tl := newTally()
	checked := map[string]int{}
	for i := 0; i < count; i++ {
		oldData, newData := mk(values[r.Intn(len(values))]), mk(values[r.Intn(len(values))])
		oldV, _ := v19Decode(oldData)
		newV, _ := v19Decode(newData)
		_, err := (&tensorflow.Webhook{}).ValidateUpdate(context.Background(), oldV, newV)
		var want []FieldErr
		if err != nil {
			for _, e := range err.(utilerrors.Aggregate).Errors() {
				fe := e.(*field.Error)
				want = append(want, FieldErr{fe.Field, string(fe.Type), fe.Detail})
			}
		}
		oldO, _ := tfjob.Parse(oldData, "")
		newO, _ := tfjob.Parse(newData, "")
		errs, verr := newO.ValidateWith(tfjob.ValidateOptions{Compat: compat, Old: oldO})
		oldO.Close()
		newO.Close()
		if verr != nil {
			t.Fatal(verr)
		}
		var got []FieldErr
		for _, e := range errs {
			got = append(got, FieldErr{e.Field, e.Type, e.Detail})
		}
		checked["updates"]++
		a, b := diffErrs(want, got)
		for _, e := range a {
			tl.add("update-only-v1.9 "+e.Field+" "+e.Type, "", finding{"update", "only v1.9 reports " + e.String(), []byte(fmt.Sprintf("old %s\nnew %s", oldData, newData))})
		}
		for _, e := range b {
			tl.add("update-only-ours "+e.Field+" "+e.Type, "", finding{"update", "only libtfjob reports " + e.String(), []byte(fmt.Sprintf("old %s\nnew %s", oldData, newData))})
		}
	}
	tl.report(t, fmt.Sprintf("update validation: seed %d, %d pairs", seed, count), checked)
}
