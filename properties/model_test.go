package properties

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// modelDirWith returns a new model folder whose serving.properties holds
// text, or that has none when text is "".
func modelDirWith(t *testing.T, text string) string {
	t.Helper()
	dir := t.TempDir()
	if text != "" {
		if err := os.WriteFile(filepath.Join(dir, ModelFile), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLoadModelEnv(t *testing.T) {
	tests := []struct {
		name  string
		file  string
		env   Env
		check func(*Model) bool
	}{
		{"rolling batch from env", "", Env{"OPTION_ROLLING_BATCH": "vllm"},
			func(m *Model) bool { return m.RollingBatch == "vllm" && m.Options["rolling_batch"] == "vllm" }},
		{"file wins over env", "option.rolling_batch=disable\n", Env{"OPTION_ROLLING_BATCH": "vllm"},
			func(m *Model) bool { return m.RollingBatch == "disable" && m.Options["rolling_batch"] == "disable" }},
		{"camelCase entryPoint", "", Env{"OPTION_ENTRYPOINT": "djl_python.huggingface"},
			func(m *Model) bool { return m.EntryPoint == "djl_python.huggingface" }},
		{"camelCase pythonExecutable", "", Env{"OPTION_PYTHONEXECUTABLE": "/usr/bin/python3"},
			func(m *Model) bool { return m.PythonExecutable == "/usr/bin/python3" }},
		{"model_id", "", Env{"OPTION_MODEL_ID": "s3://bucket/model"},
			func(m *Model) bool { return m.Options["model_id"] == "s3://bucket/model" }},
		{"unknown option kept", "", Env{"OPTION_TENSOR_PARALLEL_DEGREE": "4"},
			func(m *Model) bool { return m.Options["tensor_parallel_degree"] == "4" }},
		{"typed option from env", "", Env{"OPTION_PREDICT_TIMEOUT": "7"},
			func(m *Model) bool { return m.PredictTimeout == 7*time.Second }},
		{"matches a file key ignoring case", "option.trustRemoteCode=false\n", Env{"OPTION_TRUSTREMOTECODE": "true"},
			func(m *Model) bool { return m.Options["trustRemoteCode"] == "false" && len(m.Options) == 1 }},
		{"bare prefix ignored", "", Env{"OPTION_": "x"},
			func(m *Model) bool { return len(m.Options) == 0 && len(m.Extra) == 0 }},
		{"other variables ignored", "", Env{"BATCH_SIZE": "8", "SERVING_BATCH_SIZE": "8"},
			func(m *Model) bool { return m.BatchSize == 1 && len(m.Options) == 0 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := LoadModel(modelDirWith(t, tt.file), nil, tt.env)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(m) {
				t.Errorf("unexpected model: options %v, extra %v, %+v", m.Options, m.Extra, m)
			}
		})
	}
}

func TestLoadModelEnvErrors(t *testing.T) {
	tests := []struct {
		name, env, key string
	}{
		{"not an integer", "OPTION_PREDICT_TIMEOUT", "option.predict_timeout"},
		{"fails validation", "OPTION_MAX_ROLLING_BATCH_SIZE", "option.max_rolling_batch_size"},
	}
	values := map[string]string{"OPTION_PREDICT_TIMEOUT": "soon", "OPTION_MAX_ROLLING_BATCH_SIZE": "0"}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadModel(modelDirWith(t, ""), nil, Env{tt.env: values[tt.env]})
			var e *Error
			if !errors.As(err, &e) || e.Env != tt.env || e.Key != tt.key || !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v, want an ErrInvalid *Error from $%s about %s", err, tt.env, tt.key)
			}
		})
	}
}

func TestLoadModelServerDefaults(t *testing.T) {
	srv := DefaultServer()
	srv.BatchSize, srv.MaxBatchDelay, srv.MaxIdleTime, srv.JobQueueSize = 8, time.Second, time.Minute, 5
	srv.PythonExecutable = "/opt/venv/bin/python"
	m, err := LoadModel(modelDirWith(t, "max_idle_time=3\n"), srv, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := []any{m.BatchSize, m.MaxBatchDelay, m.MaxIdleTime, m.JobQueueSize, m.PythonExecutable}
	want := []any{8, time.Second, 3 * time.Second, 5, "/opt/venv/bin/python"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func TestLoadModelFolder(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	propsDir := t.TempDir()
	if err := os.Mkdir(filepath.Join(propsDir, ModelFile), 0o755); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name  string
		dir   string
		wants []error
		names string // what the message must name
	}{
		{"missing", filepath.Join(t.TempDir(), "nope"), []error{ErrNoModelDir, fs.ErrNotExist}, "nope"},
		{"a file", file, []error{ErrNoModelDir}, file},
		{"serving.properties is a folder", propsDir, nil, filepath.Join(propsDir, ModelFile)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := LoadModel(tt.dir, nil, nil)
			if err == nil {
				t.Fatal("loaded, want an error")
			}
			if !strings.Contains(err.Error(), tt.names) {
				t.Errorf("error %q does not name %s", err, tt.names)
			}
			for _, w := range tt.wants {
				if !errors.Is(err, w) {
					t.Errorf("error %v does not wrap %v", err, w)
				}
			}
		})
	}
}

func TestLoadModelName(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my-model")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	m, err := LoadModel(dir, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if m.Name != "my-model" || m.Dir != dir {
		t.Errorf("name %q dir %q, want my-model and %s", m.Name, m.Dir, dir)
	}
}

func intp(n int) *int { return &n }

func TestModelValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Model)
		key    string // "" when valid
	}{
		{"defaults", func(*Model) {}, ""},
		{"MPI lower case", func(m *Model) { m.Engine = "mpi" }, ""},
		{"unknown engine", func(m *Model) { m.Engine = "OnnxRuntime" }, "engine"},
		{"batch size 0", func(m *Model) { m.BatchSize = 0 }, "batch_size"},
		{"zero delay", func(m *Model) { m.MaxBatchDelay = 0 }, ""},
		{"negative delay", func(m *Model) { m.MaxBatchDelay = -time.Millisecond }, "max_batch_delay"},
		{"negative idle", func(m *Model) { m.MaxIdleTime = -time.Second }, "max_idle_time"},
		{"queue 0", func(m *Model) { m.JobQueueSize = 0 }, "job_queue_size"},
		{"negative count", func(m *Model) { m.GPUMaxWorkers = intp(-1) }, "gpu.maxWorkers"},
		{"general min above max", func(m *Model) { m.MinWorkers, m.MaxWorkers = intp(3), intp(2) }, "minWorkers"},
		{"cpu min above general max", func(m *Model) { m.CPUMinWorkers, m.MaxWorkers = intp(3), intp(2) }, "cpu.minWorkers"},
		{"gpu override makes it fit", func(m *Model) { m.MinWorkers, m.GPUMaxWorkers, m.CPUMaxWorkers = intp(3), intp(4), intp(3) }, ""},
		{"zero workers", func(m *Model) { m.GPUMinWorkers, m.GPUMaxWorkers = intp(0), intp(0) }, ""},
		{"devices", func(m *Model) { m.LoadOnDevices = []int{0, 3} }, ""},
		{"negative device", func(m *Model) { m.LoadOnDevices = []int{-1} }, "load_on_devices"},
		{"device twice", func(m *Model) { m.LoadOnDevices = []int{1, 1} }, "load_on_devices"},
		{"negative reserve", func(m *Model) { m.ReservedMemoryMB = -1 }, "reserved_memory_mb"},
		{"negative gpu reserve", func(m *Model) { m.GPUReservedMemoryMB = -1 }, "gpu.reserved_memory_mb"},
		{"negative required", func(m *Model) { m.RequiredMemoryMB = -1 }, "required_memory_mb"},
		{"zero predict timeout", func(m *Model) { m.PredictTimeout = 0 }, "option.predict_timeout"},
		{"zero loading timeout", func(m *Model) { m.ModelLoadingTimeout = 0 }, "option.model_loading_timeout"},
		{"no python", func(m *Model) { m.PythonExecutable = "" }, "option.pythonExecutable"},
		{"every rolling batch mode", func(m *Model) { m.RollingBatch = "lmi-dist" }, ""},
		{"rolling batch upper case", func(m *Model) { m.RollingBatch = "VLLM" }, "option.rolling_batch"},
		{"rolling size 0", func(m *Model) { m.MaxRollingBatchSize = 0 }, "option.max_rolling_batch_size"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewModel("/models/m", nil)
			tt.change(m)
			checkValidate(t, m.Validate(), tt.key)
		})
	}
}

// checkValidate asserts that err is nil when key is "", else an
// ErrInvalid *Error about key with no location.
func checkValidate(t *testing.T, err error, key string) {
	t.Helper()
	if key == "" {
		if err != nil {
			t.Fatalf("Validate() = %v, want nil", err)
		}
		return
	}
	var e *Error
	if !errors.As(err, &e) || e.Key != key || !errors.Is(err, ErrInvalid) {
		t.Fatalf("Validate() = %v, want an ErrInvalid *Error about %s", err, key)
	}
	if e.File != "" || e.Line != 0 || e.Env != "" {
		t.Errorf("Validate() error has a location: %+v", e)
	}
}

func TestModelWorkers(t *testing.T) {
	tests := []struct {
		name                             string
		min, max, gmin, gmax, cmin, cmax *int
		gpu, cpu                         [2]int
		wantsCPU                         bool
	}{
		{name: "defaults", gpu: [2]int{1, 2}, cpu: [2]int{1, 2}},
		{name: "general", min: intp(2), max: intp(5), gpu: [2]int{2, 5}, cpu: [2]int{2, 5}},
		{name: "min raises default max", min: intp(4), gpu: [2]int{4, 4}, cpu: [2]int{4, 4}},
		{name: "max lowers default min", max: intp(0), gpu: [2]int{0, 0}, cpu: [2]int{0, 0}},
		{name: "gpu only", gmin: intp(0), gmax: intp(1), gpu: [2]int{0, 1}, cpu: [2]int{1, 2}},
		{name: "cpu over general", min: intp(1), max: intp(3), cmax: intp(8),
			gpu: [2]int{1, 3}, cpu: [2]int{1, 8}, wantsCPU: true},
		{name: "cpu min only", cmin: intp(2), gpu: [2]int{1, 2}, cpu: [2]int{2, 2}, wantsCPU: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := NewModel("/models/m", nil)
			m.MinWorkers, m.MaxWorkers = tt.min, tt.max
			m.GPUMinWorkers, m.GPUMaxWorkers = tt.gmin, tt.gmax
			m.CPUMinWorkers, m.CPUMaxWorkers = tt.cmin, tt.cmax
			var gpu, cpu [2]int
			gpu[0], gpu[1] = m.GPUWorkers()
			cpu[0], cpu[1] = m.CPUWorkers()
			if gpu != tt.gpu || cpu != tt.cpu || m.WantsCPUGroup() != tt.wantsCPU {
				t.Errorf("gpu %v cpu %v wantsCPU %v, want %v %v %v", gpu, cpu, m.WantsCPUGroup(), tt.gpu, tt.cpu, tt.wantsCPU)
			}
		})
	}
}

func TestWorkerPropsPrecedence(t *testing.T) {
	m := NewModel("/models/m", nil)
	m.Extra = map[string]string{"batch_size": "from extra", "task": "from extra", "flag": "x"}
	m.Options = map[string]string{"task": "text-generation", "rolling_batch": "Disable", "batch_size": "from option"}
	m.RollingBatch, m.BatchSize = "disable", 4
	got := map[string]string{}
	props := m.WorkerProps()
	for i, p := range props {
		got[p.Key] = p.Value
		if i > 0 && props[i-1].Key >= p.Key {
			t.Errorf("props not sorted: %q before %q", props[i-1].Key, p.Key)
		}
	}
	want := map[string]string{"batch_size": "4", "task": "text-generation", "flag": "x", "rolling_batch": "disable",
		"max_batch_delay": "100", "load_on_devices": "*", "engine": "Python"}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	if _, ok := got["entryPoint"]; ok {
		t.Errorf("entryPoint sent although unset: %v", got)
	}
	if _, ok := got["minWorkers"]; ok {
		t.Errorf("minWorkers sent although unset: %v", got)
	}
}

// TestAdaptiveBatching reads adaptive_batching: false unless set, a boolean,
// and passed to the worker only when true.
func TestAdaptiveBatching(t *testing.T) {
	tests := []struct {
		text    string
		want    bool
		wantErr bool
	}{
		{text: "batch_size=8\n", want: false},
		{text: "adaptive_batching=true\n", want: true},
		{text: "adaptive_batching=TRUE\n", want: true},
		{text: "adaptive_batching=false\n", want: false},
		{text: "adaptive_batching=sometimes\n", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(strings.TrimSpace(tt.text), func(t *testing.T) {
			m, err := LoadModel(modelDirWith(t, tt.text), nil, nil)
			if (err != nil) != tt.wantErr {
				t.Fatalf("LoadModel = %v, want error %v", err, tt.wantErr)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "adaptive_batching") {
					t.Errorf("error %q does not name the key", err)
				}
				return
			}
			sent := false
			for _, p := range m.WorkerProps() {
				sent = sent || p == Prop{Key: "adaptive_batching", Value: "true"}
			}
			if m.AdaptiveBatching != tt.want || sent != tt.want {
				t.Errorf("AdaptiveBatching = %v, passed to the worker %v; want %v", m.AdaptiveBatching, sent, tt.want)
			}
		})
	}
}
