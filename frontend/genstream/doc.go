// Package genstream holds what the dialects share to frame a worker's
// streamed answer: the cutting of a byte stream into lines (LineBuf), the
// media types of JSON lines and server-sent events, the framers of the
// plain routes (Raw, Lines, SSE: Plain picks one), and the reading of a
// generative worker's JSON lines (Gen, docs/api.md, Streamed answers) into
// pieces of text, tool-call deltas and a finish, which the OpenAI and AWS
// dialects reshape into their own events.
//
// It knows nothing of routes or of the core; its framers implement
// dialect.Framer.
package genstream
