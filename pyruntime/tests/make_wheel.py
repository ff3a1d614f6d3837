"""Makes a tiny pure-Python wheel with the standard library only.

A wheel is a zip archive holding the package files and a
<dist>-<version>.dist-info folder with METADATA, WHEEL and RECORD (each
file's sha256 and size). Tests use it to give a model folder a local wheel
for requirements.txt, without setuptools or the network:

    python3 make_wheel.py OUT_DIR [--name sytoy] [--version 0.1]

writes OUT_DIR/sytoy-0.1-py3-none-any.whl, whose package sytoy has
VERSION = "0.1" and greet(name) returning "sytoy <version> greets <name>".
"""

import argparse
import base64
import hashlib
import os
import re
import sys
import zipfile

TAG = "py3-none-any"
# A fixed time for every archive member, so the same input gives the same bytes.
FIXED_TIME = (2020, 1, 1, 0, 0, 0)

PACKAGE_SOURCE = '''"""{name}: a tiny package made by switchyard's make_wheel.py for tests."""

VERSION = "{version}"


def greet(name):
    """Returns a greeting that names this package and its version."""
    return "{name} %s greets %s" % (VERSION, name)
'''


def _record_hash(data):
    digest = hashlib.sha256(data).digest()
    return "sha256=" + base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")


def files(name, version):
    """Returns the wheel's members as [(archive path, bytes)], RECORD last."""
    info = "%s-%s.dist-info" % (name, version)
    members = [
        ("%s/__init__.py" % name, PACKAGE_SOURCE.format(name=name, version=version).encode()),
        (info + "/METADATA", ("Metadata-Version: 2.1\nName: %s\nVersion: %s\n"
                              "Summary: a tiny test package\n" % (name, version)).encode()),
        (info + "/WHEEL", ("Wheel-Version: 1.0\nGenerator: switchyard-make-wheel\n"
                           "Root-Is-Purelib: true\nTag: %s\n" % TAG).encode()),
    ]
    record = "".join("%s,%s,%d\n" % (path, _record_hash(data), len(data)) for path, data in members)
    record += "%s/RECORD,,\n" % info
    return members + [(info + "/RECORD", record.encode())]


def check_name(name, version):
    """Raises ValueError unless name and version are plain enough for a file name and an import."""
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name):
        raise ValueError("make_wheel: name %r must be a Python identifier" % name)
    if not re.fullmatch(r"[0-9]+(\.[0-9]+)*", version):
        raise ValueError("make_wheel: version %r must be dotted numbers" % version)


def make_wheel(out_dir, name="sytoy", version="0.1"):
    """Writes <out_dir>/<name>-<version>-py3-none-any.whl and returns its path."""
    check_name(name, version)
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, "%s-%s-%s.whl" % (name, version, TAG))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for member, data in files(name, version):
            entry = zipfile.ZipInfo(member, FIXED_TIME)
            entry.external_attr = 0o644 << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(entry, data)
    return path


def main(argv=None):
    """Parses the command line, writes the wheel and prints its path."""
    parser = argparse.ArgumentParser(description="make a tiny pure-Python wheel (stdlib only)")
    parser.add_argument("out_dir")
    parser.add_argument("--name", default="sytoy")
    parser.add_argument("--version", default="0.1")
    args = parser.parse_args(argv)
    try:
        print(make_wheel(args.out_dir, args.name, args.version))
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
