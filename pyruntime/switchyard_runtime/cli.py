"""The worker process: command line, logging, socket, parent watch, exit."""

import argparse
import logging
import os
import signal
import socket
import sys
import threading

from .server import Server
from .wire import protocol

READY_LINE = "Python engine started."
MAX_ITEM_ENV = "SWITCHYARD_MAX_ITEM_BYTES"

_log = logging.getLogger("switchyard.engine")

_LEVELS = {"trace": logging.DEBUG, "debug": logging.DEBUG, "info": logging.INFO,
           "warn": logging.WARNING, "warning": logging.WARNING, "error": logging.ERROR,
           "fatal": logging.CRITICAL, "critical": logging.CRITICAL, "off": logging.CRITICAL + 10}


def parse_args(argv):
    """Parses DJL 0.36's engine command line; returns (args, the arguments it ignored).

    Every argument DJL's djl_python_engine.py takes is accepted. An empty
    --entry-point (DJL passes "" when the model names none) means none.
    --recommended-entry-point, --cluster-size, the parallel degrees and
    --async-mode/--no-async-mode are accepted and not used: this runtime
    picks its own handler for a folder without one (backends.py), serves one
    process per worker, and always takes tracked (async) requests.
    """
    parser = argparse.ArgumentParser(prog="switchyard_engine", description="switchyard Python worker")
    parser.add_argument("--sock-type", default="unix")
    parser.add_argument("--sock-name")
    parser.add_argument("--port")
    parser.add_argument("--model-dir", required=True)
    parser.add_argument("--device-id", default="-1")
    parser.add_argument("--entry-point")
    parser.add_argument("--recommended-entry-point")
    parser.add_argument("--cluster-size", type=int)
    parser.add_argument("--tensor-parallel-degree", type=int)
    parser.add_argument("--pipeline-parallel-degree", type=int)
    parser.add_argument("--log-level", default="info")
    parser.add_argument("--async-mode", action=argparse.BooleanOptionalAction)
    args, ignored = parser.parse_known_args(argv)
    args.entry_point = args.entry_point or None
    return args, ignored


def log_level(name):
    """Returns the logging level for a --log-level name (unknown names: INFO)."""
    return _LEVELS.get((name or "info").strip().lower(), logging.INFO)


def setup_logging(name, stream=None):
    """Sends log records to stderr in a compact format, without timestamps."""
    handler = logging.StreamHandler(stream or sys.stderr)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(log_level(name))


class ParentWatch:
    """ParentWatch ends the process when its parent dies (the parent id changes).

    A daemon thread checks every interval seconds; stop() ends it and waits.
    """

    def __init__(self, interval=1.0, getppid=os.getppid, on_orphan=None):
        self._interval = interval
        self._getppid = getppid
        self._parent = getppid()
        self._on_orphan = on_orphan or _die
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="switchyard-parent-watch", daemon=True)

    def orphaned(self):
        """Reports whether the parent process is gone."""
        return self._getppid() != self._parent

    def start(self):
        """Starts the watching thread."""
        self._thread.start()
        return self

    def stop(self):
        """Stops the watching thread and waits for it."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self):
        while not self._stop.wait(self._interval):
            if self.orphaned():
                self._on_orphan()
                return


def _die():
    _log.error("the parent process is gone; exiting")
    os._exit(1)


def listen(path):
    """Removes a stale socket file at path, binds a Unix socket there and listens."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.bind(path)
        sock.listen(1)
    except BaseException:
        sock.close()
        raise
    return sock


def accept_one(listener):
    """Accepts one connection, then closes the listener."""
    try:
        conn, _ = listener.accept()
    finally:
        listener.close()
    conn.setblocking(True)
    return conn


def _max_item():
    raw = os.environ.get(MAX_ITEM_ENV)
    try:
        return int(raw) if raw else protocol.DEFAULT_MAX_ITEM
    except ValueError:
        _log.warning("%s=%r is not a number; using %d", MAX_ITEM_ENV, raw, protocol.DEFAULT_MAX_ITEM)
        return protocol.DEFAULT_MAX_ITEM


def _check(args):
    if args.sock_type != "unix":
        return "--sock-type %s is not supported: this engine listens on a Unix socket only" % args.sock_type
    if not args.sock_name:
        return "--sock-name is required"
    if not os.path.isdir(args.model_dir):
        return "--model-dir %s is not a folder" % args.model_dir
    return None


def main(argv=None):
    """Runs the worker process; returns its exit status."""
    args, ignored = parse_args(sys.argv[1:] if argv is None else argv)
    setup_logging(args.log_level)
    problem = _check(args)
    if problem:
        _log.error("%s", problem)
        return 2
    if ignored:
        _log.debug("ignoring arguments %s", ignored)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    ParentWatch().start()
    model_dir = os.path.abspath(args.model_dir)
    listener = listen(args.sock_name)
    os.chdir(model_dir)
    conn = accept_one(_announce(listener))
    server = Server(conn, model_dir, args.device_id, args.entry_point, _max_item())
    return _exit_status(server, server.serve())


def _announce(listener):
    sys.stdout.write(READY_LINE + "\n")
    sys.stdout.flush()
    return listener


def _exit_status(server, status):
    """Returns status once the worker threads are done; ends at once if some still run.

    A thread the handler started and left running (an engine's loop, such as
    transformers' continuous batching) would keep the interpreter from
    exiting, so the worker then ends at once too.
    """
    if server.busy():
        _log.warning("exiting with handler code still running")
        _end(status)
    server.join()
    if _lingering():
        _log.debug("exiting with the handler's threads still running: %s", ", ".join(_lingering()))
        _end(status)
    return status


def _lingering():
    """Returns the names of the threads that would keep the interpreter alive."""
    me = threading.current_thread()
    return [t.name for t in threading.enumerate() if t is not me and t.is_alive() and not t.daemon]


def _end(status):
    logging.shutdown()
    sys.stdout.flush()
    os._exit(status)
