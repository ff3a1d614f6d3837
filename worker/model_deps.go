package worker

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"
)

// Requirements of a model folder.
const (
	requirementsFile = "requirements.txt"
	wheelsDir        = "wheels"
	pipTimeout       = 10 * time.Minute
	pipTailLines     = 12
)

// needsInstall reports whether the model folder has a requirements.txt
// that is not installed yet (pip will run before its first worker).
func (m *Model) needsInstall() bool {
	if _, err := os.Stat(filepath.Join(m.cfg.Dir, requirementsFile)); err != nil {
		return false
	}
	key, err := depsKey(m.cfg.Dir)
	if err != nil {
		return true // prepareDeps reports the error
	}
	_, err = os.Stat(filepath.Join(m.reg.depsRoot(), m.name+"-"+key, ".complete"))
	return err != nil
}

// prepareDeps installs the model folder's requirements.txt with pip into a
// folder of its own, once per content of the requirements and wheels, and
// puts that folder on the workers' path. A failed install fails the load
// with pip's last lines.
func (m *Model) prepareDeps() error {
	req := filepath.Join(m.cfg.Dir, requirementsFile)
	if _, err := os.Stat(req); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	key, err := depsKey(m.cfg.Dir)
	if err != nil {
		return fmt.Errorf("worker: model %s: %w", m.name, err)
	}
	target := filepath.Join(m.reg.depsRoot(), m.name+"-"+key)
	if _, err := os.Stat(filepath.Join(target, ".complete")); err == nil {
		m.deps.Store(&target)
		return nil
	}
	if err := m.pipInstall(req, target); err != nil {
		return err
	}
	m.deps.Store(&target)
	return nil
}

// pipInstall runs pip into a temporary folder and renames it into place.
func (m *Model) pipInstall(req, target string) error {
	tmp := target + ".tmp"
	_ = os.RemoveAll(tmp)
	args := []string{"install", "--disable-pip-version-check", "--no-input", "--target", tmp, "-r", req}
	if fi, err := os.Stat(filepath.Join(m.cfg.Dir, wheelsDir)); err == nil && fi.IsDir() {
		args = append(args, "--no-index", "--find-links", filepath.Join(m.cfg.Dir, wheelsDir))
	}
	ctx, cancel := context.WithTimeout(m.ctx, pipTimeout)
	defer cancel()
	m.reg.log.Info("installing requirements", zap.String("model", m.name), zap.Strings("args", args))
	if out, err := m.reg.cfg.Pip(ctx, m.cfg.PythonExecutable, m.cfg.Dir, args); err != nil {
		_ = os.RemoveAll(tmp)
		return fmt.Errorf("worker: model %s: pip install -r requirements.txt failed (%w):\n%s", m.name, err, lastLines(string(out), pipTailLines))
	}
	if err := os.WriteFile(filepath.Join(tmp, ".complete"), nil, 0o644); err != nil {
		return err
	}
	_ = os.RemoveAll(target)
	return os.Rename(tmp, target)
}

// depsKey hashes requirements.txt and the names and sizes of the wheels.
func depsKey(dir string) (string, error) {
	h := sha256.New()
	f, err := os.Open(filepath.Join(dir, requirementsFile))
	if err != nil {
		return "", err
	}
	defer f.Close()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	wheels, _ := os.ReadDir(filepath.Join(dir, wheelsDir))
	for _, w := range wheels {
		if info, err := w.Info(); err == nil {
			fmt.Fprintf(h, "\n%s %d", w.Name(), info.Size())
		}
	}
	return hex.EncodeToString(h.Sum(nil))[:16], nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// extraPath is what the model adds to its workers' PYTHONPATH.
func (m *Model) extraPath() []string {
	if deps := m.deps.Load(); deps != nil {
		return []string{*deps}
	}
	return nil
}

// runPip runs "python -m pip args..." in dir and returns its output.
func runPip(ctx context.Context, python, dir string, args []string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, python, append([]string{"-m", "pip"}, args...)...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.Bytes(), err
}
