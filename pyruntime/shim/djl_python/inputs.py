"""djl_python.inputs: the request object."""

from switchyard_runtime.djl.inputs import Input

__all__ = ["Input"]
