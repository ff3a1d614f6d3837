package docker

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the run when a test leaves a goroutine behind (the
// servers' wait and output-copy goroutines included).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
