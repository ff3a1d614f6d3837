package archtest

import (
	"go/build"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/switchyard/switchyard"

// allowed lists, for each package, the project packages its non-test files
// may import. A package not listed may import anything of ours.
var allowed = map[string][]string{
	"api":                  {},
	"properties":           {},
	"gpu":                  {},
	"batching":             {},
	"worker/wire":          {"batching", "api"},
	"worker/pyruntime":     {},
	"worker/process":       {"api", "batching", "worker/wire"},
	"worker":               {"api", "batching", "gpu", "properties", "worker/process"},
	"frontend":             {"api", "batching", "properties", "frontend/awsapi"},
	"frontend/awsapi":      {},
	"internal/testutil":    {"worker/pyruntime"},
	"internal/benchserver": {},
	"agent":                {},
}

func TestImportDirection(t *testing.T) {
	for pkg, ok := range allowed {
		t.Run(pkg, func(t *testing.T) {
			for _, imp := range projectImports(t, pkg) {
				if !slices.Contains(ok, imp) {
					t.Errorf("%s imports %s; it may import only %v of ours", pkg, imp, ok)
				}
			}
		})
	}
}

// projectImports returns the project packages that pkg's non-test files import.
func projectImports(t *testing.T, pkg string) []string {
	t.Helper()
	p, err := build.ImportDir(filepath.Join("..", "..", filepath.FromSlash(pkg)), 0)
	if err != nil {
		t.Fatalf("read %s: %v", pkg, err)
	}
	var out []string
	for _, imp := range p.Imports {
		if rest, ok := strings.CutPrefix(imp, module+"/"); ok {
			out = append(out, rest)
		}
	}
	return out
}
