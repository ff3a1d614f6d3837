package properties

import (
	"errors"
	"fmt"
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

// FuzzLoadServer loads arbitrary bytes as config.properties: it must never
// panic, an error must name the file and wrap a sentinel, a server it
// returns must be valid, and the management token never shows in an error.
func FuzzLoadServer(f *testing.F) {
	seeds, err := filepath.Glob("testdata/server/*.properties")
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
	f.Add([]byte("management_token=abc def\nmax_workers_total=-1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		file := filepath.Join(t.TempDir(), "config.properties")
		if err := os.WriteFile(file, data, 0o644); err != nil {
			t.Fatal(err)
		}
		s, err := LoadServer(file, nil)
		if err != nil {
			checkFuzzError(t, err, file)
			return
		}
		if err := s.Validate(); err != nil {
			t.Fatalf("LoadServer returned a server that fails Validate: %v", err)
		}
		other := *s
		if s.ManagementToken != "" {
			other.ManagementToken = "other"
		}
		if printed := fmt.Sprintf("%v %+v %#v", *s, *s, *s); printed != fmt.Sprintf("%v %+v %#v", other, other, other) {
			t.Fatalf("the token shows when the server is printed: %s", printed)
		}
	})
}
