"""Tracked (rolling-batch) requests: several in flight on one connection.

A request with the property request_tracking_id runs on a thread pool (or on
the asyncio loop when the handler is async), so the reader goes on reading.
Every frame sent for it carries the same property. A streamed answer goes out
as a series of streamed frames holding one chunk each, the last one holding
the end marker (protocol.md section 4). A cancel request ends the request
with the end text "canceled" and closes its generator.
"""

import asyncio
import inspect
import logging
from concurrent.futures import ThreadPoolExecutor

from .frames import reply_frame, stream_head
from .results import chunk_bytes, close_stream, from_exception, from_result, is_async_iterable
from .wire import protocol

TRACKING_ID = "request_tracking_id"
CANCELED = "canceled"
DEFAULT_POOL_SIZE = 32

_log = logging.getLogger("switchyard.tracked")


class Job:
    """Job is one tracked request; finished turns true once its last frame is sent."""

    __slots__ = ("tid", "finished", "future")

    def __init__(self, tid):
        self.tid = tid
        self.finished = False
        self.future = None


class Tracked:
    """Tracked runs tracked requests concurrently and writes their frames.

    It owns a thread pool of pool_size threads; close() stops taking work and
    join() waits for the pool's threads.
    """

    def __init__(self, writer, runner, pool_size=DEFAULT_POOL_SIZE, finalize=None):
        self._writer = writer
        self._runner = runner
        self._pool = ThreadPoolExecutor(max_workers=pool_size, thread_name_prefix="switchyard-tracked")
        self._jobs = {}
        self._running = set()  # pool futures not done yet
        self._finalize = finalize or (lambda reply: None)

    def active(self):
        """Returns how many tracked requests have not sent their last frame."""
        with self._writer.lock:
            return len(self._jobs)

    def busy(self):
        """Reports whether a request is in flight or a pool thread still runs handler code."""
        with self._writer.lock:
            return bool(self._jobs) or bool(self._running)

    def _submit(self, fn, *args):
        future = self._pool.submit(fn, *args)
        with self._writer.lock:
            self._running.add(future)
        future.add_done_callback(self._done)
        return future

    def _done(self, future):
        with self._writer.lock:
            self._running.discard(future)
        _log_failure(future)

    def start(self, tid, fn, inputs, is_async):
        """Starts a tracked request: fn(inputs) on the pool, or on the loop when is_async."""
        job = Job(tid)
        with self._writer.lock:
            if tid in self._jobs:
                _log.warning("tracking id %s is already in flight; both will answer", tid)
            self._jobs[tid] = job
        if is_async:
            job.future = self._runner.submit(self._run_async(job, fn, inputs))
            job.future.add_done_callback(_log_failure)
        else:
            self._submit(self._run_sync, job, fn, inputs)

    def cancel(self, tid):
        """Ends request tid with the end text "canceled"; unknown ids are ignored."""
        with self._writer.lock:
            job = self._jobs.pop(tid, None)
            if job is None or job.finished:
                return
            job.finished = True
            frame = protocol.encode_stream_head(200, CANCELED, {TRACKING_ID: tid})
            self._send_locked(job, frame + protocol.encode_end(CANCELED))
        if job.future is not None:
            job.future.cancel()

    def close(self):
        """Marks every request finished (nothing more is sent) and stops the pool."""
        with self._writer.lock:
            for job in self._jobs.values():
                job.finished = True
                if job.future is not None:
                    job.future.cancel()
            self._jobs.clear()
        self._pool.shutdown(wait=False, cancel_futures=True)

    def join(self):
        """Waits for the pool's threads to end (after close)."""
        self._pool.shutdown(wait=True)

    # --- sending --------------------------------------------------------------

    def _emit(self, job, frame, final=False):
        """Sends a frame of job unless it has finished; final marks it finished."""
        with self._writer.lock:
            if job.finished:
                return False
            if final:
                job.finished = True
                if self._jobs.get(job.tid) is job:
                    del self._jobs[job.tid]
            return self._send_locked(job, frame)

    def _send_locked(self, job, frame):
        try:
            self._writer.send_locked(frame)
            return True
        except OSError as exc:
            job.finished = True
            _log.debug("tracked %s: send failed: %s", job.tid, exc)
            return False

    def _props(self, job, reply):
        props = dict(reply.props)
        props[TRACKING_ID] = job.tid
        return props

    def _fail(self, job, exc):
        if job.finished:
            return
        _log.warning("tracked %s: handler failed", job.tid, exc_info=exc)
        reply = from_exception(exc)
        self._emit(job, reply_frame(reply, self._props(job, reply)), final=True)

    def _whole(self, job, reply):
        self._emit(job, reply_frame(reply, self._props(job, reply)), final=True)
        self._finalize(reply)

    # --- running --------------------------------------------------------------

    def _run_sync(self, job, fn, inputs):
        if job.finished:
            return
        try:
            result = fn(inputs)
            if inspect.isawaitable(result) or is_async_iterable(result):
                self._to_loop(job, self._complete_async(job, result))
                return
            reply = from_result(result)
        except Exception as exc:
            self._fail(job, exc)
            return
        if reply.stream is not None and is_async_iterable(reply.stream):
            self._to_loop(job, self._deliver_async(job, reply))
        else:
            self._deliver_sync(job, reply)

    def _to_loop(self, job, coro):
        """Hands the rest of a request to the asyncio loop; a cancel may have come meanwhile."""
        job.future = self._runner.submit(coro)
        job.future.add_done_callback(_log_failure)
        if job.finished:
            job.future.cancel()

    async def _run_async(self, job, fn, inputs):
        try:
            result = fn(inputs)
        except Exception as exc:
            self._fail(job, exc)
            return
        await self._complete_async(job, result)

    async def _complete_async(self, job, result):
        try:
            if inspect.isawaitable(result):
                result = await result
            reply = from_result(result)
        except Exception as exc:
            self._fail(job, exc)
            return
        await self._deliver_async(job, reply)

    def _deliver_sync(self, job, reply):
        if reply.stream is None:
            self._whole(job, reply)
        else:
            self._stream_sync(job, reply)

    async def _deliver_async(self, job, reply):
        if reply.stream is None:
            self._whole(job, reply)
        elif is_async_iterable(reply.stream):
            await self._stream_async(job, reply)
        else:
            await asyncio.wrap_future(self._submit(self._stream_sync, job, reply))

    # --- streams --------------------------------------------------------------

    def _heads(self, job, reply):
        """Returns the frame heads of a stream: with all properties, then with the id only."""
        try:
            return stream_head(reply, self._props(job, reply)), stream_head(reply, {TRACKING_ID: job.tid})
        except protocol.EncodeError as exc:
            self._fail(job, exc)
            return None

    def _piece(self, job, heads, item, reply):
        frame = heads[0] + protocol.encode_chunk(chunk_bytes(item, reply.formatter))
        heads[0] = heads[1]
        return self._emit(job, frame)

    def _stream_failed(self, job, heads, exc):
        if job.finished:
            return
        _log.warning("tracked %s: stream failed", job.tid, exc_info=exc)
        self._emit(job, heads[0] + protocol.encode_end(str(exc) or type(exc).__name__), final=True)

    def _stream_sync(self, job, reply):
        heads = self._heads(job, reply)
        if heads is None:
            return
        heads = list(heads)
        it = iter(reply.stream)
        try:
            for item in it:
                if job.finished or not self._piece(job, heads, item, reply):
                    break
        except Exception as exc:
            self._stream_failed(job, heads, exc)
            return
        finally:
            close_stream(it)
        self._end(job, heads, reply)

    async def _stream_async(self, job, reply):
        heads = self._heads(job, reply)
        if heads is None:
            return
        heads = list(heads)
        it = reply.stream.__aiter__()
        try:
            async for item in it:
                if job.finished or not self._piece(job, heads, item, reply):
                    break
        except Exception as exc:
            self._stream_failed(job, heads, exc)
            return
        finally:
            if hasattr(it, "aclose"):
                await it.aclose()
        self._end(job, heads, reply)

    def _end(self, job, heads, reply):
        self._emit(job, heads[0] + protocol.encode_end(), final=True)
        self._finalize(reply)


def _log_failure(future):
    """Logs an exception that escaped a tracked task (a bug: handler errors are answered)."""
    if not future.cancelled() and future.exception() is not None:
        _log.error("tracked request task failed", exc_info=future.exception())
