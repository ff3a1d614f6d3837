package worker

import (
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/message"
)

func TestDeclaredTensors(t *testing.T) {
	in := `[{"name":"x","datatype":"FP32","shape":[-1,4]}]`
	want := []api.TensorSpec{{Name: "x", Datatype: "FP32", Shape: []int64{-1, 4}}}
	got := declaredTensors([]message.Prop{{Key: "rolling_batch", Value: "disable"}, {Key: "tensor_inputs", Value: in}})
	if got == nil || !reflect.DeepEqual(got.inputs, want) || got.outputs != nil {
		t.Errorf("declaredTensors = %+v", got)
	}
	if got := declaredTensors([]message.Prop{{Key: "tensor_outputs", Value: "not JSON"}}); got != nil {
		t.Errorf("a list that does not parse is declared: %+v", got)
	}
	if got := declaredTensors(nil); got != nil {
		t.Errorf("nothing declared: %+v", got)
	}
}

// TestRegistrySignature registers a model whose handler declares its
// tensors, one whose serving.properties declares its inputs (which win
// over the handler's), and one that declares nothing.
func TestRegistrySignature(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		handler := `[{"name":"h","datatype":"BYTES","shape":[-1]}]`
		config := `[{"name":"c","datatype":"INT64","shape":[1,2]}]`
		r.model(t, "declares", "minWorkers=1", "maxWorkers=1", "option.declare_tensor_inputs="+handler,
			"option.declare_tensor_outputs="+handler)
		r.model(t, "configured", "minWorkers=1", "maxWorkers=1", "tensor_inputs="+config,
			"option.declare_tensor_inputs="+handler, "option.declare_tensor_outputs="+handler)
		r.model(t, "plain", "minWorkers=1", "maxWorkers=1")
		for _, name := range []string{"declares", "configured", "plain"} {
			r.mustRegister(t, name)
		}
		h := []api.TensorSpec{{Name: "h", Datatype: "BYTES", Shape: []int64{-1}}}
		c := []api.TensorSpec{{Name: "c", Datatype: "INT64", Shape: []int64{1, 2}}}
		for name, want := range map[string]api.Signature{
			"declares":   {Platform: "Python", Inputs: h, Outputs: h},
			"configured": {Platform: "Python", Inputs: c, Outputs: h},
			"plain":      {Platform: "Python"},
		} {
			if got, err := r.Signature(name); err != nil || !reflect.DeepEqual(got, want) {
				t.Errorf("Signature(%s) = %+v, %v; want %+v", name, got, err, want)
			}
		}
		if rec, _ := r.Describe("configured"); rec.Signature == nil || !reflect.DeepEqual(rec.Signature.Inputs, c) {
			t.Errorf("describe signature = %+v", rec.Signature)
		}
		if rec, _ := r.Describe("plain"); rec.Signature != nil {
			t.Errorf("describe of a model that declared nothing has signature %+v", rec.Signature)
		}
		if _, err := r.Signature("nope"); !errors.Is(err, api.ErrModelNotFound) {
			t.Errorf("Signature(nope) = %v", err)
		}
	})
}

// TestRegisterBadTensors refuses a serving.properties whose tensor list
// does not parse.
func TestRegisterBadTensors(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "bad", "tensor_outputs=[{\"name\": \"y\", \"datatype\": \"BF16\", \"shape\": [1]}]")
		err := r.register(t, "bad")
		if !errors.Is(err, api.ErrBadRequest) || !strings.Contains(err.Error(), `serving.properties tensor_outputs: invalid tensor list: tensor "y" has datatype "BF16"`) {
			t.Errorf("register = %v", err)
		}
	})
}

func TestStoreModels(t *testing.T) {
	simTest(t, func(t *testing.T, r *testRegistry, w *fakeWorld) {
		r.model(t, "b")
		r.model(t, "a")
		store := r.cfg.Server.ModelStore
		for _, dir := range []string{"empty", "bad name!"} {
			if err := os.MkdirAll(filepath.Join(store, dir), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(filepath.Join(store, "bad name!", "model.py"), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		r.mustRegister(t, "b")
		if got, err := r.StoreModels(); err != nil || !reflect.DeepEqual(got, []string{"a", "b"}) {
			t.Errorf("StoreModels = %v, %v", got, err)
		}
	})
}
