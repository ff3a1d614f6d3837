"""The djl_python shim: import paths, and that a real djl_python wins."""

import os
import shutil
import subprocess
import sys
import tempfile
import unittest

from tests.helpers import RUNTIME_DIR

TIMEOUT = 60


def run_python(code, extra_path=()):
    """Runs code in a fresh interpreter with the runtime (and extra_path) on PYTHONPATH."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([RUNTIME_DIR] + list(extra_path)),
               PYTHONDONTWRITEBYTECODE="1")
    return subprocess.run([sys.executable, "-c", code], check=False, capture_output=True, timeout=TIMEOUT, env=env)


class ShimTest(unittest.TestCase):
    def test_import_paths(self):
        code = """
import switchyard_runtime
assert switchyard_runtime.ensure_djl_python()
from djl_python import Input, Output, PairList
from djl_python.inputs import Input as I2
from djl_python.outputs import Output as O2
from djl_python.pair_list import PairList as P2
import djl_python.encode_decode, djl_python.np_util
assert (Input, Output, PairList) == (I2, O2, P2)
print("ok")
"""
        out = run_python(code)
        self.assertEqual(out.stdout.decode().strip(), "ok", out.stderr.decode())

    def test_real_djl_python_wins(self):
        folder = tempfile.mkdtemp(prefix="djl-")
        self.addCleanup(shutil.rmtree, folder, True)
        os.makedirs(os.path.join(folder, "djl_python"))
        with open(os.path.join(folder, "djl_python", "__init__.py"), "w", encoding="utf-8") as f:
            f.write("REAL = True\n")
        code = """
import switchyard_runtime
assert not switchyard_runtime.ensure_djl_python()
import djl_python
print(djl_python.REAL)
"""
        out = run_python(code, [folder])
        self.assertEqual(out.stdout.decode().strip(), "True", out.stderr.decode())


if __name__ == "__main__":
    unittest.main()
