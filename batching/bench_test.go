package batching

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/switchyard/switchyard/message"
)

// BenchmarkQueue measures Push+Next throughput: parallel producers push
// b.N jobs while consumers take batches of up to 8 with no delay and answer
// them. Each producer's jobs carry a cancelable context, as requests do, so
// the queue watches every job for its client leaving.
func BenchmarkQueue(b *testing.B) {
	for _, consumers := range []int{1, 8} {
		b.Run(fmt.Sprint("consumers=", consumers), func(b *testing.B) {
			q := NewQueue(1024)
			ctx, cancel := context.WithCancel(context.Background())
			var wg sync.WaitGroup
			for range consumers {
				wg.Go(func() { consume(ctx, q) })
			}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					produce(b, q)
				}
			})
			for s := q.Stats(); s.Dispatched+s.Dropped < uint64(b.N); s = q.Stats() {
				runtime.Gosched()
			}
			b.StopTimer()
			if s := q.Stats(); s.Dropped > 0 {
				b.Errorf("%d jobs dropped", s.Dropped)
			}
			cancel()
			wg.Wait()
			q.Close(nil)
		})
	}
}

func produce(b *testing.B, q *Queue) {
	j := NewJob("", message.Input{}, time.Time{}, time.Time{})
	for {
		err := q.Push(j)
		if err == nil {
			return
		}
		if !errors.Is(err, ErrQueueFull) {
			b.Error(err)
			return
		}
		runtime.Gosched()
	}
}

func consume(ctx context.Context, q *Queue) {
	for {
		jobs, err := q.Next(ctx, 8, 0)
		if err != nil {
			return
		}
		for _, j := range jobs {
			j.Finish(nil)
		}
	}
}
