package tfjob

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

func shJob(t *testing.T, name string, workers int, restartPolicy, script string) *Job {
	t.Helper()
	return localJob(t, testJob(name, map[string]int{"Worker": workers}, restartPolicy,
		map[string]any{"name": "tensorflow", "image": "busybox", "command": []any{"sh", "-c", script}}))
}

// localJob parses a test job without its namespace (the local run's is "default"), closed with the test.
func localJob(t *testing.T, obj Object) *Job {
	t.Helper()
	delete(obj["metadata"].(map[string]any), "namespace")
	data, _ := json.Marshal(obj)
	j, err := Parse(data, "job.json")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(j.Close)
	return j
}

func TestRunLocalSucceeds(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "run")
	var mu sync.Mutex
	var kinds = map[string]bool{}
	var exited []string
	succeeded := false
	// The third line: the program of the replica's supervisor, found next to the loaded library.
	script := `echo "hello from $TFJOB_POD_NAME"; echo "$TF_CONFIG"; readlink /proc/$PPID/exe; exit 0`
	inProcess := false
	r, err := RunLocal(context.Background(), shJob(t, "tiny", 2, "", script),
		LocalOptions{RunDir: dir, OnEvent: func(pod, typ, reason, msg string) {
			mu.Lock()
			defer mu.Unlock()
			if reason == "Exited" {
				exited = append(exited, pod)
			}
			inProcess = inProcess || reason == "SupervisorInProcess"
		}},
		LocalRunOptions{OnUpdate: func(u LocalUpdate) {
			mu.Lock()
			defer mu.Unlock()
			switch {
			case u.Status != nil:
				kinds["status"] = true
				succeeded = succeeded || HasCondition(Object{"status": u.Status}, "Succeeded")
			case u.Pods != nil:
				kinds["pods"] = true
			case u.Event != nil:
				kinds["event"] = true
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if r.Outcome != LocalSucceeded || r.Outcome.String() != "Succeeded" || !HasCondition(r.Job, "Succeeded") {
		t.Fatalf("outcome %v, job status %v", r.Outcome, r.Job["status"])
	}
	if strings.Join(names(r.Pods), ",") != "tiny-worker-0,tiny-worker-1" {
		t.Fatalf("pods %v", names(r.Pods))
	}
	log, err := r.Log("worker-1")
	if err != nil || !strings.HasPrefix(log, "hello from tiny-worker-1\n") {
		t.Fatalf("log %q %v", log, err)
	}
	var tfConfig struct {
		Cluster map[string][]string `json:"cluster"`
		Task    struct {
			Type  string `json:"type"`
			Index int    `json:"index"`
		} `json:"task"`
	}
	if err := json.Unmarshal([]byte(strings.Split(log, "\n")[1]), &tfConfig); err != nil || tfConfig.Task.Index != 1 ||
		len(tfConfig.Cluster["worker"]) != 2 || !strings.HasPrefix(tfConfig.Cluster["worker"][0], "127.0.0.1:") {
		t.Fatalf("TF_CONFIG %+v %v", tfConfig, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if lines := strings.Split(log, "\n"); len(lines) < 3 || !strings.HasSuffix(lines[2], "/tfjob-supervise") || inProcess {
		t.Fatalf("supervisor in %q, SupervisorInProcess event %v", log, inProcess)
	}
	if !kinds["status"] || !kinds["pods"] || !kinds["event"] || !succeeded || len(exited) != 2 {
		t.Fatalf("updates %v succeeded %v exited %v", kinds, succeeded, exited)
	}
	found := false
	for _, e := range r.Events {
		found = found || e["reason"] == "TFJobSucceeded"
	}
	if !found {
		t.Fatalf("events %v", r.Events)
	}
}

func TestRunLocalFailsAndRetries(t *testing.T) {
	r, err := RunLocal(context.Background(), shJob(t, "fails", 1, "", "exit 3"), LocalOptions{RunDir: filepath.Join(t.TempDir(), "f")}, LocalRunOptions{})
	if err != nil || r.Outcome != LocalFailed || !HasCondition(r.Job, "Failed") {
		t.Fatalf("failure: %v %v", r, err)
	}
	script := `if [ -e "$TFJOB_RUN_DIR/once" ]; then exit 0; fi; touch "$TFJOB_RUN_DIR/once"; exit 137`
	r, err = RunLocal(context.Background(), shJob(t, "retry", 1, "ExitCode", script), LocalOptions{RunDir: filepath.Join(t.TempDir(), "r")}, LocalRunOptions{})
	if err != nil || r.Outcome != LocalSucceeded {
		t.Fatalf("retry: %v %v", r, err)
	}
}

func TestRunLocalInvalidAndNotRunnable(t *testing.T) {
	noCmd, _ := Parse([]byte(simple), "")
	defer noCmd.Close()
	err := CheckLocal(noCmd)
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "command") {
		t.Fatalf("check: %v", err)
	}
	if err := CheckLocal(shJob(t, "ok", 1, "", "exit 0")); err != nil {
		t.Fatal(err)
	}
	_, err = RunLocal(context.Background(), shJob(t, "Bad_Name", 1, "", "exit 0"), LocalOptions{RunDir: filepath.Join(t.TempDir(), "b")}, LocalRunOptions{})
	if !errors.Is(err, ErrInvalid) {
		t.Fatalf("invalid: %v", err)
	}
	if _, err := NewLocalEngine(LocalOptions{}); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("no run dir: %v", err)
	}
}

func TestRunLocalCancelAndUpdatePanic(t *testing.T) {
	e, err := NewLocalEngine(LocalOptions{RunDir: filepath.Join(t.TempDir(), "c"), GracePeriod: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ctx, cancel := context.WithCancel(context.Background())
	start := time.Now()
	outcome, err := e.Run(ctx, shJob(t, "sleepy", 1, "", "sleep 30"), LocalRunOptions{OnUpdate: func(u LocalUpdate) {
		for _, p := range u.Pods {
			if st, _ := p["status"].(map[string]any); st["phase"] == "Running" {
				cancel()
			}
		}
	}})
	if err != nil || outcome != LocalInterrupted || time.Since(start) > 20*time.Second || e.RunningCount() != 0 {
		t.Fatalf("cancel: %v %v after %v", outcome, err, time.Since(start))
	}

	e2, _ := NewLocalEngine(LocalOptions{RunDir: filepath.Join(t.TempDir(), "p"), GracePeriod: -1})
	defer e2.Close()
	_, err = e2.Run(context.Background(), shJob(t, "panicky", 1, "", "sleep 30"), LocalRunOptions{OnUpdate: func(u LocalUpdate) {
		if u.Pods != nil {
			panic("stop it")
		}
	}})
	var pe *PanicError
	if !errors.As(err, &pe) || pe.Callback != "local_update" || e2.Interrupted() == 0 {
		t.Fatalf("panic: %v", err)
	}
}

func TestLocalEngineBackend(t *testing.T) {
	e, err := NewLocalEngine(LocalOptions{RunDir: filepath.Join(t.TempDir(), "b")})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	addr, err := e.Address("Worker", 0)
	if again, _ := e.Address("worker", 0); err != nil || !strings.HasPrefix(addr, "127.0.0.1:") || again != addr {
		t.Fatalf("address %q %q %v", addr, again, err)
	}
	b, err := e.Backend()
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.Create(Pods, "default", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p"},
		"spec":{"restartPolicy":"Never","containers":[{"name":"tensorflow","command":["sh","-c","exit 4"]}]}}`)
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	var pod Object
	for {
		pod, err = b.Get(Pods, "default", "p")
		if err != nil {
			t.Fatal(err)
		}
		if phase := pod["status"].(map[string]any)["phase"]; phase == "Failed" || phase == "Succeeded" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("pod did not end")
		}
		if _, err := e.Poll(500 * time.Millisecond); err != nil {
			t.Fatal(err)
		}
	}
	cs := pod["status"].(map[string]any)["containerStatuses"].([]any)[0].(map[string]any)
	if pod["status"].(map[string]any)["phase"] != "Failed" || cs["state"].(map[string]any)["terminated"].(map[string]any)["exitCode"] != 4.0 {
		t.Fatalf("pod status %v", pod["status"])
	}
	if _, err := b.Watch(Pods, "default", WatchOptions{}); !errors.Is(err, ErrState) {
		t.Fatalf("watch of local pods: %v", err)
	}
	e.Close()
	if _, err := b.Get(Pods, "default", "p"); !errors.Is(err, ErrClosed) {
		t.Fatalf("backend after engine close: %v", err)
	}
}

// A failed replica that cleanPodPolicy then deleted (v1.9 counts it as succeeded) is reported as
// such, with its exit code, last lines and log, as tfjobctl run reports it.
func TestRunLocalReportsFailures(t *testing.T) {
	obj := testJob("rep", map[string]int{"Worker": 2}, "", map[string]any{"name": "tensorflow", "image": "busybox",
		"command": []any{"sh", "-c", `if [ "$TFJOB_POD_NAME" = rep-worker-1 ]; then echo one; echo two >&2; exit 3; fi; sleep 30`}})
	obj["spec"].(map[string]any)["runPolicy"] = map[string]any{"cleanPodPolicy": "All"}
	job := localJob(t, obj)
	dir := filepath.Join(t.TempDir(), "a", "b")
	r, err := RunLocal(context.Background(), job, LocalOptions{RunDir: dir}, LocalRunOptions{Compat: TrainingOperator19})
	if err != nil || r.Outcome != LocalFailed || r.RunDir != dir {
		t.Fatalf("run: %v %v", r, err)
	}
	f := r.Report.Failures()
	if len(f) != 1 || f[0].Name != "worker-1" || f[0].FailedExitCode != 3 ||
		f[0].Summary != "worker-1 failed with exit 3, then deleted by cleanPodPolicy All as the job finished" ||
		strings.Join(f[0].Tail, "|") != "one|two" || f[0].Log != filepath.Join(dir, "rep-worker-1.log") {
		t.Fatalf("failures: %+v", f)
	}
	if _, err := RunLocal(context.Background(), job, LocalOptions{RunDir: dir}, LocalRunOptions{}); !errors.Is(err, ErrAlreadyExists) {
		t.Fatalf("a second run in the same directory: %v", err)
	}
	again, err := ReadLocalReport(dir, 1)
	if err != nil || len(again.Replicas) != 2 || strings.Join(again.Failures()[0].Tail, "|") != "two" {
		t.Fatalf("report: %+v %v", again, err)
	}
}

// Without a run directory, each run gets a fresh one under ./tfjob-runs.
func TestRunLocalFreshRunDir(t *testing.T) {
	prev, _ := os.Getwd()
	if err := os.Chdir(t.TempDir()); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.Chdir(prev) }()
	var dirs []string
	for i := 0; i < 2; i++ {
		r, err := RunLocal(context.Background(), shJob(t, "fresh", 1, "", "exit 0"), LocalOptions{}, LocalRunOptions{})
		if err != nil || r.Outcome != LocalSucceeded {
			t.Fatalf("run: %v %v", r, err)
		}
		dirs = append(dirs, r.RunDir)
	}
	wd, _ := filepath.Abs(".")
	if dirs[0] == dirs[1] || !strings.HasPrefix(dirs[0], filepath.Join(wd, "tfjob-runs", "fresh-")) {
		t.Fatalf("run directories: %v", dirs)
	}
}

// nvidia.com/gpu limits get their own CUDA_VISIBLE_DEVICES; too many GPUs are refused.
func TestRunLocalGPUs(t *testing.T) {
	obj := testJob("gpu", map[string]int{"Worker": 2}, "", map[string]any{"name": "tensorflow", "image": "busybox",
		"command":   []any{"sh", "-c", `echo "[${CUDA_VISIBLE_DEVICES-unset}]"`},
		"resources": map[string]any{"limits": map[string]any{"nvidia.com/gpu": 1}}})
	job := localJob(t, obj)
	r, err := RunLocal(context.Background(), job, LocalOptions{RunDir: filepath.Join(t.TempDir(), "g"), GPUs: []string{"4", "6"}}, LocalRunOptions{})
	if err != nil || r.Outcome != LocalSucceeded {
		t.Fatalf("run: %v %v", r, err)
	}
	l0, _ := r.Log("worker-0")
	l1, _ := r.Log("worker-1")
	if got := []string{strings.TrimSpace(l0), strings.TrimSpace(l1)}; !(got[0] == "[4]" && got[1] == "[6]" || got[0] == "[6]" && got[1] == "[4]") {
		t.Fatalf("CUDA_VISIBLE_DEVICES: %v", got)
	}
	_, err = RunLocal(context.Background(), job, LocalOptions{RunDir: filepath.Join(t.TempDir(), "n"), GPUs: []string{}}, LocalRunOptions{})
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "asks for 2 GPUs") {
		t.Fatalf("no GPUs: %v", err)
	}
}
