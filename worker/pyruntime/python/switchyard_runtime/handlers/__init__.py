"""Built-in model handlers, chosen by name with option.entryPoint.

BUILTIN maps an entry point name to the dotted module that implements it.
"generative" is the handler of generative models (chat, generation and
completion requests) over a vLLM engine or a transformers pipeline; a model
folder without a model.py gets it too (see switchyard_runtime.backends).
"""

BUILTIN = {"generative": "switchyard_runtime.handlers.generative"}
