package e2e

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// TestOIPSchemasExcerpt checks that the JSON schemas the v2 answers are
// checked against (testdata/oip/schemas.json) are the Open Inference
// Protocol's own: each one the specification holds equals its schema in
// testdata/oip/open_inference_rest.yaml, read by e2e/python/oip_schemas.py
// (PyYAML), and only the model repository extension's come from elsewhere.
func TestOIPSchemasExcerpt(t *testing.T) {
	needE2E(t)
	var spec map[string]any
	runPython(t, &spec, nil, "oip_schemas.py", "../testdata/oip/open_inference_rest.yaml")
	for name, raw := range loadSchemas(t) {
		if name == "$comment" {
			continue
		}
		var mine any
		if err := json.Unmarshal(raw, &mine); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		theirs, ok := spec[name]
		switch {
		case !ok && !strings.HasPrefix(name, "repository_"):
			t.Errorf("%s is not a schema of open_inference_rest.yaml", name)
		case ok && !reflect.DeepEqual(mine, theirs):
			want, _ := json.Marshal(theirs)
			t.Errorf("%s = %s\nopen_inference_rest.yaml has %s", name, raw, want)
		}
	}
}
