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
from switchyard_runtime.hf import causal, continuous, loading, taskinput, tasks, tensors
from tests.helpers import REPO_DIR, make_model, numpy_or_skip

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


def tensor_request(arrays, parameters=None):
    """Returns an Input holding an Open Inference Protocol request's tensors, as the front-end sends it."""
    from switchyard_runtime.djl.ndlist import encode_ndlist

    content = PairList()
    content.add("data", encode_ndlist(arrays))
    if parameters is not None:
        content.add("parameters", parameters.encode("utf-8"))
    return Input({"content-type": "tensor/ndlist"}, content)


def texts(*items, shape=None):
    """Returns a BYTES tensor (a numpy object array of UTF-8 bytes)."""
    import numpy

    out = numpy.empty(len(items), dtype=object)
    out[:] = [t.encode("utf-8") for t in items]
    return out.reshape(shape or (len(items),))


class TensorTaskTest(unittest.TestCase):
    def setUp(self):
        numpy_or_skip(self)

    def test_parse(self):
        import numpy

        cases = [
            ("text", {"text": texts("a", "b")}, None, "fill-mask", ["a", "b"], {}),
            ("the only BYTES input", {"sentence": texts("é"), "n": numpy.array([1])}, '{"top_k": 2}', "fill-mask",
             ["é"], {"top_k": 2}),
            ("pairs", {"text": texts("a"), "text_pair": texts("b")}, None, "text-classification",
             [{"text": "a", "text_pair": "b"}], {}),
            ("question answering", {"context": texts("c1", "c2"), "question": texts("q1", "q2")}, None,
             "question-answering", [{"question": "q1", "context": "c1"}, {"question": "q2", "context": "c2"}], {}),
        ]
        for name, arrays, params, task, inputs, want_params in cases:
            with self.subTest(name):
                req = taskinput.parse(tensor_request(arrays, params), task)
                self.assertEqual((req.inputs, req.parameters), (inputs, want_params))
        req = taskinput.parse(tensor_request({"text": texts("a", "b", shape=(2, 1))}), "fill-mask")
        self.assertEqual(req.shape, (2, 1))

    def test_refused(self):
        import numpy

        cases = [
            ("no text", {"x": numpy.array([1.0])}, None, "fill-mask", "takes its text in a BYTES input named text"),
            ("no context", {"question": texts("q")}, None, "question-answering", "takes a BYTES input named context"),
            ("shapes", {"question": texts("q"), "context": texts("a", "b")}, None, "question-answering",
             "must have one shape"),
            ("empty", {"text": texts()}, None, "fill-mask", "must not be empty"),
            ("parameters", {"text": texts("a")}, "[1]", "fill-mask", "parameters must be an object"),
            ("not UTF-8", {"text": numpy.array([b"\xff"], dtype=object)}, None, "fill-mask", "is not UTF-8"),
        ]
        for name, arrays, params, task, want in cases:
            with self.subTest(name):
                with self.assertRaises(RequestError) as caught:
                    taskinput.parse(tensor_request(arrays, params), task)
                self.assertIn(want, str(caught.exception))

    def test_answers_tensors(self):
        import json

        from switchyard_runtime.djl.ndlist import decode_ndlist

        def runner(inputs, **params):
            return [{"label": text.upper(), "k": params.get("top_k")} for text in inputs]

        service = tasks.TaskService("text-classification", runner)
        batch = PairList()
        for i, req in enumerate([tensor_request({"text": texts("a", "b", shape=(2, 1))}, '{"top_k": 1}'),
                                 request('{"inputs": "c", "parameters": {"top_k": 1}}')]):
            for key, value in zip(req.content.keys, req.content.values):
                batch.add("batch_%d.%s" % (i, key), value)
        props = {"batch_size": "2", "batch_0.content-type": "tensor/ndlist", "batch_1.content-type": "application/json"}
        out = service.handle(Input(props, batch))
        self.assertEqual(service.calls, 1)
        answers = dict(zip(out.content.keys, out.content.values))
        got = decode_ndlist(answers["batch_0.data"])
        self.assertEqual(got.names, ["output"])
        self.assertEqual(got[0].shape, (2, 1))
        self.assertEqual([json.loads(x) for x in got[0].reshape(-1)], [{"label": "A", "k": 1}, {"label": "B", "k": 1}])
        self.assertEqual(json.loads(answers["batch_1.data"]), [{"label": "C", "k": 1}])

    def test_signature(self):
        import json

        qa = tensors.signature("question-answering")
        self.assertEqual([t["name"] for t in json.loads(qa["tensor_inputs"])], ["question", "context"])
        self.assertEqual(json.loads(tensors.signature("fill-mask")["tensor_outputs"]),
                         [{"name": "output", "datatype": "BYTES", "shape": [-1]}])


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
