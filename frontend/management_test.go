package frontend

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/switchyard/switchyard/api"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// golden compares got with testdata/name, or rewrites it with -update.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs:\n got: %s\nwant: %s", name, got, want)
	}
}

func TestListGolden(t *testing.T) {
	ts := startServer(t, newFake("alpha", "beta", "gamma"))
	cases := []struct {
		name, query, file string
		code              int
	}{
		{"all", "", "list.golden.json", 200},
		{"first page", "?limit=2", "list_page1.golden.json", 200},
		{"second page", "?limit=2&next_page_token=2", "list_page2.golden.json", 200},
		{"past the end", "?next_page_token=9", "list_empty.golden.json", 200},
		{"limit capped", "?limit=1000", "list.golden.json", 200},
		{"limit zero", "?limit=0", "", 400},
		{"limit word", "?limit=ten", "", 400},
		{"token negative", "?next_page_token=-1", "", 400},
		{"token word", "?next_page_token=abc", "", 400},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			resp, body := ts.do(t, "GET", ts.mgmt+"/models"+c.query, "", nil)
			if resp.StatusCode != c.code {
				t.Fatalf("status = %d, want %d (%s)", resp.StatusCode, c.code, body)
			}
			if c.code != 200 {
				mustProblem(t, resp, body)
				return
			}
			golden(t, c.file, body)
		})
	}
}

func TestListPagesCoverEveryModel(t *testing.T) {
	var names []string
	for i := range 250 {
		names = append(names, fmt.Sprintf("m%03d", i))
	}
	ts := startServer(t, newFake(names...))
	seen, token := 0, ""
	for range 10 {
		var page api.ModelList
		resp, body := ts.do(t, "GET", ts.mgmt+"/models?next_page_token="+token, "", nil)
		decode(t, resp, body, &page)
		if len(page.Models) > maxPage {
			t.Fatalf("page of %d models", len(page.Models))
		}
		for _, m := range page.Models {
			if m.ModelName != names[seen] {
				t.Fatalf("model %d = %q, want %q", seen, m.ModelName, names[seen])
			}
			seen++
		}
		if token = page.NextPageToken; token == "" {
			break
		}
	}
	if seen != len(names) {
		t.Errorf("saw %d models, want %d", seen, len(names))
	}
}

func TestDescribeGolden(t *testing.T) {
	f := newFake()
	gpu := int64(852)
	f.records["a"] = api.ModelRecord{
		ModelName: "a", ModelURL: "/models/a", BatchSize: 1, MaxBatchDelayMillis: 100,
		MaxIdleSeconds: 60, QueueSize: 1000, Status: api.StatusHealthy, LoadedAtStartup: true,
		Loaded: true, Pinned: true, LastUsed: time.Date(2025, 1, 2, 3, 5, 0, 0, time.UTC),
		WorkerGroups: []api.WorkerGroup{{
			Device: api.Device{DeviceType: "gpu", DeviceID: 0}, MinWorkers: 1, MaxWorkers: 2,
			Workers: []api.WorkerRecord{{
				ID: 1, PID: 4242, Socket: "/tmp/switchyard.sock.19000",
				StartTime: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC),
				Status:    "READY", GPUMemoryMiB: &gpu, RSSMiB: 1210,
			}},
		}, {Device: api.Device{DeviceType: "cpu", DeviceID: -1}}},
	}
	f.records["bare"] = api.ModelRecord{ModelName: "bare", ModelURL: "/models/bare", Status: api.StatusPending,
		LastUnload: &api.Unload{Time: time.Date(2025, 1, 2, 3, 6, 0, 0, time.UTC), Reason: api.UnloadEvicted, ForModel: "a", Cause: api.EvictMemory}}
	ts := startServer(t, f)
	for _, name := range []string{"a", "bare"} {
		t.Run(name, func(t *testing.T) {
			resp, body := ts.do(t, "GET", ts.mgmt+"/models/"+name, "", nil)
			if resp.StatusCode != 200 {
				t.Fatalf("status = %d (%s)", resp.StatusCode, body)
			}
			golden(t, "describe_"+name+".golden.json", body)
		})
	}
}

func TestRegister(t *testing.T) {
	cases := []struct {
		name, query, body string
		opErr             error
		code              int
		status, model     string
		check             func(t *testing.T, r api.RegisterRequest)
	}{
		{name: "query", query: "?url=/opt/ml/models/resnet&batch_size=4&max_batch_delay=50&min_worker=1&max_worker=2",
			code: 200, status: `Model "resnet" registered.`, model: "resnet",
			check: func(t *testing.T, r api.RegisterRequest) {
				wantInts(t, r.BatchSize, 4, r.MaxBatchDelay, 50, r.MinWorker, 1, r.MaxWorker, 2)
				if r.MaxIdleTime != nil || r.JobQueueSize != nil || !r.Synchronous {
					t.Errorf("unexpected fields: %+v", r)
				}
			}},
		{name: "JSON body", body: `{"url":"s3://b/langid.tar.gz","job_queue_size":"10","max_idle_time":5,"synchronous":false}`,
			code: 202, status: `Model "langid" registration scheduled.`, model: "langid",
			check: func(t *testing.T, r api.RegisterRequest) {
				wantInts(t, r.JobQueueSize, 10, r.MaxIdleTime, 5)
				if r.Synchronous || r.URL != "s3://b/langid.tar.gz" {
					t.Errorf("unexpected fields: %+v", r)
				}
			}},
		{name: "query beats body", query: "?model_name=q", body: `{"url":"/m/x","model_name":"b"}`,
			code: 200, status: `Model "q" registered.`, model: "q"},
		{name: "trailing slash url", query: "?url=file:///opt/models/bert/", code: 200, model: "bert"},
		{name: "null is absent", body: `{"url":"/m/x","batch_size":null}`, code: 200, model: "x",
			check: func(t *testing.T, r api.RegisterRequest) {
				if r.BatchSize != nil {
					t.Errorf("batch_size = %d", *r.BatchSize)
				}
			}},
		{name: "no url", query: "?model_name=x", code: 400, status: "Parameter url is required."},
		{name: "non-numeric", query: "?url=/m/x&batch_size=four", code: 400},
		{name: "negative", query: "?url=/m/x&max_worker=-1", code: 400},
		{name: "min above max", query: "?url=/m/x&min_worker=3&max_worker=2", code: 400},
		{name: "bad synchronous", query: "?url=/m/x&synchronous=maybe", code: 400},
		{name: "bad name", query: "?url=/m/x&model_name=a%20b", code: 400},
		{name: "body not an object", body: `[1]`, code: 400},
		{name: "body not JSON", body: `url=/m/x`, code: 400},
		{name: "exists", query: "?url=/m/taken", code: 409},
		{name: "bad url", query: "?url=/m/none", opErr: fmt.Errorf("%w: /m/none", api.ErrModelURL), code: 404},
		{name: "no memory", query: "?url=/m/big", opErr: fmt.Errorf("%w: needs 80 GiB", api.ErrInsufficientMemory), code: 507},
		{name: "registry says bad request", query: "?url=/m/x", opErr: fmt.Errorf("%w: engine", api.ErrBadRequest), code: 400},
		{name: "other failure", query: "?url=/m/x", opErr: errors.New("disk on fire"), code: 500},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake("taken")
			f.opErr = c.opErr
			ts := startServer(t, f)
			resp, body := ts.do(t, "POST", ts.mgmt+"/models"+c.query, c.body, nil)
			if resp.StatusCode != c.code {
				t.Fatalf("status = %d, want %d (%s)", resp.StatusCode, c.code, body)
			}
			checkStatusOrProblem(t, resp, body, c.status)
			if c.model != "" {
				r := f.lastRegister()
				if r.ModelName != c.model {
					t.Errorf("model name = %q, want %q", r.ModelName, c.model)
				}
				if c.check != nil {
					c.check(t, r)
				}
			}
		})
	}
}

func TestScale(t *testing.T) {
	cases := []struct {
		name, path, query, body string
		code                    int
		status                  string
	}{
		{"sync", "/models/m", "?min_worker=1&max_worker=3", "", 200, `Model "m" worker scaled.`},
		{"async", "/models/m", "?max_worker=3&synchronous=false", "", 202, `Model "m" worker scaling scheduled.`},
		{"JSON body", "/models/m", "", `{"min_worker":2}`, 200, `Model "m" worker scaled.`},
		{"nothing to do", "/models/m", "", "", 400, ""},
		{"non-numeric", "/models/m", "?min_worker=x", "", 400, ""},
		{"min above max", "/models/m", "?min_worker=4&max_worker=1", "", 400, ""},
		{"unknown", "/models/zz", "?min_worker=1", "", 404, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake("m")
			ts := startServer(t, f)
			resp, body := ts.do(t, "PUT", ts.mgmt+c.path+c.query, c.body, nil)
			if resp.StatusCode != c.code {
				t.Fatalf("status = %d, want %d (%s)", resp.StatusCode, c.code, body)
			}
			checkStatusOrProblem(t, resp, body, c.status)
		})
	}
}

func TestUnregister(t *testing.T) {
	ts := startServer(t, newFake("m", "keep"))
	for _, m := range []string{"m", "keep"} {
		ts.do(t, "POST", ts.inf+"/predictions/"+m, "x", nil)
	}
	resp, body := ts.do(t, "DELETE", ts.mgmt+"/models/m", "", nil)
	if resp.StatusCode != 200 {
		t.Fatalf("status = %d (%s)", resp.StatusCode, body)
	}
	checkStatusOrProblem(t, resp, body, `Model "m" unregistered`)
	_, scrape := ts.do(t, "GET", ts.mgmt+"/metrics", "", nil)
	if bytes.Contains(scrape, []byte(`model="m"`)) || !bytes.Contains(scrape, []byte(`model="keep"`)) {
		t.Errorf("series after unregister:\n%s", scrape)
	}
	resp, body = ts.do(t, "DELETE", ts.mgmt+"/models/m", "", nil)
	if resp.StatusCode != 404 {
		t.Fatalf("second delete status = %d (%s)", resp.StatusCode, body)
	}
	mustProblem(t, resp, body)
}

// checkStatusOrProblem checks a 2xx {"status"} body (against status when
// given), or the error shape (and its message when status is given).
func checkStatusOrProblem(t *testing.T, resp *http.Response, body []byte, status string) {
	t.Helper()
	if resp.StatusCode >= 300 {
		if p := mustProblem(t, resp, body); status != "" && p.Message != status {
			t.Errorf("message = %q, want %q", p.Message, status)
		}
		return
	}
	var sb statusBody
	decode(t, resp, body, &sb)
	if sb.Status == "" || status != "" && sb.Status != status {
		t.Errorf("status = %q, want %q", sb.Status, status)
	}
}

// decode unmarshals a JSON answer into v.
func decode(t *testing.T, resp *http.Response, body []byte, v any) {
	t.Helper()
	if ct := resp.Header.Get("Content-Type"); ct != contentTypeJSON {
		t.Errorf("Content-Type = %q", ct)
	}
	if err := json.Unmarshal(body, v); err != nil {
		t.Fatalf("body %q: %v", body, err)
	}
}

// wantInts checks pairs of (pointer, value).
func wantInts(t *testing.T, pairs ...any) {
	t.Helper()
	for i := 0; i < len(pairs); i += 2 {
		p, want := pairs[i].(*int), pairs[i+1].(int)
		if p == nil || *p != want {
			t.Errorf("field %d = %v, want %d", i/2, p, want)
		}
	}
}
