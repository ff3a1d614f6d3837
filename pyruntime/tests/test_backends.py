"""Backend choice per option.rolling_batch, and what the load reports.

transformers is the real one (the project's environment has it); vLLM is
not installable here, so its cases use the stand-in in tests/fakes/vllm
(see its README), put on sys.path by the test. "transformers missing" is
played by blocking its import.
"""

import contextlib
import importlib
import json
import os
import sys
import traceback
import unittest

from switchyard_runtime import loader
from switchyard_runtime.generative import backends
from switchyard_runtime.results import last_traceback_line
from tests.helpers import RUNTIME_DIR, keep_import_state, make_model, start_worker

FAKES = os.path.join(RUNTIME_DIR, "tests", "fakes")
GPT2 = json.dumps({"architectures": ["GPT2LMHeadModel"]})
QWEN2 = json.dumps({"architectures": ["Qwen2ForCausalLM"]})
T5 = json.dumps({"architectures": ["T5ForConditionalGeneration"]})
DEBERTA = json.dumps({"architectures": ["DebertaV2ForSequenceClassification"]})
HANDLER = "def handle(inputs):\n    return None\n"
BUILTIN_MODULE = "switchyard_runtime.hf.handler"
REAL_VLLM = importlib.util.find_spec("vllm") is not None
HAVE_TRANSFORMERS = importlib.util.find_spec("transformers") is not None
if HAVE_TRANSFORMERS:  # imported once here, so that no test's import cleanup drops torch from sys.modules
    importlib.import_module("transformers")
    importlib.import_module("torch")


def use_fake_vllm(test, *extra):
    """Puts the stand-in vllm (and extra folders) first on sys.path for the test."""
    keep_import_state(test)
    for folder in (FAKES,) + extra:
        sys.path.insert(0, folder)
    importlib.invalidate_caches()


@contextlib.contextmanager
def vllm_standin():
    """Puts the stand-in vllm first on sys.path until the block ends."""
    sys.path.insert(0, FAKES)
    importlib.invalidate_caches()
    try:
        yield
    finally:
        sys.path.remove(FAKES)
        for key in [k for k in sys.modules if k == "vllm" or k.startswith("vllm.")]:
            del sys.modules[key]
        importlib.invalidate_caches()


def block_transformers(test):
    """Makes import transformers fail for the test, as on a machine without it."""
    keep_import_state(test)
    saved = {k: v for k, v in sys.modules.items() if k == "transformers" or k.startswith("transformers.")}
    for key in saved:
        del sys.modules[key]
    sys.modules["transformers"] = None

    def restore():
        del sys.modules["transformers"]
        sys.modules.update(saved)
    test.addCleanup(restore)


def last_line(exc):
    """Returns the last line of the traceback Python prints for exc."""
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip().splitlines()[-1]


@unittest.skipIf(REAL_VLLM or not HAVE_TRANSFORMERS, "needs transformers and no real vllm (the stand-in plays it)")
class ChoiceTest(unittest.TestCase):
    def setUp(self):
        keep_import_state(self)

    def resolve(self, files, props, with_vllm=False):
        """Returns the entry point and mode a folder holding files gets with props."""
        folder = make_model(self, files)
        name, named = loader.entry_point(None, props)
        with vllm_standin() if with_vllm else contextlib.nullcontext():
            return backends.resolve(folder, name, named, props), props.get("rolling_batch")

    def test_modes(self):
        cases = [
            ("vllm with vllm", {"config.json": GPT2}, {"rolling_batch": "vllm"}, True, "vllm"),
            ("auto picks vllm when it imports", {"config.json": GPT2}, {"rolling_batch": "AUTO"}, True, "vllm"),
            ("auto: a causal LM without vllm gets transformers' continuous batching", {"config.json": QWEN2},
             {"rolling_batch": "auto"}, False, "transformers"),
            ("auto by default", {"config.json": QWEN2}, {}, False, "transformers"),
            ("auto: a seq2seq model without vllm", {"config.json": T5}, {}, False, "disable"),
            ("auto for an architecture vllm does not serve", {"config.json": DEBERTA}, {"rolling_batch": "auto"},
             True, "disable"),
            ("auto reads model_id's config", {"config.json": DEBERTA, "m/config.json": QWEN2},
             {"rolling_batch": "auto", "model_id": "m"}, False, "transformers"),
            ("disable", {"config.json": QWEN2}, {"rolling_batch": "disable"}, False, "disable"),
            ("auto with enable_lora is disable, even where vllm imports", {"config.json": GPT2},
             {"rolling_batch": "auto", "enable_lora": "true"}, True, "disable"),
            ("disable with enable_lora", {"config.json": QWEN2}, {"rolling_batch": "disable", "enable_lora": "true"},
             False, "disable"),
            ("entryPoint=generative beats model.py", {"model.py": HANDLER, "config.json": GPT2},
             {"rolling_batch": "vllm", "entryPoint": "generative"}, True, "vllm"),
            ("entryPoint=djl_python.huggingface", {"config.json": DEBERTA},
             {"entryPoint": "djl_python.huggingface"}, False, "disable"),
        ]
        for name, files, props, fake_vllm, mode in cases:
            with self.subTest(name):
                entry, got = self.resolve(files, props, fake_vllm)
                self.assertEqual((loader.BUILTIN[entry], got), (BUILTIN_MODULE, mode))

    def test_custom_handler_wins(self):
        cases = [("auto means disable", "auto", "disable"), ("scheduler", "scheduler", "scheduler"),
                 ("vllm without vllm", "vllm", "vllm"), ("trtllm without tensorrt_llm", "trtllm", "trtllm")]
        for name, given, reported in cases:
            with self.subTest(name):
                sys.modules.pop("model", None)
                props = {"rolling_batch": given}
                folder = make_model(self, {"model.py": HANDLER, "config.json": GPT2})
                handler = loader.load(folder, None, props)
                self.assertEqual((handler.module.__name__, props["rolling_batch"]), ("model", reported))
        sys.modules.pop("model", None)
        props = {}
        loader.load(make_model(self, {"model.py": HANDLER}), None, props)
        self.assertNotIn("rolling_batch", props)

    def test_failures(self):
        hint = "; option.rolling_batch=%s needs an image with the %s backend"
        cases = [
            ("vllm without vllm", {"rolling_batch": "vllm"}, False, ModuleNotFoundError,
             "ModuleNotFoundError: No module named 'vllm'"),
            ("trtllm without tensorrt_llm", {"rolling_batch": "trtllm"}, False, ModuleNotFoundError,
             "ModuleNotFoundError: No module named 'tensorrt_llm'" + hint % ("trtllm", "TensorRT-LLM")),
            ("lmi-dist without lmi_dist", {"rolling_batch": "lmi-dist"}, False, ModuleNotFoundError,
             "ModuleNotFoundError: No module named 'lmi_dist'" + hint % ("lmi-dist", "LMI-Dist")),
            ("disable without transformers", {"rolling_batch": "disable"}, True, loader.LoadError,
             "no model.py in {dir} and transformers is not installed: the built-in Hugging Face handler"),
            ("auto without vllm or transformers", {"rolling_batch": "auto"}, True, loader.LoadError,
             "no model.py in {dir} and transformers is not installed"),
            ("scheduler without model.py", {"rolling_batch": "scheduler"}, False, loader.LoadError,
             "option.rolling_batch=scheduler needs the folder's own model.py"),
            ("unknown mode", {"rolling_batch": "tgi"}, False, loader.LoadError,
             "option.rolling_batch=tgi is not one of"),
            ("enable_lora with vllm", {"rolling_batch": "vllm", "enable_lora": "true"}, False, loader.LoadError,
             "option.enable_lora=true serves LoRA adapters with rolling_batch=disable (model.generate with dynamic "
             "batching) only, and this model has rolling_batch=vllm"),
        ]
        for name, props, no_transformers, error, message in cases:
            with self.subTest(name):
                folder = make_model(self, {"config.json": GPT2})
                if no_transformers:
                    block_transformers(self)
                with self.assertRaises(error) as caught:
                    loader.load(folder, None, props)
                shown = str(caught.exception) if error is loader.LoadError else last_line(caught.exception)
                self.assertTrue(shown.startswith(message.format(dir=folder)), shown)
                if error is not loader.LoadError:
                    self.assertEqual(last_traceback_line(caught.exception), shown)

    def test_no_model_at_all(self):
        folder = make_model(self, {"README": "x"})
        with self.assertRaises(loader.LoadError) as caught:
            loader.load(folder, None, {})
        self.assertIn("no Hugging Face model either (config.json in the folder", str(caught.exception))

    def test_vendor_module_present(self):
        vendor = make_model(self, {"tensorrt_llm/__init__.py": "", "lmi_dist/__init__.py": ""})
        use_fake_vllm(self, vendor)
        for mode, module in (("trtllm", "tensorrt_llm"), ("lmi-dist", "lmi_dist")):
            with self.subTest(mode):
                with self.assertRaises(loader.LoadError) as caught:
                    loader.load(make_model(self, {}), None, {"rolling_batch": mode})
                self.assertIn("%s is installed, but switchyard's runtime has no" % module, str(caught.exception))

    def test_accelerate_log(self):
        folder = make_model(self, {"config.json": DEBERTA})
        with self.assertLogs("switchyard.backends", "INFO") as logs:
            self.assertEqual(backends.auto_mode(folder, {}), "disable")
        self.assertEqual(len(logs.records), 1)
        self.assertEqual(logs.records[0].levelname, "WARNING")
        message = logs.records[0].getMessage()
        self.assertIn("architecture DebertaV2ForSequenceClassification is not supported for optimized inference",
                      message)
        self.assertIn("loads through the plain transformers path (the Accelerate path) with rolling_batch=disable",
                      message)


@unittest.skipIf(REAL_VLLM, "a real vllm is installed; the stand-in plays it here")
class InitReplyTest(unittest.TestCase):
    """The initialization reply: the mode in use and the declared capabilities, or the load error's last line."""

    def test_reply(self):
        trtllm = "ModuleNotFoundError: No module named 'tensorrt_llm'; option.rolling_batch=trtllm needs an image "
        vllm = {"rolling_batch": "vllm", "context_length": "64", "supports_tools": "false", "max_choices": "1"}
        cases = [
            ("auto resolves to vllm", {"config.json": GPT2}, {"rolling_batch": "auto"}, True, 200, vllm),
            ("custom model.py with auto", {"model.py": HANDLER}, {"rolling_batch": "auto"}, False, 200,
             {"rolling_batch": "disable"}),
            ("custom model.py with scheduler", {"model.py": HANDLER}, {"rolling_batch": "scheduler"}, False, 200,
             {"rolling_batch": "scheduler"}),
            ("trtllm", {"config.json": GPT2}, {"rolling_batch": "trtllm"}, False, 500, trtllm),
        ]
        for name, files, props, fake_vllm, code, want in cases:
            with self.subTest(name):
                folder = make_model(self, files)
                worker = start_worker(self, folder)
                if fake_vllm:
                    sys.path.insert(0, FAKES)
                resp = worker.init(task="text-generation", **props)
                self.assertEqual(resp.code, code, resp.message)
                if code == 200:
                    self.assertEqual(resp.props, want)
                else:
                    self.assertTrue(resp.message.startswith(want), resp.message)
                    self.assertIn("TensorRT-LLM backend", resp.message)
                worker.close()


if __name__ == "__main__":
    unittest.main()
