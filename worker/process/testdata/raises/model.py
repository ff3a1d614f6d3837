"""A handler whose import fails deep in a call: the worker must fail to
load it and its traceback must reach the log as one record."""


def _connect(url):
    raise ConnectionError("cannot reach %s" % url)


def _setup():
    return _connect("http://weights.invalid/model.bin")


CLIENT = _setup()


def handle(inputs):
    """Never reached: the import fails."""
    return inputs
