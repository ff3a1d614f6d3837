package message

import (
	"context"
	"io"
	"sync"
)

// Stream carries a response body that arrives in chunks. Push never blocks,
// so a slow reader cannot stall the worker connection that feeds it.
type Stream struct {
	mu     sync.Mutex
	chunks [][]byte
	closed bool
	err    error
	ready  chan struct{}
}

// NewStream returns an open, empty stream.
func NewStream() *Stream { return &Stream{ready: make(chan struct{}, 1)} }

// Push appends a chunk. Chunks pushed after Close are dropped.
func (s *Stream) Push(chunk []byte) {
	s.mu.Lock()
	if !s.closed {
		s.chunks = append(s.chunks, chunk)
	}
	s.mu.Unlock()
	s.signal()
}

// Close ends the stream; a nil err is a clean end. Only the first Close counts.
func (s *Stream) Close(err error) {
	s.mu.Lock()
	if !s.closed {
		s.closed, s.err = true, err
	}
	s.mu.Unlock()
	s.signal()
}

func (s *Stream) signal() {
	select {
	case s.ready <- struct{}{}:
	default:
	}
}

// Next returns the next chunk. After the last chunk it returns io.EOF for a
// clean end, or the error the stream was closed with.
func (s *Stream) Next(ctx context.Context) ([]byte, error) {
	for {
		s.mu.Lock()
		if len(s.chunks) > 0 {
			c := s.chunks[0]
			s.chunks[0] = nil
			s.chunks = s.chunks[1:]
			s.mu.Unlock()
			return c, nil
		}
		closed, err := s.closed, s.err
		s.mu.Unlock()
		if closed {
			if err == nil {
				err = io.EOF
			}
			return nil, err
		}
		select {
		case <-s.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
