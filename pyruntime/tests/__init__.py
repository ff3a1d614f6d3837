"""Unit tests of the worker runtime (stdlib unittest only).

Run from the runtime folder: python3 -m unittest discover -s tests -t .
"""

import logging

import switchyard_runtime

switchyard_runtime.ensure_djl_python()
logging.getLogger("switchyard").setLevel(logging.CRITICAL)
