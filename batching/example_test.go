package batching_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/switchyard/switchyard/batching"
	"github.com/switchyard/switchyard/message"
)

func ExampleNewQueue() {
	q := batching.NewQueue(2)
	defer q.Close(nil)
	for _, id := range []string{"r1", "r2", "r3"} {
		j := batching.NewJob(id, message.Input{}, time.Now(), time.Time{})
		if err := q.Push(j); errors.Is(err, batching.ErrQueueFull) {
			fmt.Println(id, "refused:", err)
		}
	}
	fmt.Println("queued:", q.Len(), "of", q.Cap())
	// Output:
	// r3 refused: batching: queue full
	// queued: 2 of 2
}

func ExampleQueue_Next() {
	q := batching.NewQueue(100)
	for _, id := range []string{"r1", "r2", "r3"} {
		j := batching.NewJob(id, message.Input{}, time.Now(), time.Time{})
		_ = q.Push(j)
	}
	// A worker with batch_size 2 takes a full batch at once, then what is
	// left once max_batch_delay has passed.
	for range 2 {
		batch, err := q.Next(context.Background(), 2, 10*time.Millisecond)
		if err != nil {
			fmt.Println(err)
			return
		}
		var names []string
		for _, j := range batch {
			names = append(names, j.ID)
			j.Finish(&message.Response{Code: 200})
		}
		fmt.Println(strings.Join(names, " "))
	}
	q.Close(errors.New("model unregistered"))
	_, err := q.Next(context.Background(), 2, 0)
	fmt.Println(err)
	// Output:
	// r1 r2
	// r3
	// batching: queue closed: model unregistered
}

func ExampleScaleUp() {
	// batch_size 4, one worker alive, up to 3 allowed.
	fmt.Println(batching.ScaleUp(8, 4, 1, 3))
	fmt.Println(batching.ScaleUp(9, 4, 1, 3))
	fmt.Println(batching.ScaleUp(9, 4, 3, 3))
	// Output:
	// false
	// true
	// false
}
