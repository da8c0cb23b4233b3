package diff

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	tfjob "github.com/libtfjob/libtfjob/bindings/go/tfjob"
	"sigs.k8s.io/yaml"
)

// YAML as Kubernetes reads it: kubectl (and v1.9's own tests and tools) turn YAML into JSON
// with sigs.k8s.io/yaml (go-yaml v2, YAML 1.1 scalars) before anything else sees it. This
// compares that JSON with libtfjob's parse -> JSON on documents full of YAML 1.1 corner cases.
// Inputs both reject are agreements; an input only one side rejects is a disagreement.

var yamlScalars = []string{
	"yes", "no", "on", "off", "y", "n", "Y", "N", "true", "True", "TRUE", "false", "FALSE", "Yes", "NO", "On", "OFF",
	"~", "null", "Null", "NULL", "",
	"0777", "0o17", "0x1F", "0X1f", "0b1010", "-0b11", "1_000", "+12", "-0", "007", "08", "0.0", "1e3", "1E3", "1.5e3", "1.5E+3",
	".5", "5.", "-.5", "+.5", ".inf", "-.Inf", "+.INF", ".nan", ".NaN", "1__0", "0x_1F", "1,000",
	"12:30:45", "190:20:30", "1:2", "-1:30", "60:00", "1:60",
	"2001-12-14", "2001-12-14t21:59:43.10-05:00", "2001-12-14 21:59:43.10 -5", "2002-12-14T00:00:00Z",
	"'single'", "\"double\"", "\"esc\\tape\\u00e9\"", "'it''s'", "\"\\x41\"", "\"\\/\"",
	"!!str 123", "!!int \"12\"", "!!float 1", "!!bool yes", "!!null ''", "!!str yes",
	"=", "<<", "-", "a: b", "\"a: b\"", "abc # comment", "foo bar", "9223372036854775807", "9223372036854775808",
	"-9223372036854775808", "18446744073709551616", "1e400", "0.1e-400", "123456789012345678901234567890",
	"3.14159265358979323846264338327950288", "1.0", "2.50", "100.000",
}

var yamlKeys = []string{"plain", "yes", "no", "on", "1", "0x10", "1.5", "~", "null", "true", "2001-12-14", "'quoted'", "\"dq\"", "12:30"}

const yamlHead = "apiVersion: kubeflow.org/v1\nkind: TFJob\nmetadata:\n  name: yy\nspec:\n  extra:\n"

type yamlCase struct {
	class string
	doc   string
}

// yamlCases enumerates every scalar in three contexts, every key, and every pair of keys (two
// spellings of one resolved key are a duplicate).
func yamlCases() []yamlCase {
	var cs []yamlCase
	for _, s := range yamlScalars {
		cs = append(cs, yamlCase{"value " + s, yamlHead + "    v: " + s + "\n"},
			yamlCase{"flow item " + s, yamlHead + "    v: [" + s + ", 1]\n"},
			yamlCase{"block item " + s, yamlHead + "    v:\n      - " + s + "\n"})
	}
	structural := map[string]string{
		"merge":               "    base: &b {a: 1, b: 2}\n    m:\n      <<: *b\n      b: 3\n",
		"merge list":          "    x: &x {a: 1}\n    y: &y {a: 2, c: 3}\n    m:\n      <<: [*x, *y]\n",
		"merge inline map":    "    m:\n      <<: {a: 1}\n      a: 2\n",
		"alias of scalar":     "    a: &s yes\n    b: *s\n",
		"literal block":       "    v: |\n      line1\n      line2\n",
		"folded block strip":  "    v: >-\n      a\n      b\n",
		"keep block":          "    v: |+\n      a\n\n",
		"binary tag":          "    v: !!binary aGVsbG8=\n",
		"set":                 "    v: !!set {a, b}\n",
		"omap":                "    v: !!omap [a: 1, b: 2]\n",
		"complex key":         "    ? [a, b]\n    : v\n",
		"quoted key escape":   "    \"a\\tb\": v\n",
		"tab in value":        "    v: a\tb\n",
		"empty flow map":      "    v: {}\n",
		"nested flow":         "    v: {a: [1, {b: c}]}\n",
		"comment after value": "    v: x # c\n",
		"multi-line plain":    "    v: a\n      b\n",
		"single-quote multi":  "    v: 'a\n      b'\n",
	}
	for name, body := range structural {
		cs = append(cs, yamlCase{"structure " + name, yamlHead + body})
	}
	cs = append(cs, yamlCase{"document markers", "---\n" + yamlHead + "    v: 1\n...\n"},
		yamlCase{"two documents", yamlHead + "    v: 1\n---\n" + yamlHead + "    v: 2\n"},
		yamlCase{"BOM", "\ufeff" + yamlHead + "    v: 1\n"},
		yamlCase{"CRLF", strings.ReplaceAll(yamlHead+"    v: 1\n", "\n", "\r\n")})
	for i, k := range yamlKeys {
		cs = append(cs, yamlCase{"key " + k, yamlHead + "    " + k + ": v\n"})
		for _, k2 := range yamlKeys[i+1:] {
			cs = append(cs, yamlCase{"keys " + k + " and " + k2, yamlHead + "    " + k + ": 1\n    " + k2 + ": 2\n"})
		}
	}
	return cs
}

func TestYAMLLoader(t *testing.T) {
	tl := newTally()
	checked := map[string]int{}
	for _, c := range yamlCases() {
		doc := c.doc
		checked["documents"]++
		want, werr := yaml.YAMLToJSON([]byte(doc))
		var got string
		job, gerr := tfjob.Parse([]byte(doc), "")
		if gerr == nil {
			got, gerr = job.JSON()
			job.Close()
		}
		switch {
		case werr != nil && gerr != nil:
		case werr != nil:
			class, known := classifyYAML(c, "only v1.9's reader rejects")
			tl.add(class, known, finding{"yaml", fmt.Sprintf("sigs.k8s.io/yaml: %v; libtfjob: %s", werr, extraOfText(got)), []byte(doc)})
		case gerr != nil:
			class, known := classifyYAML(c, "only libtfjob rejects")
			tl.add(class, known, finding{"yaml", fmt.Sprintf("libtfjob: %v; sigs.k8s.io/yaml: %s", gerr, extraOfText(string(want))), []byte(doc)})
		default:
			var a, b any
			deca := json.NewDecoder(strings.NewReader(string(want)))
			deca.UseNumber()
			if err := deca.Decode(&a); err != nil {
				t.Fatal(err)
			}
			dec := json.NewDecoder(strings.NewReader(got))
			dec.UseNumber()
			if err := dec.Decode(&b); err != nil {
				t.Fatalf("libtfjob JSON %q: %v", got, err)
			}
			if !jsonEqual(a, b) {
				class, known := classifyYAML(c, "value differs")
				tl.add(class, known, finding{"yaml", fmt.Sprintf("sigs.k8s.io/yaml %s, libtfjob %s", extraOf(a), extraOf(b)), []byte(doc)})
			}
		}
	}
	tl.report(t, "YAML loader vs sigs.k8s.io/yaml (kubectl's YAML-to-JSON)", checked)
}

func classifyYAML(c yamlCase, what string) (string, string) {
	class := "yaml " + what + ": " + c.class
	switch {
	case what == "only libtfjob rejects" && strings.HasPrefix(c.class, "keys ") && resolvesSame(c.class):
		return "yaml only libtfjob rejects: two spellings of one key (yes/on/true)", "Y1"
	case what == "only v1.9's reader rejects" && (c.class == "key ~" || c.class == "key null" ||
		(strings.HasPrefix(c.class, "keys ") && (strings.Contains(c.class, " ~") || strings.Contains(c.class, " null")))):
		return "yaml only v1.9's reader rejects: a mapping key that resolves to null (~, null)", "BUG-Y2"
	case what == "only libtfjob rejects" && c.class == "two documents":
		return class, "Y4"
	case what == "value differs" && c.class == "structure binary tag":
		return class, "BUG-Y5"
	case what == "only v1.9's reader rejects" && strings.HasSuffix(c.class, `"\/"`):
		return "yaml only v1.9's reader rejects: the escape \\/ in a double-quoted scalar", "BUG-Y3"
	}
	return class, ""
}

// resolvesSame: a pair of YAML 1.1 spellings of one key (yes/on/true are all "true").
func resolvesSame(class string) bool {
	f := strings.Fields(strings.TrimPrefix(class, "keys "))
	if len(f) != 3 {
		return false
	}
	canon := func(k string) string {
		switch strings.ToLower(k) {
		case "yes", "on", "true", "y":
			return "true"
		case "no", "off", "false", "n":
			return "false"
		}
		return k
	}
	return canon(f[0]) == canon(f[2])
}

func extraOfText(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	return extraOf(v)
}

// extraLine names the class of a document: its first line under spec.extra with the key generic.
func extraLine(doc string) string {
	i := strings.Index(doc, "  extra:\n")
	rest := doc[i+len("  extra:\n"):]
	lines := strings.Split(strings.TrimRight(rest, "\n"), "\n")
	if len(lines) == 1 {
		return strings.TrimSpace(lines[0])
	}
	return fmt.Sprintf("(%d lines)", len(lines))
}

func extraOf(v any) string {
	m, _ := v.(map[string]any)
	s, _ := m["spec"].(map[string]any)
	return show(s["extra"])
}

func jsonEqual(a, b any) bool {
	var out []string
	diffJSONStrict("", a, b, &out)
	return len(out) == 0
}

// diffJSONStrict compares two values decoded with UseNumber: numbers that are both int64
// compare as integers, others by their float64 value (Go writes 1.8446744073709552e19 as
// 18446744073709552000 and 1e29 as 1e+29; the API server's JSON decoder reads either the same).
func diffJSONStrict(path string, a, b any, out *[]string) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			*out = append(*out, path)
			return
		}
		for k := range x {
			if _, ok := y[k]; !ok {
				*out = append(*out, path+"."+k)
				continue
			}
			diffJSONStrict(path+"."+k, x[k], y[k], out)
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			*out = append(*out, path)
			return
		}
		for i := range x {
			diffJSONStrict(fmt.Sprintf("%s[%d]", path, i), x[i], y[i], out)
		}
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			*out = append(*out, path)
			return
		}
		xi, errx := x.Int64()
		yi, erry := y.Int64()
		if errx == nil && erry == nil {
			if xi != yi {
				*out = append(*out, path)
			}
			return
		}
		if errx == nil && !strings.ContainsAny(string(x), ".eE") && erry != nil && strings.ContainsAny(string(y), ".eE") {
			*out = append(*out, path+" (integer vs real)")
			return
		}
		xf, _ := x.Float64()
		yf, _ := y.Float64()
		if xf != yf {
			*out = append(*out, path)
		}
	default:
		if a != b {
			*out = append(*out, path)
		}
	}
}
