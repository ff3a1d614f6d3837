package process

import (
	"strings"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
)

// tracebackHeader starts every Python traceback.
const tracebackHeader = "Traceback (most recent call last):"

// chainLines join two tracebacks of one chained exception.
var chainLines = []string{
	"During handling of the above exception, another exception occurred:",
	"The above exception was the direct cause of the following exception:",
}

// record is one log record: a single line, or a Python traceback with the
// logging line that announced it (its head), if any.
type record struct {
	head      string // a line that carried a logging level; "" for a bare traceback
	level     zapcore.Level
	traceback []string // the traceback's lines, header first; nil for a plain line
	afterExc  bool     // the traceback's exception line has been seen
	chained   bool     // a chain line followed it: another traceback comes
}

// message is what the record logs as its message: the head line, else the
// traceback's last line (the exception), which says what went wrong.
func (r *record) message() string {
	if r.head != "" || len(r.traceback) == 0 {
		return r.head
	}
	for i := len(r.traceback) - 1; i >= 0; i-- {
		if s := strings.TrimSpace(r.traceback[i]); s != "" {
			return r.traceback[i]
		}
	}
	return r.traceback[0]
}

// fields are the record's fields besides stream: the whole traceback as one.
func (r *record) fields() []zap.Field {
	if len(r.traceback) == 0 {
		return nil
	}
	end := len(r.traceback)
	for end > 1 && strings.TrimSpace(r.traceback[end-1]) == "" {
		end--
	}
	return []zap.Field{zap.String("traceback", strings.Join(r.traceback[:end], "\n"))}
}

// joiner turns a worker's output lines into log records, so that a Python
// traceback is one record and not one per line: a traceback, from its
// header to its exception line (chained tracebacks included), becomes one
// record together with the logging line just before it when that line
// carried a level of Warn or above (logging.exception writes such a line
// and then the traceback). A bare traceback is logged at Error. The joiner
// holds at most one record back: a leveled warning or error line, in case a
// traceback follows, or a traceback, until a line shows that it has ended.
type joiner struct {
	def     zapcore.Level // the level of a line that carries none
	pending *record
}

// add takes the next line and returns the records it completes, oldest first.
func (j *joiner) add(line string) []*record {
	p := j.pending
	switch {
	case p == nil:
	case p.traceback == nil && line == tracebackHeader:
		p.traceback = []string{line}
		return nil
	case p.traceback != nil && p.continues(line):
		p.traceback = append(p.traceback, line)
		return nil
	}
	done := j.flush()
	if r := j.start(line); r != nil {
		done = append(done, r)
	}
	return done
}

// start begins a record with line; it returns it when it is complete already.
func (j *joiner) start(line string) *record {
	if line == tracebackHeader {
		j.pending = &record{level: zap.ErrorLevel, traceback: []string{line}}
		return nil
	}
	level, leveled := levelOf(line)
	if !leveled {
		level = j.def
	}
	r := &record{head: line, level: level}
	if leveled && level >= zap.WarnLevel {
		j.pending = r
		return nil
	}
	return r
}

// flush returns the record held back, if any, and holds none.
func (j *joiner) flush() []*record {
	p := j.pending
	j.pending = nil
	if p == nil {
		return nil
	}
	return []*record{p}
}

// continues reports whether line belongs to the traceback r holds, and
// notes when it is the exception line.
func (r *record) continues(line string) bool {
	if !r.afterExc {
		if line == "" || line[0] == ' ' || line[0] == '\t' {
			return true // a frame, its source line or its caret line
		}
		r.afterExc = true // the exception line ends the frames
		return true
	}
	if line == tracebackHeader && r.chained {
		r.afterExc, r.chained = false, false
		return true
	}
	if line == "" {
		return true
	}
	for _, c := range chainLines {
		if line == c {
			r.chained = true
			return true
		}
	}
	return false
}
