package benchserver

import (
	"bufio"
	"context"
	"fmt"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/internal/testutil"
)

// fakeEnv, when set, makes the test binary act as a switchyard binary:
// "ready" serves /ping with 200 on inference_address, "busy" with 503,
// "exit" writes a line to its log and exits at start.
const fakeEnv = "BENCHSERVER_FAKE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(fakeEnv); mode != "" {
		os.Exit(fakeServer(mode, os.Args[1:]))
	}
	os.Exit(m.Run())
}

// fakeServer reads the config of `serve --config PATH` and acts out mode.
func fakeServer(mode string, args []string) int {
	if len(args) != 3 || args[0] != "serve" || args[1] != "--config" {
		fmt.Println("fake: unexpected arguments", args)
		return 2
	}
	f, err := os.Open(args[2])
	if err != nil {
		fmt.Println("fake:", err)
		return 1
	}
	conf := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "=")
		conf[k] = v
	}
	f.Close()
	if mode == "exit" {
		fmt.Println("fake: model_store", conf["model_store"], "is missing")
		return 1
	}
	code := http.StatusOK
	if mode == "busy" {
		code = http.StatusServiceUnavailable
	}
	addr := strings.TrimPrefix(conf["inference_address"], "http://")
	err = http.ListenAndServe(addr, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(code)
	}))
	fmt.Println("fake:", err)
	return 1
}

func self(t *testing.T) string {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func TestStartAndStop(t *testing.T) {
	t.Setenv(fakeEnv, "ready")
	s, err := Start(t.Context(), self(t), map[string]string{"model_store": "/models", "load_models": "ALL"}, 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	conf, err := os.ReadFile(s.Dir + "/config.properties")
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("inference_address=%s\nload_models=ALL\nmanagement_address=%s\nmodel_store=/models\nsocket_dir=%s\n",
		s.Inference, s.Management, s.Dir)
	if string(conf) != want {
		t.Errorf("config.properties:\n%s\nwant:\n%s", conf, want)
	}
	if s.Inference == s.Management || !strings.HasPrefix(s.Inference, "http://127.0.0.1:") {
		t.Errorf("listeners %q and %q", s.Inference, s.Management)
	}
	pid := s.Pid()
	s.Stop()
	if !testutil.ProcessGone(pid) {
		t.Errorf("process %d still runs after Stop", pid)
	}
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Errorf("Stop left %s behind: %v", s.Dir, err)
	}
}

func TestStartFails(t *testing.T) {
	tests := []struct {
		mode, want string
	}{
		{"exit", "switchyard exited at start (server log: fake: model_store /nowhere is missing)"},
		{"busy", "switchyard not ready within 300ms"},
	}
	for _, tt := range tests {
		t.Run(tt.mode, func(t *testing.T) {
			t.Setenv(fakeEnv, tt.mode)
			tmp := t.TempDir()
			t.Setenv("TMPDIR", tmp)
			_, err := Start(t.Context(), self(t), map[string]string{"model_store": "/nowhere"}, 300*time.Millisecond)
			if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
				t.Fatalf("error %v, want one that begins %q", err, tt.want)
			}
			if left, _ := os.ReadDir(tmp); len(left) > 0 {
				t.Errorf("a failed start left %s behind in %s", left[0].Name(), tmp)
			}
		})
	}
}

func TestStartCanceled(t *testing.T) {
	t.Setenv(fakeEnv, "busy")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := Start(ctx, self(t), nil, time.Minute); err != context.Canceled {
		t.Errorf("error %v, want context.Canceled", err)
	}
}
