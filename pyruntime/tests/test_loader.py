"""Finding and importing the handler."""

import os
import sys
import unittest

from switchyard_runtime import loader
from tests.helpers import keep_import_state, make_model

NO_MODEL = ("no model.py in {dir} and no option.entryPoint, and no Hugging Face model either "
            "(config.json in the folder, or option.model_id naming a folder)")

HANDLER = """
def handle(inputs):
    return "from " + __name__
def other(inputs):
    return "other"
"""


class EntryPointTest(unittest.TestCase):
    def test_precedence(self):
        cases = [
            ("command line", "cli.py", {"entryPoint": "prop.py"}, ("cli.py", True)),
            ("entryPoint", None, {"entryPoint": "prop.py", "entry_point": "x.py"}, ("prop.py", True)),
            ("entry_point", None, {"entry_point": "x.py"}, ("x.py", True)),
            ("default", None, {}, ("model.py", False)),
        ]
        for name, cli, props, want in cases:
            with self.subTest(name):
                self.assertEqual(loader.entry_point(cli, props), want)


class LoadTest(unittest.TestCase):
    def setUp(self):
        keep_import_state(self)

    def test_model_py_by_path(self):
        folder = make_model(self, {"model.py": HANDLER})
        handler = loader.load(folder, None, {})
        self.assertEqual(handler.function()(None), "from model")
        self.assertEqual(handler.function("other")(None), "other")
        self.assertIn(folder, sys.path)

    def test_named_file(self):
        folder = make_model(self, {"serve.py": HANDLER})
        handler = loader.load(folder, None, {"entryPoint": "serve.py", "handler": "other"})
        self.assertEqual(handler.function()(None), "other")

    def test_dotted_module(self):
        folder = make_model(self, {"pkg/__init__.py": "", "pkg/impl.py": HANDLER})
        handler = loader.load(folder, "pkg.impl", {})
        self.assertEqual(handler.function()(None), "from pkg.impl")

    def test_builtin_name(self):
        folder = make_model(self, {"helper_mod.py": HANDLER})
        loader.BUILTIN["test-builtin"] = "helper_mod"
        self.addCleanup(loader.BUILTIN.pop, "test-builtin")
        handler = loader.load(folder, None, {"entryPoint": "test-builtin"})
        self.assertEqual(handler.function()(None), "from helper_mod")

    def test_failures(self):
        cases = [
            ("missing model.py", {}, {}, loader.LoadError, NO_MODEL),
            ("missing named file", {}, {"entryPoint": "x.py"}, loader.LoadError,
             "entry point file not found: {dir}/x.py"),
            ("no handler function", {"model.py": "x = 1\n"}, {}, loader.LoadError,
             "handler function 'handle' not found in {dir}/model.py"),
            ("syntax error", {"model.py": "def broken(:\n"}, {}, SyntaxError, None),
            ("missing dependency", {"model.py": "import tensorrt_llm_not_here\n"}, {}, ModuleNotFoundError, None),
        ]
        for name, files, props, error, message in cases:
            with self.subTest(name):
                sys.modules.pop("model", None)
                folder = make_model(self, files)
                with self.assertRaises(error) as caught:
                    loader.load(folder, None, props)
                if message:
                    self.assertEqual(str(caught.exception), message.format(dir=folder))
                if error is not loader.LoadError:
                    self.assertFalse("model" in sys.modules, "a module that failed to import stays registered")

    def test_async_detection(self):
        folder = make_model(self, {"model.py": """
            async def handle(inputs):
                return None
            async def gen(inputs):
                yield 1
            def plain(inputs):
                return None
            """})
        handler = loader.load(folder, None, {})
        self.assertEqual([handler.is_async(n) for n in ("handle", "gen", "plain")], [True, True, False])

    def test_absolute_path(self):
        folder = make_model(self, {"model.py": HANDLER})
        handler = loader.load("/nonexistent-switchyard", os.path.join(folder, "model.py"), {})
        self.assertEqual(handler.function("other")(None), "other")


if __name__ == "__main__":
    unittest.main()
