"""A fake transformers for tests: pipeline() and set_seed() over a word model.

text-generation answers " w0 w1 ..." up to max_new_tokens words (EOS_AFTER
at most), or ANSWER when a test sets it; text-classification labels every
input POSITIVE. Calls are recorded in CALLS.
"""

# The fakes take the arguments of the real API, used or not.
# pylint: disable=unused-argument

EOS_AFTER = 5
ANSWER = None  # when set, the text every text-generation call answers
CALLS = []  # (task, inputs, kwargs) of every pipeline call
SEEDS = []


def set_seed(seed):
    """Records the seed."""
    SEEDS.append(seed)


WORDS = []  # the words other than w<n> that a Tokenizer has seen; word i has id 1000 + i


class Tokenizer:
    """Tokenizer: one id per space-separated word ("w<n>" is id n); a 64-token context.

    decode puts a space before every word, so " a b" survives encode and decode.
    """

    model_max_length = 64

    def encode(self, text, add_special_tokens=True):
        """Returns one id per word of text."""
        return [self._id(w) for w in text.split()]

    def decode(self, ids):
        """Returns the words of ids, each after a space."""
        return "".join(" " + (WORDS[i - 1000] if i >= 1000 else "w%d" % i) for i in ids)

    @staticmethod
    def _id(word):
        if word.startswith("w") and word[1:].isdigit():
            return int(word[1:])
        if word not in WORDS:
            WORDS.append(word)
        return 1000 + WORDS.index(word)

    def apply_chat_template(self, messages, tokenize=True, add_generation_prompt=False, tools=None):
        """Returns the messages as one line of role: content pairs."""
        text = " ".join("%s: %s" % (m["role"], m["content"]) for m in messages)
        if tools:
            text = "tools: %s %s" % (",".join(t["function"]["name"] for t in tools), text)
        return text + (" assistant:" if add_generation_prompt else "")


class Pipeline:
    """Pipeline is a fake transformers pipeline for one task."""
    def __init__(self, task, model, device):
        self.task, self.model, self.device = task, model, device
        self.tokenizer = Tokenizer()

    def __call__(self, inputs, **kwargs):
        CALLS.append((self.task, inputs, kwargs))
        if self.task == "text-generation":
            if ANSWER is not None:
                return [{"generated_text": ANSWER}]
            n = min(kwargs.get("max_new_tokens", 20), EOS_AFTER)
            return [{"generated_text": "".join(" w%d" % i for i in range(n))}]
        return [{"label": "POSITIVE", "score": 0.9}]


def pipeline(task=None, model=None, device=-1, **kwargs):
    """Returns a Pipeline for task (text-generation by default)."""
    return Pipeline(task or "text-generation", model, device)
