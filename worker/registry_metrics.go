package worker

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard/switchyard/batching"
)

const mib = 1 << 20

// metrics holds the registry's Prometheus series. Per-model gauges are read
// from the registry at scrape time, so an unregistered model's series vanish
// with it; the histograms and counters are deleted by forget.
type metrics struct {
	r         *Registry
	queueWait *prometheus.HistogramVec
	batchSize *prometheus.HistogramVec
	restarts  *prometheus.CounterVec

	adapterRequests, adapterLoads, adapterEvictions *prometheus.CounterVec
	adaptersOnDevice                                *prometheus.GaugeVec

	queueDepth, queueCap, dropped *prometheus.Desc
	waiting                       *prometheus.Desc
	workers, workerRSS, workerGPU *prometheus.Desc
	gpuUp, gpuUsed, gpuTotal      *prometheus.Desc
	gpuUtil, migUsed, migTotal    *prometheus.Desc
}

func newMetrics(r *Registry, reg prometheus.Registerer) (*metrics, error) {
	m := &metrics{
		r: r,
		queueWait: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "switchyard_queue_wait_seconds", Help: "Time requests waited in the model's queue before a worker took them.",
			Buckets: prometheus.ExponentialBuckets(0.0005, 4, 10),
		}, []string{"model"}),
		batchSize: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Name: "switchyard_batch_size_requests", Help: "Requests per batch sent to a worker.",
			Buckets: []float64{1, 2, 4, 8, 16, 32, 64, 128},
		}, []string{"model"}),
		restarts: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchyard_worker_restarts_total", Help: "Worker processes restarted after they died or timed out.",
		}, []string{"model"}),
		adapterRequests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchyard_adapter_requests_total", Help: "Requests that named a LoRA adapter of the model.",
		}, []string{"model", "adapter"}),
		adapterLoads: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchyard_adapter_loads_total", Help: "Times a LoRA adapter was put on the model's device.",
		}, []string{"model", "adapter"}),
		adapterEvictions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchyard_adapter_evictions_total", Help: "Times a LoRA adapter was taken off the model's device to make room (option.max_loras).",
		}, []string{"model", "adapter"}),
		adaptersOnDevice: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "switchyard_adapters_loaded", Help: "LoRA adapters on the model's device now.",
		}, []string{"model"}),
		queueDepth: prometheus.NewDesc("switchyard_queue_depth_requests", "Requests waiting in the model's queue.", []string{"model"}, nil),
		waiting: prometheus.NewDesc("switchyard_requests_waiting",
			"Requests waiting in all models' queues together (for a worker or for their model's load): the host's backlog.", nil, nil),
		queueCap:  prometheus.NewDesc("switchyard_queue_capacity_requests", "Bound of the model's queue (job_queue_size).", []string{"model"}, nil),
		dropped:   prometheus.NewDesc("switchyard_queue_dropped_total", "Requests answered without reaching a worker, by reason.", []string{"model", "reason"}, nil),
		workers:   prometheus.NewDesc("switchyard_worker_processes", "Worker processes by model, device and state.", []string{"model", "device", "state"}, nil),
		workerRSS: prometheus.NewDesc("switchyard_worker_rss_bytes", "Resident memory of a worker process.", []string{"model", "worker"}, nil),
		workerGPU: prometheus.NewDesc("switchyard_worker_gpu_memory_bytes", "GPU memory used by a worker process and its children (NVML); no sample when NVML cannot tell.", []string{"model", "worker", "device"}, nil),
		gpuUp:     prometheus.NewDesc("switchyard_gpu_up", "1 when NVML can use the GPU, 0 when it is down.", []string{"device"}, nil),
		gpuUsed:   prometheus.NewDesc("switchyard_gpu_memory_used_bytes", "Memory used on a GPU.", []string{"device"}, nil),
		gpuTotal:  prometheus.NewDesc("switchyard_gpu_memory_total_bytes", "Memory of a GPU.", []string{"device"}, nil),
		gpuUtil:   prometheus.NewDesc("switchyard_gpu_utilization_ratio", "GPU utilization, 0 to 1.", []string{"device"}, nil),
		migUsed:   prometheus.NewDesc("switchyard_gpu_mig_memory_used_bytes", "Memory used on a MIG device of a GPU in MIG mode.", []string{"device", "mig"}, nil),
		migTotal:  prometheus.NewDesc("switchyard_gpu_mig_memory_total_bytes", "Memory of a MIG device of a GPU in MIG mode.", []string{"device", "mig"}, nil),
	}
	if reg == nil {
		return m, nil
	}
	for _, c := range []prometheus.Collector{m.queueWait, m.batchSize, m.restarts, m.adapterRequests, m.adapterLoads,
		m.adapterEvictions, m.adaptersOnDevice, m} {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("worker: register metrics: %w", err)
		}
	}
	return m, nil
}

// modelSeries are one model's children of the dispatch histograms, looked
// up once per worker slot instead of once per batch.
type modelSeries struct {
	queueWait, batchSize prometheus.Observer
}

// forModel returns model's dispatch series.
func (m *metrics) forModel(model string) modelSeries {
	return modelSeries{queueWait: m.queueWait.WithLabelValues(model), batchSize: m.batchSize.WithLabelValues(model)}
}

// dispatched records a batch leaving the queue at now.
func (s modelSeries) dispatched(jobs []*batching.Job, now time.Time) {
	for _, j := range jobs {
		s.queueWait.Observe(now.Sub(j.Created()).Seconds())
	}
	s.batchSize.Observe(float64(len(jobs)))
}

// restarted counts a worker restart.
func (m *metrics) restarted(model string) { m.restarts.WithLabelValues(model).Inc() }

// forget deletes an unregistered model's series.
func (m *metrics) forget(model string) {
	m.queueWait.DeleteLabelValues(model)
	m.batchSize.DeleteLabelValues(model)
	m.restarts.DeleteLabelValues(model)
	l := prometheus.Labels{"model": model}
	for _, v := range []*prometheus.CounterVec{m.adapterRequests, m.adapterLoads, m.adapterEvictions} {
		v.DeletePartialMatch(l)
	}
	m.adaptersOnDevice.DeletePartialMatch(l)
}

// adapterRequest counts a request that named adapter.
func (m *metrics) adapterRequest(model, adapter string) {
	m.adapterRequests.WithLabelValues(model, adapter).Inc()
}

// adapterEvent counts a load or an eviction a worker reported.
func (m *metrics) adapterEvent(model string, e adapterEvent) {
	if e.kind == "loaded" {
		m.adapterLoads.WithLabelValues(model, e.name).Inc()
	} else {
		m.adapterEvictions.WithLabelValues(model, e.name).Inc()
	}
}

// adaptersLoaded sets how many adapters are on the model's device.
func (m *metrics) adaptersLoaded(model string, n int) {
	m.adaptersOnDevice.WithLabelValues(model).Set(float64(n))
}

// forgetAdapter drops the series of an unregistered adapter.
func (m *metrics) forgetAdapter(model, adapter string) {
	for _, v := range []*prometheus.CounterVec{m.adapterRequests, m.adapterLoads, m.adapterEvictions} {
		v.DeleteLabelValues(model, adapter)
	}
}

// Describe sends the descriptors of the series read at scrape time.
func (m *metrics) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{m.queueDepth, m.waiting, m.queueCap, m.dropped, m.workers, m.workerRSS, m.workerGPU,
		m.gpuUp, m.gpuUsed, m.gpuTotal, m.gpuUtil, m.migUsed, m.migTotal} {
		ch <- d
	}
}

// Collect reads queues, workers and devices now: NVML's devices and
// process listings once for the whole scrape.
func (m *metrics) Collect(ch chan<- prometheus.Metric) {
	f := m.r.figures()
	waiting := 0
	for _, model := range m.r.snapshot() {
		waiting += m.collectModel(ch, model, f)
	}
	ch <- prometheus.MustNewConstMetric(m.waiting, prometheus.GaugeValue, float64(waiting))
	m.collectDevices(ch, f)
}

// collectModel sends one model's series and returns its queue depth.
func (m *metrics) collectModel(ch chan<- prometheus.Metric, model *Model, f figures) int {
	q := model.currentQueue()
	st := q.Stats()
	depth := q.Len()
	ch <- prometheus.MustNewConstMetric(m.queueDepth, prometheus.GaugeValue, float64(depth), model.name)
	ch <- prometheus.MustNewConstMetric(m.queueCap, prometheus.GaugeValue, float64(q.Cap()), model.name)
	ch <- prometheus.MustNewConstMetric(m.dropped, prometheus.CounterValue, float64(st.Dropped), model.name, "client_gone")
	ch <- prometheus.MustNewConstMetric(m.dropped, prometheus.CounterValue, float64(st.Expired), model.name, "expired")
	ch <- prometheus.MustNewConstMetric(m.dropped, prometheus.CounterValue, float64(st.Rejected), model.name, "queue_full")
	counts := map[[2]string]int{}
	for _, g := range model.recordWith(f).WorkerGroups {
		dev := deviceLabel(g.Device.DeviceType, g.Device.DeviceID)
		for _, w := range g.Workers {
			counts[[2]string{dev, w.Status}]++
			id := strconv.Itoa(w.ID)
			if w.PID != 0 {
				ch <- prometheus.MustNewConstMetric(m.workerRSS, prometheus.GaugeValue, float64(w.RSSMiB*mib), model.name, id)
			}
			if w.GPUMemoryMiB != nil {
				ch <- prometheus.MustNewConstMetric(m.workerGPU, prometheus.GaugeValue, float64(*w.GPUMemoryMiB*mib), model.name, id, dev)
			}
		}
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(m.workers, prometheus.GaugeValue, float64(n), model.name, k[0], k[1])
	}
	return depth
}

// collectDevices sends each visible GPU's state and figures.
func (m *metrics) collectDevices(ch chan<- prometheus.Metric, f figures) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, id := range m.r.gpus.ids {
		d, ok := f.devices[id]
		if !ok {
			continue
		}
		dev := deviceLabel("gpu", id)
		gauge(m.gpuUp, boolValue(d.Up()), dev)
		if d.Memory != nil {
			gauge(m.gpuUsed, float64(d.Memory.UsedMiB*mib), dev)
			gauge(m.gpuTotal, float64(d.Memory.TotalMiB*mib), dev)
		}
		if d.UtilizationPercent != nil {
			gauge(m.gpuUtil, float64(*d.UtilizationPercent)/100, dev)
		}
		for _, s := range d.Slices {
			if s.Err == "" {
				gauge(m.migUsed, float64(s.Memory.UsedMiB*mib), dev, s.UUID)
				gauge(m.migTotal, float64(s.Memory.TotalMiB*mib), dev, s.UUID)
			}
		}
	}
}

func boolValue(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func deviceLabel(kind string, id int) string {
	if kind == "cpu" {
		return "cpu"
	}
	return kind + strconv.Itoa(id)
}

// rssMiB reads a process's resident memory from /proc; 0 when unknown.
func rssMiB(pid int) int64 {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(rest), " kB"), 10, 64)
			return kb / 1024
		}
	}
	return 0
}
