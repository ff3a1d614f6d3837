package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"

	"github.com/switchyard/switchyard/frontend"
	"github.com/switchyard/switchyard/gpu"
	"github.com/switchyard/switchyard/properties"
	"github.com/switchyard/switchyard/pyruntime"
	"github.com/switchyard/switchyard/worker"
	"github.com/switchyard/switchyard/worker/process"
)

// serve runs the server until SIGINT or SIGTERM.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	srv, level, err := serverConfig(args, stdout, stderr, properties.OSEnv())
	if err != nil {
		return err
	}
	log, err := newLogger(stderr, level)
	if err != nil {
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	defer func() { _ = log.Sync() }()
	setMemoryLimit(os.Getenv, log)
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()
	// The first signal starts a graceful shutdown; a second one gets the
	// default action and ends the process at once (its workers die with it).
	context.AfterFunc(ctx, stop)
	if err := serveWith(ctx, srv, level, log); err != nil {
		log.Error("server stopped", zap.Error(err))
		return err
	}
	return nil
}

// serveFlags are serve's flags that set a config.properties key; each
// stands for the $SERVING_<KEY> variable of its key.
var serveFlags = []struct{ flag, key, usage string }{
	{"model-store", "model_store", "`folder` of model folders"},
	{"models", "load_models", "`list` of models to load at start: ALL, NONE, or comma-separated entries, each ALL or [name=]path"},
	{"inference-address", "inference_address", "inference listener `address`, e.g. http://127.0.0.1:8080"},
	{"management-address", "management_address", "management listener `address`, e.g. http://127.0.0.1:8084"},
	{"allowed-model-roots", "allowed_model_roots", "comma list of `folders` POST /models may register from; default: the model store"},
	{"python", "python_executable", "`interpreter` the workers run, e.g. /usr/bin/python3; default: python3"},
	{"python-engine", "python_engine", "engine `script` the workers run instead of the built-in one, e.g. DJL's djl_python_engine.py"},
	{"socket-dir", "socket_dir", "`folder` of the workers' Unix sockets, one per server; default: the temp dir"},
}

const serveSummary = `Serves the model folders of a model store. Settings come from
config.properties (--config), then $SERVING_<KEY> environment variables, then
these flags; each flag names the key it sets.`

// serverConfig reads config.properties with the flags applied as the
// SERVING_* overrides they stand for, so flags win over the environment,
// which wins over the file. An error about a value a flag gave names the
// flag.
func serverConfig(args []string, stdout, stderr io.Writer, env properties.Env) (*properties.Server, string, error) {
	fs := newFlagSet("serve", "[flags]", serveSummary)
	config := fs.String("config", "", "config.properties `file` to read")
	level := fs.String("log-level", "info", "log `level`: debug, info, warn or error")
	values := make([]*string, len(serveFlags))
	for i, f := range serveFlags {
		values[i] = fs.String(f.flag, "", f.usage+" ("+f.key+")")
	}
	if err := parseFlags(fs, args, stdout, stderr); err != nil {
		return nil, "", err
	}
	if fs.NArg() > 0 {
		return nil, "", fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	merged := properties.Env{}
	for k, v := range env {
		merged[k] = v
	}
	given := map[string]string{} // variable -> the flag that set it
	for i, f := range serveFlags {
		if *values[i] != "" {
			v := properties.ServingEnvName(f.key)
			merged[v], given[v] = *values[i], "--"+f.flag
		}
	}
	srv, err := properties.LoadServer(*config, merged)
	if err != nil {
		return nil, "", blameFlag(err, given)
	}
	return srv, *level, nil
}

// blameFlag makes an error about a value that came from a flag name that
// flag (and count as a usage error) instead of the variable the flag was
// passed on as, which the user never set.
func blameFlag(err error, given map[string]string) error {
	var e *properties.Error
	if !errors.As(err, &e) || given[e.Env] == "" {
		return err
	}
	e.Flag, e.Env = given[e.Env], ""
	return fmt.Errorf("%w: %w", errUsage, err)
}

// serveWith wires the parts and runs them until ctx ends: the HTTP
// front-end and the model registry are the two members of one errgroup.
func serveWith(ctx context.Context, srv *properties.Server, level string, log *zap.Logger) error {
	engine, pypath, err := workerEngine(srv)
	if err != nil {
		return err
	}
	info := gpu.New(log)
	defer func() { _ = info.Close() }()
	metrics := prometheus.NewRegistry()
	metrics.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	reg, err := worker.NewRegistry(worker.Config{
		Server: srv, Env: properties.OSEnv(), Engine: engine, PythonPath: pypath, GPU: info,
		Logger: log, Registerer: metrics, LogLevel: level, CacheDir: pyruntime.DefaultCacheDir(),
	})
	if err != nil {
		return err
	}
	caps := reg.Caps()
	log.Info("worker caps", zap.Int("max_workers_per_model", caps.PerModel), zap.Int("max_workers_total", caps.Total))
	if n, err := process.CleanStaleSockets(srv.SocketDir); err != nil || n > 0 {
		log.Info("stale worker sockets removed", zap.Int("count", n), zap.Error(err))
	}
	fe, err := newFrontend(srv, reg, metrics, log)
	if err != nil {
		return err
	}
	if err := fe.Listen(); err != nil {
		return err
	}
	log.Info("switchyard listening", zap.String("version", versionString()), zap.String("inference", fe.InferenceAddr()), zap.String("management", fe.ManagementAddr()))
	if err := reg.LoadStartup(srv.LoadModels); err != nil {
		return err
	}
	setGOMAXPROCS(os.Getenv, srv.GOMAXPROCS, startWorkers(reg), log)
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return fe.Serve(gctx) })
	g.Go(func() error { return shutdownAfter(gctx, reg, srv.ShutdownGrace, log) })
	return g.Wait()
}

// shutdownAfter waits for ctx to end, then stops the registry within grace.
func shutdownAfter(ctx context.Context, reg *worker.Registry, grace time.Duration, log *zap.Logger) error {
	<-ctx.Done()
	log.Info("shutting down", zap.Duration("grace", grace))
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	return reg.Shutdown(sctx)
}

// answerMargin is how much longer than the registry the listeners wait at
// shutdown: when the grace period ends, the registry cuts off the requests
// still running and answers them 503, and the listeners get this long to
// write those answers before they close the connections.
const answerMargin = time.Second

func newFrontend(srv *properties.Server, reg *worker.Registry, metrics *prometheus.Registry, log *zap.Logger) (*frontend.Server, error) {
	inf, err := srv.InferenceListen()
	if err != nil {
		return nil, err
	}
	mgmt, err := srv.ManagementListen()
	if err != nil {
		return nil, err
	}
	return frontend.New(frontend.Config{
		InferenceAddr: inf, ManagementAddr: mgmt,
		MaxRequestSize: int(srv.MaxRequestSize), ThrottleCode: srv.ThrottleErrorHTTPCode,
		ShutdownTimeout: srv.ShutdownGrace + answerMargin, Logger: log, Registry: metrics,
		ManagementToken: srv.ManagementToken.Reveal(), MetricsRequireToken: srv.MetricsRequireToken,
		NoWaitModelLoading: !srv.WaitModelLoading, AllowMultiStatus: srv.AllowMultiStatus,
		ModelAliases: srv.ModelAliases, Version: versionString(),
		MaxConnections: srv.MaxConnections, ReadTimeout: srv.RequestReadTimeout, IdleTimeout: srv.ConnectionIdleTimeout,
	}, reg)
}

// workerEngine returns the engine script the workers run and the folders
// their PYTHONPATH starts with: python_engine when set (DJL's
// djl_python_engine.py, say), else the built-in runtime unpacked to the cache.
func workerEngine(srv *properties.Server) (string, []string, error) {
	if srv.PythonEngine != "" {
		return srv.PythonEngine, []string{filepath.Dir(srv.PythonEngine)}, nil
	}
	rt, err := pyruntime.Unpack(pyruntime.DefaultCacheDir())
	if err != nil {
		return "", nil, err
	}
	return rt.Engine, []string{rt.PythonPath}, nil
}
