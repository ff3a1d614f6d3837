"""Shared test helpers: temporary model folders and an in-process worker."""

import os
import shutil
import socket
import sys
import tempfile
import textwrap
import threading

from switchyard_runtime.wire import protocol
from switchyard_runtime.server import Server

RUNTIME_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
REPO_DIR = os.path.dirname(RUNTIME_DIR)
ECHO_MODEL = os.path.join(RUNTIME_DIR, "tests", "models", "echo")


def make_model(test, files):
    """Creates a model folder holding files ({name: source}); removed after the test."""
    folder = tempfile.mkdtemp(prefix="switchyard-model-")
    test.addCleanup(shutil.rmtree, folder, True)
    for name, source in files.items():
        path = os.path.join(folder, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w", encoding="utf-8") as f:
            f.write(textwrap.dedent(source))
    return folder


def keep_import_state(test):
    """Restores sys.path and the model modules in sys.modules after the test."""
    path = list(sys.path)
    modules = set(sys.modules)

    def restore():
        sys.path[:] = path
        for name in set(sys.modules) - modules:
            del sys.modules[name]
    test.addCleanup(restore)


def numpy_or_skip(test):
    """Returns numpy, or skips the test without it."""
    try:
        import numpy
    except ImportError:
        test.skipTest("numpy is not installed")
    return numpy


class Worker:
    """Worker runs a Server on one end of a socketpair in a thread; the test is the front-end."""

    def __init__(self, model_dir, entry_point=None, device_id="-1"):
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        self.server = Server(theirs, model_dir, device_id, entry_point)
        self._server_sock = theirs
        self.sock = ours
        self.reader = ours.makefile("rb")
        self.status = None
        self.thread = threading.Thread(target=self._serve, name="test-worker")
        self.thread.start()

    def _serve(self):
        try:
            self.status = self.server.serve()
        finally:
            self._server_sock.close()

    def send(self, props, items=()):
        """Sends one request frame."""
        self.sock.sendall(protocol.encode_request(props, items))

    def call(self, props, items=()):
        """Sends a request and reads the whole response (a stream to its end)."""
        self.send(props, items)
        return self.read()

    def read(self, max_chunks=None):
        """Reads one response frame."""
        return protocol.read_response(self.reader.read, max_chunks)

    def init(self, **props):
        """Sends the initialization request and returns its response."""
        return self.call(props)

    def close(self):
        """Closes the front-end's end and waits for the worker and its threads to stop."""
        self.reader.close()
        self.sock.close()
        self.thread.join()
        self.server.join()
        return self.status


def start_worker(test, model_dir=ECHO_MODEL, **kwargs):
    """Starts a Worker for the test; checks at cleanup that its threads are gone."""
    keep_import_state(test)
    before = set(threading.enumerate())
    worker = Worker(model_dir, **kwargs)

    def stop():
        worker.close()
        left = [t for t in threading.enumerate() if t not in before and t.is_alive()]
        test.assertEqual(left, [], "threads left running")
    test.addCleanup(stop)
    return worker


FINAL_KEYS = {"token", "generated_text", "finish_reason", "usage"}


def stream_parts(test, lines, error=None):
    """Checks the lines of a streamed generative answer; returns (tokens, final).

    Every line but the last is exactly {"token": {"id": int, "text": str}};
    the last has "token": null plus generated_text, finish_reason and usage,
    and "error" exactly when error is given (then it must equal it).
    tokens is the list of token objects, in order.
    """
    test.assertGreaterEqual(len(lines), 1, "a stream ends with its final line")
    tokens = []
    for line in lines[:-1]:
        test.assertEqual(set(line), {"token"}, line)
        token = line["token"]
        test.assertIsInstance(token, dict, line)
        test.assertEqual(set(token), {"id", "text"}, line)
        test.assertIsInstance(token["id"], int, line)
        test.assertIsInstance(token["text"], str, line)
        tokens.append(token)
    final = lines[-1]
    test.assertEqual(set(final), FINAL_KEYS | ({"error"} if error is not None else set()), final)
    test.assertIsNone(final["token"], final)
    if error is not None:
        test.assertEqual(final["error"], error)
    usage = final["usage"]
    test.assertEqual(set(usage), {"prompt_tokens", "completion_tokens", "total_tokens"})
    test.assertEqual(usage["total_tokens"], usage["prompt_tokens"] + usage["completion_tokens"])
    return tokens, final
