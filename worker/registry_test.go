package worker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/properties"
)

func TestValidName(t *testing.T) {
	tests := []struct {
		name string
		ok   bool
	}{
		{"resnet-50_v1.2", true},
		{"a", true},
		{strings.Repeat("x", 64), true},
		{strings.Repeat("x", 65), false},
		{"", false},
		{".", false},
		{"..", false},
		{"a/b", false},
		{"a b", false},
		{"ünï", false},
		{"a%2f", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ValidName(tt.name); got != tt.ok {
				t.Errorf("ValidName(%q) = %v, want %v", tt.name, got, tt.ok)
			}
		})
	}
}

func TestRegistryServesAndDescribes(t *testing.T) {
	r := newTestRegistry(t)
	dir := r.probe(t, "alpha", []string{"minWorkers=1", "maxWorkers=2", "max_idle_time=7"})
	r.mustRegister(t, "alpha")

	resp, err := r.call(t, "alpha", newJob("hello"))
	if err != nil || string(resp.Body) != "hello" {
		t.Fatalf("call = %+v, %v", resp, err)
	}
	// The answer can reach the client a moment before the worker marks
	// itself idle again.
	eventuallyTrue(t, "worker READY", func() bool { return count(r.workersOf(t, "alpha"), workerReady, nil) == 1 })
	rec, err := r.Describe("alpha")
	if err != nil {
		t.Fatal(err)
	}
	if rec.ModelName != "alpha" || rec.ModelURL != dir || rec.Status != api.StatusHealthy || rec.MaxIdleSeconds != 7 || rec.LastError != "" {
		t.Errorf("record = %+v", rec)
	}
	if len(rec.WorkerGroups) != 1 {
		t.Fatalf("groups = %+v", rec.WorkerGroups)
	}
	g := rec.WorkerGroups[0]
	if g.Device != (api.Device{DeviceType: "cpu", DeviceID: -1}) || g.MinWorkers != 1 || g.MaxWorkers != 2 || len(g.Workers) != 1 {
		t.Fatalf("group = %+v", g)
	}
	w := g.Workers[0]
	if w.Status != workerReady || w.PID != pidOf(t, resp) || w.Temporary || w.StartTime.IsZero() || w.StartTime.Location().String() != "UTC" ||
		filepath.Dir(w.Socket) != r.cfg.Server.SocketDir || w.RSSMiB <= 0 {
		t.Errorf("worker = %+v", w)
	}
	list := r.List()
	if len(list) != 1 || list[0] != (api.ModelSummary{ModelName: "alpha", ModelURL: dir, Status: api.StatusReady}) {
		t.Errorf("List = %+v", list)
	}
	if h := r.Health(); len(h) != 1 || h["alpha"] != (api.ModelHealth{Status: api.StatusHealthy}) {
		t.Errorf("Health = %+v", h)
	}
}

// TestRegistryRegisterRefused registers urls and names that must be refused,
// none of which may leave a model behind.
func TestRegistryRegisterRefused(t *testing.T) {
	r := newTestRegistry(t)
	store := r.cfg.Server.ModelStore
	r.probe(t, "taken", []string{"minWorkers=0"})
	r.mustRegister(t, "taken")
	r.probe(t, "badprops", []string{"batch_size=many"})
	if err := os.Mkdir(filepath.Join(store, "empty"), 0o755); err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	r.probe(t, "inside", nil)
	if err := os.Rename(filepath.Join(store, "inside"), filepath.Join(outside, "model")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(outside, "model"), filepath.Join(store, "link")); err != nil {
		t.Fatal(err)
	}
	rel, err := filepath.Rel(store, filepath.Join(outside, "model"))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, url, model string
		want             error
	}{
		{"no url", "", "", api.ErrBadRequest},
		{"remote url", "s3://bucket/model.tar.gz", "", api.ErrBadRequest},
		{"relative path out", rel, "out1", api.ErrBadRequest},
		{"dot-dot inside the path", "taken/../" + rel, "out2", api.ErrBadRequest},
		{"absolute path out", filepath.Join(outside, "model"), "out3", api.ErrBadRequest},
		{"file url out", "file://" + filepath.Join(outside, "model"), "out4", api.ErrBadRequest},
		{"symlink out", "link", "out5", api.ErrBadRequest},
		{"missing folder", "missing", "", api.ErrModelURL},
		{"not a model folder", "empty", "", api.ErrModelURL},
		{"bad serving.properties", "badprops", "", api.ErrBadRequest},
		{"name with a slash", "taken", "a/b", api.ErrBadRequest},
		{"name too long", "taken", strings.Repeat("n", 65), api.ErrBadRequest},
		{"name taken", "taken", "", api.ErrModelExists},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := r.Register(context.Background(), api.RegisterRequest{URL: tt.url, ModelName: tt.model, Synchronous: true})
			if !errors.Is(err, tt.want) {
				t.Fatalf("Register(%q, %q) = %v, want %v", tt.url, tt.model, err, tt.want)
			}
		})
	}
	if names := r.Names(); len(names) != 1 || names[0] != "taken" {
		t.Errorf("registered after the refusals: %v", names)
	}
}

// TestRegistryFileURL registers a folder of the store by absolute file url.
func TestRegistryFileURL(t *testing.T) {
	r := newTestRegistry(t)
	dir := r.probe(t, "byurl", []string{"minWorkers=0"})
	rec, err := r.Register(context.Background(), api.RegisterRequest{URL: "file://" + dir, Synchronous: true})
	if err != nil {
		t.Fatal(err)
	}
	if rec.ModelName != "byurl" || rec.ModelURL != dir || rec.Status != api.StatusHealthy {
		t.Errorf("record = %+v", rec)
	}
}

// TestRegistryUnknownModel checks every entry point on a name that is not
// registered.
func TestRegistryUnknownModel(t *testing.T) {
	r := newTestRegistry(t)
	ctx := context.Background()
	errs := map[string]error{
		"Submit":     r.Submit("nope", newJob("x")),
		"Scale":      r.Scale(ctx, "nope", api.ScaleRequest{MinWorker: ptr(1)}),
		"Unregister": r.Unregister(ctx, "nope"),
	}
	_, errs["Describe"] = r.Describe("nope")
	for name, err := range errs {
		if !errors.Is(err, api.ErrModelNotFound) {
			t.Errorf("%s = %v, want ErrModelNotFound", name, err)
		}
	}
	if err := r.Scale(ctx, "nope", api.ScaleRequest{MinWorker: ptr(2), MaxWorker: ptr(1)}); !errors.Is(err, api.ErrBadRequest) {
		t.Errorf("Scale with max below min = %v, want ErrBadRequest", err)
	}
}

// TestRegistryLoadingQueues checks that a request for a model whose first
// worker is still loading (PENDING) waits in its queue and is answered once
// the worker is up, instead of being refused.
func TestRegistryLoadingQueues(t *testing.T) {
	r := newTestRegistry(t)
	dir := r.probe(t, "lazy", nil, "GATE")
	if _, err := r.Register(context.Background(), api.RegisterRequest{URL: "lazy"}); err != nil {
		t.Fatal(err)
	}
	if st := r.status(t, "lazy"); st != api.StatusPending {
		t.Fatalf("status while the import is held: %s, want %s", st, api.StatusPending)
	}
	if got := r.List()[0].Status; got != api.StatusPending {
		t.Errorf("list status while loading: %s, want %s", got, api.StatusPending)
	}
	early := r.submit(t, "lazy", newJob("early"))
	if err := os.WriteFile(filepath.Join(dir, "OPEN"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if resp, err := await(t, early); err != nil || string(resp.Body) != "early" {
		t.Fatalf("the request sent while loading: %+v, %v", resp, err)
	}
	if st, list := r.status(t, "lazy"), r.List()[0].Status; st != api.StatusHealthy || list != api.StatusReady {
		t.Errorf("after the load: describe %s, list %s; want %s and %s", st, list, api.StatusHealthy, api.StatusReady)
	}
}

// TestRegistryBatches sends a burst to a model with batch_size 4: every job
// is answered with its own body.
func TestRegistryBatches(t *testing.T) {
	r := newTestRegistry(t)
	r.probe(t, "batched", []string{"batch_size=4", "max_batch_delay=200", "minWorkers=1", "maxWorkers=1"})
	r.mustRegister(t, "batched")
	var jobs []*batching.Job
	for _, body := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		jobs = append(jobs, r.submit(t, "batched", newJob(body)))
	}
	for _, j := range jobs {
		resp, err := await(t, j)
		if err != nil || string(resp.Body) != j.ID {
			t.Errorf("job %s: %+v, %v", j.ID, resp, err)
		}
	}
}

// TestRegistryStartupLoading checks the health entry /ping reads: a model
// loaded at startup is StartupLoading until its first load ends, a model
// registered later never is.
func TestRegistryStartupLoading(t *testing.T) {
	r := newTestRegistry(t)
	boot := r.probe(t, "boot", nil, "GATE")
	r.probe(t, "later", nil, "GATE")
	if err := r.LoadStartup([]properties.ModelRef{{Name: "boot", Path: boot}}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.Register(context.Background(), api.RegisterRequest{URL: "later"}); err != nil {
		t.Fatal(err)
	}
	h := r.Health()
	if !h["boot"].StartupLoading || h["boot"].Status != api.StatusPending || h["later"].StartupLoading {
		t.Fatalf("while both load: %+v", h)
	}
	if err := os.WriteFile(filepath.Join(boot, "OPEN"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	eventuallyTrue(t, "boot healthy", func() bool { return r.status(t, "boot") == api.StatusHealthy })
	if h := r.Health()["boot"]; h.StartupLoading {
		t.Errorf("after the first load: %+v", h)
	}
}
