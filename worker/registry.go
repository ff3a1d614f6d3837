package worker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/gpu"
	"github.com/switchyard/switchyard/message"
	"github.com/switchyard/switchyard/properties"
	"github.com/switchyard/switchyard/worker/process"
)

// Config is what a Registry needs.
type Config struct {
	Server     *properties.Server    // server settings and model defaults
	Env        properties.Env        // environment for OPTION_* overrides
	Engine     string                // the worker engine script
	PythonPath []string              // folders put first on each worker's PYTHONPATH
	GPU        gpu.Info              // device figures; a CPU-only Info when there is no driver
	Logger     *zap.Logger           //
	Registerer prometheus.Registerer // queue and worker metrics go here
	LogLevel   string                // the workers' --log-level
	CacheDir   string                // models' pip requirements are installed below it
	// Start starts one worker process; nil means process.Start, a real
	// Python process. Tests put an in-memory runner here.
	Start StartFunc

	// The rest is how the registry reads the machine and runs programs on
	// it; nil means the real thing. Tests replace them, so that the
	// registry runs in virtual time without touching the host.

	// HostMemory reads the host's total and available memory in MiB for
	// the memory checks; nil means gpu.HostMemory (/proc/meminfo and the
	// cgroup's limit).
	HostMemory func() (totalMiB, availableMiB uint64, err error)
	// RSS reads a worker's resident memory in MiB, 0 when unknown; nil
	// reads /proc/<pid>/status.
	RSS func(pid int) int64
	// ProcessTree reads, once per describe record or scrape, which
	// processes each process started (a worker's children hold GPU memory
	// too); nil reads /proc.
	ProcessTree func() (children func(pid int) []int)
	// PIDExists reports whether a process NVML lists exists in this PID
	// namespace; nil asks the kernel.
	PIDExists func(pid int) bool
	// Pip runs "python -m pip args..." in dir and returns its output
	// (stdout and stderr); nil runs the model's interpreter.
	Pip func(ctx context.Context, python, dir string, args []string) ([]byte, error)
}

// withDefaults fills in what cfg leaves nil.
func (cfg Config) withDefaults() Config {
	if cfg.Logger == nil {
		cfg.Logger = zap.NewNop()
	}
	if cfg.GPU == nil {
		cfg.GPU = gpu.New(cfg.Logger)
	}
	if cfg.Start == nil {
		cfg.Start = startProcess
	}
	if cfg.HostMemory == nil {
		cfg.HostMemory = gpu.HostMemory
	}
	if cfg.RSS == nil {
		cfg.RSS = rssMiB
	}
	if cfg.ProcessTree == nil {
		cfg.ProcessTree = func() func(int) []int { return readProcTree("/proc") }
	}
	if cfg.PIDExists == nil {
		cfg.PIDExists = gpu.PIDExists
	}
	if cfg.Pip == nil {
		cfg.Pip = runPip
	}
	return cfg
}

// Registry is the set of registered models: it ties each model's
// configuration, queue and worker groups together. It implements the
// front-end's Models interface.
type Registry struct {
	cfg     Config
	log     *zap.Logger
	metrics *metrics
	ctx     context.Context // canceled by a forced shutdown
	cancel  context.CancelFunc
	devices deviceLocks
	ids     atomic.Int64

	gpus    *gpuView
	budget  *budget
	res     *residency     // makes room for workers about to start
	loads   *loadMetrics   // loads and evictions
	bg      sync.WaitGroup // asynchronous registrations
	dropped droppedList    // registrations that failed and were removed

	mu     sync.RWMutex
	models map[string]*Model
	closed bool
}

// NewRegistry returns an empty registry. It uses the GPUs of cfg.GPU that
// cfg.Env's CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES allow; GPUs that
// are down do not keep it from starting.
func NewRegistry(cfg Config) (*Registry, error) {
	cfg = cfg.withDefaults()
	ctx, cancel := context.WithCancel(context.Background())
	r := &Registry{cfg: cfg, log: cfg.Logger, ctx: ctx, cancel: cancel, models: map[string]*Model{}}
	var err error
	if r.gpus, err = newGPUView(cfg, cfg.Env.Lookup); err != nil {
		cancel()
		return nil, fmt.Errorf("worker: list gpus: %w", err)
	}
	r.budget = newBudget(resolveCaps(cfg.Server, readHost(len(r.gpus.ids), cfg.HostMemory)))
	r.res = newResidency(r)
	r.metrics, err = newMetrics(r, cfg.Registerer)
	if err == nil {
		r.loads, err = newLoadMetrics(r, cfg.Registerer)
	}
	if err != nil {
		cancel()
		return nil, err
	}
	return r, nil
}

// Caps returns the worker caps in force: max_workers_per_model and
// max_workers_total, or what was derived from the host where they are
// not set.
func (r *Registry) Caps() Caps { return r.budget.caps }

// lookup returns the model called name.
func (r *Registry) lookup(name string) (*Model, error) {
	r.mu.RLock()
	m := r.models[name]
	r.mu.RUnlock()
	if m == nil {
		return nil, fmt.Errorf("%w: %s", api.ErrModelNotFound, name)
	}
	return m, nil
}

// Submit queues a job for the named model. Once it returns nil the job will
// be answered exactly once.
func (r *Registry) Submit(name string, j *batching.Job) error {
	m, err := r.lookup(name)
	if err != nil {
		return err
	}
	return m.submit(j)
}

// Names returns the registered model names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.models))
	for n := range r.models {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// snapshot returns the registered models sorted by name.
func (r *Registry) snapshot() []*Model {
	r.mu.RLock()
	defer r.mu.RUnlock()
	ms := make([]*Model, 0, len(r.models))
	for _, m := range r.models {
		ms = append(ms, m)
	}
	slices.SortFunc(ms, func(a, b *Model) int { return cmpString(a.name, b.name) })
	return ms
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// List returns one summary per model, sorted by name.
func (r *Registry) List() []api.ModelSummary {
	ms := r.snapshot()
	out := make([]api.ModelSummary, len(ms))
	for i, m := range ms {
		out[i] = api.ModelSummary{ModelName: m.name, ModelURL: m.url, Status: m.listStatus()}
	}
	return out
}

// Describe returns the named model's record. For a model that was
// unregistered, or whose registration failed and was dropped, the
// not-found error says so.
func (r *Registry) Describe(name string) (api.ModelRecord, error) {
	m, err := r.lookup(name)
	if err != nil {
		if why, ok := r.dropped.reason(name); ok {
			return api.ModelRecord{}, fmt.Errorf("%w: %s (%s)", api.ErrModelNotFound, name, why)
		}
		return api.ModelRecord{}, err
	}
	return m.record(), nil
}

// Health returns every model's status for /ping.
func (r *Registry) Health() map[string]api.ModelHealth {
	out := map[string]api.ModelHealth{}
	for _, m := range r.snapshot() {
		h := api.ModelHealth{Status: m.status(), StartupLoading: m.startupLoading(), OnDemand: m.onDemandNow()}
		if bad, why := m.failed(); bad {
			h.Error = firstLine(why)
		}
		out[m.name] = h
	}
	return out
}

// figures reads the device figures and the per-process GPU memory once for
// a describe record or a scrape, with the reader of the workers' RSS.
func (r *Registry) figures() figures {
	f := r.gpus.figures()
	f.rss = r.cfg.RSS
	return f
}

// trackingID returns a request_tracking_id unique in this process.
func (r *Registry) trackingID() string {
	return strconv.FormatInt(r.ids.Add(1), 10)
}

func (r *Registry) retryThreshold() int {
	if n := r.cfg.Server.RetryThreshold; n > 0 {
		return n
	}
	return 3
}

func (r *Registry) stopGrace() time.Duration { return 5 * time.Second }

// depsRoot is the folder below which models' requirements are installed.
func (r *Registry) depsRoot() string {
	dir := r.cfg.CacheDir
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "switchyard-cache")
	}
	return filepath.Join(dir, "models")
}

func msec(n int) time.Duration { return time.Duration(n) * time.Millisecond }

func sec(n int) time.Duration { return time.Duration(n) * time.Second }

// spec is the command line and settings of one worker of m on device; a GPU
// worker is pinned to unit, the UUID of its GPU or MIG device, and told
// --device-id 0, the only device it sees.
func (r *Registry) spec(m *Model, device api.Device, unit string) process.Spec {
	id := -1
	if device.DeviceType == "gpu" {
		id = 0
	}
	ep := modelEntryPoints(m.cfg, r.cfg.Env)
	return process.Spec{
		Model:          m.name,
		ModelDir:       m.cfg.Dir,
		Python:         m.cfg.PythonExecutable,
		Engine:         r.cfg.Engine,
		PythonPath:     append(slices.Clone(r.cfg.PythonPath), m.extraPath()...),
		EntryPoint:     ep.entry,
		Recommended:    ep.recommended,
		AsyncMode:      asyncMode(m.cfg),
		Handler:        m.cfg.Options[process.HandlerKey],
		DeviceID:       id,
		VisibleDevices: unit,
		LogLevel:       r.cfg.LogLevel,
		SocketDir:      r.cfg.Server.SocketDir,
		InitProps:      initProps(m.cfg),
		LoadTimeout:    m.cfg.ModelLoadingTimeout,
		PredictTimeout: m.cfg.PredictTimeout,
		StopGrace:      r.stopGrace(),
		MaxItem:        int(r.cfg.Server.MaxRequestSize),
		Logger:         r.log,
		Env:            workerEnv(),
	}
}

// workerEnv is the extra environment of every worker: PYTHONUNBUFFERED makes
// a handler's print() reach the log at once.
func workerEnv() []string { return []string{"PYTHONUNBUFFERED=1"} }

// initProps converts the model's worker properties for the wire.
func initProps(cfg *properties.Model) []message.Prop {
	props := cfg.WorkerProps()
	out := make([]message.Prop, len(props))
	for i, p := range props {
		out[i] = message.Prop{Key: p.Key, Value: p.Value}
	}
	return out
}

// initProp returns one property of a worker's initialization reply.
func initProp(p Runner, key string) string {
	for _, kv := range p.InitProps() {
		if kv.Key == key {
			return kv.Value
		}
	}
	return ""
}
