package worker

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/switchyard/switchyard/api"
	"github.com/switchyard/switchyard/properties"
)

func TestDefaultCaps(t *testing.T) {
	tests := []struct {
		name string
		host Host
		want Caps
	}{
		{"this kind of dev box", Host{Cores: 2, MemoryMiB: 24 << 10}, Caps{PerModel: 8, Total: 32}},
		{"memory bounds the total", Host{Cores: 16, MemoryMiB: 8 << 10}, Caps{PerModel: 32, Total: 32}},
		{"tiny container", Host{Cores: 1, MemoryMiB: 512}, Caps{PerModel: 4, Total: 4}},
		{"unknown memory", Host{Cores: 4}, Caps{PerModel: 16, Total: 64}},
		{"no cores reported", Host{}, Caps{PerModel: 8, Total: 16}},
		{"8 GPUs", Host{Cores: 96, MemoryMiB: 1 << 20, GPUs: 8}, Caps{PerModel: 384, Total: 1664}},
		{"GPUs raise the per-model cap", Host{Cores: 4, MemoryMiB: 1 << 20, GPUs: 8}, Caps{PerModel: 36, Total: 192}},
		{"huge host", Host{Cores: 1024, MemoryMiB: 1 << 30}, Caps{PerModel: 4096, Total: 4096}},
		{"negative GPUs count as none", Host{Cores: 2, MemoryMiB: 24 << 10, GPUs: -3}, Caps{PerModel: 8, Total: 32}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := DefaultCaps(tt.host)
			if got != tt.want {
				t.Errorf("DefaultCaps(%+v) = %+v, want %+v", tt.host, got, tt.want)
			}
			if got.PerModel > got.Total || got.Total < minTotalWorkers || got.Total > maxTotalWorkers {
				t.Errorf("caps %+v out of their bounds", got)
			}
		})
	}
}

func TestResolveCaps(t *testing.T) {
	host := Host{Cores: 2, MemoryMiB: 24 << 10} // defaults 8 and 32
	tests := []struct {
		name            string
		perModel, total int
		want            Caps
	}{
		{"defaults", 0, 0, Caps{8, 32}},
		{"per model set", 3, 0, Caps{3, 32}},
		{"total set", 0, 100, Caps{8, 100}},
		{"total below the default per model", 0, 5, Caps{5, 5}},
		{"both", 20, 40, Caps{20, 40}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv := properties.DefaultServer()
			srv.MaxWorkersPerModel, srv.MaxWorkersTotal = tt.perModel, tt.total
			if got := resolveCaps(srv, host); got != tt.want {
				t.Errorf("resolveCaps = %+v, want %+v", got, tt.want)
			}
		})
	}
}

func TestBudget(t *testing.T) {
	b := newBudget(Caps{PerModel: 4, Total: 6})
	a, c, d := &Model{name: "a"}, &Model{name: "c"}, &Model{name: "d"}
	steps := []struct {
		name     string
		do       func() error
		wantErr  string
		wantHeld int
	}{
		{"a takes 4", func() error { return b.reserve(a, 4, nil) }, "", 4},
		{"c above the per-model cap", func() error { return b.reserve(c, 5, nil) }, "max_workers_per_model (4)", 4},
		{"c above the total", func() error { return b.reserve(c, 3, nil) }, "max_workers_total (6)", 4},
		{"c within the total", func() error { return b.reserve(c, 2, nil) }, "", 6},
		{"a shrinks", func() error { return b.reserve(a, 1, nil) }, "", 3},
		{"a grows back within the total", func() error { return b.reserve(a, 4, nil) }, "", 6},
		{"d replacing c", func() error { return b.reserve(d, 2, c) }, "", 8},
		{"c released", func() error { b.release(c); return nil }, "", 6},
		{"a released", func() error { b.release(a); return nil }, "", 2},
		{"a released twice", func() error { b.release(a); return nil }, "", 2},
	}
	for _, s := range steps {
		err := s.do()
		switch {
		case s.wantErr == "" && err != nil:
			t.Fatalf("%s: %v", s.name, err)
		case s.wantErr != "" && (!errors.Is(err, api.ErrBadRequest) || !strings.Contains(err.Error(), s.wantErr)):
			t.Fatalf("%s: error %v, want a bad request naming %s", s.name, err, s.wantErr)
		}
		if b.sum != s.wantHeld {
			t.Fatalf("%s: %d held, want %d", s.name, b.sum, s.wantHeld)
		}
	}
}

func TestSumMax(t *testing.T) {
	gs := func(maxima ...int) []*group {
		var out []*group
		for _, m := range maxima {
			out = append(out, &group{max: m})
		}
		return out
	}
	tests := []struct {
		groups []*group
		want   int
	}{
		{nil, 0},
		{gs(2), 2},
		{gs(2, 2, 1), 5},
		{gs(math.MaxInt, 1), math.MaxInt},
		{gs(math.MaxInt/2+1, math.MaxInt/2+1), math.MaxInt},
	}
	for _, tt := range tests {
		if got := sumMax(tt.groups); got != tt.want {
			t.Errorf("sumMax(%d groups) = %d, want %d", len(tt.groups), got, tt.want)
		}
	}
}

// TestRegistryCapsRefuse registers and scales past the caps: each is
// refused with a bad request that names the cap, nothing is registered or
// changed, and no worker starts.
func TestRegistryCapsRefuse(t *testing.T) {
	r := newBareRegistry(t, func(s *properties.Server) { s.MaxWorkersPerModel, s.MaxWorkersTotal = 4, 6 })
	r.probe(t, "lazy", []string{"minWorkers=0", "maxWorkers=3"})
	r.mustRegister(t, "lazy")
	r.probe(t, "forkbomb", []string{"minWorkers=100000"})
	r.probe(t, "greedy", []string{"minWorkers=0", "maxWorkers=4"})
	r.probe(t, "modest", []string{"minWorkers=0", "maxWorkers=3"})
	billion := ptr(1_000_000_000)
	tests := []struct {
		name string
		do   func() error
		cap  string
	}{
		{"folder asks for 100000", func() error { return r.register(t, "forkbomb") }, "max_workers_per_model (4)"},
		{"register asks for a billion", func() error {
			_, err := r.Register(context.Background(), api.RegisterRequest{URL: "modest", MinWorker: billion, MaxWorker: billion})
			return err
		}, "max_workers_per_model (4)"},
		{"register past the total", func() error { return r.register(t, "greedy") }, "max_workers_total (6)"},
		{"scale to a billion, asynchronous", func() error {
			return r.Scale(context.Background(), "lazy", api.ScaleRequest{MinWorker: billion, MaxWorker: billion})
		}, "max_workers_per_model (4)"},
		{"scale to a billion, synchronous", func() error {
			return r.Scale(context.Background(), "lazy", api.ScaleRequest{MinWorker: billion, Synchronous: true})
		}, "max_workers_per_model (4)"},
		{"scale max near the int range", func() error {
			return r.Scale(context.Background(), "lazy", api.ScaleRequest{MaxWorker: ptr(math.MaxInt)})
		}, "max_workers_per_model (4)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.do()
			if !errors.Is(err, api.ErrBadRequest) || !strings.Contains(err.Error(), tt.cap) {
				t.Fatalf("error %v, want a bad request naming %s", err, tt.cap)
			}
		})
	}
	if names := r.Names(); len(names) != 1 || names[0] != "lazy" {
		t.Errorf("registered: %v, want only lazy", names)
	}
	rec, err := r.Describe("lazy")
	if err != nil || rec.WorkerGroups[0].MinWorkers != 0 || rec.WorkerGroups[0].MaxWorkers != 3 || len(rec.WorkerGroups[0].Workers) != 0 {
		t.Errorf("lazy after the refusals: %+v, %v", rec, err)
	}
	if n := r.logs.FilterMessage("worker started").Len(); n != 0 {
		t.Errorf("%d workers started", n)
	}
	// What the total holds comes back when a model goes.
	if err := r.Unregister(context.Background(), "lazy"); err != nil {
		t.Fatal(err)
	}
	r.mustRegister(t, "greedy")
	if err := r.Scale(context.Background(), "greedy", api.ScaleRequest{MaxWorker: ptr(2)}); err != nil {
		t.Fatal(err)
	}
	r.mustRegister(t, "modest")
}
