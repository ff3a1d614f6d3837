"""A continuous-batching generation engine for the toy chat model.

One scheduler thread owns the model and the KV cache. Each turn of its loop
it admits waiting sequences (prefill: one forward over the prompt fills the
sequence's cache slot and gives its first token), then runs one batched
decode step for every running sequence: one token each, one forward over
the batch, keys of shorter sequences masked. New sequences therefore join
between decode steps, and finished or canceled ones leave between them.

Tokens reach the caller through Sequence, a blocking iterator backed by a
thread-safe queue. Nothing here knows about the server.
"""

# The Engine drives its Sequences: it alone calls their _put, _finish and
# the Sequence calls its Engine's _wake.
# pylint: disable=protected-access

from __future__ import annotations

import queue
import threading
from collections import deque
from typing import NamedTuple

import torch

import chattok
import gpt
import sampling
from kvcache import SlotCache
from textstream import TextStream

FINISH_REASONS = ("length", "stop", "eos", "canceled", "error")
_DONE = object()


class Token(NamedTuple):
    """Token is one generated token and the text it adds to the answer.

    text may be "" (part of a character, or a possible start of a stop
    string, held back until it is known); the texts of a sequence's tokens
    add up to the final answer. The end token carries no tag text.
    """

    id: int
    text: str


class Sequence:  # pylint: disable=too-many-instance-attributes  # a request's whole decoding state
    """Sequence is one generation request: iterate it for its Tokens.

    Iteration blocks until the next token and ends when the sequence
    finishes; then finish_reason is one of FINISH_REASONS (error is set for
    "error"), prompt_tokens is the prompt length used (after any left
    truncation) and generated_tokens the number of tokens sampled.
    """

    def __init__(self, engine: "Engine", prompt_ids: list[int], params: dict):
        self._engine = engine
        self._queue: queue.Queue = queue.Queue()
        self._canceled = threading.Event()
        self.prompt_ids = prompt_ids
        self.prompt_tokens = len(prompt_ids)
        self.generated_tokens = 0
        self.finish_reason: str | None = None
        self.error: str | None = None
        self.params = params
        self.stream = TextStream(engine.decode, params["stop"])
        self.gen = sampling.generator(params["seed"])
        self.next_id = -1  # last sampled token, fed by the next decode step
        self.pos = 0  # tokens held in the KV cache

    def __iter__(self) -> "Sequence":
        return self

    def __next__(self) -> Token:
        item = self._queue.get()
        if item is _DONE:
            self._queue.put(_DONE)
            raise StopIteration
        return item

    def cancel(self) -> None:
        """cancel asks the engine to drop the sequence at its next step."""
        self._canceled.set()
        self._engine._wake()

    @property
    def canceled(self) -> bool:
        """canceled reports whether cancel was called."""
        return self._canceled.is_set()

    @property
    def done(self) -> bool:
        """done reports whether the sequence has finished."""
        return self.finish_reason is not None

    @property
    def text(self) -> str:
        """text is the answer handed out so far (all of it once done)."""
        return self.stream.text

    def _put(self, token: Token) -> None:
        self._queue.put(token)

    def _finish(self, reason: str, error: str | None = None) -> None:
        if self.finish_reason is None:
            self.error = error
            self.finish_reason = reason
            self._queue.put(_DONE)


class Engine:
    """Engine loads a model folder and generates for many sequences at once.

    device is a torch device name; max_batch bounds the running sequences
    (more wait in a queue); threads, when given, sets torch's CPU threads.
    """

    def __init__(self, model_dir: str, device: str = "cpu", max_batch: int = 8, threads: int | None = None):
        if max_batch < 1:
            raise ValueError("engine: max_batch must be at least 1")
        if threads is not None:
            torch.set_num_threads(threads)
        self.tokenizer = chattok.ChatTokenizer(model_dir)
        self.model = gpt.from_pretrained(model_dir, device)
        self.config = self.model.config
        if self.tokenizer.vocab_size != self.config.vocab_size:
            raise ValueError("engine: tokenizer and model vocab sizes differ")
        self.device = torch.device(device)
        self.max_batch = max_batch
        self.cache = SlotCache(self.config, max_batch, self.device)
        self._cv = threading.Condition()
        self._waiting: deque[Sequence] = deque()
        self._running: list[Sequence] = []
        self._closed = False
        self._thread = threading.Thread(target=self._loop, name="chat-engine", daemon=True)
        self._thread.start()

    # Public API.

    def render_chat(self, messages: list[dict]) -> str:
        """render_chat applies the chat template, ending with the assistant tag."""
        return chattok.render_chat(messages)

    def encode(self, text: str) -> list[int]:
        """encode turns text into token ids."""
        return self.tokenizer.encode(text)

    def decode(self, ids: list[int]) -> str:
        """decode turns token ids into text."""
        return self.tokenizer.decode(ids)

    def submit(self, prompt_ids: list[int], max_new_tokens: int, temperature: float = 1.0,
               top_p: float = 1.0, stop: list[str] | None = None, seed: int | None = None,
               ignore_eos: bool = False) -> Sequence:
        """submit queues a prompt for generation and returns its Sequence.

        A prompt longer than the context window keeps its last
        n_positions - 1 tokens. ignore_eos keeps going past <|end|> (for
        benchmarks). Raises ValueError on bad arguments and RuntimeError
        once the engine is closed.
        """
        ids = self._check_prompt(prompt_ids)
        params = _check_params(max_new_tokens, temperature, top_p, stop, seed, ignore_eos)
        seq = Sequence(self, ids[-(self.config.n_positions - 1):], params)
        with self._cv:
            if self._closed:
                raise RuntimeError("engine: closed")
            if max_new_tokens == 0:
                seq._finish("length")
                return seq
            self._waiting.append(seq)
            self._cv.notify()
        return seq

    def close(self) -> None:
        """close stops the scheduler thread, waits for it and ends every
        unfinished sequence with "canceled". Calling it again is a no-op."""
        with self._cv:
            self._closed = True
            self._cv.notify()
        self._thread.join()

    def __enter__(self) -> "Engine":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _check_prompt(self, prompt_ids) -> list[int]:
        ids = [int(i) for i in prompt_ids]
        if not ids:
            raise ValueError("engine: empty prompt")
        if min(ids) < 0 or max(ids) >= self.config.vocab_size:
            raise ValueError("engine: prompt token id out of range")
        return ids

    def _wake(self) -> None:
        with self._cv:
            self._cv.notify()

    # Scheduler thread.

    def _loop(self) -> None:
        with torch.inference_mode():
            while (admitting := self._next_admissions()) is not None:
                try:
                    self._step(admitting)
                except Exception as e:  # noqa: BLE001 - reported to the callers
                    self._fail_all(admitting, e)
        self._cancel_all()

    def _next_admissions(self) -> list[Sequence] | None:
        """_next_admissions waits for work; it returns the sequences to admit
        now (maybe none), or None once the engine is closed."""
        with self._cv:
            while not (self._closed or self._waiting or self._running):
                self._cv.wait()
            if self._closed:
                return None
            self._drop_canceled_waiting()
            free = self.max_batch - len(self._running)
            return [self._waiting.popleft() for _ in range(min(free, len(self._waiting)))]

    def _drop_canceled_waiting(self) -> None:
        for seq in [s for s in self._waiting if s.canceled]:
            self._waiting.remove(seq)
            seq._finish("canceled")

    def _step(self, admitting: list[Sequence]) -> None:
        for seq in admitting:
            self._admit(seq)
        self._drop_canceled()
        if self._running:
            self._decode_running()

    def _fail_all(self, admitting: list[Sequence], e: Exception) -> None:
        for seq in admitting + self._running:
            seq._finish("error", f"engine: {e!r}")
        self._running.clear()

    def _admit(self, seq: Sequence) -> None:
        if seq.canceled:
            seq._finish("canceled")
            return
        slot = len(self._running)
        try:
            logits = self._prefill(seq.prompt_ids, slot)
        except Exception as e:  # noqa: BLE001 - reported to the caller
            seq._finish("error", f"engine: prefill failed: {e!r}")
            return
        seq.pos = len(seq.prompt_ids)
        self._running.append(seq)
        self._accept(seq, logits)

    def _prefill(self, ids: list[int], slot: int) -> torch.Tensor:
        idx = torch.tensor([ids], dtype=torch.long, device=self.device)
        h = self.model.features(idx, self.cache.prefill_attend(slot))
        return self.model.logits(h[0, -1:]).float().cpu()[0]

    def _decode_running(self) -> None:
        seqs = list(self._running)
        try:
            logits = self._decode(seqs)
        except Exception as e:  # noqa: BLE001 - reported to the callers
            for seq in seqs:
                seq._finish("error", f"engine: decode failed: {e!r}")
            self._running.clear()
            return
        for seq, row in zip(seqs, logits):
            seq.pos += 1
            self._accept(seq, row)
        self._drop_finished()

    def _decode(self, seqs: list[Sequence]) -> torch.Tensor:
        ids = torch.tensor([[s.next_id] for s in seqs], dtype=torch.long, device=self.device)
        pos = torch.tensor([s.pos for s in seqs], dtype=torch.long, device=self.device)
        h = self.model.hidden(ids, pos.unsqueeze(1), self.cache.decode_attend(pos))
        return self.model.logits(h[:, 0]).float().cpu()

    def _accept(self, seq: Sequence, logits: torch.Tensor) -> None:
        """_accept samples seq's next token, hands it out and decides whether
        the sequence is finished."""
        p = seq.params
        tid = sampling.choose(logits, p["temperature"], p["top_p"], seq.gen)
        seq.generated_tokens += 1
        seq.next_id = tid
        if tid in self.tokenizer.eos_ids and not p["ignore_eos"]:
            seq._put(Token(tid, seq.stream.flush()))
            seq._finish("eos")
            return
        text, stopped = seq.stream.push(tid)
        if stopped:
            seq._put(Token(tid, text))
            seq._finish("stop")
            return
        full = seq.generated_tokens >= p["max_new_tokens"] or seq.pos >= self.config.n_positions
        seq._put(Token(tid, text + (seq.stream.flush() if full else "")))
        if full:
            seq._finish("length")

    def _drop_canceled(self) -> None:
        for seq in self._running:
            if seq.canceled:
                seq._finish("canceled")
        self._drop_finished()

    def _drop_finished(self) -> None:
        """_drop_finished removes finished sequences, keeping the running
        ones in cache slots 0 .. n-1 by moving the last into each hole."""
        i = 0
        while i < len(self._running):
            if not self._running[i].done:
                i += 1
                continue
            last = self._running.pop()
            if i < len(self._running):
                self.cache.move(len(self._running), i, last.pos)
                self._running[i] = last

    def _cancel_all(self) -> None:
        with self._cv:
            pending = list(self._waiting) + self._running
            self._waiting.clear()
            self._running.clear()
        for seq in pending:
            seq._finish("canceled")


def _check_params(max_new_tokens, temperature, top_p, stop, seed, ignore_eos) -> dict:
    if not isinstance(max_new_tokens, int) or max_new_tokens < 0:
        raise ValueError("engine: max_new_tokens must be a non-negative int")
    if temperature is None or temperature < 0:
        raise ValueError("engine: temperature must be >= 0")
    if top_p is None or not 0 < top_p <= 1:
        raise ValueError("engine: top_p must be in (0, 1]")
    if isinstance(stop, str):
        stop = [stop]
    if stop is not None and not all(isinstance(s, str) for s in stop):
        raise ValueError("engine: stop must be a list of strings")
    if seed is not None and not isinstance(seed, int):
        raise ValueError("engine: seed must be an int")
    return {"max_new_tokens": max_new_tokens, "temperature": float(temperature), "top_p": float(top_p),
            "stop": list(stop or []), "seed": seed, "ignore_eos": bool(ignore_eos)}
