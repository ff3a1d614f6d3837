"""The built-in handler of generative models (entry point "generative").

A model folder without a model.py (or one naming option.entryPoint=generative)
gets this handler. It initializes on the empty initialization input with the
backend that backends.py chose and wrote into the property rolling_batch:
vllm (vLLM's async engine) or disable (a transformers pipeline). Requests
follow the schemas of schemas.py; a body that does not fit answers 400
naming the field.

Its answer to the initialization call declares the backend's capabilities
(context_length, supports_tools, max_choices; see schemas.Capabilities).
Tool calls are on when option.enable_auto_tool_choice=true and
option.tool_call_parser names a format toolcalls.py reads (hermes); the
tools then go to the tokenizer's chat template (prompts.py), and the calls
the model writes come back as OpenAI tool_calls.
"""

import asyncio
import inspect
import os

from ..djl.errors import LoadError
from . import outputs as genoutput
from . import toolcalls
from .schemas import RequestError, default_max_tokens


class Settings:
    """Settings are what every backend needs: folder, name, properties, token default."""

    def __init__(self, props):
        self.props = props
        self.model_dir = os.path.abspath(props.get("model_dir") or os.getcwd())
        self.model_name = props.get("model_name") or os.path.basename(self.model_dir)
        self.mode = props.get("rolling_batch") or "disable"
        self.default_max = default_max_tokens(props)
        self.tool_parser = tool_parser(props)


def tool_parser(props):
    """Returns the tool-call format in use, or None when tool calls are off.

    option.enable_auto_tool_choice=true turns them on and needs
    option.tool_call_parser; a parser the runtime does not read fails the load.
    """
    enabled = str(props.get("enable_auto_tool_choice") or "").strip().lower() == "true"
    parser = (props.get("tool_call_parser") or "").strip().lower()
    if not enabled:
        return None
    if not parser:
        raise LoadError("option.enable_auto_tool_choice=true needs option.tool_call_parser (one of %s)"
                        % ", ".join(toolcalls.PARSERS))
    try:
        return toolcalls.check_parser(parser)
    except ValueError as exc:
        raise LoadError(str(exc)) from exc


def make_backend(settings):
    """Returns the backend for settings.mode: vLLM's engine (the transformers
    backends are the hf part's, which builds them itself)."""
    if settings.mode == "vllm":
        from .vllm_backend import VllmBackend

        return VllmBackend(settings)
    raise RuntimeError("the generative handler has no backend for rolling_batch=%s" % settings.mode)


class GenerativeService:
    """GenerativeService answers one model's requests through its backend.

    make builds the backend from the Settings; a backend has answer(inputs,
    whole) and caps, and may have answer_batch(items), which then answers a
    dynamic batch in one go (one Output per item).
    """

    def __init__(self, make=make_backend):
        self.make = make
        self.settings = None
        self.backend = None

    def initialize(self, props):
        """Loads the backend; returns the Output that declares its capabilities (none for other tasks)."""
        self.settings = Settings(props)
        self.backend = self.make(self.settings)
        return genoutput.declare(self.backend.caps)

    def handle(self, inputs):
        """Answers one request or a dynamic batch; initializes on the empty input."""
        if inputs.is_empty():
            return self.initialize(inputs.get_properties())
        if self.backend is None:
            raise RuntimeError("the generative handler is not initialized")
        if inputs.is_batch():
            return self._batch(inputs.get_batches())
        return self.answer(inputs)

    def answer(self, inputs, whole=False):
        """Returns the Output for one request (or an awaitable of it), 400 for a bad body.

        whole=True answers a streamed request as a whole (for batch items).
        """
        try:
            return self.backend.answer(inputs, whole)
        except RequestError as exc:
            return genoutput.bad_request(exc)

    def _batch(self, items):
        if hasattr(self.backend, "answer_batch"):
            return genoutput.batch_output(self.backend.answer_batch(items))
        answers = [self._item(item) for item in items]
        if not any(inspect.isawaitable(a) for a in answers):
            return genoutput.batch_output(answers)
        return _gather_batch(answers)

    def _item(self, item):
        """Answers one batch item as a whole; its failure is its own (424)."""
        try:
            return self.answer(item, whole=True)
        except Exception as exc:
            return genoutput.failed(exc)


async def _gather_batch(answers):
    outs = await asyncio.gather(*[_settle(a) for a in answers])
    return genoutput.batch_output(outs)


async def _settle(answer):
    if not inspect.isawaitable(answer):
        return answer
    try:
        return await answer
    except Exception as exc:
        return genoutput.failed(exc)


_service = GenerativeService()


def handle(inputs):
    """handle is the entry point the runtime calls for every request."""
    return _service.handle(inputs)
