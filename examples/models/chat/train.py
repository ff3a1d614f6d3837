"""Train the toy chat model on the Jargon File and write a GPT-2 checkpoint.

Run from anywhere with Debian's torch (``/usr/bin/python3``), or use
``bash scripts/train_chat.sh``. Every random choice is seeded, so a rerun on
the same machine writes the same files. Steps:

1. parse the Jargon File into (term, definition) entries (jargon.py);
2. build chat examples: several question phrasings per term, sometimes a
   system message or a second turn; the answer is the definition's first one
   or two sentences;
3. train a sentencepiece BPE tokenizer with the chat tags as user symbols;
4. train a 4-layer GPT-2 (d_model 128, 4 heads, context 256) with the loss on
   assistant tokens only;
5. save config.json, pytorch_model.bin, tokenizer.model, tokenizer_config.json,
   special_tokens_map.json, generation_config.json and training_summary.json.
"""

from __future__ import annotations

import argparse
import io
import json
import math
import os
import random
import sys
import time

import sentencepiece as spm
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import chattok  # noqa: E402
import gpt  # noqa: E402
import jargon  # noqa: E402

QUESTIONS = [
    "What does {term} mean?",
    "Define {term}.",
    "What is {a} {term}?",
    "What is the meaning of {term}?",
    "Explain the jargon term \"{term}\".",
    "In hacker slang, what is {term}?",
    "{term}?",
    "Can you tell me what {term} means?",
    "What does the word {term} mean in the Jargon File?",
    "what does {term} mean",
    "I keep hearing hackers say {term}. What is it?",
    "Give me a short definition of {term}.",
]
SYSTEMS = [
    "You are a helpful assistant who explains hacker jargon.",
    "Answer briefly.",
    "You explain terms from the Jargon File in one or two sentences.",
    "You are a friendly old-school hacker.",
]
IGNORE = -100


def answer(e: jargon.Entry) -> str:
    """answer is the assistant reply for an entry: term, kind, definition."""
    kind = f" ({e.pos})" if e.pos else ""
    return f"{e.term}{kind}: {e.definition}"


def question(e: jargon.Entry, template: str) -> str:
    """question fills one phrasing with the term and its article."""
    a = "an" if e.term[:1].lower() in "aeiou" else "a"
    return template.format(term=e.term, a=a)


def conversations(entries, rng: random.Random, per_entry: int) -> list[list[dict]]:
    """conversations builds per_entry chats per term, some with a system
    message (20%) and some with an earlier question and answer (10%)."""
    out = []
    for e in entries:
        for template in rng.sample(QUESTIONS, per_entry):
            msgs = [{"role": "user", "content": question(e, template)},
                    {"role": "assistant", "content": answer(e)}]
            if rng.random() < 0.10:
                o = rng.choice(entries)
                msgs = [{"role": "user", "content": question(o, rng.choice(QUESTIONS))},
                        {"role": "assistant", "content": answer(o)}] + msgs
            if rng.random() < 0.20:
                msgs = [{"role": "system", "content": rng.choice(SYSTEMS)}] + msgs
            out.append(msgs)
    rng.shuffle(out)
    return out


def train_tokenizer(chats, out_dir: str, vocab_size: int) -> None:
    """train_tokenizer fits a byte-fallback BPE model on the rendered chats.
    Text goes in and the model comes out through memory, so no temporary
    path ends up inside tokenizer.model and reruns write the same bytes."""
    model = io.BytesIO()
    spm.SentencePieceTrainer.train(
        sentence_iterator=iter([chattok.render_chat(c, add_generation_prompt=False) for c in chats]),
        model_writer=model, model_type="bpe", vocab_size=vocab_size,
        user_defined_symbols=chattok.SPECIAL_TOKENS, byte_fallback=True,
        normalization_rule_name="identity", add_dummy_prefix=False,
        remove_extra_whitespaces=False, split_digits=True, character_coverage=0.9995,
        unk_id=0, bos_id=1, eos_id=2, pad_id=-1, num_threads=1,
        max_sentence_length=16384, minloglevel=2)
    with open(os.path.join(out_dir, chattok.TOKENIZER_FILE), "wb") as f:
        f.write(model.getvalue())


def encode_chat(tok: chattok.ChatTokenizer, chat: list[dict], limit: int):
    """encode_chat returns (ids, labels) for next-token training: a label is
    the next id where that id is assistant content or its <|end|>, else
    IGNORE. Role tags are given by the template, so they are not learned."""
    ids, learn = [], []
    for m in chat:
        part = tok.encode(chattok.render_chat([m], add_generation_prompt=False))
        ids += part
        learn += [False] + [m["role"] == "assistant"] * (len(part) - 1)
    ids, learn = ids[:limit], learn[:limit]
    labels = [n if ok else IGNORE for n, ok in zip(ids[1:], learn[1:])] + [IGNORE]
    return ids, labels


def batches(data, batch_size: int, rng: random.Random):
    """batches yields padded (ids, labels) tensors grouped by similar length."""
    order = list(range(len(data)))
    rng.shuffle(order)
    chunk = batch_size * 50
    groups = []
    for i in range(0, len(order), chunk):
        part = sorted(order[i:i + chunk], key=lambda j: len(data[j][0]))
        groups += [part[k:k + batch_size] for k in range(0, len(part), batch_size)]
    rng.shuffle(groups)
    for g in groups:
        yield pad([data[j] for j in g])


def pad(items):
    """pad right-pads ids with 0 and labels with IGNORE to a common length."""
    t = max(len(ids) for ids, _ in items)
    ids = torch.zeros(len(items), t, dtype=torch.long)
    labels = torch.full((len(items), t), IGNORE, dtype=torch.long)
    for i, (a, b) in enumerate(items):
        ids[i, : len(a)] = torch.tensor(a)
        labels[i, : len(b)] = torch.tensor(b)
    return ids, labels


def lr_at(step: int, total: int, peak: float, warmup: int) -> float:
    """lr_at is linear warm-up then cosine decay to a tenth of the peak."""
    if step < warmup:
        return peak * (step + 1) / warmup
    frac = (step - warmup) / max(1, total - warmup)
    return peak * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * frac)))


def train(model, data, args) -> dict:
    """train runs AdamW for args.steps steps and returns loss statistics."""
    rng = random.Random(args.seed + 1)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, betas=(0.9, 0.98), weight_decay=0.01, foreach=True)
    model.train()
    step, recent, start = 0, [], time.time()
    while step < args.steps:
        for ids, labels in batches(data, args.batch_size, rng):
            if step >= args.steps:
                break
            for group in opt.param_groups:
                group["lr"] = lr_at(step, args.steps, args.lr, args.warmup)
            keep = labels != IGNORE
            loss = F.cross_entropy(model.logits(model.features(ids)[keep]), labels[keep])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            recent = (recent + [loss.item()])[-50:]
            step += 1
            if step % args.log_every == 0 or step == args.steps:
                print(f"step {step:5d}/{args.steps}  loss {sum(recent) / len(recent):.4f}  "
                      f"lr {opt.param_groups[0]['lr']:.2e}  {time.time() - start:6.0f}s", flush=True)
    model.eval()
    return {"final_loss": round(sum(recent) / len(recent), 4), "train_seconds": round(time.time() - start, 1)}


def save_tokenizer_files(out_dir: str, tok: chattok.ChatTokenizer, n_positions: int) -> None:
    """save_tokenizer_files writes the Hugging Face tokenizer and generation
    configs that point at tokenizer.model and carry the chat template."""
    added = {str(tok.special[t]): {"content": t, "special": True, "lstrip": False, "rstrip": False,
                                   "normalized": False, "single_word": False}
             for t in chattok.SPECIAL_TOKENS}
    write_json(out_dir, "tokenizer_config.json", {
        "tokenizer_class": "LlamaTokenizer", "vocab_file": chattok.TOKENIZER_FILE,
        "legacy": True, "add_prefix_space": False, "add_bos_token": False, "add_eos_token": False,
        "bos_token": "<s>", "eos_token": chattok.END, "unk_token": "<unk>", "pad_token": None,
        "additional_special_tokens": chattok.SPECIAL_TOKENS, "added_tokens_decoder": added,
        "clean_up_tokenization_spaces": False, "model_max_length": n_positions,
        "chat_template": chattok.CHAT_TEMPLATE})
    write_json(out_dir, "special_tokens_map.json", {
        "bos_token": "<s>", "eos_token": chattok.END, "unk_token": "<unk>",
        "additional_special_tokens": chattok.SPECIAL_TOKENS})
    write_json(out_dir, "generation_config.json", {
        "bos_token_id": tok.sp.bos_id(), "eos_token_id": [tok.end_id, tok.sp.eos_id()],
        "do_sample": True, "temperature": 0.1, "top_p": 1.0, "max_new_tokens": 128})


def write_json(out_dir: str, name: str, obj: dict) -> None:
    """write_json writes obj as stable, indented JSON."""
    with open(os.path.join(out_dir, name), "w", encoding="utf-8") as f:
        json.dump(obj, f, indent=2, sort_keys=True, ensure_ascii=False)
        f.write("\n")


def parse_args(argv):
    """Parses the training command line."""
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--jargon", default=jargon.JARGON_PATH, help="path to jargon.txt.gz")
    p.add_argument("--out", default=HERE, help="folder for the checkpoint files")
    p.add_argument("--steps", type=int, default=1000)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--warmup", type=int, default=100)
    p.add_argument("--per-entry", type=int, default=4, help="questions per term")
    p.add_argument("--vocab-size", type=int, default=2000)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--log-every", type=int, default=25)
    return p.parse_args(argv)


def main(argv=None) -> int:
    """Trains the model on the jargon file's conversations and writes the checkpoint; returns the exit status."""
    args = parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = random.Random(args.seed)
    os.makedirs(args.out, exist_ok=True)
    entries = jargon.parse(jargon.read_lines(args.jargon))
    chats = conversations(entries, rng, args.per_entry)
    print(f"{len(entries)} entries, {len(chats)} chats", flush=True)
    train_tokenizer(chats, args.out, args.vocab_size)
    tok = chattok.ChatTokenizer(args.out)
    cfg = gpt.GPTConfig(vocab_size=tok.vocab_size, bos_token_id=tok.sp.bos_id(), eos_token_id=tok.end_id)
    data = [encode_chat(tok, c, cfg.n_positions) for c in chats]
    print(f"{sum(len(d[0]) for d in data)} tokens, "
          f"{sum(sum(x != IGNORE for x in d[1]) for d in data)} learned", flush=True)
    model = gpt.GPT(cfg)
    print(f"{model.num_parameters()} parameters", flush=True)
    stats = train(model, data, args)
    gpt.save_pretrained(model, args.out)
    save_tokenizer_files(args.out, tok, cfg.n_positions)
    write_json(args.out, "training_summary.json", {
        "parameters": model.num_parameters(), "entries": len(entries), "chats": len(chats),
        "steps": args.steps, "batch_size": args.batch_size, "seed": args.seed,
        "threads": args.threads, **stats})
    print(json.dumps(stats), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
