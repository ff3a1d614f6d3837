package frontend

import (
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// metrics are the front-end's collectors on the shared registry. Each
// model's children of the two vectors are kept, so that counting a request
// takes no label lookup in them.
type metrics struct {
	requests    *prometheus.CounterVec
	duration    *prometheus.HistogramVec
	generations *prometheus.CounterVec
	inFlight    *prometheus.GaugeVec
	conns       *connMetrics
	models      sync.Map // model name → *modelSeries
}

// modelSeries are one model's children of the vectors.
type modelSeries struct {
	duration prometheus.Observer
	inFlight prometheus.Gauge
	codes    sync.Map // status code (int) → prometheus.Counter
}

// durationBuckets run from 5 ms to 5 min: generative requests are long.
var durationBuckets = []float64{.005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30, 60, 120, 300}

func newMetrics(reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchyard_requests_total",
			Help: "Inference requests answered, by model and HTTP status code.",
		}, []string{"model", "code"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name:    "switchyard_request_duration_seconds",
			Help:    "Time from a request's arrival to its last byte handed to the HTTP server, by model.",
			Buckets: durationBuckets,
		}, []string{"model"}),
		generations: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchyard_generations_total",
			Help: "Generations that ended, by model and finish reason: length is an answer cut off at its " +
				"token limit (max_tokens, max_new_tokens), stop a stop string, eos the model's end token.",
		}, []string{"model", "finish_reason"}),
		inFlight: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "switchyard_requests_in_flight",
			Help: "Inference requests a model has accepted and not yet answered to the end: waiting in its queue " +
				"(for a worker or for its load) or running.",
		}, []string{"model"}),
	}
	for _, c := range []prometheus.Collector{m.requests, m.duration, m.generations, m.inFlight} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("frontend: register metrics: %w", err)
		}
	}
	var err error
	if m.conns, err = newConnMetrics(reg); err != nil {
		return nil, fmt.Errorf("frontend: register metrics: %w", err)
	}
	return m, nil
}

// observe counts one finished inference request.
func (m *metrics) observe(model string, code int, d time.Duration) {
	ms := m.series(model)
	ms.duration.Observe(d.Seconds())
	c, ok := ms.codes.Load(code)
	if !ok {
		c, _ = ms.codes.LoadOrStore(code, m.requests.WithLabelValues(model, codeLabel(code)))
	}
	c.(prometheus.Counter).Inc()
}

// began counts a request the model accepted; ended, one of those answered.
func (m *metrics) began(model string) { m.series(model).inFlight.Inc() }
func (m *metrics) ended(model string) { m.series(model).inFlight.Dec() }

// finished counts one generation of model that ended with reason (as the
// worker names it: length, stop, eos, tool_calls, error, canceled).
func (m *metrics) finished(model, reason string) {
	if reason == "" {
		return
	}
	m.generations.WithLabelValues(model, reason).Inc()
}

// series returns model's children, made on its first request.
func (m *metrics) series(model string) *modelSeries {
	if ms, ok := m.models.Load(model); ok {
		return ms.(*modelSeries)
	}
	ms, _ := m.models.LoadOrStore(model, &modelSeries{duration: m.duration.WithLabelValues(model),
		inFlight: m.inFlight.WithLabelValues(model)})
	return ms.(*modelSeries)
}

// forget drops every series of a model that went away.
func (m *metrics) forget(model string) {
	m.models.Delete(model)
	l := prometheus.Labels{"model": model}
	m.requests.DeletePartialMatch(l)
	m.duration.DeletePartialMatch(l)
	m.generations.DeletePartialMatch(l)
	m.inFlight.DeletePartialMatch(l)
}

// codeLabels holds the label text of every status code, so that counting
// a request does not format a number.
var codeLabels = func() (t [600]string) {
	for i := range t {
		t[i] = strconv.Itoa(i)
	}
	return t
}()

func codeLabel(code int) string {
	if code >= 0 && code < len(codeLabels) {
		return codeLabels[code]
	}
	return strconv.Itoa(code)
}
