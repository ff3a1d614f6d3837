// Package process starts, talks to and stops the Python worker processes that
// run the models.
//
// A [Process] is one worker: an OS process in its own process group, started
// with DJL Serving 0.36's command line (docs/protocol.md), reached over one Unix socket and
// spoken to with the frames of package wire. [Start] walks it through its
// whole start: socket name, stale socket removal, spawn, readiness line,
// connection and initialization request, and kills it again on any failure.
// Once started, a Process answers one untracked request or dynamic batch at
// a time (Dispatch) and any number of tracked rolling-batch requests
// (Track), and turns the death of its worker into an error for every
// request it holds.
//
// Each process has two goroutines of its own: one waits for the OS process
// and one reads the connection. Stop ends both and waits for them.
//
// Worker output is forwarded to the injected logger with the fields model,
// worker, pid and stream. A line that starts with a Python logging level
// (DEBUG, INFO, WARNING, ERROR, CRITICAL, optionally in brackets) is logged
// at that level; other stdout lines at Info and other stderr lines at Warn.
// A Python traceback is one record, not one per line: its whole text is the
// field traceback, and the logging line just before it (logging.exception's)
// is its message and level; a bare traceback logs at Error with its
// exception line as the message. The last 50 stderr lines are kept, line by
// line, for error messages.
//
// The package knows nothing of models, queues or scaling: package worker's
// registry starts processes through it and decides when to.
package process
