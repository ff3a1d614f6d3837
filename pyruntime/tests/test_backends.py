"""Backend choice per option.rolling_batch, and what the load reports."""

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
DEBERTA = json.dumps({"architectures": ["DebertaV2ForSequenceClassification"]})
HANDLER = "def handle(inputs):\n    return None\n"
GENERATIVE_MODULE = "switchyard_runtime.generative.handler"
REAL = [m for m in ("vllm", "transformers", "tensorrt_llm", "lmi_dist") if importlib.util.find_spec(m)]


def use_fakes(test, *extra):
    """Puts the fake vllm and transformers (and extra folders) first on sys.path for the test."""
    keep_import_state(test)
    for folder in (FAKES,) + extra:
        sys.path.insert(0, folder)
    importlib.invalidate_caches()


def last_line(exc):
    """Returns the last line of the traceback Python prints for exc."""
    return "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).rstrip().splitlines()[-1]


@unittest.skipIf(REAL, "real backend packages are installed: %s" % REAL)
class ChoiceTest(unittest.TestCase):
    def setUp(self):
        keep_import_state(self)

    def load(self, files, props, fakes=False):
        """Loads a model folder holding files with props; returns the folder and the Handler."""
        folder = make_model(self, files)
        if fakes:
            use_fakes(self)
        return folder, loader.load(folder, None, props)

    def test_loads(self):
        cases = [
            ("vllm with vllm", {"config.json": GPT2}, {"rolling_batch": "vllm"}, True, "vllm"),
            ("auto picks vllm", {"config.json": GPT2}, {"rolling_batch": "AUTO"}, True, "vllm"),
            ("auto for an architecture vllm does not serve", {"config.json": DEBERTA}, {"rolling_batch": "auto"},
             True, "disable"),
            ("auto without config.json", {}, {"rolling_batch": "auto"}, True, "disable"),
            ("auto by default", {"config.json": GPT2}, {}, True, "vllm"),
            ("auto reads model_id's config", {"config.json": DEBERTA, "m/config.json": GPT2},
             {"rolling_batch": "auto", "model_id": "m"}, True, "vllm"),
            ("disable with transformers", {"config.json": GPT2}, {"rolling_batch": "disable"}, True, "disable"),
            ("entryPoint=generative beats model.py", {"model.py": HANDLER, "config.json": GPT2},
             {"rolling_batch": "vllm", "entryPoint": "generative"}, True, "vllm"),
        ]
        for name, files, props, fakes, mode in cases:
            with self.subTest(name):
                _, handler = self.load(files, props, fakes)
                self.assertEqual(handler.module.__name__, GENERATIVE_MODULE)
                self.assertEqual(props["rolling_batch"], mode)

    def test_custom_handler_wins(self):
        cases = [("auto means disable", "auto", "disable"), ("scheduler", "scheduler", "scheduler"),
                 ("vllm without vllm", "vllm", "vllm"), ("trtllm without tensorrt_llm", "trtllm", "trtllm")]
        for name, given, reported in cases:
            with self.subTest(name):
                sys.modules.pop("model", None)
                props = {"rolling_batch": given}
                _, handler = self.load({"model.py": HANDLER, "config.json": GPT2}, props)
                self.assertEqual((handler.module.__name__, props["rolling_batch"]), ("model", reported))
        sys.modules.pop("model", None)
        props = {}
        self.load({"model.py": HANDLER}, props)
        self.assertNotIn("rolling_batch", props)

    def test_failures(self):
        hint = "; option.rolling_batch=%s needs an image with the %s backend"
        cases = [
            ("vllm without vllm", {"rolling_batch": "vllm"}, ModuleNotFoundError,
             "ModuleNotFoundError: No module named 'vllm'"),
            ("trtllm without tensorrt_llm", {"rolling_batch": "trtllm"}, ModuleNotFoundError,
             "ModuleNotFoundError: No module named 'tensorrt_llm'" + hint % ("trtllm", "TensorRT-LLM")),
            ("lmi-dist without lmi_dist", {"rolling_batch": "lmi-dist"}, ModuleNotFoundError,
             "ModuleNotFoundError: No module named 'lmi_dist'" + hint % ("lmi-dist", "LMI-Dist")),
            ("disable without transformers", {"rolling_batch": "disable"}, loader.LoadError,
             "no model.py in {dir} and transformers is not installed"),
            ("auto without vllm or transformers", {"rolling_batch": "auto"}, loader.LoadError,
             "no model.py in {dir} and transformers is not installed"),
            ("nothing set, nothing installed", {}, loader.LoadError, "no model.py in {dir} and no option.entryPoint"),
            ("scheduler without model.py", {"rolling_batch": "scheduler"}, loader.LoadError,
             "option.rolling_batch=scheduler needs the folder's own model.py"),
            ("unknown mode", {"rolling_batch": "tgi"}, loader.LoadError, "option.rolling_batch=tgi is not one of"),
        ]
        for name, props, error, message in cases:
            with self.subTest(name):
                folder = make_model(self, {"config.json": GPT2})
                with self.assertRaises(error) as caught:
                    loader.load(folder, None, props)
                shown = str(caught.exception) if error is loader.LoadError else last_line(caught.exception)
                self.assertTrue(shown.startswith(message.format(dir=folder)), shown)
                if error is not loader.LoadError:
                    self.assertEqual(last_traceback_line(caught.exception), shown)

    def test_vendor_module_present(self):
        vendor = make_model(self, {"tensorrt_llm/__init__.py": "", "lmi_dist/__init__.py": ""})
        use_fakes(self, vendor)
        for mode, module in (("trtllm", "tensorrt_llm"), ("lmi-dist", "lmi_dist")):
            with self.subTest(mode):
                with self.assertRaises(loader.LoadError) as caught:
                    self.load({}, {"rolling_batch": mode})
                self.assertIn("%s is installed, but switchyard's runtime has no" % module, str(caught.exception))

    def test_accelerate_log(self):
        cases = [  # without fakes first: the fakes stay on sys.path until the test ends
            ("vllm missing", GPT2, False, "vllm is not installed"),
            ("architecture", DEBERTA, True, "architecture DebertaV2ForSequenceClassification has no optimized"),
        ]
        for name, config, fakes, why in cases:
            with self.subTest(name):
                folder = make_model(self, {"config.json": config})
                if fakes:
                    use_fakes(self)
                with self.assertLogs("switchyard.backends", "INFO") as logs:
                    self.assertEqual(backends.auto_mode(folder, {}), "disable")
                self.assertEqual(len(logs.records), 1)
                message = logs.records[0].getMessage()
                self.assertIn(why, message)
                self.assertIn("loads through the Accelerate path (rolling_batch=disable)", message)


@unittest.skipIf(REAL, "real backend packages are installed: %s" % REAL)
class InitReplyTest(unittest.TestCase):
    """The initialization reply: the mode in use and the declared capabilities, or the load error's last line."""

    def test_reply(self):
        trtllm = "ModuleNotFoundError: No module named 'tensorrt_llm'; option.rolling_batch=trtllm needs an image "
        vllm = {"rolling_batch": "vllm", "context_length": "64", "supports_tools": "false", "max_choices": "1"}
        cases = [
            ("auto resolves to vllm", {"config.json": GPT2}, {"rolling_batch": "auto"}, True, 200, vllm),
            ("auto resolves to disable", {"config.json": DEBERTA}, {"rolling_batch": "auto"}, True, 200,
             {"rolling_batch": "disable"}),
            ("custom model.py with auto", {"model.py": HANDLER}, {"rolling_batch": "auto"}, False, 200,
             {"rolling_batch": "disable"}),
            ("custom model.py with scheduler", {"model.py": HANDLER}, {"rolling_batch": "scheduler"}, False, 200,
             {"rolling_batch": "scheduler"}),
            ("trtllm", {"config.json": GPT2}, {"rolling_batch": "trtllm"}, False, 500, trtllm),
        ]
        for name, files, props, fakes, code, want in cases:
            with self.subTest(name):
                folder = make_model(self, files)
                worker = start_worker(self, folder)
                if fakes:
                    sys.path.insert(0, FAKES)
                resp = worker.init(task="text-classification", **props)
                self.assertEqual(resp.code, code)
                if code == 200:
                    self.assertEqual(resp.props, want)
                else:
                    self.assertTrue(resp.message.startswith(want), resp.message)
                    self.assertIn("TensorRT-LLM backend", resp.message)
                worker.close()


if __name__ == "__main__":
    unittest.main()
