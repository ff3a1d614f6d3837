package frontend

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/message"
)

// fakeModels is the registry the tests put behind the server. By default it
// answers every job at once with an echo of its body; hold makes Submit
// hand jobs to the test instead.
type fakeModels struct {
	mu        sync.Mutex
	records   map[string]api.ModelRecord
	health    map[string]api.ModelHealth
	submitErr error
	hold      chan *batching.Job
	respond   func(model string, j *batching.Job)
	gens      map[string]api.Generation
	sigs      map[string]api.Signature
	store     []string // the model store's folders
	storeErr  error
	registers []api.RegisterRequest
	scales    []api.ScaleRequest
	opErr     error
	adapters  map[string]map[string]api.AdapterRecord // fakeadapters_test.go
}

func newFake(names ...string) *fakeModels {
	f := &fakeModels{records: map[string]api.ModelRecord{}, health: map[string]api.ModelHealth{}}
	for _, n := range names {
		f.records[n] = api.ModelRecord{ModelName: n, ModelURL: "/models/" + n, Status: api.StatusHealthy}
		f.health[n] = api.ModelHealth{Status: api.StatusHealthy}
	}
	return f
}

// echo answers with the job's body and names the model in a header.
func echo(model string, j *batching.Job) {
	j.Finish(&message.Response{
		Code:  200,
		Props: []message.Prop{{Key: "Content-Type", Value: "text/plain"}, {Key: "X-Model", Value: model}},
		Body:  j.Input.Content[0].Value,
	})
}

func (f *fakeModels) Submit(model string, j *batching.Job) error {
	f.mu.Lock()
	_, ok := f.records[model]
	err, hold, respond := f.submitErr, f.hold, f.respond
	f.mu.Unlock()
	if !ok {
		return fmt.Errorf("%w: %s", api.ErrModelNotFound, model)
	}
	if err != nil {
		return err
	}
	switch {
	case hold != nil:
		hold <- j
	case respond != nil:
		respond(model, j)
	default:
		echo(model, j)
	}
	return nil
}

func (f *fakeModels) Names() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Sorted(maps.Keys(f.records))
}

func (f *fakeModels) List() []api.ModelSummary {
	var out []api.ModelSummary
	for _, n := range f.Names() {
		f.mu.Lock()
		r := f.records[n]
		f.mu.Unlock()
		out = append(out, api.ModelSummary{ModelName: n, ModelURL: r.ModelURL, Status: listStatus(r.Status)})
	}
	return out
}

// listStatus turns a describe status into the list's word, as the registry
// does: a loaded model is READY whether or not it is Healthy.
func listStatus(describe string) string {
	if describe == api.StatusHealthy || describe == api.StatusUnhealthy {
		return api.StatusReady
	}
	return describe
}

func (f *fakeModels) Describe(name string) (api.ModelRecord, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.records[name]
	if !ok {
		return r, fmt.Errorf("%w: %s", api.ErrModelNotFound, name)
	}
	return r, nil
}

func (f *fakeModels) Register(_ context.Context, req api.RegisterRequest) (api.ModelRecord, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.registers = append(f.registers, req)
	if f.opErr != nil {
		return api.ModelRecord{}, f.opErr
	}
	if _, ok := f.records[req.ModelName]; ok {
		return api.ModelRecord{}, fmt.Errorf("%w: %s", api.ErrModelExists, req.ModelName)
	}
	r := api.ModelRecord{ModelName: req.ModelName, ModelURL: req.URL, Status: api.StatusHealthy}
	f.records[req.ModelName] = r
	return r, nil
}

func (f *fakeModels) Scale(_ context.Context, name string, req api.ScaleRequest) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.scales = append(f.scales, req)
	if _, ok := f.records[name]; !ok {
		return fmt.Errorf("%w: %s", api.ErrModelNotFound, name)
	}
	return f.opErr
}

func (f *fakeModels) Unregister(_ context.Context, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.records[name]; !ok {
		return fmt.Errorf("%w: %s", api.ErrModelNotFound, name)
	}
	delete(f.records, name)
	delete(f.health, name)
	return nil
}

func (f *fakeModels) Health() map[string]api.ModelHealth {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.health)
}

func (f *fakeModels) Generation(name string) (api.Generation, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.records[name]; !ok {
		return api.Generation{}, fmt.Errorf("%w: %s", api.ErrModelNotFound, name)
	}
	return f.gens[name], nil
}

func (f *fakeModels) Signature(name string) (api.Signature, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.records[name]; !ok {
		return api.Signature{}, fmt.Errorf("%w: %s", api.ErrModelNotFound, name)
	}
	return f.sigs[name], nil
}

func (f *fakeModels) StoreModels() ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.store), f.storeErr
}

func (f *fakeModels) set(fn func(f *fakeModels)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	fn(f)
}

func (f *fakeModels) lastRegister() api.RegisterRequest {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.registers[len(f.registers)-1]
}
