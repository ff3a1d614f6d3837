package worker

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

func TestDescribeFailure(t *testing.T) {
	long := make([]string, 40)
	for i := range long {
		long[i] = fmt.Sprint("line ", i)
	}
	tests := []struct {
		name   string
		stderr []string
		want   string
	}{
		{"no stderr", nil, "boom"},
		{"traceback kept whole", append(append([]string{"INFO loading"}, long[:20]...),
			"Traceback (most recent call last):", `  File "model.py", line 3`, "ValueError: bad"),
			"boom\nTraceback (most recent call last):\n  File \"model.py\", line 3\nValueError: bad"},
		{"last traceback only", []string{"Traceback (most recent call last):", "KeyError: a", "Traceback (most recent call last):", "OSError: b"},
			"boom\nTraceback (most recent call last):\nOSError: b"},
		{"no traceback: the last lines", long, "boom\n" + strings.Join(long[25:], "\n")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := describeFailure(errors.New("boom"), tt.stderr); got != tt.want {
				t.Errorf("describeFailure =\n%s\nwant\n%s", got, tt.want)
			}
		})
	}
}

func TestFirstLine(t *testing.T) {
	for in, want := range map[string]string{"": "", "a": "a", "a\nb\nc": "a", "\nb": ""} {
		if got := firstLine(in); got != want {
			t.Errorf("firstLine(%q) = %q, want %q", in, got, want)
		}
	}
}
