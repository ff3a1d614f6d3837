package worker

import (
	"context"
	"fmt"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/api"
)

// loraModel returns the registered model name if it serves adapters.
func (r *Registry) loraModel(name string) (*Model, error) {
	m, err := r.lookup(name)
	if err != nil {
		return nil, err
	}
	if !m.cfg.EnableLoRA {
		return nil, fmt.Errorf("%w: model %s: set option.enable_lora=true in its serving.properties", api.ErrLoRADisabled, name)
	}
	return m, nil
}

// Adapters returns the adapters of model, sorted by name.
func (r *Registry) Adapters(model string) ([]api.AdapterRecord, error) {
	m, err := r.loraModel(model)
	if err != nil {
		return nil, err
	}
	return m.adapters.list(), nil
}

// Adapter returns one adapter of model.
func (r *Registry) Adapter(model, name string) (api.AdapterRecord, error) {
	m, err := r.loraModel(model)
	if err != nil {
		return api.AdapterRecord{}, err
	}
	rec, ok := m.adapters.get(name)
	if !ok {
		return api.AdapterRecord{}, fmt.Errorf("%w: %s (model %s has no adapter of that name)", api.ErrAdapterNotFound, name, model)
	}
	return rec, nil
}

// AdapterModel returns the model that serves the adapter name: adapter
// names are unique across the server, so that a route that names only an
// adapter (OpenAI's model, Converse's modelId) finds its base model.
func (r *Registry) AdapterModel(name string) (string, bool) {
	for _, m := range r.snapshot() {
		if m.cfg.EnableLoRA && m.adapters.has(name) {
			return m.name, true
		}
	}
	return "", false
}

// RegisterAdapter registers an adapter of model from a local folder inside
// allowed_model_roots and tells the model's workers; a worker that starts
// later hears of it before it takes requests. The name must not be taken
// by a model or another adapter (409).
func (r *Registry) RegisterAdapter(ctx context.Context, model string, req api.AdapterRequest) (api.AdapterRecord, error) {
	m, err := r.loraModel(model)
	if err != nil {
		return api.AdapterRecord{}, err
	}
	if req.Name == "" {
		return api.AdapterRecord{}, fmt.Errorf("%w: name is required", api.ErrBadRequest)
	}
	if err := r.nameFree(req.Name); err != nil {
		return api.AdapterRecord{}, err
	}
	src, err := r.checkAdapterFolder(req.Src)
	if err != nil {
		return api.AdapterRecord{}, err
	}
	rec := api.AdapterRecord{Name: req.Name, Src: src, Preload: req.Preload == nil || *req.Preload,
		Pin: req.Pin != nil && *req.Pin}
	m.adapters.put(rec)
	if err := m.tell(ctx, adapterMessage("register_adapter", rec)); err != nil {
		m.adapters.remove(rec.Name)
		return api.AdapterRecord{}, err
	}
	r.log.Info("adapter registered", zap.String("model", model), zap.String("adapter", rec.Name), zap.String("src", src))
	got, _ := m.adapters.get(rec.Name)
	return got, nil
}

// nameFree refuses a name a model or an adapter already has.
func (r *Registry) nameFree(name string) error {
	if _, err := r.lookup(name); err == nil {
		return fmt.Errorf("%w: %s is the name of a model", api.ErrAdapterExists, name)
	}
	if owner, ok := r.AdapterModel(name); ok {
		return fmt.Errorf("%w: %s (an adapter of model %s); unregister it first", api.ErrAdapterExists, name, owner)
	}
	return nil
}

// UpdateAdapter changes an adapter's pin (nil keeps it) and tells the
// model's workers.
func (r *Registry) UpdateAdapter(ctx context.Context, model, name string, pin *bool) (api.AdapterRecord, error) {
	rec, err := r.Adapter(model, name)
	if err != nil {
		return api.AdapterRecord{}, err
	}
	m, _ := r.lookup(model)
	if pin != nil {
		rec.Pin = *pin
	}
	m.adapters.put(rec)
	if err := m.tell(ctx, adapterMessage("update_adapter", rec)); err != nil {
		return api.AdapterRecord{}, err
	}
	got, _ := m.adapters.get(name)
	return got, nil
}

// UnregisterAdapter forgets an adapter and takes it off the model's workers.
func (r *Registry) UnregisterAdapter(ctx context.Context, model, name string) error {
	rec, err := r.Adapter(model, name)
	if err != nil {
		return err
	}
	m, _ := r.lookup(model)
	if err := m.tell(ctx, adapterMessage("unregister_adapter", rec)); err != nil {
		return err
	}
	m.adapters.remove(name)
	r.metrics.forgetAdapter(model, name)
	r.metrics.adaptersLoaded(model, m.adapters.loadedCount())
	r.log.Info("adapter unregistered", zap.String("model", model), zap.String("adapter", name))
	return nil
}
