"""The built-in Hugging Face handler: a model folder with no model.py.

As with DJL's djl_python.huggingface, a folder whose serving.properties
names a model (option.model_id, or config.json in the folder itself) and a
task (option.task, or the task of its architecture) is served without a
handler of its own:

* text-generation (a causal LM): the generative schemas (chat, completion,
  generation) with streaming, on the backend that option.rolling_batch
  chose (generative.backends): vllm (vLLM's engine), transformers
  (transformers' continuous batching, what auto gives a causal LM without
  vLLM) or disable (model.generate per request or per dynamic batch);
* every other task (text-classification, token-classification,
  feature-extraction, fill-mask, question-answering, text2text-generation,
  ...): tasks.TaskService, one model call per batch; also over the Open
  Inference Protocol, text in BYTES tensors (tensors.py).

The answer to the initialization call declares a generative model's
capabilities (context length, tools), or another task's tensors. The
model never comes from the network (loading.offline).
"""

import logging
import os

from ..djl.errors import LoadError
from ..djl.outputs import Output
from ..generative.handler import GenerativeService, make_backend
from ..generative.schemas import Capabilities
from . import loading, tasks, tensors

GENERATIVE_TASKS = ("text-generation",)

_log = logging.getLogger("switchyard.hf")


def transformers_backend(settings):
    """Returns the generative backend of a causal LM for settings.mode."""
    if settings.mode == "vllm":
        return make_backend(settings)
    from .causal import CausalModel

    model = CausalModel(loading.model_folder(settings.model_dir, settings.props), settings.props)
    caps = Capabilities(model.context_length, tools=settings.tool_parser is not None)
    if settings.mode == "transformers":
        from .continuous import ContinuousBackend

        return ContinuousBackend(model, settings, caps)
    if settings.mode == "disable":
        from .generate import GenerateBackend

        return GenerateBackend(model, settings, caps, lora(model, settings))
    raise RuntimeError("the Hugging Face handler has no backend for rolling_batch=%s" % settings.mode)


def lora(model, settings):
    """Returns the model's Adapters with option.enable_lora, its adapters/ folder registered; else None."""
    if not loading.flag(settings.props, "enable_lora"):
        return None
    from .adapters import Adapters, startup_adapters

    adapters = Adapters(model, settings.props)
    for name, src in startup_adapters(settings.model_dir).items():
        adapters.register(name, src)
    return adapters


class HuggingFaceService:
    """HuggingFaceService serves one model folder: a generative model or another task."""

    def __init__(self):
        self.service = None  # a GenerativeService or a tasks.TaskService
        self.task = None

    def initialize(self, props):
        """Loads the model; returns the initialization answer."""
        loading.offline()
        mode = props.get("rolling_batch") or "disable"
        if mode == "vllm":  # vLLM reads the model's files itself, and serves text generation
            self.task = "text-generation"
            self.service = GenerativeService(transformers_backend)
            return self.service.initialize(props)
        model_dir = os.path.abspath(props.get("model_dir") or os.getcwd())
        folder = loading.model_folder(model_dir, props)
        config = loading.read_config(folder)
        self.task = loading.task_of(props, config)
        _log.info("serving %s (%s) as %s with transformers, rolling_batch=%s", folder,
                  loading.architecture(config) or "no architecture", self.task, mode)
        if self.task in GENERATIVE_TASKS:
            self.service = GenerativeService(transformers_backend)
            return self.service.initialize(props)
        if loading.flag(props, "enable_lora"):
            raise LoadError("option.enable_lora=true: LoRA adapters are served for causal LMs (text-generation) "
                            "only, and %s is served as %s" % (folder, self.task))
        kwargs = loading.load_kwargs(props)
        self.service = tasks.TaskService(self.task, tasks.build(self.task, folder, loading.device(props), kwargs))
        out = Output()
        for key, value in tensors.signature(self.task).items():
            out.add_property(key, value)
        return out

    def handle(self, inputs):
        """Answers one request or a dynamic batch; initializes on the empty input."""
        if inputs.is_empty():
            out = self.initialize(inputs.get_properties())
            adapters = self.adapters()
            if adapters is not None:
                out.add_property("adapters", adapters.listing())
            return out
        if self.service is None:
            raise RuntimeError("the Hugging Face handler is not initialized")
        return self.service.handle(inputs)

    def adapters(self):
        """Returns the model's Adapters, or None without option.enable_lora."""
        backend = getattr(self.service, "backend", None)
        return getattr(backend, "adapters", None)

    def manage(self, inputs, action):
        """Registers, updates or unregisters an adapter (DJL's adapter messages); answers the listing."""
        from .adapters import AdapterError

        adapters = self.adapters()
        if adapters is None:
            return Output(400, "LoRA is not enabled: set option.enable_lora=true")
        name = inputs.get_property("name")
        pin = _tristate(inputs.get_property("pin"))
        try:
            if action == "register":
                adapters.register(name, inputs.get_property("src"), pinned=bool(pin),
                                  preload=_tristate(inputs.get_property("preload")) is not False)
            elif action == "update":
                adapters.update(name, pinned=pin, src=inputs.get_property("src") or None)
            else:
                adapters.unregister(name)
        except AdapterError as exc:
            return Output(exc.code, str(exc))
        out = Output(200, "Adapter %s %sed" % (name, action if action != "update" else "updat"))
        out.add_property("adapters", adapters.listing())
        events = adapters.take_events()
        if events:
            out.add_property("x-switchyard-adapter-events", events)
        return out


def _tristate(value):
    """Returns True, False or None (not given) for a "true"/"false" property."""
    if value in (None, ""):
        return None
    return str(value).strip().lower() == "true"


_service = HuggingFaceService()


def handle(inputs):
    """handle is the entry point the runtime calls for every request."""
    return _service.handle(inputs)


def register_adapter(inputs):
    """register_adapter is DJL's message that registers an adapter (properties name, src, pin, preload)."""
    return _service.manage(inputs, "register")


def update_adapter(inputs):
    """update_adapter is DJL's message that changes an adapter's pin or folder."""
    return _service.manage(inputs, "update")


def unregister_adapter(inputs):
    """unregister_adapter is DJL's message that removes an adapter."""
    return _service.manage(inputs, "unregister")
