package kserve

import (
	"testing"

	"github.com/switchyard/switchyard/frontend/dialect"
)

func TestMatch(t *testing.T) {
	d := New(dialect.Host{})
	cases := []struct {
		path string
		want *dialect.Route
	}{
		{"/v2/health/live", &d.live},
		{"/v2/health/ready/", &d.ready},
		{"/v2/health/ready/x", nil},
		{"/v2/health/dead", nil},
		{"/v2/health", nil},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			if got, _, ok := d.Match(dialect.SplitPath([]byte(c.path))); got != c.want || ok != (c.want != nil) {
				t.Errorf("Match(%q) = %p %v, want %p", c.path, got, ok, c.want)
			}
		})
	}
}
