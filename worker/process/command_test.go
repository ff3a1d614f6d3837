package process

import "testing"

func TestWorkerLogLevel(t *testing.T) {
	for in, want := range map[string]string{"": "info", "info": "info", "DEBUG": "debug", "warn": "warn"} {
		if got := workerLogLevel(in); got != want {
			t.Errorf("workerLogLevel(%q) = %q, want %q", in, got, want)
		}
	}
}
