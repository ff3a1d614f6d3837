package e2e

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/internal/testutil"
)

// TestAgentCoreCLI runs the seed's command-line workflow with the real
// AgentCore CLI (@aws/agentcore from npm): scripts/agentcore/workflow.sh
// installs it (no sudo), creates a project with the small model's tool
// transplanted into it, checks an answer of the small model through the
// CLI's local dev server against a local switchyard, and cleans up. After
// it, no process of the dev server is left, nothing listens on its port,
// and the project folder is gone; with KEEP_PROJECT=1 the folder stays.
func TestAgentCoreCLI(t *testing.T) {
	needE2E(t)
	if _, err := exec.LookPath("node"); err != nil {
		t.Fatal("Node.js is not installed: run scripts/deps.sh")
	}
	m := startPythonModels(t)
	env := append(pythonAgentEnv(m.Server, "us.toolcaller"), "AWS_REGION=us-east-1",
		"AGENTCORE_VENV="+filepath.Dir(filepath.Dir(python)))
	for _, keep := range []bool{false, true} {
		t.Run(fmt.Sprintf("KEEP_PROJECT=%v", keep), func(t *testing.T) {
			parent := t.TempDir()
			project := filepath.Join(parent, "slmagent")
			before := len(m.slmRequests(t))
			cmd := exec.Command("../scripts/agentcore/workflow.sh", parent)
			cmd.Env = env
			if keep {
				cmd.Env = append(cmd.Env, "KEEP_PROJECT=1")
			}
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			done := make(chan struct{})
			go func() {
				select {
				case <-ctx.Done():
					_ = cmd.Process.Kill()
				case <-done:
				}
			}()
			out, err := cmd.CombinedOutput()
			close(done)
			if err != nil {
				t.Fatalf("workflow.sh: %v\n%s", err, out)
			}
			if !strings.Contains(string(out), "The tool answered: German (deu)") {
				t.Errorf("no answer of the small model:\n%s", out)
			}
			if n := len(m.slmRequests(t)) - before; n != 1 {
				t.Errorf("the small model received %d requests, want 1", n)
			}
			dev := regexp.MustCompile(`dev server pid (\d+) on 127\.0\.0\.1:(\d+)`).FindStringSubmatch(string(out))
			if dev == nil {
				t.Fatalf("no dev server line:\n%s", out)
			}
			pid, _ := strconv.Atoi(dev[1])
			if !testutil.ProcessGone(pid) {
				t.Errorf("the dev server (pid %d) still runs", pid)
			}
			if left := processesUnder(project); len(left) > 0 {
				t.Errorf("processes left in the project folder: %v", left)
			}
			if c, err := net.DialTimeout("tcp", "127.0.0.1:"+dev[2], time.Second); err == nil {
				c.Close()
				t.Errorf("something still listens on the dev server's port %s", dev[2])
			}
			_, statErr := os.Stat(filepath.Join(project, "app", "slmagent", "main.py"))
			if keep && statErr != nil {
				t.Errorf("KEEP_PROJECT=1: the project is gone: %v", statErr)
			}
			if _, err := os.Stat(project); !keep && !os.IsNotExist(err) {
				t.Errorf("the project folder is still there: %v\n%s", err, out)
			}
			if t.Failed() {
				t.Logf("workflow.sh:\n%s", out)
			}
		})
	}
}

// processesUnder returns the pids whose working folder or command line is
// in dir.
func processesUnder(dir string) []int {
	var pids []int
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		cwd, _ := os.Readlink(fmt.Sprintf("/proc/%d/cwd", pid))
		cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		if strings.HasPrefix(cwd, dir) || strings.Contains(string(cmdline), dir) {
			pids = append(pids, pid)
		}
	}
	return pids
}
