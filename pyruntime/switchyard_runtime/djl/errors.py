"""How a handler's failure is reported: a load error's text, out of memory.

A handler (or the runtime's loader) raises LoadError to fail the model's
load with exactly its text as the message; any other exception is shown as
the last line Python prints for it. An exception that means out of memory
answers 507 instead of 424 (a request) or 500 (the load).
"""


class LoadError(Exception):
    """LoadError reports a handler that cannot be loaded; its text is the whole message."""


def is_out_of_memory(exc):
    """Reports whether exc means out of memory (MemoryError, torch's OOM, the text)."""
    if isinstance(exc, MemoryError) or type(exc).__name__ == "OutOfMemoryError":
        return True
    return "out of memory" in str(exc).lower()
