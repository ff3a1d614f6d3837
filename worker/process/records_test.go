package process

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// tb is a traceback of two frames ending in exc.
func tb(exc string) []string {
	return []string{
		tracebackHeader,
		`  File "/m/model.py", line 6, in _connect`,
		`    raise ConnectionError(url)`,
		`    ^^^^^^^^^^^^^^^^^^^^^^^^^^`,
		`  File "/m/model.py", line 10, in <module>`,
		`    _connect(u)`,
		exc,
	}
}

// logged is one record as the tests compare it.
type logged struct {
	level     zapcore.Level
	msg       string
	traceback string
}

func TestJoiner(t *testing.T) {
	chained := append(append(tb("OSError: a"), "", chainLines[0], ""), tb("ValueError: b")...)
	tests := []struct {
		name  string
		lines []string
		want  []logged
	}{
		{
			name:  "plain lines are records at once",
			lines: []string{"hello", "INFO switchyard: ready", "DEBUG x"},
			want:  []logged{{zap.WarnLevel, "hello", ""}, {zap.InfoLevel, "INFO switchyard: ready", ""}, {zap.DebugLevel, "DEBUG x", ""}},
		},
		{
			name:  "a bare traceback is one record at error, named by its exception",
			lines: append(tb("ConnectionError: x"), "next"),
			want:  []logged{{zap.ErrorLevel, "ConnectionError: x", strings.Join(tb("ConnectionError: x"), "\n")}, {zap.WarnLevel, "next", ""}},
		},
		{
			name:  "logging.exception: the error line and its traceback are one record",
			lines: append([]string{"ERROR switchyard.server: load failed"}, tb("KeyError: 'k'")...),
			want:  []logged{{zap.ErrorLevel, "ERROR switchyard.server: load failed", strings.Join(tb("KeyError: 'k'"), "\n")}},
		},
		{
			name:  "a warning with exc_info keeps its level",
			lines: append([]string{"WARNING x: retrying"}, tb("TimeoutError")...),
			want:  []logged{{zap.WarnLevel, "WARNING x: retrying", strings.Join(tb("TimeoutError"), "\n")}},
		},
		{
			name:  "a held error line without a traceback is logged alone",
			lines: []string{"ERROR x: bad", "INFO y: fine"},
			want:  []logged{{zap.ErrorLevel, "ERROR x: bad", ""}, {zap.InfoLevel, "INFO y: fine", ""}},
		},
		{
			name:  "a chained exception is one record",
			lines: append(append([]string{}, chained...), "", "after"),
			want:  []logged{{zap.ErrorLevel, "ValueError: b", strings.Join(chained, "\n")}, {zap.WarnLevel, "after", ""}},
		},
		{
			name:  "two tracebacks in a row are two records",
			lines: append(tb("A: 1"), tb("B: 2")...),
			want:  []logged{{zap.ErrorLevel, "A: 1", strings.Join(tb("A: 1"), "\n")}, {zap.ErrorLevel, "B: 2", strings.Join(tb("B: 2"), "\n")}},
		},
		{
			name:  "a traceback cut off at the end is still logged",
			lines: tb("E: cut")[:3],
			want:  []logged{{zap.ErrorLevel, `    raise ConnectionError(url)`, strings.Join(tb("E: cut")[:3], "\n")}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			j := joiner{def: zap.WarnLevel}
			var got []logged
			keep := func(rs []*record) {
				for _, r := range rs {
					l := logged{level: r.level, msg: r.message()}
					for _, f := range r.fields() {
						l.traceback = f.String
					}
					got = append(got, l)
				}
			}
			for _, line := range tt.lines {
				keep(j.add(line))
			}
			keep(j.flush())
			if len(got) != len(tt.want) {
				t.Fatalf("%d records %+v, want %d %+v", len(got), got, len(tt.want), tt.want)
			}
			for i := range got {
				if got[i] != tt.want[i] {
					t.Errorf("record %d = %+v\nwant %+v", i, got[i], tt.want[i])
				}
			}
		})
	}
}

// TestLineWriterQuiet checks that a record held back (a traceback that may
// go on) is logged once the output has been quiet for holdFor, while
// onLine sees every line at once.
func TestLineWriterQuiet(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		core, logs := observer.New(zap.DebugLevel)
		var lines int
		w := newLineWriter(zap.New(core), "stderr", zap.WarnLevel, func(string) { lines++ })
		if _, err := w.Write([]byte(strings.Join(tb("ValueError: v"), "\n") + "\n")); err != nil {
			t.Fatal(err)
		}
		if lines != 7 || logs.Len() != 0 {
			t.Fatalf("after the write: %d lines seen, %d records; want 7 and 0 (held back)", lines, logs.Len())
		}
		time.Sleep(holdFor - time.Millisecond)
		synctest.Wait()
		if logs.Len() != 0 {
			t.Fatalf("logged before the output was quiet for %v", holdFor)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if all := logs.All(); len(all) != 1 || all[0].Message != "ValueError: v" || all[0].Level != zap.ErrorLevel {
			t.Fatalf("records %v, want the traceback as one error", all)
		}
		w.flush()
	})
}
