package batching

import (
	"testing"
)

func TestScaleUp(t *testing.T) {
	tests := []struct {
		name                         string
		queued, batch, alive, maxWrk int
		want                         bool
	}{
		{name: "no worker and a job waits", queued: 1, batch: 4, alive: 0, maxWrk: 2, want: true},
		{name: "no worker and nothing waits", queued: 0, batch: 4, alive: 0, maxWrk: 2, want: false},
		{name: "no worker allowed", queued: 5, batch: 1, alive: 0, maxWrk: 0, want: false},
		{name: "backlog over twice the batch", queued: 9, batch: 4, alive: 1, maxWrk: 2, want: true},
		{name: "backlog of exactly twice the batch", queued: 8, batch: 4, alive: 1, maxWrk: 2, want: false},
		{name: "backlog but at the maximum", queued: 100, batch: 4, alive: 2, maxWrk: 2, want: false},
		{name: "above the maximum", queued: 100, batch: 4, alive: 3, maxWrk: 2, want: false},
		{name: "batch size zero counts as one", queued: 3, batch: 0, alive: 1, maxWrk: 4, want: true},
		{name: "batch size zero, small backlog", queued: 2, batch: 0, alive: 1, maxWrk: 4, want: false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ScaleUp(tt.queued, tt.batch, tt.alive, tt.maxWrk); got != tt.want {
				t.Errorf("ScaleUp(%d, %d, %d, %d) = %v, want %v", tt.queued, tt.batch, tt.alive, tt.maxWrk, got, tt.want)
			}
		})
	}
}
