package diff

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"

	"golang.org/x/mod/module"
	"sigs.k8s.io/yaml"
)

// The API server checks a TFJob against the CRD's structural schema before any admission
// webhook runs, and a schema error ends the request. v1.9 "as deployed" is therefore: its CRD
// (manifests/base/crds/kubeflow.org_tfjobs.yaml of the v1.9.4 module, read from the module
// cache, not copied) and then its webhook. This file checks the two rules of that schema the
// random jobs can break: `required` properties and JSON `type`s, with the API server's error
// forms (field.Required(path, ""), field.TypeInvalid with "<path> in body must be of type T").

type schema struct {
	Type                 string             `json:"type"`
	Properties           map[string]*schema `json:"properties"`
	AdditionalProperties *schema            `json:"additionalProperties"`
	Items                *schema            `json:"items"`
	Required             []string           `json:"required"`
	IntOrString          bool               `json:"x-kubernetes-int-or-string"`
	PreserveUnknown      bool               `json:"x-kubernetes-preserve-unknown-fields"`
}

var (
	crdOnce   sync.Once
	crdSchema *schema
	crdErr    error
)

const trainingOperatorModule = "github.com/kubeflow/training-operator"
const trainingOperatorVersion = "v1.9.4"

func loadCRD() (*schema, error) {
	crdOnce.Do(func() {
		modcache := os.Getenv("GOMODCACHE")
		if modcache == "" {
			gopath := os.Getenv("GOPATH")
			if gopath == "" {
				home, _ := os.UserHomeDir()
				gopath = filepath.Join(home, "go")
			}
			modcache = filepath.Join(strings.Split(gopath, string(os.PathListSeparator))[0], "pkg", "mod")
		}
		esc, err := module.EscapePath(trainingOperatorModule)
		if err != nil {
			crdErr = err
			return
		}
		path := filepath.Join(modcache, esc+"@"+trainingOperatorVersion, "manifests", "base", "crds", "kubeflow.org_tfjobs.yaml")
		data, err := os.ReadFile(path)
		if err != nil {
			crdErr = fmt.Errorf("v1.9 CRD: %v", err)
			return
		}
		var crd struct {
			Spec struct {
				Versions []struct {
					Name   string `json:"name"`
					Schema struct {
						OpenAPIV3Schema *schema `json:"openAPIV3Schema"`
					} `json:"schema"`
				} `json:"versions"`
			} `json:"spec"`
		}
		if err := yaml.Unmarshal(data, &crd); err != nil {
			crdErr = fmt.Errorf("v1.9 CRD %s: %v", path, err)
			return
		}
		for _, v := range crd.Spec.Versions {
			if v.Name == "v1" {
				crdSchema = v.Schema.OpenAPIV3Schema
			}
		}
		if crdSchema == nil {
			crdErr = fmt.Errorf("v1.9 CRD %s has no v1 schema", path)
		}
	})
	return crdSchema, crdErr
}

func jsonTypeWord(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	case string:
		return "string"
	case bool:
		return "boolean"
	case float64:
		// The API server decodes integral JSON numbers as int64 and names them "integer".
		if x := v.(float64); x == float64(int64(x)) {
			return "integer"
		}
		return "number"
	case nil:
		return "null"
	}
	return "unknown"
}

func typeOK(s *schema, v any) bool {
	if s.IntOrString {
		switch x := v.(type) {
		case string:
			return true
		case float64:
			return x == float64(int64(x))
		}
		return false
	}
	switch s.Type {
	case "object":
		_, ok := v.(map[string]any)
		return ok
	case "array":
		_, ok := v.([]any)
		return ok
	case "string":
		_, ok := v.(string)
		return ok
	case "boolean":
		_, ok := v.(bool)
		return ok
	case "integer":
		x, ok := v.(float64)
		return ok && x == float64(int64(x))
	case "number":
		_, ok := v.(float64)
		return ok
	}
	return true
}

func crdCheck(s *schema, v any, path string, out *[]FieldErr) {
	if s == nil || v == nil {
		return
	}
	if !typeOK(s, v) {
		want := s.Type
		if s.IntOrString {
			want = "integer-or-string" // not produced by the generator
		}
		*out = append(*out, FieldErr{path, "FieldValueTypeInvalid",
			fmt.Sprintf("%s in body must be of type %s: %q", path, want, jsonTypeWord(v))})
		return
	}
	join := func(k string) string {
		if path == "" {
			return k
		}
		return path + "." + k
	}
	switch x := v.(type) {
	case map[string]any:
		for _, r := range s.Required {
			if val, ok := x[r]; !ok || val == nil {
				*out = append(*out, FieldErr{join(r), "FieldValueRequired", ""})
			}
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if p, ok := s.Properties[k]; ok {
				crdCheck(p, x[k], join(k), out)
			} else if s.AdditionalProperties != nil {
				crdCheck(s.AdditionalProperties, x[k], path+"["+k+"]", out)
			}
		}
	case []any:
		for i, e := range x {
			crdCheck(s.Items, e, fmt.Sprintf("%s[%d]", path, i), out)
		}
	}
}

// v19SchemaErrors checks a JSON job against v1.9's CRD schema (required and types).
func v19SchemaErrors(data []byte) ([]FieldErr, error) {
	s, err := loadCRD()
	if err != nil {
		return nil, err
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		return nil, err
	}
	var out []FieldErr
	crdCheck(s, v, "", &out)
	return out, nil
}
