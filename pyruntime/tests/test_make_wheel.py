"""make_wheel.py: the archive's layout, and pip installing it offline."""

import base64
import contextlib
import hashlib
import io
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
import zipfile

from tests import make_wheel

PIP_PYTHON = os.environ.get("SWITCHYARD_TEST_PIP_PYTHON", "/usr/bin/python3")
HAVE_PIP = os.path.exists(PIP_PYTHON) and subprocess.run(
    [PIP_PYTHON, "-m", "pip", "--version"], check=False, capture_output=True).returncode == 0
PIP_TIMEOUT = 300  # a bound so a stuck pip fails the test instead of hanging it


def temp_dir(test):
    """Returns a temporary folder, removed after the test."""
    folder = tempfile.mkdtemp(prefix="switchyard-wheel-")
    test.addCleanup(shutil.rmtree, folder, True)
    return folder


class LayoutTest(unittest.TestCase):
    def test_members_and_record(self):
        path = make_wheel.make_wheel(temp_dir(self))
        self.assertEqual(os.path.basename(path), "sytoy-0.1-py3-none-any.whl")
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
            self.assertEqual(names, ["sytoy/__init__.py", "sytoy-0.1.dist-info/METADATA",
                                     "sytoy-0.1.dist-info/WHEEL", "sytoy-0.1.dist-info/RECORD"])
            record = archive.read("sytoy-0.1.dist-info/RECORD").decode().splitlines()
            for line in record[:-1]:
                member, digest, size = line.split(",")
                data = archive.read(member)
                want = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
                self.assertEqual((digest, int(size)), ("sha256=" + want, len(data)))
            self.assertEqual(record[-1], "sytoy-0.1.dist-info/RECORD,,")
            self.assertIn(b"Tag: py3-none-any", archive.read("sytoy-0.1.dist-info/WHEEL"))

    def test_same_input_same_bytes(self):
        first = make_wheel.make_wheel(temp_dir(self), "pkg_a", "2.0.1")
        second = make_wheel.make_wheel(temp_dir(self), "pkg_a", "2.0.1")
        with open(first, "rb") as a, open(second, "rb") as b:
            self.assertEqual(a.read(), b.read())

    def test_bad_names(self):
        for name, version in (("my-pkg", "1"), ("1pkg", "1"), ("pkg", "1.0a"), ("pkg", "")):
            with self.subTest(name=name, version=version), self.assertRaises(ValueError):
                make_wheel.make_wheel(temp_dir(self), name, version)
        errors = io.StringIO()
        with contextlib.redirect_stderr(errors):
            self.assertEqual(make_wheel.main([temp_dir(self), "--name", "bad-name"]), 2)
        self.assertIn("must be a Python identifier", errors.getvalue())


@unittest.skipUnless(HAVE_PIP, "needs pip in %s" % PIP_PYTHON)
class PipTest(unittest.TestCase):
    def test_pip_installs_it_offline(self):
        root = temp_dir(self)
        wheels, target = os.path.join(root, "wheels"), os.path.join(root, "target")
        script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "make_wheel.py")
        made = subprocess.run([sys.executable, script, wheels], check=False, capture_output=True, text=True,
                              timeout=PIP_TIMEOUT)
        self.assertEqual(made.returncode, 0, made.stderr)
        self.assertEqual(made.stdout.strip(), os.path.join(wheels, "sytoy-0.1-py3-none-any.whl"))
        pip = subprocess.run([PIP_PYTHON, "-m", "pip", "install", "--disable-pip-version-check", "--no-input",
                              "--no-index", "--find-links", wheels, "--target", target, "sytoy"],
                             check=False, capture_output=True, text=True, timeout=PIP_TIMEOUT)
        self.assertEqual(pip.returncode, 0, pip.stdout + pip.stderr)
        env = dict(os.environ, PYTHONPATH=target)
        used = subprocess.run([PIP_PYTHON, "-c", "import sytoy; print(sytoy.greet('switchyard'))"],
                              check=False, capture_output=True, text=True, env=env, timeout=PIP_TIMEOUT)
        self.assertEqual(used.stdout.strip(), "sytoy 0.1 greets switchyard", used.stderr)


if __name__ == "__main__":
    unittest.main()
