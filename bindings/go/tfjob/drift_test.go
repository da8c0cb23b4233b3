package tfjob

// The Go options mirror the C option structs by hand (idiomatic fields, durations, callbacks),
// so a member added to a C struct would silently never reach Go. This test reads every options
// struct of include/tfjob/*.h and requires the Go function that fills it (the one calling its
// _init) to set each member, or the member to be listed below with the reason Go leaves it.

import (
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// notMirrored: C members no Go option sets, and why.
var notMirrored = map[string]string{
	"*.version": "set by the struct's _init",
}

var cStructRE = regexp.MustCompile(`(?s)typedef struct (tfjob_\w+_(?:options|hooks)) \{(.*?)\} tfjob_\w+_(?:options|hooks);`)

// cMembers returns the member names of every public tfjob_*_options struct.
func cMembers(t *testing.T) map[string][]string {
	headers, err := filepath.Glob(filepath.Join("..", "..", "..", "include", "tfjob", "*.h"))
	if err != nil || len(headers) == 0 {
		t.Skip("the C headers are not beside the package (not a checkout of libtfjob)")
	}
	comment := regexp.MustCompile(`(?s)/\*.*?\*/`)
	member := regexp.MustCompile(`(\w+)\s*(\[[^\]]*\])?\s*;`)
	out := map[string][]string{}
	for _, h := range headers {
		text, err := os.ReadFile(h)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range cStructRE.FindAllStringSubmatch(string(text), -1) {
			body := comment.ReplaceAllString(m[2], "")
			for _, decl := range strings.Split(body, ";") {
				if mm := member.FindStringSubmatch(decl + ";"); mm != nil {
					out[m[1]] = append(out[m[1]], mm[1])
				}
			}
		}
	}
	return out
}

var (
	// TFJOB_GO_SETTER(fn, struct, member, callback, payload_member) in a cgo preamble.
	setterRE = regexp.MustCompile(`TFJOB_GO_SETTER\(\w+,\s*(tfjob_\w+_options),\s*(\w+),\s*\w+,\s*(\w+)\)`)
	// A C function of a cgo preamble that fills an options struct through a pointer parameter,
	// or a hooks struct of its own.
	cFillerRE = regexp.MustCompile(`(?s)\n\w[^\n]*?\([^)]*?(tfjob_\w+_options) \*(\w+)[^)]*\)\s*\{(.*?)\n\}`)
	cLocalRE  = regexp.MustCompile(`(?s)\n\t(tfjob_\w+_hooks) (\w+) = \w+;(.*?)\n\}`)
)

// goFillers returns, per C options struct, the text of the Go functions that call its _init,
// with "x.member = " lines added for what cgo preamble helpers set (hooks structs are filled
// only there).
func goFillers(t *testing.T) map[string]string {
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	initCall := regexp.MustCompile(`C\.(tfjob_\w+_options)_init\(`)
	out := map[string]string{}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		text, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range setterRE.FindAllStringSubmatch(string(text), -1) {
			out[m[1]] += "\nx." + m[2] + " = x\nx." + m[3] + " = x\n"
		}
		fills := append(cFillerRE.FindAllStringSubmatch(string(text), -1), cLocalRE.FindAllStringSubmatch(string(text), -1)...)
		for _, m := range fills {
			for _, set := range regexp.MustCompile(`\b`+m[2]+`(?:->|\.)(\w+)\s*=[^=]`).FindAllStringSubmatch(m[3], -1) {
				out[m[1]] += "\nx." + set[1] + " = x\n"
			}
		}
		for _, fn := range strings.Split(string(text), "\nfunc ") {
			for _, m := range initCall.FindAllStringSubmatch(fn, -1) {
				out[m[1]] += fn
			}
		}
	}
	return out
}

func TestEveryCOptionReachesGo(t *testing.T) {
	structs := cMembers(t)
	fillers := goFillers(t)
	if len(structs) < 10 {
		t.Fatalf("read only %d options structs from the headers", len(structs))
	}
	var names []string
	for name := range structs {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		body, ok := fillers[name]
		if !ok && strings.HasSuffix(name, "_hooks") && name != "tfjob_controller_hooks" {
			continue // hooks of another area (the Go binding mirrors the controller's)
		}
		if !ok {
			continue // a struct the binding does not use (no Go function fills it)
		}
		for _, m := range structs[name] {
			if notMirrored["*."+m] != "" || notMirrored[name+"."+m] != "" {
				continue
			}
			set := regexp.MustCompile(`\.` + m + `\s*=[^=]|&\w+(\.\w+)*\.` + m + `\b`)
			if !set.MatchString(body) {
				t.Errorf("%s.%s: no Go option sets it (add it to the Go options, or to notMirrored with why)", name, m)
			}
		}
	}
	for key := range notMirrored {
		parts := strings.SplitN(key, ".", 2)
		if parts[0] == "*" {
			continue
		}
		found := false
		for _, m := range structs[parts[0]] {
			found = found || m == parts[1]
		}
		if !found {
			t.Errorf("notMirrored lists %s, which the headers no longer have", key)
		}
	}
}
