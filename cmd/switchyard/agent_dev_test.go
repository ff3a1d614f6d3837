package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// devEnv prepares a dev start of this test binary as the runtime, on a
// free port; it returns the address and the pid file's path.
func devEnv(t *testing.T) (address, pidFile string) {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: starts processes")
	}
	localAgentEnv(t, "http://127.0.0.1:1")
	t.Setenv(envTestAsMain, "1")
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	address = l.Addr().String()
	l.Close()
	return address, filepath.Join(t.TempDir(), "dev.pid")
}

// startDev runs agent dev and returns the runtime's pid; the test ends by
// reaping it (this process is its parent until it exits).
func startDev(t *testing.T, address, pidFile string) int {
	t.Helper()
	code, stdout, stderr := cli(t, "agent", "dev", "--address", address, "--pid-file", pidFile, "--course", "classification")
	if code != exitOK || !strings.Contains(stdout, "runs detached") || strings.Contains(stdout, "Cloud costs") {
		t.Fatalf("dev: exit %d, stdout %q, stderr %q", code, stdout, stderr)
	}
	rec, ok, err := readPidFile(pidFile)
	if err != nil || !ok || rec.address != address {
		t.Fatalf("pid file: %+v %v %v", rec, ok, err)
	}
	t.Cleanup(func() {
		if !processGone(rec.pid) {
			_ = syscall.Kill(rec.pid, syscall.SIGKILL)
		}
		var ws syscall.WaitStatus
		_, _ = syscall.Wait4(rec.pid, &ws, 0, nil)
	})
	return rec.pid
}

// TestAgentDevThenCleanup: dev starts the runtime in its own session with
// stdin from /dev/null and a pid file; cleanup stops that process, checks
// that it and its socket are gone, removes the pid file, and is harmless
// a second time.
func TestAgentDevThenCleanup(t *testing.T) {
	address, pidFile := devEnv(t)
	pid := startDev(t, address, pidFile)
	fields, _ := procStat(pid)
	if fields[3] != strconv.Itoa(pid) {
		t.Errorf("session %s, want its own (%d)", fields[3], pid)
	}
	if in, _ := os.Readlink("/proc/" + strconv.Itoa(pid) + "/fd/0"); in != os.DevNull {
		t.Errorf("stdin is %q", in)
	}
	if !pinged(address) {
		t.Error("the runtime does not answer /ping")
	}
	if code, _, stderr := cli(t, "agent", "dev", "--address", address, "--pid-file", pidFile); code != exitError || !strings.Contains(stderr, "still runs") {
		t.Errorf("a second dev: exit %d, %q", code, stderr)
	}
	code, stdout, stderr := cli(t, "agent", "cleanup", "--pid-file", pidFile)
	if code != exitOK || !strings.Contains(stdout, "Stopped the agent runtime (pid "+strconv.Itoa(pid)+")") {
		t.Fatalf("cleanup: exit %d, %q, %q", code, stdout, stderr)
	}
	if !processGone(pid) || listening(address) {
		t.Error("the runtime or its socket is still there")
	}
	if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
		t.Errorf("pid file: %v", err)
	}
	code, stdout, _ = cli(t, "agent", "cleanup", "--pid-file", pidFile)
	if code != exitOK || !strings.Contains(stdout, "Nothing to clean up") {
		t.Errorf("cleanup twice: exit %d, %q", code, stdout)
	}
}

// TestAgentCleanupLeavesOthersAlone: a pid file whose pid is another
// program, or a process started after the pid file was written (a reused
// pid), is not killed; the stale pid file goes.
func TestAgentCleanupLeavesOthersAlone(t *testing.T) {
	address, pidFile := devEnv(t)
	sleeper := exec.Command("sleep", "60")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = sleeper.Process.Kill(); _ = sleeper.Wait() }()
	newer := startDev(t, address, pidFile)
	old := time.Now().Add(-time.Hour)
	for name, pid := range map[string]int{"another program": sleeper.Process.Pid, "a newer process": newer} {
		if err := writePidFile(pidFile, pid, ""); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(pidFile, old, old); err != nil {
			t.Fatal(err)
		}
		code, stdout, stderr := cli(t, "agent", "cleanup", "--pid-file", pidFile)
		if code != exitOK || !strings.Contains(stdout, "not running any more") || processGone(pid) {
			t.Errorf("%s: exit %d, %q, %q; gone %v", name, code, stdout, stderr, processGone(pid))
		}
		if _, err := os.Stat(pidFile); !os.IsNotExist(err) {
			t.Errorf("%s: the stale pid file stays: %v", name, err)
		}
	}
	if err := os.WriteFile(pidFile, []byte("nope\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := cli(t, "agent", "cleanup", "--pid-file", pidFile); code != exitError || !strings.Contains(stderr, "does not start with a pid") {
		t.Errorf("a pid file without a pid: exit %d, %q", code, stderr)
	}
}
