package properties

import (
	"slices"
	"sort"
	"strings"
	"time"
)

// RollingBatchModes are the accepted values of option.rolling_batch.
var RollingBatchModes = []string{"auto", "vllm", "trtllm", "disable", "lmi-dist", "scheduler"}

// Validate checks m's values and returns an ErrInvalid *Error about the
// first bad one. LoadModel adds the file and line of that key to it.
func (m *Model) Validate() error {
	return firstError(
		checkEngine(m.Engine),
		atLeast("batch_size", int64(m.BatchSize), 1),
		notNegative("max_batch_delay", m.MaxBatchDelay),
		notNegative("max_idle_time", m.MaxIdleTime),
		atLeast("job_queue_size", int64(m.JobQueueSize), 1),
		m.checkWorkerCounts(),
		checkDevices(m.LoadOnDevices),
		atLeast("required_memory_mb", m.RequiredMemoryMB, 0),
		atLeast("gpu.required_memory_mb", m.GPURequiredMemoryMB, 0),
		atLeast("reserved_memory_mb", m.ReservedMemoryMB, 0),
		atLeast("gpu.reserved_memory_mb", m.GPUReservedMemoryMB, 0),
		positive("option.predict_timeout", m.PredictTimeout),
		positive("option.model_loading_timeout", m.ModelLoadingTimeout),
		notEmpty("option.pythonExecutable", m.PythonExecutable),
		oneOf("option.rolling_batch", m.RollingBatch, RollingBatchModes),
		atLeast("option.max_rolling_batch_size", int64(m.MaxRollingBatchSize), 1),
	)
}

func firstError(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func checkEngine(engine string) error {
	if strings.EqualFold(engine, "Python") || strings.EqualFold(engine, "MPI") {
		return nil
	}
	return invalidf("engine", "%s is not supported (use Python or MPI)", quote(engine))
}

func atLeast(key string, v, least int64) error {
	if v < least {
		return invalidf(key, "%d is less than %d", v, least)
	}
	return nil
}

func notNegative(key string, d time.Duration) error {
	if d < 0 {
		return invalidf(key, "%v is negative", d)
	}
	return nil
}

func positive(key string, d time.Duration) error {
	if d <= 0 {
		return invalidf(key, "%v is not positive", d)
	}
	return nil
}

func notEmpty(key, v string) error {
	if v == "" {
		return invalidf(key, "is empty")
	}
	return nil
}

func oneOf(key, v string, accepted []string) error {
	if !slices.Contains(accepted, v) {
		return invalidf(key, "%s is not one of %s", quote(v), strings.Join(accepted, ", "))
	}
	return nil
}

func checkDevices(ids []int) error {
	for i, id := range ids {
		if id < 0 {
			return invalidf("load_on_devices", "device id %d is negative", id)
		}
		if slices.Contains(ids[:i], id) {
			return invalidf("load_on_devices", "device id %d is listed twice", id)
		}
	}
	return nil
}

// count is a worker count and the key it was set with; v is nil when unset.
type count struct {
	key string
	v   *int
}

// pick returns the device-specific count when set, else the general one.
func pick(specific, general count) count {
	if specific.v != nil {
		return specific
	}
	return general
}

func (m *Model) gpuCounts() (count, count) {
	return pick(count{"gpu.minWorkers", m.GPUMinWorkers}, count{"minWorkers", m.MinWorkers}),
		pick(count{"gpu.maxWorkers", m.GPUMaxWorkers}, count{"maxWorkers", m.MaxWorkers})
}

func (m *Model) cpuCounts() (count, count) {
	return pick(count{"cpu.minWorkers", m.CPUMinWorkers}, count{"minWorkers", m.MinWorkers}),
		pick(count{"cpu.maxWorkers", m.CPUMaxWorkers}, count{"maxWorkers", m.MaxWorkers})
}

// checkWorkerCounts checks that every set count is not negative and that
// no set minimum is above the maximum it is paired with.
func (m *Model) checkWorkerCounts() error {
	all := []count{
		{"minWorkers", m.MinWorkers}, {"maxWorkers", m.MaxWorkers},
		{"gpu.minWorkers", m.GPUMinWorkers}, {"gpu.maxWorkers", m.GPUMaxWorkers},
		{"cpu.minWorkers", m.CPUMinWorkers}, {"cpu.maxWorkers", m.CPUMaxWorkers},
	}
	for _, c := range all {
		if c.v != nil && *c.v < 0 {
			return invalidf(c.key, "%d is negative", *c.v)
		}
	}
	gmin, gmax := m.gpuCounts()
	cmin, cmax := m.cpuCounts()
	return firstError(checkPair(count{"minWorkers", m.MinWorkers}, count{"maxWorkers", m.MaxWorkers}),
		checkPair(gmin, gmax), checkPair(cmin, cmax))
}

func checkPair(lo, hi count) error {
	if lo.v != nil && hi.v != nil && *lo.v > *hi.v {
		return invalidf(lo.key, "%d is greater than %s %d", *lo.v, hi.key, *hi.v)
	}
	return nil
}

// resolve turns a pair of optional counts into numbers: an unset minimum
// is DefaultMinWorkers but no more than the maximum, an unset maximum is
// DefaultMaxWorkers but no less than the minimum.
func resolve(lo, hi count) (int, int) {
	switch {
	case lo.v != nil && hi.v != nil:
		return *lo.v, *hi.v
	case lo.v != nil:
		return *lo.v, max(*lo.v, DefaultMaxWorkers)
	case hi.v != nil:
		return min(DefaultMinWorkers, *hi.v), *hi.v
	}
	return DefaultMinWorkers, DefaultMaxWorkers
}

// GPUWorkers returns the worker counts of each GPU the model is on:
// gpu.minWorkers and gpu.maxWorkers, else minWorkers and maxWorkers, else
// 1 and 2.
func (m *Model) GPUWorkers() (minimum, maximum int) { return resolve(m.gpuCounts()) }

// CPUWorkers returns the worker counts of the model's CPU group:
// cpu.minWorkers and cpu.maxWorkers, else minWorkers and maxWorkers, else
// 1 and 2.
func (m *Model) CPUWorkers() (minimum, maximum int) { return resolve(m.cpuCounts()) }

// WantsCPUGroup reports whether cpu.minWorkers or cpu.maxWorkers is set,
// asking for CPU workers even on a host with GPUs.
func (m *Model) WantsCPUGroup() bool { return m.CPUMinWorkers != nil || m.CPUMaxWorkers != nil }

// Prop is one property of the initialization request. It has the shape of
// message.Prop, so a conversion turns one into the other.
type Prop struct {
	Key   string
	Value string
}

// WorkerProps returns the properties of the worker's initialization
// request, sorted by key: Extra, then every option with its prefix
// stripped, then the typed keys with the values in effect (options
// stripped, the others in their serving.properties spelling). A later
// group wins when two use the same key.
func (m *Model) WorkerProps() []Prop {
	all := map[string]string{}
	for k, v := range m.Extra {
		all[k] = v
	}
	for k, v := range m.Options {
		all[k] = v
	}
	for _, f := range m.fields() {
		if v, ok := f.get(); ok {
			all[strings.TrimPrefix(f.key, optionPrefix)] = v
		}
	}
	props := make([]Prop, 0, len(all))
	for k, v := range all {
		props = append(props, Prop{Key: k, Value: v})
	}
	sort.Slice(props, func(i, j int) bool { return props[i].Key < props[j].Key })
	return props
}
