package worker

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/properties"
)

// TestStartupRequests checks load_models "ALL,b=/elsewhere/b,x=/x": every
// model folder of the store, except that b's own entry wins over the
// store's b, plus x.
func TestStartupRequests(t *testing.T) {
	store := t.TempDir()
	for _, dir := range []string{"a", "b", "notamodel"} {
		if err := os.Mkdir(filepath.Join(store, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"a/serving.properties", "b/model.py"} {
		if err := os.WriteFile(filepath.Join(store, f), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	refs := []properties.ModelRef{
		{All: true, Path: store}, {Name: "b", Path: "/elsewhere/b"}, {Name: "x", Path: "/x"},
	}
	got, err := startupRequests(refs)
	if err != nil {
		t.Fatal(err)
	}
	want := []api.RegisterRequest{
		{URL: filepath.Join(store, "a"), ModelName: "a"},
		{URL: "/elsewhere/b", ModelName: "b"},
		{URL: "/x", ModelName: "x"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("startupRequests = %+v, want %+v", got, want)
	}
	if _, err := startupRequests([]properties.ModelRef{{All: true, Path: filepath.Join(store, "missing")}}); err == nil {
		t.Error("a missing model store was accepted")
	}
}
