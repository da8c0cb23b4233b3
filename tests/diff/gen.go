// Package diff compares libtfjob (compat training-operator-1.9) with training-operator v1.9.4
// itself, on random TFJobs from a fixed seed. See diff_test.go and docs/semantics-diff.md.
package diff

import (
	"encoding/json"
	"fmt"
	"math/rand"
	"sort"
	"strings"
)

// Gen makes random TFJobs. Every choice comes from r, so a seed gives the same jobs.
type Gen struct {
	r *rand.Rand
}

// NewGen returns a generator for the seed.
func NewGen(seed int64) *Gen { return &Gen{r: rand.New(rand.NewSource(seed))} }

func (g *Gen) pick(xs ...string) string { return xs[g.r.Intn(len(xs))] }
func (g *Gen) chance(p float64) bool   { return g.r.Float64() < p }

// absent is a marker: the field is left out.
const absent = "\x00absent"

func setUnlessAbsent(m map[string]any, key, v string) {
	if v != absent {
		m[key] = v
	}
}

func (g *Gen) name() string {
	switch g.r.Intn(30) {
	case 0:
		return "Upper-Case"
	case 1:
		return "1starts-with-digit"
	case 2:
		return "ends-with-dash-"
	case 3:
		return "has.dot"
	case 4:
		return strings.Repeat("a", 64) // one over the DNS-1035 limit
	case 5:
		return strings.Repeat("b", 63) // exactly the limit
	case 6:
		return "under_score"
	case 7:
		return "x"
	default:
		return fmt.Sprintf("job-%d", g.r.Intn(1000))
	}
}

// replica type keys: canonical, other cases, and unknown types.
var typeKeys = []string{"Chief", "Master", "PS", "Worker", "Evaluator",
	"chief", "master", "ps", "worker", "WORKER", "evaluator", "Ps", "Foo", "launcher"}

func (g *Gen) container(i int) map[string]any {
	c := map[string]any{}
	switch g.r.Intn(8) {
	case 0:
		// no name
	case 1:
		c["name"] = "sidecar"
	case 2:
		c["name"] = "TensorFlow"
	default:
		if i == 0 {
			c["name"] = "tensorflow"
		} else {
			c["name"] = fmt.Sprintf("side-%d", i)
		}
	}
	switch g.r.Intn(16) {
	case 0:
		// no image
	case 1:
		c["image"] = ""
	default:
		c["image"] = g.pick("tensorflow/tensorflow:2.15.0", "gcr.io/p/img:1", "busybox")
	}
	if g.chance(0.3) {
		c["command"] = []any{"python", "train.py"}
	}
	switch g.r.Intn(8) {
	case 0:
		c["ports"] = []any{}
	case 1:
		c["ports"] = []any{map[string]any{"name": "tfjob-port", "containerPort": 1000 + g.r.Intn(9000)}}
	case 2:
		c["ports"] = []any{map[string]any{"name": "metrics", "containerPort": 9090}}
	case 3:
		c["ports"] = []any{map[string]any{"containerPort": 80}, map[string]any{"name": "tfjob-port", "containerPort": 2223}}
	case 4:
		c["ports"] = []any{map[string]any{"name": "tfjob-port", "containerPort": 3333, "protocol": "TCP"}}
	}
	if g.chance(0.2) {
		c["env"] = []any{map[string]any{"name": "A", "value": "1"}}
	}
	if g.chance(0.2) {
		c["resources"] = map[string]any{"limits": map[string]any{"cpu": "1", "memory": "1Gi"}}
	}
	return c
}

func (g *Gen) replicaSpec() map[string]any {
	rs := map[string]any{}
	switch k := g.r.Intn(10); {
	case k == 0:
		// absent
	case k == 1:
		rs["replicas"] = 0
	default:
		rs["replicas"] = g.r.Intn(6)
	}
	setUnlessAbsent(rs, "restartPolicy", g.pick(absent, absent, "", "Always", "OnFailure", "Never", "ExitCode", "Sometimes"))
	switch g.r.Intn(30) {
	case 0:
		return rs // no template
	case 1:
		rs["template"] = map[string]any{}
		return rs
	case 2:
		rs["template"] = map[string]any{"spec": map[string]any{}}
		return rs
	case 3:
		rs["template"] = map[string]any{"spec": map[string]any{"containers": []any{}}}
		return rs
	}
	n := 1 + g.r.Intn(3)
	if g.chance(0.6) {
		n = 1
	}
	var cs []any
	for i := 0; i < n; i++ {
		cs = append(cs, g.container(i))
	}
	spec := map[string]any{"containers": cs}
	if g.chance(0.1) {
		spec["restartPolicy"] = "Always"
	}
	tmpl := map[string]any{"spec": spec}
	if g.chance(0.3) {
		tmpl["metadata"] = map[string]any{"labels": map[string]any{"app": "x"}, "annotations": map[string]any{"a": "b"}}
	}
	rs["template"] = tmpl
	return rs
}

// Job returns one random TFJob as JSON.
func (g *Gen) Job() []byte {
	meta := map[string]any{"name": g.name()}
	if g.chance(0.7) {
		meta["namespace"] = g.pick("default", "kubeflow", "team-a")
	}
	if g.chance(0.1) {
		meta["labels"] = map[string]any{"team": "a"}
	}
	spec := map[string]any{}
	rp := map[string]any{}
	setUnlessAbsent(rp, "cleanPodPolicy", g.pick(absent, absent, "All", "Running", "None", "Sometimes"))
	setUnlessAbsent(rp, "managedBy", g.pick(absent, absent, absent, absent, absent, absent, "kubeflow.org/training-operator", "kueue.x-k8s.io/multikueue", "example.com/other", ""))
	if g.chance(0.2) {
		rp["backoffLimit"] = g.r.Intn(4)
	}
	if g.chance(0.2) {
		rp["activeDeadlineSeconds"] = 1 + g.r.Intn(100)
	}
	if g.chance(0.2) {
		rp["ttlSecondsAfterFinished"] = g.r.Intn(100)
	}
	if g.chance(0.1) {
		rp["suspend"] = g.chance(0.5)
	}
	if g.chance(0.1) {
		rp["schedulingPolicy"] = map[string]any{"minAvailable": 1 + g.r.Intn(3), "queue": "q"}
	}
	if len(rp) > 0 || g.chance(0.3) {
		spec["runPolicy"] = rp
	}
	setUnlessAbsent(spec, "successPolicy", g.pick(absent, absent, "", "AllWorkers", "AnyWorker"))
	if g.chance(0.2) {
		spec["enableDynamicWorker"] = g.chance(0.5)
	}
	switch k := g.r.Intn(20); {
	case k == 0:
		// no tfReplicaSpecs
	case k == 1:
		spec["tfReplicaSpecs"] = map[string]any{}
	default:
		specs := map[string]any{}
		n := 1 + g.r.Intn(4)
		for i := 0; i < n; i++ {
			key := typeKeys[g.r.Intn(len(typeKeys))]
			if g.chance(0.5) { // mostly canonical keys
				key = g.pick("Chief", "Master", "PS", "Worker", "Worker", "Evaluator")
			}
			if !allowKey(specs, key) {
				continue
			}
			specs[key] = g.replicaSpec()
		}
		spec["tfReplicaSpecs"] = specs
	}
	if g.chance(0.04) {
		g.mistype(spec)
	}
	job := map[string]any{"apiVersion": "kubeflow.org/v1", "kind": "TFJob", "metadata": meta, "spec": spec}
	var b strings.Builder
	g.encode(&b, job)
	return []byte(b.String())
}

// encode writes v as JSON with object keys in random order (libtfjob keeps document order,
// which decides some outcomes, so both orders must be exercised; Go's maps have none).
func (g *Gen) encode(b *strings.Builder, v any) {
	switch x := v.(type) {
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		g.r.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			g.encode(b, x[k])
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			g.encode(b, e)
		}
		b.WriteByte(']')
	default:
		data, err := json.Marshal(x)
		if err != nil {
			panic(err)
		}
		b.Write(data)
	}
}

// mistype puts a value of the wrong JSON type somewhere the CRD schema types.
func (g *Gen) mistype(spec map[string]any) {
	specs, _ := spec["tfReplicaSpecs"].(map[string]any)
	var rs map[string]any
	for _, k := range sortedKeys(specs) {
		rs, _ = specs[k].(map[string]any)
		break
	}
	switch g.r.Intn(8) {
	case 0:
		spec["successPolicy"] = 1
	case 1:
		spec["enableDynamicWorker"] = "true"
	case 2:
		spec["runPolicy"] = map[string]any{"backoffLimit": "3"}
	case 3:
		spec["tfReplicaSpecs"] = []any{"Worker"}
	case 4:
		if rs != nil {
			rs["replicas"] = "3"
		}
	case 5:
		if rs != nil {
			rs["restartPolicy"] = 7
		}
	case 6:
		if rs != nil {
			rs["template"] = map[string]any{"spec": map[string]any{"containers": map[string]any{"name": "tensorflow"}}}
		}
	case 7:
		if rs != nil {
			rs["template"] = map[string]any{"spec": map[string]any{"containers": []any{
				map[string]any{"name": "tensorflow", "image": "i", "ports": []any{map[string]any{"containerPort": "2222"}}}}}}
		}
	}
}

func sortedKeys(m map[string]any) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

// allowKey excludes what makes v1.9 itself nondeterministic: two non-canonical spellings of
// the same type (SetDefaults_TFJob renames whichever Go's map iteration meets first).
// A canonical key next to one variant is allowed (v1.9 deterministically lets the variant win).
func allowKey(specs map[string]any, key string) bool {
	if _, dup := specs[key]; dup {
		return false
	}
	for k := range specs {
		if strings.EqualFold(k, key) && k != key && !isCanonical(k) && !isCanonical(key) {
			return false
		}
	}
	return true
}

func isCanonical(k string) bool {
	switch k {
	case "Chief", "Master", "PS", "Worker", "Evaluator":
		return true
	}
	return false
}
