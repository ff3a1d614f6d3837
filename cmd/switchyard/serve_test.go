package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/properties"
)

// TestServeFlags checks that each of serve's setting flags sets its key,
// and wins over the variable it stands for.
func TestServeFlags(t *testing.T) {
	store := t.TempDir()
	env := properties.Env{"SERVING_PYTHON_EXECUTABLE": "/env/python", "SERVING_SOCKET_DIR": "/env/sockets"}
	srv, level, err := serverConfig([]string{
		"--model-store", store, "--models", "NONE",
		"--inference-address", "127.0.0.1:9001", "--management-address", "http://127.0.0.1:9002",
		"--allowed-model-roots", "/srv/a,/srv/b", "--python", "/usr/bin/python3",
		"--python-engine", "/opt/djl/djl_python_engine.py", "--socket-dir", "/run/sy",
		"--log-level", "debug",
	}, io.Discard, io.Discard, env)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]any{
		"model_store": srv.ModelStore, "load_models": srv.LoadModels,
		"inference_address": srv.InferenceAddress, "management_address": srv.ManagementAddress,
		"allowed_model_roots": srv.AllowedModelRoots, "python_executable": srv.PythonExecutable,
		"python_engine": srv.PythonEngine, "socket_dir": srv.SocketDir, "level": level,
	}
	want := map[string]any{
		"model_store": store, "load_models": []properties.ModelRef(nil),
		"inference_address": "127.0.0.1:9001", "management_address": "http://127.0.0.1:9002",
		"allowed_model_roots": []string{"/srv/a", "/srv/b"}, "python_executable": "/usr/bin/python3",
		"python_engine": "/opt/djl/djl_python_engine.py", "socket_dir": "/run/sy", "level": "debug",
	}
	for k, w := range want {
		if !reflect.DeepEqual(got[k], w) {
			t.Errorf("%s = %#v, want %#v", k, got[k], w)
		}
	}
	for _, f := range serveFlags {
		if _, ok := want[f.key]; !ok {
			t.Errorf("flag --%s (%s) is not tested", f.flag, f.key)
		}
	}
}

// TestServeModelsAllPlus checks --models ALL,x=path: every folder of the
// store, plus x.
func TestServeModelsAllPlus(t *testing.T) {
	store, extra := t.TempDir(), filepath.Join(t.TempDir(), "x")
	srv, _, err := serverConfig([]string{"--model-store", store, "--models", "ALL,x=" + extra}, io.Discard, io.Discard, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []properties.ModelRef{{All: true, Path: store}, {Name: "x", Path: extra}}
	if !reflect.DeepEqual(srv.LoadModels, want) {
		t.Errorf("load_models = %+v, want %+v", srv.LoadModels, want)
	}
}

// TestServeFlagErrorNamesFlag checks that a bad value given with a flag is
// reported under the flag's name, not under the SERVING_ variable the flag
// is passed on as, while a bad variable the user did set is named.
func TestServeFlagErrorNamesFlag(t *testing.T) {
	t.Setenv("SERVING_LOAD_MODELS", "")
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		code    int
		has     string
		hasNone string
	}{
		{"models", []string{"serve", "--models", "=x"}, nil, exitUsage, `--models: load_models: "=x" is not [name=]path`, "SERVING_"},
		{"address", []string{"serve", "--inference-address", "nowhere"}, nil, exitUsage, "--inference-address: inference_address:", "SERVING_"},
		{"socket dir", []string{"serve", "--socket-dir", "/" + strings.Repeat("d", 100)}, nil, exitUsage, "--socket-dir: socket_dir: ", "SERVING_"},
		{"variable", []string{"serve"}, map[string]string{"SERVING_LOAD_MODELS": "=x"}, exitError, `$SERVING_LOAD_MODELS: load_models:`, "--models"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			code, stdout, stderr := cli(t, tt.args...)
			if code != tt.code || stdout != "" || !strings.Contains(stderr, tt.has) || strings.Contains(stderr, tt.hasNone) {
				t.Errorf("exit %d, stdout %q, stderr %q; want %d, %q and no %q", code, stdout, stderr, tt.code, tt.has, tt.hasNone)
			}
		})
	}
}

func TestServeUnexpectedArgument(t *testing.T) {
	code, _, stderr := cli(t, "serve", "examples/models")
	if code != exitUsage || !strings.Contains(stderr, `unexpected argument "examples/models"`) {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}

func TestMain(m *testing.M) {
	// agent dev starts this binary as `switchyard agent serve`.
	if os.Getenv(envTestAsMain) == "1" {
		os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
	}
	// serve reads the process environment; keep the tests' own out.
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "SERVING_") {
			os.Unsetenv(k)
		}
	}
	os.Exit(m.Run())
}
