package frontend

import (
	"bytes"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/frontend/dialect"
	"github.com/switchyard/switchyard/message"
)

// TestAdapterRoutes registers, lists, describes, pins and unregisters an
// adapter through DJL's routes and SageMaker's, and checks the errors.
func TestAdapterRoutes(t *testing.T) {
	f := newFake("lora", "plain")
	ts := startServer(t, f)
	steps := []struct {
		method, path, body string
		code               int
		want               string
	}{
		{"POST", "/models/lora/adapters?name=a&src=/srv/a", "", 200, `{"status":"Adapter a registered"}`},
		{"POST", "/models/lora/adapters", `{"name": "b", "src": "/srv/b", "pin": true}`, 200, `{"status":"Adapter b registered"}`},
		{"GET", "/models/lora/adapters", "", 200, `"adapters":[{"name":"a","src":"/srv/a","preload":true,"pin":false,"loaded":false},{"name":"b"`},
		{"GET", "/models/lora/adapters?limit=1", "", 200, `"nextPageToken":"1"`},
		{"GET", "/models/lora/adapters/b", "", 200, `"pin":true`},
		{"POST", "/models/lora/adapters/a/update?pin=true", "", 200, `{"status":"Adapter a updated"}`},
		{"GET", "/models/lora/adapters/a", "", 200, `"pin":true`},
		{"DELETE", "/models/lora/adapters/a", "", 200, `{"status":"Adapter a unregistered"}`},
		{"POST", "/adapters", `{"name": "c", "src": "/srv/c"}`, 400, "prefixed with a model"},
		{"DELETE", "/adapters/b", "", 200, `{"status":"Adapter b unregistered"}`},
		{"GET", "/models/lora/adapters/a", "", 404, "AdapterNotFoundException"},
		{"POST", "/models/lora/adapters?name=x", "", 400, "name and src are required"},
		{"POST", "/models/lora/adapters?name=x&src=/s&pin=maybe", "", 400, "pin must be true or false"},
		{"GET", "/models/plain/adapters", "", 400, "LoRA is not enabled"},
		{"GET", "/models/nope/adapters", "", 404, "ModelNotFoundException"},
	}
	for _, s := range steps {
		resp, body := ts.do(t, s.method, ts.mgmt+s.path, s.body, map[string]string{"Content-Type": "application/json"})
		if b, err := compactJSON(body); err == nil {
			body = b
		}
		if resp.StatusCode != s.code || !strings.Contains(string(body), s.want) {
			t.Errorf("%s %s: %d %s, want %d with %s", s.method, s.path, resp.StatusCode, body, s.code, s.want)
		}
	}
	one := newFake("lora")
	ts1 := startServer(t, one)
	if resp, body := ts1.do(t, "POST", ts1.mgmt+"/adapters", `{"name": "c", "src": "/srv/c"}`, nil); resp.StatusCode != 200 {
		t.Errorf("SageMaker's POST /adapters with one model: %d %s", resp.StatusCode, body)
	}
	if resp, body := ts1.do(t, "POST", ts1.mgmt+"/adapters", `{"name": "c", "src": "/srv/c"}`, nil); resp.StatusCode != 409 {
		t.Errorf("the same name again: %d %s, want 409", resp.StatusCode, body)
	}
}

// TestAdapterSelection checks that every route's way of naming an adapter
// reaches the worker as the property "adapter", and the base model as the
// job's model.
func TestAdapterSelection(t *testing.T) {
	f := newFake("lora")
	var mu sync.Mutex
	var seen []string
	f.respond = func(model string, j *batching.Job) {
		mu.Lock()
		seen = append(seen, model+"/"+propValue(j.Input.Props, dialect.PropAdapter))
		mu.Unlock()
		j.Finish(&message.Response{Code: 200, Props: []message.Prop{{Key: "content-type", Value: "application/json"}},
			Body: []byte(`{"id":"x","object":"chat.completion","created":1,"model":"m","choices":[{"index":0,"message":{"role":"assistant","content":"ok"},"finish_reason":"stop"}],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}`)})
	}
	ts := startServer(t, f)
	if _, err := f.RegisterAdapter(t.Context(), "lora", adapterReq("tuned")); err != nil {
		t.Fatal(err)
	}
	chat := `{"model": "tuned", "messages": [{"role": "user", "content": "hi"}]}`
	calls := []struct {
		path, body string
		hdr        map[string]string
	}{
		{"/invocations", "{}", map[string]string{"X-Amzn-SageMaker-Target-Model": "lora", "X-Amzn-SageMaker-Adapter-Identifier": "tuned"}},
		{"/predictions/lora?adapter=tuned", "{}", nil},
		{"/invocations", "{}", map[string]string{"X-Amzn-SageMaker-Adapter-Alias": "tuned"}},
		{"/v1/chat/completions", chat, nil},
		{"/model/tuned/converse", `{"messages": [{"role": "user", "content": [{"text": "hi"}]}]}`, nil},
		{"/endpoints/lora/invocations", chat, map[string]string{"X-Amzn-SageMaker-Inference-Component": "tuned"}},
		{"/predictions/lora", "{}", nil},
	}
	for _, c := range calls {
		hdr := map[string]string{"Content-Type": "application/json"}
		for k, v := range c.hdr {
			hdr[k] = v
		}
		if resp, body := ts.do(t, "POST", ts.inf+c.path, c.body, hdr); resp.StatusCode != 200 {
			t.Errorf("%s: %d %s", c.path, resp.StatusCode, body)
		}
	}
	want := []string{"lora/tuned", "lora/tuned", "lora/tuned", "lora/tuned", "lora/tuned", "lora/tuned", "lora/"}
	if strings.Join(seen, " ") != strings.Join(want, " ") {
		t.Errorf("the worker saw %v, want %v", seen, want)
	}
	resp, body := ts.do(t, "POST", ts.inf+"/v1/chat/completions", strings.Replace(chat, "tuned", "nothing", 1),
		map[string]string{"Content-Type": "application/json"})
	var e struct{ Error struct{ Message string } }
	if resp.StatusCode != 404 || json.Unmarshal(body, &e) != nil {
		t.Errorf("an unknown adapter as OpenAI's model: %d %s, want 404", resp.StatusCode, body)
	}
}

// compactJSON re-encodes a JSON body without spaces.
func compactJSON(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	err := json.Compact(&buf, b)
	return buf.Bytes(), err
}
