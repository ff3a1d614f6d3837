package worker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
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

// TestRegistryFailedRegistrationLeavesNothing registers a model that fails
// to load, synchronously: the registry is as it was before (list and
// health), Describe says why the model is gone, and the name can be
// registered again once the folder is fixed.
func TestRegistryFailedRegistrationLeavesNothing(t *testing.T) {
	r := newTestRegistry(t, func(s *properties.Server) { s.RetryThreshold = 1 })
	r.probe(t, "healthy", []string{"minWorkers=1", "maxWorkers=1"})
	r.mustRegister(t, "healthy")
	list, health := r.List(), r.Health()
	dir := r.probe(t, "broken", nil, "BROKEN")
	err := r.register(t, "broken")
	if !errors.Is(err, api.ErrModelFailed) || !strings.Contains(err.Error(), "BROKEN marker") {
		t.Fatalf("register = %v, want ErrModelFailed with the load's error", err)
	}
	if got := r.List(); !reflect.DeepEqual(got, list) {
		t.Errorf("List = %+v, want %+v as before", got, list)
	}
	if got := r.Health(); !reflect.DeepEqual(got, health) {
		t.Errorf("Health = %+v, want %+v as before", got, health)
	}
	_, err = r.Describe("broken")
	if !errors.Is(err, api.ErrModelNotFound) || !strings.Contains(err.Error(), "registration failed") || !strings.Contains(err.Error(), "BROKEN marker") {
		t.Errorf("Describe = %v, want not found saying why", err)
	}
	if err := r.Submit("broken", newJob("x")); !errors.Is(err, api.ErrModelNotFound) {
		t.Errorf("Submit = %v, want not found", err)
	}
	if err := os.Remove(filepath.Join(dir, "BROKEN")); err != nil {
		t.Fatal(err)
	}
	r.mustRegister(t, "broken")
	if _, err := r.call(t, "broken", newJob("fixed")); err != nil {
		t.Fatal(err)
	}
}

// TestRegistryAsyncRegistrationDropped registers a model that fails to
// load, asynchronously: the call returns at once, describe shows the load's
// error while it retries, and after the last retry the model is gone, with
// Describe saying why.
func TestRegistryAsyncRegistrationDropped(t *testing.T) {
	r := newTestRegistry(t, func(s *properties.Server) { s.RetryThreshold = 2 })
	r.probe(t, "broken", nil, "BROKEN")
	rec, err := r.Register(context.Background(), api.RegisterRequest{URL: "broken"})
	if err != nil || rec.Status != api.StatusPending {
		t.Fatalf("Register = %+v, %v; want a loading model", rec, err)
	}
	sawError := false
	eventuallyTrue(t, "broken dropped", func() bool {
		rec, err := r.Describe("broken")
		if err == nil {
			sawError = sawError || rec.Status == api.StatusPending && strings.Contains(rec.LastError, "BROKEN marker")
			return false
		}
		if !errors.Is(err, api.ErrModelNotFound) || !strings.Contains(err.Error(), "registration failed") {
			t.Fatalf("Describe = %v, want not found saying why", err)
		}
		return true
	})
	if !sawError {
		t.Log("the load's error was not seen in describe between the retries (the poll missed the window)")
	}
	if n := r.started("broken"); n != 2 {
		t.Errorf("%d starts, want retry_threshold = 2", n)
	}
	if names := r.Names(); len(names) != 0 {
		t.Errorf("registered: %v", names)
	}
	if h := r.Health(); len(h) != 0 {
		t.Errorf("Health = %+v, want empty", h)
	}
}

// TestRegistryQueueFullMessage fills the queue of a model that has no
// worker: the refusal wraps batching.ErrQueueFull, and its text starts with
// the sentinel's and says which model and which limit.
func TestRegistryQueueFullMessage(t *testing.T) {
	r := newBareRegistry(t)
	r.probe(t, "tiny", []string{"minWorkers=0", "maxWorkers=0", "job_queue_size=1"})
	r.mustRegister(t, "tiny")
	r.submit(t, "tiny", newJob("first"))
	err := r.Submit("tiny", newJob("second"))
	want := "batching: queue full: model tiny has 1 requests waiting (job_queue_size)"
	if !errors.Is(err, batching.ErrQueueFull) || err.Error() != want {
		t.Fatalf("Submit = %v, want %q", err, want)
	}
}

// TestRegistryShutdownDuringAsyncRegistration shuts the registry down while
// an asynchronous registration is still retrying: Shutdown waits for its
// goroutine, and a model removed by the shutdown is not reported as a
// failed registration.
func TestRegistryShutdownDuringAsyncRegistration(t *testing.T) {
	r := newTestRegistry(t, func(s *properties.Server) { s.RetryThreshold = 10 })
	r.probe(t, "broken", nil, "BROKEN")
	if _, err := r.Register(context.Background(), api.RegisterRequest{URL: "broken"}); err != nil {
		t.Fatal(err)
	}
	eventuallyTrue(t, "a first failure", func() bool {
		rec, err := r.Describe("broken")
		return err == nil && rec.LastError != ""
	})
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	if err := r.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if n := r.logs.FilterMessage("model registration failed; model removed").Len(); n != 0 {
		t.Errorf("%d registrations reported failed at shutdown", n)
	}
	if _, err := r.Register(context.Background(), api.RegisterRequest{URL: "broken", ModelName: "late"}); !errors.Is(err, batching.ErrClosed) {
		t.Errorf("Register after Shutdown = %v, want ErrClosed", err)
	}
}
