package properties

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzLoadModel loads arbitrary bytes as serving.properties: it must never
// panic, an error must name the file and wrap a sentinel, and a model it
// returns must be valid.
func FuzzLoadModel(f *testing.F) {
	seeds, err := filepath.Glob("testdata/models/*/*/" + ModelFile)
	if err != nil {
		f.Fatal(err)
	}
	for _, s := range seeds {
		data, err := os.ReadFile(s)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte("batch_size=\\u0031\nmaxWorkers=0\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dir := t.TempDir()
		file := filepath.Join(dir, ModelFile)
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		m, err := LoadModel(dir, nil, nil)
		if err != nil {
			checkFuzzError(t, err, file)
			return
		}
		if err := m.Validate(); err != nil {
			t.Fatalf("LoadModel returned a model that fails Validate: %v", err)
		}
		_ = m.WorkerProps()
	})
}

func checkFuzzError(t *testing.T, err error, file string) {
	t.Helper()
	if !strings.Contains(err.Error(), file) {
		t.Fatalf("error %q does not name %s", err, file)
	}
	if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrInvalid) {
		t.Fatalf("error %q wraps neither ErrSyntax nor ErrInvalid", err)
	}
}
