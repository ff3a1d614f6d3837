package e2e

import (
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/internal/testutil"
)

// hfCase is one request to a Hugging Face folder and the oracle request
// whose answer it must equal.
type hfCase struct {
	name   string
	model  string
	body   string
	oracle map[string]any
}

// TestHFTasks serves real Hugging Face folders (serving.properties alone,
// no model.py) for every non-generative task and checks each answer
// through /invocations against transformers called in-process on the same
// folder and inputs: the same JSON shape (a list with one result per input,
// as DJL answers), labels, words and offsets exactly, scores and hidden
// states within float tolerance.
func TestHFTasks(t *testing.T) {
	needE2E(t)
	fx := testutil.Fixtures(t, "bert-cls", "deberta-cls", "bert-ner", "bert-mlm", "bert-qa", "t5-small")
	minilm := testutil.MiniLM(t)
	store := t.TempDir()
	hfFolder(t, store, "cls", "engine=Python", "option.model_id="+absFixture(t, fx, "bert-cls"),
		"option.task=text-classification")
	hfFolder(t, store, "ner", "option.model_id="+absFixture(t, fx, "bert-ner"))
	hfFolder(t, store, "mlm", "option.model_id="+absFixture(t, fx, "bert-mlm"))
	hfFolder(t, store, "qa", "option.model_id="+absFixture(t, fx, "bert-qa"))
	hfFolder(t, store, "t5", "option.model_id="+absFixture(t, fx, "t5-small"))
	hfFolder(t, store, "minilm", "option.model_id="+minilm, "option.task=feature-extraction")
	s := StartServer(t, Options{Store: store})
	s.WaitStatus(hfLoadLimit, api.StatusHealthy, "cls", "ner", "mlm", "qa", "t5", "minilm")

	pipe := func(task, folder string, params map[string]any, inputs ...any) map[string]any {
		return map[string]any{"kind": "pipeline", "task": task, "folder": folder, "inputs": inputs, "parameters": params}
	}
	cls, ner, mlm := absFixture(t, fx, "bert-cls"), absFixture(t, fx, "bert-ner"), absFixture(t, fx, "bert-mlm")
	qaCtx := "Carmen Diaz lives in Cairo and works for Globex."
	cases := []hfCase{
		{"text-classification, one input", "cls", `{"inputs": "the chef cooked pasta with fresh herbs"}`,
			pipe("text-classification", cls, nil, "the chef cooked pasta with fresh herbs")},
		{"text-classification, a list and top_k", "cls",
			`{"inputs": ["heavy snow is expected in Oslo tomorrow", "the new phone has a faster processor"], "parameters": {"top_k": 2}}`,
			pipe("text-classification", cls, map[string]any{"top_k": 2},
				"heavy snow is expected in Oslo tomorrow", "the new phone has a faster processor")},
		{"token-classification", "ner", `{"inputs": "Alice Smith works for Acme Corp in Paris ."}`,
			pipe("token-classification", ner, nil, "Alice Smith works for Acme Corp in Paris .")},
		{"token-classification, grouped", "ner",
			`{"inputs": ["Bob Jones flew to New York on Monday ."], "parameters": {"aggregation_strategy": "simple"}}`,
			pipe("token-classification", ner, map[string]any{"aggregation_strategy": "simple"},
				"Bob Jones flew to New York on Monday .")},
		{"fill-mask, one input", "mlm", `{"inputs": "paris is the capital of [MASK]."}`,
			pipe("fill-mask", mlm, nil, "paris is the capital of [MASK].")},
		{"fill-mask, two inputs", "mlm", `{"inputs": ["tokyo is the capital of [MASK].", "[MASK] is the capital of italy."]}`,
			pipe("fill-mask", mlm, nil, "tokyo is the capital of [MASK].", "[MASK] is the capital of italy.")},
		{"question-answering", "qa",
			`{"inputs": {"question": "Where does Carmen Diaz live?", "context": "` + qaCtx + `"}}`,
			map[string]any{"kind": "qa", "folder": absFixture(t, fx, "bert-qa"),
				"inputs": []any{map[string]any{"question": "Where does Carmen Diaz live?", "context": qaCtx}}}},
		{"text2text-generation", "t5", `{"inputs": ["reverse: red cat sun"], "parameters": {"max_new_tokens": 8}}`,
			map[string]any{"kind": "seq2seq", "folder": absFixture(t, fx, "t5-small"),
				"inputs": []any{"reverse: red cat sun"}, "parameters": map[string]any{"max_new_tokens": 8}}},
		{"feature-extraction", "minilm", `{"inputs": "A man is playing a guitar."}`,
			pipe("feature-extraction", minilm, nil, "A man is playing a guitar.")},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a := call(t, http.MethodPost, s.Inference+"/invocations", tc.body, "X-Amzn-SageMaker-Target-Model", tc.model)
			if a.code != http.StatusOK {
				t.Fatalf("%d %s", a.code, a.body)
			}
			var want any
			oracle(t, tc.oracle, &want)
			if d := sameJSON(decodeAny(t, a.body), want, "answer"); d != "" {
				t.Errorf("switchyard and transformers differ: %s\nswitchyard: %.400s", d, a.body)
			}
		})
	}
	t.Run("text/plain", func(t *testing.T) {
		a := call(t, http.MethodPost, s.Inference+"/predictions/cls", "we ate soup for dinner at a small restaurant", "Content-Type", "text/plain")
		var want any
		oracle(t, pipe("text-classification", cls, nil, "we ate soup for dinner at a small restaurant"), &want)
		if d := sameJSON(decodeAny(t, a.body), want, "answer"); a.code != http.StatusOK || d != "" {
			t.Errorf("%d %s: %s", a.code, a.body, d)
		}
	})
	checkHFErrors(t, s)
	checkSimilarity(t, s)
}

// checkHFErrors sends bad bodies: each gets 400 with a message naming the
// problem, as DJL's answers would not (it answers 200 with a text).
func checkHFErrors(t *testing.T, s *Server) {
	cases := []struct{ model, body, want string }{
		{"cls", `not json`, "not valid JSON"},
		{"cls", `{"inputs": 42}`, "inputs must be a string for the text-classification task"},
		{"cls", `{"inputs": []}`, "inputs must not be empty"},
		{"cls", `{"inputs": "x", "parameters": [1]}`, "parameters must be an object"},
		{"mlm", `{"inputs": "no mask in this one"}`, "No mask_token"},
		{"ner", `{"inputs": "x", "parameters": {"bogus": 1}}`, "bogus"},
		{"qa", `{"inputs": {"question": "who?"}}`, "question and context"},
	}
	for _, tc := range cases {
		a := call(t, http.MethodPost, s.Inference+"/predictions/"+tc.model, tc.body)
		if a.code != http.StatusBadRequest || !strings.Contains(string(a.body), tc.want) {
			t.Errorf("%s %s: %d %s, want 400 naming %q", tc.model, tc.body, a.code, a.body, tc.want)
		}
	}
}

// checkSimilarity mean-pools all-MiniLM-L6-v2's token vectors, as
// sentence-transformers does, and checks that a paraphrase scores higher
// than an unrelated sentence: the real model's answers mean something.
func checkSimilarity(t *testing.T, s *Server) {
	a := call(t, http.MethodPost, s.Inference+"/predictions/minilm",
		`{"inputs": ["A man is playing a guitar.", "Someone plays an instrument.", "The stock market fell sharply today."]}`)
	var vecs [][][][]float64
	if err := json.Unmarshal(a.body, &vecs); err != nil || len(vecs) != 3 {
		t.Fatalf("feature-extraction of three sentences: %d %.300s (%v)", a.code, a.body, err)
	}
	pooled := make([][]float64, 3)
	for i, v := range vecs {
		pooled[i] = meanPool(v[0])
	}
	near, far := cosine(pooled[0], pooled[1]), cosine(pooled[0], pooled[2])
	t.Logf("all-MiniLM-L6-v2: cos(guitar, instrument) = %.3f, cos(guitar, stock market) = %.3f", near, far)
	if near <= far {
		t.Errorf("the paraphrase scores %.3f, the unrelated sentence %.3f: want the paraphrase higher", near, far)
	}
}

func meanPool(tokens [][]float64) []float64 {
	out := make([]float64, len(tokens[0]))
	for _, tok := range tokens {
		for i, x := range tok {
			out[i] += x / float64(len(tokens))
		}
	}
	return out
}

func cosine(a, b []float64) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += a[i] * b[i]
		na += a[i] * a[i]
		nb += b[i] * b[i]
	}
	return dot / math.Sqrt(na*nb)
}

// TestHFDebertaBatch serves the seed's folder, exactly its four lines with
// option.model_id pointing at the DeBERTa-v2 fixture: the log says it loads
// through the plain transformers path with rolling_batch=disable, and 8
// concurrent requests with batch_size=8 (the server's default here, so the
// folder stays as it is) reach the model in one pipeline call, as the
// worker's debug log line says, each with its own answer.
func TestHFDebertaBatch(t *testing.T) {
	needE2E(t)
	fx := testutil.Fixtures(t, "deberta-cls")
	store := t.TempDir()
	folder := absFixture(t, fx, "deberta-cls")
	hfFolder(t, store, "deberta", "engine=Python", "option.model_id="+folder,
		"option.task=text-classification", "required_memory_mb=2048")
	s := StartServer(t, Options{Store: store, Args: []string{"--log-level", "debug"},
		Config: map[string]string{"batch_size": "8", "max_batch_delay": "60000"}})
	s.WaitStatus(hfLoadLimit, api.StatusHealthy, "deberta")
	if !strings.Contains(s.Log(), "DebertaV2ForSequenceClassification is not supported for optimized inference") ||
		!strings.Contains(s.Log(), "loads through the plain transformers path (the Accelerate path) with rolling_batch=disable") {
		t.Errorf("no log line says the DeBERTa-v2 classifier loads through the plain transformers path:\n%s", s.Log())
	}
	texts := []string{"I hated the kettle", "the jacket was wonderful", "the camera arrived on Monday",
		"what a broken sofa", "I loved the jacket", "the kettle is grey", "never buy this awful camera",
		"everyone should buy this lovely sofa"}
	calls := make([]func() reply, len(texts))
	c := newClient(len(texts))
	for i, text := range texts {
		body, _ := json.Marshal(map[string]string{"inputs": text})
		calls[i] = func() reply {
			return send(c, http.MethodPost, s.Inference+"/invocations", body, "Content-Type", "application/json",
				"X-Amzn-SageMaker-Target-Model", "deberta")
		}
	}
	got := map[string]any{}
	for _, r := range collect(t, async(calls...), len(texts)) {
		if r.code != http.StatusOK {
			t.Fatalf("%d %s", r.code, r.body)
		}
		got[string(r.body)] = true
	}
	var want []any
	oracle(t, map[string]any{"kind": "pipeline", "task": "text-classification", "folder": folder,
		"inputs": texts}, &want)
	for i, w := range want {
		found := false
		for body := range got {
			if sameJSON(decodeAny(t, []byte(body)), []any{w}, "answer") == "" {
				found = true
			}
		}
		if !found {
			t.Errorf("no answer equals transformers' for %q: %s", texts[i], short(w))
		}
	}
	if !strings.Contains(s.Log(), "text-classification: one call for 8 inputs") {
		t.Errorf("the worker's log does not show one call for the 8 requests:\n%s", s.Log())
	}
}
