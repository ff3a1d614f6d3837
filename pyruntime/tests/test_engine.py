"""switchyard_engine.py and the bench scripts as real processes."""

import os
import select
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import unittest

from switchyard_runtime import cli
from switchyard_runtime.wire import protocol
from tests.helpers import ECHO_MODEL, REPO_DIR, RUNTIME_DIR

ENGINE = os.path.join(RUNTIME_DIR, "switchyard_engine.py")
BARE_ECHO = os.path.join(REPO_DIR, "bench", "python", "bare_echo.py")
NOOP_MODEL = os.path.join(REPO_DIR, "bench", "python", "noop")
TIMEOUT = 60  # a bound on waits so a broken engine fails instead of hanging


class Process:
    """Process is a started engine (or bench script) and the front-end's connection to it."""

    def __init__(self, test, script, model_dir, *extra, sock_path=None):
        if sock_path is None:
            folder = tempfile.mkdtemp(prefix="sy-")
            test.addCleanup(os.rmdir, folder)
            sock_path = os.path.join(folder, "switchyard.sock.19000")
        self.sock_path = sock_path
        test.addCleanup(_remove, self.sock_path)
        self.argv = [sys.executable, script, "--sock-type", "unix", "--sock-name", self.sock_path,
                     "--model-dir", model_dir, "--device-id", "-1"] + list(extra)
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", PYTHONPATH=RUNTIME_DIR)
        # The process outlives this method: _stop, a cleanup, ends it and closes its pipes.
        # pylint: disable-next=consider-using-with
        self.proc = subprocess.Popen(self.argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     cwd=model_dir, env=env)
        test.addCleanup(self._stop)
        self.conn = None
        self.reader = None

    def ready_line(self):
        """Returns the engine's first line on stdout, or None when none comes in time."""
        ready, _, _ = select.select([self.proc.stdout], [], [], TIMEOUT)
        return self.proc.stdout.readline().decode().strip() if ready else None

    def connect(self):
        """Connects to the engine's socket."""
        self.conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.conn.connect(self.sock_path)
        self.reader = self.conn.makefile("rb")

    def call(self, props, items=()):
        """Sends a request and reads its response."""
        self.conn.sendall(protocol.encode_request(props, items))
        return protocol.read_response(self.reader.read)

    def hang_up(self):
        """Closes the front-end's end of the connection."""
        self.reader.close()
        self.conn.close()

    def wait(self):
        """Waits for the engine to exit and returns its status."""
        try:
            return self.proc.wait(TIMEOUT)
        finally:
            self.proc.stdout.close()
            self.proc.stderr.close()

    def _stop(self):
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for f in (self.proc.stdout, self.proc.stderr, self.reader, self.conn):
            if f is not None:
                f.close()


def _remove(path):
    if os.path.exists(path):
        os.unlink(path)


class EngineTest(unittest.TestCase):
    def test_serve_then_exit_on_hang_up(self):
        p = Process(self, ENGINE, ECHO_MODEL, "--tensor-parallel-degree", "1", "--log-level", "debug")
        self.assertEqual(p.ready_line(), cli.READY_LINE)
        p.connect()
        self.assertEqual(p.call({"model_id": "m"}).code, 200)
        self.assertEqual(p.call({"content-type": "text/plain"}, [("data", b"hi")]).values, [b"hi"])
        p.hang_up()
        self.assertEqual(p.wait(), 0)

    def test_stale_socket_removed(self):
        folder = tempfile.mkdtemp(prefix="sy-")
        self.addCleanup(os.rmdir, folder)
        stale = os.path.join(folder, "switchyard.sock.19001")
        left = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        left.bind(stale)  # a socket file whose server is gone
        left.close()
        p = Process(self, ENGINE, ECHO_MODEL, sock_path=stale)
        self.assertEqual(p.ready_line(), cli.READY_LINE)
        p.connect()
        self.assertEqual(p.call({}).code, 200)

    def test_exit_with_a_request_still_running(self):
        p = Process(self, ENGINE, ECHO_MODEL)
        self.assertEqual(p.ready_line(), cli.READY_LINE)
        p.connect()
        self.assertEqual(p.call({}).code, 200)
        # "gated" waits for items nobody will send: the pool thread never finishes
        p.conn.sendall(protocol.encode_request({"request_tracking_id": "1", "handler": "gated"}, [("data", b"")]))
        self.assertEqual(p.call({"handler": "handle"}, [("data", b"x")]).values, [b"x"])
        p.hang_up()
        self.assertEqual(p.wait(), 0)

    def test_failed_load_exits_non_zero(self):
        p = Process(self, ENGINE, RUNTIME_DIR, "--entry-point", "no_such_module_here")
        self.assertEqual(p.ready_line(), cli.READY_LINE)
        p.connect()
        resp = p.call({})
        self.assertEqual((resp.code, resp.message), (500, "ModuleNotFoundError: No module named 'no_such_module_here'"))
        self.assertEqual(p.wait(), 1)

    def test_sigterm(self):
        for connected in (False, True):
            with self.subTest(connected=connected):
                p = Process(self, ENGINE, ECHO_MODEL)
                self.assertEqual(p.ready_line(), cli.READY_LINE)
                if connected:
                    p.connect()
                    self.assertEqual(p.call({}).code, 200)
                p.proc.send_signal(signal.SIGTERM)
                self.assertEqual(p.wait(), -signal.SIGTERM)

    def test_tcp_rejected(self):
        out = subprocess.run([sys.executable, ENGINE, "--sock-type", "tcp", "--port", "9000", "--model-dir",
                              ECHO_MODEL], check=False, capture_output=True, timeout=TIMEOUT)
        self.assertEqual(out.returncode, 2)
        self.assertIn(b"--sock-type tcp is not supported", out.stderr)

    def test_noop_model_with_batch(self):
        p = Process(self, ENGINE, NOOP_MODEL)
        self.assertEqual(p.ready_line(), cli.READY_LINE)
        p.connect()
        self.assertEqual(p.call({}).code, 200)
        self.assertEqual(p.call({}, [("data", b"x")]).values, [b"ok"])
        resp = p.call({"batch_size": "3"}, [("batch_%03d.data" % i, b"x") for i in range(3)])
        self.assertEqual((resp.keys, resp.values), (["batch_0.data", "batch_1.data", "batch_2.data"], [b"ok"] * 3))
        p.hang_up()
        self.assertEqual(p.wait(), 0)

    def test_parent_death(self):
        """The engine exits when its parent does (it checks every second)."""
        starter = ("import subprocess, sys; p = subprocess.Popen(sys.argv[1:], stdout=subprocess.PIPE); "
                   "print(p.pid, flush=True); print(p.stdout.readline().decode().strip(), flush=True)")
        folder = tempfile.mkdtemp(prefix="sy-")
        self.addCleanup(os.rmdir, folder)
        sock = os.path.join(folder, "s")
        self.addCleanup(_remove, sock)
        out = subprocess.run([sys.executable, "-c", starter, sys.executable, ENGINE, "--sock-name", sock,
                              "--model-dir", ECHO_MODEL], check=False, capture_output=True, timeout=TIMEOUT)
        pid_line, ready = out.stdout.decode().split("\n")[:2]
        self.assertEqual(ready, cli.READY_LINE)
        self.assertTrue(_wait_gone(int(pid_line)), "the engine outlived its parent")


def _wait_gone(pid):
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        try:
            with open("/proc/%d/stat" % pid, encoding="utf-8") as f:
                if f.read().split(")")[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    os.kill(pid, signal.SIGKILL)
    return False


class BareEchoTest(unittest.TestCase):
    def test_echo(self):
        p = Process(self, BARE_ECHO, NOOP_MODEL, "--entry-point", "ignored")
        self.assertEqual(p.ready_line(), "Python engine started.")
        p.connect()
        for body in (b"", b"abc", os.urandom(300000)):
            frame = struct.pack(">i", len(body)) + body
            p.conn.sendall(frame)
            self.assertEqual(p.reader.read(len(frame)), frame)
        p.hang_up()
        self.assertEqual(p.wait(), 0)


if __name__ == "__main__":
    unittest.main()
