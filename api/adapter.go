package api

import (
	"errors"
	"time"
)

// Sentinel errors of LoRA adapters; the front-end maps them to status codes.
var (
	// ErrAdapterNotFound means no adapter of that name is registered (404).
	ErrAdapterNotFound = errors.New("api: adapter not found")
	// ErrAdapterExists means the name is taken by another adapter or a
	// model (409).
	ErrAdapterExists = errors.New("api: adapter already registered")
	// ErrLoRADisabled means the model does not serve adapters: its
	// serving.properties lacks option.enable_lora=true (400).
	ErrLoRADisabled = errors.New("api: LoRA is not enabled")
)

// AdapterRecord is one LoRA adapter of a model, as DJL's adapter routes
// answer it (name, src, preload, pin) with what switchyard adds: whether
// it is on the device now and when a request last named it.
type AdapterRecord struct {
	Name     string    `json:"name"`
	Src      string    `json:"src"`
	Preload  bool      `json:"preload"`
	Pin      bool      `json:"pin"`
	Loaded   bool      `json:"loaded"`
	LastUsed time.Time `json:"lastUsed,omitzero"`
}

// AdapterRequest registers or updates an adapter. Src is a local folder
// (adapter_config.json and adapter_model.safetensors) inside
// allowed_model_roots; nil Preload and Pin keep the default (preload) or
// the adapter's current setting.
type AdapterRequest struct {
	Name    string
	Src     string
	Preload *bool
	Pin     *bool
}
