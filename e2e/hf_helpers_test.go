package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"
)

// hfOracle is the in-process oracle: transformers called by e2e/python/hf_oracle.py.
const hfOracle = "python/hf_oracle.py"

// hfLoadLimit bounds the wait for several transformers models to load at
// once (each worker imports torch and transformers): a hang guard.
const hfLoadLimit = 5 * time.Minute

// hfFolder writes a Hugging Face model folder of the store as LMI users
// deploy one: serving.properties alone.
func hfFolder(t testing.TB, store, name string, lines ...string) string {
	t.Helper()
	return WriteModel(t, store, name, map[string]string{"serving.properties": strings.Join(lines, "\n") + "\n"})
}

// oracle asks transformers, in a process of its own, what it answers to req
// (hf_oracle.py says what each kind is) and decodes the answer into out.
func oracle(t testing.TB, req map[string]any, out any) {
	t.Helper()
	in, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(python, hfOracle)
	cmd.Stdin = bytes.NewReader(in)
	cmd.Env = append(os.Environ(), "HF_HUB_OFFLINE=1", "OMP_WAIT_POLICY=PASSIVE")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	b, err := cmd.Output()
	if err != nil {
		t.Fatalf("oracle %v: %v\n%s", req["kind"], err, stderr.String())
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("oracle %v answered %q: %v", req["kind"], b, err)
	}
}

// floatTolerance is how far two scores or hidden states may differ: batched
// and single forward passes round differently.
const floatTolerance = 1e-4

// sameJSON reports the first place where two decoded JSON values differ,
// numbers compared within floatTolerance (relative to their size), or "".
func sameJSON(got, want any, at string) string {
	switch w := want.(type) {
	case map[string]any:
		g, ok := got.(map[string]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: got %s, want an object with keys %v", at, short(got), keys(w))
		}
		for _, k := range keys(w) {
			if d := sameJSON(g[k], w[k], at+"."+k); d != "" {
				return d
			}
		}
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return fmt.Sprintf("%s: got %s, want a list of %d", at, short(got), len(w))
		}
		for i := range w {
			if d := sameJSON(g[i], w[i], fmt.Sprintf("%s[%d]", at, i)); d != "" {
				return d
			}
		}
	case float64:
		g, ok := got.(float64)
		if !ok || math.Abs(g-w) > floatTolerance*math.Max(1, math.Abs(w)) {
			return fmt.Sprintf("%s: got %s, want %v", at, short(got), w)
		}
	default:
		if fmt.Sprint(got) != fmt.Sprint(want) {
			return fmt.Sprintf("%s: got %s, want %s", at, short(got), short(want))
		}
	}
	return ""
}

func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func short(v any) string {
	b, _ := json.Marshal(v)
	if len(b) > 200 {
		return string(b[:200]) + "..."
	}
	return string(b)
}

// decodeAny decodes a JSON body, failing the test when it is not JSON.
func decodeAny(t testing.TB, body []byte) any {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("not JSON: %q: %v", body, err)
	}
	return v
}

// absFixture returns the absolute path of a fixture folder.
func absFixture(t testing.TB, dir, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(p, "config.json")); err != nil {
		t.Fatalf("fixture %s was not built: %v", name, err)
	}
	return p
}
