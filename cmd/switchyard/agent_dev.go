package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/switchyard/switchyard/agent"
)

// How long cleanup waits for the runtime: after SIGTERM it may take the
// runtime's grace period to finish running invocations; after SIGKILL the
// kernel is quick.
const (
	termWait = agent.DefaultGrace + 10*time.Second
	killWait = 5 * time.Second
)

// errNotStopped means cleanup could not make sure the process is gone.
var errNotStopped = errors.New("not stopped")

// defaultPidFile is where dev records what it started, per user.
func defaultPidFile() string {
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "switchyard", "agent-dev.pid")
	}
	return filepath.Join(os.TempDir(), fmt.Sprintf("switchyard-agent-dev-%d.pid", os.Getuid()))
}

const agentDevSummary = `Starts the agent runtime (agent serve, with these flags) detached: in a
session of its own, standard input from /dev/null, its log in a file, its
pid in a pid file. Waits until it answers /ping. Stop it with
'switchyard agent cleanup', which stops that process only.`

// dev starts the runtime detached.
func (e agentEnv) dev(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("agent dev", "[flags]", agentDevSummary)
	f := addServeFlags(fs)
	pidFile := fs.String("pid-file", defaultPidFile(), "the pid `file` cleanup reads")
	logFile := fs.String("log-file", "", "the runtime's log `file`; default: the pid file's with .log")
	wait := fs.Duration("wait", time.Minute, "how long to wait for the runtime to answer /ping")
	if _, err := parseArgs(fs, args, stdout, stderr, 0, ""); err != nil {
		return err
	}
	if *logFile == "" {
		*logFile = strings.TrimSuffix(*pidFile, ".pid") + ".log"
	}
	cfg, err := agent.LoadConfig(f.s, e.getenv)
	if err != nil {
		return err
	}
	if _, port, err := net.SplitHostPort(f.address); err != nil || port == "0" {
		return fmt.Errorf("%w: --address %q: dev needs HOST:PORT with a port other than 0", errUsage, f.address)
	}
	if err := refuseRunning(*pidFile); err != nil {
		return err
	}
	if w := agent.ModelIDWarning(cfg.ModelID); w != "" {
		fmt.Fprintln(stderr, "warning: "+w)
	}
	if err := e.devNotice(ctx, cfg, stdout); err != nil {
		return err
	}
	pid, err := e.startDetached(f.args(), *pidFile, *logFile)
	if err != nil {
		return err
	}
	if !waitFor(ctx, *wait, func() bool { return processGone(pid) || pinged(f.address) }) || processGone(pid) {
		return devFailed(pid, *pidFile, *logFile)
	}
	fmt.Fprintf(stdout, "The agent runtime runs detached: pid %d, http://%s (POST /invocations, GET /ping).\nLog: %s\nPid file: %s\nStop it with: switchyard agent cleanup%s\n",
		pid, f.address, *logFile, *pidFile, pidFileFlag(*pidFile))
	return nil
}

// devNotice prints, once, what the runtime will bill in the cloud.
func (e agentEnv) devNotice(ctx context.Context, cfg agent.Config, stdout io.Writer) error {
	planner, endpoint, err := newClients(ctx, cfg)
	if err != nil {
		return err
	}
	fmt.Fprint(stdout, billable(planner.Options(), endpoint.Options(), cfg).Notice("switchyard agent cleanup"))
	return nil
}

// startDetached starts `switchyard agent serve args...` in a session of
// its own and records its pid.
func (e agentEnv) startDetached(args []string, pidFile, logFile string) (int, error) {
	exe, err := e.exe()
	if err != nil {
		return 0, fmt.Errorf("finding the switchyard binary: %w", err)
	}
	if err := os.MkdirAll(filepath.Dir(pidFile), 0o700); err != nil {
		return 0, err
	}
	logf, err := os.OpenFile(logFile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return 0, err
	}
	defer logf.Close()
	null, err := os.Open(os.DevNull)
	if err != nil {
		return 0, err
	}
	defer null.Close()
	cmd := exec.Command(exe, append([]string{"agent", "serve"}, args...)...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = null, logf, logf
	cmd.Env = append(os.Environ(), envNoticeShown+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	pid := cmd.Process.Pid
	_ = cmd.Process.Release() // dev returns; the runtime lives on
	if err := writePidFile(pidFile, pid, addressOf(args)); err != nil {
		_ = syscall.Kill(pid, syscall.SIGKILL)
		return 0, err
	}
	return pid, nil
}

// addressOf returns the --address among args, or the default.
func addressOf(args []string) string {
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--address="); ok {
			return v
		}
	}
	return defaultAgentAddress
}

// devFailed stops a runtime that did not come up, and says why.
func devFailed(pid int, pidFile, logFile string) error {
	_ = stopProcess(pid)
	_ = os.Remove(pidFile)
	log, _ := os.ReadFile(logFile)
	lines := strings.Split(strings.TrimSpace(string(log)), "\n")
	if len(lines) > 10 {
		lines = lines[len(lines)-10:]
	}
	return fmt.Errorf("the runtime (pid %d) did not come up; the end of its log %s:\n%s", pid, logFile, strings.Join(lines, "\n"))
}

// pidFileFlag is the --pid-file a later command needs, or "".
func pidFileFlag(pidFile string) string {
	if pidFile == defaultPidFile() {
		return ""
	}
	return " --pid-file " + pidFile
}

// writePidFile records pid and the address it listens at, atomically.
func writePidFile(path string, pid int, address string) error {
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, fmt.Appendf(nil, "%d\n%s\n", pid, address), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// pidRecord is what a pid file says.
type pidRecord struct {
	pid     int
	address string
	written time.Time
}

// readPidFile reads a pid file; ok is false when there is none.
func readPidFile(path string) (rec pidRecord, ok bool, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return pidRecord{}, false, nil
	}
	if err != nil {
		return pidRecord{}, false, err
	}
	info, err := os.Stat(path)
	if err != nil {
		return pidRecord{}, false, err
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	pid, err := strconv.Atoi(strings.TrimSpace(lines[0]))
	if err != nil || pid <= 1 {
		return pidRecord{}, true, fmt.Errorf("pid file %s does not start with a pid: %q", path, lines[0])
	}
	rec = pidRecord{pid: pid, written: info.ModTime()}
	if len(lines) > 1 {
		rec.address = strings.TrimSpace(lines[1])
	}
	return rec, true, nil
}

// refuseRunning fails when the pid file names a runtime that still runs,
// and removes a pid file whose process is gone.
func refuseRunning(pidFile string) error {
	rec, ok, err := readPidFile(pidFile)
	if err != nil || !ok {
		return err
	}
	if ours(rec) {
		return fmt.Errorf("an agent runtime started by dev still runs (pid %d, %s); run 'switchyard agent cleanup%s' first",
			rec.pid, pidFile, pidFileFlag(pidFile))
	}
	return os.Remove(pidFile)
}

// pinged reports whether the runtime at address answers /ping with 200.
func pinged(address string) bool {
	c := http.Client{Timeout: time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get("http://" + dialable(address) + "/ping")
	if err != nil {
		return false
	}
	_ = resp.Body.Close()
	return resp.StatusCode == http.StatusOK
}

// dialable turns a listen address into one a client can dial: an
// unspecified host becomes loopback.
func dialable(address string) string {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return address
	}
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		host = "127.0.0.1"
	}
	return net.JoinHostPort(host, port)
}
