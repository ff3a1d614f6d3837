package frontend

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/switchyard/switchyard/api"
)

// The fake registry's adapters: model → name → record, made on first use.
// A model whose name starts with "lora" serves adapters; others answer
// api.ErrLoRADisabled, as a model without option.enable_lora does.

func (f *fakeModels) loraModel(model string) error {
	if _, ok := f.records[model]; !ok {
		return fmt.Errorf("%w: %s", api.ErrModelNotFound, model)
	}
	if !strings.HasPrefix(model, "lora") {
		return fmt.Errorf("%w: model %s", api.ErrLoRADisabled, model)
	}
	if f.adapters == nil {
		f.adapters = map[string]map[string]api.AdapterRecord{}
	}
	if f.adapters[model] == nil {
		f.adapters[model] = map[string]api.AdapterRecord{}
	}
	return nil
}

func (f *fakeModels) Adapters(model string) ([]api.AdapterRecord, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.loraModel(model); err != nil {
		return nil, err
	}
	var out []api.AdapterRecord
	for _, r := range f.adapters[model] {
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b api.AdapterRecord) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

func (f *fakeModels) Adapter(model, name string) (api.AdapterRecord, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.loraModel(model); err != nil {
		return api.AdapterRecord{}, err
	}
	r, ok := f.adapters[model][name]
	if !ok {
		return r, fmt.Errorf("%w: %s", api.ErrAdapterNotFound, name)
	}
	return r, nil
}

func (f *fakeModels) RegisterAdapter(_ context.Context, model string, req api.AdapterRequest) (api.AdapterRecord, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.loraModel(model); err != nil {
		return api.AdapterRecord{}, err
	}
	if _, taken := f.adapters[model][req.Name]; taken {
		return api.AdapterRecord{}, fmt.Errorf("%w: %s", api.ErrAdapterExists, req.Name)
	}
	r := api.AdapterRecord{Name: req.Name, Src: req.Src, Preload: req.Preload == nil || *req.Preload,
		Pin: req.Pin != nil && *req.Pin}
	f.adapters[model][req.Name] = r
	return r, nil
}

func (f *fakeModels) UpdateAdapter(_ context.Context, model, name string, pin *bool) (api.AdapterRecord, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.loraModel(model); err != nil {
		return api.AdapterRecord{}, err
	}
	r, ok := f.adapters[model][name]
	if !ok {
		return r, fmt.Errorf("%w: %s", api.ErrAdapterNotFound, name)
	}
	if pin != nil {
		r.Pin = *pin
	}
	f.adapters[model][name] = r
	return r, nil
}

func (f *fakeModels) UnregisterAdapter(_ context.Context, model, name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if err := f.loraModel(model); err != nil {
		return err
	}
	if _, ok := f.adapters[model][name]; !ok {
		return fmt.Errorf("%w: %s", api.ErrAdapterNotFound, name)
	}
	delete(f.adapters[model], name)
	return nil
}

func (f *fakeModels) AdapterModel(name string) (string, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for model, as := range f.adapters {
		if _, ok := as[name]; ok {
			return model, true
		}
	}
	return "", false
}

func adapterReq(name string) api.AdapterRequest {
	return api.AdapterRequest{Name: name, Src: "/srv/" + name}
}
