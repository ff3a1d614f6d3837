package worker

import (
	"testing"
	"time"
)

func TestBackoff(t *testing.T) {
	tests := []struct {
		name string
		ran  []time.Duration // before each restart; -1 means a failed start
		want []time.Duration
	}{
		{"doubles to the cap", []time.Duration{-1, -1, -1, -1, -1, -1, -1, -1},
			[]time.Duration{1, 2, 4, 8, 16, 32, 60, 60}},
		{"short runs keep doubling", []time.Duration{time.Second, 59 * time.Second, -1},
			[]time.Duration{1, 2, 4}},
		{"a healthy minute resets", []time.Duration{-1, -1, time.Minute, -1, 2 * time.Minute},
			[]time.Duration{1, 2, 1, 2, 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b backoff
			for i, ran := range tt.ran {
				if ran >= 0 {
					b.ran(ran)
				}
				if got, want := b.next(), tt.want[i]*time.Second; got != want {
					t.Fatalf("restart %d: backoff %v, want %v", i+1, got, want)
				}
			}
		})
	}
}
