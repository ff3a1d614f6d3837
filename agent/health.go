package agent

import (
	"sync"
	"time"
)

// The /ping statuses of the hosted agent runtime's contract.
const (
	StatusHealthy     = "Healthy"
	StatusHealthyBusy = "HealthyBusy"
)

// Health is what /ping reports: Healthy, or HealthyBusy while at least one
// invocation runs, and when that last changed.
type Health struct {
	mu      sync.Mutex
	running int
	changed time.Time
	now     func() time.Time
}

// NewHealth returns a Healthy Health whose clock is now (time.Now when nil).
func NewHealth(now func() time.Time) *Health {
	if now == nil {
		now = time.Now
	}
	return &Health{now: now, changed: now()}
}

// Begin counts one invocation as running until the returned func is called.
func (h *Health) Begin() (end func()) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.running == 0 {
		h.changed = h.now()
	}
	h.running++
	var once sync.Once
	return func() { once.Do(h.end) }
}

func (h *Health) end() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.running--
	if h.running == 0 {
		h.changed = h.now()
	}
}

// Ping is the body of /ping.
type Ping struct {
	Status           string `json:"status"`
	TimeOfLastUpdate int64  `json:"time_of_last_update"` // Unix seconds
}

// Ping returns the status now.
func (h *Health) Ping() Ping {
	h.mu.Lock()
	defer h.mu.Unlock()
	status := StatusHealthy
	if h.running > 0 {
		status = StatusHealthyBusy
	}
	return Ping{Status: status, TimeOfLastUpdate: h.changed.Unix()}
}
