"""Measure the toy chat model and its engine, and print sample answers.

    /usr/bin/python3 bench_engine.py [--threads 2] [--max-new-tokens 200]

Prints the parameter count, the checkpoint size, the training summary, time
to first token and tokens/s for one greedy sequence, aggregate tokens/s for
eight concurrent sequences, and three greedy answers. Timed runs ignore
<|end|> so that every sequence generates exactly --max-new-tokens tokens.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import engine  # noqa: E402

CHECKPOINT = ["config.json", "pytorch_model.bin", "tokenizer.model", "tokenizer_config.json",
              "generation_config.json", "special_tokens_map.json"]
QUESTIONS = ["What does cruft mean?", "Define hack.", "What is a kludge?", "What does grok mean?",
             "What is a daemon?", "Define foo.", "What is a wizard?", "What does bogus mean?"]


def run_one(eng: engine.Engine, question: str, n: int) -> dict:
    """run_one times one sequence: submit to first token, and to the end."""
    ids = eng.encode(eng.render_chat([{"role": "user", "content": question}]))
    start = time.perf_counter()
    seq = eng.submit(ids, n, temperature=0, ignore_eos=True)
    first = None
    for _ in seq:
        first = first or time.perf_counter()
    end = time.perf_counter()
    return {"ttft": first - start, "total": end - start, "tokens": seq.generated_tokens, "end": end}


def run_many(eng: engine.Engine, questions: list[str], n: int) -> dict:
    """run_many starts one consumer thread per question at once and times
    until the last sequence ends."""
    results: list[dict] = [{} for _ in questions]
    start = time.perf_counter()

    def consume(i: int) -> None:
        results[i] = run_one(eng, questions[i], n)

    threads = [threading.Thread(target=consume, args=(i,)) for i in range(len(questions))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = max(r["end"] for r in results) - start
    tokens = sum(r["tokens"] for r in results)
    return {"wall": wall, "tokens": tokens, "ttft": statistics.median(r["ttft"] for r in results)}


def median_of(runs: list[dict], key: str) -> float:
    """Returns the median of key over the runs."""
    return statistics.median(r[key] for r in runs)


def answer(eng: engine.Engine, question: str) -> str:
    """Returns the engine's greedy answer to question, with its finish reason."""
    ids = eng.encode(eng.render_chat([{"role": "user", "content": question}]))
    seq = eng.submit(ids, 120, temperature=0)
    return "".join(t.text for t in seq) + f"  [{seq.finish_reason}]"


def main(argv=None) -> int:
    """Loads the model, runs the benchmark and prints its numbers; returns the exit status."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model-dir", default=HERE)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--max-new-tokens", type=int, default=200)
    p.add_argument("--repeat", type=int, default=3)
    args = p.parse_args(argv)
    size = sum(os.path.getsize(os.path.join(args.model_dir, f)) for f in CHECKPOINT)
    with engine.Engine(args.model_dir, max_batch=8, threads=args.threads) as eng:
        print(f"parameters        {eng.model.num_parameters():,}")
        print(f"checkpoint        {size / 1e6:.2f} MB")
        summary = os.path.join(args.model_dir, "training_summary.json")
        if os.path.exists(summary):
            with open(summary, encoding="utf-8") as f:
                print(f"training          {json.load(f)}")
        run_one(eng, QUESTIONS[0], 20)  # warm-up
        n = args.max_new_tokens
        one = [run_one(eng, QUESTIONS[0], n) for _ in range(args.repeat)]
        many = [run_many(eng, QUESTIONS, n) for _ in range(args.repeat)]
        single_total = median_of(one, "total")
        print(f"1 sequence        ttft {median_of(one, 'ttft') * 1e3:.1f} ms, "
              f"{n / single_total:.1f} tokens/s ({single_total:.2f} s for {n} tokens)")
        wall = median_of(many, "wall")
        print(f"8 sequences       {8 * n / wall:.1f} tokens/s aggregate, {wall:.2f} s wall "
              f"(8 x one alone would be {8 * single_total:.2f} s), median ttft "
              f"{median_of(many, 'ttft') * 1e3:.1f} ms")
        for q in QUESTIONS[:3]:
            print(f"\nQ: {q}\nA: {answer(eng, q)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
