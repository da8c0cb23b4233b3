// Command bench measures libtfjob beside training-operator v1.9 (the Go implementation the
// world runs), in the same process, on the same input bytes, and prints one table.
//
//	(a) v1.9's own path: sigs.k8s.io/yaml.Unmarshal into kubeflowv1.TFJob, SetDefaults_TFJob,
//	    and the admission webhook's (&tensorflow.Webhook{}).ValidateCreate;
//	(b) libtfjob through its Go binding (Parse + WithDefaults + ValidateWith), and the same
//	    operations in pure C (bench_core, run as a subprocess on the same files);
//	(c) TF_CONFIG of one replica of a defaulted job: v1.9's TFJobReconciler.SetClusterSpec (the
//	    exported path to its unexported genTFConfigJSONStr) vs libtfjob's tfjob_tf_config
//	    (only when built with -tags tfconfig, i.e. when the installed libtfjob has cluster.h).
//
// Every figure is the median over -runs batches, each batch long enough (-batch) for the clock.
// Run it through bench/run.sh, which builds libtfjob into a private prefix first.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/go-logr/logr"
	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"github.com/kubeflow/training-operator/pkg/webhooks/tensorflow"
	"sigs.k8s.io/yaml"

	tfjob "github.com/libtfjob/libtfjob/bindings/go/tfjob"
)

var (
	flagExamples = flag.String("examples", "../../examples", "directory with tfjob-ps-worker.yaml")
	flagOut      = flag.String("out", "", "directory for the generated inputs (default: a temporary one)")
	flagCBench   = flag.String("cbench", "", "path of the bench_core executable (empty: skip the pure C column)")
	flagRuns     = flag.Int("runs", 31, "timed batches per measurement (the median is reported)")
	flagBatch    = flag.Duration("batch", 20*time.Millisecond, "minimum duration of one batch")
	flagSizes    = flag.String("sizes", "10,100,1000,5000", "worker counts of the generated jobs")
	flagTFIndex  = flag.Int("tf-index", -1, "worker index for TF_CONFIG (-1: the middle one)")
	flagJSON     = flag.String("json", "", "also write every measurement as JSON to this file")
	flagEmit     = flag.Bool("emit-only", false, "write the inputs to -out and exit (for bench/profile.sh)")
	flagClock    = flag.String("clock", "cpu", "cpu: process CPU time (getrusage; GC threads included), wall: monotonic time")
)

// now returns the clock the figures are taken on, in nanoseconds.
func now() int64 {
	if *flagClock == "wall" {
		return time.Now().UnixNano()
	}
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// result is one measurement.
type result struct {
	NsMedian    float64 `json:"ns_median"`
	NsMin       float64 `json:"ns_min"`
	AllocsPerOp float64 `json:"allocs_per_op"` // Go heap allocations (Go) or C malloc calls (C)
	BytesPerOp  float64 `json:"bytes_per_op"`  // Go bytes allocated per op (not peak)
	PeakBytes   float64 `json:"peak_bytes"`    // C only: peak live heap bytes during one op
	Batch       int     `json:"batch"`
}

// measure times fn like testing.B does, but reports the median over many batches.
func measure(fn func() error) (result, error) {
	if err := fn(); err != nil {
		return result{}, err
	}
	n := 1
	for {
		start := now()
		for i := 0; i < n; i++ {
			if err := fn(); err != nil {
				return result{}, err
			}
		}
		if now()-start >= flagBatch.Nanoseconds() || n >= 1<<24 {
			break
		}
		n *= 2
	}
	per := make([]float64, *flagRuns)
	for r := range per {
		start := now()
		for i := 0; i < n; i++ {
			_ = fn()
		}
		per[r] = float64(now()-start) / float64(n)
	}
	sort.Float64s(per)
	// Allocation profile over one more batch (as testing.B's -benchmem).
	runtime.GC()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	k := n
	if k > 1000 {
		k = 1000
	}
	for i := 0; i < k; i++ {
		_ = fn()
	}
	runtime.ReadMemStats(&m1)
	return result{
		NsMedian:    per[len(per)/2],
		NsMin:       per[0],
		AllocsPerOp: float64(m1.Mallocs-m0.Mallocs) / float64(k),
		BytesPerOp:  float64(m1.TotalAlloc-m0.TotalAlloc) / float64(k),
		Batch:       n,
	}, nil
}

// interleaved times several implementations in alternating batches, so that a busy machine
// slows them alike: each run times one batch of every implementation in turn. It returns the
// median ns/op of each and the median over runs of the ratio of the first to each other.
func interleaved(batch []func(n int) error) (med []float64, ratio []float64, err error) {
	k := len(batch)
	ns := make([]int, k)
	for i, b := range batch {
		n := 1
		for {
			start := now()
			if err := b(n); err != nil {
				return nil, nil, err
			}
			if now()-start >= flagBatch.Nanoseconds() || n >= 1<<24 {
				break
			}
			n *= 2
		}
		ns[i] = n
	}
	per := make([][]float64, k)
	ratios := make([][]float64, k)
	for r := 0; r < *flagRuns; r++ {
		t := make([]float64, k)
		for i, b := range batch {
			start := now()
			_ = b(ns[i])
			t[i] = float64(now()-start) / float64(ns[i])
			per[i] = append(per[i], t[i])
		}
		for i := range batch {
			ratios[i] = append(ratios[i], t[0]/t[i])
		}
	}
	for i := range batch {
		sort.Float64s(per[i])
		sort.Float64s(ratios[i])
		med = append(med, per[i][len(per[i])/2])
		ratio = append(ratio, ratios[i][len(ratios[i])/2])
	}
	return med, ratio, nil
}

func loop(fn func() error) func(n int) error {
	return func(n int) error {
		for i := 0; i < n; i++ {
			if err := fn(); err != nil {
				return err
			}
		}
		return nil
	}
}

// ---- inputs ----

type input struct {
	name    string
	file    string
	data    []byte
	workers int // 0 for the docs example
	tfType  string
	tfIndex int
}

// template is the pod template of every replica of a generated job: the docs' container plus
// the usual resources, env and a volume, so that the input is of a realistic size.
const template = `      template:
        metadata:
          annotations:
            sidecar.istio.io/inject: "false"
        spec:
          containers:
            - name: tensorflow
              image: gcr.io/your-project/your-image:2.15
              command: ["python", "-m", "trainer.task", "--batch_size=32", "--training_steps=1000"]
              env:
                - name: MODEL_DIR
                  value: /models
              resources:
                requests: {cpu: "4", memory: 8Gi}
                limits: {cpu: "4", memory: 8Gi}
              volumeMounts:
                - name: models
                  mountPath: /models
          volumes:
            - name: models
              emptyDir: {}
`

// generate writes a job of `workers` workers and max(1, workers/100) parameter servers.
func generate(workers int) []byte {
	ps := workers / 100
	if ps < 1 {
		ps = 1
	}
	var b strings.Builder
	fmt.Fprintf(&b, "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata:\n  name: bench-%d\n  namespace: bench\nspec:\n", workers)
	b.WriteString("  runPolicy:\n    cleanPodPolicy: None\n  tfReplicaSpecs:\n")
	fmt.Fprintf(&b, "    PS:\n      replicas: %d\n      restartPolicy: OnFailure\n%s", ps, template)
	fmt.Fprintf(&b, "    Worker:\n      replicas: %d\n      restartPolicy: OnFailure\n%s", workers, template)
	return []byte(b.String())
}

func loadInputs(dir string) ([]input, error) {
	docs, err := os.ReadFile(filepath.Join(*flagExamples, "tfjob-ps-worker.yaml"))
	if err != nil {
		return nil, err
	}
	// The example uses generateName (the API server would make the name); give it one.
	if !strings.Contains(string(docs), "generateName: tfjob") {
		return nil, fmt.Errorf("tfjob-ps-worker.yaml no longer has generateName: tfjob")
	}
	docs = []byte(strings.Replace(string(docs), "generateName: tfjob", "name: tfjob-ps-worker", 1))
	ins := []input{{name: "docs PS+Worker", file: "tfjob-ps-worker.yaml", data: docs, tfType: "Worker", tfIndex: 1}}
	// The same job as JSON: what kubectl sends and what the API server hands to a webhook.
	docsJSON, err := yaml.YAMLToJSON(docs)
	if err != nil {
		return nil, err
	}
	ins = append(ins, input{name: "docs PS+Worker, JSON", file: "tfjob-ps-worker.json", data: docsJSON, tfType: "Worker", tfIndex: 1})
	for _, s := range strings.Split(*flagSizes, ",") {
		var n int
		if _, err := fmt.Sscan(s, &n); err != nil || n < 1 {
			return nil, fmt.Errorf("bad -sizes entry %q", s)
		}
		idx := n / 2
		if *flagTFIndex >= 0 && *flagTFIndex < n {
			idx = *flagTFIndex
		}
		ins = append(ins, input{name: fmt.Sprintf("%d workers", n), file: fmt.Sprintf("gen-%d.yaml", n),
			data: generate(n), workers: n, tfType: "Worker", tfIndex: idx})
	}
	for _, in := range ins {
		if err := os.WriteFile(filepath.Join(dir, in.file), in.data, 0o644); err != nil {
			return nil, err
		}
	}
	return ins, nil
}

// ---- (a) training-operator v1.9 ----

func v19ParseDefaultValidate(data []byte) func() error {
	w := &tensorflow.Webhook{}
	ctx := context.Background()
	return func() error {
		job := &kubeflowv1.TFJob{}
		if err := yaml.Unmarshal(data, job); err != nil {
			return err
		}
		kubeflowv1.SetDefaults_TFJob(job)
		_, err := w.ValidateCreate(ctx, job)
		return err
	}
}

func v19Parse(data []byte) func() error {
	return func() error {
		job := &kubeflowv1.TFJob{}
		return yaml.Unmarshal(data, job)
	}
}

// ---- (b) libtfjob through the Go binding ----

func bindingParseDefaultValidate(data []byte) func() error {
	return func() error {
		job, err := tfjob.Parse(data, "")
		if err != nil {
			return err
		}
		defer job.Close()
		d, err := job.WithDefaults(tfjob.TrainingOperator19)
		if err != nil {
			return err
		}
		defer d.Close()
		errs, err := d.ValidateWith(tfjob.ValidateOptions{Compat: tfjob.TrainingOperator19})
		if err != nil {
			return err
		}
		if len(errs) > 0 {
			return fmt.Errorf("invalid: %v", errs)
		}
		return nil
	}
}

func bindingParse(data []byte) func() error {
	return func() error {
		job, err := tfjob.Parse(data, "")
		if err != nil {
			return err
		}
		job.Close()
		return nil
	}
}

// ---- pure C (bench_core) ----

type cResult struct {
	File      string  `json:"file"`
	Op        string  `json:"op"`
	NsMedian  float64 `json:"ns_median"`
	NsMin     float64 `json:"ns_min"`
	Batch     int     `json:"batch"`
	Allocs    float64 `json:"allocs"`
	PeakBytes float64 `json:"peak_bytes"`
}

func runCBench(dir string, ins []input) (map[string]result, error) {
	out := map[string]result{}
	if *flagCBench == "" {
		return out, nil
	}
	args := []string{"--json", "--clock", *flagClock, "--runs", fmt.Sprint(*flagRuns), "--min-ns", fmt.Sprint(flagBatch.Nanoseconds())}
	for _, in := range ins {
		args = append(args, fmt.Sprintf("%s:%s:%d", filepath.Join(dir, in.file), in.tfType, in.tfIndex))
	}
	cmd := exec.Command(*flagCBench, args...)
	cmd.Stderr = os.Stderr
	stdout, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("bench_core: %v", err)
	}
	sc := bufio.NewScanner(strings.NewReader(string(stdout)))
	for sc.Scan() {
		var r cResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("bench_core output %q: %v", sc.Text(), err)
		}
		out[r.File+"|"+r.Op] = result{NsMedian: r.NsMedian, NsMin: r.NsMin, AllocsPerOp: r.Allocs,
			PeakBytes: r.PeakBytes, Batch: r.Batch}
	}
	return out, nil
}

// ---- output ----

func us(ns float64) string {
	if ns == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", ns/1000)
}

func ratio(a, b float64) string {
	if a == 0 || b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

func count(x float64) string {
	if x == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f", x)
}

func kib(x float64) string {
	if x == 0 {
		return "-"
	}
	return fmt.Sprintf("%.1f", x/1024)
}

type record struct {
	Input  string  `json:"input"`
	Bytes  int     `json:"bytes"`
	Op     string  `json:"op"`
	Impl   string  `json:"impl"`
	Result result  `json:"result"`
	Ratio  float64 `json:"v19_over_this,omitempty"`
}

func main() {
	flag.Parse()
	// v1.9's webhook asks controller-runtime for a logger on every call (and logs at V(5), off
	// in production); give it one that discards, as a deployed operator's disabled level does.
	ctrllog.SetLogger(logr.Discard())
	dir := *flagOut
	if dir == "" {
		var err error
		if dir, err = os.MkdirTemp("", "tfjob-bench-"); err != nil {
			fail(err)
		}
		defer os.RemoveAll(dir)
	} else if err := os.MkdirAll(dir, 0o755); err != nil {
		fail(err)
	}
	ins, err := loadInputs(dir)
	if err != nil {
		fail(err)
	}
	if *flagEmit {
		for _, in := range ins {
			fmt.Printf("%s:%s:%d\n", filepath.Join(dir, in.file), in.tfType, in.tfIndex)
		}
		return
	}
	host, _ := os.Hostname()
	fmt.Printf("libtfjob %s vs training-operator v1.9.2 — %s, %s/%s, GOMAXPROCS=%d, %s, host %s\n",
		tfjob.LibraryVersion(), cpuModel(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.Version(), host)
	fmt.Printf("median of %d batches of >= %v each (%s clock); us = microseconds per operation\n", *flagRuns, *flagBatch, *flagClock)
	if data, err := os.ReadFile("/proc/loadavg"); err == nil {
		fmt.Printf("load average at start: %s", data)
	}
	fmt.Println()

	cres, err := runCBench(dir, ins)
	if err != nil {
		fail(err)
	}
	var records []record

	// cgo's own cost: one trivial call into libtfjob.
	cgo, _ := measure(func() error { _ = tfjob.ExitCodeRetryable(137, tfjob.Documented); return nil })

	tw := tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Println("parse + default + validate (compat training-operator-1.9 for libtfjob)")
	fmt.Fprintln(tw, "input\tbytes\tv1.9 Go us\tv1.9 allocs\tv1.9 KiB/op\tbinding us\tbinding Go allocs\tC us\tC mallocs\tC peak KiB\tv1.9/C\tv1.9/binding\t")
	for _, in := range ins {
		a, err := measure(v19ParseDefaultValidate(in.data))
		if err != nil {
			fail(fmt.Errorf("v1.9 %s: %v", in.name, err))
		}
		b, err := measure(bindingParseDefaultValidate(in.data))
		if err != nil {
			fail(fmt.Errorf("binding %s: %v", in.name, err))
		}
		c := cres[in.file+"|pdv"]
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", in.name, len(in.data),
			us(a.NsMedian), count(a.AllocsPerOp), kib(a.BytesPerOp), us(b.NsMedian), count(b.AllocsPerOp),
			us(c.NsMedian), count(c.AllocsPerOp), kib(c.PeakBytes), ratio(a.NsMedian, c.NsMedian), ratio(a.NsMedian, b.NsMedian))
		records = append(records, record{in.name, len(in.data), "parse+default+validate", "v1.9", a, 0},
			record{in.name, len(in.data), "parse+default+validate", "binding", b, a.NsMedian / b.NsMedian})
		if c.NsMedian > 0 {
			records = append(records, record{in.name, len(in.data), "parse+default+validate", "c", c, a.NsMedian / c.NsMedian})
		}
	}
	tw.Flush()

	fmt.Println("\nthe same, interleaved (one batch of each in turn per run; ratios are medians of per-run ratios)")
	tw = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "input\tv1.9 Go us\tbinding us\tC (in-process loop) us\tv1.9/binding\tv1.9/C\t")
	for _, in := range ins {
		med, rat, err := interleaved([]func(int) error{loop(v19ParseDefaultValidate(in.data)),
			loop(bindingParseDefaultValidate(in.data)), cLoop(in.data)})
		if err != nil {
			fail(err)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%.2fx\t%.2fx\t\n", in.name, us(med[0]), us(med[1]), us(med[2]), rat[1], rat[2])
		records = append(records, record{in.name, len(in.data), "parse+default+validate/interleaved", "v1.9", result{NsMedian: med[0]}, 0},
			record{in.name, len(in.data), "parse+default+validate/interleaved", "binding", result{NsMedian: med[1]}, rat[1]},
			record{in.name, len(in.data), "parse+default+validate/interleaved", "c-in-process", result{NsMedian: med[2]}, rat[2]})
	}
	tw.Flush()

	fmt.Println("\nparse only")
	tw = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "input\tv1.9 yaml.Unmarshal us\tbinding Parse us\tC tfjob_job_parse us\tC mallocs\tv1.9/C\tlibyaml|jansson alone us\tC pdv - alone us\t")
	for _, in := range ins {
		a, _ := measure(v19Parse(in.data))
		b, _ := measure(bindingParse(in.data))
		c := cres[in.file+"|parse"]
		l := cres[in.file+"|lib"]
		rest := "-"
		if p := cres[in.file+"|pdv"]; p.NsMedian > 0 && l.NsMedian > 0 {
			rest = us(p.NsMedian - l.NsMedian)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", in.name, us(a.NsMedian), us(b.NsMedian), us(c.NsMedian),
			count(c.AllocsPerOp), ratio(a.NsMedian, c.NsMedian), us(l.NsMedian), rest)
		records = append(records, record{in.name, len(in.data), "parse", "v1.9", a, 0},
			record{in.name, len(in.data), "parse", "binding", b, a.NsMedian / b.NsMedian})
		if c.NsMedian > 0 {
			records = append(records, record{in.name, len(in.data), "parse", "c", c, a.NsMedian / c.NsMedian})
		}
		if l.NsMedian > 0 {
			records = append(records, record{in.name, len(in.data), "parse", "c-third-party-alone", l, a.NsMedian / l.NsMedian})
		}
	}
	tw.Flush()
	fmt.Println("(libyaml|jansson alone: libyaml's event parser on the YAML, nothing built, or jansson's json_loadb on the JSON;\n" +
		"C pdv - alone: what parse+default+validate costs beyond that parser: tree building, defaults, validation, frees)")
	fmt.Printf("\ncgo: one trivial call into libtfjob (tfjob_exit_code_classify) costs %.0f ns; Parse+WithDefaults+ValidateWith make\n"+
		"about 10 C calls plus a copy of the input (C.CBytes) and a clone of the job (WithDefaults returns a copy).\n", cgo.NsMedian)

	fmt.Println("\nTF_CONFIG of one replica of the defaulted job (Worker, middle index)")
	tw = tabwriter.NewWriter(os.Stdout, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "input\tindex\tv1.9 SetClusterSpec us\tv1.9 allocs\tv1.9 KiB/op\tcgo tfjob_tf_config us\tC tfjob_tf_config us\tC mallocs\tC peak KiB\tC graph_tf_config us\tv1.9/C\t")
	for _, in := range ins {
		a, err := measure(v19TFConfig(in.data, in.tfType, in.tfIndex))
		if err != nil {
			fail(fmt.Errorf("v1.9 TF_CONFIG %s: %v", in.name, err))
		}
		var b result
		if fn := bindingTFConfig(in.data, in.tfType, in.tfIndex); fn != nil {
			if b, err = measure(fn); err != nil {
				fail(fmt.Errorf("libtfjob TF_CONFIG %s: %v", in.name, err))
			}
		}
		c := cres[in.file+"|tfcfg"]
		g := cres[in.file+"|tfcfg-graph"]
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", in.name, in.tfIndex, us(a.NsMedian), count(a.AllocsPerOp),
			kib(a.BytesPerOp), us(b.NsMedian), us(c.NsMedian), count(c.AllocsPerOp), kib(c.PeakBytes), us(g.NsMedian),
			ratio(a.NsMedian, c.NsMedian))
		records = append(records, record{in.name, len(in.data), "tf_config", "v1.9", a, 0})
		if b.NsMedian > 0 {
			records = append(records, record{in.name, len(in.data), "tf_config", "cgo", b, a.NsMedian / b.NsMedian})
		}
		if c.NsMedian > 0 {
			records = append(records, record{in.name, len(in.data), "tf_config", "c", c, a.NsMedian / c.NsMedian},
				record{in.name, len(in.data), "tf_config_graph", "c", g, a.NsMedian / g.NsMedian})
		}
	}
	tw.Flush()
	if !haveTFConfig {
		fmt.Println("(libtfjob columns empty: the installed libtfjob has no tfjob_tf_config; build with -tags tfconfig once it has)")
	}
	if *flagJSON != "" {
		data, _ := json.MarshalIndent(records, "", "  ")
		if err := os.WriteFile(*flagJSON, data, 0o644); err != nil {
			fail(err)
		}
	}
}

func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return "unknown CPU"
	}
	for _, line := range strings.Split(string(data), "\n") {
		if strings.HasPrefix(line, "model name") {
			if i := strings.Index(line, ":"); i >= 0 {
				return strings.TrimSpace(line[i+1:]) + fmt.Sprintf(" (%d CPUs)", runtime.NumCPU())
			}
		}
	}
	return "unknown CPU"
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "bench:", err)
	os.Exit(1)
}
