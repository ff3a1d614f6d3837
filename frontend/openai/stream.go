package openai

import (
	"github.com/switchyard/switchyard/frontend/dialect"
	"github.com/switchyard/switchyard/frontend/genstream"
)

// chatFramer frames a worker's JSON-lines stream as OpenAI
// chat.completion.chunk server-sent events (genstream.ChatChunks), ending
// data: [DONE].
type chatFramer struct {
	*genstream.ChatChunks
	out []byte
}

func newChatFramer(head genstream.ChunkHead, includeUsage bool) *chatFramer {
	f := &chatFramer{}
	f.ChatChunks = genstream.NewChatChunks(head, includeUsage, func(b []byte) { f.out = genstream.AppendEvent(f.out, b) })
	return f
}

func (f *chatFramer) Chunk(p []byte) []byte {
	f.Feed(p)
	return f.take()
}

func (f *chatFramer) End() []byte {
	f.ChatChunks.End()
	return append(f.take(), genstream.SSEDone...)
}

func (f *chatFramer) Fail(p dialect.Problem) ([]byte, bool) {
	f.ChatChunks.Fail(p)
	return append(f.take(), genstream.SSEDone...), true
}

func (f *chatFramer) take() []byte {
	out := f.out
	f.out = nil
	return out
}
