"""Where a Hugging Face model folder is, what task it serves, and how it loads.

DJL's built-in handler reads these options, and so does this one:

* option.model_id: a local folder (relative to the model folder, or
  absolute); absent, the model folder itself. The Hugging Face Hub is never
  contacted (HF_HUB_OFFLINE is set before transformers is imported): an id
  that is not a local folder fails the load with a message naming the folder
  to provide.
* option.task, else the task DJL infers from config.json's first
  architecture (ARCHITECTURES_2_TASK: the last suffix that matches wins).
* option.dtype: fp32, fp16, bf16 or auto (DJL's names; float32, float16 and
  bfloat16 are accepted too); absent, the checkpoint's own.
* the device: cuda:<device_id> for a worker on a GPU (--device-id >= 0),
  else the CPU.
* option.trust_remote_code: off unless "true".
"""

import json
import logging
import os

from ..djl.errors import LoadError

# DJL's table (djl_python/huggingface.py), in its order: a later suffix wins.
ARCHITECTURES_2_TASK = {
    "TapasForQuestionAnswering": "table-question-answering",
    "ForQuestionAnswering": "question-answering",
    "ForTokenClassification": "token-classification",
    "ForSequenceClassification": "text-classification",
    "ForMultipleChoice": "multiple-choice",
    "ForMaskedLM": "fill-mask",
    "ForCausalLM": "text-generation",
    "ForConditionalGeneration": "text2text-generation",
    "MTModel": "text2text-generation",
    "EncoderDecoderModel": "text2text-generation",
    "GPT2LMHeadModel": "text-generation",
    "T5WithLMHeadModel": "text2text-generation",
    "BloomModel": "text-generation",
}

# DJL's dtype names and the torch dtype each one means.
DTYPES = {"fp32": "float32", "float32": "float32", "fp16": "float16", "float16": "float16",
          "bf16": "bfloat16", "bfloat16": "bfloat16", "auto": "auto"}

_log = logging.getLogger("switchyard.hf")


def offline():
    """Makes sure transformers and huggingface_hub never reach the network, and
    keeps their progress bars out of the worker's log."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    import transformers

    transformers.utils.logging.disable_progress_bar()


def model_folder(model_dir, props):
    """Returns the absolute folder of the model's files; a model_id that is not a folder fails the load."""
    model_dir = os.path.abspath(model_dir or ".")
    model_id = (props.get("model_id") or "").strip()
    if not model_id:
        return model_dir
    path = model_id if os.path.isabs(model_id) else os.path.join(model_dir, model_id)
    if os.path.isdir(path):
        return os.path.abspath(path)
    raise LoadError("option.model_id=%s is not a folder, and switchyard never downloads models from the "
                    "Hugging Face Hub: put the model's files (config.json, the weights, the tokenizer) in %s, "
                    "or set option.model_id to a local folder" % (model_id, os.path.abspath(path)))


def read_config(folder):
    """Returns config.json of the folder as a dict; a missing or broken one fails the load."""
    path = os.path.join(folder, "config.json")
    try:
        with open(path, encoding="utf-8") as f:
            config = json.load(f)
    except FileNotFoundError as exc:
        raise LoadError("%s has no config.json: a folder without a model.py must hold a Hugging Face "
                        "model (config.json, weights, tokenizer), or name one with option.model_id" % folder) from exc
    except (OSError, ValueError) as exc:
        raise LoadError("cannot read %s: %s" % (path, exc)) from exc
    if not isinstance(config, dict):
        raise LoadError("%s is not a JSON object" % path)
    return config


def architecture(config):
    """Returns the config's first architecture, or None."""
    archs = config.get("architectures")
    if isinstance(archs, list) and archs and isinstance(archs[0], str):
        return archs[0]
    return None


def infer_task(arch):
    """Returns DJL's task for an architecture, or None when no suffix matches."""
    task = None
    for suffix, name in ARCHITECTURES_2_TASK.items():
        if arch and arch.endswith(suffix):
            task = name
    return task


def task_of(props, config):
    """Returns option.task, else the task inferred from the architecture; fails the load without one."""
    task = (props.get("task") or "").strip()
    if task:
        return task
    arch = architecture(config)
    task = infer_task(arch)
    if task is None:
        raise LoadError("cannot infer the task of architecture %s: set option.task in serving.properties"
                        % (arch or "(config.json names none)"))
    return task


def torch_dtype(props):
    """Returns the dtype keyword for from_pretrained (a torch dtype or "auto"), or None when not set."""
    raw = (props.get("dtype") or "").strip().lower()
    if not raw:
        return None
    name = DTYPES.get(raw)
    if name is None:
        raise LoadError("option.dtype=%s is not one of fp32, fp16, bf16, auto" % raw)
    if name == "auto":
        return "auto"
    import torch

    return getattr(torch, name)


def device(props):
    """Returns the torch device of the worker: cuda:<device_id> on a GPU, else cpu."""
    try:
        device_id = int(props.get("device_id", -1))
    except (TypeError, ValueError):
        device_id = -1
    return "cuda:%d" % device_id if device_id >= 0 else "cpu"


def flag(props, key):
    """Reports whether the option key is "true"."""
    return str(props.get(key) or "").strip().lower() == "true"


def trust_remote_code(props):
    """Reports whether option.trust_remote_code is true."""
    return flag(props, "trust_remote_code")


def load_kwargs(props):
    """Returns the keywords every from_pretrained call of the model gets."""
    kwargs = {"trust_remote_code": trust_remote_code(props)}
    dtype = torch_dtype(props)
    if dtype is not None:
        kwargs["dtype"] = dtype
    return kwargs
