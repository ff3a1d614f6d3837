package main

import (
	"testing"
)

// describeBody is a describe answer with a failed CPU group and a GPU group.
const describeBody = `[{"workflowName": "llama", "models": [{
  "modelName": "llama", "modelUrl": "/opt/ml/model/llama", "batchSize": 4, "maxBatchDelayMillis": 100,
  "maxIdleSeconds": 60, "queueSize": 1000, "requestInQueue": 7, "status": "Unhealthy",
  "loadedAtStartup": false, "loaded": true, "pinned": true, "lastUsed": "2025-01-02T05:06:07.123Z",
  "rollingBatch": "vllm", "lastError": "worker exited:\tCUDA error",
  "generation": {"contextLength": 8192, "supportsTools": true, "maxChoices": 1},
  "workerGroups": [
    {"device": {"deviceType": "cpu", "deviceId": -1}, "minWorkers": 0, "maxWorkers": 1, "workers": []},
    {"device": {"deviceType": "gpu", "deviceId": 1}, "minWorkers": 1, "maxWorkers": 2, "workers": [
      {"id": 1, "pid": 4242, "socket": "/tmp/switchyard.sock.19000", "startTime": "2025-01-02T03:04:05Z",
       "status": "READY", "temporary": false, "gpuMemoryMiB": 852, "rssMiB": 1210},
      {"id": 12, "pid": 31337, "socket": "/tmp/switchyard.sock.19011", "startTime": "2025-01-02T04:05:06+02:00",
       "status": "STARTING", "temporary": true, "rssMiB": 0}]}]}]}]`

const describeText = `Name:                llama
URL:                 /opt/ml/model/llama
Status:              Unhealthy
Last error:          worker exited: CUDA error
Rolling batch:       vllm
Context length:      8192 tokens
Tool calls:          yes
Max choices (n):     1
Batch size:          4
Max batch delay:     100 ms
Max idle time:       60 s
Queue size:          1000
In queue:            7
Loaded at startup:   no
Loaded:              yes
Pinned:              yes
Last used:           2025-01-02T05:06:07Z

Workers on cpu (min 0, max 1): none

Workers on gpu:1 (min 1, max 2):
  DEVICE   ID   PID     STATUS     TEMPORARY   STARTED                     RSS(MiB)   GPU(MiB)
  gpu:1    1    4242    READY      no          2025-01-02T03:04:05Z        1210       852
  gpu:1    12   31337   STARTING   yes         2025-01-02T04:05:06+02:00   0          -
`

// minimalBody is a describe answer of a healthy model with no workers yet.
const minimalBody = `[{"workflowName": "a", "models": [{"modelName": "a", "modelUrl": "/models/a",
  "batchSize": 1, "maxBatchDelayMillis": 100, "maxIdleSeconds": 60, "queueSize": 1000,
  "requestInQueue": 0, "status": "Healthy", "loadedAtStartup": true, "workerGroups": []}]}]`

const minimalText = `Name:                a
URL:                 /models/a
Status:              Healthy
Batch size:          1
Max batch delay:     100 ms
Max idle time:       60 s
Queue size:          1000
In queue:            0
Loaded at startup:   yes
Loaded:              no
Pinned:              no
Last used:           never

Workers: none
`

// unloadedBody is a describe answer of a model that was evicted.
const unloadedBody = `[{"workflowName": "b", "models": [{"modelName": "b", "modelUrl": "/models/b",
  "batchSize": 1, "maxBatchDelayMillis": 100, "maxIdleSeconds": 60, "queueSize": 1000,
  "requestInQueue": 0, "status": "PENDING", "loadedAtStartup": true, "loaded": false, "pinned": false,
  "lastUsed": "2025-01-02T05:00:00Z",
  "lastUnload": {"time": "2025-01-02T05:01:00Z", "reason": "evicted", "forModel": "c", "cause": "memory"},
  "workerGroups": [{"device": {"deviceType": "cpu", "deviceId": -1}, "minWorkers": 1, "maxWorkers": 1, "workers": []}]}]}]`

const unloadedText = `Name:                b
URL:                 /models/b
Status:              PENDING
Batch size:          1
Max batch delay:     100 ms
Max idle time:       60 s
Queue size:          1000
In queue:            0
Loaded at startup:   yes
Loaded:              no
Pinned:              no
Last used:           2025-01-02T05:00:00Z
Last unloaded:       evicted for c (memory) at 2025-01-02T05:01:00Z

Workers on cpu (min 1, max 1): none
`

func TestDescribe(t *testing.T) {
	get := func(path string) []seen { return []seen{{Method: "GET", Path: path}} }
	tests := []struct {
		name  string
		args  []string
		reply reply
		want  want
	}{
		{"workers per group", []string{"llama"}, reply{status: 200, body: describeBody},
			want{stdout: describeText, reqs: get("/models/llama")}},
		{"no workers", []string{"a"}, reply{status: 200, body: minimalBody},
			want{stdout: minimalText, reqs: get("/models/a")}},
		{"evicted", []string{"b"}, reply{status: 200, body: unloadedBody},
			want{stdout: unloadedText, reqs: get("/models/b")}},
		{"json as is", []string{"--json", "a"}, reply{status: 200, body: minimalBody},
			want{stdout: minimalBody + "\n", reqs: get("/models/a")}},
		{"name escaped", []string{"a b/c"}, reply{status: 400, body: `{"code": 400, "type": "BadRequestException", "message": "Invalid model name."}`},
			want{code: 1, stderr: "switchyard describe: 400 BadRequestException: Invalid model name.\n", reqs: get("/models/a%20b%2Fc")}},
		{"unknown model", []string{"x"}, reply{status: 404, body: `{"code": 404, "type": "ModelNotFoundException", "message": "model not found: x"}`},
			want{code: 1, stderr: "switchyard describe: 404 ModelNotFoundException: model not found: x\n", reqs: get("/models/x")}},
		{"no record", []string{"x"}, reply{status: 200, body: `[]`},
			want{code: 1, stderr: "switchyard describe: unexpected answer: describe: no model record in the answer\n", reqs: get("/models/x")}},
		{"not the describe shape", []string{"x"}, reply{status: 200, body: `{"modelName": "x"}`},
			want{code: 1, has: "switchyard describe: unexpected answer: describe: json: cannot unmarshal object", reqs: get("/models/x")}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeAPI(t, tt.reply)
			code, stdout, stderr := cli(t, append([]string{"describe", "--url", f.URL + "/"}, tt.args...)...)
			tt.want.check(t, f, code, stdout, stderr)
		})
	}
}

// TestDescribeTraceback checks that a last error of several lines (the
// worker's Python traceback) keeps the table readable: its first line in
// the table, all of it after.
func TestDescribeTraceback(t *testing.T) {
	body := `[{"workflowName": "bad", "models": [{"modelName": "bad", "modelUrl": "/s/bad", "batchSize": 1,
  "maxBatchDelayMillis": 100, "maxIdleSeconds": 60, "queueSize": 1000, "requestInQueue": 0, "status": "FAILED",
  "loadedAtStartup": false, "lastError": "worker 19002 answered 500: RuntimeError: broken\nTraceback (most recent call last):\n  File \"model.py\", line 1\nRuntimeError: broken\n",
  "workerGroups": [{"device": {"deviceType": "cpu", "deviceId": -1}, "minWorkers": 1, "maxWorkers": 2, "workers": []}]}]}]`
	f := newFakeAPI(t, reply{status: 200, body: body})
	code, stdout, stderr := cli(t, "describe", "bad", "--url", f.URL)
	wantText := `Name:                bad
URL:                 /s/bad
Status:              FAILED
Last error:          worker 19002 answered 500: RuntimeError: broken
Batch size:          1
Max batch delay:     100 ms
Max idle time:       60 s
Queue size:          1000
In queue:            0
Loaded at startup:   no
Loaded:              no
Pinned:              no
Last used:           never

Last error in full:
  worker 19002 answered 500: RuntimeError: broken
  Traceback (most recent call last):
    File "model.py", line 1
  RuntimeError: broken

Workers on cpu (min 1, max 2): none
`
	want{stdout: wantText, reqs: []seen{{Method: "GET", Path: "/models/bad"}}}.check(t, f, code, stdout, stderr)
}

func TestDescribeSeveralRecords(t *testing.T) {
	body := `[{"workflowName": "w", "models": [` + minimalBody[len(`[{"workflowName": "a", "models": [`):len(minimalBody)-3] +
		`, {"modelName": "b", "modelUrl": "/models/b", "status": "PENDING", "workerGroups": []}]}]`
	f := newFakeAPI(t, reply{status: 200, body: body})
	code, stdout, stderr := cli(t, "describe", "w", "--url", f.URL)
	wantText := minimalText + "\n" + `Name:                b
URL:                 /models/b
Status:              PENDING
Batch size:          0
Max batch delay:     0 ms
Max idle time:       0 s
Queue size:          0
In queue:            0
Loaded at startup:   no
Loaded:              no
Pinned:              no
Last used:           never

Workers: none
`
	want{stdout: wantText, reqs: []seen{{Method: "GET", Path: "/models/w"}}}.check(t, f, code, stdout, stderr)
}
