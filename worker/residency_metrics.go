package worker

import (
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// loadMetrics counts models' loads and evictions and times the loads; the
// models loaded now are read at scrape time. Per-model series are deleted
// when the model goes (forget).
type loadMetrics struct {
	r         *Registry
	loads     *prometheus.CounterVec
	loadTime  *prometheus.HistogramVec
	evictions *prometheus.CounterVec
	isLoaded  *prometheus.Desc
}

func newLoadMetrics(r *Registry, reg prometheus.Registerer) (*loadMetrics, error) {
	m := &loadMetrics{
		r: r,
		loads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchyard_model_loads_total", Help: "Loads of the model: its first worker started while it had none, until it served.",
		}, []string{"model"}),
		loadTime: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "switchyard_model_load_seconds", Help: "Time from a load's first worker start (waiting for room included) until the model served.",
			Buckets: prometheus.ExponentialBuckets(0.05, 2, 14),
		}, []string{"model"}),
		evictions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchyard_model_evictions_total", Help: "Times the model was unloaded to make room for another, by reason: memory or max_loaded_models.",
		}, []string{"model", "reason"}),
		isLoaded: prometheus.NewDesc("switchyard_model_loaded", "1 while the model has a worker that takes requests, else 0.", []string{"model"}, nil),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.loads, m.loadTime, m.evictions, m} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("worker: register load metrics: %w", err)
		}
	}
	return m, nil
}

// loaded counts one load of model that took took.
func (m *loadMetrics) loaded(model string, took time.Duration) {
	m.loads.WithLabelValues(model).Inc()
	m.loadTime.WithLabelValues(model).Observe(took.Seconds())
}

// evicted counts one eviction of model.
func (m *loadMetrics) evicted(model, reason string) { m.evictions.WithLabelValues(model, reason).Inc() }

// forget deletes a removed model's series.
func (m *loadMetrics) forget(model string) {
	m.loads.DeleteLabelValues(model)
	m.loadTime.DeleteLabelValues(model)
	m.evictions.DeletePartialMatch(prometheus.Labels{"model": model})
}

// Describe sends the descriptor of the series read at scrape time.
func (m *loadMetrics) Describe(ch chan<- *prometheus.Desc) { ch <- m.isLoaded }

// Collect sends whether each model is loaded now.
func (m *loadMetrics) Collect(ch chan<- prometheus.Metric) {
	for _, model := range m.r.snapshot() {
		ch <- prometheus.MustNewConstMetric(m.isLoaded, prometheus.GaugeValue, boolValue(model.loaded()), model.name)
	}
}
