"""The in-process ceilings: the pipeline at batch 1 and at batch 8, with no server in the way.

usage: ceiling.py MODEL_FOLDER [--runs N] [--seconds S] [--warmup S] [--round R]

Loads the pipeline as the servers do (common.load_pipeline), warms it up,
then times RUNS runs of each batch size, alternating (b1, b8, b1, b8, ...),
each run calling the pipeline on the benchmark's sentence for SECONDS. It
prints one JSON line per batch size: the median over the runs of the
sentences per second, the call latency's p50 and p99 over every timed call,
and the process's CPU time per sentence.
"""

import argparse
import json
import statistics
import time

from common import SENTENCE, classify, load_pipeline, threads


def timed_run(pipe, batch, seconds, latencies):
    """Calls pipe on batch sentences until seconds have passed; returns (sentences/s, CPU s)."""
    texts = [SENTENCE] * batch
    calls = 0
    cpu0 = time.process_time()
    began = time.perf_counter()
    end = began + seconds
    now = began
    while now < end:
        classify(pipe, texts)
        after = time.perf_counter()
        latencies.append(after - now)
        now = after
        calls += 1
    return calls * batch / (now - began), time.process_time() - cpu0, calls * batch


def percentile(values, q):
    """Returns the q-quantile (0..1) of values, nearest rank."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, int(round(q * len(ordered))) - 1))]


def main():
    """Measures both ceilings and prints them as JSON lines."""
    ap = argparse.ArgumentParser()
    ap.add_argument("model")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--seconds", type=float, default=2.0)
    ap.add_argument("--warmup", type=float, default=2.0)
    ap.add_argument("--round", type=int, default=0)
    args = ap.parse_args()
    pipe = load_pipeline(args.model)
    for batch in (1, 8):
        timed_run(pipe, batch, args.warmup / 2, [])
    sizes = (1, 8)
    rates = {b: [] for b in sizes}
    cpu = {b: 0.0 for b in sizes}
    done = {b: 0 for b in sizes}
    latencies = {b: [] for b in sizes}
    for _ in range(args.runs):
        for b in sizes:
            rate, used, n = timed_run(pipe, b, args.seconds, latencies[b])
            rates[b].append(rate)
            cpu[b] += used
            done[b] += n
    for b in sizes:
        print(json.dumps({
            "round": args.round, "label": "ceiling-b%d" % b, "c": b, "threads": threads(),
            "rps": statistics.median(rates[b]), "runs": rates[b],
            "p50_ms": percentile(latencies[b], 0.5) * 1e3, "p99_ms": percentile(latencies[b], 0.99) * 1e3,
            "cpu_us": {"server": cpu[b] / done[b] * 1e6},
        }), flush=True)


if __name__ == "__main__":
    main()
