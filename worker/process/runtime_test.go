package process

import (
	"testing"

	"github.com/switchyard/switchyard/worker/pyruntime"
)

// unpackRuntime unpacks the embedded Python runtime into a folder of the
// test's own.
func unpackRuntime(tb testing.TB) pyruntime.Runtime {
	tb.Helper()
	rt, err := pyruntime.Unpack(tb.TempDir())
	if err != nil {
		tb.Fatal(err)
	}
	return rt
}
