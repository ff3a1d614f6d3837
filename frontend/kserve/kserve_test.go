package kserve

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
		{"/v2", &d.server, "", ""},
		{"/v2/", &d.server, "", ""},
		{"/v2/health/live", &d.live, "", ""},
		{"/v2/health/ready/", &d.ready, "", ""},
		{"/v2/health/ready/x", &d.other, "", ""},
		{"/v2/health/dead", &d.other, "", ""},
		{"/v2/health", &d.other, "", ""},
		{"/v2/models", &d.other, "", ""},
		{"/v2/models/m", &d.model, "m", ""},
		{"/v2/models/m/ready", &d.modelReady, "m", ""},
		{"/v2/models/m/infer", &d.infer, "m", ""},
		{"/v2/models/m/other", &d.other, "", ""},
		{"/v2/models/m/versions/1", &d.model, "m", "1"},
		{"/v2/models/m/versions/1/ready", &d.modelReady, "m", "1"},
		{"/v2/models/m/versions/7/infer", &d.infer, "m", "7"},
		{"/v2/models/m/versions/1/other", &d.other, "", ""},
		{"/v2/models/m/versions", &d.other, "", ""},
		{"/v2/models/m/versions/1/infer/x", nil, "", ""}, // seven segments: no route at all
		{"/v2/repository/index", &d.index, "", ""},
		{"/v2/repository/models/m/load", &d.load, "m", ""},
		{"/v2/repository/models/m/unload", &d.unload, "m", ""},
		{"/v2/repository/models/m", &d.other, "", ""},
		{"/v2/repository/models/m/reload", &d.other, "", ""},
		{"/v3/models/m", nil, "", ""},
		{"/models/m", nil, "", ""},
	}
	for _, c := range cases {
		t.Run(c.path, func(t *testing.T) {
			got, a, ok := d.Match(dialect.SplitPath([]byte(c.path)))
			if got != c.want || ok != (c.want != nil) || string(a.Name) != c.name || string(a.Version) != c.version {
				t.Errorf("Match(%q) = %p %v %q %q, want %p %q %q", c.path, got, ok, a.Name, a.Version, c.want, c.name, c.version)
			}
		})
	}
}

func TestPlanes(t *testing.T) {
	d := New(dialect.Host{})
	for _, r := range []*dialect.Route{&d.server, &d.live, &d.ready, &d.model, &d.modelReady, &d.infer} {
		if r.Plane != dialect.Inference || r.WriteError == nil {
			t.Errorf("route %+v is not an inference route with the protocol's errors", r)
		}
	}
	for _, r := range []*dialect.Route{&d.index, &d.load, &d.unload} {
		if r.Plane != dialect.Management || r.Methods != dialect.Post || r.WriteError == nil {
			t.Errorf("repository route %+v is not a management POST with the protocol's errors", r)
		}
	}
	if d.other.Plane != 0 || d.other.WriteError == nil {
		t.Error("other /v2 paths are not claimed for the protocol's 404")
	}
}
