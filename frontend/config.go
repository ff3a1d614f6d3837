package frontend

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"go.uber.org/zap"

	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/frontend/dialect"
)

// Sentinel errors of the server's life cycle.
var (
	// ErrConfig means New was given an unusable Config or no Models.
	ErrConfig = errors.New("frontend: invalid config")
	// ErrServerState means Listen or Serve was called out of order: twice, or
	// after Shutdown.
	ErrServerState = errors.New("frontend: wrong server state")
)

// Defaults applied by New to zero Config fields.
const (
	// DefaultMaxRequestSize is the body limit when Config.MaxRequestSize is 0.
	DefaultMaxRequestSize = 64 << 20
	// DefaultThrottleCode is the queue-full status when Config.ThrottleCode is 0.
	DefaultThrottleCode = 503
	// DefaultShutdownTimeout bounds Serve's graceful stop when
	// Config.ShutdownTimeout is 0.
	DefaultShutdownTimeout = 30 * time.Second
	// DefaultReadTimeout bounds reading one request when Config.ReadTimeout
	// is 0.
	DefaultReadTimeout = 60 * time.Second
	// DefaultIdleTimeout bounds a keep-alive connection's wait for its next
	// request when Config.IdleTimeout is 0.
	DefaultIdleTimeout = 120 * time.Second
)

// readBufferSize is also the limit of the request line and headers:
// fasthttp holds them whole in each connection's read buffer. 64 KiB lets a
// header past the 32 KB that an int16 wire length once capped travel to the
// worker, at 64 KiB per open connection.
const readBufferSize = 64 << 10

// Models is what the front-end needs from the model registry: what its
// dialects may ask (dialect.Catalog), and Submit, which only the core calls.
type Models interface {
	dialect.Catalog
	// Submit enqueues j for model. It may return api.ErrModelNotFound,
	// api.ErrNotReady, api.ErrModelFailed, batching.ErrQueueFull or
	// batching.ErrClosed (wrapped). After a nil return the job will be
	// answered (Finish or Fail) exactly once.
	Submit(model string, j *batching.Job) error
}

// Config holds the settings of a Server.
type Config struct {
	// InferenceAddr and ManagementAddr are host:port addresses (an
	// "http://" prefix is accepted). When they are equal, one listener
	// serves both route tables, as SageMaker multi-model endpoints need.
	InferenceAddr, ManagementAddr string
	// MaxRequestSize is the largest request body in bytes; larger bodies
	// get 413. Zero means DefaultMaxRequestSize.
	MaxRequestSize int
	// ThrottleCode is the status of a queue-full answer, which also carries
	// Retry-After. Zero means DefaultThrottleCode.
	ThrottleCode int
	// MaxConnections caps the connections open on each listener at once;
	// one more is answered 503 (Connection: close, Retry-After: 1) without
	// being read, and closed. Zero means no cap.
	MaxConnections int
	// ReadTimeout bounds reading one request (headers and body), from its
	// first byte; on a new connection, from the connection's start. Slower
	// requests get 408. Zero means DefaultReadTimeout.
	ReadTimeout time.Duration
	// IdleTimeout is how long a keep-alive connection may wait for its next
	// request before it is closed. Zero means DefaultIdleTimeout. Writing
	// is never bounded: answers may stream for minutes.
	IdleTimeout time.Duration
	// ShutdownTimeout bounds how long Serve lets in-flight requests finish
	// once its context is done. Zero means DefaultShutdownTimeout.
	ShutdownTimeout time.Duration
	// NoWaitModelLoading is DJL's wait_model_loading=false: /ping does not
	// answer 503 while the models loaded at startup load (they count as
	// PENDING, like models registered later).
	NoWaitModelLoading bool
	// AllowMultiStatus is DJL's allow_multi_status=true: /ping answers 207
	// instead of 200 while a model is PENDING.
	AllowMultiStatus bool
	// Logger receives request failures and listener events. Nil means none.
	Logger *zap.Logger
	// Registry is the one Prometheus registry: the server registers its
	// collectors on it and serves it at GET /metrics. Nil means a private one.
	Registry *prometheus.Registry
	// ManagementToken, when not empty, is the bearer token every management
	// route requires ("Authorization: Bearer <token>"); others get 401.
	// Inference routes never require it, also on a shared listener.
	ManagementToken string
	// MetricsRequireToken makes GET /metrics require ManagementToken too.
	MetricsRequireToken bool
	// Version is the server's version, which GET /v2 reports. Empty means
	// "dev".
	Version string
	// ModelAliases is model_aliases: names clients send (Converse's
	// modelId, a SageMaker endpoint name, an OpenAI model) that stand for a
	// registered model. Nil means none.
	ModelAliases map[string]string
}

// withDefaults returns c with zero fields filled in, or an error naming the
// first unusable field.
func (c Config) withDefaults() (Config, error) {
	var err error
	if c.InferenceAddr, err = cleanAddr("InferenceAddr", c.InferenceAddr); err != nil {
		return c, err
	}
	if c.ManagementAddr, err = cleanAddr("ManagementAddr", c.ManagementAddr); err != nil {
		return c, err
	}
	if err = c.fillNumbers(); err != nil {
		return c, err
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	if c.Registry == nil {
		c.Registry = prometheus.NewRegistry()
	}
	return c, nil
}

func (c *Config) fillNumbers() error {
	switch {
	case c.MaxRequestSize < 0:
		return fmt.Errorf("%w: MaxRequestSize %d is negative", ErrConfig, c.MaxRequestSize)
	case c.ThrottleCode != 0 && (c.ThrottleCode < 400 || c.ThrottleCode > 599):
		return fmt.Errorf("%w: ThrottleCode %d is not a 4xx or 5xx status", ErrConfig, c.ThrottleCode)
	case c.ShutdownTimeout < 0:
		return fmt.Errorf("%w: ShutdownTimeout %v is negative", ErrConfig, c.ShutdownTimeout)
	case c.MaxConnections < 0:
		return fmt.Errorf("%w: MaxConnections %d is negative", ErrConfig, c.MaxConnections)
	case c.ReadTimeout < 0 || c.IdleTimeout < 0:
		return fmt.Errorf("%w: ReadTimeout %v or IdleTimeout %v is negative", ErrConfig, c.ReadTimeout, c.IdleTimeout)
	}
	if c.MaxRequestSize == 0 {
		c.MaxRequestSize = DefaultMaxRequestSize
	}
	if c.ThrottleCode == 0 {
		c.ThrottleCode = DefaultThrottleCode
	}
	if c.ShutdownTimeout == 0 {
		c.ShutdownTimeout = DefaultShutdownTimeout
	}
	if c.ReadTimeout == 0 {
		c.ReadTimeout = DefaultReadTimeout
	}
	if c.IdleTimeout == 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	return nil
}

// cleanAddr strips an optional http:// prefix and a trailing slash.
func cleanAddr(field, addr string) (string, error) {
	addr = strings.TrimSuffix(strings.TrimPrefix(addr, "http://"), "/")
	if addr == "" {
		return "", fmt.Errorf("%w: %s is empty", ErrConfig, field)
	}
	if strings.Contains(addr, "://") {
		return "", fmt.Errorf("%w: %s %q: only plain http is served", ErrConfig, field, addr)
	}
	return addr, nil
}
