"""The in-process ceilings: the pipeline at batch 1 and at batch 8, with no server in the way.

usage: ceiling.py MODEL_FOLDER [--runs N] [--seconds S] [--warmup S] [--round R]

Loads the pipeline as the servers do (common.load_pipeline), warms it up,
then times RUNS runs of each batch size, alternating (b1, b8, b1, b8, ...),
each run calling the pipeline on the benchmark's sentence for SECONDS. It
prints one JSON line per batch size: the median over the runs of the
sentences per second, the call latency's p50 and p99 over every timed call,
the process's CPU time per sentence, and the cores that it and the whole
machine kept busy over all the timed runs (the runs alternate, so both
batch sizes share the figure).
"""

import argparse
import json
import statistics
import time

from common import SENTENCE, classify, load_pipeline, threads
from measure import machine_cpu


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


SIZES = (1, 8)


def measure(pipe, runs, seconds):
    """Times runs runs of each batch size, alternating; returns one result per size and the cores used."""
    got = {b: {"rates": [], "cpu": 0.0, "done": 0, "latencies": []} for b in SIZES}
    machine0, began = machine_cpu(), time.monotonic()
    for _ in range(runs):
        for b in SIZES:
            rate, used, n = timed_run(pipe, b, seconds, got[b]["latencies"])
            got[b]["rates"].append(rate)
            got[b]["cpu"] += used
            got[b]["done"] += n
    wall, machine1 = time.monotonic() - began, machine_cpu()
    cores = {"server": sum(g["cpu"] for g in got.values()) / wall, "machine": (machine1[0] - machine0[0]) / wall,
             "capacity": (machine1[1] - machine0[1]) / wall}
    return got, cores


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
    for b in SIZES:
        timed_run(pipe, b, args.warmup / 2, [])
    got, cores = measure(pipe, args.runs, args.seconds)
    for b in SIZES:
        g = got[b]
        print(json.dumps({
            "round": args.round, "label": "ceiling-b%d" % b, "c": b, "threads": threads(),
            "rps": statistics.median(g["rates"]), "runs": g["rates"],
            "p50_ms": percentile(g["latencies"], 0.5) * 1e3, "p99_ms": percentile(g["latencies"], 0.99) * 1e3,
            "cpu_us": {"server": g["cpu"] / g["done"] * 1e6}, "cores": cores,
        }), flush=True)


if __name__ == "__main__":
    main()
