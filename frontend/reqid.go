package frontend

import (
	"math/rand/v2"
	"sync/atomic"

	"github.com/valyala/fasthttp"
)

const (
	headerRequestID = "X-Request-Id"
	maxRequestIDLen = 128
)

// requestIDKey is headerRequestID in fasthttp's canonical form, so setting
// it skips normalization.
var requestIDKey = []byte(headerRequestID)

// idSource hands out request ids shaped like UUIDs: 64 random bits chosen
// when the server starts, then a 64-bit counter passed through a bijective
// mixer, so ids never repeat within a process and need no locking.
type idSource struct {
	prefix uint64
	n      atomic.Uint64
}

func newIDSource() *idSource { return &idSource{prefix: rand.Uint64()} }

func (g *idSource) next() string {
	var b [36]byte
	g.fill(&b)
	return string(b[:])
}

// fill writes a fresh id into b.
func (g *idSource) fill(b *[36]byte) {
	putHex(b[0:8], g.prefix>>32, 8)
	b[8] = '-'
	putHex(b[9:13], g.prefix>>16, 4)
	b[13] = '-'
	putHex(b[14:18], g.prefix, 4)
	b[18] = '-'
	lo := mix64(g.n.Add(1))
	putHex(b[19:23], lo>>48, 4)
	b[23] = '-'
	putHex(b[24:36], lo, 12)
}

// putHex writes the low n hex digits of v into dst[:n].
func putHex(dst []byte, v uint64, n int) {
	const digits = "0123456789abcdef"
	for i := n - 1; i >= 0; i-- {
		dst[i] = digits[v&0xf]
		v >>= 4
	}
}

// mix64 is splitmix64's finalizer, a bijection on uint64.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// requestID returns the client's x-request-id when it is sane, else a fresh
// id, and sets it on the response.
func (s *Server) requestID(ctx *fasthttp.RequestCtx) string {
	v := ctx.Request.Header.Peek(headerRequestID)
	var fresh [36]byte
	if !saneRequestID(v) {
		s.ids.fill(&fresh)
		v = fresh[:]
	}
	ctx.Response.Header.SetCanonical(requestIDKey, v)
	return string(v)
}

// saneRequestID reports whether v is 1 to 128 printable ASCII characters.
func saneRequestID(v []byte) bool {
	if len(v) == 0 || len(v) > maxRequestIDLen {
		return false
	}
	for _, c := range v {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}
