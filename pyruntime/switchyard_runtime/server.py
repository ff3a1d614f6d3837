"""The connection loop: initialization, then one request after another."""

import inspect
import logging

from . import loader
from .asyncrun import AsyncRunner
from .djl.errors import LoadError, is_out_of_memory
from .djl.inputs import Input
from .djl.outputs import Output
from .djl.pairlist import PairList
from .frames import own_frame, reply_frame, stream_head
from .results import (Reply, chunk_bytes, close_stream, error_reply, exception_text, from_exception,
                      from_result, is_async_iterable, last_traceback_line)
from .tracked import DEFAULT_POOL_SIZE, TRACKING_ID, Tracked
from .wire import protocol
from .wire.framereader import FrameReader
from .wire.writer import Writer

SHUTDOWN_GRACE = 5.0  # seconds the asyncio loop gets to wind down at the end

_log = logging.getLogger("switchyard.server")


class Server:
    """Server serves one connection from the front-end until it closes.

    serve() reads the initialization request, loads the handler, then answers
    requests: untracked ones inline, one at a time; tracked ones concurrently.
    It returns the process exit status: 0 after a clean end of the
    connection, 1 when the handler failed to load, 2 on a protocol error.
    """

    def __init__(self, conn, model_dir, device_id="-1", entry_point=None,
                 max_item=protocol.DEFAULT_MAX_ITEM):
        self.model_dir = model_dir
        self.device_id = str(device_id)
        self.entry_point = entry_point
        self.handler = None
        self.rolling_batch = "disable"
        self._conn = conn
        self._reader = FrameReader(conn, max_item=max_item)
        self._writer = Writer(conn)
        self._runner = AsyncRunner()
        self._runner_stuck = False
        self._tracked = None
        self._extra = {"device_id": self.device_id, "model_dir": model_dir}

    def serve(self):
        """Serves the connection; returns the exit status."""
        try:
            if not self._initialize():
                return 1
            self._loop()
            return 0
        except protocol.ProtocolError as exc:
            _log.error("%s", exc)
            return 2
        except (ConnectionError, OSError) as exc:
            _log.info("connection lost: %s", exc)
            return 0
        finally:
            self._shutdown()

    def active(self):
        """Returns how many tracked requests have not sent their last frame."""
        return 0 if self._tracked is None else self._tracked.active()

    def busy(self):
        """Reports whether handler code may still be running after serve() returned."""
        return self._runner_stuck or (self._tracked is not None and self._tracked.busy())

    def join(self):
        """Waits for the worker threads to end, after serve() returned."""
        if self._tracked is not None:
            self._tracked.join()

    def _shutdown(self):
        if self._tracked is not None:
            self._tracked.close()
        self._runner_stuck = not self._runner.stop(SHUTDOWN_GRACE)

    # --- initialization ---------------------------------------------------------

    def _initialize(self):
        request = self._reader.read_request()
        if request is None:
            _log.error("the connection closed before the initialization request")
            return False
        inputs = self._input(*request)
        reply = self._load(inputs)
        self._writer.send(reply_frame(reply, reply.props))
        if reply.code >= 300:
            return False
        self._tracked = Tracked(self._writer, self._runner, _pool_size(inputs.properties),
                                finalize=_finalize)
        return True

    def _load(self, inputs):
        props = inputs.properties
        try:
            self.handler = loader.load(self.model_dir, self.entry_point, props)
            return self._init_reply(self._call(self.handler.function(), inputs), props)
        except Exception as exc:
            _log.error("failed to load the model handler", exc_info=exc)
            return Reply(507 if is_out_of_memory(exc) else 500, _load_message(exc))

    def _init_reply(self, result, props):
        if result is not None and not hasattr(result, "code"):
            _log.warning("the initialization call returned %s; taken as loaded", type(result).__name__)
        code = int(getattr(result, "code", 200) or 200)
        if code >= 300:
            return Reply(code, getattr(result, "message", "model failed to load"))
        self.rolling_batch = props.get("rolling_batch") or "disable"
        reply_props = dict(getattr(result, "properties", None) or {})
        reply_props["rolling_batch"] = self.rolling_batch
        _log.info("model handler loaded (rolling_batch=%s)", self.rolling_batch)
        return Reply(200, "OK", reply_props)

    # --- requests ---------------------------------------------------------------

    def _input(self, props, keys, values):
        props.extra = self._extra
        return Input(props, PairList(keys, values))

    def _loop(self):
        read_request, inline, extra = self._reader.read_request, self._inline, self._extra
        while True:
            request = read_request()
            if request is None:
                return
            props, keys, values = request
            props.extra = extra  # device_id and model_dir, as if set on the dict
            inputs = Input(props, PairList(keys, values))
            tid = props.get(TRACKING_ID)
            if tid is None:
                inline(inputs)
            else:
                self._start_tracked(tid, inputs)

    def _start_tracked(self, tid, inputs):
        if str(inputs.properties.get("cancel")).lower() == "true":
            self._tracked.cancel(tid)
            return
        try:
            fn = self.handler.function(inputs.function_name)
        except LoadError as exc:
            fn = _raiser(exc)
        self._tracked.start(tid, fn, inputs, _is_async_function(fn))

    def _call(self, fn, inputs):
        result = fn(inputs)
        if result is not None and type(result) is not Output and inspect.isawaitable(result):
            result = self._runner.run(result)
        return result

    def _inline(self, inputs):
        try:
            result = self.handler.function(inputs.function_name)(inputs)
            if result is not None and type(result) is not Output and inspect.isawaitable(result):
                result = self._runner.run(result)
            frame = own_frame(result)
            if frame is not None:
                self._writer.send(frame)
                return
            reply = from_result(result)
        except Exception as exc:
            _log.warning("handler failed: %s", exception_text(exc), exc_info=exc)
            reply = from_exception(exc)
        if reply.stream is None:
            self._writer.send(reply_frame(reply, reply.props))
            _finalize(reply)
        else:
            self._stream(reply)

    def _stream(self, reply):
        try:
            head = stream_head(reply, reply.props)
        except protocol.EncodeError as exc:
            self._writer.send(reply_frame(error_reply(500, str(exc)), {}))
            return
        items = reply.stream
        if is_async_iterable(items):
            items = self._runner.iterate(items)
        with self._writer.lock:
            self._writer.send_locked(head)
            self._writer.send_locked(_chunks_end(iter(items), reply.formatter, self._writer))
        _finalize(reply)


def _chunks_end(it, formatter, writer):
    """Sends each item of it as a chunk; returns the end marker to send last."""
    try:
        for item in it:
            writer.send_locked(protocol.encode_chunk(chunk_bytes(item, formatter)))
    except OSError:
        raise
    except Exception as exc:
        _log.warning("stream failed", exc_info=exc)
        return protocol.encode_end(exception_text(exc))
    finally:
        close_stream(it)
    return protocol.encode_end()


def _load_message(exc):
    if isinstance(exc, LoadError):
        return str(exc)
    return last_traceback_line(exc)


def _pool_size(props):
    raw = props.get("max_rolling_batch_size")
    try:
        size = int(raw) if raw else DEFAULT_POOL_SIZE
    except ValueError:
        _log.warning("max_rolling_batch_size=%r is not a number; using %d", raw, DEFAULT_POOL_SIZE)
        return DEFAULT_POOL_SIZE
    return max(1, size)


def _is_async_function(fn):
    return inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn)


def _raiser(exc):
    def fail(_inputs):
        raise exc
    return fail


def _finalize(reply):
    """Runs the finalize functions of the handler's Output, logging failures."""
    run = getattr(reply.source, "execute_finalize", None)
    if run is None:
        return
    try:
        run()
    except Exception as exc:
        _log.warning("finalize function failed", exc_info=exc)
