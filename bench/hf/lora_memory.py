"""Memory of LoRA adapters on one base (issue "LoRA adapters", Measure).

Builds a Qwen2 causal LM of Qwen2-0.5B's shape (24 layers, hidden 896,
vocabulary 151,936; random weights, bfloat16: the same bytes as trained
ones) and N rank-16 LoRA adapters on the attention projections (q, k, v,
o), saved as PEFT folders. Then, in this process, loads the base the way
the worker's Hugging Face handler does (switchyard_runtime.hf.causal) and
puts the adapters on the device one after another with its Adapters
(max_loras = N), reading the process's resident memory after each. Prints
one JSON object: the base's RSS, each adapter's safetensors size and the
RSS it added, the ratio (target 1.5 at most), and N adapters on one base
against N workers each holding its own base (N times the RSS of a process
that holds the base: the interpreter, torch and the weights).

    python bench/hf/lora_memory.py --out DIR [--adapters 20] [--runtime pyruntime]
"""

import argparse
import gc
import json
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# The project's environment has these; pylint runs where it may not.
# pylint: disable=import-error
import torch  # noqa: E402
import transformers  # noqa: E402

torch.set_num_threads(2)


def rss_mib():
    """Returns this process's resident memory in MiB (/proc/self/status)."""
    with open("/proc/self/status", encoding="ascii") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    raise RuntimeError("no VmRSS")


def build(out, n):
    """Writes the base and n adapters into out; returns the base's folder."""
    import peft

    base_dir = os.path.join(out, "base")
    if not os.path.isfile(os.path.join(base_dir, "config.json")):
        torch.manual_seed(0)
        config = transformers.Qwen2Config(hidden_size=896, intermediate_size=4864, num_hidden_layers=24,
                                          num_attention_heads=14, num_key_value_heads=2, vocab_size=151936,
                                          max_position_embeddings=2048, tie_word_embeddings=True,
                                          architectures=["Qwen2ForCausalLM"], dtype="bfloat16")
        model = transformers.Qwen2ForCausalLM(config).to(torch.bfloat16)
        model.save_pretrained(base_dir)
        del model
    for i in range(n):
        folder = os.path.join(out, "adapters", "a%02d" % i)
        if os.path.isfile(os.path.join(folder, "adapter_config.json")):
            continue
        torch.manual_seed(100 + i)
        base = transformers.AutoModelForCausalLM.from_pretrained(base_dir, dtype=torch.bfloat16)
        cfg = peft.LoraConfig(r=16, lora_alpha=32, target_modules=["q_proj", "k_proj", "v_proj", "o_proj"],
                              task_type="CAUSAL_LM", init_lora_weights=False)
        peft.get_peft_model(base, cfg).save_pretrained(folder)
        del base
        gc.collect()
    return base_dir


def measure(base_dir, adapters_dir, n):
    """Loads the base and the adapters as the worker does; returns the report."""
    from switchyard_runtime.hf.adapters import Adapters

    before = rss_mib()
    model = _Tokenless(base_dir)
    process = rss_mib()
    base = process - before
    adapters = Adapters(model, {"max_loras": str(n), "max_cpu_loras": str(n)})
    rows = [load_one(adapters, "a%02d" % i, adapters_dir) for i in range(n)]
    added = [r["added_mib"] for r in rows[1:]]  # the first one also wraps the model in a PeftModel
    per_adapter = sorted(added)[len(added) // 2] if added else 0.0
    size = rows[0]["safetensors_mib"]
    return {"base_params_m": round(sum(p.numel() for p in model.model.parameters()) / 1e6, 1),
            "dtype": "bfloat16", "base_rss_mib": round(base, 1), "adapters": rows,
            "median_added_mib": per_adapter, "safetensors_mib": size,
            "ratio": round(per_adapter / size, 2) if size else None,
            "one_worker_with_n_mib": round(rss_mib(), 1), "worker_with_base_mib": round(process, 1),
            "n_workers_mib": round(n * process, 1), "n": n}


def load_one(adapters, name, adapters_dir):
    """Registers one adapter and puts it on the device; returns its size, the RSS it added and the time."""
    folder = os.path.join(adapters_dir, name)
    size = os.path.getsize(os.path.join(folder, "adapter_model.safetensors")) / 2 ** 20
    gc.collect()
    at = rss_mib()
    began = time.perf_counter()
    adapters.register(name, folder)
    adapters.ensure({name})
    took = time.perf_counter() - began
    gc.collect()
    return {"adapter": name, "safetensors_mib": round(size, 2), "added_mib": round(rss_mib() - at, 2),
            "load_ms": round(took * 1000, 1)}


class _Tokenless:
    """_Tokenless is the part of CausalModel that Adapters uses (model, device), without a tokenizer."""

    def __init__(self, folder):
        self.model = transformers.AutoModelForCausalLM.from_pretrained(folder, dtype=torch.bfloat16).eval()
        self.device = "cpu"
        with torch.no_grad():  # touch every weight, so that all of them count in the RSS (they are mapped lazily)
            for p in self.model.parameters():
                p.float().sum()


def main():
    """Builds the models (once) and prints the memory report."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--adapters", type=int, default=20)
    parser.add_argument("--runtime", default=os.path.join(os.path.dirname(__file__), "..", "..", "pyruntime"))
    args = parser.parse_args()
    sys.path.insert(0, os.path.abspath(args.runtime))
    base_dir = build(args.out, args.adapters)
    gc.collect()
    print(json.dumps(measure(base_dir, os.path.join(args.out, "adapters"), args.adapters)))


if __name__ == "__main__":
    main()
