"""What every part of bench/bench_hf.sh shares: the sentence, the threads, the pipeline.

The ceilings (ceiling.py) and the two peers (fastapi_app.py,
litserve_app.py) load the model folder that make_model.py wrote, as
switchyard's built-in handler does (transformers.pipeline on the folder,
on the CPU), with the same number of torch threads.
"""

import json
import os

# 32 tokens with [CLS] and [SEP] for the BERT WordPiece tokenizer of
# all-MiniLM-L6-v2 (make_model.py checks it).
SENTENCE = ("The new library opened downtown last week, and readers say its quiet rooms, "
            "friendly staff and long hours make it the best place in town to study.")
TOKENS = 32
TASK = "text-classification"


def body():
    """Returns the request body every server gets: {"inputs": SENTENCE}."""
    return json.dumps({"inputs": SENTENCE})


def threads():
    """Returns the torch threads of this benchmark (BENCH_THREADS, else OMP_NUM_THREADS, else 2)."""
    return int(os.environ.get("BENCH_THREADS") or os.environ.get("OMP_NUM_THREADS") or 2)


def load_pipeline(folder):
    """Returns the text-classification pipeline of folder on the CPU, with threads() torch threads."""
    import torch
    import transformers

    torch.set_num_threads(threads())
    transformers.logging.disable_progress_bar()
    return transformers.pipeline(task=TASK, model=folder, tokenizer=folder, device="cpu", trust_remote_code=False)


def classify(pipe, texts):
    """Runs pipe once over texts, batched as switchyard's handler does (batch_size = len(texts))."""
    return pipe(list(texts), batch_size=len(texts))
