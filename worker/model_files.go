package worker

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/properties"
)

// handlerFile is the handler module a model folder holds by default.
const handlerFile = "model.py"

// checkFiles checks the files of a model folder that the server reads
// (serving.properties, requirements.txt) or has its workers import
// (model.py) before anything reads them or starts: each must be a regular
// file after its links are resolved, so that neither the server nor a
// worker reads /dev/zero or waits forever on a named pipe, and the first
// two at most properties.MaxFileSize bytes. For a model registered through
// the API, none may link out of the allowed model roots. An absent file is
// fine. Errors are 400s.
func (r *Registry) checkFiles(dir string, startup bool) error {
	for _, f := range []struct {
		name  string
		limit int64
	}{{properties.ModelFile, properties.MaxFileSize}, {requirementsFile, properties.MaxFileSize}, {handlerFile, math.MaxInt64}} {
		if err := r.checkFile(dir, f.name, f.limit, startup); err != nil {
			return err
		}
	}
	return nil
}

// checkHandler checks the file option.entryPoint names, when it names a
// Python file of the folder, as checkFiles checks model.py.
func (r *Registry) checkHandler(cfg *properties.Model, startup bool) error {
	ep := cfg.EntryPoint
	if !strings.HasSuffix(ep, ".py") || ep == handlerFile {
		return nil
	}
	return r.checkFile(cfg.Dir, ep, math.MaxInt64, startup)
}

// checkFile checks that name, in dir, stays in the allowed roots (unless
// startup) and is a regular file of at most limit bytes; it is fine when
// nothing is there.
func (r *Registry) checkFile(dir, name string, limit int64, startup bool) error {
	path := filepath.Join(dir, name)
	if _, err := os.Lstat(path); err != nil {
		return nil
	}
	if real, err := filepath.EvalSymlinks(path); err == nil && !startup && !r.inRoots(real) {
		return fmt.Errorf("%w: model folder %s: %s links outside the allowed model roots", api.ErrBadRequest, filepath.Base(dir), api.Quote(name))
	}
	if err := properties.CheckRegularFile(path, limit); err != nil {
		return fmt.Errorf("%w: %w", api.ErrBadRequest, err)
	}
	return nil
}
