package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"slices"
	"testing"
)

// TestStartHello runs "loadgen hello" as a real subprocess (this test
// binary in helper mode), asks it for hello and stops it.
func TestStartHello(t *testing.T) {
	t.Setenv(helperEnv, "1")
	t.Setenv("GOMAXPROCS", "1")
	h, err := startHello(context.Background(), os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.Post("http://"+h.addr+"/anything", "application/json", nil)
	if err != nil {
		h.stop()
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || string(body) != "hello" {
		t.Errorf("hello answered %d %q", resp.StatusCode, body)
	}
	if slices.ContainsFunc(h.cmd.Env, func(kv string) bool { return kv == "GOMAXPROCS=1" }) {
		t.Error("the hello subprocess inherited the load generator's GOMAXPROCS")
	}
	h.stop()
	if !h.cmd.ProcessState.Exited() || h.cmd.ProcessState.ExitCode() != 0 {
		t.Errorf("hello did not exit cleanly on SIGTERM: %v", h.cmd.ProcessState)
	}
}

// TestStartHelloFails starts a subprocess that exits without the
// readiness line.
func TestStartHelloFails(t *testing.T) {
	t.Setenv(helperEnv, "1")
	if _, err := startHello(context.Background(), "/bin/true"); err == nil {
		t.Fatal("startHello accepted a process that never listened")
	}
}

func TestWithoutEnv(t *testing.T) {
	got := withoutEnv([]string{"A=1", "GOMAXPROCS=2", "GOMAXPROCSX=3", "B=2"}, "GOMAXPROCS")
	if !slices.Equal(got, []string{"A=1", "GOMAXPROCSX=3", "B=2"}) {
		t.Errorf("withoutEnv = %v", got)
	}
}
