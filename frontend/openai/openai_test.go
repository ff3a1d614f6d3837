package openai

import (
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
		{"/v1/chat/completions", &d.chat, ""},
		{"/v1/models", &d.list, ""},
		{"/v1/models/a", &d.model, "a"},
		{"/v1/chat", &d.other, ""},
		{"/v1/models/a/b", &d.other, ""},
		{"/v1/", &d.other, ""},
		{"/v1//x", &d.other, ""},
		{"/v1/a/b/c/d/e", &d.other, ""},
		{"/v1", nil, ""},
		{"/v2/health/live", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			got, args, ok := d.Match(dialect.SplitPath([]byte(c.path)))
			if got != c.want || ok != (c.want != nil) || string(args.Name) != c.name {
				t.Errorf("Match(%q) = %p %q %v, want %p %q", c.path, got, args.Name, ok, c.want, c.name)
			}
		})
	}
	if d.other.Plane != 0 || d.other.WriteError == nil {
		t.Error("the claim of /v1/ paths is served by a listener or has no error shape")
	}
}
