"""A handler that does not compile: the worker must fail to load it."""

from djl_python import Input


def handle(inputs: Input)
    return None
