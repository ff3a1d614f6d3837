package worker

import (
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/gpu"
)

// deviceCacheTTL is how old the device figures that the scaler and the
// metrics read may be. A worker start reads fresh ones.
const deviceCacheTTL = time.Second

// gpuView is the registry's view of the GPUs: the devices the server may
// use (its CUDA_VISIBLE_DEVICES and NVIDIA_VISIBLE_DEVICES), their figures
// read through NVML at most once per deviceCacheTTL unless a caller needs
// fresh ones, and the per-process memory of a describe or a scrape. No
// method is called with a model's lock held: NVML can block for seconds on
// a failing GPU.
type gpuView struct {
	info      gpu.Info
	visible   gpu.Visibility
	ids       []int // the visible GPUs' NVML indexes, fixed at start
	log       *zap.Logger
	pidExists func(int) bool
	children  func() func(int) []int // reads the process tree
	nsWarned  atomic.Bool
	ttl       time.Duration // how old cached figures may be (deviceCacheTTL)

	mu   sync.Mutex // held while NVML is read, so that one read serves all waiting
	at   time.Time
	devs []gpu.Device
	err  error
}

// newGPUView reads cfg.GPU's devices once and fixes the set the server may
// use, as env's visibility variables allow.
func newGPUView(cfg Config, env func(string) (string, bool)) (*gpuView, error) {
	log := cfg.Logger
	v := &gpuView{info: cfg.GPU, visible: gpu.NewVisibility(env), log: log, pidExists: cfg.PIDExists,
		children: cfg.ProcessTree, ttl: deviceCacheTTL}
	all, err := v.info.Devices()
	if err != nil {
		return nil, err
	}
	v.ids = v.visible.Indexes(all)
	if v.visible.String() != "" {
		log.Info("gpu: visible devices", zap.String("restriction", v.visible.Describe(all)))
	}
	for _, d := range v.visible.Filter(all) {
		if !d.Up() {
			log.Warn("gpu: device down", zap.Int("device", d.Index), zap.String("error", d.Err))
		}
	}
	return v, nil
}

// fresh returns the visible devices' figures, read now.
func (v *gpuView) fresh() ([]gpu.Device, error) { return v.read(false) }

// cached returns the visible devices' figures, read at most v.ttl ago.
func (v *gpuView) cached() ([]gpu.Device, error) { return v.read(true) }

func (v *gpuView) read(cached bool) ([]gpu.Device, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if cached && !v.at.IsZero() && time.Since(v.at) < v.ttl {
		return v.devs, v.err
	}
	all, err := v.info.Devices()
	v.devs, v.err, v.at = v.visible.Filter(all), err, time.Now()
	return v.devs, v.err
}

// hasGPU reports whether the server may use any GPU.
func (v *gpuView) hasGPU() bool { return len(v.ids) > 0 }

// describeIDs names the GPUs the server may use, for error messages.
func (v *gpuView) describeIDs() string {
	if len(v.ids) == 0 {
		return "no GPU"
	}
	parts := make([]string, len(v.ids))
	for i, id := range v.ids {
		parts[i] = "gpu " + strconv.Itoa(id)
	}
	s := strings.Join(parts, ", ")
	if v.visible.String() != "" {
		s += " (" + v.visible.String() + ")"
	}
	return s
}

// visibleID reports whether the server may use GPU id.
func (v *gpuView) visibleID(id int) bool { return slices.Contains(v.ids, id) }

// unitFigures is one GPU's or MIG device's process listing, by PID.
type unitFigures struct {
	byPID map[int]gpu.ProcessMemory
	err   string // the listing failed: every process's memory is unknown
}

// figures are the per-device and per-process numbers of one describe
// record or one scrape, read once for all the models.
type figures struct {
	gpu     bool                   // the server uses GPUs
	devices map[int]gpu.Device     // the visible devices by index
	units   map[string]unitFigures // by GPU or MIG UUID
	pidsOK  bool                   // NVML's PIDs are this namespace's
	tree    procTree               // finds the processes a worker started
	rss     func(pid int) int64    // reads a process's resident memory, MiB
}

// figures reads the device figures and the process listings.
func (v *gpuView) figures() figures {
	f := figures{gpu: v.hasGPU()}
	if !f.gpu {
		return f
	}
	devs, err := v.cached()
	if err != nil {
		v.log.Debug("gpu devices", zap.Error(err))
	}
	f.devices = map[int]gpu.Device{}
	for _, d := range devs {
		f.devices[d.Index] = d
	}
	listings, err := v.info.Processes()
	if err != nil {
		v.log.Debug("gpu processes", zap.Error(err))
	}
	f.units = map[string]unitFigures{}
	for _, l := range listings {
		u := unitFigures{byPID: map[int]gpu.ProcessMemory{}, err: l.Err}
		for _, p := range l.Processes {
			u.byPID[p.PID] = p
		}
		f.units[l.UUID] = u
	}
	f.pidsOK = v.checkPIDs(listings)
	f.tree = procTree{kids: v.children()}
	return f
}

// checkPIDs reports whether NVML's PIDs can be matched with the workers':
// false when NVML lists processes and none of them exists here, as in a
// container that does not share the host's PID namespace. It logs that
// once.
func (v *gpuView) checkPIDs(listings []gpu.Listing) bool {
	listed, seen := 0, 0
	for _, l := range listings {
		for _, p := range l.Processes {
			listed++
			if v.pidExists(p.PID) {
				seen++
			}
		}
	}
	if listed == 0 || seen > 0 {
		return true
	}
	if v.nsWarned.CompareAndSwap(false, true) {
		v.log.Warn("gpu: none of the PIDs NVML lists exists in this PID namespace (a container without the host's PID namespace?); per-worker GPU memory is unknown",
			zap.Int("listed", listed))
	}
	return false
}

// workerMemory returns the GPU memory of a worker pinned to unit: its
// process's and its descendants', in MiB. ok is false when it is unknown.
func (f figures) workerMemory(unit string, pids []int) (mib int64, ok bool) {
	u, found := f.units[unit]
	if !found || u.err != "" || !f.pidsOK {
		return 0, false
	}
	for _, pid := range pids {
		p, listed := u.byPID[pid]
		if p.Unknown {
			return 0, false
		}
		if listed {
			mib += int64(p.UsedMiB)
		}
	}
	return mib, true
}

// deviceError says why GPU id is down, or "".
func (f figures) deviceError(id int) string {
	d, ok := f.devices[id]
	if !ok {
		return ""
	}
	return d.Err
}
