"""djl_python.np_util: numpy arrays to and from DJL's NDList encoding."""

from switchyard_runtime.djl.ndlist import decode_ndlist as from_nd_list
from switchyard_runtime.djl.ndlist import encode_ndlist as to_nd_list

__all__ = ["from_nd_list", "to_nd_list"]
