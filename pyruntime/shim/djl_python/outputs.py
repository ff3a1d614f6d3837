"""djl_python.outputs: the reply object."""

from switchyard_runtime.djl.outputs import Output

__all__ = ["Output"]
