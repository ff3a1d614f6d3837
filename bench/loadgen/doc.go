// Command loadgen is switchyard's load generator: it measures requests per
// second and latency percentiles of an HTTP endpoint at several
// concurrency levels over keep-alive connections, and it serves and
// measures a bare fasthttp "hello" server to compare with. bench/bench.sh
// drives it for issue 3's benchmark.
//
// Subcommands:
//
//	loadgen run [flags] URL    load URL (or, with -hello, a bare server it starts)
//	loadgen hello [-addr A]    serve the bare "hello" server until SIGINT or SIGTERM
//	loadgen report [flags]     turn run's JSON lines into a table with the targets
//
// run writes one JSON object per (label, concurrency) cell on stdout and a
// readable line per cell on stderr. Each cell has a warm-up whose requests
// are not counted, then a measured phase of a fixed duration (or a fixed
// number of requests with -n).
package main
