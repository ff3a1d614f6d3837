package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"time"

	"golang.org/x/sync/errgroup"
)

// all runs a warm-up request, the time-to-first-byte runs and the
// concurrency levels, printing as it goes.
func (b *bench) all(ctx context.Context, w io.Writer) error {
	if _, err := b.once(ctx, true); err != nil {
		return fmt.Errorf("warm-up: %w", err)
	}
	fmt.Fprintf(w, "model %s, max_tokens %d, %d runs per time to first byte\n", b.cfg.model, b.cfg.tokens, b.cfg.runs)
	for _, stream := range []bool{true, false} {
		if err := b.firstByte(ctx, w, stream); err != nil {
			return err
		}
	}
	var levels []level
	for _, c := range b.cfg.levels {
		l, err := b.level(ctx, c)
		if err != nil {
			return fmt.Errorf("concurrency %d: %w", c, err)
		}
		fmt.Fprintln(w, l)
		levels = append(levels, l)
	}
	compare(w, levels)
	return nil
}

// firstByte prints the medians of runs requests, streamed or not.
func (b *bench) firstByte(ctx context.Context, w io.Writer, stream bool) error {
	var samples []sample
	for range b.cfg.runs {
		s, err := b.once(ctx, stream)
		if err != nil {
			return err
		}
		samples = append(samples, s)
	}
	name := "not streamed"
	if stream {
		name = "streamed"
	}
	fmt.Fprintf(w, "%-12s  time to first byte %8.3f s   whole answer %7.3f s   %d tokens\n", name,
		median(samples, func(s sample) time.Duration { return s.ttfb }).Seconds(),
		median(samples, func(s sample) time.Duration { return s.total }).Seconds(), samples[0].tokens)
	return nil
}

// level is the outcome of one concurrency level.
type level struct {
	clients, streams, tokens int
	wall, medianStream       time.Duration
}

func (l level) String() string {
	return fmt.Sprintf("concurrency %-3d  %5d tokens in %7.3f s = %8.1f tokens/s   (%d streams, median stream %.3f s)",
		l.clients, l.tokens, l.wall.Seconds(), l.rate(), l.streams, l.medianStream.Seconds())
}

func (l level) rate() float64 { return float64(l.tokens) / l.wall.Seconds() }

// level runs c clients, each streaming cfg.per answers in turn.
func (b *bench) level(ctx context.Context, c int) (level, error) {
	results := make([][]sample, c)
	g, gctx := errgroup.WithContext(ctx)
	start := time.Now()
	for i := range c {
		g.Go(func() error {
			for range b.cfg.per {
				s, err := b.once(gctx, true)
				if err != nil {
					return err
				}
				results[i] = append(results[i], s)
			}
			return nil
		})
	}
	err := g.Wait()
	l := level{clients: c, wall: time.Since(start)}
	all := slices.Concat(results...)
	for _, s := range all {
		l.tokens += s.tokens
	}
	l.streams = len(all)
	l.medianStream = median(all, func(s sample) time.Duration { return s.total })
	return l, err
}

// compare prints how each level after the first fares against the first:
// the ratio of tokens per second and of the median stream's time.
func compare(w io.Writer, levels []level) {
	if len(levels) < 2 {
		return
	}
	base := levels[0]
	for _, l := range levels[1:] {
		fmt.Fprintf(w, "concurrency %d vs %d: %.2fx the tokens/s; a stream takes %.2fx as long (one at a time, it would be %.0fx)\n",
			l.clients, base.clients, l.rate()/base.rate(), l.medianStream.Seconds()/base.medianStream.Seconds(),
			float64(l.clients)/float64(base.clients))
	}
}

// median returns the median of f over samples; 0 for none.
func median(samples []sample, f func(sample) time.Duration) time.Duration {
	if len(samples) == 0 {
		return 0
	}
	v := make([]time.Duration, len(samples))
	for i, s := range samples {
		v[i] = f(s)
	}
	slices.Sort(v)
	return v[len(v)/2]
}
