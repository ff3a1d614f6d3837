"""Choosing the generation backend from option.rolling_batch.

A folder's own model.py, or an option.entryPoint, always wins; the backend
choice is for folders that have neither, which get the built-in generative
handler (handler.py) with one of these backends:

* vllm: vLLM's async engine; without vllm the load fails with its ImportError.
* trtllm, lmi-dist: need tensorrt_llm or lmi_dist; without it the load fails
  with ModuleNotFoundError and a hint about the image to use. switchyard's
  runtime has no engine for either: with the module present it says so.
* auto: vllm when it imports and the model's architecture is one vLLM
  serves (..ForCausalLM, ..LMHeadModel, ..ForConditionalGeneration);
  otherwise transformers' own continuous batching for a causal LM
  (..ForCausalLM, ..LMHeadModel: mode "transformers"), and for any other
  architecture the plain transformers path (disable), as DJL's "Accelerate
  path" (its log line says so).
* disable: the Hugging Face handler on transformers (hf/): a pipeline or
  the model itself per task, model.generate for a causal LM; without
  transformers the folder needs a model.py.
* scheduler: the folder's model.py does continuous batching itself.

The mode in use is written back into the initialization properties as
rolling_batch, and the runtime reports it in its initialization reply. A
custom handler reports its configured mode, except auto, which means disable.
"""

import importlib
import json
import logging
import os

from ..djl.errors import LoadError

GENERATIVE = "generative"
# Entry point names that mean the built-in handler: switchyard's, the Hugging
# Face handler's own name, and DJL's module for it.
BUILTIN_NAMES = (GENERATIVE, "huggingface", "djl_python.huggingface")
MODES = ("auto", "vllm", "trtllm", "lmi-dist", "disable", "scheduler")
# The mode auto resolves to for a causal LM served by transformers' continuous batching.
TRANSFORMERS = "transformers"
CAUSAL_SUFFIXES = ("ForCausalLM", "LMHeadModel")
ROLLING_BATCH = "rolling_batch"
OPTIMIZED_SUFFIXES = ("ForCausalLM", "LMHeadModel", "ForConditionalGeneration")

# Modules of the backends switchyard's runtime cannot drive, with the image hint.
VENDOR_MODULES = {
    "trtllm": ("tensorrt_llm", "TensorRT-LLM"),
    "lmi-dist": ("lmi_dist", "LMI-Dist"),
}

_log = logging.getLogger("switchyard.backends")


def configured(props):
    """Returns option.rolling_batch as given (lower case), or None when not set."""
    value = (props.get(ROLLING_BATCH) or "").strip().lower()
    return value or None


def custom_mode(props):
    """Returns the mode a custom handler reports: its setting, with auto meaning disable."""
    mode = configured(props)
    return "disable" if mode == "auto" else mode


def choose(model_dir, props):
    """Returns the mode the built-in generative handler uses for this folder.

    Raises the backend's ImportError or a LoadError when it cannot load.
    """
    mode = configured(props) or "auto"
    if mode not in MODES:
        raise LoadError("option.rolling_batch=%s is not one of %s" % (mode, ", ".join(MODES)))
    if mode == "auto":
        mode = auto_mode(model_dir, props)
    if lora_enabled(props) and mode != "disable":
        raise LoadError("option.enable_lora=true serves LoRA adapters with rolling_batch=disable (model.generate with "
                        "dynamic batching) only, and this model has rolling_batch=%s: set option.rolling_batch=disable "
                        "or auto, or leave option.enable_lora off" % mode)
    return _check(mode, model_dir, props)


def lora_enabled(props):
    """Reports whether option.enable_lora is true."""
    return str(props.get("enable_lora") or "").strip().lower() == "true"


def _check(mode, model_dir, props):
    if mode == "vllm":
        importlib.import_module("vllm")
    elif mode in VENDOR_MODULES:
        vendor_backend(mode)
    elif mode in ("disable", TRANSFORMERS):
        _need_transformers(model_dir, props)
    elif mode == "scheduler":
        raise LoadError("option.rolling_batch=scheduler needs the folder's own model.py (it does its own "
                        "continuous batching), and there is none in %s" % model_dir)
    return mode


def vendor_backend(mode):
    """Fails the load of trtllm or lmi-dist: with the module's hint when it is missing."""
    module, name = VENDOR_MODULES[mode]
    hint = "option.rolling_batch=%s needs an image with the %s backend" % (mode, name)
    try:
        importlib.import_module(module)
    except ImportError as exc:
        kind = ModuleNotFoundError if isinstance(exc, ModuleNotFoundError) else ImportError
        raise kind("%s; %s" % (exc, hint), name=exc.name) from exc
    raise LoadError("option.rolling_batch=%s: %s is installed, but switchyard's runtime has no %s engine; "
                    "run the image's own engine (python_engine) or write a model.py" % (mode, module, name))


def _need_transformers(model_dir, props):
    if not props.get("model_id") and not os.path.isfile(os.path.join(model_dir or ".", "config.json")):
        raise LoadError("no model.py in %s and no option.entryPoint, and no Hugging Face model either "
                        "(config.json in the folder, or option.model_id naming a folder)" % model_dir)
    if importable("transformers"):
        return
    raise LoadError("no model.py in %s and transformers is not installed: the built-in Hugging Face handler "
                    "serves the folder with transformers (install it, e.g. with a requirements.txt naming "
                    "transformers and torch), or write a model.py" % model_dir)


def importable(module):
    """Reports whether module imports; its import error, if any, is logged at debug level."""
    try:
        importlib.import_module(module)
    except ImportError as exc:
        _log.debug("%s does not import: %s", module, exc)
        return False
    return True


def auto_mode(model_dir, props):
    """Resolves auto: vllm for an architecture vLLM serves when vllm imports, transformers'
    continuous batching for another causal LM, else disable."""
    arch = architecture(model_dir, props)
    optimized = bool(arch) and arch.endswith(OPTIMIZED_SUFFIXES)
    if arch and arch.endswith(CAUSAL_SUFFIXES) and lora_enabled(props):
        _log.info("rolling_batch=auto: %s serves LoRA adapters with model.generate and dynamic batching "
                  "(rolling_batch=disable): transformers' continuous batching cannot run several adapters "
                  "in one batch, and switchyard does not drive vLLM's LoRA support", arch)
        return "disable"
    if optimized and importable("vllm"):
        _log.info("rolling_batch=auto: %s loads with vllm", arch)
        return "vllm"
    if arch and arch.endswith(CAUSAL_SUFFIXES):
        _log.info("rolling_batch=auto: %s loads with transformers' continuous batching (vllm is not installed)",
                  arch)
        return TRANSFORMERS
    if optimized:
        _log.info("rolling_batch=auto: %s is not a causal LM, and vllm is not installed; it loads with "
                  "transformers (rolling_batch=disable)", arch)
        return "disable"
    _log.warning("rolling_batch=auto: the model architecture %s is not supported for optimized inference "
                 "(only %s are); it loads through the plain transformers path (the Accelerate path) with "
                 "rolling_batch=disable", arch or "(unknown)", ", ".join(OPTIMIZED_SUFFIXES))
    return "disable"


def model_path(model_dir, props):
    """Returns option.model_id as a local folder when it is one, else the id; default the folder."""
    model_id = props.get("model_id")
    if not model_id:
        return model_dir
    local = model_id if os.path.isabs(model_id) else os.path.join(model_dir or ".", model_id)
    return local if os.path.isdir(local) else model_id


def architecture(model_dir, props):
    """Returns architectures[0] of the model's config.json, or None when it cannot be read."""
    path = os.path.join(model_path(model_dir, props), "config.json")
    try:
        with open(path, encoding="utf-8") as f:
            archs = json.load(f).get("architectures")
    except (OSError, ValueError, AttributeError) as exc:
        _log.debug("no architecture from %s: %s", path, exc)
        return None
    if isinstance(archs, list) and archs and isinstance(archs[0], str):
        return archs[0]
    return None


def resolve(model_dir, name, named, props):
    """Returns the entry point to load and records the rolling_batch mode in props.

    name is the entry point named (named is True) or else the default file,
    model.py. The built-in handler is used when it is named (by one of
    BUILTIN_NAMES), or when nothing is named and the folder has no such file.
    """
    if name in BUILTIN_NAMES or (not named and not os.path.isfile(os.path.join(model_dir or ".", name))):
        props[ROLLING_BATCH] = choose(model_dir, props)
        return GENERATIVE
    mode = custom_mode(props)
    if mode is not None:
        props[ROLLING_BATCH] = mode
    return name
