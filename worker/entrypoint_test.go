package worker

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/switchyard/switchyard/properties"
)

// TestModelEntryPoints checks the entry points against DJL 0.36's rules in
// PyModel.load.
func TestModelEntryPoints(t *testing.T) {
	tests := []struct {
		name    string
		files   []string
		options map[string]string
		entry   string // option.entryPoint
		env     properties.Env
		want    entryPoints
	}{
		{name: "model.py", files: []string{"model.py"}, want: entryPoints{entry: "model.py"}},
		{name: "option.entryPoint wins", files: []string{"model.py"}, entry: "handler.py",
			options: map[string]string{"model_id": "m"}, want: entryPoints{entry: "handler.py"}},
		{name: "DJL_ENTRY_POINT", files: []string{"model.py"}, env: properties.Env{"DJL_ENTRY_POINT": "x.py"},
			want: entryPoints{entry: "x.py"}},
		{name: "model.py and a model_id", files: []string{"model.py"}, options: map[string]string{"model_id": "m"},
			want: entryPoints{entry: "model.py", recommended: "djl_python.huggingface"}},
		{name: "config.json only", files: []string{"config.json"}, want: entryPoints{recommended: "djl_python.huggingface"}},
		{name: "pickled model", files: []string{"model.joblib", "config.json"},
			want: entryPoints{recommended: "djl_python.sklearn_handler"}},
		{name: "trtllm image", env: properties.Env{"SERVING_FEATURES": "trtllm"},
			want: entryPoints{recommended: "djl_python.lmi_trtllm.trtllm_async_service"}},
		{name: "vllm image", env: properties.Env{"SERVING_FEATURES": "vllm"},
			want: entryPoints{recommended: "djl_python.huggingface"}},
		{name: "vllm image, async", env: properties.Env{"SERVING_FEATURES": "vllm"},
			options: map[string]string{"async_mode": "TRUE"},
			want:    entryPoints{recommended: "djl_python.lmi_vllm.vllm_async_service"}},
		{name: "nothing at all", want: entryPoints{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for _, f := range tt.files {
				if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
					t.Fatal(err)
				}
			}
			cfg := properties.NewModel(dir, nil)
			cfg.EntryPoint = tt.entry
			for k, v := range tt.options {
				cfg.Options[k] = v
			}
			if got := modelEntryPoints(cfg, tt.env); got != tt.want {
				t.Errorf("entry points %+v, want %+v", got, tt.want)
			}
		})
	}
}
