"""Throughput and cold loads of LoRA adapters through switchyard (issue "LoRA adapters", Measure).

Serves the causal-LM fixture (fixtures/build.py's qwen2-chat) with
option.enable_lora=true and eight adapters in its adapters/ folder: the
fixture's four trained ones and four more made here with peft on the same
base (the same LoRA config: rank 8, alpha 16, q/k/v/o projections; random
weights with nonzero B, init_lora_weights=False). One switchyard, one
worker (torch on --torch-threads threads), option.max_loras=8 (every
adapter fits on the device: the spread run measures mixed batches, not
evictions), batch_size=16 with adaptive_batching. The base is a copy of
the fixture whose generation config names an end token past the
vocabulary, so that every answer is max_tokens long (the same work per
request for every adapter; the trained adapters' own answers end
sooner). Every request is the same greedy chat request through
POST /v1/chat/completions, its "model" naming the adapter, max_tokens
--max-tokens.

1. Throughput at concurrency --concurrency: --requests requests all naming
   one adapter ("one") against the same number spread round-robin over the
   eight ("spread"), --rounds interleaved rounds (the order alternates),
   after one warm-up run of each that is not counted. Requests/s and
   generated tokens/s (usage.completion_tokens) per run, the medians, and
   spread/one (target 0.7 at least).
2. Cold loads, one request at a time, the time from sending a request to
   its whole answer:
   * from host memory: a ninth adapter registered (preload), then requests
     round-robin over the nine: with eight places each request finds its
     adapter evicted (least recently used) and puts it back from the host
     copy the eviction kept, evicting another;
   * from its folder: a fresh adapter registered with preload=false
     (POST /models/qwen/adapters), its first request timed (read from
     disk, put on the device, the least recently used one evicted), then
     unregistered;
   * warm: each cold request is followed by a second one for the same
     adapter, which is on the device then; the paired differences (cold
     minus warm) are the load's cost, the noise of a shared machine mostly
     taken out.
   switchyard_adapter_loads_total confirms that each cold request loaded
   its adapter.
0. Before the server starts, the ceiling in this process: one
   PeftModel.generate call for a batch of --concurrency sequences with one
   adapter against the eight (adapter_names), --rounds interleaved rounds.

    python bench/hf/lora_bench.py --bin SWITCHYARD --fixtures .cache/fixtures [--out report.json]

prints the tables and writes everything to --out. bench/bench_lora.sh
builds switchyard and runs it.
"""

import argparse
import concurrent.futures
import http.client
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

TARGET = 0.7
MODEL = "qwen"
QUESTION = "Farid Haddad signed a trade deal in Paris on Tuesday."
TRAINED = ("classification", "extraction", "qa", "summarization")
RANDOM = ("r0", "r1", "r2", "r3")
# The fixture adapters' LoRA config (fixtures/build.py, _chat_adapter_configs).
LORA = {"r": 8, "lora_alpha": 16, "lora_dropout": 0.0, "target_modules": ["q_proj", "k_proj", "v_proj", "o_proj"]}


def make_random_adapters(base, names, out, seed=1000):
    """Writes one peft adapter per name on base: the fixture's config, random A and B."""
    # The project's environment has these; pylint runs where it may not.
    # pylint: disable=import-error,import-outside-toplevel
    import copy

    import peft
    import torch
    import transformers

    model = transformers.AutoModelForCausalLM.from_pretrained(base)
    for i, name in enumerate(names):
        torch.manual_seed(seed + i)
        cfg = peft.LoraConfig(task_type="CAUSAL_LM", init_lora_weights=False, **LORA)
        peft.get_peft_model(copy.deepcopy(model), cfg).save_pretrained(os.path.join(out, name))


def widen(base):
    """Replaces the weights of the base folder by a random Qwen2 with Qwen2-0.5B's layers (24 of hidden
    896, 14 heads, 2 key-value heads, MLP 4864), keeping the fixture's tokenizer and vocabulary."""
    # pylint: disable=import-error,import-outside-toplevel
    import torch
    import transformers

    config = transformers.AutoConfig.from_pretrained(base)
    config.update({"hidden_size": 896, "intermediate_size": 4864, "num_hidden_layers": 24,
                   "num_attention_heads": 14, "num_key_value_heads": 2, "layer_types": ["full_attention"] * 24})
    torch.manual_seed(0)
    model = transformers.Qwen2ForCausalLM(config)
    model.generation_config = transformers.GenerationConfig.from_pretrained(base)
    model.save_pretrained(base)


def never_ending(base):
    """Makes every answer of the base and its adapters run to max_tokens: the generation config's end
    token becomes one past the vocabulary, which the model never generates (the same compute per token)."""
    with open(os.path.join(base, "config.json"), encoding="utf-8") as f:
        vocab = json.load(f)["vocab_size"]
    path = os.path.join(base, "generation_config.json")
    with open(path, encoding="utf-8") as f:
        cfg = json.load(f)
    cfg["eos_token_id"] = [vocab]
    with open(path, "w", encoding="utf-8") as f:
        json.dump(cfg, f, indent=1)


def prepare(work, fixtures, args):
    """Writes the model folder, the adapters and the folders of fresh adapters; returns (store, lib, the
    eight adapters' names)."""
    base = os.path.join(work, "base")
    shutil.copytree(os.path.join(fixtures, "qwen2-chat"), base)
    trained, random = (TRAINED, RANDOM) if args.base == "fixture" else ((), tuple("r%d" % i for i in range(8)))
    if args.base == "wide":
        widen(base)
    never_ending(base)
    store, lib = os.path.join(work, "store"), os.path.join(work, "lib")
    folder = os.path.join(store, MODEL)
    os.makedirs(os.path.join(folder, "adapters"))
    os.makedirs(lib)
    for name in trained:
        shutil.copytree(os.path.join(fixtures, "qwen2-chat-adapters", name), os.path.join(folder, "adapters", name))
    make_random_adapters(base, random, os.path.join(folder, "adapters"))
    make_random_adapters(base, ["ninth"], lib, seed=2000)
    for i in range(args.cold):  # each a folder of its own, so that its first request reads it from disk
        shutil.copytree(os.path.join(folder, "adapters", random[i % len(random)]), os.path.join(lib, "fresh%02d" % i))
    with open(os.path.join(folder, "serving.properties"), "w", encoding="utf-8") as f:
        f.write("\n".join(["engine=Python", "option.model_id=" + base, "option.enable_lora=true",
                           "option.max_loras=8", "batch_size=16",
                           "max_batch_delay=50", "adaptive_batching=true", "minWorkers=1", "maxWorkers=1", ""]))
    return store, lib, list(trained + random)


class Server:
    """Server is one switchyard process on the store, with its two listeners."""

    def __init__(self, binary, work, store, lib, args, port):
        self.inference = ("127.0.0.1", port)
        self.management = ("127.0.0.1", port + 1)
        config = os.path.join(work, "config.properties")
        os.makedirs(os.path.join(work, "sock"))
        with open(config, "w", encoding="utf-8") as f:
            f.write("inference_address=http://127.0.0.1:%d\nmanagement_address=http://127.0.0.1:%d\n"
                    "model_store=%s\nsocket_dir=%s\npython_executable=%s\nallowed_model_roots=%s,%s\n"
                    % (port, port + 1, store, os.path.join(work, "sock"), args.python, store, lib))
        self.log = open(os.path.join(work, "server.log"), "wb")  # pylint: disable=consider-using-with
        env = dict(os.environ, OMP_NUM_THREADS=str(args.torch_threads))  # the worker's torch threads
        self.proc = subprocess.Popen([binary, "serve", "--config", config],  # pylint: disable=consider-using-with
                                     stdout=self.log, stderr=subprocess.STDOUT, env=env)

    def wait(self, seconds=300):
        """Waits until the model answers a chat request."""
        deadline = time.time() + seconds
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError("switchyard exited with %s" % self.proc.returncode)
            try:
                code, _ = call(self.inference, "POST", "/v1/chat/completions", chat(MODEL, 1))
                if code == 200:
                    return
            except OSError:
                pass
            time.sleep(0.5)
        raise RuntimeError("the model did not answer within %d s" % seconds)

    def stop(self):
        """Stops the server (SIGTERM) and waits for it."""
        self.proc.terminate()
        try:
            self.proc.wait(60)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.log.close()

    def loads(self):
        """Returns the sum of switchyard_adapter_loads_total over the model's adapters."""
        _, body = call(self.management, "GET", "/metrics")
        total = 0.0
        for line in body.decode().splitlines():
            if line.startswith("switchyard_adapter_loads_total{"):
                total += float(line.rsplit(" ", 1)[1])
        return total


def chat(model, max_tokens):
    """Returns the body of one greedy chat request naming model (an adapter, or the base)."""
    return json.dumps({"model": model, "messages": [{"role": "user", "content": QUESTION}],
                       "max_tokens": max_tokens, "temperature": 0}).encode()


def call(addr, method, path, body=None, conn=None):
    """Sends one request; returns (status, body). conn, when given, is kept open for the next."""
    own = conn is None
    if own:
        conn = http.client.HTTPConnection(*addr, timeout=300)
    try:
        conn.request(method, path, body=body, headers={"Content-Type": "application/json"} if body else {})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        if own:
            conn.close()


def run_load(server, names, requests, concurrency, max_tokens):
    """Sends requests chat requests, request i naming names[i % len(names)], from concurrency loops
    (one keep-alive connection each); returns req/s, tokens/s and the mean tokens per answer."""
    bodies = [chat(names[i % len(names)], max_tokens) for i in range(requests)]
    lock = threading.Lock()
    state = {"next": 0, "tokens": 0, "errors": 0}

    def loop():
        conn = http.client.HTTPConnection(*server.inference, timeout=300)
        try:
            while True:
                with lock:
                    i = state["next"]
                    state["next"] += 1
                if i >= requests:
                    return
                code, body = call(server.inference, "POST", "/v1/chat/completions", bodies[i], conn)
                with lock:
                    if code == 200:
                        state["tokens"] += json.loads(body)["usage"]["completion_tokens"]
                    else:
                        state["errors"] += 1
        finally:
            conn.close()

    began = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(concurrency) as pool:
        for f in [pool.submit(loop) for _ in range(concurrency)]:
            f.result()
    took = time.perf_counter() - began
    return {"requests": requests, "seconds": round(took, 3), "rps": round(requests / took, 2),
            "tokens_per_s": round(state["tokens"] / took, 1),
            "tokens_per_request": round(state["tokens"] / requests, 2), "errors": state["errors"]}


def throughput(server, args, names):
    """Runs the interleaved rounds of one adapter against eight; returns the rows and medians."""
    runs = {"one": names[:1], "spread": names}
    for picked in runs.values():  # warm-up: not counted; puts the eight on the device
        run_load(server, picked, max(args.concurrency, len(picked)) * 2, args.concurrency, args.max_tokens)
    rows = []
    for r in range(args.rounds):
        load = quiet(args.max_load)
        order = ["one", "spread"] if r % 2 == 0 else ["spread", "one"]
        for label in order:
            row = run_load(server, runs[label], args.requests, args.concurrency, args.max_tokens)
            row.update(round=r + 1, run=label, loadavg=load)
            rows.append(row)
            print("round %d %-6s %7.2f req/s %8.1f tokens/s  %.1f tokens/answer  %d errors" % (
                r + 1, label, row["rps"], row["tokens_per_s"], row["tokens_per_request"], row["errors"]), flush=True)
    med = {label: {k: statistics.median(x[k] for x in rows if x["run"] == label) for k in ("rps", "tokens_per_s")}
           for label in runs}
    ratio = {k: round(med["spread"][k] / med["one"][k], 3) for k in ("rps", "tokens_per_s")}
    return {"rows": rows, "median": med, "ratio": ratio, "target": TARGET}


def quiet(max_load, patience=180):
    """Waits (at most patience seconds) until the 1-minute load average is below max_load; returns it."""
    deadline = time.time() + patience
    while True:
        with open("/proc/loadavg", encoding="ascii") as f:
            load = float(f.read().split()[0])
        if load < max_load or time.time() > deadline:
            return load
        time.sleep(5)


def _peft_model(store, names):
    """Returns the base's tokenizer (padding left) and a PeftModel on it holding the adapters names."""
    # pylint: disable=import-error,import-outside-toplevel
    import peft
    import transformers

    folder = os.path.join(store, MODEL)
    base = os.path.join(os.path.dirname(store), "base")
    tokenizer = transformers.AutoTokenizer.from_pretrained(base, padding_side="left")
    model = transformers.AutoModelForCausalLM.from_pretrained(base).eval()
    model = peft.PeftModel.from_pretrained(model, os.path.join(folder, "adapters", names[0]), adapter_name=names[0])
    for name in names[1:]:
        model.load_adapter(os.path.join(folder, "adapters", name), adapter_name=name)
    return tokenizer, model


def in_process(store, names, args):
    """The same batch of 16 in this process, no server: PeftModel.generate over one adapter against the
    eight (adapter_names), --rounds interleaved rounds; returns the median seconds per call and the ratio."""
    # pylint: disable=import-error,import-outside-toplevel
    import torch

    torch.set_num_threads(args.torch_threads)
    tokenizer, model = _peft_model(store, names)
    text = tokenizer.apply_chat_template([{"role": "user", "content": QUESTION}], tokenize=False,
                                         add_generation_prompt=True)
    batch = tokenizer([text] * args.concurrency, return_tensors="pt", add_special_tokens=False)
    picks = {"one": [names[0]] * args.concurrency,
             "spread": [names[i % len(names)] for i in range(args.concurrency)]}
    took = {"one": [], "spread": []}
    for r in range(args.rounds + 1):  # the first round warms up
        for label in (["one", "spread"] if r % 2 == 0 else ["spread", "one"]):
            began = time.perf_counter()
            with torch.no_grad():
                model.generate(**batch, max_new_tokens=args.max_tokens, do_sample=False, adapter_names=picks[label])
            if r > 0:
                took[label].append(time.perf_counter() - began)
    out = {label: round(statistics.median(xs), 4) for label, xs in took.items()}
    out["ratio"] = round(out["one"] / out["spread"], 3)
    print("in process, one generate call for %d sequences: one adapter %.3f s, eight %.3f s; one/eight %.2f" % (
        args.concurrency, out["one"], out["spread"], out["ratio"]), flush=True)
    return out


def timed(server, model, max_tokens):
    """Sends one chat request naming model; returns its time to the whole answer in ms."""
    began = time.perf_counter()
    code, body = call(server.inference, "POST", "/v1/chat/completions", chat(model, max_tokens))
    took = (time.perf_counter() - began) * 1000
    if code != 200:
        raise RuntimeError("%s: %d %s" % (model, code, body[:200]))
    return took


def percentile(xs, p):
    """Returns the p-th percentile of xs (nearest rank)."""
    s = sorted(xs)
    return s[min(len(s) - 1, max(0, int(round(p / 100 * len(s) + 0.5)) - 1))]


def summary(xs):
    """Returns n, p50 and p90 of xs in ms."""
    return {"n": len(xs), "p50_ms": round(percentile(xs, 50), 1), "p90_ms": round(percentile(xs, 90), 1),
            "all_ms": [round(x, 1) for x in xs]}


def register(server, name, src, preload=True):
    """Registers an adapter of the model through DJL's route."""
    code, body = call(server.management, "POST", "/models/%s/adapters?name=%s&src=%s&preload=%s" % (
        MODEL, name, urllib.parse.quote(src), "true" if preload else "false"))
    if code != 200:
        raise RuntimeError("register %s: %d %s" % (name, code, body))


def from_host(server, args, lib, names):
    """Times requests round-robin over nine adapters with room for eight, each followed by a second
    request for the same adapter (warm: it is on the device then); returns (cold, warm, loads)."""
    register(server, "ninth", os.path.join(lib, "ninth"))
    cycle = names + ["ninth"]
    for name in cycle:  # the device now holds the last eight; every later request misses
        timed(server, name, args.max_tokens)
    cold, warm = [], []
    before = server.loads()
    for i in range(args.cold):
        cold.append(timed(server, cycle[i % len(cycle)], args.max_tokens))
        warm.append(timed(server, cycle[i % len(cycle)], args.max_tokens))
    loads = server.loads() - before
    call(server.management, "DELETE", "/models/%s/adapters/ninth" % MODEL)
    return cold, warm, loads


def from_folder(server, args, lib):
    """Times the first and second request of fresh adapters (preload=false); returns (first, second, loads)."""
    first, second, loads = [], [], 0
    for i in range(args.cold):
        name = "fresh%02d" % i
        register(server, name, os.path.join(lib, name), preload=False)
        before = server.loads()
        first.append(timed(server, name, args.max_tokens))
        loads += server.loads() - before
        second.append(timed(server, name, args.max_tokens))
        call(server.management, "DELETE", "/models/%s/adapters/%s" % (MODEL, name))  # its series go with it
    return first, second, loads


def cold_loads(server, args, lib, names):
    """Times cold requests from host memory and from the adapter's folder, and warm ones."""
    quiet(args.max_load)
    host, warm, host_loads = from_host(server, args, lib, names)
    disk, after, disk_loads = from_folder(server, args, lib)
    out = {"from_host": summary(host), "warm_after_host": summary(warm), "host_loads": host_loads,
           "from_folder": summary(disk), "warm_after_folder": summary(after), "folder_loads": disk_loads,
           "host_minus_warm": summary([c - w for c, w in zip(host, warm)]),
           "folder_minus_warm": summary([c - w for c, w in zip(disk, after)])}
    for key in ("from_host", "warm_after_host", "host_minus_warm", "from_folder", "warm_after_folder",
                "folder_minus_warm"):
        print("%-17s n=%d p50 %7.1f ms  p90 %7.1f ms" % (key, out[key]["n"], out[key]["p50_ms"], out[key]["p90_ms"]))
    print("adapter loads counted: %d for %d requests from host memory, %d for %d from folders" % (
        host_loads, args.cold, disk_loads, args.cold))
    return out


def machine():
    """Returns the CPU model, its count and the load average."""
    cpu = ""
    with open("/proc/cpuinfo", encoding="utf-8") as f:
        for line in f:
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    with open("/proc/loadavg", encoding="ascii") as f:
        load = " ".join(f.read().split()[:3])
    return {"cpu": cpu, "cpus": os.cpu_count(), "loadavg": load}


def main():
    """Prepares the folders, starts switchyard, measures and prints."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--bin", required=True, help="the switchyard binary (CGO_ENABLED=1 go build)")
    parser.add_argument("--fixtures", required=True, help="the built fixtures (qwen2-chat, qwen2-chat-adapters)")
    parser.add_argument("--python", default=sys.executable, help="the workers' Python")
    parser.add_argument("--out", help="write the report (JSON) here")
    parser.add_argument("--port", type=int, default=18960)
    parser.add_argument("--base", choices=("fixture", "wide"), default="fixture",
                        help="fixture: the fixture's base (2 layers of hidden 128) with its four trained adapters "
                             "and four random ones; wide: Qwen2-0.5B's layers (random, float32) with eight random "
                             "adapters")
    parser.add_argument("--torch-threads", type=int, default=1,
                        help="the worker's torch threads (OMP_NUM_THREADS): one leaves a core of two to the "
                             "front-end and the client")
    parser.add_argument("--requests", type=int, default=128)
    parser.add_argument("--concurrency", type=int, default=16)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--max-tokens", type=int, default=16)
    parser.add_argument("--cold", type=int, default=16)
    parser.add_argument("--max-load", type=float, default=1e9,
                        help="before each round, wait (up to 3 minutes) for a 1-minute load average below this")
    args = parser.parse_args()
    work = tempfile.mkdtemp(prefix="switchyard-lorabench.")
    server = None
    try:
        before = machine()
        store, lib, names = prepare(work, args.fixtures, args)
        ceiling = in_process(store, names, args)
        server = Server(os.path.abspath(args.bin), work, store, lib, args, args.port)
        server.wait()
        report = {"machine": before, "settings": vars(args), "in_process": ceiling,
                  "throughput": throughput(server, args, names)}
        report["cold"] = cold_loads(server, args, lib, names)
        report["machine"]["loadavg_after"] = machine()["loadavg"]
        t = report["throughput"]
        print("median: one %.2f req/s %.1f tokens/s; spread %.2f req/s %.1f tokens/s; spread/one %.2f (req/s), "
              "%.2f (tokens/s); target %.1f" % (t["median"]["one"]["rps"], t["median"]["one"]["tokens_per_s"],
                                                t["median"]["spread"]["rps"], t["median"]["spread"]["tokens_per_s"],
                                                t["ratio"]["rps"], t["ratio"]["tokens_per_s"], TARGET))
        print("machine: %s x%d, load average %s before, %s after" % (
            before["cpu"], before["cpus"], before["loadavg"], report["machine"]["loadavg_after"]))
        if args.out:
            with open(args.out, "w", encoding="utf-8") as f:
                json.dump(report, f, indent=1)
    finally:
        if server is not None:
            server.stop()
            if args.out:
                shutil.copy(os.path.join(work, "server.log"), args.out + ".server.log")
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
