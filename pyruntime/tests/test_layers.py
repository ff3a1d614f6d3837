"""The runtime's import directions, read from the source with ast.

The runtime has four parts, wire, djl, generative and hf, and imports point
one way: hf -> generative -> djl -> wire. Of the modules outside the parts,
only the loader imports generative and hf, and no module imports itself back
through a cycle, not even from inside a function.
"""

import ast
import os
import unittest

from tests.helpers import RUNTIME_DIR

PACKAGE = "switchyard_runtime"

# ALLOWED maps each part to the parts its modules may import.
ALLOWED = {
    "wire": {"wire"},
    "djl": {"djl", "wire"},
    "generative": {"generative", "djl", "wire"},
    "hf": {"hf", "generative", "djl", "wire"},
}

# GENERATIVE_USERS are the modules outside the generative and hf parts that may import them.
GENERATIVE_USERS = {PACKAGE + ".loader"}


def python_files(folder):
    """Yields (module name, path) of every .py file under folder, relative to RUNTIME_DIR."""
    for root, dirs, files in os.walk(os.path.join(RUNTIME_DIR, folder)):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                path = os.path.join(root, name)
                rel = os.path.relpath(path, RUNTIME_DIR)[:-len(".py")].split(os.sep)
                if rel[-1] == "__init__":
                    rel.pop()
                yield ".".join(rel), path


def imported(module, path, known):
    """Returns the modules the file imports (anywhere in it), relative imports resolved.

    ``from X import y`` counts as importing X.y when that is a module in
    known, else as importing X.
    """
    with open(path, encoding="utf-8") as f:
        tree = ast.parse(f.read(), path)
    is_package = os.path.basename(path) == "__init__.py"
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = _absolute(module, is_package, node.module, node.level)
            for alias in node.names:
                sub = base + "." + alias.name
                out.add(sub if sub in known else base)
    return out


def _absolute(module, is_package, name, level):
    if level == 0:
        return name
    parts = module.split(".")
    if not is_package:
        parts.pop()
    parts = parts[:len(parts) - (level - 1)]
    return ".".join(parts + ([name] if name else []))


def part_of(module):
    """Returns the part (wire, djl, generative) module belongs to, or None for the modules around them."""
    parts = module.split(".")
    if parts[0] != PACKAGE or len(parts) < 2 or parts[1] not in ALLOWED:
        return None
    return parts[1]


def graph(*folders):
    """Returns {module: the runtime modules it imports} for the files under folders."""
    files = dict(item for folder in folders for item in python_files(folder))
    known = set(files)
    edges = {}
    for module, path in files.items():
        edges[module] = {m for m in imported(module, path, known) if m == PACKAGE or m.startswith(PACKAGE + ".")}
    return edges


def cycle(edges):
    """Returns one import cycle as a list of modules, or None when there is none."""
    state = {}

    def visit(module, trail):
        state[module] = "open"
        for target in sorted(edges.get(module, ())):
            if state.get(target) == "open":
                return trail[trail.index(target):] + [target]
            if target not in state:
                found = visit(target, trail + [target])
                if found:
                    return found
        state[module] = "done"
        return None

    for module in sorted(edges):
        if module not in state:
            found = visit(module, [module])
            if found:
                return found
    return None


class LayersTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.edges = graph(PACKAGE, "shim")

    def test_every_part_is_there(self):
        parts = {part_of(m) for m in self.edges} - {None}
        self.assertEqual(parts, set(ALLOWED))

    def test_parts_import_downward(self):
        for module, targets in sorted(self.edges.items()):
            part = part_of(module)
            if part is None:
                continue
            for target in sorted(targets):
                with self.subTest(module=module, imports=target):
                    self.assertIn(part_of(target), ALLOWED[part],
                                  "%s (part %s) may import only the parts %s" % (module, part, sorted(ALLOWED[part])))

    def test_only_the_loader_imports_generative_and_hf(self):
        for module, targets in sorted(self.edges.items()):
            if part_of(module) in ("generative", "hf") or module in GENERATIVE_USERS:
                continue
            for target in sorted(targets):
                with self.subTest(module=module, imports=target):
                    self.assertNotIn(part_of(target), ("generative", "hf"),
                                     "only %s may import the generative and hf parts" % sorted(GENERATIVE_USERS))

    def test_no_cycles(self):
        self.assertIsNone(cycle(self.edges))


class CheckerTest(unittest.TestCase):
    """The checks above catch what they are meant to."""

    def test_relative_imports(self):
        cases = [
            ("switchyard_runtime.server", False, "djl.inputs", 1, "switchyard_runtime.djl.inputs"),
            ("switchyard_runtime.generative.handler", False, "djl.errors", 2, "switchyard_runtime.djl.errors"),
            ("switchyard_runtime.generative.handler", False, None, 1, "switchyard_runtime.generative"),
            ("switchyard_runtime.wire", True, "protocol", 1, "switchyard_runtime.wire.protocol"),
            ("switchyard_runtime.loader", False, "os", 0, "os"),
        ]
        for module, is_package, name, level, want in cases:
            with self.subTest(module=module, name=name, level=level):
                self.assertEqual(_absolute(module, is_package, name, level), want)

    def test_cycle(self):
        self.assertEqual(cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}), ["a", "b", "c", "a"])
        self.assertIsNone(cycle({"a": {"b", "c"}, "b": {"c"}, "c": set()}))

    def test_part_of(self):
        cases = [("switchyard_runtime.wire.protocol", "wire"), ("switchyard_runtime.djl", "djl"),
                 ("switchyard_runtime.loader", None), ("switchyard_runtime", None), ("djl_python.inputs", None)]
        for module, want in cases:
            with self.subTest(module):
                self.assertEqual(part_of(module), want)


if __name__ == "__main__":
    unittest.main()
