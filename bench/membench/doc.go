// Command membench measures how much memory the switchyard front-end holds
// after large requests, and how soon it gives it back.
//
// It starts the switchyard binary on the echo model (bench/models/echo),
// reads the server's resident set size (VmRSS in /proc/PID/status) once it
// has been idle for a while, sends one or more large requests (64 MiB by
// default, the default max_request_size) and checks that each comes back
// byte for byte, then samples VmRSS for a fixed time (30 s by default) and
// prints the samples, the peak (VmHWM) and when the RSS fell below the
// target (40 MB). bench/bench_memory.sh builds the binary and runs it.
//
//	membench -bin bin/switchyard [-size 64MiB] [-requests 1] [-watch 30s]
//
// With -conns N it measures open connections instead (issue 27): it opens N
// connections to the inference listener that send nothing (or, with
// -partial, a request line and a header and no more), reads the RSS 2 s
// after the last and 5 s after closing them all, counts the connections the
// server answered 503 (-max-connections sets the server's max_connections)
// and times one more connection from its dial to its 503 and close.
//
//	membench -bin bin/switchyard -conns 15000 [-partial] [-max-connections 1000]
//
// It measures the front-end process only; the Python worker's memory is its
// own. Linux only (it reads /proc).
package main
