"""The built-in handler's non-generative tasks: one model, one call per batch.

text-classification, token-classification, feature-extraction, fill-mask
(and any other text task transformers has a pipeline for) run through
transformers.pipeline; question-answering and text2text-generation, whose
pipelines transformers 5 dropped, run the model directly (extractive_qa,
Seq2Seq below).

A dynamic batch goes through the model in one call: the inputs of every
request with the same parameters are put in one list, given to the
pipeline with batch_size set to its length (so the forward passes are
batched, not looped), and the results are sliced back per request, as DJL
does. Requests with other parameters are a call of their own. When a
call fails, its requests are tried one by one, so that one bad input fails
only its own request.
"""

import logging
import time

from ..djl.outputs import Output
from ..generative.outputs import JSON, bad_request, batch_output, failed
from ..generative.schemas import RequestError
from . import taskinput, tensors
from .extractive_qa import QuestionAnswering

_log = logging.getLogger("switchyard.hf.tasks")

MODEL_CLASSES = {"question-answering": "AutoModelForQuestionAnswering",
                 "text2text-generation": "AutoModelForSeq2SeqLM"}


class Seq2Seq:
    """Seq2Seq answers text2text-generation with model.generate: [{"generated_text"}] per input."""

    def __init__(self, model, tokenizer, device):
        self.model = model.to(device).eval()
        self.tokenizer = tokenizer
        self.device = device

    def __call__(self, inputs, **params):
        import torch

        enc = self.tokenizer(list(inputs), padding=True, truncation=True, return_tensors="pt").to(self.device)
        with torch.no_grad():
            ids = self.model.generate(**enc, **params)
        texts = self.tokenizer.batch_decode(ids, skip_special_tokens=True, clean_up_tokenization_spaces=True)
        return [{"generated_text": t} for t in texts]


def build(task, folder, device, kwargs):
    """Returns the callable that runs task: (inputs, **parameters) -> raw results."""
    import transformers

    if task in MODEL_CLASSES:
        cls = getattr(transformers, MODEL_CLASSES[task])
        tokenizer = transformers.AutoTokenizer.from_pretrained(folder, trust_remote_code=kwargs["trust_remote_code"])
        model = cls.from_pretrained(folder, **kwargs)
        runner = QuestionAnswering if task == "question-answering" else Seq2Seq
        return runner(model, tokenizer, device)
    return transformers.pipeline(task=task, model=folder, tokenizer=folder, device=device, **kwargs)


class TaskService:
    """TaskService answers one non-generative task's requests and batches."""

    def __init__(self, task, runner):
        self.task = task
        self.runner = runner
        self.calls = 0  # model calls made, for the log and the tests

    def handle(self, inputs):
        """Answers one request or a dynamic batch."""
        if inputs.is_batch():
            items = inputs.get_batches()
            return batch_output(self.answer_all(items))
        return self.answer_all([inputs])[0]

    def answer_all(self, items):
        """Returns one Output per request of items."""
        outs = [None] * len(items)
        groups = {}
        for i, item in enumerate(items):
            try:
                req = taskinput.parse(item, self.task)
            except RequestError as exc:
                outs[i] = bad_request(exc)
                continue
            groups.setdefault(req.key, []).append((i, req))
        for members in groups.values():
            self._run_group(members, outs)
        return outs

    def _run_group(self, members, outs):
        flat = [x for _, req in members for x in req.inputs]
        try:
            results = self.call(flat, members[0][1].parameters)
        except Exception as exc:
            if len(members) == 1:
                outs[members[0][0]] = self._failure(exc)
                return
            _log.info("a batch call of %d requests failed (%s); trying them one by one", len(members), exc)
            for member in members:
                self._run_group([member], outs)
            return
        at = 0
        for i, req in members:
            outs[i] = answer(results[at:at + len(req.inputs)], req.shape)
            at += len(req.inputs)

    def call(self, flat, params):
        """Runs the model once over flat and returns one result per input."""
        kwargs = dict(params)
        if not isinstance(self.runner, (QuestionAnswering, Seq2Seq)):
            kwargs.setdefault("batch_size", len(flat))
        began = time.monotonic()
        raw = self.runner(flat, **kwargs)
        self.calls += 1
        _log.debug("%s: one call for %d inputs in %.1f ms", self.task, len(flat), (time.monotonic() - began) * 1e3)
        return per_input(self.task, flat, raw)

    def _failure(self, exc):
        text = str(exc)
        if isinstance(exc, TypeError) and "unexpected keyword argument" in text:
            return bad_request(RequestError("parameters: %s" % text, param="parameters"))
        if type(exc).__name__ == "PipelineException" or isinstance(exc, ValueError):
            return bad_request(RequestError(text))
        _log.warning("%s failed", self.task, exc_info=exc)
        return failed(exc)


def per_input(task, flat, raw):
    """Returns the pipeline's results as one per input.

    The fill-mask pipeline answers a list of one input with that input's
    result itself, not a list holding it; every other task answers a list
    with one result per input.
    """
    if task == "fill-mask" and len(flat) == 1:
        return [raw]
    if not isinstance(raw, list) or len(raw) != len(flat):
        raise RuntimeError("the %s pipeline gave %s results for %d inputs" % (
            task, len(raw) if isinstance(raw, list) else "no list of", len(flat)))
    return raw


def answer(results, shape=None):
    """Returns the Output of one request: the JSON list of its results, or for a tensor request (shape) a tensor."""
    if shape is not None:
        return tensors.answer(results, shape)
    return Output().add_property("content-type", JSON).add_as_json(results)
