package e2e

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// tensorFixture is the numeric model of the Open Inference Protocol's tests.
const tensorFixture = "../examples/fixtures/tensorsum"

// oipSchemas are the protocol's JSON schemas the answers are checked
// against (testdata/oip/schemas.json says where they come from).
type oipSchemas map[string]json.RawMessage

func loadSchemas(t *testing.T) oipSchemas {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "oip", "schemas.json"))
	if err != nil {
		t.Fatal(err)
	}
	var s oipSchemas
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s
}

// schema is the part of JSON Schema the excerpt uses.
type schema struct {
	Type       string             `json:"type"`
	Properties map[string]*schema `json:"properties"`
	Required   []string           `json:"required"`
	Items      *schema            `json:"items"`
	AnyOf      []*schema          `json:"anyOf"`
	Ref        string             `json:"$ref"`
}

// check reports the first place where body does not fit the schema named
// name; nil when it fits.
func (s oipSchemas) check(name string, body []byte) error {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	return s.fits(name, v, "$")
}

func (s oipSchemas) fits(name string, v any, at string) error {
	var sc schema
	if err := json.Unmarshal(s[name], &sc); err != nil || s[name] == nil {
		return fmt.Errorf("no schema %s", name)
	}
	return s.fitsSchema(&sc, v, at)
}

func (s oipSchemas) fitsSchema(sc *schema, v any, at string) error {
	if sc.Ref != "" {
		return s.fits(sc.Ref, v, at)
	}
	if len(sc.AnyOf) > 0 {
		for _, alt := range sc.AnyOf {
			if s.fitsSchema(alt, v, at) == nil {
				return nil
			}
		}
		return fmt.Errorf("%s: %v fits none of its alternatives", at, v)
	}
	switch sc.Type {
	case "object":
		obj, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("%s: not an object", at)
		}
		for _, k := range sc.Required {
			if _, ok := obj[k]; !ok {
				return fmt.Errorf("%s: no %s", at, k)
			}
		}
		for k, sub := range sc.Properties {
			if x, ok := obj[k]; ok {
				if err := s.fitsSchema(sub, x, at+"."+k); err != nil {
					return err
				}
			}
		}
	case "array":
		arr, ok := v.([]any)
		if !ok {
			return fmt.Errorf("%s: not an array", at)
		}
		for i, x := range arr {
			if err := s.fitsSchema(sc.Items, x, at+"["+strconv.Itoa(i)+"]"); err != nil {
				return err
			}
		}
	case "string", "boolean":
		if _, ok := v.(string); sc.Type == "string" && !ok {
			return fmt.Errorf("%s: %v is not a string", at, v)
		}
		if _, ok := v.(bool); sc.Type == "boolean" && !ok {
			return fmt.Errorf("%s: %v is not a boolean", at, v)
		}
	case "number", "integer":
		f, ok := v.(float64)
		if !ok || sc.Type == "integer" && f != float64(int64(f)) {
			return fmt.Errorf("%s: %v is not an %s", at, v, sc.Type)
		}
	}
	return nil
}

// curlReply is one answer curl received.
type curlReply struct {
	code   int
	header map[string]string // lower-case names
	body   []byte
}

// curl runs curl with args (the URL among them) and returns its answer.
func curl(t *testing.T, args ...string) curlReply {
	t.Helper()
	dir := t.TempDir()
	head, body := filepath.Join(dir, "head"), filepath.Join(dir, "body")
	cmd := exec.Command("curl", append([]string{"-sS", "--max-time", "120", "-D", head, "-o", body, "-w", "%{http_code}"}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("curl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	code, err := strconv.Atoi(strings.TrimSpace(string(out)))
	if err != nil {
		t.Fatalf("curl printed %q", out)
	}
	r := curlReply{code: code, header: map[string]string{}}
	r.body, _ = os.ReadFile(body)
	h, _ := os.ReadFile(head)
	for _, line := range strings.Split(string(h), "\r\n") {
		if k, v, ok := strings.Cut(line, ":"); ok {
			r.header[strings.ToLower(k)] = strings.TrimSpace(v)
		}
	}
	return r
}

// tensorStore returns a model store holding the tensorsum fixture under
// each of names, with serving.properties lines added to it.
func tensorStore(t *testing.T, more []string, names ...string) string {
	t.Helper()
	store := t.TempDir()
	props, err := os.ReadFile(filepath.Join(tensorFixture, "serving.properties"))
	if err != nil {
		t.Fatal(err)
	}
	model, err := os.ReadFile(filepath.Join(tensorFixture, "model.py"))
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range names { // a later key of serving.properties wins over an earlier one
		WriteModel(t, store, name, map[string]string{
			"model.py": string(model), "serving.properties": string(props) + strings.Join(more, "\n") + "\n",
		})
	}
	return store
}
