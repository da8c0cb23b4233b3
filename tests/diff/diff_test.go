package diff

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	kubeflowv1 "github.com/kubeflow/training-operator/pkg/apis/kubeflow.org/v1"
	tfjob "github.com/libtfjob/libtfjob/bindings/go/tfjob"
	"sigs.k8s.io/yaml"
)

// Knobs (environment): DIFF_SEED (default 1), DIFF_COUNT (random jobs, default 2000),
// DIFF_CLI_EVERY (also check `tfjobctl validate` on every Nth job; 0 = never; default 50),
// DIFF_REPORT (write the summary and one reproducer per disagreement class to this file).
func envInt(name string, def int) int {
	if v := os.Getenv(name); v != "" {
		n, err := strconv.Atoi(v)
		if err == nil {
			return n
		}
	}
	return def
}

// seededRun is the seed (DIFF_SEED), its random source and the number of cases (DIFF_COUNT
// divided by share) of one comparison, so that the comparisons split DIFF_COUNT between them.
func seededRun(share int) (int64, *rand.Rand, int) {
	seed := int64(envInt("DIFF_SEED", 1))
	return seed, rand.New(rand.NewSource(seed)), envInt("DIFF_COUNT", 2000) / share
}

// finding is one disagreement.
type finding struct {
	area   string // validate, defaults, tf-config, conditions
	detail string
	input  []byte
}

// classes of disagreements: key -> count and the first (smallest) reproducer.
type tally struct {
	count map[string]int
	first map[string]finding
	known map[string]string // class -> the docs/semantics-diff.md entry that explains it
}

func newTally() *tally {
	return &tally{count: map[string]int{}, first: map[string]finding{}, known: map[string]string{}}
}

func (t *tally) add(class, known string, f finding) {
	t.count[class]++
	if old, ok := t.first[class]; !ok || len(f.input) < len(old.input) {
		t.first[class] = f
	}
	if known != "" {
		t.known[class] = known
	}
}

func (t *tally) report(tb testing.TB, title string, checked map[string]int) {
	var b strings.Builder
	fmt.Fprintf(&b, "== %s\nchecked:", title)
	keys := make([]string, 0, len(checked))
	for k := range checked {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fmt.Fprintf(&b, " %s=%d", k, checked[k])
	}
	b.WriteString("\n")
	classes := make([]string, 0, len(t.count))
	for c := range t.count {
		classes = append(classes, c)
	}
	sort.Strings(classes)
	unexplained, bugs := 0, 0
	for _, c := range classes {
		f := t.first[c]
		status := "UNEXPLAINED"
		if k := t.known[c]; strings.HasPrefix(k, "BUG-") {
			status = "known libtfjob bug " + k + " (docs/semantics-diff.md)"
			bugs++
		} else if k != "" {
			status = "intended (" + k + ", docs/semantics-diff.md)"
		} else {
			unexplained++
		}
		fmt.Fprintf(&b, "- [%s] %s: %d job(s), %s\n    %s\n    reproducer: %s\n", f.area, c, t.count[c], status, f.detail, f.input)
	}
	fmt.Fprintf(&b, "disagreement classes: %d, known libtfjob bugs: %d, unexplained: %d\n", len(classes), bugs, unexplained)
	tb.Log("\n" + b.String())
	if path := os.Getenv("DIFF_REPORT"); path != "" {
		fh, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err == nil {
			fh.WriteString(b.String())
			fh.Close()
		}
	}
	if unexplained > 0 {
		tb.Errorf("%d unexplained disagreement class(es) with training-operator v1.9 (see the log)", unexplained)
	}
	if strict := os.Getenv("DIFF_STRICT"); bugs > 0 && strict != "" && strict != "0" {
		tb.Errorf("%d disagreement class(es) are known libtfjob bugs (DIFF_STRICT is set)", bugs)
	}
}

// typesOf lists the tfReplicaSpecs keys of a JSON job.
func typesOf(data []byte) []string {
	var j struct {
		Spec struct {
			TFReplicaSpecs map[string]json.RawMessage `json:"tfReplicaSpecs"`
		} `json:"spec"`
	}
	_ = json.Unmarshal(data, &j)
	var ks []string
	for k := range j.Spec.TFReplicaSpecs {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

func TestDifferential(t *testing.T) {
	seed := int64(envInt("DIFF_SEED", 1))
	count := envInt("DIFF_COUNT", 2000)
	cliEvery := envInt("DIFF_CLI_EVERY", 50)
	g := NewGen(seed)
	tl := newTally()
	checked := map[string]int{}
	for i := 0; i < count; i++ {
		data := g.Job()
		if i%4 == 3 {
			// Every fourth job goes in as YAML (sigs.k8s.io/yaml vs libyaml's loader).
			y, err := yaml.JSONToYAML(data)
			if err != nil {
				t.Fatal(err)
			}
			data = y
		}
		clusterDomain := ""
		if i%3 == 0 {
			clusterDomain = "cluster.local"
		}
		checkOne(t, tl, checked, data, clusterDomain, cliEvery > 0 && i%cliEvery == 0)
	}
	tl.report(t, fmt.Sprintf("defaults, validation, TF_CONFIG: seed %d, %d random jobs", seed, count), checked)
}

func checkOne(t *testing.T, tl *tally, checked map[string]int, data []byte, clusterDomain string, viaCLI bool) {
	t.Helper()
	ours, err := tfjob.Parse(data, "")
	if err != nil {
		t.Fatalf("libtfjob cannot parse %s: %v", data, err)
	}
	defer ours.Close()

	// ---- validation (the webhook sees the object as submitted, before defaults) ----
	// v1.9 as deployed: the CRD schema first (its errors end the request), then the webhook.
	v19Errs, v19Err := v19SchemaErrors(asJSON(t, data))
	if v19Err != nil {
		t.Fatal(v19Err)
	}
	vjob, derr := v19Decode(data)
	if derr != nil && len(v19Errs) == 0 {
		t.Fatalf("v1.9 cannot decode %s, which its CRD schema admits: %v", data, derr)
	}
	if len(v19Errs) == 0 {
		v19Errs, v19Err = v19Validate(vjob)
	} else {
		checked["validate-schema-stage"]++
	}
	oursErrs, err := oursValidate(ours)
	if err != nil {
		t.Fatalf("libtfjob validate %s: %v", data, err)
	}
	checked["validate"]++
	if v19Err != nil {
		class, known := classifyValidatePanic(data, v19Err)
		tl.add(class, known, finding{"validate", fmt.Sprintf("v1.9: %v; ours: %v", v19Err, oursErrs), data})
	} else {
		onlyV19, onlyOurs := diffErrs(v19Errs, oursErrs)
		for _, e := range onlyV19 {
			class, known := classifyValidate(data, e, true)
			tl.add(class, known, finding{"validate", "only v1.9 reports " + e.String(), data})
		}
		for _, e := range onlyOurs {
			class, known := classifyValidate(data, e, false)
			tl.add(class, known, finding{"validate", "only libtfjob reports " + e.String(), data})
		}
	}
	if viaCLI {
		cliErrs, valid, err := cliValidate(data)
		checked["validate-cli"]++
		if err != nil {
			t.Fatalf("%v", err)
		}
		a, b := diffErrs(oursErrs, cliErrs)
		if len(a)+len(b) > 0 || valid != (len(oursErrs) == 0) {
			tl.add("cli-differs-from-binding", "", finding{"validate", fmt.Sprintf("binding %v, tfjobctl %v (valid %v)", oursErrs, cliErrs, valid), data})
		}
	}

	// ---- defaults ----
	// An object with a mistyped field never passes the API server's schema check, so it never
	// reaches v1.9's controller (sigs.k8s.io/yaml would even turn `successPolicy: 1` into "1");
	// libtfjob must refuse to default it (TFJOB_ESCHEMA).
	schemaErrs, _ := v19SchemaErrors(asJSON(t, data))
	for _, e := range schemaErrs {
		if e.Type == "FieldValueTypeInvalid" {
			checked["defaults-mistyped"]++
			if _, err := oursDefaults(ours); err == nil {
				tl.add("defaults of a mistyped object", "", finding{"defaults", "v1.9's CRD rejects it (" + e.String() + "); libtfjob defaults it", data})
			}
			return
		}
	}
	djob, derr := v19Decode(data)
	if derr != nil {
		t.Fatalf("v1.9 cannot decode %s: %v", data, derr)
	}
	v19Out, v19Err := v19Defaults(djob)
	oursOut, oursErr := oursDefaults(ours)
	checked["defaults"]++
	switch {
	case v19Err != nil && oursErr != nil:
		// both refuse
	case v19Err != nil:
		class, known := classifyDefaultsPanic(asJSON(t, data), v19Err)
		tl.add(class, known, finding{"defaults", fmt.Sprintf("v1.9: %v; libtfjob defaults it", v19Err), data})
	case oursErr != nil:
		tl.add("defaults-ours-error", "", finding{"defaults", fmt.Sprintf("libtfjob: %v; v1.9 defaults it", oursErr), data})
	default:
		var a, b any
		if err := json.Unmarshal(v19Out, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(oursOut, &b); err != nil {
			t.Fatal(err)
		}
		var diffs []string
		diffJSON("", a, b, &diffs)
		for _, d := range diffs {
			class, known := classifyDefaults(data, d)
			tl.add(class, known, finding{"defaults", d, data})
		}
	}

	// ---- TF_CONFIG of every replica (jobs that v1.9 admits and can default) ----
	if v19Err != nil || oursErr != nil || len(v19Errs) != 0 {
		return
	}
	// The API server fills metadata.namespace from the request before any controller sees the
	// object; v1.9's controller never meets an empty namespace (libtfjob reads it as "default").
	if djob.Namespace == "" {
		djob.Namespace = "default"
	}
	oursD, err := ours.WithDefaults(compat)
	if err != nil {
		t.Fatal(err)
	}
	defer oursD.Close()
	for rtype, spec := range djob.Spec.TFReplicaSpecs {
		n := 1
		if spec.Replicas != nil {
			n = int(*spec.Replicas)
		}
		if n > 6 {
			n = 6
		}
		for idx := 0; idx < n; idx++ {
			want, werr := v19TFConfig(djob, string(rtype), idx, clusterDomain)
			got, gerr := oursD.TFConfig(string(rtype), int64(idx), tfjob.RenderOptions{Compat: compat, ClusterDomain: clusterDomain})
			checked["tf-config"]++
			switch {
			case werr != nil && gerr != nil:
			case werr != nil || gerr != nil:
				class, known := classifyTFConfig(data, string(rtype), fmt.Sprintf("v1.9 err %v, ours err %v", werr, gerr))
				tl.add(class, known, finding{"tf-config", fmt.Sprintf("%s %d: v1.9 %q (%v); ours %q (%v)", rtype, idx, want, werr, got, gerr), data})
			case want != got:
				class, known := classifyTFConfig(data, string(rtype), "bytes")
				tl.add(class, known, finding{"tf-config", fmt.Sprintf("%s %d (domain %q):\n      v1.9 %s\n      ours %s", rtype, idx, clusterDomain, want, got), data})
			}
		}
	}
}

// ---- classification: every disagreement is a known, documented difference or a failure ----

func asJSON(t *testing.T, data []byte) []byte {
	j, err := yaml.YAMLToJSON(data)
	if err != nil {
		t.Fatal(err)
	}
	return j
}

func hasKey(data []byte, key string) bool {
	for _, k := range typesOf(data) {
		if k == key {
			return true
		}
	}
	return false
}

func classifyValidatePanic(data []byte, err error) (string, string) {
	return "validate-v19-panic: " + err.Error(), ""
}

func classifyValidate(data []byte, e FieldErr, onlyV19 bool) (string, string) {
	side := "ours"
	if onlyV19 {
		side = "v1.9"
	}
	return fmt.Sprintf("validate-only-%s %s %s", side, genericPath(e.Field), e.Type), ""
}

// noContainers reports whether some replica spec of the JSON job has no container.
func noContainers(data []byte) bool {
	var j struct {
		Spec struct {
			TFReplicaSpecs map[string]*struct {
				Template struct {
					Spec struct {
						Containers []json.RawMessage `json:"containers"`
					} `json:"spec"`
				} `json:"template"`
			} `json:"tfReplicaSpecs"`
		} `json:"spec"`
	}
	if json.Unmarshal(data, &j) != nil {
		return false
	}
	for _, rs := range j.Spec.TFReplicaSpecs {
		if rs != nil && len(rs.Template.Spec.Containers) == 0 {
			return true
		}
	}
	return false
}

func classifyDefaultsPanic(data []byte, err error) (string, string) {
	msg := firstLine(err.Error())
	if msg == "panic: runtime error: index out of range [0] with length 0" && noContainers(data) {
		return "defaults-v19-panic: a replica without containers", "D1"
	}
	return "defaults-v19-panic: " + msg, ""
}

func classifyDefaults(data []byte, d string) (string, string) {
	return "defaults " + genericPath(strings.SplitN(d, ":", 2)[0]), ""
}

func classifyTFConfig(data []byte, rtype, what string) (string, string) {
	return "tf-config " + what, ""
}

// genericPath replaces map keys and indexes so that one class covers every instance.
func genericPath(p string) string {
	var b strings.Builder
	depth := 0
	for _, r := range p {
		switch {
		case r == '[':
			depth++
			b.WriteString("[*")
		case r == ']':
			depth--
			b.WriteRune(r)
		case depth > 0:
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

var _ = kubeflowv1.TFJobDefaultPortName
