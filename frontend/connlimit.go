package frontend

import (
	"net"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/switchyard/switchyard/frontend/dialect"
)

// refusal is what a connection past Config.MaxConnections gets before it is
// closed, whatever it sends: a whole HTTP/1.1 answer, written at once,
// without reading the request.
var refusal = func() []byte {
	body := `{"code":503,"type":"` + dialect.TypeUnavailable + `","message":"Too many open connections; try again later."}`
	return []byte("HTTP/1.1 503 Service Unavailable\r\n" +
		"Connection: close\r\n" +
		"Content-Type: application/json\r\n" +
		"Retry-After: 1\r\n" +
		"Content-Length: " + strconv.Itoa(len(body)) + "\r\n" +
		"\r\n" + body)
}()

// refusalWriteTimeout bounds writing the refusal: it goes into the empty
// send buffer of a new socket, so only a broken one takes this long.
const refusalWriteTimeout = 100 * time.Millisecond

// connMetrics count each listener's connections.
type connMetrics struct {
	open    *prometheus.GaugeVec
	refused *prometheus.CounterVec
}

func newConnMetrics(reg prometheus.Registerer) (*connMetrics, error) {
	m := &connMetrics{
		open: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Name: "switchyard_connections_open",
			Help: "Client connections open on a listener (inference, management, or inference+management when one listener serves both).",
		}, []string{"listener"}),
		refused: prometheus.NewCounterVec(prometheus.CounterOpts{
			Name: "switchyard_connections_refused_total",
			Help: "Connections a listener answered 503 and closed because max_connections were already open.",
		}, []string{"listener"}),
	}
	for _, c := range []prometheus.Collector{m.open, m.refused} {
		if err := reg.Register(c); err != nil {
			return nil, err
		}
	}
	return m, nil
}

// capListener counts the connections ln accepts until they are closed and,
// when max is above zero, refuses those past max: each gets the refusal
// and is closed, and Accept goes on to the next.
type capListener struct {
	net.Listener
	max     int64
	n       atomic.Int64
	open    prometheus.Gauge
	refused prometheus.Counter
}

func newCapListener(ln net.Listener, max int, open prometheus.Gauge, refused prometheus.Counter) *capListener {
	return &capListener{Listener: ln, max: int64(max), open: open, refused: refused}
}

// Accept returns the next connection within the cap.
func (l *capListener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		if n := l.n.Add(1); l.max > 0 && n > l.max {
			l.n.Add(-1)
			l.refuse(c)
			continue
		}
		l.open.Inc()
		return &countedConn{Conn: c, l: l}, nil
	}
}

func (l *capListener) refuse(c net.Conn) {
	l.refused.Inc()
	_ = c.SetWriteDeadline(time.Now().Add(refusalWriteTimeout))
	_, _ = c.Write(refusal)
	_ = c.Close()
}

// release counts one connection closed.
func (l *capListener) release() {
	l.n.Add(-1)
	l.open.Dec()
}

// countedConn gives its place back to its listener when first closed.
type countedConn struct {
	net.Conn
	l    *capListener
	once sync.Once
}

func (c *countedConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.l.release)
	return err
}

// SyscallConn exposes the socket, for the peer watch (watch.go).
func (c *countedConn) SyscallConn() (syscall.RawConn, error) { return rawConn(c.Conn) }
