"""djl_python as switchyard provides it: DJL Serving's handler API.

This package is put on sys.path only when a real djl_python is not
importable. Its classes are switchyard_runtime's, so handlers, the runtime
and this shim all share one Input and one Output. With only the shim folder
on PYTHONPATH (to run djl_python.test_model by hand), the runtime folder
above it is added to sys.path.
"""

import os
import sys

try:
    import switchyard_runtime  # noqa: F401
except ImportError:  # only the shim is on the path: the runtime is its parent folder
    sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from switchyard_runtime.djl.inputs import Input  # noqa: E402
from switchyard_runtime.djl.outputs import Output  # noqa: E402
from switchyard_runtime.djl.pairlist import PairList  # noqa: E402

__all__ = ["Input", "Output", "PairList"]
__version__ = "0.0.0+switchyard"
