// Command residencybench measures what serving more models than fit costs
// (issue 13): the cold-start latency of a model that loads on demand
// against its warm latency, and requests per second of round-robin
// traffic over more models than fit against the same traffic on models
// that all fit.
//
//	residencybench -bin bin/switchyard [-loads 10] [-warm 20] [-copies 3] [-fit 2] [-residence 2s,0s]
//
// It starts the switchyard binary with load_on_demand=true for each part:
//
//   - cold start: the model (examples/models/langid by default) and a
//     filler (bench/models/noop-b1) with max_loaded_models=1. Each round
//     sends one request to the filler, which evicts the model, checks in
//     describe that the model is unloaded, then times one request to it
//     (first request to answer: eviction of the filler, worker start,
//     load, the answer) and -warm more while it is loaded. It prints the
//     p50 and p90 of -loads cold requests and of the warm ones.
//
//   - round robin: -copies copies of the model, each declaring
//     required_memory_mb, served by -clients clients that send requests
//     round-robin over all copies for -duration: with a memory_budget_mb
//     that holds -fit of them (the rest is evicted in turn), once per
//     -residence value (min_residence_time), then with no budget and
//     every copy loaded before the clock starts. It prints requests/s,
//     p50, p99, errors, loads and evictions (from /metrics) of each run.
//
// bench/bench_residency.sh builds the binary and runs it. Linux only.
package main
