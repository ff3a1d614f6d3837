"""A handler whose initialization takes far longer than any load timeout."""

import time

from djl_python import Input


def handle(inputs: Input):
    """Sleeps through the initialization call, so that the load never finishes."""
    if inputs.is_empty():
        print("slowinit: loading", flush=True)
        time.sleep(3600)
