package dialect

import (
	"bytes"

	"github.com/valyala/fasthttp"
)

// Dialect is one API the front-end speaks. The core asks each dialect of
// its route table in turn for the route of a request's path.
type Dialect interface {
	// Match returns the route p names and its variable segments; ok is
	// false when p is none of the dialect's paths. The route is the
	// dialect's own and lives as long as the dialect.
	Match(p Path) (r *Route, a Args, ok bool)
}

// Route is one route of a dialect. Serve is set for a route that answers
// at once; Decode for an inference route, whose request the core turns into
// a job for a model. A route with no Plane is served by no listener: a
// dialect uses one to claim the error shape of its paths that name nothing
// (the core answers 404).
type Route struct {
	// Plane is the listener table the route belongs to.
	Plane Plane
	// Methods are the methods the route takes; others get 405 with Allow.
	Methods Method
	// Serve answers a request that reaches no model.
	Serve func(ctx *fasthttp.RequestCtx, a Args) error
	// Decode turns an inference request into the core's job description.
	Decode func(req Request) (Job, error)
	// WriteError writes the body (and any header of its own) of an error
	// answer in the dialect's shape: p is what the core made of err. Nil
	// means switchyard's shape, which the core writes.
	WriteError func(ctx *fasthttp.RequestCtx, p Problem, err error)
}

// Plane is a route table; a listener serves one or both.
type Plane uint8

// The two route tables.
const (
	// Inference holds the routes that reach models, /ping and health.
	Inference Plane = 1 << iota
	// Management holds the routes that register, scale and describe models.
	Management
)

// Method is a bit set of HTTP methods.
type Method uint8

// The methods routes take; Other is any method not named.
const (
	Get Method = 1 << iota
	Head
	Post
	Put
	Delete
	Other
)

// methodNames are the names of the named methods, in the order Allow
// lists them.
var methodNames = [...]string{"GET", "HEAD", "POST", "PUT", "DELETE"}

// ParseMethod maps a request method to its bit.
func ParseMethod(m []byte) Method {
	for i, name := range methodNames {
		if string(m) == name {
			return 1 << i
		}
	}
	return Other
}

// Allow is the value of the Allow header for m: its names, comma-separated.
func (m Method) Allow() string {
	var b []byte
	for i, name := range methodNames {
		if m&(1<<i) == 0 {
			continue
		}
		if len(b) > 0 {
			b = append(b, ", "...)
		}
		b = append(b, name...)
	}
	return string(b)
}

// MaxSegments is the most segments a path of a route has
// (/models/{m}/adapters/{a}/update has five).
const MaxSegments = 6

// Path is a request path as the core hands it to the dialects: whole, and
// cut into segments at '/'.
type Path struct {
	// Raw is the whole path, as fasthttp decoded it.
	Raw []byte
	// Segs are the first N segments; the rest are nil.
	Segs [MaxSegments][]byte
	// N is the number of segments: 0 when the path has none, more than
	// MaxSegments or an empty one, which no route matches.
	N int
}

// SplitPath cuts path into segments. One trailing slash is ignored.
func SplitPath(path []byte) Path {
	p := Path{Raw: path}
	path = bytes.TrimPrefix(path, []byte{'/'})
	if len(path) > 0 && path[len(path)-1] == '/' {
		path = path[:len(path)-1]
	}
	n := 0
	for len(path) > 0 {
		seg, rest, _ := bytes.Cut(path, []byte{'/'})
		if n == MaxSegments || len(seg) == 0 {
			p.Segs = [MaxSegments][]byte{}
			return p
		}
		p.Segs[n], n, path = seg, n+1, rest
	}
	p.N = n
	return p
}

// Is reports whether the path has n segments and starts with the given
// ones.
func (p Path) Is(n int, first ...string) bool {
	if p.N != n {
		return false
	}
	for i, s := range first {
		if string(p.Segs[i]) != s {
			return false
		}
	}
	return true
}

// Args are the variable segments of a matched path.
type Args struct {
	Name, Version, Adapter []byte
}
