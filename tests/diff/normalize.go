package diff

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"sort"
	"strings"
)

// Normalisation of v1.9's output, exactly (docs/semantics-diff.md, "What the harness normalises"):
//
//  1. Go marshals typed structs: fields without `omitempty` come out even when the input did not
//     have them (metadata.creationTimestamp: null, template.metadata: {creationTimestamp: null},
//     containers[].resources: {}, status: {}). A key that only v1.9's output has is ignored when
//     its value is null, [] or an object of such empty values -- never when it is "", 0 or false,
//     which carry meaning (successPolicy: "" is a default).
//  1b. Go's `omitempty` drops zero values that the input had and libtfjob keeps (ports: [],
//     image: "", enableDynamicWorker: false). A key that only libtfjob's output has is ignored
//     when its value is null, [], {}, "", 0 or false.
//  2. Container.name has no `omitempty`: a container without a name comes out of Go as
//     name: "". A containers[i].name "" that only v1.9 has is ignored.
//  3. field.NotSupported lists the supported values in the order of a Go map iteration
//     (sets.UnsortedList), so its detail is compared with the quoted values sorted.
//  4. Field errors are compared as sets: v1.9 iterates a Go map (random order), and its
//     ToAggregate drops errors whose message repeats an earlier one.

// isEmptyValue: null, [], or an object whose members are all empty ({"creationTimestamp":null}).
func isEmptyValue(v any) bool {
	switch x := v.(type) {
	case nil:
		return true
	case map[string]any:
		for _, e := range x {
			if !isEmptyValue(e) {
				return false
			}
		}
		return true
	case []any:
		return len(x) == 0
	}
	return false
}

// isZeroValue: an empty value, "", 0 or false (what Go's omitempty leaves out).
func isZeroValue(v any) bool {
	switch x := v.(type) {
	case string:
		return x == ""
	case float64:
		return x == 0
	case bool:
		return !x
	}
	return isEmptyValue(v)
}

// diffJSON lists the differences between v1.9's value a and ours b, after normalisation.
func diffJSON(path string, a, b any, out *[]string) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			*out = append(*out, fmt.Sprintf("%s: v1.9 %s, ours %s", path, show(a), show(b)))
			return
		}
		keys := map[string]bool{}
		for k := range x {
			keys[k] = true
		}
		for k := range y {
			keys[k] = true
		}
		sorted := make([]string, 0, len(keys))
		for k := range keys {
			sorted = append(sorted, k)
		}
		sort.Strings(sorted)
		for _, k := range sorted {
			av, aok := x[k]
			bv, bok := y[k]
			p := path + "." + k
			switch {
			case aok && bok:
				diffJSON(p, av, bv, out)
			case aok && !bok:
				if isEmptyValue(av) || (k == "name" && av == "" && strings.HasSuffix(path, "]") && strings.Contains(path, ".containers[")) {
					continue
				}
				*out = append(*out, fmt.Sprintf("%s: v1.9 %s, ours absent", p, show(av)))
			case !aok && bok:
				if isZeroValue(bv) {
					continue
				}
				*out = append(*out, fmt.Sprintf("%s: v1.9 absent, ours %s", p, show(bv)))
			}
		}
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			*out = append(*out, fmt.Sprintf("%s: v1.9 %s, ours %s", path, show(a), show(b)))
			return
		}
		for i := range x {
			diffJSON(fmt.Sprintf("%s[%d]", path, i), x[i], y[i], out)
		}
	default:
		if !reflect.DeepEqual(a, b) {
			*out = append(*out, fmt.Sprintf("%s: v1.9 %s, ours %s", path, show(a), show(b)))
		}
	}
}

func show(v any) string {
	data, _ := json.Marshal(v)
	s := string(data)
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}

var supportedRe = regexp.MustCompile(`^supported values: (.*)$`)

// normDetail sorts the value list of a NotSupported detail (rule 3).
func normDetail(e FieldErr) FieldErr {
	if e.Type != "FieldValueNotSupported" {
		return e
	}
	m := supportedRe.FindStringSubmatch(e.Detail)
	if m == nil {
		return e
	}
	vals := strings.Split(m[1], ", ")
	sort.Strings(vals)
	e.Detail = "supported values: " + strings.Join(vals, ", ")
	return e
}

// errSet is a set of normalised field errors (rule 4).
func errSet(errs []FieldErr) map[FieldErr]bool {
	s := map[FieldErr]bool{}
	for _, e := range errs {
		s[normDetail(e)] = true
	}
	return s
}

// diffErrs returns the errors only v1.9 reports and those only libtfjob reports.
func diffErrs(v19, ours []FieldErr) (onlyV19, onlyOurs []FieldErr) {
	a, b := errSet(v19), errSet(ours)
	for e := range a {
		if !b[e] {
			onlyV19 = append(onlyV19, e)
		}
	}
	for e := range b {
		if !a[e] {
			onlyOurs = append(onlyOurs, e)
		}
	}
	less := func(s []FieldErr) func(i, j int) bool {
		return func(i, j int) bool { return s[i].String() < s[j].String() }
	}
	sort.Slice(onlyV19, less(onlyV19))
	sort.Slice(onlyOurs, less(onlyOurs))
	return
}
