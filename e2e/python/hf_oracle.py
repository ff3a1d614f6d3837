"""The in-process oracle of the Hugging Face end-to-end tests: transformers itself.

Reads one JSON request on stdin and prints what transformers answers, called
in this process on the same model folder:

* {"kind": "pipeline", "task", "folder", "inputs": [...], "parameters"}:
  transformers.pipeline(task, folder) on the list of inputs, one result per
  input (the fill-mask pipeline answers a list of one with that result
  itself);
* {"kind": "qa", "folder", "inputs": [{"question", "context"}]}: the
  model's start and end logits, and the best span read from them by brute
  force (every start and end in the context, end - start < 15 tokens,
  P(start) * P(end), widened to whole words);
* {"kind": "seq2seq", "folder", "inputs", "parameters"}: model.generate;
* {"kind": "chat", "folder", "messages", "max_new_tokens"}: the tokenizer's
  chat template and greedy model.generate; the generated ids and text;
* {"kind": "lora", "folder", "messages", "max_new_tokens", "adapters": {name:
  folder}}: the same with peft.PeftModel.from_pretrained(base, folder) for
  each adapter, one at a time, and with the base alone (name "");
* {"kind": "generation", "folder", "prompt", "max_new_tokens"}: the
  text-generation pipeline, greedy.

    python hf_oracle.py < request.json
"""

import json
import os
import sys

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# The project's environment has these; pylint runs where it may not.
# pylint: disable=import-error
import numpy  # noqa: E402
import torch  # noqa: E402
import transformers  # noqa: E402

torch.set_num_threads(2)


def plain(value):
    """Returns value with numpy scalars and tensors turned into Python numbers and lists."""
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (numpy.generic, numpy.ndarray)):
        return value.tolist()
    if isinstance(value, torch.Tensor):
        return value.tolist()
    return value


def run_pipeline(req):
    """The pipeline's result per input."""
    pipe = transformers.pipeline(req["task"], model=req["folder"], device="cpu")
    inputs = req["inputs"]
    raw = pipe(inputs, **(req.get("parameters") or {}))
    if req["task"] == "fill-mask" and len(inputs) == 1:
        raw = [raw]
    return plain(raw)


def run_qa(req):
    """The best answer per {"question", "context"} input, read from the logits by brute force."""
    tok = transformers.AutoTokenizer.from_pretrained(req["folder"])
    model = transformers.AutoModelForQuestionAnswering.from_pretrained(req["folder"]).eval()
    return [best_span(tok, model, item["question"], item["context"]) for item in req["inputs"]]


def best_span(tok, model, question, context):
    """The span of context with the highest P(start) * P(end), widened to whole words."""
    enc = tok(question, context, return_tensors="pt")
    with torch.no_grad():
        logits = model(**enc)
    tokens = [i for i, s in enumerate(enc.sequence_ids(0)) if s == 1]
    start = torch.softmax(logits.start_logits[0, tokens].double(), -1)
    end = torch.softmax(logits.end_logits[0, tokens].double(), -1)
    score, a, b = max(((float(start[a] * end[b]), a, b) for a in range(len(tokens)) for b in range(a, len(tokens))
                       if b - a < 15), key=lambda x: x[0])
    words = enc.word_ids(0)
    first = enc.word_to_chars(0, words[tokens[a]], sequence_index=1).start
    last = enc.word_to_chars(0, words[tokens[b]], sequence_index=1).end
    return {"score": score, "start": first, "end": last, "answer": context[first:last]}


def run_seq2seq(req):
    """model.generate's text per input."""
    tok = transformers.AutoTokenizer.from_pretrained(req["folder"])
    model = transformers.AutoModelForSeq2SeqLM.from_pretrained(req["folder"]).eval()
    out = []
    for text in req["inputs"]:
        enc = tok(text, return_tensors="pt")
        with torch.no_grad():
            ids = model.generate(**enc, **(req.get("parameters") or {}))
        out.append({"generated_text": tok.decode(ids[0], skip_special_tokens=True)})
    return out


def run_chat(req, model=None):
    """Greedy generation after the chat template: the generated ids and their text."""
    tok = transformers.AutoTokenizer.from_pretrained(req["folder"])
    if model is None:
        model = transformers.AutoModelForCausalLM.from_pretrained(req["folder"]).eval()
    prompt = tok.apply_chat_template(req["messages"], tokenize=False, add_generation_prompt=True)
    ids = tok(prompt, add_special_tokens=False, return_tensors="pt")
    with torch.no_grad():
        out = model.generate(**ids, max_new_tokens=req["max_new_tokens"], do_sample=False)
    new = out[0, ids["input_ids"].shape[1]:].tolist()
    return {"ids": new, "text": tok.decode(new, skip_special_tokens=True), "prompt_tokens": ids["input_ids"].shape[1]}


def run_lora(req):
    """run_chat's answer of the base alone (under "") and of each adapter on it, by name."""
    import peft  # pylint: disable=import-outside-toplevel

    out = {"": run_chat(req)}
    for name, folder in req["adapters"].items():
        base = transformers.AutoModelForCausalLM.from_pretrained(req["folder"])
        out[name] = run_chat(req, peft.PeftModel.from_pretrained(base, folder).eval())
    return out


def run_generation(req):
    """The text-generation pipeline's answer, greedy."""
    pipe = transformers.pipeline("text-generation", model=req["folder"], device="cpu")
    return plain(pipe(req["prompt"], max_new_tokens=req["max_new_tokens"], do_sample=False))


KINDS = {"pipeline": run_pipeline, "qa": run_qa, "seq2seq": run_seq2seq, "chat": run_chat, "lora": run_lora,
         "generation": run_generation}


def main():
    """Answers the request on stdin."""
    req = json.load(sys.stdin)
    json.dump(KINDS[req["kind"]](req), sys.stdout)


if __name__ == "__main__":
    main()
