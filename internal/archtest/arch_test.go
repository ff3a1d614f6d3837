package archtest

import (
	"go/build"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/switchyard/switchyard"

// root is the module's folder, seen from this package's.
var root = filepath.Join("..", "..")

// allowed lists every package of the module with the project packages its
// non-test files may import. It denies by default: a package that is not
// listed fails TestEveryPackageListed until it is placed here (and in the
// package table of docs/architecture.md).
var allowed = map[string][]string{
	// Leaves: they import nothing of ours.
	"api":        {},
	"message":    {},
	"properties": {},
	"gpu":        {},
	"batching":   {"message"},
	"pyruntime":  {},
	"agent":      {},

	// The worker side: the codec, one process, the registry.
	"worker/wire":    {"message"},
	"worker/process": {"api", "message", "worker/wire"},
	"worker":         {"api", "batching", "gpu", "message", "properties", "worker/process"},

	// The front-end never imports the worker side: it declares the
	// interfaces it needs and cmd/switchyard passes the registry in. Its
	// core imports the dialects it lists in its route table; a dialect
	// imports the contract (frontend/dialect) and the shared stream helpers
	// (frontend/genstream), never another dialect nor the core.
	"frontend":           {"api", "batching", "message", "frontend/dialect", "frontend/djl", "frontend/openai", "frontend/aws", "frontend/kserve"},
	"frontend/dialect":   {"api", "message"},
	"frontend/genstream": {"message", "frontend/dialect"},
	"frontend/djl":       {"api", "frontend/dialect", "frontend/genstream"},
	"frontend/openai":    {"api", "frontend/dialect", "frontend/genstream"},
	"frontend/aws":       {"api", "batching", "message", "frontend/awsapi", "frontend/dialect", "frontend/genstream"},
	"frontend/kserve":    {"api", "message", "frontend/dialect"},
	"frontend/awsapi":    {},

	// Shipped commands.
	"cmd/switchyard": {"agent", "api", "frontend", "gpu", "properties", "pyruntime", "worker", "worker/process"},
	"cmd/nvmlcheck":  {"gpu"},

	// Benchmarks: they talk to a server over HTTP, not through its packages.
	"bench/chatbench":            {},
	"bench/loadgen":              {},
	"bench/membench":             {"bench/internal/benchserver"},
	"bench/residencybench":       {"bench/internal/benchserver"},
	"bench/internal/benchserver": {},
	"bench/pprofhook":            {},

	// Test support and test-only packages.
	"gpu/gputest":       {},
	"internal/archtest": {},
	"internal/djlsrc":   {},
	"internal/testutil": {"pyruntime"},
	"docker":            {},
	"e2e":               {},
	"examples":          {},
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

// TestEveryPackageListed fails for a package of the module that allowed
// does not place, and for an entry that names no package.
func TestEveryPackageListed(t *testing.T) {
	found := packages(t, root)
	for _, pkg := range unlisted(found) {
		t.Errorf("package %s is not listed in allowed: add it with what it may import", pkg)
	}
	for pkg := range allowed {
		if !slices.Contains(found, pkg) {
			t.Errorf("allowed lists %s, which is not a package of the module", pkg)
		}
	}
}

// TestNewPackageRefused checks the check itself: in a copy of the module's
// layout with one more package, that package is reported and the listed
// ones, testdata and nested modules are not.
func TestNewPackageRefused(t *testing.T) {
	dir := t.TempDir()
	for _, f := range []string{"api/api.go", "worker/wire/wire.go", "newpkg/new.go",
		"api/testdata/x/x.go", "deploy/tests/go.mod", "deploy/tests/t.go"} {
		p := filepath.Join(dir, filepath.FromSlash(f))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("package x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got := unlisted(packages(t, dir))
	if !slices.Equal(got, []string{"newpkg"}) {
		t.Errorf("unlisted packages = %v, want [newpkg]", got)
	}
}

// unlisted returns the packages of found that allowed does not place.
func unlisted(found []string) []string {
	var out []string
	for _, pkg := range found {
		if _, ok := allowed[pkg]; !ok {
			out = append(out, pkg)
		}
	}
	return out
}

// packages returns every folder of the module that holds Go files, as a
// path relative to the module, skipping testdata, hidden and vendored
// folders and nested modules.
func packages(t *testing.T, top string) []string {
	t.Helper()
	var out []string
	err := filepath.WalkDir(top, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(top, p)
		if rel != "." && skipDir(p, d.Name()) {
			return fs.SkipDir
		}
		if hasGo(t, p) && rel != "." {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func skipDir(p, name string) bool {
	if name == "testdata" || name == "node_modules" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_") {
		return true
	}
	_, err := os.Stat(filepath.Join(p, "go.mod"))
	return err == nil
}

func hasGo(t *testing.T, dir string) bool {
	t.Helper()
	matches, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	return len(matches) > 0
}

// projectImports returns the project packages that pkg's non-test files import.
func projectImports(t *testing.T, pkg string) []string {
	t.Helper()
	p, err := build.ImportDir(filepath.Join(root, filepath.FromSlash(pkg)), 0)
	if _, noGo := err.(*build.NoGoError); noGo {
		return nil // only test files
	}
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
