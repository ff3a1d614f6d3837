package djl

import (
	"testing"

	"github.com/switchyard/switchyard/frontend/dialect"
)

func TestMatch(t *testing.T) {
	d := New(dialect.Host{})
	cases := []struct {
		path          string
		want          *dialect.Route
		name, version string
	}{
		{"/invocations", &d.invocations, "", ""},
		{"/ping", &d.ping, "", ""},
		{"/ping/", &d.ping, "", ""},
		{"/models", &d.models, "", ""},
		{"/models/", &d.models, "", ""},
		{"/models/a", &d.model, "a", ""},
		{"/models/a/invoke", &d.invoke, "a", ""},
		{"/models/a/other", nil, "", ""},
		{"/predictions/a", &d.predict, "a", ""},
		{"/predictions/a/2", &d.predict, "a", "2"},
		{"/predictions", nil, "", ""},
		{"/predictions/a/2/3", nil, "", ""},
		{"/invocations/x", nil, "", ""},
		{"//ping", nil, "", ""},
		{"/metrics", nil, "", ""},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			got, args, ok := d.Match(dialect.SplitPath([]byte(c.path)))
			if got != c.want || ok != (c.want != nil) || string(args.Name) != c.name || string(args.Version) != c.version {
				t.Errorf("Match(%q) = %p %q %q %v, want %p %q %q", c.path, got, args.Name, args.Version, ok, c.want, c.name, c.version)
			}
		})
	}
}
