package message

import (
	"context"
	"errors"
	"io"
	"slices"
	"testing"
	"testing/synctest"
	"time"
)

// readAll reads a stream to its end and returns its chunks and end error.
func readAll(ctx context.Context, s *Stream) ([]string, error) {
	var got []string
	for {
		c, err := s.Next(ctx)
		if err != nil {
			return got, err
		}
		got = append(got, string(c))
	}
}

func TestStream(t *testing.T) {
	errCut := errors.New("cut")
	tests := []struct {
		name    string
		feed    func(s *Stream)
		want    []string
		wantErr error
	}{
		{
			name: "chunks in order, clean end",
			feed: func(s *Stream) {
				s.Push([]byte("a"))
				s.Push([]byte("b"))
				s.Push([]byte("c"))
				s.Close(nil)
			},
			want: []string{"a", "b", "c"}, wantErr: io.EOF,
		},
		{
			name: "chunks before an error are still read",
			feed: func(s *Stream) {
				s.Push([]byte("a"))
				s.Close(errCut)
			},
			want: []string{"a"}, wantErr: errCut,
		},
		{
			name: "pushes after close are dropped",
			feed: func(s *Stream) {
				s.Push([]byte("a"))
				s.Close(nil)
				s.Push([]byte("late"))
			},
			want: []string{"a"}, wantErr: io.EOF,
		},
		{
			name: "only the first close counts",
			feed: func(s *Stream) {
				s.Close(errCut)
				s.Close(nil)
			},
			wantErr: errCut,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewStream()
			tt.feed(s)
			got, err := readAll(context.Background(), s)
			if !slices.Equal(got, tt.want) || err != tt.wantErr {
				t.Errorf("read %q, %v; want %q, %v", got, err, tt.want, tt.wantErr)
			}
			if _, again := s.Next(context.Background()); again != tt.wantErr {
				t.Errorf("Next after the end = %v, want %v again", again, tt.wantErr)
			}
		})
	}
}

// TestStreamConcurrent feeds a stream from one goroutine while another
// reads: the reader sees every chunk, in order, then the end.
func TestStreamConcurrent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStream()
		var want []string
		for i := range 50 {
			want = append(want, string(rune('A'+i%26)))
		}
		go func() {
			for _, c := range want {
				s.Push([]byte(c))
				time.Sleep(time.Millisecond)
			}
			s.Close(nil)
		}()
		got, err := readAll(t.Context(), s)
		if !slices.Equal(got, want) || err != io.EOF {
			t.Errorf("read %q, %v; want %q, EOF", got, err, want)
		}
	})
}

func TestStreamNextContextDone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		s := NewStream()
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		defer cancel()
		if _, err := s.Next(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Next on an idle stream = %v, want the context's error", err)
		}
		s.Push([]byte("a"))
		if c, err := s.Next(t.Context()); string(c) != "a" || err != nil {
			t.Errorf("Next after the timeout = %q, %v; want the chunk", c, err)
		}
	})
}
