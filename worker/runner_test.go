package worker

import (
	"context"
	"errors"
	"testing"

	"github.com/switchyard/switchyard/internal/testutil"
	"github.com/switchyard/switchyard/worker/process"
)

// TestStartProcessFails: the default start function hands back a start's
// error with a nil Runner, not a nil *process.Process inside the interface
// (which a caller would take for a process).
func TestStartProcessFails(t *testing.T) {
	r, err := startProcess(context.Background(), process.Spec{
		Model: "m", ModelDir: t.TempDir(), Python: "/nonexistent/python3", Engine: "engine.py", SocketDir: testutil.ShortDir(t),
	})
	var se *process.StartError
	if r != nil || !errors.As(err, &se) || !errors.Is(err, process.ErrLoad) {
		t.Errorf("startProcess = %v, %v; want a nil Runner and a StartError wrapping ErrLoad", r, err)
	}
}
