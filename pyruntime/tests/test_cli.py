"""Command line, logging and the parent watch."""

# These tests look inside the objects they check.
# pylint: disable=protected-access

import io
import logging
import threading
import unittest

from switchyard_runtime import cli

TIMEOUT = 60


class ArgsTest(unittest.TestCase):
    def test_parse(self):
        args, ignored = cli.parse_args(["--sock-type", "unix", "--sock-name", "/tmp/s", "--model-dir", "/m",
                                        "--device-id", "2", "--entry-point", "x.py", "--log-level", "debug",
                                        "--tensor-parallel-degree", "4", "--async-mode", "--future-flag"])
        self.assertEqual((args.sock_name, args.model_dir, args.device_id, args.entry_point, args.log_level),
                         ("/tmp/s", "/m", "2", "x.py", "debug"))
        self.assertEqual((args.tensor_parallel_degree, args.async_mode), (4, True))
        self.assertEqual(ignored, ["--future-flag"])

    def test_djl_command_line(self):
        """The argument list DJL 0.36 builds (Connection.getPythonStartCmd, not MPI), empty values included."""
        argv = ["--sock-type", "unix", "--sock-name", "/tmp/djl_sock.19000", "--model-dir", "/opt/ml/model",
                "--entry-point", "", "--device-id", "-1", "--cluster-size", "1",
                "--recommended-entry-point", "djl_python.huggingface", "--log-level", "info", "--no-async-mode"]
        args, ignored = cli.parse_args(argv)
        self.assertEqual(ignored, [])
        self.assertEqual((args.entry_point, args.recommended_entry_point, args.cluster_size, args.async_mode),
                         (None, "djl_python.huggingface", 1, False))
        argv[argv.index("--entry-point") + 1] = "model.py"
        argv[-1] = "--async-mode"
        args, _ = cli.parse_args(argv)
        self.assertEqual((args.entry_point, args.async_mode), ("model.py", True))

    def test_defaults(self):
        args, _ = cli.parse_args(["--model-dir", "/m"])
        self.assertEqual((args.sock_type, args.device_id, args.entry_point, args.log_level),
                         ("unix", "-1", None, "info"))

    def test_log_levels(self):
        cases = [("trace", logging.DEBUG), ("DEBUG", logging.DEBUG), ("info", logging.INFO),
                 ("warn", logging.WARNING), ("error", logging.ERROR), ("fatal", logging.CRITICAL),
                 ("bogus", logging.INFO), (None, logging.INFO)]
        for name, level in cases:
            with self.subTest(name):
                self.assertEqual(cli.log_level(name), level)

    def test_setup_logging(self):
        root = logging.getLogger()
        saved = root.handlers[:], root.level
        self.addCleanup(lambda: (setattr(root, "handlers", saved[0]), root.setLevel(saved[1])))
        out = io.StringIO()
        cli.setup_logging("warn", out)
        logging.getLogger("sytest").warning("hello %s", "there")
        logging.getLogger("sytest").info("hidden")
        self.assertEqual(out.getvalue(), "WARNING sytest: hello there\n")


class ParentWatchTest(unittest.TestCase):
    def test_orphaned(self):
        parent = [100]
        watch = cli.ParentWatch(getppid=lambda: parent[0], on_orphan=lambda: None)
        self.assertFalse(watch.orphaned())
        parent[0] = 1
        self.assertTrue(watch.orphaned())

    def test_thread_calls_on_orphan(self):
        parent = [100]
        fired = threading.Event()
        watch = cli.ParentWatch(interval=0.001, getppid=lambda: parent[0], on_orphan=fired.set).start()
        self.addCleanup(watch.stop)
        parent[0] = 1
        self.assertTrue(fired.wait(TIMEOUT))

    def test_stop(self):
        watch = cli.ParentWatch(interval=3600, on_orphan=self.fail).start()
        watch.stop()
        self.assertFalse(watch._thread.is_alive())


if __name__ == "__main__":
    unittest.main()
