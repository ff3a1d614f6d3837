package process

import (
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	if os.Getenv(fakeWorkerEnv) != "" {
		os.Exit(fakeMain(os.Args[1:]))
	}
	goleak.VerifyTestMain(m)
}
