package docker

import (
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// serveCase is one run of the entrypoint that ends in the (stub) server.
type serveCase struct {
	name     string
	files    []string // made below the sandbox, see sandbox.write
	env      []string
	args     []string
	wantArgs []string
	wantEnv  map[string]string // exactly the SERVING_* and SWITCHYARD_CACHE_DIR it gets
}

var (
	single   = served("$ROOT/model", "$ROOT/model")
	multi    = served("$ROOT/models", "NONE")
	storeAll = served("$ROOT/models", "ALL")
)

// layoutCases: the model layout under /opt/ml decides the store and what
// loads at start.
var layoutCases = []serveCase{
	{name: "serve single model", files: []string{"ml/model/serving.properties=engine=Python\n"},
		args: []string{"serve"}, wantArgs: []string{"serve"}, wantEnv: single},
	{name: "no arguments means serve", files: []string{"ml/model/serving.properties="},
		wantArgs: []string{"serve"}, wantEnv: single},
	{name: "single model with only model.py", files: []string{"ml/model/model.py="},
		args: []string{"serve"}, wantArgs: []string{"serve"}, wantEnv: single},
	{name: "single folder without serving.properties still loads as one model",
		files: []string{"ml/model/config.json={}", "ml/model/weights/"},
		args:  []string{"serve"}, wantArgs: []string{"serve"}, wantEnv: single},
	{name: "model folders inside /opt/ml/model",
		files: []string{"ml/model/a/serving.properties=", "ml/model/b/model.py="},
		args:  []string{"serve"}, wantArgs: []string{"serve"},
		wantEnv: served("$ROOT/model", "ALL")},
	{name: "multi-model endpoint starts with no model", env: []string{"SAGEMAKER_MULTI_MODEL=true"},
		args: []string{"serve"}, wantArgs: []string{"serve"}, wantEnv: multi},
	{name: "multi-model endpoint wins over /opt/ml/model",
		files: []string{"ml/model/serving.properties=", "ml/models/abc/model/serving.properties="},
		env:   []string{"SAGEMAKER_MULTI_MODEL=True"},
		args:  []string{"serve"}, wantArgs: []string{"serve"}, wantEnv: multi},
	{name: "mounted /opt/ml/models without the flag loads every model",
		files: []string{"ml/model/serving.properties=", "ml/models/a/serving.properties="},
		args:  []string{"serve"}, wantArgs: []string{"serve"}, wantEnv: storeAll},
	{name: "empty /opt/ml/models and no /opt/ml/model", files: []string{"ml/models/"},
		args: []string{"serve"}, wantArgs: []string{"serve"}, wantEnv: multi},
	{name: "nothing mounted", args: []string{"serve"}, wantArgs: []string{"serve"}, wantEnv: multi},
	{name: "SAGEMAKER_MULTI_MODEL=false is not a multi-model endpoint",
		files: []string{"ml/model/serving.properties="}, env: []string{"SAGEMAKER_MULTI_MODEL=false"},
		args: []string{"serve"}, wantArgs: []string{"serve"}, wantEnv: single},
}

// overrideCases: whatever the user set, in the environment, in the config
// file or as flags, reaches the server unchanged.
var overrideCases = []serveCase{
	{name: "port from SAGEMAKER_BIND_TO_PORT", files: []string{"ml/model/model.py="},
		env: []string{"SAGEMAKER_BIND_TO_PORT=9090"}, args: []string{"serve"}, wantArgs: []string{"serve"},
		wantEnv: with(single, "SERVING_INFERENCE_ADDRESS=http://0.0.0.0:9090", "SERVING_MANAGEMENT_ADDRESS=http://0.0.0.0:9090")},
	{name: "empty SAGEMAKER_BIND_TO_PORT means 8080", files: []string{"ml/model/model.py="},
		env: []string{"SAGEMAKER_BIND_TO_PORT="}, args: []string{"serve"}, wantArgs: []string{"serve"}, wantEnv: single},
	{name: "user's inference address, management follows it", files: []string{"ml/model/model.py="},
		env:  []string{"SERVING_INFERENCE_ADDRESS=http://0.0.0.0:9000", "SAGEMAKER_BIND_TO_PORT=9090"},
		args: []string{"serve"}, wantArgs: []string{"serve"},
		wantEnv: with(single, "SERVING_INFERENCE_ADDRESS=http://0.0.0.0:9000", "SERVING_MANAGEMENT_ADDRESS=http://0.0.0.0:9000")},
	{name: "user's management address kept", files: []string{"ml/model/model.py="},
		env:  []string{"SERVING_MANAGEMENT_ADDRESS=http://127.0.0.1:8084"},
		args: []string{"serve"}, wantArgs: []string{"serve"},
		wantEnv: with(single, "SERVING_MANAGEMENT_ADDRESS=http://127.0.0.1:8084")},
	{name: "user's interpreter, socket folder and other keys kept", files: []string{"ml/model/model.py="},
		env: []string{"SERVING_PYTHON_EXECUTABLE=/opt/venv/bin/python", "SERVING_SOCKET_DIR=/run/sy",
			"SERVING_JOB_QUEUE_SIZE=5"},
		args: []string{"serve"}, wantArgs: []string{"serve"},
		wantEnv: with(single, "SERVING_PYTHON_EXECUTABLE=/opt/venv/bin/python", "SERVING_SOCKET_DIR=/run/sy",
			"SERVING_JOB_QUEUE_SIZE=5")},
	{name: "user's model store: load_models left to the server", files: []string{"ml/model/model.py="},
		env: []string{"SERVING_MODEL_STORE=/srv/models"}, args: []string{"serve"}, wantArgs: []string{"serve"},
		wantEnv: with(single, "SERVING_MODEL_STORE=/srv/models", "SERVING_LOAD_MODELS")},
	{name: "user's load_models with the SageMaker store", files: []string{"ml/model/model.py="},
		env: []string{"SERVING_LOAD_MODELS=NONE"}, args: []string{"serve"}, wantArgs: []string{"serve"},
		wantEnv: with(single, "SERVING_LOAD_MODELS=NONE")},
	{name: "a variable set to empty counts as set", files: []string{"ml/model/model.py="},
		env: []string{"SERVING_LOAD_MODELS="}, args: []string{"serve"}, wantArgs: []string{"serve"},
		wantEnv: with(single, "SERVING_LOAD_MODELS=")},
	{name: "SWITCHYARD_CONFIG keys are not overridden",
		files: []string{"ml/model/model.py=", "conf/a.properties=# mine\ninference_address = http://0.0.0.0:7000\nmodel_store: /srv/models\n  python_executable /opt/py\n"},
		env:   []string{"SWITCHYARD_CONFIG=$BASE/conf/a.properties"},
		args:  []string{"serve"}, wantArgs: []string{"serve", "--config", "$BASE/conf/a.properties"},
		wantEnv: with(single, "SERVING_INFERENCE_ADDRESS", "SERVING_MODEL_STORE", "SERVING_LOAD_MODELS",
			"SERVING_PYTHON_EXECUTABLE", "SERVING_MANAGEMENT_ADDRESS=http://0.0.0.0:7000")},
	{name: "commented keys of the config file do not count",
		files: []string{"ml/model/model.py=", "conf/a.properties=#socket_dir=/x\n! python_executable=/y\nsocket_directory=/z\n"},
		env:   []string{"SWITCHYARD_CONFIG=$BASE/conf/a.properties"},
		args:  []string{"serve"}, wantArgs: []string{"serve", "--config", "$BASE/conf/a.properties"},
		wantEnv: single},
	{name: "--config among the serve flags",
		files:    []string{"ml/model/model.py=", "b.properties=load_models=NONE\nsocket_dir=/run/x\n"},
		args:     []string{"serve", "--config=b.properties", "--log-level", "debug"},
		wantArgs: []string{"serve", "--config=b.properties", "--log-level", "debug"},
		wantEnv:  with(single, "SERVING_LOAD_MODELS", "SERVING_SOCKET_DIR")},
	{name: "flags alone mean serve", files: []string{"ml/model/model.py="},
		args: []string{"-log-level", "debug"}, wantArgs: []string{"serve", "-log-level", "debug"}, wantEnv: single},
	{name: "unwritable home moves the cache to the temp folder",
		files: []string{"ml/model/model.py=", "blocker=not a folder"}, env: []string{"HOME=$BASE/blocker/home"},
		args: []string{"serve"}, wantArgs: []string{"serve"},
		wantEnv: with(single, "SWITCHYARD_CACHE_DIR=$TMP/switchyard-cache")},
	{name: "user's cache folder kept",
		files: []string{"ml/model/model.py=", "blocker=not a folder"},
		env:   []string{"HOME=$BASE/blocker/home", "SWITCHYARD_CACHE_DIR=/cache"},
		args:  []string{"serve"}, wantArgs: []string{"serve"},
		wantEnv: with(single, "SWITCHYARD_CACHE_DIR=/cache")},
}

// passCases: client subcommands go to switchyard as they are, with no
// serve defaults added.
var passCases = []serveCase{
	{name: "client subcommand", files: []string{"ml/model/model.py="},
		args: []string{"models", "--url", "http://127.0.0.1:8080"}, wantArgs: []string{"models", "--url", "http://127.0.0.1:8080"},
		wantEnv: map[string]string{}},
	{name: "switchyard spelled out", files: []string{"ml/model/model.py="}, env: []string{"SERVING_SOCKET_DIR=/x"},
		args: []string{"switchyard", "describe", "a b"}, wantArgs: []string{"describe", "a b"},
		wantEnv: map[string]string{"SERVING_SOCKET_DIR": "/x"}},
}

func TestEntrypointStartsServer(t *testing.T) {
	cases := slices.Concat(layoutCases, overrideCases, passCases)
	for _, shell := range shells(t) {
		for _, tc := range cases {
			t.Run(filepath.Base(shell)+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				s := newSandbox(t)
				s.installStub(t)
				s.write(t, tc.files)
				r := s.runEntrypoint(t, shell, tc.env, tc.args...)
				if r.code != 0 {
					t.Fatalf("exit %d\nstderr:\n%s", r.code, r.stderr)
				}
				checkCall(t, s, parseStub(t, r.stdout), r.pid, tc)
			})
		}
	}
}

func checkCall(t *testing.T, s *sandbox, got stubCall, pid int, tc serveCase) {
	t.Helper()
	if got.pid != pid {
		t.Errorf("server ran as pid %d, entrypoint was pid %d: the script must exec it", got.pid, pid)
	}
	want := make([]string, len(tc.wantArgs))
	for i, a := range tc.wantArgs {
		want[i] = s.expand(a)
	}
	if !slices.Equal(got.args, want) {
		t.Errorf("args = %q, want %q", got.args, want)
	}
	wantEnv := map[string]string{}
	for k, v := range tc.wantEnv {
		wantEnv[k] = s.expand(v)
	}
	if !maps.Equal(got.env, wantEnv) {
		t.Errorf("server environment:\n got  %v\n want %v", got.env, wantEnv)
	}
}

func TestEntrypointRunsOtherCommands(t *testing.T) {
	cases := []struct {
		name string
		env  []string
		args []string
		want string
	}{
		{"arbitrary command", nil, []string{"echo", "hello", "world"}, "hello world\n"},
		{"shell with arguments and the user's environment", []string{"SERVING_MODEL_STORE=/mine"},
			[]string{"sh", "-c", `printf '%s|%s|%s' "$0" "$SERVING_MODEL_STORE" "${SERVING_SOCKET_DIR-unset}"`, "x y"},
			"x y|/mine|unset"},
	}
	for _, shell := range shells(t) {
		for _, tc := range cases {
			t.Run(filepath.Base(shell)+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				s := newSandbox(t)
				s.write(t, []string{"ml/model/model.py="})
				r := s.runEntrypoint(t, shell, tc.env, tc.args...)
				if r.code != 0 || r.stdout != tc.want {
					t.Errorf("exit %d, stdout %q; want 0, %q\nstderr:\n%s", r.code, r.stdout, tc.want, r.stderr)
				}
			})
		}
	}
}

func TestEntrypointExecsOtherCommands(t *testing.T) {
	for _, shell := range shells(t) {
		t.Run(filepath.Base(shell), func(t *testing.T) {
			s := newSandbox(t)
			r := s.runEntrypoint(t, shell, nil, "sh", "-c", `echo "$$"`)
			if got := strings.TrimSpace(r.stdout); got != strconv.Itoa(r.pid) {
				t.Errorf("command ran as pid %s, entrypoint was pid %d: the script must exec it", got, r.pid)
			}
		})
	}
}

func TestEntrypointRejectsBadSettings(t *testing.T) {
	cases := []struct {
		name, wantErr string
		env           []string
		args          []string
	}{
		{"port not a number", "SAGEMAKER_BIND_TO_PORT=http is not a port number", []string{"SAGEMAKER_BIND_TO_PORT=http"}, nil},
		{"port zero", "SAGEMAKER_BIND_TO_PORT=0 is not a port number", []string{"SAGEMAKER_BIND_TO_PORT=0"}, nil},
		{"port too large", "SAGEMAKER_BIND_TO_PORT=65536 is not a port number", []string{"SAGEMAKER_BIND_TO_PORT=65536"}, nil},
		{"port far too large", "SAGEMAKER_BIND_TO_PORT=8080808080 is not a port number", []string{"SAGEMAKER_BIND_TO_PORT=8080808080"}, nil},
		{"missing SWITCHYARD_CONFIG", "config file $BASE/none.properties is not readable",
			[]string{"SWITCHYARD_CONFIG=$BASE/none.properties"}, []string{"serve"}},
		{"missing --config", "config file nothere is not readable", nil, []string{"serve", "--config", "nothere"}},
	}
	for _, shell := range shells(t) {
		for _, tc := range cases {
			t.Run(filepath.Base(shell)+"/"+tc.name, func(t *testing.T) {
				t.Parallel()
				s := newSandbox(t)
				s.installStub(t)
				r := s.runEntrypoint(t, shell, tc.env, tc.args...)
				if r.code != 2 || !strings.Contains(r.stderr, s.expand(tc.wantErr)) {
					t.Errorf("exit %d, stderr %q; want 2 and %q", r.code, r.stderr, s.expand(tc.wantErr))
				}
				if r.stdout != "" {
					t.Errorf("the server was started after an error: %q", r.stdout)
				}
			})
		}
	}
}

// TestEntrypointSyntax parses the script with each shell without running
// it, and runs shellcheck as a POSIX sh script when it is installed.
func TestEntrypointSyntax(t *testing.T) {
	checks := map[string][]string{"sh": {"-n"}, "bash": {"-n"}, "shellcheck": {"-s", "sh"}}
	for _, name := range []string{"sh", "bash", "shellcheck"} {
		t.Run(name, func(t *testing.T) {
			path, err := exec.LookPath(name)
			if err != nil {
				t.Skipf("%s is not installed", name)
			}
			out, err := exec.CommandContext(t.Context(), path, append(checks[name], "entrypoint.sh")...).CombinedOutput()
			if err != nil {
				t.Errorf("%s %v entrypoint.sh: %v\n%s", name, checks[name], err, out)
			}
		})
	}
}

// TestEntrypointIsExecutable: the images set the mode themselves, but a
// user who mounts the script over the image's needs it executable too.
func TestEntrypointIsExecutable(t *testing.T) {
	fi, err := os.Stat("entrypoint.sh")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o111 != 0o111 {
		t.Errorf("entrypoint.sh mode %v, want executable by all", fi.Mode().Perm())
	}
	f, err := os.ReadFile("entrypoint.sh")
	if err != nil {
		t.Fatal(err)
	}
	if first, _, _ := strings.Cut(string(f), "\n"); first != "#!/bin/sh" {
		t.Errorf("first line %q, want #!/bin/sh", first)
	}
}
