package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const agentCleanupSummary = `Stops the agent runtime dev started: the process whose pid the pid file
holds, and only it (never a process found by its name), if it still runs,
is that runtime and was started before the pid file was written. Then checks
that it is gone and its address is closed, and removes the pid file.
Without a pid file there is nothing to do; running it twice is harmless.`

// cleanup stops what dev started.
func (e agentEnv) cleanup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("agent cleanup", "[flags]", agentCleanupSummary)
	pidFile := fs.String("pid-file", defaultPidFile(), "the pid `file` dev wrote")
	if _, err := parseArgs(fs, args, stdout, stderr, 0, ""); err != nil {
		return err
	}
	rec, ok, err := readPidFile(*pidFile)
	switch {
	case err != nil:
		return fmt.Errorf("%w; remove it by hand after checking that nothing runs: %w", errNotStopped, err)
	case !ok:
		fmt.Fprintf(stdout, "Nothing to clean up: no pid file %s.\n", *pidFile)
		return nil
	}
	if err := stopRecorded(rec, stdout); err != nil {
		return err
	}
	if rec.address != "" && listening(rec.address) {
		return fmt.Errorf("%w: pid %d is gone, but %s still accepts connections: another process listens there; the pid file %s stays",
			errNotStopped, rec.pid, rec.address, *pidFile)
	}
	if err := os.Remove(*pidFile); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Removed the pid file %s; nothing the agent runtime started is left.\n", *pidFile)
	return nil
}

// stopRecorded stops the pid file's process when it is still the runtime
// dev started, and checks that it is gone.
func stopRecorded(rec pidRecord, stdout io.Writer) error {
	if !ours(rec) {
		fmt.Fprintf(stdout, "The runtime (pid %d) is not running any more.\n", rec.pid)
		return nil
	}
	if err := stopProcess(rec.pid); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Stopped the agent runtime (pid %d).\n", rec.pid)
	return nil
}

// stopProcess sends pid SIGTERM, and SIGKILL when it has not ended in
// time; it fails when the process is still there after that.
func stopProcess(pid int) error {
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && err != syscall.ESRCH {
		return fmt.Errorf("%w: SIGTERM to pid %d: %w", errNotStopped, pid, err)
	}
	if waitFor(context.Background(), termWait, func() bool { return processGone(pid) }) {
		return nil
	}
	_ = syscall.Kill(pid, syscall.SIGKILL)
	if waitFor(context.Background(), killWait, func() bool { return processGone(pid) }) {
		return nil
	}
	return fmt.Errorf("%w: pid %d is still there after SIGTERM and SIGKILL", errNotStopped, pid)
}

// ours reports whether the pid file's process still runs and is the one
// dev started: a switchyard agent serve, started no later than the pid file
// was written (a pid the system gave to a newer process is not ours).
func ours(rec pidRecord) bool {
	if processGone(rec.pid) {
		return false
	}
	start, ok := processStart(rec.pid)
	if !ok || start.After(rec.written.Add(2*time.Second)) {
		return false
	}
	argv := processArgs(rec.pid)
	return len(argv) >= 3 && argv[1] == "agent" && argv[2] == "serve"
}

// processGone reports whether no process with pid runs (one that has
// ended but was not waited for yet counts as gone).
func processGone(pid int) bool {
	fields, ok := procStat(pid)
	return !ok || fields[0] == "Z" || fields[0] == "X"
}

// procStat returns the fields of /proc/PID/stat after the command name,
// starting with the state.
func procStat(pid int) ([]string, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return nil, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil, false
	}
	fields := strings.Fields(string(b[i+1:]))
	return fields, len(fields) > 19
}

// userHZ is the unit of the times in /proc: fixed at 100 on Linux.
const userHZ = 100

// processStart returns when pid started.
func processStart(pid int) (time.Time, bool) {
	fields, ok := procStat(pid)
	if !ok {
		return time.Time{}, false
	}
	ticks, err := strconv.ParseInt(fields[19], 10, 64) // starttime, field 22 of stat
	boot, ok := bootTime()
	if err != nil || !ok {
		return time.Time{}, false
	}
	return boot.Add(time.Duration(ticks) * time.Second / userHZ), true
}

// bootTime reads the system's boot time from /proc/stat.
func bootTime() (time.Time, bool) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return time.Time{}, false
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			sec, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return time.Unix(sec, 0), err == nil
		}
	}
	return time.Time{}, false
}

// processArgs returns pid's command line.
func processArgs(pid int) []string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/cmdline")
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
}

// listening reports whether something accepts connections at address.
func listening(address string) bool {
	c, err := net.DialTimeout("tcp", dialable(address), time.Second)
	if err != nil {
		return false
	}
	_ = c.Close()
	return true
}
