package worker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/properties"
)

// hangLimit bounds a registration that must be refused at once: one that
// reads /dev/zero or waits on a named pipe fails the test instead of
// hanging it. It is no timing threshold; the time taken is logged.
const hangLimit = 30 * time.Second

// registerGuarded registers the store's folder name synchronously and
// fails the test if that does not return within hangLimit.
func (r *testRegistry) registerGuarded(t *testing.T, name string) error {
	t.Helper()
	done := make(chan error, 1)
	began := time.Now()
	go func() {
		_, err := r.Register(context.Background(), api.RegisterRequest{URL: name, Synchronous: true})
		done <- err
	}()
	select {
	case err := <-done:
		t.Logf("%s: answered in %v", name, time.Since(began))
		return err
	case <-time.After(hangLimit):
		t.Fatalf("registering %s did not return within %v", name, hangLimit)
		return nil
	}
}

// TestRegistryHostileFiles registers folders whose files are links to
// /dev/zero, named pipes, too large, or links out of the allowed roots:
// each is refused with a bad request at once, and nothing is registered.
func TestRegistryHostileFiles(t *testing.T) {
	r := newBareRegistry(t)
	outside := filepath.Join(t.TempDir(), "secret.properties")
	if err := os.WriteFile(outside, []byte("batch_size=1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	type file struct{ name, kind, target string }
	tests := []struct {
		name  string
		props []string // serving.properties lines, when it is a plain file
		files []file
		want  string
	}{
		{"properties link to /dev/zero", nil, []file{{properties.ModelFile, "link", "/dev/zero"}}, "links outside the allowed model roots"},
		{"properties fifo", nil, []file{{properties.ModelFile, "fifo", ""}}, "named pipe"},
		{"properties too large", nil, []file{{properties.ModelFile, "big", ""}}, "larger than 1048576 bytes"},
		{"properties link out of the roots", nil, []file{{properties.ModelFile, "link", outside}}, "links outside the allowed model roots"},
		{"requirements fifo", []string{"minWorkers=0"}, []file{{"requirements.txt", "fifo", ""}}, "named pipe"},
		{"requirements link to /dev/zero", []string{"minWorkers=0"}, []file{{"requirements.txt", "link", "/dev/zero"}}, "links outside the allowed model roots"},
		{"model.py fifo", []string{"minWorkers=0"}, []file{{"model.py", "fifo", ""}}, "named pipe"},
		{"entry point fifo", []string{"minWorkers=0", "option.entryPoint=custom.py"}, []file{{"custom.py", "fifo", ""}}, "named pipe"},
		{"entry point folder", []string{"minWorkers=0", "option.entryPoint=custom.py"}, []file{{"custom.py", "dir", ""}}, "is a folder"},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := "hostile" + string(rune('a'+i))
			dir := r.probe(t, name, tt.props)
			for _, f := range tt.files {
				placeFile(t, filepath.Join(dir, f.name), f.kind, f.target)
			}
			err := r.registerGuarded(t, name)
			if !errors.Is(err, api.ErrBadRequest) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("register = %v, want a bad request saying %q", err, tt.want)
			}
		})
	}
	if names := r.Names(); len(names) != 0 {
		t.Errorf("registered: %v", names)
	}
}

// TestRegistryDevZeroInsideRoots registers folders whose files link to
// /dev/zero on a server whose allowed root is "/": the link stays inside
// the roots, and the file is refused for what it is.
func TestRegistryDevZeroInsideRoots(t *testing.T) {
	r := newBareRegistry(t, func(s *properties.Server) { s.AllowedModelRoots = []string{"/"} })
	for i, name := range []string{properties.ModelFile, "requirements.txt", "model.py"} {
		model := "zero" + string(rune('a'+i))
		dir := r.probe(t, model, []string{"minWorkers=0"})
		placeFile(t, filepath.Join(dir, name), "link", "/dev/zero")
		err := r.registerGuarded(t, model)
		if !errors.Is(err, api.ErrBadRequest) || !strings.Contains(err.Error(), "is a character device, not a regular file") {
			t.Errorf("%s linked to /dev/zero: register = %v", name, err)
		}
	}
	if names := r.Names(); len(names) != 0 {
		t.Errorf("registered: %v", names)
	}
}

// placeFile replaces path with a link to target, a named pipe, a folder or
// a file of more than 1 MiB.
func placeFile(t *testing.T, path, kind, target string) {
	t.Helper()
	_ = os.Remove(path)
	var err error
	switch kind {
	case "link":
		err = os.Symlink(target, path)
	case "fifo":
		err = syscall.Mkfifo(path, 0o644)
	case "dir":
		err = os.Mkdir(path, 0o755)
	case "big":
		err = os.WriteFile(path, []byte("# "+strings.Repeat("x", properties.MaxFileSize)), 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
}

// TestRegistryQuotesBriefly registers a 10 KB url: the error quotes a short
// prefix of it.
func TestRegistryQuotesBriefly(t *testing.T) {
	r := newBareRegistry(t)
	for _, url := range []string{strings.Repeat("x", 10<<10), "s3://" + strings.Repeat("b", 10<<10), "/" + strings.Repeat("o", 10<<10)} {
		_, err := r.Register(context.Background(), api.RegisterRequest{URL: url, ModelName: "m", Synchronous: true})
		if err == nil || len(err.Error()) > 300 {
			t.Errorf("error for a %d-byte url is %d bytes: %.300v", len(url), len(errText(err)), err)
		}
	}
}
