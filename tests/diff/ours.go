package diff

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"testing"
	"time"

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"

	tfjob "github.com/libtfjob/libtfjob/bindings/go/tfjob"
)

// compat is the mode every comparison uses: libtfjob reproducing v1.9. DIFF_COMPAT=documented
// switches to the documented mode, where the harness must find disagreements (a self-check that
// it can see them; tests/suites/90-diff.sh runs it and expects a failure).
var compat = func() tfjob.Compat {
	if os.Getenv("DIFF_COMPAT") == "documented" {
		return tfjob.Documented
	}
	return tfjob.TrainingOperator19
}()

func oursValidate(job *tfjob.Job) ([]FieldErr, error) {
	errs, err := job.ValidateWith(tfjob.ValidateOptions{Compat: compat})
	if err != nil {
		return nil, err
	}
	var out []FieldErr
	for _, e := range errs {
		out = append(out, FieldErr{e.Field, e.Type, e.Detail})
	}
	return out, nil
}

func oursDefaults(job *tfjob.Job) ([]byte, error) {
	d, err := job.WithDefaults(compat)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	s, err := d.JSON()
	return []byte(s), err
}

// oursPlan is one libtfjob plan step, as the controller takes it: the job (JSON) defaulted, then
// planned with its observed pods and services (each marshalled to JSON; nil: none).
func oursPlan(t *testing.T, jobJSON []byte, pods, services any, now time.Time) *tfjob.Plan {
	t.Helper()
	job, err := tfjob.Parse(jobJSON, "")
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	d, err := job.WithDefaults(compat)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	p, err := tfjob.PlanStep(d, marshalOrNil(pods), marshalOrNil(services), tfjob.PlanOptions{Compat: compat, Now: now})
	if err != nil {
		t.Fatalf("PlanStep %s: %v", jobJSON, err)
	}
	return p
}

func marshalOrNil(v any) []byte {
	if v == nil {
		return nil
	}
	data, _ := json.Marshal(v)
	return data
}

// planStatus is the part of a plan's status the comparisons read.
type planStatus struct {
	Conditions      []kubeflowv1.JobCondition `json:"conditions"`
	ReplicaStatuses map[string]struct {
		Active, Succeeded, Failed int64
	} `json:"replicaStatuses"`
	CompletionTime *string `json:"completionTime"`
}

func oursPlanStatus(t *testing.T, p *tfjob.Plan) planStatus {
	t.Helper()
	var st planStatus
	data, _ := json.Marshal(p.Status)
	if err := json.Unmarshal(data, &st); err != nil {
		t.Fatalf("plan status %s: %v", data, err)
	}
	return st
}

// tfjobctl runs the command-line tool (TFJOBCTL, else tfjobctl on PATH) on stdin data.
func tfjobctl(stdin []byte, args ...string) (stdout []byte, exit int, err error) {
	bin := os.Getenv("TFJOBCTL")
	if bin == "" {
		bin = "tfjobctl"
	}
	cmd := exec.Command(bin, args...)
	cmd.Stdin = bytes.NewReader(stdin)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return out.Bytes(), ee.ExitCode(), nil
	}
	if err != nil {
		return nil, -1, fmt.Errorf("%s: %v (%s)", bin, err, errb.String())
	}
	return out.Bytes(), 0, nil
}

// cliValidate is `tfjobctl validate --compat training-operator-1.9 -o json -`.
func cliValidate(data []byte) ([]FieldErr, bool, error) {
	out, code, err := tfjobctl(data, "validate", "--compat", "training-operator-1.9", "-o", "json", "-")
	if err != nil {
		return nil, false, err
	}
	if code != 0 && code != 1 {
		return nil, false, fmt.Errorf("tfjobctl validate exited %d: %s", code, out)
	}
	var res struct {
		Valid  bool `json:"valid"`
		Errors []struct {
			Field, Type, Detail string
		} `json:"errors"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		return nil, false, fmt.Errorf("tfjobctl validate output %q: %v", out, err)
	}
	var errs []FieldErr
	for _, e := range res.Errors {
		errs = append(errs, FieldErr{e.Field, e.Type, e.Detail})
	}
	return errs, res.Valid, nil
}
