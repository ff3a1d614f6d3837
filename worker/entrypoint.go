package worker

import (
	"os"
	"path/filepath"
	"strings"

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
