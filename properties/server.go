package properties

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// Server defaults.
const (
	// DefaultInferenceAddress is the default of inference_address.
	DefaultInferenceAddress = "http://127.0.0.1:8080"
	// DefaultManagementAddress is the default of management_address.
	DefaultManagementAddress = "http://127.0.0.1:8084"
	// DefaultModelStore is the default of model_store.
	DefaultModelStore = "./models"
	// DefaultJobQueueSize is the default of job_queue_size.
	DefaultJobQueueSize = 1000
	// DefaultBatchSize is the default of batch_size.
	DefaultBatchSize = 1
	// DefaultMaxBatchDelay is the default of max_batch_delay.
	DefaultMaxBatchDelay = 100 * time.Millisecond
	// DefaultMaxIdleTime is the default of max_idle_time.
	DefaultMaxIdleTime = 60 * time.Second
	// DefaultMaxRequestSize is the default of max_request_size, in bytes.
	DefaultMaxRequestSize = 64 << 20
	// DefaultThrottleCode is the default of throttle_error_http_code.
	DefaultThrottleCode = 503
	// DefaultPythonExecutable is the default of python_executable.
	DefaultPythonExecutable = "python3"
	// DefaultShutdownGrace is the default of shutdown_grace_period.
	DefaultShutdownGrace = 30 * time.Second
	// DefaultRequestReadTimeout is the default of request_read_timeout.
	DefaultRequestReadTimeout = 60 * time.Second
	// DefaultConnectionIdleTimeout is the default of
	// connection_idle_timeout.
	DefaultConnectionIdleTimeout = 120 * time.Second
	// DefaultRetryThreshold is the default of retry_threshold.
	DefaultRetryThreshold = 3
	// DefaultMinResidenceTime is the default of min_residence_time: how
	// long a model that has just loaded is kept from eviction.
	DefaultMinResidenceTime = 2 * time.Second
)

// Server is the server's configuration: config.properties with defaults
// and SERVING_* environment overrides applied.
type Server struct {
	InferenceAddress  string     // inference_address: "http://host:port" or "host:port"
	ManagementAddress string     // management_address; equal to InferenceAddress means one listener
	ModelStore        string     // model_store, absolute
	LoadModels        []ModelRef // load_models: one All ref for ALL, none for NONE

	JobQueueSize  int           // job_queue_size: default for models
	BatchSize     int           // batch_size: default for models
	MaxBatchDelay time.Duration // max_batch_delay (ms): default for models
	MaxIdleTime   time.Duration // max_idle_time (s): default for models

	MaxRequestSize        int64         // max_request_size, bytes
	ThrottleErrorHTTPCode int           // throttle_error_http_code: status of a full queue
	SocketDir             string        // socket_dir, absolute
	PythonExecutable      string        // python_executable
	PythonEngine          string        // python_engine; "" is the built-in runtime
	ShutdownGrace         time.Duration // shutdown_grace_period (s)

	// Connections, on each listener.
	MaxConnections        int           // max_connections: open connections past which one is answered 503 and closed; 0 for no cap
	RequestReadTimeout    time.Duration // request_read_timeout (s): reading one request, from its first byte
	ConnectionIdleTimeout time.Duration // connection_idle_timeout (s): a keep-alive connection's wait for its next request

	RetryThreshold    int      // retry_threshold
	AllowedModelRoots []string // allowed_model_roots: folders POST /models may register from
	WaitModelLoading  bool     // wait_model_loading: /ping is 503 until the startup models have loaded
	AllowMultiStatus  bool     // allow_multi_status: /ping is 207 while a model is PENDING

	// Worker caps; 0 means derived from the host when the registry starts.
	MaxWorkersPerModel int // max_workers_per_model: the most workers one model may have
	MaxWorkersTotal    int // max_workers_total: the most workers all models together may have

	// Serving more models than fit.
	LoadOnDemand     bool          // load_on_demand: the startup models register unloaded and load on their first request
	MemoryBudgetMB   int64         // memory_budget_mb: host memory the models' workers may hold together; 0 for no budget
	MaxLoadedModels  int           // max_loaded_models: the most models with workers at once; 0 for no cap
	MinResidenceTime time.Duration // min_residence_time (s): a model that has just loaded is not evicted for this long

	ManagementToken     Secret // management_token: bearer token the management API requires; "" for none
	MetricsRequireToken bool   // metrics_require_token: GET /metrics requires the token too

	GOMAXPROCS int // gomaxprocs: the front-end's Go scheduler threads; 0 is auto (from the host and its workers)

	// ModelAliases (model_aliases) maps names the cloud uses (a Bedrock
	// modelId such as "global.anthropic.claude-sonnet-4-5-20250929-v1:0",
	// which no model folder can be named) to registered models; nil when
	// none. Empty when the key is unset.
	ModelAliases map[string]string

	Extra map[string]string // keys the server does not know, kept

	file string            // the config file; "" when none
	at   map[string]origin // where each key was written
}

// ModelRef is one entry of load_models. All stands for every folder of
// Path, the model store; otherwise Name is the model's name and Path its
// absolute folder.
type ModelRef struct {
	Name string
	Path string
	All  bool
}

// DefaultServer returns the configuration used when there is no file and
// no environment: every key at its default, paths relative to the working
// directory.
func DefaultServer() *Server {
	s := defaultServer()
	// Only a malformed load_models list makes resolve fail, and ALL is not.
	_ = s.resolve(workDir(), serverStrings{loadModels: "ALL"}, nil)
	return s
}

func defaultServer() *Server {
	return &Server{
		InferenceAddress: DefaultInferenceAddress, ManagementAddress: DefaultManagementAddress,
		ModelStore: DefaultModelStore, JobQueueSize: DefaultJobQueueSize,
		BatchSize: DefaultBatchSize, MaxBatchDelay: DefaultMaxBatchDelay,
		MaxIdleTime: DefaultMaxIdleTime, MaxRequestSize: DefaultMaxRequestSize,
		ThrottleErrorHTTPCode: DefaultThrottleCode, SocketDir: os.TempDir(),
		PythonExecutable: DefaultPythonExecutable, ShutdownGrace: DefaultShutdownGrace,
		RequestReadTimeout: DefaultRequestReadTimeout, ConnectionIdleTimeout: DefaultConnectionIdleTimeout,
		RetryThreshold: DefaultRetryThreshold, WaitModelLoading: true, MinResidenceTime: DefaultMinResidenceTime,
		Extra: map[string]string{},
	}
}

// serverStrings holds the raw keys that are resolved after decoding.
type serverStrings struct {
	loadModels   string
	allowedRoots string
	gomaxprocs   string
	modelAliases string
}

// LoadServer reads the config.properties at path ("" for none) on top of
// the defaults, lets each SERVING_<KEY> variable of env replace the value
// of <key>, and validates the result. Relative paths from the file and
// from the defaults are taken from the file's folder; those from the
// environment, and all of them when there is no file, from the working
// directory.
func LoadServer(path string, env Env) (*Server, error) {
	s := defaultServer()
	raw, err := serverSettings(path)
	if err != nil {
		return nil, err
	}
	raw.applyServingEnv(env, s.typedKeys())
	strs := serverStrings{loadModels: "ALL"}
	if err := raw.decode(s.fields(&strs)); err != nil {
		return nil, err
	}
	s.keepExtra(raw)
	s.at, s.file = raw.origins(), raw.file
	if err := s.resolve(s.baseDir(), strs, s.at); err != nil {
		return nil, err
	}
	if err := s.Validate(); err != nil {
		return nil, locate(err, s.file, s.at)
	}
	return s, nil
}

// serverSettings reads the file at path, or returns an empty set when path
// is "".
func serverSettings(path string) (*settings, error) {
	if path == "" {
		return &settings{vals: map[string]setting{}}, nil
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("properties: %s: %w", path, err)
	}
	return readSettings(abs, false)
}

// fields is the table of s's typed keys; strs receives the raw values of
// the keys resolved later.
func (s *Server) fields(strs *serverStrings) []field {
	return []field{
		stringField("inference_address", &s.InferenceAddress),
		stringField("management_address", &s.ManagementAddress),
		stringField("model_store", &s.ModelStore),
		stringField("load_models", &strs.loadModels),
		intField("job_queue_size", &s.JobQueueSize),
		intField("batch_size", &s.BatchSize),
		durationField("max_batch_delay", &s.MaxBatchDelay, time.Millisecond),
		durationField("max_idle_time", &s.MaxIdleTime, time.Second),
		int64Field("max_request_size", &s.MaxRequestSize),
		intField("throttle_error_http_code", &s.ThrottleErrorHTTPCode),
		stringField("socket_dir", &s.SocketDir),
		stringField("python_executable", &s.PythonExecutable),
		stringField("python_engine", &s.PythonEngine),
		durationField("shutdown_grace_period", &s.ShutdownGrace, time.Second),
		intField("max_connections", &s.MaxConnections),
		durationField("request_read_timeout", &s.RequestReadTimeout, time.Second),
		durationField("connection_idle_timeout", &s.ConnectionIdleTimeout, time.Second),
		intField("retry_threshold", &s.RetryThreshold),
		stringField("allowed_model_roots", &strs.allowedRoots),
		intField("max_workers_per_model", &s.MaxWorkersPerModel),
		intField("max_workers_total", &s.MaxWorkersTotal),
		secretField("management_token", &s.ManagementToken),
		boolField("metrics_require_token", &s.MetricsRequireToken),
		boolField("wait_model_loading", &s.WaitModelLoading),
		boolField("allow_multi_status", &s.AllowMultiStatus),
		boolField("load_on_demand", &s.LoadOnDemand),
		int64Field("memory_budget_mb", &s.MemoryBudgetMB),
		intField("max_loaded_models", &s.MaxLoadedModels),
		durationField("min_residence_time", &s.MinResidenceTime, time.Second),
		stringField("gomaxprocs", &strs.gomaxprocs),
		stringField("model_aliases", &strs.modelAliases),
	}
}

func (s *Server) typedKeys() []string {
	var keys []string
	for _, f := range s.fields(&serverStrings{}) {
		keys = append(keys, f.key)
	}
	return keys
}

// keepExtra stores the keys that have no typed field.
func (s *Server) keepExtra(raw *settings) {
	typed := map[string]bool{}
	for _, k := range s.typedKeys() {
		typed[k] = true
	}
	for _, k := range raw.keys() {
		if !typed[k] {
			v, _ := raw.get(k)
			s.Extra[k] = v.value
		}
	}
}

// baseDir is the folder relative paths of the file are taken from.
func (s *Server) baseDir() string {
	if s.file == "" {
		return workDir()
	}
	return filepath.Dir(s.file)
}

func workDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return string(filepath.Separator)
	}
	return wd
}

// pathBase returns the folder a relative value of key is taken from: the
// working directory when the environment set it, else base.
func pathBase(key, base string, at map[string]origin) string {
	if at[key].env != "" {
		return workDir()
	}
	return base
}

// resolve makes the paths absolute and decodes load_models and
// allowed_model_roots, which depend on the model store.
func (s *Server) resolve(base string, strs serverStrings, at map[string]origin) error {
	s.ModelStore = absPath(pathBase("model_store", base, at), s.ModelStore)
	s.SocketDir = absPath(pathBase("socket_dir", base, at), s.SocketDir)
	s.PythonEngine = absPath(pathBase("python_engine", base, at), s.PythonEngine)
	if strings.ContainsRune(s.PythonExecutable, filepath.Separator) {
		s.PythonExecutable = absPath(pathBase("python_executable", base, at), s.PythonExecutable)
	}
	refs, err := parseLoadModels(strs.loadModels, s.ModelStore)
	if err != nil {
		return withOrigin(at, "load_models", err)
	}
	s.LoadModels = refs
	if s.GOMAXPROCS, err = parseProcs(strs.gomaxprocs); err != nil {
		return withOrigin(at, "gomaxprocs", err)
	}
	s.AllowedModelRoots = parseRoots(strs.allowedRoots, pathBase("allowed_model_roots", base, at), s.ModelStore)
	if s.ModelAliases, err = parseAliases(strs.modelAliases); err != nil {
		return withOrigin(at, "model_aliases", err)
	}
	return nil
}

// maxAlias bounds an alias: a Bedrock model ARN fits with room to spare.
const maxAlias = 2048

// parseAliases reads model_aliases: a comma list of alias=model. The alias
// is what a client sends (any printable characters but ',' and white space;
// ':' and '/' included, as Bedrock's model ids and ARNs have them) and is
// cut at its last '='; the model is a model name. An alias listed twice is
// refused; nil for an empty list.
func parseAliases(raw string) (map[string]string, error) {
	var out map[string]string
	for _, item := range strings.Split(raw, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		i := strings.LastIndexByte(item, '=')
		if i < 0 {
			return nil, fmt.Errorf("%q is not alias=model", item)
		}
		alias, model := strings.TrimSpace(item[:i]), strings.TrimSpace(item[i+1:])
		switch {
		case alias == "" || len(alias) > maxAlias || strings.IndexFunc(alias, notAliasRune) >= 0:
			return nil, fmt.Errorf("%q is not an alias: use 1 to %d printable characters without spaces or commas", alias, maxAlias)
		case !modelName(model):
			return nil, fmt.Errorf("%q (the model of alias %q) is not a model name: use 1 to 64 letters, digits, '-', '_' or '.'", model, alias)
		case out[alias] != "":
			return nil, fmt.Errorf("alias %q is listed twice", alias)
		}
		if out == nil {
			out = map[string]string{}
		}
		out[alias] = model
	}
	return out, nil
}

func notAliasRune(r rune) bool { return r <= ' ' || r == 0x7f || r == ',' }

// modelName reports whether name is a model name: 1 to 64 ASCII letters,
// digits, '-', '_' or '.', and not "." or "..".
func modelName(name string) bool {
	if name == "" || len(name) > 64 || name == "." || name == ".." {
		return false
	}
	for _, c := range []byte(name) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			return false
		}
	}
	return true
}

// withOrigin turns err into an ErrInvalid *Error at key's origin.
func withOrigin(at map[string]origin, key string, err error) error {
	return at[key].errorf(key, ErrInvalid, "%v", err)
}

// AutoProcs is the value of gomaxprocs that leaves the choice to the
// server (as leaving the key out does).
const AutoProcs = "auto"

// parseProcs reads gomaxprocs: "" or auto is 0, else a whole number of at
// least 1.
func parseProcs(raw string) (int, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" || strings.EqualFold(raw, AutoProcs) {
		return 0, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%q is neither %s nor a whole number of at least 1", raw, AutoProcs)
	}
	return n, nil
}

// parseRoots splits a comma list of folders; an empty list is [store].
func parseRoots(raw, base, store string) []string {
	var roots []string
	for _, r := range strings.Split(raw, ",") {
		if r = strings.TrimSpace(r); r != "" {
			roots = append(roots, absPath(base, r))
		}
	}
	if len(roots) == 0 {
		return []string{store}
	}
	return roots
}
