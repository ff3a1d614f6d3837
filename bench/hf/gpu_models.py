"""The GPU benchmark's models and their in-process ceiling (bench/gpu_hf.sh).

Builds three DeBERTa-v3-base-size sequence classifiers with random weights
(the same compute as trained ones: 12 layers, hidden 768, a 128k-entry
vocabulary, relative attention), each with its own seed, in --out/<name>/,
with the tokenizer of the deberta-cls fixture (fixtures/build.py; its ids
are a subset of the vocabulary), and a text of exactly --tokens tokens with
[CLS] and [SEP]. Then measures, per model, the in-process ceiling: the
text-classification pipeline on the device answering batches of 1 and of 8
copies of the text, as many batches as fit in --seconds after a warm-up.
Prints one JSON object: the text, its token count, and per model the
requests per second at batch 1 and 8, and their sums.

    python bench/hf/gpu_models.py --out DIR --fixtures DIR [--size base|tiny] [--device cuda|cpu]
"""

import argparse
import json
import os
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# The GPU host's packages; pylint runs where they may not be installed.
# pylint: disable=import-error
import torch  # noqa: E402
import transformers  # noqa: E402

NAMES = ("deberta-a", "deberta-b", "deberta-c")
SIZES = {
    "base": {"hidden_size": 768, "num_hidden_layers": 12, "num_attention_heads": 12, "intermediate_size": 3072,
             "vocab_size": 128100},
    "tiny": {"hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128,
             "vocab_size": 1000},
}


def build(folder, tokenizer, size, seed, device):
    """Writes one random DeBERTa-v3-style classifier with tokenizer into folder (fp16 on a GPU)."""
    torch.manual_seed(seed)
    config = transformers.DebertaV2Config(
        **SIZES[size], max_position_embeddings=512, relative_attention=True, position_buckets=256,
        norm_rel_ebd="layer_norm", share_att_key=True, pos_att_type=["p2c", "c2p"], max_relative_positions=-1,
        position_biased_input=False, type_vocab_size=0, pad_token_id=tokenizer.pad_token_id,
        num_labels=3, id2label={0: "negative", 1: "neutral", 2: "positive"},
        label2id={"negative": 0, "neutral": 1, "positive": 2}, architectures=["DebertaV2ForSequenceClassification"])
    with torch.device(device):
        model = transformers.DebertaV2ForSequenceClassification(config)
    if device.startswith("cuda"):
        model = model.half()
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)


def text_of(tokenizer, tokens):
    """Returns a text that tokenizes to exactly tokens ids, [CLS] and [SEP] included."""
    words = "I loved the jacket but the camera arrived broken on Monday".split()
    text = ""
    for i in range(4 * tokens):
        candidate = (text + " " + words[i % len(words)]).strip()
        if len(tokenizer(candidate)["input_ids"]) > tokens:
            break
        text = candidate
    if len(tokenizer(text)["input_ids"]) != tokens:
        raise SystemExit("no text of exactly %d tokens from these words" % tokens)
    return text


def ceiling(folder, text, device, seconds):
    """Returns the pipeline's requests per second at batch 1 and at batch 8 on device."""
    dtype = torch.float16 if device.startswith("cuda") else torch.float32
    pipe = transformers.pipeline("text-classification", model=folder, device=device, dtype=dtype)
    out = {}
    for batch in (1, 8):
        inputs = [text] * batch
        for _ in range(3):
            pipe(inputs, batch_size=batch)
        sync(device)
        began, n = time.perf_counter(), 0
        while time.perf_counter() - began < seconds:
            pipe(inputs, batch_size=batch)
            n += 1
        sync(device)
        out["b%d" % batch] = n * batch / (time.perf_counter() - began)
    del pipe
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
    return out


def sync(device):
    """Waits for the device's queued work."""
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def main():
    """Builds the models and prints their ceilings."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--fixtures", required=True, help="fixtures/build.py's --out, with deberta-cls built")
    parser.add_argument("--size", choices=sorted(SIZES), default="base")
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--tokens", type=int, default=128)
    parser.add_argument("--seconds", type=float, default=3.0)
    args = parser.parse_args()
    tokenizer = transformers.AutoTokenizer.from_pretrained(os.path.join(args.fixtures, "deberta-cls"))
    text = text_of(tokenizer, args.tokens)
    report = {"text": text, "tokens": args.tokens, "size": args.size, "device": args.device,
              "torch": torch.__version__, "transformers": transformers.__version__, "models": {}}
    for seed, name in enumerate(NAMES):
        folder = os.path.join(args.out, name)
        build(folder, tokenizer, args.size, seed, args.device)
        report["models"][name] = ceiling(folder, text, args.device, args.seconds)
    report["sum_b1"] = sum(m["b1"] for m in report["models"].values())
    report["sum_b8"] = sum(m["b8"] for m in report["models"].values())
    print(json.dumps(report))


if __name__ == "__main__":
    main()
