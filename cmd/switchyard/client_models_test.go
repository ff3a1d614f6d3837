package main

import (
	"net/url"
	"testing"
)

func TestModels(t *testing.T) {
	first := url.Values{"limit": {"100"}}
	second := url.Values{"limit": {"100"}, "next_page_token": {"2"}}
	list := func(q url.Values) seen { return seen{Method: "GET", Path: "/models", Query: q} }
	tests := []struct {
		name    string
		replies []reply
		args    []string
		want    want
	}{
		{"one page",
			[]reply{{status: 200, body: `{"models": [
				{"modelName": "alpha", "modelUrl": "/models/alpha", "status": "READY"},
				{"modelName": "langid", "modelUrl": "s3://bucket/langid.tar.gz", "status": "PENDING"}]}`}},
			nil,
			want{stdout: "NAME     STATUS    URL\n" +
				"alpha    READY     /models/alpha\n" +
				"langid   PENDING   s3://bucket/langid.tar.gz\n",
				reqs: []seen{list(first)}}},
		{"every page",
			[]reply{
				{status: 200, body: `{"models": [{"modelName": "a", "modelUrl": "/m/a", "status": "READY"},
					{"modelName": "b", "modelUrl": "/m/b", "status": "READY"}], "nextPageToken": "2"}`},
				{status: 200, body: `{"models": [{"modelName": "c", "modelUrl": "/m/c", "status": "FAILED"}]}`}},
			nil,
			want{stdout: "NAME   STATUS   URL\na      READY    /m/a\nb      READY    /m/b\nc      FAILED   /m/c\n",
				reqs: []seen{list(first), list(second)}}},
		{"json joins the pages",
			[]reply{
				{status: 200, body: `{"models": [{"modelName": "a", "modelUrl": "/m/a", "status": "READY"}], "nextPageToken": "2"}`},
				{status: 200, body: `{"models": [{"modelName": "c", "modelUrl": "/m/c", "status": "FAILED"}]}`}},
			[]string{"--json"},
			want{stdout: `{
  "models": [
    {
      "modelName": "a",
      "modelUrl": "/m/a",
      "status": "READY"
    },
    {
      "modelName": "c",
      "modelUrl": "/m/c",
      "status": "FAILED"
    }
  ]
}
`, reqs: []seen{list(first), list(second)}}},
		{"none",
			[]reply{{status: 200, body: `{"models": []}`}},
			nil,
			want{stderr: "No models registered.\n", reqs: []seen{list(first)}}},
		{"none as json",
			[]reply{{status: 200, body: `{"models": []}`}},
			[]string{"--json"},
			want{stdout: "{\n  \"models\": []\n}\n", reqs: []seen{list(first)}}},
		{"server error",
			[]reply{{status: 500, body: `{"code": 500, "type": "InternalServerException", "message": "boom"}`}},
			nil,
			want{code: 1, stderr: "switchyard models: 500 InternalServerException: boom\n", reqs: []seen{list(first)}}},
		{"token that does not move on",
			[]reply{
				{status: 200, body: `{"models": [{"modelName": "a"}], "nextPageToken": "2"}`},
				{status: 200, body: `{"models": [{"modelName": "b"}], "nextPageToken": "2"}`}},
			nil,
			want{code: 1, stderr: "switchyard models: unexpected answer: GET /models: page token \"2\" does not move on\n",
				reqs: []seen{list(first), list(second)}}},
		{"not json",
			[]reply{{status: 200, body: `<html>`}},
			nil,
			want{code: 1, has: "switchyard models: unexpected answer: GET /models: invalid character", reqs: []seen{list(first)}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFakeAPI(t, tt.replies...)
			code, stdout, stderr := cli(t, append([]string{"models", "--url", f.URL}, tt.args...)...)
			tt.want.check(t, f, code, stdout, stderr)
		})
	}
}
