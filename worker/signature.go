package worker

import (
	"fmt"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/message"
	"github.com/switchyard/switchyard/properties"
)

// The keys that declare a model's tensors (the Open Inference Protocol's
// metadata), as JSON lists of {"name", "datatype", "shape"}: in
// serving.properties, or in the properties of a handler's answer to the
// initialization call (docs/protocol.md).
const (
	keyTensorInputs  = "tensor_inputs"
	keyTensorOutputs = "tensor_outputs"
)

// tensors is one declaration of a model's tensors; a nil list was not
// declared.
type tensors struct {
	inputs, outputs []api.TensorSpec
}

// configTensors reads the tensors serving.properties declares; a list that
// does not parse is a 400 at registration.
func configTensors(cfg *properties.Model) (tensors, error) {
	var t tensors
	var err error
	if t.inputs, err = api.ParseTensors(cfg.Extra[keyTensorInputs]); err != nil {
		return t, fmt.Errorf("%w: serving.properties %s: %w", api.ErrBadRequest, keyTensorInputs, err)
	}
	if t.outputs, err = api.ParseTensors(cfg.Extra[keyTensorOutputs]); err != nil {
		return t, fmt.Errorf("%w: serving.properties %s: %w", api.ErrBadRequest, keyTensorOutputs, err)
	}
	return t, nil
}

// declaredTensors reads the tensors a worker's initialization reply
// declares; nil when it declares none. A list that does not parse counts as
// not declared (the worker has loaded; its metadata is only incomplete).
func declaredTensors(props []message.Prop) *tensors {
	var t tensors
	for _, p := range props {
		switch p.Key {
		case keyTensorInputs:
			t.inputs, _ = api.ParseTensors(p.Value)
		case keyTensorOutputs:
			t.outputs, _ = api.ParseTensors(p.Value)
		}
	}
	if t.inputs == nil && t.outputs == nil {
		return nil
	}
	return &t
}

// setTensors records what the model's latest loaded worker declared; a
// worker that declared nothing leaves the record as it was.
func (m *Model) setTensors(t *tensors) {
	if t == nil {
		return
	}
	m.mu.Lock()
	m.declared = t
	m.mu.Unlock()
}

// signature is the model's tensors: each list from serving.properties when
// it declares one, else from the handler's last declaration.
func (m *Model) signature() api.Signature {
	s := api.Signature{Platform: m.cfg.Engine, Inputs: m.cfgTensors.inputs, Outputs: m.cfgTensors.outputs}
	m.mu.Lock()
	d := m.declared
	m.mu.Unlock()
	if d != nil && s.Inputs == nil {
		s.Inputs = d.inputs
	}
	if d != nil && s.Outputs == nil {
		s.Outputs = d.outputs
	}
	return s
}

// Signature returns the named model's tensors (serving.properties' lists,
// else its handler's declaration; none when neither says), or
// api.ErrModelNotFound. The lists are shared: callers must not change them.
func (r *Registry) Signature(name string) (api.Signature, error) {
	m, err := r.lookup(name)
	if err != nil {
		return api.Signature{}, err
	}
	return m.signature(), nil
}

// StoreModels returns the names of the model store's model folders (those
// that load_models=ALL would register) that are valid model names, sorted,
// registered or not.
func (r *Registry) StoreModels() ([]string, error) {
	all, err := modelFolders(r.cfg.Server.ModelStore)
	names := all[:0]
	for _, name := range all {
		if ValidName(name) {
			names = append(names, name)
		}
	}
	return names, err
}
