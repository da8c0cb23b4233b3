package tfjob

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const simple = `apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: mnist, namespace: ml}
spec:
  tfReplicaSpecs:
    worker:
      replicas: 2
      template:
        spec:
          containers: [{name: tensorflow, image: tf, x-keep: 1}]
`

func TestLibraryVersion(t *testing.T) {
	if LibraryVersion() == "" {
		t.Fatal("empty version")
	}
}

func TestExamplesAreValid(t *testing.T) {
	files, _ := filepath.Glob("../../../examples/*.yaml")
	if len(files) == 0 {
		t.Fatal("no examples found")
	}
	for _, f := range files {
		j, err := Load(f)
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		if errs := j.Validate(); len(errs) != 0 {
			t.Errorf("%s: %v", f, errs)
		}
		j.Close()
	}
}

func TestDefaults(t *testing.T) {
	for _, tc := range []struct {
		compat Compat
		clean  string
	}{{Documented, "Running"}, {TrainingOperator19, "None"}} {
		j, err := Parse([]byte(simple), "simple.yaml")
		if err != nil {
			t.Fatal(err)
		}
		d, err := j.WithDefaults(tc.compat)
		if err != nil {
			t.Fatal(err)
		}
		s, _ := d.JSON()
		var obj map[string]any
		if err := json.Unmarshal([]byte(s), &obj); err != nil {
			t.Fatal(err)
		}
		spec := obj["spec"].(map[string]any)
		if got := spec["runPolicy"].(map[string]any)["cleanPodPolicy"]; got != tc.clean {
			t.Errorf("compat %d: cleanPodPolicy %v, want %s", tc.compat, got, tc.clean)
		}
		worker := spec["tfReplicaSpecs"].(map[string]any)["Worker"].(map[string]any)
		if worker["restartPolicy"] != "Never" || !strings.Contains(s, `"x-keep":1`) {
			t.Errorf("defaults lost something: %s", s)
		}
		if d.Name() != "mnist" || d.Namespace() != "ml" {
			t.Errorf("accessors: %q %q", d.Name(), d.Namespace())
		}
	}
}

func TestValidationTable(t *testing.T) {
	cases := []struct {
		name, yaml string
		compat     Compat
		want       []string // field|type
	}{
		{"missing image", strings.Replace(simple, "image: tf, ", "", 1), Documented,
			[]string{"spec.tfReplicaSpecs[worker].template.spec.containers[0].image|FieldValueRequired"}},
		{"bad type", strings.Replace(simple, "replicas: 2", "replicas: two", 1), Documented,
			[]string{"spec.tfReplicaSpecs[worker].replicas|FieldValueTypeInvalid"}},
		{"unknown restart policy documented", strings.Replace(simple, "replicas: 2", "restartPolicy: Sometimes", 1), Documented,
			[]string{"spec.tfReplicaSpecs[worker].restartPolicy|FieldValueNotSupported"}},
		{"unknown restart policy v1.9", strings.Replace(simple, "replicas: 2", "restartPolicy: Sometimes", 1), TrainingOperator19, nil},
		{"bad name", strings.Replace(simple, "name: mnist", "name: MNIST", 1), Documented,
			[]string{"metadata.name|FieldValueInvalid"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			j, err := Parse([]byte(tc.yaml), "")
			if err != nil {
				t.Fatal(err)
			}
			defer j.Close()
			// simple's container has x-keep, a field the schema does not declare.
			errs, err := j.ValidateWith(ValidateOptions{Compat: tc.compat, AllowUnknownFields: true})
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, e := range errs {
				got = append(got, e.Field+"|"+e.Type)
			}
			if strings.Join(got, ",") != strings.Join(tc.want, ",") {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestStrictUnknownFields(t *testing.T) {
	j, err := Parse([]byte(strings.Replace(simple, "replicas: 2", "replica: 2", 1)), "")
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	var got []string
	for _, e := range j.Validate() {
		got = append(got, e.Field+"|"+e.Type+"|"+e.Detail)
	}
	want := []string{
		`spec.tfReplicaSpecs[worker].replica|FieldValueNotSupported|unknown field "spec.tfReplicaSpecs.worker.replica"; did you mean "replicas"?`,
		`spec.tfReplicaSpecs[worker].template.spec.containers[0].x-keep|FieldValueNotSupported|unknown field "spec.tfReplicaSpecs.worker.template.spec.containers[0].x-keep"`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("strict: got %q, want %q", got, want)
	}
	errs, err := j.ValidateWith(ValidateOptions{AllowUnknownFields: true})
	if err != nil || len(errs) != 0 {
		t.Errorf("AllowUnknownFields: %v %v", errs, err)
	}
}

func TestErrorsIs(t *testing.T) {
	_, err := Parse([]byte("a: [1, 2\nb: 3\n"), "bad.yaml")
	if !errors.Is(err, ErrParse) {
		t.Fatalf("want ErrParse, got %v", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.File != "bad.yaml" || e.Line != 2 || e.Column == 0 {
		t.Fatalf("position missing: %+v", e)
	}
	_, err = Parse([]byte("apiVersion: v1\nkind: Pod\n"), "")
	if !errors.Is(err, ErrSchema) || errors.Is(err, ErrParse) {
		t.Fatalf("want ErrSchema, got %v", err)
	}
	if _, err := Parse(nil, ""); !errors.Is(err, ErrParse) {
		t.Fatalf("empty input: %v", err)
	}
}

func TestExitCodes(t *testing.T) {
	if !ExitCodeRetryable(137, Documented) || ExitCodeRetryable(139, Documented) || !ExitCodeRetryable(139, TrainingOperator19) {
		t.Fatal("classifier")
	}
	if c, err := ParseCompat("training-operator-1.9"); err != nil || c != TrainingOperator19 {
		t.Fatal("ParseCompat")
	}
	if _, err := ParseCompat("x"); err == nil {
		t.Fatal("ParseCompat accepted x")
	}
}

func TestCloseAndFinalizers(t *testing.T) {
	j, _ := Parse([]byte(simple), "")
	j.Close()
	j.Close()
	if _, err := j.JSON(); !errors.Is(err, ErrClosed) {
		t.Fatal("closed job usable")
	}
	for i := 0; i < 2000; i++ {
		Parse([]byte(simple), "")
	}
	runtime.GC()
}

func FuzzParse(f *testing.F) {
	f.Add([]byte(simple))
	f.Add([]byte(`{"apiVersion":"kubeflow.org/v1","kind":"TFJob","spec":{"tfReplicaSpecs":{"PS":null}}}`))
	f.Add([]byte("a: &a [*a]"))
	f.Fuzz(func(t *testing.T, data []byte) {
		j, err := Parse(data, "fuzz")
		if err != nil {
			var e *Error
			if !errors.As(err, &e) || e.Message == "" {
				t.Fatalf("unexplained error %v", err)
			}
			return
		}
		defer j.Close()
		for _, c := range []Compat{Documented, TrainingOperator19} {
			if _, err := j.ValidateWith(ValidateOptions{Compat: c, Old: j}); err != nil {
				t.Fatal(err)
			}
			if d, err := j.WithDefaults(c); err == nil {
				s, err := d.JSON()
				if err != nil {
					t.Fatal(err)
				}
				if _, err := Parse([]byte(s), "again"); err != nil {
					t.Fatalf("own output does not parse: %v", err)
				}
				d.Close()
			}
		}
	})
}

func TestWarnings(t *testing.T) {
	job, err := Parse([]byte(`apiVersion: kubeflow.org/v1
kind: TFJob
metadata: {name: w}
spec:
  tfReplicaSpecs:
    Worker:
      restartPolicy: Never
      template:
        spec:
          containers: [{name: tensorflow, image: tf, resources: {limits: {nvidia.com/gpu: 1}}}]
`), "w.yaml")
	if err != nil {
		t.Fatal(err)
	}
	defer job.Close()
	if errs := job.Validate(); len(errs) != 0 {
		t.Fatalf("valid job: %v", errs)
	}
	ws, err := job.Warnings(WarningOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 2 || ws[0].Reason != "RestartPolicyNever" || ws[1].Reason != "GPUWithoutRequests" ||
		ws[0].Field != "spec.tfReplicaSpecs[Worker].restartPolicy" ||
		!strings.HasPrefix(ws[0].String(), "spec.tfReplicaSpecs[Worker].restartPolicy: restartPolicy Never") {
		t.Fatalf("warnings: %+v", ws)
	}
	ws, err = job.Warnings(WarningOptions{IstioInjection: true})
	if err != nil || len(ws) != 3 || ws[1].Reason != "IstioSidecar" {
		t.Fatalf("with Istio: %+v %v", ws, err)
	}
	job.Close()
	if _, err := job.Warnings(WarningOptions{}); !errors.Is(err, ErrClosed) {
		t.Fatalf("closed job: %v", err)
	}
}
