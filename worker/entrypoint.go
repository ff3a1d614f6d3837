package worker

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/properties"
)

// Environment variables DJL Serving reads when it works out a model's entry
// point: DJL_ENTRY_POINT names one for every model, SERVING_FEATURES says
// which LMI image it runs in (vllm, trtllm).
const (
	envEntryPoint = "DJL_ENTRY_POINT"
	envFeatures   = "SERVING_FEATURES"
)

// entryPoints are a model's --entry-point and --recommended-entry-point.
type entryPoints struct {
	entry, recommended string
}

// modelEntryPoints works a model's entry points out as DJL 0.36 does
// (PyModel.load): option.entryPoint, else DJL_ENTRY_POINT, else the
// folder's model.py; the recommended one only when neither of the first two
// is set. An empty value travels as "" on the command line.
func modelEntryPoints(cfg *properties.Model, env properties.Env) entryPoints {
	if cfg.EntryPoint != "" {
		return entryPoints{entry: cfg.EntryPoint}
	}
	if ep := env[envEntryPoint]; ep != "" {
		return entryPoints{entry: ep}
	}
	var ep entryPoints
	if isRegular(filepath.Join(cfg.Dir, "model.py")) {
		ep.entry = "model.py"
	}
	ep.recommended = recommendedEntryPoint(cfg, env)
	return ep
}

// recommendedEntryPoint is the DJL handler module DJL 0.36 suggests for a
// folder without a named entry point: scikit-learn for pickled models, the
// LMI backend of the image, else its Hugging Face handler when the model has
// a model_id or a config.json.
func recommendedEntryPoint(cfg *properties.Model, env properties.Env) string {
	switch features := env[envFeatures]; {
	case hasModelFile(cfg.Dir, ".skops", ".joblib", ".pkl", ".pickle", ".cloudpkl"):
		return "djl_python.sklearn_handler"
	case features == "trtllm":
		return "djl_python.lmi_trtllm.trtllm_async_service"
	case features == "vllm" && asyncMode(cfg):
		return "djl_python.lmi_vllm.vllm_async_service"
	case features == "vllm", cfg.Options["model_id"] != "", isRegular(filepath.Join(cfg.Dir, "config.json")):
		return "djl_python.huggingface"
	}
	return ""
}

// hasModelFile reports whether dir holds model<ext> for one of exts.
func hasModelFile(dir string, exts ...string) bool {
	for _, ext := range exts {
		if isRegular(filepath.Join(dir, "model"+ext)) {
			return true
		}
	}
	return false
}

func isRegular(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular()
}

// asyncMode reports option.async_mode, read as Java's Boolean.parseBoolean
// reads it: true only for "true" in any case.
func asyncMode(cfg *properties.Model) bool {
	return strings.EqualFold(cfg.Options["async_mode"], "true")
}

// workerLogLevel is the --log-level of the workers: the server's level, in
// lower case, "info" when it has none (DJL passes "debug" or "info").
func workerLogLevel(level string) string {
	if level == "" {
		return "info"
	}
	return strings.ToLower(level)
}

// asyncFlag is the last argument of a worker's command line.
func asyncFlag(async bool) string {
	if async {
		return "--async-mode"
	}
	return "--no-async-mode"
}

// commandLine is a worker's argument list after the interpreter: DJL 0.36's,
// argument for argument (Connection.getPythonStartCmd, the non-MPI case on
// a Unix socket), so that DJL's own djl_python_engine.py can be the engine.
func commandLine(s Spec, sock string) []string {
	return []string{s.Engine,
		"--sock-type", "unix",
		"--sock-name", sock,
		"--model-dir", s.ModelDir,
		"--entry-point", s.EntryPoint,
		"--device-id", strconv.Itoa(s.DeviceID),
		"--cluster-size", "1",
		"--recommended-entry-point", s.Recommended,
		"--log-level", workerLogLevel(s.LogLevel),
		asyncFlag(s.AsyncMode),
	}
}

// HandlerKey is the property that names the handler function a request is
// for.
const HandlerKey = "handler"

// defaultHandler is the handler function of a model that names none.
const defaultHandler = "handle"

// handlerProp is what a request frame adds to in's properties: the handler
// function, when in names none (nil in: a batch, whose own properties never
// do). DJL's front-end names it on every request, the initialization
// included, and DJL's engine calls getattr(module, handler) with it.
func (p *Process) handlerProp(in *batching.Input) []batching.Prop {
	if in != nil {
		for _, pr := range in.Props {
			if pr.Key == HandlerKey {
				return nil
			}
		}
	}
	return p.handler
}
