package conditions

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"reflect"
	"strconv"
	"testing"
	"time"

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	commonutil "github.com/kubeflow/training-operator/pkg/util"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil {
		return n
	}
	return def
}

var (
	condTypes = []string{"Created", "Running", "Restarting", "Succeeded", "Failed", "Suspended"}
	statuses  = []string{"True", "True", "False", "Unknown"}
)

func pick(r *rand.Rand, xs []string) string { return xs[r.Intn(len(xs))] }

func reason(r *rand.Rand, ctype string) string {
	switch r.Intn(5) {
	case 0:
		return ""
	case 1:
		return "TFJobOther"
	}
	return "TFJob" + ctype
}

// history makes a random status.conditions list (times in 2020, possibly repeated types).
func history(r *rand.Rand) []kubeflowv1.JobCondition {
	n := r.Intn(6)
	var cs []kubeflowv1.JobCondition
	for i := 0; i < n; i++ {
		ct := pick(r, condTypes)
		c := kubeflowv1.JobCondition{
			Type:    kubeflowv1.JobConditionType(ct),
			Status:  corev1.ConditionStatus(pick(r, statuses)),
			Reason:  reason(r, ct),
			Message: fmt.Sprintf("m%d", r.Intn(3)),
		}
		base := time.Date(2020, 1, 1+i, 0, 0, 0, 0, time.UTC)
		c.LastUpdateTime = metav1.NewTime(base.Add(time.Hour))
		c.LastTransitionTime = metav1.NewTime(base)
		cs = append(cs, c)
	}
	return cs
}

// stamp replaces the wall-clock times v1.9's newCondition took (metav1.Now(); neither 2020's
// history nor an earlier step's stamp) by the step's logical time, which libtfjob receives.
func stamp(cs []kubeflowv1.JobCondition, step time.Time) {
	fresh := func(t metav1.Time) bool { return t.Year() > 2020 && t.Year() < 2030 }
	for i := range cs {
		if fresh(cs[i].LastUpdateTime) {
			cs[i].LastUpdateTime = metav1.NewTime(step)
		}
		if fresh(cs[i].LastTransitionTime) {
			cs[i].LastTransitionTime = metav1.NewTime(step)
		}
	}
}

func normalise(t *testing.T, data []byte) any {
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatalf("%s: %v", data, err)
	}
	if m, ok := v.(map[string]any); ok {
		if _, ok := m["conditions"]; !ok {
			m["conditions"] = nil
		}
	}
	return v
}

// TestConditionStateMachine applies random condition updates to random histories with v1.9's
// UpdateJobConditions and with libtfjob's compat-mode state machine, and compares every step.
func TestConditionStateMachine(t *testing.T) {
	seed := int64(envInt("DIFF_SEED", 1))
	count := envInt("DIFF_COUNT", 2000)
	r := rand.New(rand.NewSource(seed))
	disagreements := 0
	for i := 0; i < count; i++ {
		st := kubeflowv1.JobStatus{Conditions: history(r)}
		data, _ := json.Marshal(struct {
			Conditions []kubeflowv1.JobCondition `json:"conditions"`
		}{st.Conditions})
		ours := string(data)
		steps := 1 + r.Intn(4)
		for k := 0; k < steps; k++ {
			ct := pick(r, condTypes)
			cst := pick(r, statuses)
			rs := reason(r, ct)
			msg := fmt.Sprintf("m%d", r.Intn(3))
			now := time.Date(2030, 1, 1, 0, 0, k, 0, time.UTC)
			before := ours
			commonutil.UpdateJobConditions(&st, kubeflowv1.JobConditionType(ct), corev1.ConditionStatus(cst), rs, msg)
			stamp(st.Conditions, now)
			var err error
			mode := TrainingOperator19
			if os.Getenv("DIFF_COMPAT") == "documented" {
				mode = Documented
			}
			ours, err = condSet(ours, ct, cst, rs, msg, now.Unix(), mode)
			if err != nil {
				t.Fatal(err)
			}
			want, _ := json.Marshal(struct {
				Conditions []kubeflowv1.JobCondition `json:"conditions"`
			}{st.Conditions})
			if !reflect.DeepEqual(normalise(t, want), normalise(t, []byte(ours))) {
				disagreements++
				if disagreements <= 10 {
					t.Errorf("update %s=%s reason %q message %q on %s:\n v1.9 %s\n ours %s", ct, cst, rs, msg, before, want, ours)
				}
				break
			}
		}
	}
	t.Logf("condition histories: %d (seed %d), disagreements: %d", count, seed, disagreements)
}
