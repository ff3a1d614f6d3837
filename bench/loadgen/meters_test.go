package main

import (
	"errors"
	"strings"
	"testing"
)

func TestParseAllocs(t *testing.T) {
	tests := []struct {
		name string
		page string
		want allocCounters
		err  error
	}{
		{"both", "# HELP x\ngo_memstats_mallocs_total 1.5e+06\ngo_memstats_alloc_bytes_total 2.25e+08\ngo_gc_duration_seconds 1\n",
			allocCounters{objects: 1.5e6, bytes: 2.25e8}, nil},
		{"one missing", "go_memstats_mallocs_total 1\n", allocCounters{objects: 1}, errMetrics},
		{"not a number", "go_memstats_mallocs_total x\ngo_memstats_alloc_bytes_total 1\n", allocCounters{}, errMetrics},
		{"a prefix is not the name", "go_memstats_mallocs_total_x 1\ngo_memstats_alloc_bytes_total 1\n", allocCounters{bytes: 1}, errMetrics},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseAllocs([]byte(tc.page))
			if !errors.Is(err, tc.err) || (err == nil && got != tc.want) {
				t.Errorf("parseAllocs = %+v, %v; want %+v, %v", got, err, tc.want, tc.err)
			}
		})
	}
}

func TestPerfCount(t *testing.T) {
	tests := []struct {
		name string
		out  string
		want float64
		ok   bool
	}{
		{"csv", "# started on Mon\n\n123456,,raw_syscalls:sys_enter,5012345678,100.00,,\n", 123456, true},
		{"not counted", "<not counted>,,raw_syscalls:sys_enter,0,0.00,,\n", 0, false},
		{"empty", "", 0, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := perfCount(strings.NewReader(tc.out))
			if (err == nil) != tc.ok || got != tc.want {
				t.Errorf("perfCount = %v, %v; want %v (ok %v)", got, err, tc.want, tc.ok)
			}
		})
	}
}

// TestAllocMeterOff checks that a cell without a metrics URL measures no
// allocations and asks nobody.
func TestAllocMeterOff(t *testing.T) {
	objects, bytes, err := startAllocs("").perRequest(100)
	if objects != 0 || bytes != 0 || err != nil {
		t.Errorf("perRequest = %v, %v, %v", objects, bytes, err)
	}
}
