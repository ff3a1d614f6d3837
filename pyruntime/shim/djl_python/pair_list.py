"""djl_python.pair_list: ordered key/value pairs."""

from switchyard_runtime.djl.pairlist import PairList

__all__ = ["PairList"]
