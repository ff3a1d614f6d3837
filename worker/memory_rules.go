package worker

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/switchyard/switchyard/properties"
)

// memoryNeeds is what one worker of a model needs, in MiB, by DJL's rules
// (ModelInfo.checkAvailableMemory): the host check always runs, with
// required_memory_mb (0 by default) and reserved_memory_mb; on a GPU,
// gpu.required_memory_mb and gpu.reserved_memory_mb replace them where set
// above 0.
type memoryNeeds struct {
	hostRequired, hostReserved int64
	gpuRequired, gpuReserved   int64
	estimated                  bool // hostRequired is the SageMaker multi-model estimate
}

// sageMakerMultiModel is the variable SageMaker sets on a multi-model
// endpoint.
const sageMakerMultiModel = "SAGEMAKER_MULTI_MODEL"

// needsOf works out a model's memory needs. On a SageMaker multi-model
// endpoint, a model that sets no required_memory_mb and no tensor-parallel
// degree is estimated, as DJL does, at 1.2 times the size of the files in
// its folder.
func needsOf(cfg *properties.Model, env properties.Env) memoryNeeds {
	n := memoryNeeds{hostRequired: cfg.RequiredMemoryMB, hostReserved: cfg.ReservedMemoryMB}
	if n.hostRequired <= 0 && env[sageMakerMultiModel] == "true" && !tensorParallel(cfg, env) {
		n.hostRequired, n.estimated = estimateMiB(folderBytes(cfg.Dir)), true
	}
	n.gpuRequired, n.gpuReserved = n.hostRequired, n.hostReserved
	if cfg.GPURequiredMemoryMB > 0 {
		n.gpuRequired = cfg.GPURequiredMemoryMB
	}
	if cfg.IsSet("gpu.reserved_memory_mb") && cfg.GPUReservedMemoryMB > 0 {
		n.gpuReserved = cfg.GPUReservedMemoryMB
	}
	return n
}

// tensorParallel reports whether the model sets a tensor-parallel degree
// of at least 1 (option.tensor_parallel_degree, else TENSOR_PARALLEL_DEGREE;
// "max" counts).
func tensorParallel(cfg *properties.Model, env properties.Env) bool {
	v, ok := cfg.Options["tensor_parallel_degree"]
	if !ok {
		v = env["TENSOR_PARALLEL_DEGREE"]
	}
	v = strings.TrimSpace(v)
	n, err := strconv.Atoi(v)
	return v == "max" || err == nil && n >= 1
}

// estimateMiB is 1.2 times size bytes, in MiB, rounded up.
func estimateMiB(size int64) int64 {
	return (size*12/10 + mib - 1) / mib
}

// folderBytes adds up the sizes of the files below dir, following links to
// files but not to folders.
func folderBytes(dir string) int64 {
	var total int64
	_ = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return nil
		}
		if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
			total += fi.Size()
		}
		return nil
	})
	return total
}
