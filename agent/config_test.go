package agent

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func env(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

func TestLoadConfig(t *testing.T) {
	base := map[string]string{EnvModelID: "us.planner", EnvEndpoint: "langid", EnvCloudRegion: "eu-west-1"}
	c, err := LoadConfig(Settings{}, env(base))
	if err != nil {
		t.Fatal(err)
	}
	if c.ModelID != "us.planner" || c.ReasoningRegion != "eu-west-1" || c.CloudRegion != "eu-west-1" ||
		c.Course.Tool != "extract_structured_json" || c.MaxRounds != DefaultMaxRounds || c.Timeout != DefaultTimeout {
		t.Errorf("defaults: %+v", c)
	}
	more := map[string]string{EnvReasoningRegion: "us-east-1", EnvTargetModel: "a.tar.gz", EnvCourse: "classification"}
	for k, v := range base {
		more[k] = v
	}
	c, err = LoadConfig(Settings{Endpoint: "flagged", MaxRounds: 3, Timeout: time.Second}, env(more))
	if err != nil || c.ReasoningRegion != "us-east-1" || c.CloudRegion != "eu-west-1" || c.Endpoint != "flagged" ||
		c.TargetModel != "a.tar.gz" || c.Course.Name != "classification" || c.MaxRounds != 3 || c.Timeout != time.Second {
		t.Errorf("overrides: %+v %v", c, err)
	}
	for name, tc := range map[string]struct {
		env  map[string]string
		s    Settings
		says string
	}{
		"no model id": {map[string]string{EnvEndpoint: "e"}, Settings{}, EnvModelID + " is not set"},
		"blank id":    {map[string]string{EnvEndpoint: "e", EnvModelID: "  "}, Settings{}, EnvModelID + " is not set"},
		"no endpoint": {map[string]string{EnvModelID: "us.m"}, Settings{}, EnvEndpoint + " is not set"},
		"one round":   {base, Settings{MaxRounds: 1}, "round bound is 1"},
		"no course":   {base, Settings{Course: "nope"}, `course "nope"`},
		"bad timeout": {base, Settings{Timeout: -time.Second}, "negative"},
	} {
		if _, err := LoadConfig(tc.s, env(tc.env)); err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: %v, want %q", name, err, tc.says)
		}
	}
	if _, err := LoadConfig(Settings{}, env(nil)); !errors.Is(err, ErrConfig) {
		t.Errorf("empty environment: %v", err)
	}
}

func TestModelIDWarning(t *testing.T) {
	for id, warn := range map[string]bool{
		"us.anthropic.model-v1:0": false, "eu.x": false, "apac.x": false, "global.x": false,
		"arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.x": false,
		"anthropic.model-v1:0": true, "toolcaller": true, "usa.x": true,
	} {
		got := ModelIDWarning(id)
		if (got != "") != warn || warn && !strings.Contains(got, "may be rejected") {
			t.Errorf("ModelIDWarning(%q) = %q", id, got)
		}
	}
}

func TestInCloud(t *testing.T) {
	s := func(v string) *string { return &v }
	for name, tc := range map[string]struct {
		base *string
		want bool
	}{
		"no override": {nil, true}, "empty": {s(""), true},
		"local": {s("http://127.0.0.1:8080"), false}, "localhost": {s("http://localhost:8080"), false},
		"aws":       {s("https://bedrock-runtime.us-east-1.amazonaws.com"), true},
		"vpc":       {s("https://vpce-1.runtime.sagemaker.us-east-1.vpce.amazonaws.com"), true},
		"china":     {s("https://runtime.sagemaker.cn-north-1.amazonaws.com.cn"), true},
		"lookalike": {s("http://amazonaws.com.example:80"), false},
	} {
		if got := InCloud(tc.base); got != tc.want {
			t.Errorf("%s: InCloud = %v", name, got)
		}
	}
}

func TestChatText(t *testing.T) {
	for body, want := range map[string]string{
		`{"choices": [{"message": {"role": "assistant", "content": "German (deu)"}}]}`: "German (deu)",
		`{"generated_text": "a"}`:                     "a",
		`[{"generated_text": "b"}]`:                   "b",
		`{"choices": [{"message": {"content": ""}}]}`: "",
	} {
		if got, err := ChatText([]byte(body)); err != nil || got != want {
			t.Errorf("ChatText(%s) = %q, %v", body, got, err)
		}
	}
	for _, body := range []string{`[{"label": "deu", "score": 1}]`, `{"choices": []}`, `not json`, `{"choices": [{"message": {"content": null}}]}`} {
		if _, err := ChatText([]byte(body)); err == nil {
			t.Errorf("ChatText(%s) took it", body)
		}
	}
}

func TestNotice(t *testing.T) {
	if got := (Billable{}).Notice("x"); got != "" {
		t.Errorf("nothing billable: %q", got)
	}
	got := Billable{ModelID: "us.m", ModelRegion: "us-east-1", Endpoint: "slm", EndpointRegion: "eu-west-1"}.Notice("switchyard agent cleanup")
	for _, want := range []string{"us.m in us-east-1", "per input and output token", "slm in eu-west-1", "per instance hour",
		"To stop the agent: switchyard agent cleanup.", "aws sagemaker delete-endpoint --endpoint-name slm --region eu-west-1"} {
		if !strings.Contains(got, want) {
			t.Errorf("notice lacks %q:\n%s", want, got)
		}
	}
}

// TestFailure maps errors to what a caller can act on.
func TestFailure(t *testing.T) {
	for _, tc := range []struct {
		err  error
		code int
		kind string
	}{
		{ErrBadRequest, http.StatusBadRequest, "BadRequest"},
		{ErrTooLarge, http.StatusRequestEntityTooLarge, "PayloadTooLarge"},
		{ErrRounds, http.StatusBadGateway, "RoundLimitExceeded"},
		{errors.Join(ErrPlanner, errors.New("dial tcp: connection refused")), http.StatusBadGateway, "ReasoningModelError"},
		{errors.Join(ErrTool, context.DeadlineExceeded), http.StatusGatewayTimeout, "ToolTimeout"},
		{errors.New("boom"), http.StatusInternalServerError, "InternalError"},
	} {
		if code, kind := failure(tc.err); code != tc.code || kind != tc.kind {
			t.Errorf("failure(%v) = %d %s, want %d %s", tc.err, code, kind, tc.code, tc.kind)
		}
	}
}
