package dialect

import (
	"context"
	"slices"
	"time"

	"github.com/switchyard/switchyard/api"
)

// Catalog is what a dialect may ask of the model registry. Submitting a
// job is the core's alone.
type Catalog interface {
	// Names returns the registered model names, sorted.
	Names() []string
	// List returns a summary of every model, sorted by name.
	List() []api.ModelSummary
	// Describe returns the record of one model.
	Describe(name string) (api.ModelRecord, error)
	// Register adds a model. With req.Synchronous it returns once the model
	// is loaded (or failed); otherwise it returns after scheduling the load.
	Register(ctx context.Context, req api.RegisterRequest) (api.ModelRecord, error)
	// Scale changes a model's worker counts.
	Scale(ctx context.Context, name string, req api.ScaleRequest) error
	// Unregister stops a model's workers and forgets the model.
	Unregister(ctx context.Context, name string) error
	// Health returns every model's state, keyed by name.
	Health() map[string]api.ModelHealth
	// Generation returns what a generative model's handler declared it can
	// honour (the zero value when it declared nothing), or
	// api.ErrModelNotFound.
	Generation(name string) (api.Generation, error)
	// Signature returns the tensors a model takes and answers, as its
	// serving.properties or its handler declared them (none when neither
	// did), or api.ErrModelNotFound. Its lists are shared, never changed.
	Signature(name string) (api.Signature, error)
	// StoreModels returns the names of the model store's model folders,
	// sorted, registered or not: what a register url naming only a folder
	// of the store would find.
	StoreModels() ([]string, error)

	// Adapters returns the LoRA adapters of a model, sorted by name;
	// api.ErrLoRADisabled when it serves none.
	Adapters(model string) ([]api.AdapterRecord, error)
	// Adapter returns one adapter of a model, or api.ErrAdapterNotFound.
	Adapter(model, name string) (api.AdapterRecord, error)
	// RegisterAdapter registers an adapter of a model from a local folder.
	RegisterAdapter(ctx context.Context, model string, req api.AdapterRequest) (api.AdapterRecord, error)
	// UpdateAdapter changes an adapter's pin (nil keeps it).
	UpdateAdapter(ctx context.Context, model, name string, pin *bool) (api.AdapterRecord, error)
	// UnregisterAdapter removes an adapter of a model.
	UnregisterAdapter(ctx context.Context, model, name string) error
	// AdapterModel returns the model that serves the adapter name.
	AdapterModel(name string) (string, bool)
}

// Host is what the core lends its dialects when it makes them.
type Host struct {
	// Models is the model registry.
	Models Catalog
	// Base is the context of the registry calls a dialect makes for a
	// request (a registration, a scale): it is canceled with
	// batching.ErrClosed when a shutdown gives up waiting.
	Base context.Context
	// Started is when the server was made.
	Started time.Time
	// Version is the server's version, for the APIs that report it.
	Version string
	// Forget drops the metrics series of a model that was unregistered.
	Forget func(model string)
	// NoWaitModelLoading and AllowMultiStatus are DJL's wait_model_loading
	// (negated) and allow_multi_status: how /ping reports models that load.
	NoWaitModelLoading, AllowMultiStatus bool
	// Aliases maps names clients send that no model folder can have (a
	// Bedrock modelId such as "global.anthropic.claude-sonnet-4-5-20250929-v1:0")
	// to registered models: the server's model_aliases. Nil when none.
	Aliases Aliases
}

// Aliases maps alias names to model names.
type Aliases map[string]string

// Resolve returns the model an alias stands for, or name itself when it is
// no alias.
func (a Aliases) Resolve(name string) string {
	if m, ok := a[name]; ok {
		return m
	}
	return name
}

// HasModel reports whether a model named name is registered.
func HasModel(models Catalog, name string) bool {
	_, found := slices.BinarySearch(models.Names(), name)
	return found
}

// NoAdapters is the adapter half of a Catalog that serves no LoRA
// adapters: every call answers api.ErrLoRADisabled. Embed it in a
// registry that has none.
type NoAdapters struct{}

// Adapters answers api.ErrLoRADisabled.
func (NoAdapters) Adapters(string) ([]api.AdapterRecord, error) { return nil, api.ErrLoRADisabled }

// Adapter answers api.ErrLoRADisabled.
func (NoAdapters) Adapter(string, string) (api.AdapterRecord, error) {
	return api.AdapterRecord{}, api.ErrLoRADisabled
}

// RegisterAdapter answers api.ErrLoRADisabled.
func (NoAdapters) RegisterAdapter(context.Context, string, api.AdapterRequest) (api.AdapterRecord, error) {
	return api.AdapterRecord{}, api.ErrLoRADisabled
}

// UpdateAdapter answers api.ErrLoRADisabled.
func (NoAdapters) UpdateAdapter(context.Context, string, string, *bool) (api.AdapterRecord, error) {
	return api.AdapterRecord{}, api.ErrLoRADisabled
}

// UnregisterAdapter answers api.ErrLoRADisabled.
func (NoAdapters) UnregisterAdapter(context.Context, string, string) error {
	return api.ErrLoRADisabled
}

// AdapterModel finds no adapter.
func (NoAdapters) AdapterModel(string) (string, bool) { return "", false }
