"""bench_hf.sh's load generator cells and its report.

usage:
  measure.py cell --round R --label L --c C --lua FILE --duration S --warmup S
                  --server ROOT_PID [--watch NAME=PID ...] URL
  measure.py report RESULTS --load TEXT

cell runs wrk (-t1 -cC, keep-alive, --latency) against URL for the warm-up,
then again for the measured duration, and prints one JSON line: requests
per second, the latency p50 and p99 (wrk's --latency distribution),
errors, and the CPU time per request of the server (ROOT_PID and every
process below it, from /proc/<pid>/stat, split into the root process and
the rest), of wrk (its rusage, from wait4), and of the whole machine
(/proc/stat), so that the CPU that other work took during the cell shows.

report reads the JSON lines of every round (ceiling.py's and cell's) and
prints the table of medians over the rounds and the targets.
"""

import argparse
import calendar
import json
import os
import re
import statistics
import subprocess
import sys
import time

TICK = os.sysconf("SC_CLK_TCK")


def children_of():
    """Returns {ppid: [pid, ...]} of every process."""
    kids = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % name, encoding="ascii", errors="replace") as f:
                stat = f.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(name))
    return kids


def tree(root):
    """Returns root and every process below it."""
    kids = children_of()
    pids, todo = [], [root]
    while todo:
        pid = todo.pop()
        pids.append(pid)
        todo.extend(kids.get(pid, []))
    return pids


def cpu_seconds(pid):
    """Returns the user + system CPU seconds of pid (all its threads), or None when it is gone."""
    try:
        with open("/proc/%d/stat" % pid, encoding="ascii", errors="replace") as f:
            stat = f.read()
    except OSError:
        return None
    fields = stat[stat.rindex(")") + 2:].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def machine_cpu():
    """Returns (busy, total) CPU seconds of the machine since boot, from /proc/stat."""
    with open("/proc/stat", encoding="ascii") as f:
        values = [int(v) for v in f.readline().split()[1:]]
    idle = values[3] + values[4]
    total = sum(values[:8])
    return (total - idle) / TICK, total / TICK


def snapshot(root):
    """Returns {pid: CPU seconds} of root's tree."""
    out = {}
    for pid in tree(root):
        used = cpu_seconds(pid)
        if used is not None:
            out[pid] = used
    return out


def run_wrk(args, seconds, lua, url):
    """Runs wrk for seconds; returns (its output, its CPU seconds)."""
    cmd = ["wrk", "-t1", "-c%d" % args.c, "-d%ds" % seconds, "--latency", "--timeout", "30s", "-s", lua, url]
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc:
        out = proc.stdout.read()
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit("measure.py: wrk failed (%d): %s" % (proc.returncode, out))
    return out, usage.ru_utime + usage.ru_stime


UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3}


def parse_wrk(out):
    """Returns requests, requests/s, p50 and p99 (ms) and errors from wrk's output."""
    def ms(pct):
        m = re.search(r"^\s+%s%%\s+([\d.]+)(us|ms|s|m)\s*$" % pct, out, re.M)
        return float(m.group(1)) * UNITS[m.group(2)] if m else None

    requests = int(re.search(r"(\d+) requests in", out).group(1))
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))
    errors = 0
    m = re.search(r"Non-2xx or 3xx responses: (\d+)", out)
    if m:
        errors += int(m.group(1))
    m = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    if m:
        errors += sum(int(g) for g in m.groups())
    return requests, rps, ms(50), ms(99), errors


def tree_cpu(root, before, after):
    """Returns (root's CPU seconds, the whole tree's) between two snapshots; new processes count from 0."""
    used = {pid: cpu - before.get(pid, 0.0) for pid, cpu in after.items()}
    return used.get(root, 0.0), sum(used.values())


CALL_LINE = re.compile(r'"ts":"([^"]+)".*one call for (\d+) inputs in ([\d.]+) ms')


def worker_calls(path, offset, began, ended):
    """Returns the model calls switchyard's worker logged between began and ended (epoch seconds).

    switchyard at --log-level debug logs each call of its built-in handler
    ("text-classification: one call for N inputs in X ms", timed around the
    pipeline call alone) with the front-end's timestamp; the result holds
    their count, inputs and mean batch size, the p50 of the call time per
    batch size, the time and the share of the measured phase the worker
    spent in them, and the mean time between calls (at c=1, what a request
    spends outside the pipeline call: the front-end, the worker's socket and
    handler, wrk).
    """
    sizes, per_size = [], {}
    with open(path, encoding="utf-8", errors="replace") as f:
        f.seek(offset)
        for line in f:
            m = CALL_LINE.search(line)
            if not m:
                continue
            stamp = calendar.timegm(time.strptime(m.group(1)[:19], "%Y-%m-%dT%H:%M:%S"))
            stamp += float("0" + m.group(1)[19:].rstrip("Z"))
            if began <= stamp <= ended:
                sizes.append(int(m.group(2)))
                per_size.setdefault(int(m.group(2)), []).append(float(m.group(3)))
    if not sizes:
        return None
    busy = sum(sum(v) for v in per_size.values()) / 1e3
    return {"n": len(sizes), "inputs": sum(sizes), "batch_mean": sum(sizes) / len(sizes),
            "p50_ms": {str(b): statistics.median(v) for b, v in per_size.items()},
            "busy_s": busy, "busy": busy / (ended - began),
            "outside_ms": (ended - began - busy) / len(sizes) * 1e3}


def measured_phase(args):
    """Runs the measured wrk phase; returns what it and the server used."""
    before = snapshot(args.server)
    machine0, load0, epoch0, began = machine_cpu(), os.getloadavg()[0], time.time(), time.monotonic()
    out, wrk_cpu = run_wrk(args, args.duration, args.lua, args.url)
    wall, epoch1, machine1 = time.monotonic() - began, time.time(), machine_cpu()
    root, server = tree_cpu(args.server, before, snapshot(args.server))
    return {"out": out, "wall": wall, "epochs": (epoch0, epoch1), "load": [load0, os.getloadavg()[0]],
            "cpu": {"server": server, "root": root, "wrk": wrk_cpu},
            "machine": (machine1[0] - machine0[0], machine1[1] - machine0[1])}


def cell(args):
    """Measures one cell and prints its JSON line."""
    run_wrk(args, args.warmup, args.lua, args.url)
    offset = os.path.getsize(args.calls_log) if args.calls_log else 0
    phase = measured_phase(args)
    requests, rps, p50, p99, errors = parse_wrk(phase["out"])
    wall, cpu, n = phase["wall"], phase["cpu"], max(requests, 1)
    row = {
        "round": args.round, "label": args.label, "c": args.c, "rps": rps, "p50_ms": p50, "p99_ms": p99,
        "errors": errors, "requests": requests, "wall_s": wall,
        "cpu_us": {k: v / n * 1e6 for k, v in cpu.items()},
        "cores": {"server": cpu["server"] / wall, "wrk": cpu["wrk"] / wall, "machine": phase["machine"][0] / wall,
                  "capacity": phase["machine"][1] / wall},
        "load": phase["load"], "calls": None,
    }
    if args.calls_log:
        time.sleep(0.5)  # the last calls' lines pass through the front-end's log
        row["calls"] = worker_calls(args.calls_log, offset, *phase["epochs"])
    print(json.dumps(row), flush=True)


def median(rows, key):
    """Returns the median of key over rows (None values left out), or None."""
    values = [key(r) for r in rows]
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(value, spec):
    """Formats value with spec, or "-" for None."""
    return "-" if value is None else format(value, spec)


LABELS = [("ceiling-b1", 1, "in-process pipeline, batch 1"), ("ceiling-b8", 8, "in-process pipeline, batch 8"),
          ("switchyard", 1, "switchyard"), ("switchyard", 32, "switchyard"),
          ("fastapi", 1, "FastAPI + uvicorn"), ("fastapi", 32, "FastAPI + uvicorn"),
          ("litserve", 1, "LitServe"), ("litserve", 32, "LitServe")]


def report(args):
    """Prints the table and the targets."""
    with open(args.results, encoding="utf-8") as f:
        rows = [json.loads(line) for line in f if line.strip()]
    cells = {}
    for r in rows:
        cells.setdefault((r["label"], r["c"]), {})[r["round"]] = r
    rounds = sorted({r["round"] for r in rows})
    print("load average: %s" % args.load)
    print()
    print("| target | c | req/s | p50 (ms) | p99 (ms) | errors (all rounds) | server CPU ms/req "
          "| of which Go front-end | wrk CPU us/req | wrk cores | server cores | machine busy cores (of %s) |"
          % fmt(median(rows, lambda r: r.get("cores", {}).get("capacity")), ".1f"))
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for label, c, name in LABELS:
        got = list(cells.get((label, c), {}).values())
        if not got:
            continue
        wrk = label.startswith("ceiling")
        print("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |" % (
            name, "-" if wrk else c, fmt(median(got, lambda r: r["rps"]), ".1f"),
            fmt(median(got, lambda r: r["p50_ms"]), ".2f"), fmt(median(got, lambda r: r["p99_ms"]), ".2f"),
            "-" if wrk else str(sum(r["errors"] for r in got)),
            fmt(median(got, lambda r: r["cpu_us"]["server"] / 1e3), ".2f"),
            fmt(median(got, lambda r: r["cpu_us"]["root"] / 1e3), ".3f") if label == "switchyard" else "-",
            "-" if wrk else fmt(median(got, lambda r: r["cpu_us"]["wrk"]), ".0f"),
            "-" if wrk else fmt(median(got, lambda r: r["cores"]["wrk"]), ".3f"),
            fmt(median(got, lambda r: r.get("cores", {}).get("server")), ".2f"),
            fmt(median(got, lambda r: r.get("cores", {}).get("machine")), ".2f")))
    print()
    print("Per round (req/s):")
    for rnd in rounds:
        parts = []
        for label, c, _ in LABELS:
            r = cells.get((label, c), {}).get(rnd)
            if r:
                parts.append("%s/%d %.1f" % (label, c, r["rps"]))
        print("  round %d: %s" % (rnd, ", ".join(parts)))
    print()
    targets(cells, rounds)


def ratio_per_round(cells, a, b, rounds, key=lambda r: r["rps"]):
    """Returns the median over rounds of key(a) / key(b), and the per-round ratios."""
    ratios = []
    for rnd in rounds:
        ra, rb = cells.get(a, {}).get(rnd), cells.get(b, {}).get(rnd)
        if ra and rb and key(rb):
            ratios.append(key(ra) / key(rb))
    return (statistics.median(ratios) if ratios else None), ratios


def targets(cells, rounds):
    """Prints the issue's targets, each judged on the median over the rounds of a per-round figure."""
    def show(ratios):
        return ", ".join("%.2f" % x for x in ratios)

    got, per = ratio_per_round(cells, ("switchyard", 32), ("ceiling-b8", 8), rounds)
    print("* switchyard c=32 / batch-8 ceiling (req/s): %s (rounds: %s); target >= 0.9: %s"
          % (fmt(got, ".2f"), show(per), verdict(got is not None and got >= 0.9)))
    got, per = ratio_per_round(cells, ("ceiling-b8", 8), ("switchyard", 32), rounds, key=cpu_per_request)
    print("  the same in CPU per request (batch-8 ceiling's / switchyard c=32's, server + wrk): %s (rounds: %s)"
          % (fmt(got, ".2f"), show(per)))
    per = [same_moment(cells[("switchyard", 32)][rnd]) for rnd in rounds if rnd in cells.get(("switchyard", 32), {})]
    per = [x for x in per if x is not None]
    got = statistics.median(per) if per else None
    print("  the same measured inside switchyard's worker during the cell (share of the time in pipeline calls "
          "x mean batch / 8): %s (rounds: %s)" % (fmt(got, ".2f"), show(per)))
    for c in (1, 32):
        got = [r["calls"] for r in cells.get(("switchyard", c), {}).values() if r.get("calls")]
        if got:
            print("  switchyard's worker at c=%d: %s model calls, mean batch %s, in pipeline calls %s of the time, "
                  "%s ms between calls" % (
                      c, fmt(median(got, lambda x: x["n"]), ".0f"), fmt(median(got, lambda x: x["batch_mean"]), ".2f"),
                      fmt(median(got, lambda x: x["busy"]), ".1%"), fmt(median(got, lambda x: x["outside_ms"]), ".2f")))
    diffs = []
    for rnd in rounds:
        sy, ce = cells.get(("switchyard", 1), {}).get(rnd), cells.get(("ceiling-b1", 1), {}).get(rnd)
        if sy and ce:
            diffs.append(sy["p50_ms"] - ce["p50_ms"])
    got = statistics.median(diffs) if diffs else None
    print("* switchyard c=1 p50 - batch-1 call p50: %s ms (rounds: %s); target <= 1 ms: %s"
          % (fmt(got, "+.2f"), show(diffs), verdict(got is not None and got <= 1.0)))
    diffs = []
    for rnd in rounds:
        sy = cells.get(("switchyard", 1), {}).get(rnd)
        if sy and sy.get("calls") and "1" in sy["calls"]["p50_ms"]:
            diffs.append(sy["p50_ms"] - sy["calls"]["p50_ms"]["1"])
    got = statistics.median(diffs) if diffs else None
    print("  the same against the pipeline's batch-1 call p50 inside switchyard's worker during the cell: "
          "%s ms (rounds: %s)" % (fmt(got, "+.2f"), show(diffs)))
    for peer, name in (("fastapi", "FastAPI"), ("litserve", "LitServe")):
        for c in (1, 32):
            got, per = ratio_per_round(cells, ("switchyard", c), (peer, c), rounds)
            print("* switchyard / %s at c=%d (req/s): %s (rounds: %s); target > 1: %s"
                  % (name, c, fmt(got, ".2f"), show(per), verdict(got is not None and got > 1.0)))
        got, per = ratio_per_round(cells, (peer, 1), ("switchyard", 1), rounds, key=lambda r: r["p50_ms"])
        print("  %s c=1 p50 / switchyard c=1 p50: %s (rounds: %s)" % (name, fmt(got, ".2f"), show(per)))
        for c in (1, 32):
            got, per = ratio_per_round(cells, (peer, c), ("switchyard", c), rounds, key=cpu_per_request)
            print("  %s CPU per request / switchyard's at c=%d (server + wrk): %s (rounds: %s)"
                  % (name, c, fmt(got, ".2f"), show(per)))


def same_moment(row):
    """Returns the share of the batch-8 pipeline's rate a switchyard cell's worker delivered during the cell.

    That is the share of the cell it spent in pipeline calls, times their
    mean batch over 8: 1.0 is the model computing full batches all the time.
    Unlike req/s over the ceiling, both sides come from the same seconds.
    """
    calls = row.get("calls")
    return calls["busy"] * calls["batch_mean"] / 8 if calls else None


def cpu_per_request(row):
    """Returns the CPU ms per request of a row: the server's processes and wrk (a ceiling has no wrk)."""
    return (row["cpu_us"]["server"] + row["cpu_us"].get("wrk", 0.0)) / 1e3


def verdict(ok):
    """Returns "met" or "missed"."""
    return "met" if ok else "missed"


def main():
    """Runs the subcommand."""
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("cell")
    c.add_argument("--round", type=int, required=True)
    c.add_argument("--label", required=True)
    c.add_argument("--c", type=int, required=True)
    c.add_argument("--lua", required=True)
    c.add_argument("--duration", type=int, default=10)
    c.add_argument("--warmup", type=int, default=2)
    c.add_argument("--server", type=int, required=True)
    c.add_argument("--calls-log", help="switchyard's log at --log-level debug: the worker's model calls")
    c.add_argument("url")
    r = sub.add_parser("report")
    r.add_argument("results")
    r.add_argument("--load", default="")
    args = ap.parse_args()
    if args.cmd == "cell":
        cell(args)
    else:
        report(args)


if __name__ == "__main__":
    main()
