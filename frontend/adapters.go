package frontend

import (
	"github.com/switchyard/switchyard/frontend/dialect"
	"github.com/switchyard/switchyard/message"
)

// How a request names a LoRA adapter, besides the body's "adapters" field,
// which the worker reads: the SageMaker adapter headers, InvokeEndpoint's
// inference component and ?adapter=.
const (
	headerAdapter   = "x-amzn-sagemaker-adapter-identifier"
	headerAlias     = "x-amzn-sagemaker-adapter-alias"
	headerComponent = "x-amzn-sagemaker-inference-component"
	queryAdapter    = "adapter"
)

// selectAdapter turns the request's explicit choice of an adapter into the
// worker's property "adapter", in every dialect: the SageMaker adapter
// header (the identifier, else the alias), InvokeEndpoint's InferenceComponentName (unless it names a model,
// which then is the target) or ?adapter=. The registry refuses an adapter
// the model does not have with 404.
func selectAdapter(spec *dialect.Job, models Models) {
	in := &spec.Input
	name := propValue(in.Props, headerAdapter)
	if name == "" {
		name = propValue(in.Props, headerAlias)
	}
	if c := propValue(in.Props, headerComponent); c != "" && name == "" {
		if dialect.HasModel(models, c) {
			spec.Model = c
		} else {
			name = c
		}
	}
	if name == "" {
		for _, it := range in.Content[1:] {
			if it.Key == queryAdapter {
				name = string(it.Value)
			}
		}
	}
	if name != "" {
		in.Props = append(in.Props, message.Prop{Key: dialect.PropAdapter, Value: name})
	}
}

// adapterModel handles a model name that is no model: when an adapter has
// that name (adapter names are unique across the server, as vLLM's are),
// the job goes to its base model with the adapter named, and it reports
// true.
func adapterModel(spec *dialect.Job, models Models) bool {
	base, ok := dialect.AsAdapter(models, spec.Model, &spec.Input)
	if ok {
		spec.Model = base
	}
	return ok
}

// propValue returns the last value of key in props, or "".
func propValue(props []message.Prop, key string) string {
	for i := len(props) - 1; i >= 0; i-- {
		if props[i].Key == key {
			return props[i].Value
		}
	}
	return ""
}
