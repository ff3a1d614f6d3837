package dialect

import (
	"errors"
	"testing"

	"github.com/valyala/fasthttp"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/message"
)

func TestSplitPath(t *testing.T) {
	cases := []struct {
		path string
		n    int
		segs []string
	}{
		{"/invocations", 1, []string{"invocations"}},
		{"/models/a/", 2, []string{"models", "a"}},
		{"/a/b/c/d", 4, []string{"a", "b", "c", "d"}},
		{"/a/b/c/d/e", 5, []string{"a", "b", "c", "d", "e"}},
		{"/a/b/c/d/e/f", 6, []string{"a", "b", "c", "d", "e", "f"}},
		{"/a/b/c/d/e/f/g", 0, nil},
		{"//ping", 0, nil},
		{"/a//b", 0, nil},
		{"/", 0, nil},
		{"", 0, nil},
	}
	for _, c := range cases {
		p := SplitPath([]byte(c.path))
		if p.N != c.n || string(p.Raw) != c.path {
			t.Errorf("SplitPath(%q) has %d segments, want %d", c.path, p.N, c.n)
			continue
		}
		for i := range MaxSegments {
			want := ""
			if i < len(c.segs) {
				want = c.segs[i]
			}
			if string(p.Segs[i]) != want || (i >= p.N) != (p.Segs[i] == nil) {
				t.Errorf("SplitPath(%q) segment %d = %q, want %q", c.path, i, p.Segs[i], want)
			}
		}
	}
	if p := SplitPath([]byte("/v1/models/a")); !p.Is(3, "v1", "models") || p.Is(3, "v1", "chat") || p.Is(2, "v1") {
		t.Error("Is")
	}
}

func TestMethods(t *testing.T) {
	cases := map[Method]string{
		Post: "POST", Get | Head: "GET, HEAD", Get | Head | Post: "GET, HEAD, POST",
		Get | Head | Put | Delete: "GET, HEAD, PUT, DELETE",
	}
	for m, want := range cases {
		if got := m.Allow(); got != want {
			t.Errorf("Allow() = %q, want %q", got, want)
		}
	}
	for in, want := range map[string]Method{"GET": Get, "HEAD": Head, "POST": Post, "PUT": Put, "DELETE": Delete, "PATCH": Other, "get": Other} {
		if got := ParseMethod([]byte(in)); got != want {
			t.Errorf("ParseMethod(%q) = %v, want %v", in, got, want)
		}
	}
}

func TestRequestHeader(t *testing.T) {
	req := Request{Input: message.Input{Props: []message.Prop{
		{Key: "accept", Value: "a"}, {Key: "x-target-model", Value: ""}, {Key: "accept", Value: "b"}}}}
	if req.Header("accept") != "a" || req.Header("x-target-model") != "" || req.Header("Accept") != "" {
		t.Error("Header does not return the first value of a lower-case name")
	}
}

// catalog is a Catalog of names only.
type catalog struct {
	Catalog
	names []string
}

func (c catalog) Names() []string { return c.names }

func TestTargetModel(t *testing.T) {
	two := catalog{names: []string{"a", "odd", "odd.tar.gz"}}
	cases := []struct {
		name  string
		query string
		props []message.Prop
		c     catalog
		want  string
		err   error
	}{
		{"sagemaker header, archive suffix", "", []message.Prop{{Key: HeaderSageMakerTarget, Value: "a.tar.gz"}}, two, "a", nil},
		{"a name ending in .tar.gz", "", []message.Prop{{Key: HeaderTarget, Value: "odd.tar.gz"}}, two, "odd.tar.gz", nil},
		{"sagemaker header beats query", "model_name=odd", []message.Prop{{Key: HeaderSageMakerTarget, Value: "a"}}, two, "a", nil},
		{"query beats header", "model_name=odd", []message.Prop{{Key: "model_name", Value: "a"}}, two, "odd", nil},
		{"header", "", []message.Prop{{Key: "model_name", Value: "a"}}, two, "a", nil},
		{"invalid", "", []message.Prop{{Key: HeaderTarget, Value: "a/b"}}, two, "a/b", api.ErrBadRequest},
		{"none named", "", nil, two, "", api.ErrBadRequest},
		{"the only model", "", nil, catalog{names: []string{"solo"}}, "solo", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ctx fasthttp.RequestCtx
			ctx.Request.URI().SetQueryString(c.query)
			got, err := TargetModel(Request{Ctx: &ctx, Input: message.Input{Props: c.props}}, c.c)
			if got != c.want || !errors.Is(err, c.err) || (err == nil) != (c.err == nil) {
				t.Errorf("TargetModel = %q, %v; want %q, %v", got, err, c.want, c.err)
			}
		})
	}
}
