package process

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

func TestLevelOf(t *testing.T) {
	tests := []struct {
		line  string
		want  zapcore.Level
		found bool
	}{
		{"INFO:root:loaded", zap.InfoLevel, true},
		{"DEBUG:x", zap.DebugLevel, true},
		{"WARNING: careful", zap.WarnLevel, true},
		{"WARN careful", zap.WarnLevel, true},
		{"[ERROR] broke", zap.ErrorLevel, true},
		{"CRITICAL:root:dead", zap.ErrorLevel, true},
		{"FATAL - dead", zap.ErrorLevel, true},
		{"INFORMATION here", 0, false},
		{"Traceback (most recent call last):", 0, false},
		{"ERROR", zap.ErrorLevel, true},
		{"", 0, false},
		{"info: lower case is not a level", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.line, func(t *testing.T) {
			if got, found := levelOf(tt.line); got != tt.want || found != tt.found {
				t.Errorf("levelOf(%q) = %v, %v; want %v, %v", tt.line, got, found, tt.want, tt.found)
			}
		})
	}
}

func TestLineWriter(t *testing.T) {
	long := strings.Repeat("x", maxLogLine)
	tests := []struct {
		name   string
		writes []string
		want   []string
	}{
		{"lines split across writes", []string{"ab", "c\nde", "f\n"}, []string{"abc", "def"}},
		{"several lines in one write", []string{"a\nb\r\nc\n"}, []string{"a", "b", "c"}},
		{"last line without newline", []string{"a\nb"}, []string{"a", "b"}},
		{"empty lines", []string{"\n\n"}, []string{"", ""}},
		{"long line is cut", []string{long, "tail\n"}, []string{long, "tail"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			core, logs := observer.New(zap.DebugLevel)
			var got []string
			w := newLineWriter(zap.New(core), "stdout", zap.InfoLevel, func(s string) { got = append(got, s) })
			for _, s := range tt.writes {
				if n, err := w.Write([]byte(s)); n != len(s) || err != nil {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			w.flush()
			if !slices.Equal(got, tt.want) {
				t.Errorf("lines %.200q, want %.200q", got, tt.want)
			}
			if logs.Len() != len(tt.want) {
				t.Errorf("%d log entries, want %d", logs.Len(), len(tt.want))
			}
		})
	}
}

func TestRing(t *testing.T) {
	r := newRing(3)
	if r.last() != "" || len(r.lines()) != 0 {
		t.Error("a new ring is not empty")
	}
	for i := range 5 {
		r.add(fmt.Sprint(i))
	}
	r.add("  ")
	if got := r.lines(); !slices.Equal(got, []string{"3", "4", "  "}) {
		t.Errorf("lines %q, want the last three", got)
	}
	if got := r.last(); got != "4" {
		t.Errorf("last %q, want the last non-blank line", got)
	}
}

// TestLogsForwarded checks that the worker's output reaches the logger line
// by line, with its level and the model, worker, pid and stream fields.
func TestLogsForwarded(t *testing.T) {
	h := newHarness(t)
	p := h.start(t)
	tests := []struct {
		msg    string
		level  zapcore.Level
		stream string
	}{
		{"INFO:fake:listening", zap.InfoLevel, "stderr"},
		{"a plain stderr line", zap.WarnLevel, "stderr"},
		{"hello from stdout", zap.InfoLevel, "stdout"},
		{ReadyLine, zap.InfoLevel, "stdout"},
	}
	for _, tt := range tests {
		t.Run(tt.msg, func(t *testing.T) {
			entries := h.logs.FilterMessage(tt.msg).All()
			if len(entries) != 1 {
				t.Fatalf("%d entries for %q, want 1", len(entries), tt.msg)
			}
			e := entries[0]
			fields := e.ContextMap()
			if e.Level != tt.level || fields["stream"] != tt.stream || fields["model"] != "echo" ||
				fields["worker"] != int64(p.id) || fields["pid"] != int64(p.PID()) {
				t.Errorf("entry %v %v, want level %v, stream %s, model echo, worker %d, pid %d",
					e.Level, fields, tt.level, tt.stream, p.id, p.PID())
			}
		})
	}
	if tail := p.StderrTail(); !slices.Equal(tail, []string{"INFO:fake:listening", "a plain stderr line"}) {
		t.Errorf("stderr tail %q", tail)
	}
}
