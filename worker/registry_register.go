package worker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/properties"
)

// maxNameLen bounds model names.
const maxNameLen = 64

// ValidName reports whether name is a usable model name: letters, digits,
// '-', '_' and '.', at most 64 characters, and not "." or "..".
func ValidName(name string) bool {
	if name == "" || len(name) > maxNameLen || name == "." || name == ".." {
		return false
	}
	for _, c := range name {
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
		if !ok {
			return false
		}
	}
	return true
}

// Register adds a model from a model folder and starts its minimum workers.
// What can be checked without starting a worker (the folder, its files,
// the name, the worker caps, memory) is checked before it returns, even
// when the registration is asynchronous.
//
// With req.Synchronous it returns once the model is loaded, or has failed;
// a model that failed is removed again, leaving the registry as it was.
// Otherwise it returns at once and the model loads in the background; its
// describe record shows the load's errors while it retries, and a model
// whose last retry fails is removed (Describe then says why).
func (r *Registry) Register(ctx context.Context, req api.RegisterRequest) (api.ModelRecord, error) {
	m, err := r.prepare(req, false)
	if err != nil {
		return api.ModelRecord{}, err
	}
	if err := r.admit(m, !req.Synchronous); err != nil {
		return api.ModelRecord{}, err
	}
	if !req.Synchronous {
		go func() {
			defer r.bg.Done()
			_ = r.settle(r.ctx, m)
		}()
		return m.record(), nil
	}
	if err := r.settle(ctx, m); err != nil {
		return api.ModelRecord{}, err
	}
	return m.record(), nil
}

// settle installs the model's requirements, starts its workers and waits
// for its first load. A model that does not load is dropped.
func (r *Registry) settle(ctx context.Context, m *Model) error {
	m.launch(m.prepareLaunch(), false)
	err := m.waitSettled(ctx)
	if err != nil {
		r.drop(m, err)
	}
	return err
}

// drop removes a model whose registration failed, if it is still the one
// registered under its name and was not removed meanwhile (unregistered,
// replaced, shut down), and remembers why for Describe.
func (r *Registry) drop(m *Model, why error) {
	r.mu.Lock()
	mine := r.models[m.name] == m && !m.removed()
	if mine {
		delete(r.models, m.name)
		r.dropped.add(m.name, "its registration failed and it was removed: "+firstLine(why.Error()))
	}
	r.mu.Unlock()
	if !mine {
		return // unregistered, replaced or shut down meanwhile
	}
	m.remove(context.Background(), "removed: its registration failed")
	r.metrics.forget(m.name)
	r.loads.forget(m.name)
	r.log.Error("model registration failed; model removed", zap.String("model", m.name), zap.Error(why))
}

// LoadStartup registers the models of load_models without waiting for them:
// a model that fails becomes FAILED and the others go on. With
// load_on_demand, a model that is not pinned is registered unloaded: it
// loads on its first request. A model whose requirements.txt must be
// installed first is registered PENDING and installs in the background, so
// that the server answers (/ping 503, describe PENDING) while pip runs.
func (r *Registry) LoadStartup(refs []properties.ModelRef) error {
	reqs, err := startupRequests(refs)
	if err != nil {
		return err
	}
	for _, req := range reqs {
		m, err := r.prepare(req, true)
		install := err == nil && m.needsInstall()
		if err == nil {
			err = r.admit(m, install)
		}
		if err != nil {
			r.log.Error("model not loaded", zap.String("url", req.URL), zap.Error(err))
			continue
		}
		if !install {
			r.launchStartup(m)
			continue
		}
		go func() {
			defer r.bg.Done()
			r.launchStartup(m)
		}()
	}
	return nil
}

// launchStartup installs a startup model's requirements and launches it,
// unloaded under load_on_demand unless it is pinned.
func (r *Registry) launchStartup(m *Model) {
	unloaded := r.cfg.Server.LoadOnDemand && (m.cfg.Pinned == nil || !*m.cfg.Pinned)
	m.launch(m.prepareLaunch(), unloaded)
}

// startupRequests turns load_models into register requests. A model
// named by its own entry wins over the store folder of that name that an
// ALL entry lists ("ALL,langid=/elsewhere/langid").
func startupRequests(refs []properties.ModelRef) ([]api.RegisterRequest, error) {
	named := map[string]bool{}
	for _, ref := range refs {
		if !ref.All {
			named[ref.Name] = true
		}
	}
	var reqs []api.RegisterRequest
	for _, ref := range refs {
		found, err := expandRef(ref)
		if err != nil {
			return nil, err
		}
		for _, req := range found {
			if !ref.All || !named[req.ModelName] {
				reqs = append(reqs, req)
			}
		}
	}
	return reqs, nil
}

// expandRef turns one load_models entry into register requests: ALL is every
// folder of the model store.
func expandRef(ref properties.ModelRef) ([]api.RegisterRequest, error) {
	if !ref.All {
		return []api.RegisterRequest{{URL: ref.Path, ModelName: ref.Name}}, nil
	}
	names, err := modelFolders(ref.Path)
	if err != nil {
		return nil, err
	}
	out := make([]api.RegisterRequest, len(names))
	for i, name := range names {
		out[i] = api.RegisterRequest{URL: filepath.Join(ref.Path, name), ModelName: name}
	}
	return out, nil
}

// modelFolders returns the names of the model folders in store, sorted.
func modelFolders(store string) ([]string, error) {
	entries, err := os.ReadDir(store)
	if err != nil {
		return nil, fmt.Errorf("worker: read model store: %w", err)
	}
	var names []string
	for _, e := range entries {
		if isModelDir(filepath.Join(store, e.Name())) {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

// isModelDir reports whether dir is a model folder: it holds something
// called serving.properties or model.py. Whether that is a file the server
// may read is checkFiles' business, which answers 400 where it is not.
func isModelDir(dir string) bool {
	for _, f := range []string{properties.ModelFile, handlerFile} {
		if _, err := os.Lstat(filepath.Join(dir, f)); err == nil {
			return true
		}
	}
	return false
}

// prepare resolves and loads a model's configuration, without registering it.
func (r *Registry) prepare(req api.RegisterRequest, startup bool) (*Model, error) {
	dir, err := r.resolveURL(req.URL, startup)
	if err != nil {
		return nil, err
	}
	name := req.ModelName
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(dir), ".tar.gz")
	}
	if !ValidName(name) {
		return nil, fmt.Errorf("%w: invalid model name %s: use letters, digits, '-', '_' and '.', at most %d characters", api.ErrBadRequest, api.Quote(name), maxNameLen)
	}
	if err := r.checkFiles(dir, startup); err != nil {
		return nil, err
	}
	cfg, err := properties.LoadModel(dir, r.cfg.Server, r.cfg.Env)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", api.ErrBadRequest, err)
	}
	cfg.Name = name
	if err := applyOverrides(cfg, req); err != nil {
		return nil, err
	}
	if err := r.checkHandler(cfg, startup); err != nil {
		return nil, err
	}
	declared, err := configTensors(cfg)
	if err != nil {
		return nil, err
	}
	m := newModel(r, name, dir, cfg, startup)
	m.needs, m.cfgTensors = needsOf(cfg, r.cfg.Env), declared
	if err := r.gpuRefusal(cfg); err != nil {
		if !startup {
			return nil, err // refused at once; a startup model shows it as FAILED
		}
		m.state = stBlocked
		return m, nil
	}
	if m.groups, err = r.groupsFor(m); err != nil {
		return nil, err
	}
	if err := r.budget.fits(m, sumMax(m.groups)); err != nil {
		return nil, err
	}
	return m, nil
}

// gpuRefusal refuses a model pinned to GPUs (load_on_devices with ids, or a
// gpu.* key) on a host whose NVML library is installed but fails: it must
// not quietly run on the CPU instead. NVML's failure is the one its
// library gave when the registry was made, so the answer never changes.
func (r *Registry) gpuRefusal(cfg *properties.Model) error {
	nvmlErr := r.cfg.GPU.Err()
	if nvmlErr == nil {
		return nil
	}
	why := ""
	if cfg.LoadOnDevices != nil {
		why = "load_on_devices names GPUs"
	}
	for _, key := range []string{"gpu.minWorkers", "gpu.maxWorkers", "gpu.required_memory_mb", "gpu.reserved_memory_mb"} {
		if why == "" && cfg.IsSet(key) {
			why = key + " is set"
		}
	}
	if why == "" {
		return nil
	}
	return fmt.Errorf("%w: model %s is pinned to GPUs (%s), but NVML failed: %w", api.ErrModelFailed, cfg.Name, why, nvmlErr)
}

// resolveURL turns a register url into a model folder inside the allowed
// roots. Symbolic links are followed before the check, so a link cannot
// lead out of them. Startup models (from the server's own configuration)
// skip the root check.
func (r *Registry) resolveURL(url string, startup bool) (string, error) {
	if url == "" {
		return "", fmt.Errorf("%w: parameter url is required", api.ErrBadRequest)
	}
	path := strings.TrimPrefix(url, "file://")
	if strings.Contains(path, "://") {
		return "", fmt.Errorf("%w: only local model folders can be registered: %s", api.ErrBadRequest, api.Quote(url))
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join(r.cfg.Server.ModelStore, path)
	}
	real, err := filepath.EvalSymlinks(filepath.Clean(path))
	if err != nil {
		if startup || r.inRoots(filepath.Clean(path)) {
			return "", fmt.Errorf("%w: %s", api.ErrModelURL, api.Quote(url))
		}
		return "", fmt.Errorf("%w: %s is outside the allowed model roots", api.ErrBadRequest, api.Quote(url))
	}
	if !startup && !r.inRoots(real) {
		return "", fmt.Errorf("%w: %s is outside the allowed model roots", api.ErrBadRequest, api.Quote(url))
	}
	if !isModelDir(real) {
		return "", fmt.Errorf("%w: %s is not a model folder (no serving.properties or model.py)", api.ErrModelURL, api.Quote(url))
	}
	return real, nil
}

// inRoots reports whether path lies inside one of the allowed roots.
func (r *Registry) inRoots(path string) bool {
	roots := r.cfg.Server.AllowedModelRoots
	if len(roots) == 0 {
		roots = []string{r.cfg.Server.ModelStore}
	}
	for _, root := range roots {
		if real, err := filepath.EvalSymlinks(root); err == nil {
			root = real
		}
		rel, err := filepath.Rel(root, path)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return true
		}
	}
	return false
}

// applyOverrides sets what the register request names over serving.properties.
func applyOverrides(cfg *properties.Model, req api.RegisterRequest) error {
	set := func(dst *int, v *int) {
		if v != nil {
			*dst = *v
		}
	}
	set(&cfg.BatchSize, req.BatchSize)
	set(&cfg.JobQueueSize, req.JobQueueSize)
	if req.MaxBatchDelay != nil {
		cfg.MaxBatchDelay = msec(*req.MaxBatchDelay)
	}
	if req.MaxIdleTime != nil {
		cfg.MaxIdleTime = sec(*req.MaxIdleTime)
	}
	if req.MinWorker != nil {
		cfg.MinWorkers, cfg.GPUMinWorkers, cfg.CPUMinWorkers = req.MinWorker, nil, nil
	}
	if req.MaxWorker != nil {
		cfg.MaxWorkers, cfg.GPUMaxWorkers, cfg.CPUMaxWorkers = req.MaxWorker, nil, nil
	}
	if err := cfg.Validate(); err != nil {
		return fmt.Errorf("%w: %w", api.ErrBadRequest, err)
	}
	return nil
}

// groupsFor builds a model's worker groups: one per allowed GPU the server
// may use (down or not), and a CPU group when the server has no GPU or the
// model asks for CPU workers. A load_on_devices id the server may not use is
// a bad request.
func (r *Registry) groupsFor(m *Model) ([]*group, error) {
	var gs []*group
	if r.gpus.hasGPU() {
		for _, id := range m.cfg.LoadOnDevices {
			if !r.gpus.visibleID(id) {
				return nil, fmt.Errorf("%w: model %s: load_on_devices names gpu %d; the server may use %s",
					api.ErrBadRequest, m.name, id, r.gpus.describeIDs())
			}
		}
		lo, hi := m.cfg.GPUWorkers()
		for _, id := range r.gpus.ids {
			if m.cfg.LoadOnDevices == nil || containsInt(m.cfg.LoadOnDevices, id) {
				gs = append(gs, &group{m: m, device: api.Device{DeviceType: "gpu", DeviceID: id}, min: lo, max: hi})
			}
		}
	}
	if !r.gpus.hasGPU() || m.cfg.WantsCPUGroup() {
		lo, hi := m.cfg.CPUWorkers()
		gs = append(gs, &group{m: m, device: api.Device{DeviceType: "cpu", DeviceID: -1}, min: lo, max: hi})
	}
	if len(gs) == 0 {
		return nil, fmt.Errorf("%w: model %s: load_on_devices names no device this host has", api.ErrBadRequest, m.name)
	}
	return gs, nil
}

func containsInt(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// admit puts a prepared model into the registry, reserving its workers
// under the caps; it starts nothing. A FAILED model of the same name is
// replaced; any other is a conflict. With background set, a successful
// admit adds one to r.bg for the goroutine that will load the model, while
// r.mu shows that no shutdown has begun.
func (r *Registry) admit(m *Model, background bool) error {
	if err := r.checkAdmit(m); err != nil {
		return err
	}
	r.mu.Lock()
	old, err := r.swapIn(m)
	if err == nil && background {
		r.bg.Add(1)
	}
	r.mu.Unlock()
	if err != nil {
		return err
	}
	if old != nil {
		old.remove(context.Background(), "replaced")
	}
	r.log.Info("model registered", zap.String("model", m.name), zap.String("url", m.url))
	return nil
}

// checkAdmit refuses a model whose name is taken by a model that is not
// FAILED (409) before it checks memory (507).
func (r *Registry) checkAdmit(m *Model) error {
	if old, err := r.lookup(m.name); err == nil {
		if bad, _ := old.failed(); !bad {
			return fmt.Errorf("%w: %s", api.ErrModelExists, m.name)
		}
	}
	return r.memoryPrecheck(m)
}

// swapIn reserves m's workers and puts m in the registry, returning the
// FAILED model it replaces, if any; r.mu is held.
func (r *Registry) swapIn(m *Model) (*Model, error) {
	if r.closed {
		return nil, fmt.Errorf("%w: server shutting down", batching.ErrClosed)
	}
	old := r.models[m.name]
	if old != nil {
		if bad, _ := old.failed(); !bad {
			return nil, fmt.Errorf("%w: %s", api.ErrModelExists, m.name)
		}
	}
	if err := r.budget.reserve(m, sumMax(m.groups), old); err != nil {
		return nil, err
	}
	r.models[m.name] = m
	r.dropped.forget(m.name)
	return old, nil
}

// memoryPrecheck refuses a model whose minimum workers do not all fit
// (507) before anything starts. Models loaded at startup skip it: they
// become FAILED with the same message instead, once a worker finds no room.
func (r *Registry) memoryPrecheck(m *Model) error {
	if m.startup {
		return nil // a model pinned to GPUs NVML cannot use comes only from the startup list
	}
	extra := map[*group]int{}
	for _, g := range m.groups {
		extra[g] = g.min
	}
	return r.precheck(m, extra)
}

// prepareLaunch is why the model cannot start (pinned to GPUs NVML cannot
// use), else the result of installing its requirements.
func (m *Model) prepareLaunch() error {
	if err := m.reg.gpuRefusal(m.cfg); err != nil {
		return err
	}
	return m.prepareDeps()
}

// launch starts the model's workers and its scaler (evLaunch), or, with
// unloaded, only its scaler: the model loads on demand, and its first load
// counts as done, so that /ping does not wait for it (evLaunchUnloaded).
// It marks the model FAILED when its requirements did not install or it
// cannot start (evLaunchFailed); the scaler runs then too, since a scale
// may revive a FAILED model. A model removed meanwhile starts nothing.
func (m *Model) launch(depsErr error, unloaded bool) {
	ev := evLaunch
	switch {
	case depsErr != nil:
		ev = evLaunchFailed
	case unloaded:
		ev = evLaunchUnloaded
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fireLocked(ev, cause{err: depsErr}) {
		m.changedLocked()
	}
}
