package process

import (
	"bytes"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

const (
	// stderrTailLines is how many stderr lines a process keeps.
	stderrTailLines = 50
	// maxLogLine is where a line without a newline is cut and logged.
	maxLogLine = 64 << 10
)

// holdFor is how long the writer waits, after the last line, for a line
// that would continue the record it holds back (a traceback's next line).
const holdFor = 50 * time.Millisecond

// lineWriter is a worker's stdout or stderr: it hands every line to onLine
// at once and logs the lines as records (a Python traceback as one record,
// see joiner). os/exec's copying goroutine is its only writer; a timer logs
// a held-back record once the output has been quiet for holdFor.
type lineWriter struct {
	log    atomic.Pointer[zap.Logger]
	stream string
	onLine func(string)

	mu     sync.Mutex // guards buf, join and timer
	buf    []byte
	join   joiner
	timer  *time.Timer
	closed bool
}

func newLineWriter(log *zap.Logger, stream string, level zapcore.Level, onLine func(string)) *lineWriter {
	w := &lineWriter{stream: stream, onLine: onLine, join: joiner{def: level}}
	w.setLogger(log)
	return w
}

// setLogger swaps the logger, to add the pid once the process has one.
func (w *lineWriter) setLogger(log *zap.Logger) { w.log.Store(log) }

// Write logs every complete line of b and keeps the rest for the next call.
func (w *lineWriter) Write(b []byte) (int, error) {
	n := len(b)
	w.mu.Lock()
	defer w.mu.Unlock()
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
	w.armLocked()
	return n, nil
}

// flush logs a last line that had no newline and the record held back;
// call it after the process has been waited for.
func (w *lineWriter) flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.buf) > 0 {
		w.emit()
	}
	w.write(w.join.flush())
	w.closed = true
	if w.timer != nil {
		w.timer.Stop()
	}
}

// emit takes the line in buf; w.mu is held.
func (w *lineWriter) emit() {
	line := strings.TrimRight(string(w.buf), "\r")
	w.buf = w.buf[:0]
	w.write(w.join.add(line))
	w.onLine(line)
}

// write logs records; w.mu is held.
func (w *lineWriter) write(records []*record) {
	log := w.log.Load()
	for _, r := range records {
		if ce := log.Check(r.level, r.message()); ce != nil {
			ce.Write(append(r.fields(), zap.String("stream", w.stream))...)
		}
	}
}

// armLocked starts the quiet timer when a record is held back.
func (w *lineWriter) armLocked() {
	if w.join.pending == nil || w.closed {
		return
	}
	if w.timer == nil {
		w.timer = time.AfterFunc(holdFor, w.quiet)
		return
	}
	w.timer.Reset(holdFor)
}

// quiet logs the record held back once the output has been quiet.
func (w *lineWriter) quiet() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.write(w.join.flush())
}

// levelOf reads a Python logging level at the start of line ("INFO:...",
// "WARNING ...", "[ERROR] ..."), and whether there is one. CRITICAL and
// FATAL log at Error: zap's Fatal would end the front-end.
func levelOf(line string) (zapcore.Level, bool) {
	word := strings.TrimPrefix(line, "[")
	end := strings.IndexFunc(word, func(r rune) bool { return r < 'A' || r > 'Z' })
	if end < 0 {
		end = len(word)
	}
	if end < len(word) && !strings.ContainsRune(":] -|", rune(word[end])) {
		return 0, false
	}
	switch word[:end] {
	case "DEBUG":
		return zap.DebugLevel, true
	case "INFO":
		return zap.InfoLevel, true
	case "WARN", "WARNING":
		return zap.WarnLevel, true
	case "ERROR", "CRITICAL", "FATAL":
		return zap.ErrorLevel, true
	}
	return 0, false
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
