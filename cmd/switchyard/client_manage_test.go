package main

import (
	"net/url"
	"testing"
)

func TestRegisterScaleUnregister(t *testing.T) {
	status := func(code int, msg string) reply {
		return reply{status: code, body: `{"status": "` + msg + `"}`, header: map[string]string{"Content-Type": "application/json"}}
	}
	tests := []struct {
		name  string
		args  []string
		reply reply
		want  want
	}{
		{"register",
			[]string{"register", "/opt/ml/models/langid"},
			status(200, `Model \"langid\" registered.`),
			want{stdout: "Model \"langid\" registered.\n", reqs: []seen{{Method: "POST", Path: "/models",
				Query: url.Values{"url": {"/opt/ml/models/langid"}}}}}},
		{"register every parameter, flags after the url",
			[]string{"register", "s3://bucket/langid.tar.gz", "--name", "lid", "--batch-size", "8", "--max-batch-delay", "50",
				"--max-idle-time", "0", "--queue-size", "10", "--min-worker", "1", "--max-worker", "3", "--async"},
			status(202, `Model \"lid\" registration scheduled.`),
			want{stdout: "Model \"lid\" registration scheduled.\n", reqs: []seen{{Method: "POST", Path: "/models",
				Query: url.Values{"url": {"s3://bucket/langid.tar.gz"}, "model_name": {"lid"}, "batch_size": {"8"},
					"max_batch_delay": {"50"}, "max_idle_time": {"0"}, "job_queue_size": {"10"},
					"min_worker": {"1"}, "max_worker": {"3"}, "synchronous": {"false"}}}}}},
		{"register flags first, json",
			[]string{"register", "--json", "--batch-size=2", "langid"},
			status(200, `Model \"langid\" registered.`),
			want{stdout: `{"status": "Model \"langid\" registered."}` + "\n", reqs: []seen{{Method: "POST", Path: "/models",
				Query: url.Values{"url": {"langid"}, "batch_size": {"2"}}}}}},
		{"register conflict",
			[]string{"register", "langid"},
			reply{status: 409, body: `{"code": 409, "type": "ConflictStatusException", "message": "model already registered: langid"}`},
			want{code: 1, stderr: "switchyard register: 409 ConflictStatusException: model already registered: langid\n",
				reqs: []seen{{Method: "POST", Path: "/models", Query: url.Values{"url": {"langid"}}}}}},
		{"register answer of another shape",
			[]string{"register", "langid"},
			reply{status: 200, body: "done\n"},
			want{stdout: "done\n", reqs: []seen{{Method: "POST", Path: "/models", Query: url.Values{"url": {"langid"}}}}}},
		{"scale both",
			[]string{"scale", "langid", "--min", "1", "--max", "3"},
			status(200, `Model \"langid\" worker scaled.`),
			want{stdout: "Model \"langid\" worker scaled.\n", reqs: []seen{{Method: "PUT", Path: "/models/langid",
				Query: url.Values{"min_worker": {"1"}, "max_worker": {"3"}}}}}},
		{"scale max only, async",
			[]string{"scale", "--async", "langid", "--max", "0"},
			status(202, `Model \"langid\" worker scaling scheduled.`),
			want{stdout: "Model \"langid\" worker scaling scheduled.\n", reqs: []seen{{Method: "PUT", Path: "/models/langid",
				Query: url.Values{"max_worker": {"0"}, "synchronous": {"false"}}}}}},
		{"scale bad request",
			[]string{"scale", "langid", "--min", "3", "--max", "1"},
			reply{status: 400, body: `{"code": 400, "type": "BadRequestException", "message": "min_worker 3 is above max_worker 1."}`},
			want{code: 1, stderr: "switchyard scale: 400 BadRequestException: min_worker 3 is above max_worker 1.\n",
				reqs: []seen{{Method: "PUT", Path: "/models/langid", Query: url.Values{"min_worker": {"3"}, "max_worker": {"1"}}}}}},
		{"unregister",
			[]string{"unregister", "langid"},
			status(200, `Model \"langid\" unregistered`),
			want{stdout: "Model \"langid\" unregistered\n", reqs: []seen{{Method: "DELETE", Path: "/models/langid"}}}},
		{"unregister json",
			[]string{"unregister", "langid", "--json"},
			status(200, `Model \"langid\" unregistered`),
			want{stdout: `{"status": "Model \"langid\" unregistered"}` + "\n", reqs: []seen{{Method: "DELETE", Path: "/models/langid"}}}},
		{"unregister unknown",
			[]string{"unregister", "nope"},
			reply{status: 404, body: `{"code": 404, "type": "ModelNotFoundException", "message": "model not found: nope"}`},
			want{code: 1, stderr: "switchyard unregister: 404 ModelNotFoundException: model not found: nope\n",
				reqs: []seen{{Method: "DELETE", Path: "/models/nope"}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeAPI(t, tt.reply)
			args := append([]string{tt.args[0], "--url", f.URL}, tt.args[1:]...)
			code, stdout, stderr := cli(t, args...)
			tt.want.check(t, f, code, stdout, stderr)
		})
	}
}
