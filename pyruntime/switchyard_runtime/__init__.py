"""switchyard's Python worker runtime.

It serves one model over one Unix socket with the frame layout of DJL
Serving's Python engine, and runs handlers written for DJL unchanged.

It has three parts, each a subpackage, whose imports point one way only
(generative -> djl -> wire; tests/test_layers.py checks it):

* wire: the protocol's frames, the frame reader and the writer.
* djl: the handler-facing API (Input, Output, PairList, NDList, errors),
  which the djl_python shim re-exports.
* generative: schemas, answers, backends and the built-in handler of
  generative models.

The modules at this level put the parts together: cli (the process),
server (the connection loop), tracked (rolling-batch requests), results and
frames (a handler's answer as a reply and as frames), asyncrun (the asyncio
loop) and loader (finding the handler; the only one that imports generative).
"""

import importlib.util
import os
import sys

__version__ = "0.1.0"

SHIM_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "shim")


def ensure_djl_python():
    """Puts the djl_python shim on sys.path unless a real djl_python is importable.

    Returns True when the shim is the one in use.
    """
    if SHIM_DIR in sys.path:
        return True
    if importlib.util.find_spec("djl_python") is not None:
        return False
    sys.path.append(SHIM_DIR)
    importlib.invalidate_caches()
    return True
