"""djl_python.outputs: the reply object."""

from switchyard_runtime.outputs import Output

__all__ = ["Output"]
