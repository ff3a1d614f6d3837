package process

import (
	"bytes"
	"strings"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

const (
	// stderrTailLines is how many stderr lines a process keeps.
	stderrTailLines = 50
	// maxLogLine is where a line without a newline is cut and logged.
	maxLogLine = 64 << 10
)

// lineWriter is a worker's stdout or stderr: it logs every line and hands it
// to onLine. os/exec's copying goroutine is its only writer.
type lineWriter struct {
	log    atomic.Pointer[zap.Logger]
	stream string
	level  zapcore.Level // for lines without a level of their own
	onLine func(string)
	buf    []byte
}

func newLineWriter(log *zap.Logger, stream string, level zapcore.Level, onLine func(string)) *lineWriter {
	w := &lineWriter{stream: stream, level: level, onLine: onLine}
	w.setLogger(log)
	return w
}

// setLogger swaps the logger, to add the pid once the process has one.
func (w *lineWriter) setLogger(log *zap.Logger) { w.log.Store(log) }

// Write logs every complete line of b and keeps the rest for the next call.
func (w *lineWriter) Write(b []byte) (int, error) {
	n := len(b)
	for {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			break
		}
		w.buf = append(w.buf, b[:i]...)
		w.emit()
		b = b[i+1:]
	}
	w.buf = append(w.buf, b...)
	if len(w.buf) >= maxLogLine {
		w.emit()
	}
	return n, nil
}

// flush logs a last line that had no newline; call it after the process
// has been waited for.
func (w *lineWriter) flush() {
	if len(w.buf) > 0 {
		w.emit()
	}
}

func (w *lineWriter) emit() {
	line := strings.TrimRight(string(w.buf), "\r")
	w.buf = w.buf[:0]
	if ce := w.log.Load().Check(lineLevel(line, w.level), line); ce != nil {
		ce.Write(zap.String("stream", w.stream))
	}
	w.onLine(line)
}

// lineLevel reads a Python logging level at the start of line ("INFO:...",
// "WARNING ...", "[ERROR] ..."), or returns def. CRITICAL and FATAL log at
// Error: zap's Fatal would end the front-end.
func lineLevel(line string, def zapcore.Level) zapcore.Level {
	word := strings.TrimPrefix(line, "[")
	end := strings.IndexFunc(word, func(r rune) bool { return r < 'A' || r > 'Z' })
	if end < 0 {
		end = len(word)
	}
	if end < len(word) && !strings.ContainsRune(":] -|", rune(word[end])) {
		return def
	}
	switch word[:end] {
	case "DEBUG":
		return zap.DebugLevel
	case "INFO":
		return zap.InfoLevel
	case "WARN", "WARNING":
		return zap.WarnLevel
	case "ERROR", "CRITICAL", "FATAL":
		return zap.ErrorLevel
	}
	return def
}

// ring keeps the last lines written to it.
type ring struct {
	mu  sync.Mutex
	max int
	buf []string
}

func newRing(max int) *ring { return &ring{max: max} }

func (r *ring) add(line string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.buf) == r.max {
		copy(r.buf, r.buf[1:])
		r.buf = r.buf[:r.max-1]
	}
	r.buf = append(r.buf, line)
}

// lines returns a copy of the kept lines, oldest first.
func (r *ring) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.buf...)
}

// last returns the last line that is not blank.
func (r *ring) last() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.buf) - 1; i >= 0; i-- {
		if s := strings.TrimSpace(r.buf[i]); s != "" {
			return s
		}
	}
	return ""
}
