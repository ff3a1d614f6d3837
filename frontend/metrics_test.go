package frontend

import (
	"bytes"
	"os/exec"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/message"
)

func TestMetrics(t *testing.T) {
	f := newFake("m")
	ts := startServer(t, f)
	ts.do(t, "POST", ts.inf+"/predictions/m", "x", nil)
	ts.do(t, "POST", ts.inf+"/predictions/m", "x", nil)
	ts.do(t, "POST", ts.inf+"/predictions/unknown", "x", nil)
	f.set(func(f *fakeModels) { f.submitErr = batching.ErrQueueFull })
	ts.do(t, "POST", ts.inf+"/predictions/m", "x", nil)

	want := map[string]float64{`model="m",code="200"`: 2, `model="m",code="503"`: 1, `model="",code="404"`: 1}
	for labels, n := range want {
		parts := strings.Split(labels, ",")
		model := strings.Trim(strings.TrimPrefix(parts[0], "model="), `"`)
		code := strings.Trim(strings.TrimPrefix(parts[1], "code="), `"`)
		if got := testutil.ToFloat64(ts.met.requests.WithLabelValues(model, code)); got != n {
			t.Errorf("requests{%s} = %v, want %v", labels, got, n)
		}
	}
	if n := testutil.CollectAndCount(ts.met.duration); n != 2 {
		t.Errorf("%d duration series, want 2 (m and the unknown-model bucket)", n)
	}

	resp, scrape := ts.do(t, "GET", ts.mgmt+"/metrics", "", nil)
	if resp.StatusCode != 200 || !bytes.Contains(scrape, []byte(`switchyard_request_duration_seconds_count{model="m"} 3`)) {
		t.Fatalf("scrape %d:\n%s", resp.StatusCode, scrape)
	}
	promtool(t, scrape)
}

// promtool lints a scrape with Prometheus's own checker when it is there.
func promtool(t *testing.T, scrape []byte) {
	t.Helper()
	path, err := exec.LookPath("promtool")
	if err != nil {
		t.Skip("promtool not installed")
	}
	cmd := exec.Command(path, "check", "metrics")
	cmd.Stdin = bytes.NewReader(scrape)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
}

func TestMetricsRegistrationConflict(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := New(Config{InferenceAddr: "127.0.0.1:0", ManagementAddr: "127.0.0.1:0", Registry: reg}, newFake()); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Config{InferenceAddr: "127.0.0.1:0", ManagementAddr: "127.0.0.1:0", Registry: reg}, newFake()); err == nil {
		t.Error("a second server registered the same collectors")
	}
}

// TestGenerationMetrics counts the finish reason of whole answers (the
// worker's x-switchyard-finish-reason property) and of streams (their last
// JSON line), per model.
func TestGenerationMetrics(t *testing.T) {
	f := newFake("m")
	ts := startServer(t, f)
	f.set(func(f *fakeModels) {
		f.respond = func(_ string, j *batching.Job) {
			reason := string(j.Input.Content[0].Value)
			if reason == "stream" {
				s := message.NewStream()
				s.Push([]byte(`{"token":{"id":1,"text":"a"}}` + "\n"))
				s.Push([]byte(`{"token":null,"generated_text":"a","finish_reason":"length"}` + "\n"))
				s.Close(nil)
				j.Finish(&message.Response{Code: 200, Props: []message.Prop{{Key: "content-type", Value: "application/jsonlines"}}, Stream: s})
				return
			}
			j.Finish(&message.Response{Code: 200, Body: []byte(`{}`), Props: []message.Prop{{Key: propFinishReason, Value: reason}}})
		}
	})
	for _, body := range []string{"length", "eos", "length", "stream", ""} {
		if resp, b := ts.do(t, "POST", ts.inf+"/predictions/m", body, nil); resp.StatusCode != 200 {
			t.Fatalf("%q: %d %s", body, resp.StatusCode, b)
		}
	}
	want := map[string]float64{"length": 3, "eos": 1}
	for reason, n := range want {
		if got := testutil.ToFloat64(ts.met.generations.WithLabelValues("m", reason)); got != n {
			t.Errorf("generations{model=m,finish_reason=%s} = %v, want %v", reason, got, n)
		}
	}
	if n := testutil.CollectAndCount(ts.met.generations); n != 2 {
		t.Errorf("%d generation series, want 2 (an answer without a reason counts nothing)", n)
	}
}

func TestFinishTap(t *testing.T) {
	tests := []struct {
		chunks []string
		want   string
	}{
		{[]string{`{"token":{"id":1,"text":"finish_reason"}}` + "\n", `{"token":null,"finish_reason":"stop"}` + "\n"}, "stop"},
		{[]string{`{"token":null,"finish_reason":"length"}`}, "length"},
		{[]string{"a\n", `{"finish_reason":"eos"}` + "\n" + `{"finish_reason":"length"}`}, "eos"},
		{[]string{`not json "finish_reason"`}, ""},
		{[]string{`{"token":{"id":1,"text":"x"}}`}, ""},
	}
	for _, tt := range tests {
		var tap finishTap
		for _, c := range tt.chunks {
			tap.feed([]byte(c))
		}
		if tap.reason != tt.want {
			t.Errorf("%q: reason %q, want %q", tt.chunks, tap.reason, tt.want)
		}
	}
}

// TestInFlightMetric: switchyard_requests_in_flight counts the requests a
// model accepted and has not answered, whole or streamed, and not those it
// refused.
func TestInFlightMetric(t *testing.T) {
	f := holding("m")
	ts := startServer(t, f)
	gauge := ts.met.inFlight.WithLabelValues("m")
	done := make(chan struct{})
	for range 3 {
		go func() {
			ts.do(t, "POST", ts.inf+"/predictions/m", "x", nil)
			done <- struct{}{}
		}()
	}
	jobs := []*batching.Job{heldJob(t, f), heldJob(t, f), heldJob(t, f)}
	eventually(t, func() bool { return testutil.ToFloat64(gauge) == 3 })
	f.set(func(f *fakeModels) { f.submitErr = batching.ErrQueueFull })
	if resp, _ := ts.do(t, "POST", ts.inf+"/predictions/m", "x", nil); resp.StatusCode != 503 || testutil.ToFloat64(gauge) != 3 {
		t.Errorf("a refused request: %d, in flight %v", resp.StatusCode, testutil.ToFloat64(gauge))
	}
	jobs[0].Finish(&message.Response{Code: 200, Body: []byte("ok")})
	<-done
	st := message.NewStream()
	jobs[1].Finish(&message.Response{Code: 200, Props: []message.Prop{{Key: "content-type", Value: "application/jsonlines"}}, Stream: st})
	st.Push([]byte(`{"token":{"id":1,"text":"a"}}` + "\n"))
	jobs[2].Finish(&message.Response{Code: 200, Body: []byte("ok")})
	<-done
	if n := testutil.ToFloat64(gauge); n != 1 {
		t.Errorf("%v in flight while one answer streams, want 1", n)
	}
	st.Close(nil)
	<-done
	eventually(t, func() bool { return testutil.ToFloat64(gauge) == 0 })
}
