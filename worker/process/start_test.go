package process

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/message"
)

// TestCommandLine starts a (fake) worker and checks its whole argument list
// against the list DJL 0.36's Connection.getPythonStartCmd builds for a
// worker that is not MPI and talks over a Unix socket: the same arguments in
// the same order, "" where DJL passes an empty value, and the async-mode flag
// last.
func TestCommandLine(t *testing.T) {
	t.Setenv("PYTHONPATH", "/from/env")
	t.Setenv("CUDA_VISIBLE_DEVICES", "")
	os.Unsetenv("CUDA_VISIBLE_DEVICES")
	tests := []struct {
		name     string
		spec     func(*Spec)
		want     func(python, engine, sock, dir string) []string
		wantCUDA string // Spec.VisibleDevices, and CUDA_VISIBLE_DEVICES wanted; "" means unset
	}{
		{
			name: "cpu, model.py, defaults",
			spec: func(s *Spec) { s.DeviceID, s.EntryPoint = -1, "model.py" },
			want: func(python, engine, sock, dir string) []string {
				return []string{python, engine, "--sock-type", "unix", "--sock-name", sock, "--model-dir", dir,
					"--entry-point", "model.py", "--device-id", "-1", "--cluster-size", "1",
					"--recommended-entry-point", "", "--log-level", "info", "--no-async-mode"}
			},
		},
		{
			name: "gpu pinned by uuid, no entry point, recommended handler, debug, async",
			spec: func(s *Spec) {
				s.DeviceID, s.Recommended, s.LogLevel, s.AsyncMode = 0, "djl_python.huggingface", "debug", true
			},
			want: func(python, engine, sock, dir string) []string {
				return []string{python, engine, "--sock-type", "unix", "--sock-name", sock, "--model-dir", dir,
					"--entry-point", "", "--device-id", "0", "--cluster-size", "1",
					"--recommended-entry-point", "djl_python.huggingface", "--log-level", "debug", "--async-mode"}
			},
			wantCUDA: "GPU-00000000-0000-4000-8000-000000000001",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, "EXTRA=1")
			tt.spec(&h.spec)
			h.spec.VisibleDevices = tt.wantCUDA
			h.spec.PythonPath = []string{"/rt/a", "/rt/b"}
			rec := h.recordPath(t)
			p := h.start(t)
			r := readRecord(t, rec)

			engine, _ := filepath.Abs("fake_engine.py")
			if want := tt.want(h.spec.Python, engine, p.Socket(), h.spec.ModelDir); !slices.Equal(r.Args, want) {
				t.Errorf("argv\n%q\nwant\n%q", r.Args, want)
			}
			if r.Dir != h.spec.ModelDir {
				t.Errorf("cwd %s, want the model dir %s", r.Dir, h.spec.ModelDir)
			}
			checkEnv(t, r.Env, "PYTHONPATH", "/rt/a:/rt/b:"+h.spec.ModelDir+":/from/env")
			checkEnv(t, r.Env, "CUDA_VISIBLE_DEVICES", tt.wantCUDA)
			checkEnv(t, r.Env, "EXTRA", "1")
		})
	}
}

func checkEnv(t *testing.T, env []string, key, want string) {
	t.Helper()
	var got []string
	for _, kv := range env {
		if k, v, _ := strings.Cut(kv, "="); k == key {
			got = append(got, v)
		}
	}
	switch {
	case want == "" && len(got) > 0:
		t.Errorf("%s=%q set, want it unset", key, got)
	case want != "" && !slices.Equal(got, []string{want}):
		t.Errorf("%s=%q, want %q", key, got, want)
	}
}

func TestSocketCounterGrows(t *testing.T) {
	h := newHarness(t)
	a, b := h.start(t), h.start(t)
	if a.id < FirstSocketID || b.id <= a.id {
		t.Errorf("socket numbers %d then %d: want growing numbers from %d", a.id, b.id, FirstSocketID)
	}
	for _, p := range []*Process{a, b} {
		if want := SocketPath(h.spec.SocketDir, p.id); p.Socket() != want {
			t.Errorf("socket %s, want %s", p.Socket(), want)
		}
	}
	fi, err := os.Stat(h.spec.SocketDir)
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("socket dir mode %v (%v), want 0700", fi.Mode(), err)
	}
}

func TestStaleSocketRemoved(t *testing.T) {
	h := newHarness(t)
	if err := os.MkdirAll(h.spec.SocketDir, 0o700); err != nil {
		t.Fatal(err)
	}
	next := FirstSocketID + int(socketCounter.Load())
	staleSocket(t, SocketPath(h.spec.SocketDir, next))
	p := h.start(t)
	if p.id != next {
		t.Fatalf("worker got socket %d, want the stale one's number %d", p.id, next)
	}
	if _, err := p.predict(context.Background(), input("x")); err != nil {
		t.Errorf("worker on a reclaimed socket path: %v", err)
	}
}

// staleSocket leaves a socket file at path that no process listens on.
func staleSocket(t *testing.T, path string) {
	t.Helper()
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		t.Fatal(err)
	}
	ln.SetUnlinkOnClose(false)
	ln.Close()
}

func TestLoadFailures(t *testing.T) {
	tests := []struct {
		name      string
		env       []string
		init      []message.Prop
		timeout   time.Duration
		wantErr   []error
		wantInMsg []string
		wantTail  string // a line of StartError.Stderr
	}{
		{
			name:      "exit before ready",
			env:       []string{fakeStartEnv + "=exit"},
			wantErr:   []error{ErrLoad, api.ErrWorkerDied},
			wantInMsg: []string{"of model echo exited: exit status 1", "ValueError: no model here"},
			wantTail:  "Traceback (most recent call last):",
		},
		{
			name:      "never ready",
			env:       []string{fakeStartEnv + "=never-ready"},
			timeout:   200 * time.Millisecond,
			wantErr:   []error{ErrLoadTimeout},
			wantInMsg: []string{"did not start within 200ms"},
		},
		{
			name:      "handler error",
			init:      []message.Prop{{Key: "fail", Value: "ModuleNotFoundError: No module named 'nope'"}},
			wantErr:   []error{ErrLoad},
			wantInMsg: []string{"answered 500", "ModuleNotFoundError: No module named 'nope'"},
		},
		{
			name:      "out of memory",
			init:      []message.Prop{{Key: "oom", Value: "1"}},
			wantErr:   []error{ErrLoad, api.ErrInsufficientMemory},
			wantInMsg: []string{"CUDA out of memory"},
		},
		{
			name:      "exit during initialization",
			init:      []message.Prop{{Key: "exit_init", Value: "bad weights"}},
			wantErr:   []error{ErrLoad, api.ErrWorkerDied},
			wantInMsg: []string{"exit status 4", "RuntimeError: bad weights"},
		},
		{
			name:      "initialization too slow",
			init:      []message.Prop{{Key: "hang_init", Value: "1"}},
			timeout:   300 * time.Millisecond,
			wantErr:   []error{ErrLoadTimeout},
			wantInMsg: []string{"did not start within 300ms"},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t, tt.env...)
			h.spec.InitProps = tt.init
			if tt.timeout > 0 {
				h.spec.LoadTimeout = tt.timeout
			}
			rec := h.recordPath(t)
			p, err := Start(context.Background(), h.spec)
			if err == nil {
				p.Stop(context.Background())
				t.Fatal("Start succeeded")
			}
			t.Log(err)
			checkErr(t, err, tt.wantErr, tt.wantInMsg)
			checkTail(t, err, tt.wantTail)
			checkStartCleanedUp(t, err, h.spec.SocketDir, rec)
		})
	}
}

// checkStartCleanedUp checks that the worker of a failed Start is gone. On a
// loaded machine a short load timeout can kill the fake before it wrote its
// record; then the pid comes from the error and every file in
// socketDir must be gone.
func checkStartCleanedUp(t *testing.T, err error, socketDir, rec string) {
	t.Helper()
	if _, statErr := os.Stat(rec); statErr == nil {
		checkCleanedUp(t, readRecord(t, rec))
		return
	}
	m := regexp.MustCompile(`\(pid (\d+)\)`).FindStringSubmatch(err.Error())
	if m == nil {
		t.Fatalf("no record and no pid in error %q", err)
	}
	pid, _ := strconv.Atoi(m[1])
	if !gone(pid) {
		t.Errorf("worker pid %d still exists", pid)
	}
	left, _ := filepath.Glob(filepath.Join(socketDir, "*"))
	if len(left) > 0 {
		t.Errorf("socket files left: %v", left)
	}
}

func checkErr(t *testing.T, err error, want []error, inMsg []string) {
	t.Helper()
	for _, w := range want {
		if !errors.Is(err, w) {
			t.Errorf("error %q does not wrap %q", err, w)
		}
	}
	for _, s := range inMsg {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("error %q does not say %q", err, s)
		}
	}
}

// checkTail checks that err is a *StartError whose stderr lines hold want.
func checkTail(t *testing.T, err error, want string) {
	t.Helper()
	var se *StartError
	if !errors.As(err, &se) {
		t.Fatalf("error %T is not a *StartError", err)
	}
	if want != "" && !slices.Contains(se.Stderr, want) {
		t.Errorf("stderr tail %q lacks %q", se.Stderr, want)
	}
}

// checkCleanedUp checks that the recorded worker process and its socket
// file are gone.
func checkCleanedUp(t *testing.T, r fakeRecord) {
	t.Helper()
	if !gone(r.PID) {
		t.Errorf("worker pid %d still exists", r.PID)
	}
	sock := r.Args[slices.Index(r.Args, "--sock-name")+1]
	if !fileGone(sock) {
		t.Errorf("socket file %s still exists", sock)
	}
}

func TestStartCanceled(t *testing.T) {
	h := newHarness(t, fakeStartEnv+"=never-ready")
	rec := h.recordPath(t)
	ctx, cancel := context.WithCancel(context.Background())
	ready := h.watch.expect("fake: never ready")
	go func() { <-ready; cancel() }()
	_, err := Start(ctx, h.spec)
	checkErr(t, err, []error{context.Canceled}, []string{"start canceled"})
	checkCleanedUp(t, readRecord(t, rec))
}

func TestSpecRequired(t *testing.T) {
	tests := []struct {
		name string
		edit func(*Spec)
	}{
		{"no python", func(s *Spec) { s.Python = "" }},
		{"no engine", func(s *Spec) { s.Engine = "" }},
		{"no model dir", func(s *Spec) { s.ModelDir = "" }},
		{"no socket dir", func(s *Spec) { s.SocketDir = "" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			tt.edit(&h.spec)
			_, err := Start(context.Background(), h.spec)
			if !errors.Is(err, ErrSpec) {
				t.Errorf("error %v, want ErrSpec", err)
			}
			checkTail(t, err, "")
		})
	}
}

func TestSpecDefaults(t *testing.T) {
	s, err := Spec{Python: "python3", Engine: "e.py", ModelDir: "models/m", SocketDir: "s"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	if s.Model != "m" || s.LoadTimeout != DefaultLoadTimeout || s.PredictTimeout != DefaultPredictTimeout ||
		s.StopGrace != DefaultStopGrace || s.MaxItem <= 0 || s.Logger == nil {
		t.Errorf("defaults not filled in: %+v", s)
	}
	if !filepath.IsAbs(s.ModelDir) || !filepath.IsAbs(s.Engine) || !filepath.IsAbs(s.SocketDir) || s.Python != "python3" {
		t.Errorf("paths: model dir %s, engine %s, socket dir %s, python %s", s.ModelDir, s.Engine, s.SocketDir, s.Python)
	}
}
