package worker

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/message"
)

// Properties of the adapter messages and answers of the worker runtime's
// Hugging Face handler (pyruntime/switchyard_runtime/hf).
const (
	// propAdapter names the adapter a request runs with; the front-end sets
	// it from the request's selection.
	propAdapter = "adapter"
	// propAdapters is the worker's list of its adapters (JSON), in its
	// initialization reply and in its answers to adapter messages.
	propAdapters = "adapters"
	// propAdapterEvents names the adapters loaded onto and evicted from the
	// device for an answer: "loaded:a,evicted:b".
	propAdapterEvents = "x-switchyard-adapter-events"
	// propAdapterUsed names the adapter that answered a request (none for
	// the base model), on the worker's answer.
	propAdapterUsed   = "x-switchyard-adapter"
	adapterConfigFile = "adapter_config.json"
)

// adapterSet is a model's LoRA adapters: what was registered (from the
// folder's adapters/ at load, which the worker reports, and through the
// adapter routes) and where each one is now. Its worker holds the weights
// and decides what is on the device (option.max_loras, least recently
// used first); it says what it loaded and evicted with each answer.
type adapterSet struct {
	mu   sync.Mutex
	recs map[string]*api.AdapterRecord
}

func newAdapterSet() *adapterSet { return &adapterSet{recs: map[string]*api.AdapterRecord{}} }

// list returns the adapters sorted by name.
func (s *adapterSet) list() []api.AdapterRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]api.AdapterRecord, 0, len(s.recs))
	for _, r := range s.recs {
		out = append(out, *r)
	}
	slices.SortFunc(out, func(a, b api.AdapterRecord) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// get returns one adapter.
func (s *adapterSet) get(name string) (api.AdapterRecord, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	r, ok := s.recs[name]
	if !ok {
		return api.AdapterRecord{}, false
	}
	return *r, true
}

// has reports whether name is registered.
func (s *adapterSet) has(name string) bool {
	_, ok := s.get(name)
	return ok
}

// put records an adapter, keeping what is known of where it is.
func (s *adapterSet) put(rec api.AdapterRecord) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if old, ok := s.recs[rec.Name]; ok && old.Src == rec.Src {
		rec.Loaded, rec.LastUsed = old.Loaded, old.LastUsed
	}
	s.recs[rec.Name] = &rec
}

// remove forgets an adapter.
func (s *adapterSet) remove(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.recs, name)
}

// used notes a request for name at t.
func (s *adapterSet) used(name string, t time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.recs[name]; ok {
		r.LastUsed = t
	}
}

// applyEvents takes a worker's "loaded:a,evicted:b" and returns the events
// it applied, in order.
func (s *adapterSet) applyEvents(text string) []adapterEvent {
	var out []adapterEvent
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, part := range strings.Split(text, ",") {
		kind, name, ok := strings.Cut(strings.TrimSpace(part), ":")
		r, known := s.recs[name]
		if !ok || !known || (kind != "loaded" && kind != "evicted") {
			continue
		}
		r.Loaded = kind == "loaded"
		out = append(out, adapterEvent{kind: kind, name: name, loaded: s.loadedLocked()})
	}
	return out
}

// loadedCount is how many adapters are on the device.
func (s *adapterSet) loadedCount() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.loadedLocked()
}

// loadedLocked is loadedCount with s.mu held.
func (s *adapterSet) loadedLocked() int {
	n := 0
	for _, r := range s.recs {
		if r.Loaded {
			n++
		}
	}
	return n
}

// adapterEvent is one load or eviction a worker reported, with the number
// of adapters on the device right after it.
type adapterEvent struct {
	kind, name string
	loaded     int
}

// workerAdapter is one entry of a worker's adapter list.
type workerAdapter struct {
	Name     string   `json:"name"`
	Src      string   `json:"src"`
	Pinned   bool     `json:"pinned"`
	Loaded   bool     `json:"loaded"`
	LastUsed *float64 `json:"lastUsed"`
}

// syncFromWorker records the adapters a worker lists (its initialization
// reply or an answer to an adapter message): the folder's own adapters/
// come to the registry this way.
func (m *Model) syncFromWorker(listing string) {
	if listing == "" {
		return
	}
	var ws []workerAdapter
	if err := json.Unmarshal([]byte(listing), &ws); err != nil {
		m.reg.log.Warn("the worker's adapter list does not parse", zap.String("model", m.name), zap.Error(err))
		return
	}
	for _, w := range ws {
		rec := api.AdapterRecord{Name: w.Name, Src: w.Src, Preload: true, Pin: w.Pinned, Loaded: w.Loaded}
		if w.LastUsed != nil {
			rec.LastUsed = time.Unix(0, int64(*w.LastUsed*1e9))
		}
		m.adapters.put(rec)
	}
}

// noteAdapterEvents takes what an answer reports of adapters: the adapter
// that answered (its request count and lastUsed, whichever way the request
// named it, the body's "adapters" included), and the loads and evictions
// (the record, the metrics and the log).
func (m *Model) noteAdapterEvents(props []message.Prop) {
	if name := adapterProp(props, propAdapterUsed); name != "" && m.adapters.has(name) {
		m.adapters.used(name, time.Now())
		m.reg.metrics.adapterRequest(m.name, name)
	}
	text := adapterProp(props, propAdapterEvents)
	if text == "" {
		return
	}
	for _, e := range m.adapters.applyEvents(text) {
		m.reg.metrics.adapterEvent(m.name, e)
		m.reg.log.Info("adapter "+e.kind, zap.String("model", m.name), zap.String("adapter", e.name),
			zap.Int("loaded", e.loaded))
	}
	m.reg.metrics.adaptersLoaded(m.name, m.adapters.loadedCount())
}

// checkAdapter refuses a request that names an adapter the model does not
// have; the worker's answer counts one it has (noteAdapterEvents).
func (m *Model) checkAdapter(in message.Input) error {
	name := adapterProp(in.Props, propAdapter)
	if name == "" {
		return nil
	}
	if !m.cfg.EnableLoRA {
		return fmt.Errorf("%w: model %s serves no adapters, so it has no adapter %s", api.ErrAdapterNotFound, m.name, name)
	}
	if !m.adapters.has(name) {
		return fmt.Errorf("%w: %s (model %s has no adapter of that name)", api.ErrAdapterNotFound, name, m.name)
	}
	return nil
}

// propOf returns the last value of key in props, or "".
func adapterProp(props []message.Prop, key string) string {
	for i := len(props) - 1; i >= 0; i-- {
		if props[i].Key == key {
			return props[i].Value
		}
	}
	return ""
}

// adapterMessage is DJL's message to a worker about one adapter: the
// handler function and the adapter's properties.
func adapterMessage(function string, rec api.AdapterRecord) *message.Input {
	return &message.Input{Props: []message.Prop{
		{Key: "handler", Value: function}, {Key: "name", Value: rec.Name}, {Key: "src", Value: rec.Src},
		{Key: "pin", Value: strconv.FormatBool(rec.Pin)}, {Key: "preload", Value: strconv.FormatBool(rec.Preload)},
	}}
}

// tell sends one adapter message to every live worker of the model and
// waits for their answers; the first refusal is the error.
func (m *Model) tell(ctx context.Context, in *message.Input) error {
	procs := m.liveProcs()
	if len(procs) == 0 {
		return nil // the next worker hears of it when it starts (replayAdapters)
	}
	for _, p := range procs {
		if err := m.tellOne(ctx, p, in); err != nil {
			return err
		}
	}
	return nil
}

// tellOne sends one adapter message to one worker and waits for its answer.
func (m *Model) tellOne(ctx context.Context, p Runner, in *message.Input) error {
	type reply struct {
		resp *message.Response
		err  error
	}
	got := make(chan reply, 1)
	err := p.Dispatch(ctx, []*message.Input{in}, func(_ int, resp *message.Response, err error) {
		got <- reply{resp, err}
	}, func(error) {})
	if err != nil {
		return err
	}
	select {
	case r := <-got:
		if r.err != nil {
			return r.err
		}
		m.noteAdapterEvents(r.resp.Props)
		if r.resp.Code >= 300 {
			return adapterRefusal(r.resp)
		}
		m.syncFromWorker(adapterProp(r.resp.Props, propAdapters))
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// adapterRefusal turns a worker's refusal of an adapter message into the
// error of its status.
func adapterRefusal(resp *message.Response) error {
	msg := resp.Message
	switch resp.Code {
	case 404:
		return fmt.Errorf("%w: %s", api.ErrAdapterNotFound, msg)
	case 507:
		return fmt.Errorf("%w: %s", api.ErrInsufficientMemory, msg)
	}
	return fmt.Errorf("%w: %s", api.ErrBadRequest, msg)
}

// liveProcs returns the processes of the model's workers that serve.
func (m *Model) liveProcs() []Runner {
	m.mu.Lock()
	var runs []*run
	for _, g := range m.groups {
		runs = append(runs, g.workers...)
	}
	m.mu.Unlock()
	var out []Runner
	for _, w := range runs {
		w.mu.Lock()
		if !w.quitting && (w.state == workerReady || w.state == workerBusy) && w.proc != nil {
			out = append(out, w.proc)
		}
		w.mu.Unlock()
	}
	return out
}

// replayAdapters tells a worker that just loaded about the adapters
// registered through the routes that its own list lacks, before it takes
// requests.
func (m *Model) replayAdapters(ctx context.Context, p Runner) error {
	if !m.cfg.EnableLoRA {
		return nil
	}
	m.syncFromWorker(initProp(p, propAdapters))
	own := map[string]bool{}
	var ws []workerAdapter
	_ = json.Unmarshal([]byte(initProp(p, propAdapters)), &ws)
	for _, w := range ws {
		own[w.Name] = true
	}
	for _, rec := range m.adapters.list() {
		if !own[rec.Name] {
			if err := m.tellOne(ctx, p, adapterMessage("register_adapter", rec)); err != nil {
				return fmt.Errorf("replay adapter %s: %w", rec.Name, err)
			}
		}
	}
	return nil
}

// checkAdapterFolder refuses a src that is not an adapter folder inside the
// allowed model roots.
func (r *Registry) checkAdapterFolder(src string) (string, error) {
	if src == "" {
		return "", fmt.Errorf("%w: src is required: the adapter's folder", api.ErrBadRequest)
	}
	if strings.Contains(src, "://") {
		return "", fmt.Errorf("%w: src %s: only local folders register (copy the adapter to a folder first)", api.ErrBadRequest, src)
	}
	dir := src
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(r.cfg.Server.ModelStore, dir)
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return "", fmt.Errorf("%w: adapter folder %s: %w", api.ErrModelURL, src, err)
	}
	if !r.inRoots(real) {
		return "", fmt.Errorf("%w: adapter folder %s is outside the allowed model roots", api.ErrBadRequest, src)
	}
	if _, err := os.Stat(filepath.Join(real, adapterConfigFile)); err != nil {
		return "", fmt.Errorf("%w: %s is not an adapter folder: it has no %s", api.ErrBadRequest, src, adapterConfigFile)
	}
	return real, nil
}
