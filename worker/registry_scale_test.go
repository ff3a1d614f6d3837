package worker

import (
	"testing"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/batching"
)

func allAnswered(jobs []*batching.Job) bool {
	for _, j := range jobs {
		if !j.Answered() {
			return false
		}
	}
	return true
}

func TestSetCounts(t *testing.T) {
	tests := []struct {
		name             string
		min, max         int
		req              api.ScaleRequest
		wantMin, wantMax int
	}{
		{"both", 1, 2, api.ScaleRequest{MinWorker: ptr(3), MaxWorker: ptr(4)}, 3, 4},
		{"min only", 1, 4, api.ScaleRequest{MinWorker: ptr(2)}, 2, 4},
		{"min above max raises max", 1, 2, api.ScaleRequest{MinWorker: ptr(5)}, 5, 5},
		{"max only", 1, 2, api.ScaleRequest{MaxWorker: ptr(8)}, 1, 8},
		{"max below min lowers min", 3, 4, api.ScaleRequest{MaxWorker: ptr(1)}, 1, 1},
		{"max zero", 1, 2, api.ScaleRequest{MaxWorker: ptr(0)}, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := &Model{}
			m.groups = []*group{{m: m, min: tt.min, max: tt.max}, {m: m, min: tt.min, max: tt.max}}
			m.setCounts(tt.req)
			for i, g := range m.groups {
				if g.min != tt.wantMin || g.max != tt.wantMax {
					t.Errorf("group %d: min %d max %d, want %d %d", i, g.min, g.max, tt.wantMin, tt.wantMax)
				}
			}
		})
	}
}

func TestCheckScale(t *testing.T) {
	tests := []struct {
		name string
		req  api.ScaleRequest
		ok   bool
	}{
		{"none", api.ScaleRequest{}, true},
		{"equal", api.ScaleRequest{MinWorker: ptr(2), MaxWorker: ptr(2)}, true},
		{"negative min", api.ScaleRequest{MinWorker: ptr(-1)}, false},
		{"negative max", api.ScaleRequest{MaxWorker: ptr(-1)}, false},
		{"max below min", api.ScaleRequest{MinWorker: ptr(3), MaxWorker: ptr(2)}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := checkScale(tt.req); (err == nil) != tt.ok {
				t.Errorf("checkScale = %v, want ok %v", err, tt.ok)
			}
		})
	}
}
