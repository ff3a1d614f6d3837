"""A fake transformers for tests: pipeline() and set_seed() over a word model.

text-generation answers " w0 w1 ..." up to max_new_tokens words (EOS_AFTER
at most); text-classification labels every input POSITIVE. Calls are
recorded in CALLS.
"""

EOS_AFTER = 5
CALLS = []  # (task, inputs, kwargs) of every pipeline call
SEEDS = []


def set_seed(seed):
    SEEDS.append(seed)


class Tokenizer(object):
    """Tokenizer: one id per space-separated word ("w<n>" is id n)."""

    def encode(self, text, add_special_tokens=True):
        return [int(w[1:]) if w.startswith("w") and w[1:].isdigit() else 0 for w in text.split()]

    def decode(self, ids):
        return "".join(" w%d" % i for i in ids)

    def apply_chat_template(self, messages, tokenize=True, add_generation_prompt=False):
        text = " ".join("%s: %s" % (m["role"], m["content"]) for m in messages)
        return text + (" assistant:" if add_generation_prompt else "")


class Pipeline(object):
    def __init__(self, task, model, device):
        self.task, self.model, self.device = task, model, device
        self.tokenizer = Tokenizer()

    def __call__(self, inputs, **kwargs):
        CALLS.append((self.task, inputs, kwargs))
        if self.task == "text-generation":
            n = min(kwargs.get("max_new_tokens", 20), EOS_AFTER)
            return [{"generated_text": "".join(" w%d" % i for i in range(n))}]
        return [{"label": "POSITIVE", "score": 0.9}]


def pipeline(task=None, model=None, device=-1, **kwargs):
    return Pipeline(task or "text-generation", model, device)
