"""The report of bench/gpu_hf.sh: throughput against the ceiling, and GPU memory.

    python bench/hf/gpu_report.py OUT_DIR

reads OUT_DIR/ceiling.json (gpu_models.py), results.jsonl (loadgen run,
one line per model and cell, its round the total concurrency), the
describe-<mode>-<model>.json records and nvidia-smi-<mode>.csv, and prints
the tables and the target, (b) >= 0.8 x (c).
"""

import collections
import csv
import glob
import json
import os
import sys

TARGET = 0.8


def load_results(out):
    """Returns {(mode, concurrency): [result, ...]} from results.jsonl."""
    cells = collections.defaultdict(list)
    with open(os.path.join(out, "results.jsonl"), encoding="utf-8") as f:
        for line in f:
            r = json.loads(line)
            cells[(r["label"].split("/")[0], r["round"])].append(r)
    return cells


def throughput_table(ceiling, cells):
    """Prints requests/s per cell and the ratios to the ceiling and to (a)."""
    print("in-process ceiling (c): batch 8 %.0f req/s summed over %d models (batch 1: %.0f); %d tokens" % (
        ceiling["sum_b8"], len(ceiling["models"]), ceiling["sum_b1"], ceiling["tokens"]))
    for name, m in sorted(ceiling["models"].items()):
        print("  %-10s batch 1 %8.1f req/s   batch 8 %8.1f req/s" % (name, m["b1"], m["b8"]))
    print("%-4s %5s %10s %8s %10s %10s %8s" % ("mode", "c", "req/s", "errors", "p50 ms", "p99 ms", "x (c)"))
    totals = {}
    for (mode, c), rs in sorted(cells.items()):
        rps = sum(r["rps"] for r in rs)
        totals[(mode, c)] = rps
        print("%-4s %5d %10.1f %8d %10.1f %10.1f %8.2f" % (
            mode, c, rps, sum(r["errors"] for r in rs), max(r["p50_us"] for r in rs) / 1e3,
            max(r["p99_us"] for r in rs) / 1e3, rps / ceiling["sum_b8"]))
    for c in sorted({c for _, c in totals}):
        a, b = totals.get(("a", c)), totals.get(("b", c))
        if a and b:
            verdict = "met" if b >= TARGET * ceiling["sum_b8"] else "missed"
            print("c=%d: (b)/(c) = %.2f (target %.1f: %s), (b)/(a) = %.2f" % (
                c, b / ceiling["sum_b8"], TARGET, verdict, b / a))


def memory_table(out):
    """Prints each worker's GPU memory from describe beside nvidia-smi's, by pid."""
    for path in sorted(glob.glob(os.path.join(out, "nvidia-smi-*.csv"))):
        mode = os.path.basename(path)[len("nvidia-smi-"):-len(".csv")]
        with open(path, encoding="utf-8") as f:
            smi = {int(row[0]): row[1].strip() for row in csv.reader(f) if row}
        for describe in sorted(glob.glob(os.path.join(out, "describe-%s-*.json" % mode))):
            with open(describe, encoding="utf-8") as f:
                record = json.load(f)[0]["models"][0]
            for group in record["workerGroups"]:
                for w in group["workers"]:
                    print("(%s) %-10s pid %-8d describe gpuMemoryMiB %-6s nvidia-smi %s" % (
                        mode, record["modelName"], w["pid"], w.get("gpuMemoryMiB"), smi.get(w["pid"], "-")))


def main():
    """Prints the report of the run in sys.argv[1]."""
    out = sys.argv[1]
    with open(os.path.join(out, "ceiling.json"), encoding="utf-8") as f:
        ceiling = json.load(f)
    print("torch %s, transformers %s, %s on %s" % (
        ceiling["torch"], ceiling["transformers"], ceiling["size"], ceiling["device"]))
    throughput_table(ceiling, load_results(out))
    memory_table(out)


if __name__ == "__main__":
    main()
