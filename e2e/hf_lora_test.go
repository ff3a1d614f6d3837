package e2e

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/internal/testutil"
)

// loraQuestion is what every LoRA check asks: each fixture adapter was
// trained to answer an event sentence its own way (fixtures/build.py).
const loraQuestion = "Farid Haddad signed a trade deal in Paris on Tuesday."

// loraAdapters are the causal-LM fixture's adapters.
var loraAdapters = []string{"classification", "extraction", "qa", "summarization"}

// loraRig is the causal-LM fixture served with option.enable_lora: the
// base folder, the adapters' folders and their oracle answers.
type loraRig struct {
	base     string
	adapters map[string]string     // name: folder
	want     map[string]chatOracle // "" is the base
}

// newLoRARig builds the fixtures and asks the oracle (peft.PeftModel in
// process) for the greedy answer of the base and of each adapter.
func newLoRARig(t *testing.T) loraRig {
	fx := testutil.Fixtures(t, "qwen2-chat", "qwen2-chat-adapters")
	r := loraRig{base: absFixture(t, fx, "qwen2-chat"), adapters: map[string]string{}}
	for _, name := range loraAdapters {
		dir, err := filepath.Abs(filepath.Join(fx, "qwen2-chat-adapters", name))
		if _, serr := os.Stat(filepath.Join(dir, "adapter_config.json")); err != nil || serr != nil {
			t.Fatalf("adapter fixture %s was not built: %v %v", name, err, serr)
		}
		r.adapters[name] = dir
	}
	oracle(t, map[string]any{"kind": "lora", "folder": r.base, "max_new_tokens": 24, "adapters": r.adapters,
		"messages": []map[string]string{{"role": "user", "content": loraQuestion}}}, &r.want)
	for name, w := range r.want {
		t.Logf("peft %q: %q", name, w.Text)
	}
	return r
}

// folder writes the model folder: serving.properties with LoRA on and the
// given keys, and the named adapters in its adapters/ folder, loaded at
// start as DJL loads them.
func (r loraRig) folder(t *testing.T, store, name string, atStart []string, lines ...string) {
	lines = append([]string{"engine=Python", "option.model_id=" + r.base, "option.enable_lora=true"}, lines...)
	dir := hfFolder(t, store, name, lines...)
	for _, a := range atStart {
		testutil.CopyDir(t, r.adapters[a], filepath.Join(dir, "adapters", a))
	}
}

// loraChat is a greedy chat request for the question, naming fields more.
func loraChat(fields ...string) string {
	return chatBody("qwen", loraQuestion, append([]string{`"max_tokens": 24`, `"temperature": 0`}, fields...)...)
}

// TestHFLoRA serves the causal-LM fixture with option.enable_lora and its
// four adapters, two from the model folder's adapters/ and two registered
// through DJL's route and SageMaker's. Each adapter, selected each way a
// route offers, answers the tokens peft.PeftModel answers in-process, the
// base the plain model's; an unknown adapter is 404 on every route; pin,
// update and unregister work through both APIs. Then, with max_loras=2 and
// one adapter pinned, two clients send round-robin traffic over five
// adapters: every request is answered, no load or eviction ever leaves
// more than two on the device, evictions show in describe, the metrics and
// the log, and the pinned adapter is never evicted.
func TestHFLoRA(t *testing.T) {
	needE2E(t)
	r := newLoRARig(t)
	store, lib := t.TempDir(), t.TempDir()
	r.folder(t, store, "qwen", []string{"classification", "extraction"}, "option.max_loras=2")
	for _, a := range []string{"qa", "summarization"} {
		testutil.CopyDir(t, r.adapters[a], filepath.Join(lib, a))
	}
	testutil.CopyDir(t, r.adapters["qa"], filepath.Join(lib, "qa-copy"))
	const haiku = "global.anthropic.claude-haiku-4-5-20251001-v1:0"
	s := StartServer(t, Options{Store: store, Config: map[string]string{
		"allowed_model_roots": store + "," + lib, "model_aliases": haiku + "=qa"}})
	s.WaitStatus(hfLoadLimit, api.StatusHealthy, "qwen")
	if got := adapterNames(s.Describe("qwen").Adapters); got != "classification,extraction" {
		t.Fatalf("adapters at start %q, want those of the folder's adapters/", got)
	}
	mgmt := func(method, path, body string) answer { return call(t, method, s.Management+path, body) }
	if a := mgmt(http.MethodPost, "/models/qwen/adapters?name=summarization&src="+filepath.Join(lib, "summarization"), ""); a.code != 200 {
		t.Fatalf("DJL's register: %d %s", a.code, a.body)
	}
	if a := mgmt(http.MethodPost, "/adapters", `{"name": "qa", "src": "`+filepath.Join(lib, "qa")+`"}`); a.code != 200 {
		t.Fatalf("SageMaker's register: %d %s", a.code, a.body)
	}
	t.Run("each adapter matches peft", func(t *testing.T) {
		for _, name := range append([]string{""}, loraAdapters...) {
			checkAdapterTokens(t, s, name, r.want[name])
		}
	})
	t.Run("selection on every route", func(t *testing.T) { checkAdapterRoutes(t, s, r.want, haiku) })
	t.Run("unknown adapter", func(t *testing.T) { checkUnknownAdapter(t, s) })
	t.Run("outside the allowed roots", func(t *testing.T) {
		a := mgmt(http.MethodPost, "/models/qwen/adapters?name=stray&src="+t.TempDir(), "")
		if a.code < 400 || a.code >= 500 {
			t.Errorf("an adapter folder outside allowed_model_roots: %d %s", a.code, a.body)
		}
	})
	t.Run("pin and update", func(t *testing.T) {
		if a := mgmt(http.MethodPost, "/models/qwen/adapters/extraction/update?pin=true", ""); a.code != 200 {
			t.Fatalf("pin: %d %s", a.code, a.body)
		}
		var rec api.AdapterRecord
		a := mgmt(http.MethodGet, "/models/qwen/adapters/extraction", "")
		if json.Unmarshal(a.body, &rec) != nil || !rec.Pin || rec.Name != "extraction" {
			t.Errorf("GET after pin: %d %s", a.code, a.body)
		}
	})
	if a := mgmt(http.MethodPost, "/models/qwen/adapters?name=qa-copy&src="+filepath.Join(lib, "qa-copy")+"&preload=false", ""); a.code != 200 {
		t.Fatalf("register qa-copy: %d %s", a.code, a.body)
	}
	t.Run("round robin over five with max_loras=2", func(t *testing.T) {
		checkAdapterResidency(t, s, []string{"classification", "extraction", "qa", "summarization", "qa-copy"}, "extraction")
	})
	t.Run("unregister", func(t *testing.T) {
		if a := mgmt(http.MethodDelete, "/models/qwen/adapters/summarization", ""); a.code != 200 {
			t.Errorf("DJL's unregister: %d %s", a.code, a.body)
		}
		if a := mgmt(http.MethodDelete, "/adapters/qa", ""); a.code != 200 {
			t.Errorf("SageMaker's unregister: %d %s", a.code, a.body)
		}
		for _, name := range []string{"summarization", "qa"} {
			if a := call(t, http.MethodPost, s.Inference+"/v1/chat/completions", strings.Replace(loraChat(), `"qwen"`, `"`+name+`"`, 1)); a.code != 404 {
				t.Errorf("%s after unregister: %d %s", name, a.code, a.body)
			}
		}
		if got := adapterNames(s.Describe("qwen").Adapters); got != "classification,extraction,qa-copy" {
			t.Errorf("adapters after unregister %q", got)
		}
	})
}

// adapterNames lists the adapters' names, comma separated.
func adapterNames(recs []api.AdapterRecord) string {
	var names []string
	for _, r := range recs {
		names = append(names, r.Name)
	}
	return strings.Join(names, ",")
}

// checkAdapterTokens streams the answer of one adapter ("" for the base)
// as JSON lines, the adapter named in the body's "adapters", and compares
// each token with peft's.
func checkAdapterTokens(t *testing.T, s *Server, name string, want chatOracle) {
	t.Helper()
	body := fmt.Sprintf(`{"messages": [{"role": "user", "content": %q}], "max_tokens": 24, "temperature": 0, "stream": true, "adapters": %q}`,
		loraQuestion, name)
	a := call(t, http.MethodPost, s.Inference+"/invocations", body)
	if a.code != 200 {
		t.Fatalf("%q: %d %s", name, a.code, a.body)
	}
	lines := jsonLines(t, a.body)
	var ids []int
	for _, l := range lines[:len(lines)-1] {
		if l.Token != nil {
			ids = append(ids, l.Token.ID)
		}
	}
	if fmt.Sprint(ids) != fmt.Sprint(want.IDs) {
		t.Errorf("adapter %q: tokens %v, peft's %v (%q)", name, ids, want.IDs, want.Text)
	}
}

// checkAdapterRoutes names an adapter each way the routes offer and checks
// the answer is that adapter's.
func checkAdapterRoutes(t *testing.T, s *Server, want map[string]chatOracle, alias string) {
	text := func(a answer) string {
		if a.code != 200 {
			return fmt.Sprintf("status %d: %s", a.code, a.body)
		}
		return decodeCompletion(t, a).Choices[0].Message.Content
	}
	converse := func(modelID string) string {
		a := call(t, http.MethodPost, s.Inference+"/model/"+modelID+"/converse",
			`{"messages": [{"role": "user", "content": [{"text": "`+loraQuestion+`"}]}], "inferenceConfig": {"maxTokens": 24, "temperature": 0}}`)
		var c struct {
			Output struct {
				Message struct{ Content []struct{ Text string } }
			}
		}
		if a.code != 200 || json.Unmarshal(a.body, &c) != nil || len(c.Output.Message.Content) != 1 {
			return fmt.Sprintf("status %d: %s", a.code, a.body)
		}
		return c.Output.Message.Content[0].Text
	}
	inf := s.Inference
	cases := []struct {
		route, adapter, got string
	}{
		{"OpenAI model", "extraction", text(call(t, http.MethodPost, inf+"/v1/chat/completions", strings.Replace(loraChat(), `"qwen"`, `"extraction"`, 1)))},
		{"body adapters", "qa", text(call(t, http.MethodPost, inf+"/invocations", loraChat(`"adapters": "qa"`)))},
		{"adapter header", "classification", text(call(t, http.MethodPost, inf+"/invocations", loraChat(),
			"X-Amzn-SageMaker-Adapter-Identifier", "classification"))},
		{"adapter alias header", "summarization", text(call(t, http.MethodPost, inf+"/invocations", loraChat(),
			"X-Amzn-SageMaker-Adapter-Alias", "summarization"))},
		{"?adapter=", "summarization", text(call(t, http.MethodPost, inf+"/predictions/qwen?adapter=summarization", loraChat()))},
		{"InvokeEndpoint's inference component", "extraction", text(call(t, http.MethodPost, inf+"/endpoints/qwen/invocations", loraChat(),
			"X-Amzn-SageMaker-Inference-Component", "extraction"))},
		{"Converse modelId with a profile prefix", "classification", converse("us.classification")},
		{"Converse modelId through an alias", "qa", converse(alias)},
		{"the base", "", text(call(t, http.MethodPost, inf+"/v1/chat/completions", loraChat()))},
	}
	for _, c := range cases {
		if c.got != want[c.adapter].Text {
			t.Errorf("%s: %q, want adapter %q's %q", c.route, c.got, c.adapter, want[c.adapter].Text)
		}
	}
}

// checkUnknownAdapter names an adapter nobody registered on four routes:
// each answers 404 naming it, never the base model's answer.
func checkUnknownAdapter(t *testing.T, s *Server) {
	inf := s.Inference
	calls := []struct {
		route string
		a     answer
	}{
		{"/invocations body", call(t, http.MethodPost, inf+"/invocations", loraChat(`"adapters": "nobody"`))},
		{"/invocations header", call(t, http.MethodPost, inf+"/invocations", loraChat(), "X-Amzn-SageMaker-Adapter-Identifier", "nobody")},
		{"/v1/chat/completions", call(t, http.MethodPost, inf+"/v1/chat/completions", strings.Replace(loraChat(), `"qwen"`, `"nobody"`, 1))},
		{"Converse", call(t, http.MethodPost, inf+"/model/us.nobody/converse", `{"messages": [{"role": "user", "content": [{"text": "hi"}]}]}`)},
		{"InvokeEndpoint", call(t, http.MethodPost, inf+"/endpoints/qwen/invocations", loraChat(), "X-Amzn-SageMaker-Inference-Component", "nobody")},
	}
	for _, c := range calls {
		if c.a.code != 404 || !strings.Contains(string(c.a.body), "nobody") {
			t.Errorf("%s: %d %s; want 404 naming the adapter", c.route, c.a.code, c.a.body)
		}
	}
}

// adapterLine is the worker's log line of each load.
var adapterLine = regexp.MustCompile(`adapter loaded: (\S+) \((\d+) of max_loras (\d+) on the device\)`)

// checkAdapterResidency: two clients, each sending round-robin over names
// (offset by one), every request 200; then every load the worker logged
// left at most two adapters on the device, and so did every load and
// eviction the server logged; evictions show in describe, the metrics and
// the log, none of pinned.
func checkAdapterResidency(t *testing.T, s *Server, names []string, pinned string) {
	const rounds = 2
	_, before := s.Get(s.Management + "/metrics")
	logStart := len(s.Log())
	var wg sync.WaitGroup
	var mu sync.Mutex
	failed := 0
	for client := range 2 {
		wg.Go(func() {
			for i := range rounds * len(names) {
				name := names[(i+client)%len(names)]
				a := call(t, http.MethodPost, s.Inference+"/invocations", loraChat(`"max_tokens": 4`, `"adapters": "`+name+`"`))
				if a.code != 200 {
					mu.Lock()
					failed++
					mu.Unlock()
					t.Errorf("client %d, %s: %d %s", client, name, a.code, a.body)
				}
			}
		})
	}
	wg.Wait()
	if failed > 0 {
		return
	}
	_, after := s.Get(s.Management + "/metrics")
	var evictions float64
	for _, name := range names {
		series := fmt.Sprintf(`switchyard_adapter_evictions_total{adapter=%q,model="qwen"}`, name)
		evictions += metricValue(after, series) - metricValue(before, series)
	}
	// The server's log reaches the test through a pipe, after the answers:
	// wait for as many eviction lines as the metrics count (a hang guard).
	var log string
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(50 * time.Millisecond) {
		log = s.Log()[logStart:]
		if float64(strings.Count(log, `"msg":"adapter evicted"`)) >= evictions || time.Now().After(deadline) {
			break
		}
	}
	loads := adapterLine.FindAllStringSubmatch(log, -1)
	if len(loads) < len(names) {
		t.Errorf("%d loads logged by the worker for %d adapters", len(loads), len(names))
	}
	for _, l := range loads {
		if n, _ := strconv.Atoi(l[2]); n > 2 || l[3] != "2" {
			t.Errorf("the worker logged %q: more than max_loras=2 on the device", l[0])
		}
	}
	evicted := map[string]int{}
	for _, line := range strings.Split(log, "\n") {
		var rec struct {
			Msg, Adapter string
			Loaded       *int
		}
		if json.Unmarshal([]byte(line), &rec) != nil || (rec.Msg != "adapter loaded" && rec.Msg != "adapter evicted") {
			continue
		}
		if rec.Loaded == nil || *rec.Loaded > 2 {
			t.Errorf("the server logged %s", line)
		}
		if rec.Msg == "adapter evicted" {
			evicted[rec.Adapter]++
		}
	}
	if len(evicted) == 0 || evicted[pinned] > 0 {
		t.Errorf("evictions in the log %v: want some, none of the pinned %s", evicted, pinned)
	}
	loaded := 0
	for _, rec := range s.Describe("qwen").Adapters {
		if rec.Loaded {
			loaded++
		}
		if rec.Name == pinned && (!rec.Loaded || !rec.Pin) {
			t.Errorf("the pinned adapter in describe: %+v", rec)
		}
		if evicted[rec.Name] > 0 && rec.LastUsed.IsZero() {
			t.Errorf("an evicted adapter without lastUsed: %+v", rec)
		}
	}
	if loaded > 2 {
		t.Errorf("describe shows %d adapters loaded", loaded)
	}
	for _, name := range names {
		series := fmt.Sprintf(`switchyard_adapter_evictions_total{adapter=%q,model="qwen"}`, name)
		if d := metricValue(after, series) - metricValue(before, series); d != float64(evicted[name]) {
			t.Errorf("%s rose by %v, the log has %d evictions", series, d, evicted[name])
		}
		series = fmt.Sprintf(`switchyard_adapter_requests_total{adapter=%q,model="qwen"}`, name)
		if d := metricValue(after, series) - metricValue(before, series); d != 2*rounds {
			t.Errorf("%s rose by %v, want %d", series, d, 2*rounds)
		}
	}
}

// metricValue reads one series of a Prometheus text answer; 0 when absent.
func metricValue(text []byte, series string) float64 {
	for _, line := range strings.Split(string(text), "\n") {
		if rest, ok := strings.CutPrefix(line, series+" "); ok {
			v, _ := strconv.ParseFloat(rest, 64)
			return v
		}
	}
	return 0
}

// forwardLine is the worker's debug line of each generate call.
var forwardLine = regexp.MustCompile(`generate: one call for (\d+) sequences \(adapters ([^)]*)\), (\d+) forward passes`)

// TestHFLoRAMixedBatch: eight concurrent requests, two each for three
// adapters and the base, reach the worker as one batch (batch_size=8) and
// go through one model.generate call whose forward passes are one per
// generated token, each request answered with its own adapter's answer.
func TestHFLoRAMixedBatch(t *testing.T) {
	needE2E(t)
	r := newLoRARig(t)
	store := t.TempDir()
	r.folder(t, store, "qwen", []string{"classification", "extraction", "qa"}, "option.max_loras=3", "batch_size=8", "max_batch_delay=60000")
	s := StartServer(t, Options{Store: store, Args: []string{"--log-level", "debug"}})
	s.WaitStatus(hfLoadLimit, api.StatusHealthy, "qwen")
	names := []string{"classification", "", "extraction", "qa", "qa", "", "extraction", "classification"}
	got := make([]string, len(names))
	var wg sync.WaitGroup
	for i, name := range names {
		wg.Go(func() {
			got[i] = decodeCompletion(t, call(t, http.MethodPost, s.Inference+"/invocations", loraChat(`"adapters": "`+name+`"`))).Choices[0].Message.Content
		})
	}
	wg.Wait()
	for i, name := range names {
		if got[i] != r.want[name].Text {
			t.Errorf("request %d (adapter %q): %q, want %q", i, name, got[i], r.want[name].Text)
		}
	}
	calls := forwardLine.FindAllStringSubmatch(s.Log(), -1)
	if len(calls) != 1 || calls[0][1] != "8" {
		t.Fatalf("generate calls %v: want one call for 8 sequences\n%s", calls, s.Log())
	}
	longest := 0
	for _, w := range r.want {
		longest = max(longest, len(w.IDs))
	}
	if passes, _ := strconv.Atoi(calls[0][3]); passes > longest {
		t.Errorf("%d forward passes for at most %d generated tokens: not one pass per step", passes, longest)
	}
	t.Logf("one call: adapters %s, %s forward passes", calls[0][2], calls[0][3])
}
