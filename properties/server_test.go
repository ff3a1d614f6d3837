package properties

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

// configWith writes text as a config.properties in a new folder.
func configWith(t *testing.T, text string) string {
	t.Helper()
	file := filepath.Join(t.TempDir(), "config.properties")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestLoadServerEnv(t *testing.T) {
	file := configWith(t, "inference_address=http://127.0.0.1:1111\nmodel_store=store\ncustom.key=file\n")
	dir := filepath.Dir(file)
	tests := []struct {
		name  string
		path  string
		env   Env
		check func(*Server) bool
	}{
		{"env wins over file", file, Env{"SERVING_INFERENCE_ADDRESS": "http://127.0.0.1:2222"},
			func(s *Server) bool { return s.InferenceAddress == "http://127.0.0.1:2222" }},
		{"file value without env", file, nil,
			func(s *Server) bool { return s.InferenceAddress == "http://127.0.0.1:1111" }},
		{"file path is relative to the file", file, nil,
			func(s *Server) bool { return s.ModelStore == filepath.Join(dir, "store") }},
		{"env path is relative to the working directory", file, Env{"SERVING_MODEL_STORE": "other"},
			func(s *Server) bool { return s.ModelStore == filepath.Join(workDir(), "other") }},
		{"no file", "", Env{"SERVING_BATCH_SIZE": "16", "SERVING_MAX_BATCH_DELAY": "5"},
			func(s *Server) bool { return s.BatchSize == 16 && s.MaxBatchDelay == 5*time.Millisecond }},
		{"no file store in the working directory", "", nil,
			func(s *Server) bool { return s.ModelStore == filepath.Join(workDir(), "models") }},
		{"load models from env", file, Env{"SERVING_LOAD_MODELS": "NONE"},
			func(s *Server) bool { return len(s.LoadModels) == 0 }},
		{"env follows the store", file, Env{"SERVING_MODEL_STORE": "/srv/m"},
			func(s *Server) bool {
				return reflect.DeepEqual(s.LoadModels, []ModelRef{{All: true, Path: "/srv/m"}}) &&
					reflect.DeepEqual(s.AllowedModelRoots, []string{"/srv/m"})
			}},
		{"unknown file key overridden", file, Env{"SERVING_CUSTOM_KEY": "env"},
			func(s *Server) bool { return s.Extra["custom.key"] == "env" }},
		{"caps and token from env", file, Env{"SERVING_MAX_WORKERS_PER_MODEL": "4", "SERVING_MAX_WORKERS_TOTAL": "12",
			"SERVING_MANAGEMENT_TOKEN": "t0k", "SERVING_METRICS_REQUIRE_TOKEN": "true"},
			func(s *Server) bool {
				return s.MaxWorkersPerModel == 4 && s.MaxWorkersTotal == 12 && s.ManagementToken.Reveal() == "t0k" &&
					s.MetricsRequireToken && fmt.Sprint(s.ManagementToken) == "[redacted]"
			}},
		{"no caps and no token by default", "", nil,
			func(s *Server) bool {
				return s.MaxWorkersPerModel == 0 && s.MaxWorkersTotal == 0 && s.ManagementToken == "" && !s.MetricsRequireToken
			}},
		{"gomaxprocs auto by default", "", nil, func(s *Server) bool { return s.GOMAXPROCS == 0 }},
		{"gomaxprocs auto", "", Env{"SERVING_GOMAXPROCS": " Auto "}, func(s *Server) bool { return s.GOMAXPROCS == 0 }},
		{"gomaxprocs a number", "", Env{"SERVING_GOMAXPROCS": "3"}, func(s *Server) bool { return s.GOMAXPROCS == 3 }},
		{"unknown env key ignored", file, Env{"SERVING_OPTS": "-Xmx1g"},
			func(s *Server) bool { return len(s.Extra) == 1 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := LoadServer(tt.path, tt.env)
			if err != nil {
				t.Fatal(err)
			}
			if !tt.check(s) {
				t.Errorf("unexpected server: %+v", s)
			}
		})
	}
}

func TestLoadServerEnvError(t *testing.T) {
	_, err := LoadServer("", Env{"SERVING_THROTTLE_ERROR_HTTP_CODE": "busy"})
	var e *Error
	if !errors.As(err, &e) || e.Env != "SERVING_THROTTLE_ERROR_HTTP_CODE" || e.Key != "throttle_error_http_code" {
		t.Fatalf("error %v, want one from $SERVING_THROTTLE_ERROR_HTTP_CODE", err)
	}
	if !strings.Contains(err.Error(), "$SERVING_THROTTLE_ERROR_HTTP_CODE") {
		t.Errorf("message %q does not name the variable", err)
	}
}

func TestLoadServerMissingFile(t *testing.T) {
	_, err := LoadServer(filepath.Join(t.TempDir(), "config.properties"), nil)
	if !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("error %v, want fs.ErrNotExist", err)
	}
}

func TestServerValidate(t *testing.T) {
	tests := []struct {
		name   string
		change func(*Server)
		key    string // "" when valid
	}{
		{"defaults", func(*Server) {}, ""},
		{"bare host:port", func(s *Server) { s.InferenceAddress = "0.0.0.0:9000" }, ""},
		{"any port", func(s *Server) { s.ManagementAddress = "127.0.0.1:0" }, ""},
		{"not an address", func(s *Server) { s.InferenceAddress = "nowhere" }, "inference_address"},
		{"https", func(s *Server) { s.ManagementAddress = "https://127.0.0.1:8443" }, "management_address"},
		{"no model store", func(s *Server) { s.ModelStore = "" }, "model_store"},
		{"relative ref", func(s *Server) { s.LoadModels = []ModelRef{{Name: "a", Path: "a"}} }, "load_models"},
		{"ref name with slash", func(s *Server) { s.LoadModels = []ModelRef{{Name: "a/b", Path: "/a"}} }, "load_models"},
		{"all and more", func(s *Server) { s.LoadModels = []ModelRef{{All: true, Path: "/s"}, {Name: "a", Path: "/a"}} }, ""},
		{"all twice", func(s *Server) { s.LoadModels = []ModelRef{{All: true, Path: "/s"}, {All: true, Path: "/s"}} }, "load_models"},
		{"queue 0", func(s *Server) { s.JobQueueSize = 0 }, "job_queue_size"},
		{"batch 0", func(s *Server) { s.BatchSize = 0 }, "batch_size"},
		{"negative delay", func(s *Server) { s.MaxBatchDelay = -1 }, "max_batch_delay"},
		{"negative idle", func(s *Server) { s.MaxIdleTime = -1 }, "max_idle_time"},
		{"request size 0", func(s *Server) { s.MaxRequestSize = 0 }, "max_request_size"},
		{"throttle 429", func(s *Server) { s.ThrottleErrorHTTPCode = 429 }, ""},
		{"throttle 302", func(s *Server) { s.ThrottleErrorHTTPCode = 302 }, "throttle_error_http_code"},
		{"throttle 600", func(s *Server) { s.ThrottleErrorHTTPCode = 600 }, "throttle_error_http_code"},
		{"no socket dir", func(s *Server) { s.SocketDir = "" }, "socket_dir"},
		{"socket dir too long", func(s *Server) { s.SocketDir = "/" + strings.Repeat("d", 90) }, "socket_dir"},
		{"no python", func(s *Server) { s.PythonExecutable = "" }, "python_executable"},
		{"negative grace", func(s *Server) { s.ShutdownGrace = -time.Second }, "shutdown_grace_period"},
		{"negative retries", func(s *Server) { s.RetryThreshold = -1 }, "retry_threshold"},
		{"relative root", func(s *Server) { s.AllowedModelRoots = []string{"models"} }, "allowed_model_roots"},
		{"negative gomaxprocs", func(s *Server) { s.GOMAXPROCS = -1 }, "gomaxprocs"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := DefaultServer()
			s.SocketDir = "/tmp"
			tt.change(s)
			checkValidate(t, s.Validate(), tt.key)
		})
	}
}

func TestListenAddress(t *testing.T) {
	tests := []struct {
		addr, want string
		ok         bool
	}{
		{"http://127.0.0.1:8080", "127.0.0.1:8080", true},
		{"HTTP://127.0.0.1:8080/", "127.0.0.1:8080", true},
		{"http://0.0.0.0", "0.0.0.0:80", true},
		{"http://[::1]:8084", "[::1]:8084", true},
		{"http://:8080", ":8080", true},
		{"127.0.0.1:0", "127.0.0.1:0", true},
		{":8080", ":8080", true},
		{"localhost:08080", "localhost:8080", true},
		{"localhost", "", false},
		{"http://127.0.0.1:65536", "", false},
		{"http://127.0.0.1:8080/api", "", false},
		{"http://127.0.0.1:8080?x=1", "", false},
		{"http://user@127.0.0.1:8080", "", false},
		{"https://127.0.0.1:8443", "", false},
		{"unix:/tmp/s.sock", "", false},
		{"127.0.0.1:http", "", false},
		{"", "", false},
	}
	for _, tt := range tests {
		t.Run(tt.addr, func(t *testing.T) {
			got, err := listenAddress(tt.addr)
			if (err == nil) != tt.ok || got != tt.want {
				t.Errorf("listenAddress(%q) = %q, %v; want %q, ok %v", tt.addr, got, err, tt.want, tt.ok)
			}
		})
	}
}

func TestSharedListener(t *testing.T) {
	tests := []struct {
		inf, mgmt string
		want      bool
	}{
		{"http://127.0.0.1:8080", "127.0.0.1:8080", true},
		{"http://127.0.0.1:8080", "http://127.0.0.1:8084", false},
		{"http://127.0.0.1:80", "http://127.0.0.1", true},
		{"bad", "bad", false},
	}
	for _, tt := range tests {
		t.Run(tt.inf+" "+tt.mgmt, func(t *testing.T) {
			s := &Server{InferenceAddress: tt.inf, ManagementAddress: tt.mgmt}
			if got := s.SharedListener(); got != tt.want {
				t.Errorf("SharedListener() = %v, want %v", got, tt.want)
			}
		})
	}
}

func TestParseLoadModels(t *testing.T) {
	tests := []struct {
		raw  string
		want []ModelRef
		ok   bool
	}{
		{"ALL", []ModelRef{{All: true, Path: "/store"}}, true},
		{"all", []ModelRef{{All: true, Path: "/store"}}, true},
		{"NONE", nil, true},
		{"", nil, true},
		{"bert", []ModelRef{{Name: "bert", Path: "/store/bert"}}, true},
		{"a=x/y, /abs/z/ ,,", []ModelRef{{Name: "a", Path: "/store/x/y"}, {Name: "z", Path: "/abs/z"}}, true},
		{"n=a=b", []ModelRef{{Name: "n", Path: "/store/a=b"}}, true},
		{"=x", nil, false},
		{"a=", nil, false},
		{"ALL,x=/abs/x", []ModelRef{{All: true, Path: "/store"}, {Name: "x", Path: "/abs/x"}}, true},
		{" y , all ", []ModelRef{{Name: "y", Path: "/store/y"}, {All: true, Path: "/store"}}, true},
		{"ALL,NONE", nil, false},
		{" none ", nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.raw, func(t *testing.T) {
			got, err := parseLoadModels(tt.raw, "/store")
			if (err == nil) != tt.ok || !reflect.DeepEqual(got, tt.want) {
				t.Errorf("parseLoadModels(%q) = %+v, %v; want %+v, ok %v", tt.raw, got, err, tt.want, tt.ok)
			}
		})
	}
}

// TestModelAliases: model_aliases maps cloud model ids (':' and '/' in
// them, as in a properties file) to model names; malformed lists are
// refused naming the key.
func TestModelAliases(t *testing.T) {
	file := configWith(t, "model_aliases=global.anthropic.claude-sonnet-4-5-20250929-v1:0=toolcaller, "+
		"arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.x=chat\n")
	s, err := LoadServer(file, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"global.anthropic.claude-sonnet-4-5-20250929-v1:0": "toolcaller",
		"arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.x": "chat"}
	if !reflect.DeepEqual(s.ModelAliases, want) {
		t.Errorf("aliases %v, want %v", s.ModelAliases, want)
	}
	if s, err := LoadServer("", Env{"SERVING_MODEL_ALIASES": "a:1=b"}); err != nil || s.ModelAliases["a:1"] != "b" {
		t.Errorf("from the environment: %v %v", s, err)
	}
	if s, _ := LoadServer("", nil); s.ModelAliases != nil {
		t.Errorf("no key: %v", s.ModelAliases)
	}
	for _, bad := range []string{"toolcaller", "=toolcaller", "a=", "a=b/c", "a b=c", "a=b,a=c"} {
		_, err := LoadServer("", Env{"SERVING_MODEL_ALIASES": bad})
		var e *Error
		if !errors.As(err, &e) || e.Key != "model_aliases" || !errors.Is(err, ErrInvalid) {
			t.Errorf("%q: %v", bad, err)
		}
	}
}
