package aws

import (
	"bytes"
	"testing"

	"github.com/switchyard/switchyard/frontend/dialect"
)

func TestMatch(t *testing.T) {
	d := New(dialect.Host{})
	cases := []struct {
		path string
		want *dialect.Route
		name string
	}{
		{"/endpoints/e/invocations", &d.invoke, "e"},
		{"/endpoints/e/invocations-response-stream", &d.invokeStream, "e"},
		{"/endpoints/e", nil, ""},
		{"/endpoints/e/other", nil, ""},
		{"/model/us.m/converse", &d.converse, "us.m"},
		{"/model/m/converse-stream/", &d.converseStream, "m"},
		{"/model/arn:aws:bedrock:us-east-1:1:inference-profile/us.m/converse", &d.converse,
			"arn:aws:bedrock:us-east-1:1:inference-profile/us.m"},
		{"/model/a/b/c/converse", &d.converse, "a/b/c"},
		{"/model/a/b/c/d/e/converse", nil, ""},
		{"/model/m/invoke", nil, ""},
		{"/model/converse", nil, ""},
		{"/invocations", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			got, args, ok := d.Match(dialect.SplitPath([]byte(c.path)))
			if got != c.want || ok != (c.want != nil) || string(args.Name) != c.name {
				t.Errorf("Match(%q) = %p %q %v, want %p %q", c.path, got, args.Name, ok, c.want, c.name)
			}
		})
	}
}

// FuzzMatch checks that a matched route's model names are never empty and
// hold a slash only in a Converse model id (an ARN).
func FuzzMatch(f *testing.F) {
	for _, p := range []string{"/endpoints/e/invocations", "/model/arn:aws:bedrock:us-east-1:1:inference-profile/us.m/converse-stream",
		"/model//converse", "/model/a/converse/"} {
		f.Add(p)
	}
	d := New(dialect.Host{})
	f.Fuzz(func(t *testing.T, path string) {
		r, a, ok := d.Match(dialect.SplitPath([]byte(path)))
		if !ok {
			return
		}
		converse := r == &d.converse || r == &d.converseStream
		if len(a.Name) == 0 || !converse && bytes.IndexByte(a.Name, '/') >= 0 || a.Version != nil {
			t.Fatalf("%q: name %q, version %q", path, a.Name, a.Version)
		}
	})
}
