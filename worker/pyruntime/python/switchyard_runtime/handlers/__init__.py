"""Built-in model handlers, chosen by name with option.entryPoint.

BUILTIN maps an entry point name to the dotted module that implements it. The
table is empty for now; a built-in generative handler will be added here.
"""

BUILTIN = {}
