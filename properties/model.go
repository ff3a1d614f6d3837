package properties

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ModelFile is the name of a model folder's configuration file.
const ModelFile = "serving.properties"

// Model defaults that do not come from the server.
const (
	// DefaultEngine is the engine of a model that sets none.
	DefaultEngine = "Python"
	// DefaultReservedMemoryMB is the default of reserved_memory_mb and
	// gpu.reserved_memory_mb: memory a worker start leaves free.
	DefaultReservedMemoryMB = 500
	// DefaultPredictTimeout is the default of option.predict_timeout.
	DefaultPredictTimeout = 120 * time.Second
	// DefaultModelLoadingTimeout is the default of option.model_loading_timeout.
	DefaultModelLoadingTimeout = 240 * time.Second
	// DefaultRollingBatch is the default of option.rolling_batch.
	DefaultRollingBatch = "auto"
	// DefaultMaxRollingBatchSize is the default of option.max_rolling_batch_size.
	DefaultMaxRollingBatchSize = 32
	// DefaultMinWorkers is the minimum worker count when none is set.
	DefaultMinWorkers = 1
	// DefaultMaxWorkers is the maximum worker count when none is set.
	DefaultMaxWorkers = 2
)

// Model is one model folder's configuration: serving.properties with
// defaults and environment overrides applied.
type Model struct {
	Dir  string // absolute model folder
	Name string // the folder's base name unless the caller sets another

	Engine  string            // engine: Python, or MPI (run as Python)
	Options map[string]string // every option.* key, prefix stripped, typed ones included
	Extra   map[string]string // every other key that has no typed field

	BatchSize     int           // batch_size
	MaxBatchDelay time.Duration // max_batch_delay, in ms in the file
	MaxIdleTime   time.Duration // max_idle_time, in s in the file
	JobQueueSize  int           // job_queue_size

	// AdaptiveBatching is adaptive_batching (switchyard's key, default
	// false): a batch leaves as soon as the worker is idle instead of
	// waiting out max_batch_delay, so a lone request is not held back.
	AdaptiveBatching bool

	// Worker counts: minWorkers, maxWorkers, gpu.*, cpu.*; nil when not set.
	MinWorkers, MaxWorkers       *int
	GPUMinWorkers, GPUMaxWorkers *int
	CPUMinWorkers, CPUMaxWorkers *int

	LoadOnDevices []int // load_on_devices; nil means "*", every device

	// Pinned is the pinned key: a pinned model is never evicted to make
	// room for another, and loads at start under load_on_demand. Nil when
	// not set: then a model is pinned while its minimum workers are at
	// least 1, unless the server loads models on demand.
	Pinned *bool

	RequiredMemoryMB    int64 // required_memory_mb; 0 means no check
	GPURequiredMemoryMB int64 // gpu.required_memory_mb; 0 means no check
	ReservedMemoryMB    int64 // reserved_memory_mb: host memory kept free
	GPUReservedMemoryMB int64 // gpu.reserved_memory_mb: device memory kept free

	PredictTimeout      time.Duration // option.predict_timeout, in s in the file
	ModelLoadingTimeout time.Duration // option.model_loading_timeout, in s in the file
	PythonExecutable    string        // option.pythonExecutable
	EntryPoint          string        // option.entryPoint; "" means model.py
	RollingBatch        string        // option.rolling_batch, lower case
	MaxRollingBatchSize int           // option.max_rolling_batch_size

	// EnableLoRA is option.enable_lora: the model serves LoRA adapters on
	// its base weights. As in DJL, such a model runs one worker (its
	// adapters live in that worker's memory): maxWorkers is 1.
	EnableLoRA bool

	file string            // the serving.properties path
	at   map[string]origin // where each key was written
}

// NewModel returns the configuration of the model folder dir (an absolute
// path) as if it had no serving.properties: every key at its default, the server-wide ones taken
// from srv (DefaultServer when srv is nil).
func NewModel(dir string, srv *Server) *Model {
	if srv == nil {
		srv = DefaultServer()
	}
	return &Model{
		Dir: dir, Name: filepath.Base(dir), Engine: DefaultEngine,
		Options: map[string]string{}, Extra: map[string]string{},
		BatchSize: srv.BatchSize, MaxBatchDelay: srv.MaxBatchDelay,
		MaxIdleTime: srv.MaxIdleTime, JobQueueSize: srv.JobQueueSize,
		ReservedMemoryMB: DefaultReservedMemoryMB, GPUReservedMemoryMB: DefaultReservedMemoryMB,
		PredictTimeout: DefaultPredictTimeout, ModelLoadingTimeout: DefaultModelLoadingTimeout,
		PythonExecutable: srv.PythonExecutable, RollingBatch: DefaultRollingBatch,
		MaxRollingBatchSize: DefaultMaxRollingBatchSize,
		file:                filepath.Join(dir, ModelFile),
	}
}

// LoadModel reads dir's serving.properties on top of the defaults (from srv
// where the server sets them; DefaultServer when srv is nil), applies the
// OPTION_* variables of env for the options the file does not set, and
// validates the result. A folder without serving.properties is valid and
// gets every default.
func LoadModel(dir string, srv *Server, env Env) (*Model, error) {
	dir, err := modelDir(dir)
	if err != nil {
		return nil, err
	}
	m := NewModel(dir, srv)
	s, err := readSettings(m.file, true)
	if err != nil {
		return nil, err
	}
	s.applyOptionEnv(env)
	if err := m.decode(s); err != nil {
		return nil, err
	}
	if err := m.Validate(); err != nil {
		return nil, locate(err, m.file, m.at)
	}
	return m, nil
}

// modelDir returns dir made absolute, checking that it is a folder.
func modelDir(dir string) (string, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrNoModelDir, dir, err)
	}
	fi, err := os.Stat(abs)
	if err != nil {
		return "", fmt.Errorf("%w: %w", ErrNoModelDir, err)
	}
	if !fi.IsDir() {
		return "", fmt.Errorf("%w: %s is a file", ErrNoModelDir, abs)
	}
	return abs, nil
}

// decode fills m from s: typed keys, options, and the rest into Extra.
func (m *Model) decode(s *settings) error {
	if err := s.decode(m.fields()); err != nil {
		return err
	}
	typed := m.typedKeys()
	for _, k := range s.keys() {
		v, _ := s.get(k)
		if name, ok := strings.CutPrefix(k, optionPrefix); ok && name != "" {
			m.Options[name] = v.value
		} else if !typed[k] {
			m.Extra[k] = v.value
		}
	}
	if strings.ContainsRune(m.PythonExecutable, filepath.Separator) {
		m.PythonExecutable = absPath(m.Dir, m.PythonExecutable)
	}
	if m.EnableLoRA {
		one := 1
		m.MaxWorkers, m.GPUMaxWorkers, m.CPUMaxWorkers = &one, &one, &one
	}
	m.at = s.origins()
	return nil
}

// fields is the table of m's typed keys, in their serving.properties spelling.
func (m *Model) fields() []field {
	return []field{
		stringField("engine", &m.Engine),
		intField("batch_size", &m.BatchSize),
		durationField("max_batch_delay", &m.MaxBatchDelay, time.Millisecond),
		durationField("max_idle_time", &m.MaxIdleTime, time.Second),
		intField("job_queue_size", &m.JobQueueSize),
		flagField("adaptive_batching", &m.AdaptiveBatching),
		optIntField("minWorkers", &m.MinWorkers),
		optIntField("maxWorkers", &m.MaxWorkers),
		optIntField("gpu.minWorkers", &m.GPUMinWorkers),
		optIntField("gpu.maxWorkers", &m.GPUMaxWorkers),
		optIntField("cpu.minWorkers", &m.CPUMinWorkers),
		optIntField("cpu.maxWorkers", &m.CPUMaxWorkers),
		devicesField("load_on_devices", &m.LoadOnDevices),
		optBoolField("pinned", &m.Pinned),
		int64Field("required_memory_mb", &m.RequiredMemoryMB),
		int64Field("gpu.required_memory_mb", &m.GPURequiredMemoryMB),
		int64Field("reserved_memory_mb", &m.ReservedMemoryMB),
		int64Field("gpu.reserved_memory_mb", &m.GPUReservedMemoryMB),
		durationField("option.predict_timeout", &m.PredictTimeout, time.Second),
		durationField("option.model_loading_timeout", &m.ModelLoadingTimeout, time.Second),
		stringField("option.pythonExecutable", &m.PythonExecutable),
		stringField("option.entryPoint", &m.EntryPoint),
		lowerField("option.rolling_batch", &m.RollingBatch),
		intField("option.max_rolling_batch_size", &m.MaxRollingBatchSize),
		flagField("option.enable_lora", &m.EnableLoRA),
	}
}

func (m *Model) typedKeys() map[string]bool {
	typed := map[string]bool{}
	for _, f := range m.fields() {
		typed[f.key] = true
	}
	return typed
}

// IsSet reports whether key (in its serving.properties spelling) was set by
// the model's file or by the environment, as opposed to holding its
// default. DJL's memory rules tell "gpu.reserved_memory_mb not set" apart
// from any value.
func (m *Model) IsSet(key string) bool {
	_, ok := m.at[key]
	return ok
}
