package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// TensorSpec is one tensor a model takes or answers, in the Open Inference
// Protocol's words (its metadata_tensor): a name, a datatype (BOOL, UINT8,
// ..., FP32, FP64, BYTES) and a shape whose -1 dimensions take any size.
type TensorSpec struct {
	Name     string  `json:"name"`
	Datatype string  `json:"datatype"`
	Shape    []int64 `json:"shape"`
}

// Signature is what a model says of its tensors: its platform (the engine,
// DJL's name) and its inputs and outputs. Nil lists mean the model declared
// none.
type Signature struct {
	Platform string       `json:"platform"`
	Inputs   []TensorSpec `json:"inputs,omitempty"`
	Outputs  []TensorSpec `json:"outputs,omitempty"`
}

// Datatypes are the Open Inference Protocol's tensor datatypes that
// switchyard carries (BF16 has no numpy type, so no handler could read it).
var Datatypes = []string{"BOOL", "UINT8", "UINT16", "UINT32", "UINT64", "INT8", "INT16", "INT32", "INT64",
	"FP16", "FP32", "FP64", "BYTES"}

// errSignature is a tensor list that does not parse; ParseTensors wraps it.
var errSignature = errors.New("invalid tensor list")

// ParseTensors reads a tensor list declared as JSON (the tensor_inputs and
// tensor_outputs keys): an array of {"name", "datatype", "shape"} objects
// with distinct, non-empty names, a datatype of Datatypes and dimensions of
// -1 or more. An empty text is no list (nil).
func ParseTensors(text string) ([]TensorSpec, error) {
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	var specs []TensorSpec
	if err := json.Unmarshal([]byte(text), &specs); err != nil {
		return nil, fmt.Errorf("%w: %w", errSignature, err)
	}
	seen := map[string]bool{}
	for i, s := range specs {
		switch {
		case s.Name == "":
			return nil, fmt.Errorf("%w: tensor %d has no name", errSignature, i)
		case seen[s.Name]:
			return nil, fmt.Errorf("%w: tensor %s is listed twice", errSignature, Quote(s.Name))
		case !slices.Contains(Datatypes, s.Datatype):
			return nil, fmt.Errorf("%w: tensor %s has datatype %s, not one of %s", errSignature,
				Quote(s.Name), Quote(s.Datatype), strings.Join(Datatypes, ", "))
		case s.Shape == nil:
			return nil, fmt.Errorf("%w: tensor %s has no shape", errSignature, Quote(s.Name))
		}
		for _, d := range s.Shape {
			if d < -1 {
				return nil, fmt.Errorf("%w: tensor %s has dimension %d (use -1 for any size)", errSignature, Quote(s.Name), d)
			}
		}
		seen[s.Name] = true
	}
	return specs, nil
}
