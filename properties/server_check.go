package properties

import (
	"errors"
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
)

// maxSocketPath is the longest Unix socket path Linux accepts (108 bytes
// with the terminating NUL); socketName is what a worker's socket adds to
// socket_dir, with room for a long counter.
const (
	maxSocketPath = 107
	socketName    = "/switchyard.sock.1234567890"
)

// Validate checks s's values and returns an ErrInvalid *Error about the
// first bad one. LoadServer adds the file and line of that key to it.
func (s *Server) Validate() error {
	return firstError(
		checkAddress("inference_address", s.InferenceAddress),
		checkAddress("management_address", s.ManagementAddress),
		notEmpty("model_store", s.ModelStore),
		checkRefs(s.LoadModels),
		atLeast("job_queue_size", int64(s.JobQueueSize), 1),
		atLeast("batch_size", int64(s.BatchSize), 1),
		notNegative("max_batch_delay", s.MaxBatchDelay),
		notNegative("max_idle_time", s.MaxIdleTime),
		atLeast("max_request_size", s.MaxRequestSize, 1),
		checkThrottle(s.ThrottleErrorHTTPCode),
		checkSocketDir(s.SocketDir),
		notEmpty("python_executable", s.PythonExecutable),
		notNegative("shutdown_grace_period", s.ShutdownGrace),
		atLeast("max_connections", int64(s.MaxConnections), 0),
		positive("request_read_timeout", s.RequestReadTimeout),
		positive("connection_idle_timeout", s.ConnectionIdleTimeout),
		atLeast("retry_threshold", int64(s.RetryThreshold), 0),
		checkRoots(s.AllowedModelRoots),
		atLeast("max_workers_per_model", int64(s.MaxWorkersPerModel), 0),
		atLeast("max_workers_total", int64(s.MaxWorkersTotal), 0),
		checkCaps(s.MaxWorkersPerModel, s.MaxWorkersTotal),
		checkToken(s.ManagementToken),
		atLeast("memory_budget_mb", s.MemoryBudgetMB, 0),
		atLeast("max_loaded_models", int64(s.MaxLoadedModels), 0),
		notNegative("min_residence_time", s.MinResidenceTime),
		atLeast("gomaxprocs", int64(s.GOMAXPROCS), 0),
	)
}

// checkCaps refuses a per-model cap above the total one when both are set.
func checkCaps(perModel, total int) error {
	if perModel > 0 && total > 0 && perModel > total {
		return invalidf("max_workers_per_model", "%d is more than max_workers_total %d", perModel, total)
	}
	return nil
}

// checkToken accepts a token of visible ASCII characters (RFC 6750's
// b64token and more), which a client can send in an Authorization header.
// The message never shows the token.
func checkToken(token Secret) error {
	for _, c := range []byte(token.Reveal()) {
		if c <= ' ' || c >= 0x7f {
			return invalidf("management_token", "holds a space, a control character or a non-ASCII byte")
		}
	}
	return nil
}

func checkAddress(key, addr string) error {
	if _, err := listenAddress(addr); err != nil {
		return invalidf(key, "%v", err)
	}
	return nil
}

func checkThrottle(code int) error {
	if code < 400 || code > 599 {
		return invalidf("throttle_error_http_code", "%d is not a 4xx or 5xx status", code)
	}
	return nil
}

func checkSocketDir(dir string) error {
	if err := notEmpty("socket_dir", dir); err != nil {
		return err
	}
	if len(dir)+len(socketName) > maxSocketPath {
		return invalidf("socket_dir", "%s is too long for Unix socket paths (at most %d bytes)",
			quote(dir), maxSocketPath-len(socketName))
	}
	return nil
}

func checkRoots(roots []string) error {
	for _, r := range roots {
		if !filepath.IsAbs(r) {
			return invalidf("allowed_model_roots", "%s is not an absolute path", quote(r))
		}
	}
	return nil
}

func checkRefs(refs []ModelRef) error {
	seen := map[string]bool{}
	all := false
	for _, r := range refs {
		switch {
		case r.All && all:
			return invalidf("load_models", "ALL is listed twice")
		case r.All:
			all = true
			continue
		case r.Name == "" || strings.ContainsRune(r.Name, '/'):
			return invalidf("load_models", "%s is not a valid model name", quote(r.Name))
		case !filepath.IsAbs(r.Path):
			return invalidf("load_models", "%s is not an absolute path", quote(r.Path))
		case seen[r.Name]:
			return invalidf("load_models", "model name %s is listed twice", quote(r.Name))
		}
		seen[r.Name] = true
	}
	return nil
}

// parseLoadModels reads load_models: NONE (or empty), or a comma list whose
// entries are ALL (every folder of the model store) or [name=]path with
// paths taken from the model store; "ALL,x=path" is the store plus x.
func parseLoadModels(raw, store string) ([]ModelRef, error) {
	if raw = strings.TrimSpace(raw); raw == "" || strings.EqualFold(raw, "NONE") {
		return nil, nil
	}
	var refs []ModelRef
	for _, item := range strings.Split(raw, ",") {
		item = strings.TrimSpace(item)
		switch {
		case item == "":
			continue
		case strings.EqualFold(item, "ALL"):
			refs = append(refs, ModelRef{All: true, Path: store})
			continue
		case strings.EqualFold(item, "NONE"):
			return nil, errors.New("NONE cannot be combined with other entries")
		}
		ref, err := parseModelRef(item, store)
		if err != nil {
			return nil, err
		}
		refs = append(refs, ref)
	}
	return refs, nil
}

func parseModelRef(item, store string) (ModelRef, error) {
	name, path, named := strings.Cut(item, "=")
	if !named {
		path = item
	}
	name, path = strings.TrimSpace(name), strings.TrimSpace(path)
	if path == "" || (named && name == "") {
		return ModelRef{}, fmt.Errorf("%s is not [name=]path", quote(item))
	}
	path = absPath(store, path)
	if !named {
		name = filepath.Base(path)
	}
	return ModelRef{Name: name, Path: path}, nil
}

// InferenceListen returns the host:port the inference listener binds.
func (s *Server) InferenceListen() (string, error) { return listenAddress(s.InferenceAddress) }

// ManagementListen returns the host:port the management listener binds.
func (s *Server) ManagementListen() (string, error) { return listenAddress(s.ManagementAddress) }

// SharedListener reports whether the inference and management addresses
// are the same, so that one listener serves both APIs.
func (s *Server) SharedListener() bool {
	inf, err1 := s.InferenceListen()
	mgmt, err2 := s.ManagementListen()
	return err1 == nil && err2 == nil && inf == mgmt
}

var errHTTPOnly = errors.New("only http:// addresses are supported")

// listenAddress turns "http://host[:port][/]" or "host:port" into the
// host:port to listen on. An http URL without a port listens on 80.
func listenAddress(addr string) (string, error) {
	if !strings.Contains(addr, "://") {
		return hostPort(addr)
	}
	u, err := url.Parse(addr)
	if err != nil {
		return "", fmt.Errorf("%s is not a URL: %w", quote(addr), err)
	}
	if !strings.EqualFold(u.Scheme, "http") {
		return "", fmt.Errorf("%s: %w", quote(addr), errHTTPOnly)
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return "", fmt.Errorf("%s has more than a host and port", quote(addr))
	}
	port := u.Port()
	if port == "" {
		port = "80"
	}
	return hostPort(net.JoinHostPort(u.Hostname(), port))
}

// hostPort checks a host:port and returns it in net.JoinHostPort form.
func hostPort(addr string) (string, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("%s is not host:port or http://host:port", quote(addr))
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil {
		return "", fmt.Errorf("%s: port %s is not a number from 0 to 65535", quote(addr), quote(port))
	}
	return net.JoinHostPort(host, strconv.FormatUint(n, 10)), nil
}
