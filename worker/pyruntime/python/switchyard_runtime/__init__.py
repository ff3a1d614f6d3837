"""switchyard's Python worker runtime.

It serves one model over one Unix socket with the frame layout of DJL
Serving's Python engine, and runs handlers written for DJL unchanged.
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
