"""Finding and importing the model's handler module (the entry point).

The entry point is --entry-point, else the initialization property
entryPoint (or entry_point), else model.py in the model folder; a folder
with none of these gets the built-in Hugging Face handler (hf/handler.py),
whose backend generative/backends.py chooses from option.rolling_batch. A name in BUILTIN
picks a built-in handler; a name ending in .py is a file in the model
folder, imported by path; anything else is a dotted module name.

The loader is the one part of the runtime that imports the generative and
hf parts: it asks generative.backends which entry point a folder gets, and
names hf.handler as the built-in one. Neither part imports the loader
(LoadError lives in djl.errors).
"""

import importlib
import importlib.util
import inspect
import os
import sys

from .djl.errors import LoadError
from .generative import backends

DEFAULT_ENTRY_POINT = "model.py"
DEFAULT_FUNCTION = "handle"

# BUILTIN maps the entry point name of a built-in handler to its module: every
# name of backends.BUILTIN_NAMES means the Hugging Face handler.
BUILTIN = {name: "switchyard_runtime.hf.handler" for name in backends.BUILTIN_NAMES}


def entry_point(cli_value, props):
    """Returns the entry point to load and whether one was named at all."""
    for value in (cli_value, props.get("entryPoint"), props.get("entry_point")):
        if value:
            return value, True
    return DEFAULT_ENTRY_POINT, False


def load_module(model_dir, name, named=True):
    """Imports the entry point name for the model in model_dir and returns the module."""
    _put_on_path(model_dir)
    if name in BUILTIN:
        return importlib.import_module(BUILTIN[name])
    if name.endswith(".py"):
        path = name if os.path.isabs(name) else os.path.join(model_dir, name)
        if not os.path.isfile(path):
            raise LoadError(_missing_file(model_dir, path, named))
        return import_path(path)
    return importlib.import_module(name)


def _missing_file(model_dir, path, named):
    if named:
        return "entry point file not found: %s" % path
    return "no model.py in %s and no option.entryPoint" % model_dir


def _put_on_path(model_dir):
    if model_dir and model_dir not in sys.path:
        sys.path.insert(0, model_dir)


def import_path(path):
    """Imports a .py file as a module named after the file, registered in sys.modules."""
    name = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise LoadError("cannot import %s" % path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


class Handler:
    """Handler is a loaded handler module and the functions looked up in it."""

    def __init__(self, module, default_function=DEFAULT_FUNCTION):
        self.module = module
        self.default_function = default_function or DEFAULT_FUNCTION
        self._functions = {}

    def function(self, name=None):
        """Returns the module's function called name (default: the default function)."""
        name = name or self.default_function
        fn = self._functions.get(name)
        if fn is None:
            fn = getattr(self.module, name, None)
            if not callable(fn):
                raise LoadError("handler function %r not found in %s" % (name, self._where()))
            self._functions[name] = fn
        return fn

    def is_async(self, name=None):
        """Reports whether the function is a coroutine or async generator function."""
        fn = self.function(name)
        return inspect.iscoroutinefunction(fn) or inspect.isasyncgenfunction(fn)

    def _where(self):
        return getattr(self.module, "__file__", None) or self.module.__name__


def load(model_dir, cli_entry_point, props):
    """Loads the handler named by the command line and the initialization properties.

    It records the rolling_batch mode in use in props (see
    generative.backends.resolve).
    """
    name, named = entry_point(cli_entry_point, props)
    name = backends.resolve(model_dir, name, named, props)
    module = load_module(model_dir, name, named)
    handler = Handler(module, props.get("handler"))
    handler.function()
    return handler
