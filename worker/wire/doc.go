// Package wire encodes and decodes the frames that switchyard exchanges with
// its worker processes over a Unix socket: the byte layout of DJL Serving's
// Python engine, described in docs/protocol.md.
//
// Requests and responses are built with the Append functions, which add one
// frame to a byte slice, and read with a [Reader]. Every length a peer sends
// is checked against a per-item cap before anything is read, and buffers grow
// only as bytes arrive, so a hostile or broken worker cannot make the
// front-end allocate memory it never sent. Nothing in this package panics on
// malformed input: it returns an error that wraps one of the sentinel errors
// below.
//
// [SplitBatch] turns the reply to a dynamic batch back into one response per
// request.
package wire
