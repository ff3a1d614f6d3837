"""A fake vllm for tests: vLLM's async engine API over a word-per-token model.

The "model" answers the words t0 t1 t2 ... (token ids 100, 101, ...). It ends
with the end token (finish_reason "stop", stop_reason None) after EOS_AFTER
tokens, with "length" at max_tokens, or with "stop" (stop_reason the string)
when a stop string appears; the text is cut before it, as vLLM does. A prompt
containing "[gated]" waits for ENGINES[-1].gate.release() before each token.
"""

# The fakes take the arguments of the real API, used or not.
# pylint: disable=unused-argument

import asyncio
import collections
import concurrent.futures
import threading

EOS_AFTER = 6
ENGINES = []  # every engine made, latest last


class AsyncEngineArgs:
    """AsyncEngineArgs records the keywords it is given."""

    def __init__(self, model, **kwargs):
        self.model = model
        self.kwargs = kwargs


class SamplingParams:
    """SamplingParams records vLLM's sampling settings."""

    def __init__(self, n=1, max_tokens=16, temperature=1.0, top_p=1.0, stop=None, seed=None):
        self.n, self.max_tokens, self.temperature, self.top_p = n, max_tokens, temperature, top_p
        self.stop, self.seed = stop, seed


class CompletionOutput:
    """CompletionOutput is one cumulative candidate answer."""

    def __init__(self, text, token_ids, finish_reason=None, stop_reason=None):
        self.index = 0
        self.text, self.token_ids = text, token_ids
        self.finish_reason, self.stop_reason = finish_reason, stop_reason


class RequestOutput:
    """RequestOutput is the state of one request after a step."""

    def __init__(self, request_id, prompt, completion, finished):
        self.request_id, self.prompt = request_id, prompt
        self.prompt_token_ids = list(range(len(prompt.split())))
        self.outputs = [completion]
        self.finished = finished


class Tokenizer:
    """Tokenizer renders chats as "<role>content" pieces; a token is a space-separated word."""

    def apply_chat_template(self, messages, tokenize=True, add_generation_prompt=False, tools=None):
        """Returns the messages as <role>content pieces."""
        text = "".join("<%s>%s" % (m["role"], m["content"]) for m in messages)
        if tools:
            text = "<tools>%s" % ",".join(t["function"]["name"] for t in tools) + text
        return text + ("<assistant>" if add_generation_prompt else "")

    def encode(self, text):
        """Returns one id per word of text."""
        return list(range(len(text.split())))


class ModelConfig:
    """ModelConfig holds the context length: max_model_len from the engine args, else 64."""

    def __init__(self, max_model_len):
        self.max_model_len = max_model_len


class Gate:
    """Gate hands out permits released from any thread to waiters on the loop."""

    def __init__(self):
        self._lock = threading.Lock()
        self._waiters = collections.deque()
        self._permits = 0

    def release(self, n=1):
        """Lets n waiting (or future) tokens through."""
        with self._lock:
            self._waiters = collections.deque(w for w in self._waiters if not w.cancelled())
            for _ in range(n):
                if self._waiters:
                    self._waiters.popleft().set_result(None)
                else:
                    self._permits += 1

    async def wait(self):
        """Waits until a token may go through."""
        with self._lock:
            if self._permits:
                self._permits -= 1
                return
            future = concurrent.futures.Future()
            self._waiters.append(future)
        await asyncio.wrap_future(future)


class AsyncLLMEngine:
    """AsyncLLMEngine generates words; it records requests and aborts."""

    def __init__(self, args):
        self.args = args
        self.model_config = ModelConfig(args.kwargs.get("max_model_len", 64))
        self.requests = []  # (request_id, prompt, SamplingParams)
        self.aborted = []
        self.abort_seen = threading.Event()
        self.gate = Gate()

    @classmethod
    def from_engine_args(cls, engine_args):
        """Returns a new engine, recorded in ENGINES."""
        engine = cls(engine_args)
        ENGINES.append(engine)
        return engine

    async def get_tokenizer(self):
        """Returns the engine's tokenizer."""
        return Tokenizer()

    async def abort(self, request_id):
        """Records that request_id was aborted."""
        self.aborted.append(request_id)
        self.abort_seen.set()

    async def generate(self, prompt, sampling_params, request_id):
        """Yields a RequestOutput per generated word, cumulative, as vLLM does."""
        self.requests.append((request_id, prompt, sampling_params))
        words, ids = [], []
        while True:
            if "[gated]" in prompt:
                await self.gate.wait()
            else:
                await asyncio.sleep(0)
            words.append("t%d" % len(words))
            ids.append(100 + len(ids))
            yield self._output(request_id, prompt, " ".join(words), list(ids), sampling_params)
            if self._finished(ids, " ".join(words), sampling_params):
                return

    def _output(self, request_id, prompt, text, ids, params):
        for stop in params.stop or ():
            if stop in text:
                completion = CompletionOutput(text[:text.index(stop)], ids, "stop", stop)
                return RequestOutput(request_id, prompt, completion, True)
        if len(ids) >= params.max_tokens:
            return RequestOutput(request_id, prompt, CompletionOutput(text, ids, "length"), True)
        if len(ids) >= EOS_AFTER:
            return RequestOutput(request_id, prompt, CompletionOutput(text, ids, "stop", None), True)
        return RequestOutput(request_id, prompt, CompletionOutput(text, ids), False)

    def _finished(self, ids, text, params):
        stopped = any(s in text for s in params.stop or ())
        return stopped or len(ids) >= min(params.max_tokens, EOS_AFTER)
