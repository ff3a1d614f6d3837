"""The Hugging Face handler's parts: loading options, request bodies, stop strings, pieces.

The tests that load a model use the fixtures fixtures/build.py makes
(SWITCHYARD_FIXTURES, else .cache/fixtures of the checkout, as the Go test
that runs this suite builds them); they are skipped where those are missing.
"""

import importlib
import os
import unittest

from switchyard_runtime.djl.errors import LoadError
from switchyard_runtime.djl.inputs import Input
from switchyard_runtime.djl.pairlist import PairList
from switchyard_runtime.generative.schemas import RequestError, parse
from switchyard_runtime.hf import causal, continuous, loading, taskinput, tasks
from tests.helpers import REPO_DIR, make_model

HAVE_TRANSFORMERS = importlib.util.find_spec("transformers") is not None
if HAVE_TRANSFORMERS:  # imported once here, so that no test's import cleanup drops torch from sys.modules
    importlib.import_module("transformers")
    importlib.import_module("torch")
FIXTURES = os.environ.get("SWITCHYARD_FIXTURES") or os.path.join(REPO_DIR, ".cache", "fixtures")


def fixture(name):
    """Returns a fixture's folder, or None when it was not built."""
    folder = os.path.join(FIXTURES, name)
    return folder if os.path.isfile(os.path.join(folder, "config.json")) else None


def request(body, content_type="application/json"):
    """Returns an Input holding body as its data."""
    content = PairList()
    content.add("data", body.encode("utf-8"))
    return Input({"content-type": content_type}, content)


class LoadingTest(unittest.TestCase):
    def test_model_folder(self):
        folder = make_model(self, {"m/config.json": "{}"})
        self.assertEqual(loading.model_folder(folder, {}), folder)
        self.assertEqual(loading.model_folder(folder, {"model_id": "m"}), os.path.join(folder, "m"))
        self.assertEqual(loading.model_folder("/elsewhere", {"model_id": os.path.join(folder, "m")}),
                         os.path.join(folder, "m"))
        with self.assertRaises(LoadError) as caught:
            loading.model_folder(folder, {"model_id": "microsoft/deberta-v3-base"})
        message = str(caught.exception)
        self.assertIn("never downloads models from the Hugging Face Hub", message)
        self.assertIn(os.path.join(folder, "microsoft/deberta-v3-base"), message)

    def test_infer_task(self):
        cases = [("BertForSequenceClassification", "text-classification"),
                 ("DebertaV2ForSequenceClassification", "text-classification"),
                 ("RobertaForTokenClassification", "token-classification"), ("BertForMaskedLM", "fill-mask"),
                 ("BertForQuestionAnswering", "question-answering"),
                 ("TapasForQuestionAnswering", "question-answering"),  # DJL's last match wins
                 ("Qwen2ForCausalLM", "text-generation"), ("GPT2LMHeadModel", "text-generation"),
                 ("T5ForConditionalGeneration", "text2text-generation"), ("BertModel", None), (None, None)]
        for arch, want in cases:
            with self.subTest(arch):
                self.assertEqual(loading.infer_task(arch), want)

    def test_task_of(self):
        self.assertEqual(loading.task_of({"task": "feature-extraction"}, {}), "feature-extraction")
        self.assertEqual(loading.task_of({}, {"architectures": ["BertForMaskedLM"]}), "fill-mask")
        with self.assertRaisesRegex(LoadError, "cannot infer the task of architecture BertModel: set option.task"):
            loading.task_of({}, {"architectures": ["BertModel"]})

    def test_read_config(self):
        with self.assertRaisesRegex(LoadError, "has no config.json"):
            loading.read_config(make_model(self, {}))
        with self.assertRaisesRegex(LoadError, "cannot read"):
            loading.read_config(make_model(self, {"config.json": "{"}))

    @unittest.skipUnless(HAVE_TRANSFORMERS, "needs torch")
    def test_options(self):
        import torch

        self.assertEqual(loading.torch_dtype({"dtype": "fp16"}), torch.float16)
        self.assertEqual(loading.torch_dtype({"dtype": "BF16"}), torch.bfloat16)
        self.assertEqual(loading.torch_dtype({"dtype": "auto"}), "auto")
        self.assertIsNone(loading.torch_dtype({}))
        with self.assertRaisesRegex(LoadError, "option.dtype=int3 is not one of"):
            loading.torch_dtype({"dtype": "int3"})
        self.assertEqual([loading.device({"device_id": d}) for d in ("-1", "0", "3", "x")],
                         ["cpu", "cuda:0", "cuda:3", "cpu"])
        self.assertEqual(loading.load_kwargs({"trust_remote_code": "TRUE"}), {"trust_remote_code": True})


class TaskInputTest(unittest.TestCase):
    def test_parse(self):
        cases = [
            ("a string", '{"inputs": "hi"}', "text-classification", ["hi"], {}),
            ("a list and parameters", '{"inputs": ["a", "b"], "parameters": {"top_k": 2}}', "text-classification",
             ["a", "b"], {"top_k": 2}),
            ("a text pair", '{"inputs": {"text": "a", "text_pair": "b"}}', "text-classification",
             [{"text": "a", "text_pair": "b"}], {}),
            ("question and context at the top", '{"question": "q", "context": "c"}', "question-answering",
             [{"question": "q", "context": "c"}], {}),
        ]
        for name, body, task, inputs, params in cases:
            with self.subTest(name):
                req = taskinput.parse(request(body), task)
                self.assertEqual((req.inputs, req.parameters), (inputs, params))
        plain = taskinput.parse(request("just text", "text/plain; charset=utf-8"), "fill-mask")
        self.assertEqual(plain.inputs, ["just text"])
        octets = taskinput.parse(request('{"inputs": "x"}', "application/octet-stream"), "fill-mask")
        self.assertEqual(octets.inputs, ["x"])

    def test_refused(self):
        cases = [
            ("not JSON", "nope", "application/json", "text-classification", "not valid JSON"),
            ("a JSON list", "[1]", "application/json", "text-classification", "must be a JSON object"),
            ("a number", '{"inputs": 1}', "application/json", "fill-mask", "inputs must be a string"),
            ("an empty list", '{"inputs": []}', "application/json", "fill-mask", "must not be empty"),
            ("a bad item", '{"inputs": ["a", 2]}', "application/json", "fill-mask", "inputs[1] must be a string"),
            ("parameters not an object", '{"inputs": "a", "parameters": 3}', "application/json",
             "fill-mask", "parameters must be an object"),
            ("QA without context", '{"inputs": {"question": "q"}}', "application/json", "question-answering",
             "question and context"),
            ("an image", "x", "image/png", "text-classification", "Content-Type image/png is not served"),
            ("octet-stream that is not JSON", "x", "application/octet-stream", "fill-mask",
             "Content-Type application/octet-stream is not served"),
        ]
        for name, body, kind, task, want in cases:
            with self.subTest(name):
                with self.assertRaises(RequestError) as caught:
                    taskinput.parse(request(body, kind), task)
                self.assertIn(want, str(caught.exception))

    def test_same_parameters_share_a_key(self):
        a = taskinput.TaskRequest(["x"], {"top_k": 2, "function_to_apply": "none"})
        b = taskinput.TaskRequest(["y"], {"function_to_apply": "none", "top_k": 2})
        c = taskinput.TaskRequest(["z"], {"top_k": 3})
        self.assertEqual(a.key, b.key)
        self.assertNotEqual(a.key, c.key)

    def test_per_input(self):
        self.assertEqual(tasks.per_input("fill-mask", ["a"], [{"score": 1}]), [[{"score": 1}]])
        self.assertEqual(tasks.per_input("fill-mask", ["a", "b"], [[1], [2]]), [[1], [2]])
        self.assertEqual(tasks.per_input("text-classification", ["a"], [{"label": "x"}]), [{"label": "x"}])
        with self.assertRaisesRegex(RuntimeError, "gave 1 results for 2 inputs"):
            tasks.per_input("token-classification", ["a", "b"], [[]])


class StopTextTest(unittest.TestCase):
    def test_push(self):
        cases = [
            ("no stop strings", [], ["ab", "cd"], ["ab", "cd"], None, ""),
            ("held back while it may start a stop", ["END"], ["ab", "E", "N", "x"], ["ab", "", "", "ENx"], None, ""),
            ("cut before the stop", ["END"], ["ab", "E", "ND", "more"], ["ab", "", "", ""], "END", ""),
            ("the earliest stop wins", ["b", "cd"], ["a", "cdb"], ["a", ""], "cd", ""),
            ("flush gives what was held", ["XYZ"], ["ab", "X"], ["ab", ""], None, "X"),
        ]
        for name, stops, deltas, want, stopped, rest in cases:
            with self.subTest(name):
                s = causal.StopText(stops)
                self.assertEqual([s.push(d) for d in deltas], want)
                self.assertEqual((s.stopped, s.flush()), (stopped, rest))

    def test_first_stop(self):
        self.assertEqual(causal.first_stop("hello world", ["o w", "ld"]), (4, "o w"))
        self.assertEqual(causal.first_stop("hello", ["x"]), (5, None))


class CacheConfigTest(unittest.TestCase):
    def test_sized_for_the_rolling_batch(self):
        cfg = continuous.cache_config({"max_rolling_batch_size": "8"}, 512, "cpu")
        self.assertEqual((cfg["num_blocks"], cfg["block_size"], cfg["max_requests_per_batch"]), (136, 32, 8))
        self.assertFalse(cfg["use_cuda_graph"])
        cfg = continuous.cache_config({"max_model_len": "1024"}, 512, "cuda:0")
        self.assertEqual((cfg["num_blocks"], cfg["max_requests_per_batch"]), (32 * 1024 // 32 + 32, 32))
        self.assertIsNone(cfg["use_cuda_graph"])


@unittest.skipUnless(HAVE_TRANSFORMERS and fixture("qwen2-chat"), "needs transformers and the qwen2-chat fixture")
class CausalTest(unittest.TestCase):
    """Pieces of the real tokenizer: one per token, adding up to the decoded text."""

    @classmethod
    def setUpClass(cls):
        cls.model = causal.CausalModel(fixture("qwen2-chat"), {"device_id": "-1"})

    def test_prompt_uses_the_chat_template(self):
        req = parse({"messages": [{"role": "user", "content": "Hi"}]})
        text, ids = self.model.prompt(req)
        self.assertEqual(text, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n")
        self.assertEqual(self.model.tokenizer.decode(ids), text)

    def test_pieces(self):
        ids = self.model.tokenizer("The capital of France is Paris.", add_special_tokens=False)["input_ids"]
        eos = sorted(self.model.eos_ids)[0]
        for stops, want_text, want_reason in ((None, "The capital of France is Paris.", "eos"),
                                              (["Paris"], "The capital of France is ", "stop")):
            with self.subTest(stops=stops):
                req = parse({"inputs": "x", "parameters": {"max_new_tokens": 50, "stop": stops}})
                maker = causal.PieceMaker(self.model, req, 3)
                events = []
                for token_id in ids + [eos]:
                    events.extend(maker.add(token_id))
                    if maker.stopped:
                        break
                events.extend(maker.done())
                pieces, done = events[:-1], events[-1]
                self.assertEqual("".join(p.text for p in pieces), want_text)
                self.assertEqual((done.finish_reason, done.text, done.completion_tokens),
                                 (want_reason, want_text, len(pieces)))

    def test_finish_reason(self):
        eos = sorted(self.model.eos_ids)[0]
        self.assertEqual(self.model.finish_reason([5, eos], 10, False), "eos")
        self.assertEqual(self.model.finish_reason([5, 6], 2, False), "length")
        self.assertEqual(self.model.finish_reason([5, 6], 10, True), "stop")


if __name__ == "__main__":
    unittest.main()
