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
	// Forget drops the metrics series of a model that was unregistered.
	Forget func(model string)
	// NoWaitModelLoading and AllowMultiStatus are DJL's wait_model_loading
	// (negated) and allow_multi_status: how /ping reports models that load.
	NoWaitModelLoading, AllowMultiStatus bool
}

// HasModel reports whether a model named name is registered.
func HasModel(models Catalog, name string) bool {
	_, found := slices.BinarySearch(models.Names(), name)
	return found
}
