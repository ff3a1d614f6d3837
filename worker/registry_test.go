package worker

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/internal/testutil"
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
	dir := r.probe(t, "alpha", []string{"minWorkers=1", "maxWorkers=2", "max_idle_time=7", "option.declare_context_length=128"})
	r.mustRegister(t, "alpha")

	resp, err := r.call(t, "alpha", newJob("hello"))
	if err != nil || string(resp.Body) != "hello" {
		t.Fatalf("call = %+v, %v", resp, err)
	}
	// The answer can reach the client a moment before the worker marks
	// itself idle again.
	testutil.WaitFor(t, waitLimit, "worker READY", func() bool { return count(r.workersOf(t, "alpha"), workerReady, nil) == 1 })
	rec, err := r.Describe("alpha")
	if err != nil {
		t.Fatal(err)
	}
	if rec.ModelName != "alpha" || rec.ModelURL != dir || rec.Status != api.StatusHealthy || rec.MaxIdleSeconds != 7 || rec.LastError != "" {
		t.Errorf("record = %+v", rec)
	}
	if g := rec.Generation; g == nil || g.ContextLength != 128 {
		t.Errorf("generation = %+v, want what the handler declared in its initialization reply", g)
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
	r := newBareRegistry(t)
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
	r := newBareRegistry(t)
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
	r := newBareRegistry(t)
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
