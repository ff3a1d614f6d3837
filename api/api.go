package api

import (
	"encoding/json"
	"errors"
	"time"
)

// Sentinel errors the model registry returns and the front-end maps to HTTP
// status codes. Wrap them with %w to add detail.
var (
	// ErrModelNotFound means no model of that name is registered (404).
	ErrModelNotFound = errors.New("api: model not found")
	// ErrModelExists means a model of that name is already registered (409).
	ErrModelExists = errors.New("api: model already registered")
	// ErrBadRequest means a parameter is missing or malformed (400).
	ErrBadRequest = errors.New("api: bad request")
	// ErrModelURL means the register url names no model folder (404).
	ErrModelURL = errors.New("api: model url not found")
	// ErrNotReady means the model exists but cannot take requests yet (503).
	ErrNotReady = errors.New("api: model not ready")
	// ErrModelFailed means the model's workers keep failing (503).
	ErrModelFailed = errors.New("api: model failed")
	// ErrInsufficientMemory means no device has room for another worker (507).
	ErrInsufficientMemory = errors.New("api: not enough memory")
	// ErrWorkerDied means the worker holding the request exited (503).
	ErrWorkerDied = errors.New("api: worker died")
	// ErrPredictTimeout means the worker did not answer within predict_timeout (500).
	ErrPredictTimeout = errors.New("api: predict timeout")
)

// Model states, in DJL Serving's words. Describe records and /ping say
// StatusHealthy or StatusUnhealthy (fewer live workers than the minimum) for
// a model that has loaded, else StatusPending or StatusFailed (DJL's
// DescribeWorkflowResponse). GET /models says StatusReady, StatusPending or
// StatusFailed (DJL's WorkerPoolConfig.Status).
const (
	StatusHealthy   = "Healthy"
	StatusUnhealthy = "Unhealthy"
	StatusReady     = "READY"
	StatusPending   = "PENDING"
	StatusFailed    = "FAILED"
)

// ModelSummary is one entry of GET /models.
type ModelSummary struct {
	ModelName string `json:"modelName"`
	ModelURL  string `json:"modelUrl"`
	Status    string `json:"status"`
}

// ModelList is the body of GET /models.
type ModelList struct {
	Models        []ModelSummary `json:"models"`
	NextPageToken string         `json:"nextPageToken,omitempty"`
}

// Device names where a worker group runs: deviceType "cpu" (deviceId -1) or "gpu".
type Device struct {
	DeviceType string `json:"deviceType"`
	DeviceID   int    `json:"deviceId"`
}

// WorkerRecord describes one worker process in a describe record.
// GPUMemoryMiB is set for GPU workers; a GPU worker whose memory NVML cannot
// tell has it nil and GPUMemoryUnknown set, and its JSON shows
// "gpuMemoryMiB": null (a CPU worker's JSON has no such field).
// VisibleDevices is a GPU worker's CUDA_VISIBLE_DEVICES: the UUID of its GPU
// or MIG device.
type WorkerRecord struct {
	ID               int       `json:"id"`
	PID              int       `json:"pid"`
	Socket           string    `json:"socket"`
	StartTime        time.Time `json:"startTime"`
	Status           string    `json:"status"`
	Temporary        bool      `json:"temporary"`
	VisibleDevices   string    `json:"visibleDevices,omitempty"`
	GPUMemoryMiB     *int64    `json:"gpuMemoryMiB,omitempty"`
	GPUMemoryUnknown bool      `json:"-"`
	RSSMiB           int64     `json:"rssMiB"`
}

// MarshalJSON writes the record with "gpuMemoryMiB": null when the GPU
// memory is unknown.
func (w WorkerRecord) MarshalJSON() ([]byte, error) {
	type plain WorkerRecord
	if w.GPUMemoryMiB != nil || !w.GPUMemoryUnknown {
		return json.Marshal(plain(w))
	}
	return json.Marshal(struct {
		plain
		GPUMemoryMiB *int64 `json:"gpuMemoryMiB"`
	}{plain: plain(w)})
}

// WorkerGroup is a model's workers on one device. DeviceError is set when
// the group's GPU is down: why NVML cannot use it.
type WorkerGroup struct {
	Device      Device         `json:"device"`
	MinWorkers  int            `json:"minWorkers"`
	MaxWorkers  int            `json:"maxWorkers"`
	DeviceError string         `json:"deviceError,omitempty"`
	Workers     []WorkerRecord `json:"workers"`
}

// ModelRecord is the record of GET /models/{name}, with DJL's field names.
type ModelRecord struct {
	ModelName           string          `json:"modelName"`
	ModelURL            string          `json:"modelUrl"`
	BatchSize           int             `json:"batchSize"`
	MaxBatchDelayMillis int             `json:"maxBatchDelayMillis"`
	MaxIdleSeconds      int             `json:"maxIdleSeconds"`
	QueueSize           int             `json:"queueSize"`
	RequestInQueue      int             `json:"requestInQueue"`
	Status              string          `json:"status"`
	LoadedAtStartup     bool            `json:"loadedAtStartup"`
	Loaded              bool            `json:"loaded"`
	Pinned              bool            `json:"pinned"`
	LastUsed            time.Time       `json:"lastUsed,omitzero"`
	LastUnload          *Unload         `json:"lastUnload,omitempty"`
	RollingBatch        string          `json:"rollingBatch,omitempty"`
	Generation          *Generation     `json:"generation,omitempty"`
	Signature           *Signature      `json:"signature,omitempty"`
	Adapters            []AdapterRecord `json:"adapters,omitempty"`
	LastError           string          `json:"lastError,omitempty"`
	WorkerGroups        []WorkerGroup   `json:"workerGroups"`
}

// Why a model's workers went away while it stayed registered (Unload's
// Reason): UnloadIdle when its last worker was released for want of work,
// UnloadEvicted when its workers were stopped to make room for another
// model.
const (
	UnloadIdle    = "idle"
	UnloadEvicted = "evicted"
)

// Why a model was evicted (Unload's Cause): EvictMemory when the model that
// needed room did not fit in memory (memory_budget_mb, host or GPU memory),
// EvictLoadedModels when max_loaded_models models were loaded already.
const (
	EvictMemory       = "memory"
	EvictLoadedModels = "max_loaded_models"
)

// Unload says when and why a model was last unloaded: its workers went
// away while it stayed registered. For an eviction, ForModel names the
// model that needed the room and Cause says which limit it met.
type Unload struct {
	Time     time.Time `json:"time"`
	Reason   string    `json:"reason"`
	ForModel string    `json:"forModel,omitempty"`
	Cause    string    `json:"cause,omitempty"`
}

// Generation is what a generative model's handler declared when it loaded
// (properties of its initialization reply): the tokens the prompt and the
// completion share (0 when it did not say), whether it takes tools and
// answers with tool calls, and the most choices (n) it returns. The zero
// value is a model that declared nothing: no tools, one choice.
type Generation struct {
	ContextLength int  `json:"contextLength,omitempty"`
	SupportsTools bool `json:"supportsTools"`
	MaxChoices    int  `json:"maxChoices"`
}

// Choices returns the most choices the model returns, at least 1.
func (g Generation) Choices() int { return max(1, g.MaxChoices) }

// Workflow is one element of the describe answer: DJL wraps each model in a workflow.
type Workflow struct {
	WorkflowName string        `json:"workflowName"`
	Models       []ModelRecord `json:"models"`
}

// RegisterRequest holds the parameters of POST /models. Nil numbers take the
// model's serving.properties or the server defaults.
type RegisterRequest struct {
	URL           string
	ModelName     string
	BatchSize     *int
	MaxBatchDelay *int
	MaxIdleTime   *int
	JobQueueSize  *int
	MinWorker     *int
	MaxWorker     *int
	Synchronous   bool
}

// ScaleRequest holds the parameters of PUT /models/{name}.
type ScaleRequest struct {
	MinWorker   *int
	MaxWorker   *int
	Synchronous bool
}

// ModelHealth is one model's entry in the /ping answer.
type ModelHealth struct {
	Status string `json:"status"`
	Error  string `json:"error,omitempty"`
	// StartupLoading is true for a model loaded at startup whose first load
	// has not finished: /ping answers 503 while one is (DJL's
	// wait_model_loading). It is not part of the answer's JSON.
	StartupLoading bool `json:"-"`
	// OnDemand is true for a model that is not loaded because it loads on
	// demand: unloaded (PENDING), or loading for the requests that wait for
	// it. Such a model takes requests, so /ping counts it as serving. It is
	// not part of the answer's JSON.
	OnDemand bool `json:"-"`
}
