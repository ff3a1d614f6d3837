"""djl_python as switchyard provides it: DJL Serving's handler API.

This package is put on sys.path only when a real djl_python is not
importable. Its classes are switchyard_runtime's, so handlers, the runtime
and this shim all share one Input and one Output.
"""

from switchyard_runtime.inputs import Input
from switchyard_runtime.outputs import Output
from switchyard_runtime.pairlist import PairList

__all__ = ["Input", "Output", "PairList"]
__version__ = "0.0.0+switchyard"
