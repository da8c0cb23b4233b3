package tfjob

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// tfjobctl returns the tfjobctl installed next to the library the tests link (pkg-config's
// prefix, as tests/suites/lib/go-env.bash installs it), or $TFJOBCTL.
func tfjobctl(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("TFJOBCTL"); p != "" {
		return p
	}
	out, err := exec.Command("pkg-config", "--variable=prefix", "tfjob").Output()
	if err == nil {
		p := filepath.Join(strings.TrimSpace(string(out)), "bin", "tfjobctl")
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	t.Skip("tfjobctl of the linked library not found (set TFJOBCTL)")
	return ""
}

func runCtl(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(tfjobctl(t), args...).Output()
	if err != nil {
		t.Fatalf("tfjobctl %v: %v", args, err)
	}
	return string(out)
}

func writeFile(t *testing.T, name, text string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// Render with each option tfjobctl render has gives what tfjobctl render prints.
func TestRenderMatchesTfjobctl(t *testing.T) {
	noNS := strings.Replace(gangJob, "namespace: ml, ", "", 1)
	cases := []struct {
		job  string
		args []string
		opts RenderOptions
	}{
		{gangJob, nil, RenderOptions{}},
		{gangJob, []string{"--cluster-domain", "cluster.local", "--exclude-evaluator"}, RenderOptions{ClusterDomain: "cluster.local", ExcludeEvaluator: true}},
		{gangJob, []string{"--compat", "training-operator-1.9"}, RenderOptions{Compat: TrainingOperator19}},
		{noNS, []string{"--namespace", "other"}, RenderOptions{Namespace: "other"}},
	}
	for _, tc := range cases {
		path := writeFile(t, "job.yaml", tc.job)
		var want Children
		if err := json.Unmarshal([]byte(runCtl(t, append(append([]string{"render"}, tc.args...), path)...)), &want); err != nil {
			t.Fatal(err)
		}
		j := mustParse(t, tc.job)
		got, err := j.Render(tc.opts)
		j.Close()
		if err != nil || !reflect.DeepEqual(*got, want) {
			t.Errorf("render %v: binding differs from tfjobctl (%v)", tc.args, err)
		}
	}
}

// PlanStep gives what tfjobctl plan prints for the same job, time and options.
func TestPlanStepMatchesTfjobctl(t *testing.T) {
	path := writeFile(t, "job.yaml", gangJob)
	now := "2024-05-01T10:00:00Z"
	tm, _ := time.Parse(time.RFC3339, now)
	cases := []struct {
		args []string
		opts PlanOptions
	}{
		{nil, PlanOptions{Now: tm}},
		{[]string{"--cluster-domain", "c.l", "--requeues", "3", "--compat", "training-operator-1.9"},
			PlanOptions{Now: tm, Requeues: 3, Compat: TrainingOperator19, Render: RenderOptions{ClusterDomain: "c.l"}}},
	}
	j := mustParse(t, gangJob)
	defer j.Close()
	for _, tc := range cases {
		var want Plan
		if err := json.Unmarshal([]byte(runCtl(t, append([]string{"plan", "--job", path, "--now", now}, tc.args...)...)), &want); err != nil {
			t.Fatal(err)
		}
		got, err := PlanStep(j, nil, nil, tc.opts)
		if err != nil || !reflect.DeepEqual(*got, want) {
			t.Errorf("plan %v: binding differs from tfjobctl (%v)", tc.args, err)
		}
	}
}

func TestSimulateMatchesTfjobctl(t *testing.T) {
	scenarios, _ := filepath.Glob("../../../examples/scenarios/*.yaml")
	if len(scenarios) == 0 {
		t.Fatal("no scenarios")
	}
	for _, path := range scenarios[:3] {
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		got, err := Simulate(data, SimulateOptions{})
		if want := runCtl(t, "simulate", path); err != nil || got != want {
			t.Errorf("%s: binding differs from tfjobctl simulate (%v)", path, err)
		}
		got, err = Simulate(data, SimulateOptions{OverrideCompat: true, Compat: TrainingOperator19, MaxSteps: 5,
			Render: RenderOptions{ClusterDomain: "c.l"}})
		if want := runCtl(t, "simulate", "--compat", "training-operator-1.9", "--max-steps", "5", "--cluster-domain", "c.l", path); err != nil || got != want {
			t.Errorf("%s with options: binding differs from tfjobctl simulate (%v)", path, err)
		}
	}
	for _, bad := range [][]byte{nil, []byte("not: [a scenario"), []byte("\xff\xfe{")} {
		if _, err := Simulate(bad, SimulateOptions{}); err == nil {
			t.Errorf("Simulate(%q) succeeded", bad)
		}
	}
}

// Bad input gives errors, never a crash.
func TestBadInput(t *testing.T) {
	var nilJob *Job
	closed := mustParse(t, gangJob)
	closed.Close()
	closed.Close() // idempotent
	now := time.Date(2024, 5, 1, 10, 0, 0, 0, time.UTC)
	for name, j := range map[string]*Job{"nil": nilJob, "closed": closed} {
		if _, err := j.Render(RenderOptions{}); !errors.Is(err, ErrClosed) {
			t.Errorf("%s: Render: %v", name, err)
		}
		if _, err := j.RenderPod("ps", 0, RenderOptions{}); !errors.Is(err, ErrClosed) {
			t.Errorf("%s: RenderPod: %v", name, err)
		}
		if _, err := j.PodGroup(RenderOptions{GangScheduler: GangVolcano}); !errors.Is(err, ErrClosed) {
			t.Errorf("%s: PodGroup: %v", name, err)
		}
		if _, err := j.TFConfig("ps", 0, RenderOptions{}); !errors.Is(err, ErrClosed) {
			t.Errorf("%s: TFConfig: %v", name, err)
		}
		if _, err := j.ValidateWith(ValidateOptions{}); !errors.Is(err, ErrClosed) {
			t.Errorf("%s: ValidateWith: %v", name, err)
		}
		if _, err := j.JSON(); !errors.Is(err, ErrClosed) {
			t.Errorf("%s: JSON: %v", name, err)
		}
		if _, err := j.WithDefaults(Documented); !errors.Is(err, ErrClosed) {
			t.Errorf("%s: WithDefaults: %v", name, err)
		}
		if _, err := PlanStep(j, nil, nil, PlanOptions{Now: now}); !errors.Is(err, ErrClosed) {
			t.Errorf("%s: PlanStep: %v", name, err)
		}
		if j.Name() != "" || j.Namespace() != "" {
			t.Errorf("%s: Name/Namespace not empty", name)
		}
		j.Close()
	}
	j := mustParse(t, gangJob)
	defer j.Close()
	invalid := []struct {
		name string
		err  error
	}{}
	add := func(name string, err error) {
		invalid = append(invalid, struct {
			name string
			err  error
		}{name, err})
	}
	_, err := j.Render(RenderOptions{ClusterDomain: "a\x00b"})
	add("NUL in cluster domain", err)
	_, err = j.Render(RenderOptions{GangScheduler: -1})
	add("negative gang scheduler", err)
	_, err = j.TFConfig("wor\x00ker", 0, RenderOptions{})
	add("NUL in replica type", err)
	_, err = j.RenderPod("worker", 5, RenderOptions{})
	add("index out of range", err)
	_, err = PlanStep(j, []byte("[]\x00[{}]"), nil, PlanOptions{Now: now})
	add("NUL in pods", err)
	_, err = PlanStep(j, nil, nil, PlanOptions{Now: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)})
	add("year 10000", err)
	_, err = PlanStep(j, nil, nil, PlanOptions{Now: now, Compat: Compat(9)})
	add("unknown compat", err)
	for _, tc := range invalid {
		if !errors.Is(tc.err, ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", tc.name, tc.err)
		}
	}
	_, err = j.TFConfig("worker", 0, RenderOptions{Address: func(string, int64, int32) (string, error) {
		return strings.Repeat("h", 5000) + ":1", nil
	}})
	if err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("overlong address: %v", err)
	}
	for _, data := range [][]byte{nil, {}, []byte("\xff\xfe{not utf-8"), []byte("kind: TFJob\nmetadata: {name: \xc3\x28}"),
		[]byte("\x00"), []byte(strings.Repeat("[", 100000)), append([]byte("a: "), make([]byte, 17<<20)...)} {
		if j, err := Parse(data, "bad"); err == nil {
			j.Close()
			t.Errorf("Parse(%.20q) succeeded", data)
		}
	}
	if _, err := PlanStep(j, []byte("- {kind: Pod, metadata: {name: \xc3\x28}}"), nil, PlanOptions{Now: now}); !errors.Is(err, ErrParse) {
		t.Errorf("invalid UTF-8 pods: %v, want ErrParse", err)
	}
	if _, err := PlanStep(j, []byte("[1, 2]"), nil, PlanOptions{Now: now}); !errors.Is(err, ErrSchema) {
		t.Errorf("non-object pods: %v, want ErrSchema", err)
	}
}

func TestParseOptionsAndParseAll(t *testing.T) {
	two := simple + "\n---\n" + strings.Replace(simple, "name: mnist", "name: second", 1) + "\n---\n"
	jobs, err := ParseAll([]byte(two), ParseOptions{})
	if err != nil || len(jobs) != 2 || jobs[0].Name() != "mnist" || jobs[1].Name() != "second" {
		t.Fatalf("ParseAll: %d jobs, %v", len(jobs), err)
	}
	for _, j := range jobs {
		j.Close()
	}
	// Parse takes one document only (job.h: "more than one document" is a parse error).
	if _, err := Parse([]byte(two), ""); !errors.Is(err, ErrParse) {
		t.Errorf("Parse of two documents: %v, want ErrParse", err)
	}
	if _, err := ParseAll([]byte(two), ParseOptions{MaxDocuments: 1}); !errors.Is(err, ErrLimit) {
		t.Errorf("MaxDocuments 1: %v, want ErrLimit", err)
	}
	if _, err := ParseWith([]byte(simple), ParseOptions{MaxInputBytes: 10}); !errors.Is(err, ErrLimit) {
		t.Errorf("MaxInputBytes 10: %v, want ErrLimit", err)
	}
	if _, err := ParseWith([]byte(simple), ParseOptions{MaxDepth: 2}); !errors.Is(err, ErrLimit) {
		t.Errorf("MaxDepth 2: %v, want ErrLimit", err)
	}
	if _, err := ParseWith([]byte(simple), ParseOptions{MaxNodes: 5}); !errors.Is(err, ErrLimit) {
		t.Errorf("MaxNodes 5: %v, want ErrLimit", err)
	}
	aliases := "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: a, labels: &l {x: y}, annotations: *l}\nspec: {x: *l}\n"
	if _, err := ParseWith([]byte(aliases), ParseOptions{MaxAliases: 1}); !errors.Is(err, ErrLimit) {
		t.Errorf("MaxAliases 1: %v, want ErrLimit", err)
	}
	if j, err := ParseWith([]byte(aliases), ParseOptions{MaxAliases: 2}); err != nil {
		t.Errorf("MaxAliases 2: %v", err)
	} else {
		j.Close()
	}
	// FirstLine: a document cut out of a larger file reports the file's line numbers.
	broken := "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata: {name: [\n"
	for _, c := range []struct {
		first uint32
		line  int
	}{{0, 3}, {1, 3}, {40, 42}} {
		e := new(Error)
		if _, err := ParseWith([]byte(broken), ParseOptions{FirstLine: c.first}); !errors.As(err, &e) || e.Line < c.line {
			t.Errorf("FirstLine %d: %v (line %d), want a parse error at line %d or after", c.first, err, e.Line, c.line)
		} else if e.Line > c.line+1 {
			t.Errorf("FirstLine %d: line %d, want %d or %d", c.first, e.Line, c.line, c.line+1)
		}
	}
	// JSON is YAML, but the JSON parser refuses YAML.
	if _, err := ParseWith([]byte(simple), ParseOptions{Format: FormatJSON, Filename: "x.json"}); !errors.Is(err, ErrParse) {
		t.Errorf("YAML as JSON: %v, want ErrParse", err)
	} else if e := new(Error); errors.As(err, &e) && e.File != "x.json" {
		t.Errorf("error file %q, want x.json", e.File)
	}
	if _, err := ParseWith([]byte(simple), ParseOptions{Format: Format(9)}); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("unknown format: %v", err)
	}
	if jobs, err := ParseAll([]byte("---\n---\n"), ParseOptions{}); err != nil || len(jobs) != 0 {
		t.Errorf("only empty documents: %d jobs, %v", len(jobs), err)
	}
}

// A NUL byte in a name must not address another object (C would cut the string there).
func TestTransportNULArguments(t *testing.T) {
	m := newMemory(t, MemoryOptions{})
	if _, err := m.Create(Pods, "default", map[string]any{"metadata": map[string]any{"name": "a"}, "spec": map[string]any{"containers": []any{}}}); err != nil {
		t.Fatal(err)
	}
	calls := map[string]func() error{
		"Get":    func() error { _, err := m.Get(Pods, "default", "a\x00b"); return err },
		"Delete": func() error { _, err := m.Delete(Pods, "default", "a\x00b", DeleteOptions{}); return err },
		"Patch": func() error {
			_, err := m.Patch(Pods, "default", "a\x00b", "", map[string]any{"metadata": map[string]any{"labels": map[string]any{"x": "y"}}})
			return err
		},
		"namespace":      func() error { _, err := m.Get(Pods, "default\x00x", "a"); return err },
		"label selector": func() error { _, err := m.List(Pods, "default", ListOptions{LabelSelector: "x\x00y"}); return err },
		"resource":       func() error { _, err := m.Get(Resource{"", "v1", "pods\x00", true}, "default", "a"); return err },
		"object text":    func() error { _, err := m.Create(Pods, "default", "{\"a\":1}\x00"); return err },
		"memory options": func() error { _, err := NewMemoryBackend(MemoryOptions{Namespace: "a\x00"}); return err },
		"controller":     func() error { _, err := NewController(m.Backend, ControllerOptions{Namespace: "a\x00"}); return err },
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", name, err)
		}
	}
	if _, ok := LookupResource("pods\x00"); ok {
		t.Error("LookupResource with a NUL byte succeeded")
	}
	pod, err := m.Get(Pods, "default", "a")
	if err != nil || dig(pod, "metadata", "labels") != nil {
		t.Errorf("pod a changed or gone: %v (%v)", pod, err)
	}
}
