package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// documented are the markdown files whose examples TestDocumentedExamples
// runs, relative to the repository root, in the order they run. Examples
// that change the server's state (register ld2, scale it, unregister it)
// stay in one file, in that order; the files after it see the store as it
// was at the start.
var documented = []string{
	"README.md",
	"docs/usage.md",
	"docs/generative.md",
	"docs/agent.md",
	"docker/README.md",
	"docs/api.md",
	"examples/README.md",
}

// TestDocumentedExamples runs every marked example of the documented files
// (the README's tour, the usage guide, generative models, the agent, the
// container images, the API reference and the example models' README)
// against one server on examples/models, in the order they are written,
// and compares each output's shape and status with what the docs show
// (docs_parse_test.go says how examples are marked).
func TestDocumentedExamples(t *testing.T) {
	needE2E(t)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	var all []docExample
	for _, f := range documented {
		examples, unmarked, err := parseExamples(filepath.Join(root, f))
		if err != nil {
			t.Fatal(err)
		}
		for _, where := range unmarked {
			t.Errorf("%s: a block with commands has no <!-- example --> marker", strings.TrimPrefix(where, root+"/"))
		}
		all = append(all, examples...)
	}
	s := StartServer(t, Options{Store: filepath.Join(root, "examples/models")})
	s.WaitStatus(2*time.Minute, "Healthy", "langid", "langdetect", "chat", "minilm")
	run := exampleRunner{root: root, srv: s}
	ran := 0
	for _, ex := range all {
		where := strings.TrimPrefix(ex.where, root+"/")
		if ex.skip != "" {
			t.Logf("%s: skipped: %s", where, ex.skip)
			continue
		}
		for _, c := range ex.commands {
			ran++
			if err := run.check(ex, c); err != nil {
				t.Errorf("%s:%d: %s\n%v", strings.Split(where, ":")[0], c.line, firstLine(c.text), err)
			}
		}
	}
	t.Logf("ran %d documented commands of %d examples", ran, len(all))
}

// exampleRunner runs documented commands against the test's server.
type exampleRunner struct {
	root string
	srv  *Server
}

// statusLine is what the curl wrapper writes to stderr after each answer.
var statusLine = regexp.MustCompile(`(?m)^@@status (\d+)$\n?`)

// check runs one command and compares its exit status, HTTP statuses and
// output with the documented ones.
func (r exampleRunner) check(ex docExample, c docCommand) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	script := "set -o pipefail\n" +
		`curl() { command curl --no-progress-meter -w '%{stderr}\n@@status %{http_code}\n' "$@"; }` + "\n" +
		r.localize(c.text)
	cmd := exec.CommandContext(ctx, "bash", "-c", script)
	cmd.Dir = r.root
	cmd.Env = append(os.Environ(),
		"SWITCHYARD_INFERENCE_URL="+r.srv.Inference, "SWITCHYARD_MANAGEMENT_URL="+r.srv.Management)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := cmd.ProcessState.ExitCode()
	if code != ex.exit {
		return fmt.Errorf("exit status %d, documented %d (%v)\nstdout: %s\nstderr: %s", code, ex.exit, err, stdout.String(), stderr.String())
	}
	rest, statuses := splitStatuses(stderr.String())
	if err := checkStatuses(statuses, ex, c); err != nil {
		return fmt.Errorf("%w\noutput: %.2000s", err, stdout.String())
	}
	if ex.ignore {
		return nil
	}
	return compareShape(c.output, stdout.String()+strings.TrimSpace(rest))
}

// localize points the documented addresses and binary at the test's.
func (r exampleRunner) localize(cmd string) string {
	for port, base := range map[string]string{"8080": r.srv.Inference, "8084": r.srv.Management} {
		re := regexp.MustCompile(`(https?://)?(localhost|127\.0\.0\.1):` + port + `\b`)
		cmd = re.ReplaceAllLiteralString(cmd, base)
	}
	return strings.ReplaceAll(cmd, "bin/switchyard ", strconv.Quote(binary)+" ")
}

// splitStatuses takes the wrapper's status lines out of stderr.
func splitStatuses(stderr string) (rest string, statuses []int) {
	for _, m := range statusLine.FindAllStringSubmatch(stderr, -1) {
		n, _ := strconv.Atoi(m[1])
		statuses = append(statuses, n)
	}
	return statusLine.ReplaceAllString(stderr, ""), statuses
}

// checkStatuses compares the curl answers' statuses with the documented
// one: the marker's, else the documented error body's code, else 2xx.
func checkStatuses(got []int, ex docExample, c docCommand) error {
	want := ex.status
	if want == 0 {
		want = errorCode(c.output)
	}
	for _, g := range got {
		switch {
		case want != 0 && g != want:
			return fmt.Errorf("HTTP status %d, documented %d", g, want)
		case want == 0 && (g < 200 || g > 299):
			return fmt.Errorf("HTTP status %d, documented a success", g)
		}
	}
	return nil
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}
