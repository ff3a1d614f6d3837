"""Tests for the langid model folder; run from this folder with

    /usr/bin/python3 -m unittest -v test_langid

They need numpy only: no switchyard runtime, no node. djl_python is replaced
by the small fake below, which follows DJL's Input/Output behaviour.
"""

import importlib.util
import json
import os
import sys
import tempfile
import types
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


class FakeInput:
    """FakeInput mimics djl_python.Input for the calls model.py makes."""

    def __init__(self, properties=None, content=None):
        self.properties = dict(properties or {})
        self.content = list(content or [])

    def is_empty(self):
        return not self.content

    def is_batch(self):
        return "batch_size" in self.properties

    def get_properties(self):
        return self.properties

    def get_property(self, key):
        return next((v for k, v in self.properties.items() if k.lower() == key.lower()), None)

    def get_as_bytes(self, key=None):
        if not self.content:
            return None
        wanted = key or "data"
        return next((v for k, v in self.content if k == wanted), self.content[0][1])

    def get_as_string(self, key=None):
        return self.get_as_bytes(key).decode("utf-8")

    def get_as_json(self, key=None):
        return json.loads(self.get_as_string(key))

    def get_batches(self):
        if not self.is_batch():
            return [self]
        items = [FakeInput() for _ in range(int(self.properties["batch_size"]))]
        for key, value in self.properties.items():
            if key.startswith("batch_") and key != "batch_size":
                items[int(key[6:9])].properties[key[10:]] = value
        for key, value in self.content:
            items[int(key[6:9])].content.append((key[10:], value))
        return items


class FakeOutput:
    """FakeOutput mimics djl_python.Output: keyed content and properties."""

    def __init__(self, code=200, message="OK"):
        self.code, self.message = code, message
        self.properties, self.content = {}, []

    def add_property(self, key, value):
        self.properties[key] = value
        return self

    def add(self, value, key=None, batch_index=None):
        if batch_index is not None:
            key = f"batch_{batch_index}.{key or ''}"
        if isinstance(value, str):
            value = value.encode("utf-8")
        self.content.append((key, bytes(value)))
        return self

    def add_as_json(self, value, key=None, batch_index=None):
        return self.add(json.dumps(value, ensure_ascii=False), key, batch_index)

    def error(self, error, code=424, message="prediction failure"):
        self.code, self.message = code, message
        return self.add_as_json({"code": code, "message": message, "error": error})


def load_model():
    """Import model.py under a private name with the fake djl_python installed."""
    sys.modules["djl_python"] = types.SimpleNamespace(Input=FakeInput, Output=FakeOutput)
    path = os.path.join(HERE, "model.py")
    spec = importlib.util.spec_from_file_location("langid_model", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


model = load_model()


def json_request(body, content_type="application/json"):
    raw = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
    return FakeInput({"content-type": content_type}, [("data", raw)])


def batch_request(items):
    """Build one dynamic-batch Input the way the front-end sends it."""
    batch = FakeInput({"batch_size": str(len(items))})
    for i, (content_type, body) in enumerate(items):
        batch.properties[f"batch_{i:03d}.content-type"] = content_type
        batch.content.append((f"batch_{i:03d}.data", body))
    return batch


def answer(outputs, key=None):
    """Decode the JSON content item named key (the only one when key is None)."""
    if key is None:
        assert len(outputs.content) == 1, outputs.content
        return json.loads(outputs.content[0][1])
    return json.loads(dict(outputs.content)[key])


class ServiceTestCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.service = model.LanguageIdentifier()
        cls.service.initialize({})

    def infer(self, request):
        return self.service.inference(request)


class ReferenceTest(ServiceTestCase):
    """The port against outputs of the real lande 1.0.10 under Node."""

    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        with open(os.path.join(HERE, "testdata", "reference.json"), encoding="utf-8") as f:
            cls.reference = json.load(f)

    def test_reference_metadata(self):
        self.assertEqual(self.reference["lande"], "1.0.10")
        self.assertGreaterEqual(len(self.reference["cases"]), 30)

    def test_every_language_ranked_like_lande(self):
        cases = self.reference["cases"]
        ranked = self.service.network.top([c["text"] for c in cases], top_k=50)
        for case, got in zip(cases, ranked):
            with self.subTest(text=case["text"]):
                self.assertEqual([r["label"] for r in got], [r[0] for r in case["result"]])
                for mine, theirs in zip(got, case["result"]):
                    self.assertAlmostEqual(mine["score"], theirs[1], delta=1e-5)

    def test_batched_scores_equal_single_scores(self):
        texts = [c["text"] for c in self.reference["cases"][:8]]
        together = self.service.network.probabilities(texts)
        for i, text in enumerate(texts):
            alone = self.service.network.probabilities([text])[0]
            np.testing.assert_allclose(together[i], alone, atol=1e-7)


class NormalizeTest(unittest.TestCase):
    def test_normalize(self):
        cases = [
            ("letters kept, punctuation and digits dropped", "Hi, 42 you!", " hi you "),
            ("hyphen runs become one space", "well--known-fact", " well known fact "),
            ("runs of two or more spaces collapse", "a \t\n b", " a b "),
            ("a single newline or tab stays", "a\nb\tc", " a\nb\tc "),
            ("javascript spaces trimmed", "\u3000\ufeffword\u00a0\u00a0", " word "),
            ("combining marks kept", "Cafe\u0301", " cafe\u0301 "),
            ("greek final sigma", "ΟΔΟΣ", " οδος "),
            ("dotted capital I", "İ", " i\u0307 "),
            ("empty", "", "  "),
            ("nothing left", "123 ?!", "  "),
        ]
        for name, text, want in cases:
            with self.subTest(name):
                self.assertEqual(model.normalize(text), want)

    def test_utf16_units(self):
        cases = [
            ("ascii", "abc", "abc"),
            ("bmp", "日本", "日本"),
            ("astral", "a\U00020000", "a\ud840\udc00"),
        ]
        for name, text, want in cases:
            with self.subTest(name):
                self.assertEqual(model.utf16_units(text), want)

    def test_ngram_frequencies(self):
        cases = [
            ("bigrams", " aa ", 2, {" a": 1 / 3, "aa": 1 / 3, "a ": 1 / 3}),
            ("repeats", "abab", 2, {"ab": 2 / 3, "ba": 1 / 3}),
            ("too short", "ab", 3, {}),
        ]
        for name, units, n, want in cases:
            with self.subTest(name):
                self.assertEqual(model.ngram_frequencies(units, n), want)


class InferenceTest(ServiceTestCase):
    def test_single_text(self):
        got = answer(self.infer(json_request({"inputs": "Bonjour tout le monde, comment ça va ?"})))
        self.assertEqual(len(got), model.DEFAULT_TOP_K)
        self.assertEqual(got[0]["label"], "fra")
        scores = [r["score"] for r in got]
        self.assertEqual(scores, sorted(scores, reverse=True))

    def test_list_of_texts_and_top_k(self):
        body = {"inputs": ["Guten Morgen, wie geht es dir?", "Buenos días, ¿cómo estás?"],
                "parameters": {"top_k": 5}}
        got = answer(self.infer(json_request(body)))
        self.assertEqual([len(r) for r in got], [5, 5])
        self.assertEqual([r[0]["label"] for r in got], ["deu", "spa"])

    def test_plain_text_body(self):
        body = "Dziękuję bardzo za pomoc".encode("utf-8")
        request = json_request(body, "text/plain; charset=utf-8")
        got = answer(self.infer(request))
        self.assertEqual(got[0]["label"], "pol")

    def test_empty_list(self):
        self.assertEqual(answer(self.infer(json_request({"inputs": []}))), [])

    def test_reply_is_json(self):
        outputs = self.infer(json_request({"inputs": "hello"}))
        self.assertEqual(outputs.properties.get("Content-Type"), "application/json")

    def test_dynamic_batch(self):
        items = [
            ("application/json", json.dumps({"inputs": "Ich weiß es nicht."}).encode()),
            ("text/plain", "Non lo so davvero.".encode()),
            ("application/json", json.dumps({
                "inputs": ["Я не знаю, где он живёт сейчас.", "No lo sé"],
                "parameters": {"top_k": 1}}).encode()),
        ]
        outputs = self.infer(batch_request(items))
        keys = [k for k, _ in outputs.content]
        self.assertEqual(keys, ["batch_0.data", "batch_1.data", "batch_2.data"])
        self.assertEqual(answer(outputs, "batch_0.data")[0]["label"], "deu")
        self.assertEqual(answer(outputs, "batch_1.data")[0]["label"], "ita")
        third = answer(outputs, "batch_2.data")
        self.assertEqual([[r["label"] for r in t] for t in third], [["rus"], ["spa"]])

    def test_batch_item_matches_single_request(self):
        body = json.dumps({"inputs": "Hyvää huomenta"}).encode()
        alone = answer(self.infer(json_request(body)))
        outputs = self.infer(batch_request([("application/json", body)] * 2))
        batched = answer(outputs, "batch_1.data")
        self.assertEqual([r["label"] for r in batched], [r["label"] for r in alone])
        for a, b in zip(alone, batched):
            self.assertAlmostEqual(a["score"], b["score"], delta=1e-7)

    def test_malformed_requests(self):
        cases = [
            ("missing inputs", {"text": "hello"}, '"inputs" field'),
            ("inputs not text", {"inputs": 42}, "string or a list"),
            ("list with a number", {"inputs": ["a", 1]}, "string or a list"),
            ("bare string", "hello", '"inputs" field'),
            ("parameters not object", {"inputs": "a", "parameters": [1]}, "JSON object"),
            ("top_k zero", {"inputs": "a", "parameters": {"top_k": 0}}, "positive integer"),
            ("top_k text", {"inputs": "a", "parameters": {"top_k": "3"}}, "positive integer"),
            ("top_k bool", {"inputs": "a", "parameters": {"top_k": True}}, "positive integer"),
        ]
        for name, body, message in cases:
            with self.subTest(name):
                with self.assertRaisesRegex(ValueError, message):
                    self.infer(json_request(body))

    def test_unreadable_bodies(self):
        cases = [
            ("not json", json_request(b"{inputs:"), "not JSON"),
            ("bad utf-8 json", json_request(b'{"inputs": "\xff"}'), "UTF-8"),
            ("bad utf-8 text", json_request(b"\xff\xfe", "text/plain"), "UTF-8"),
        ]
        for name, request, message in cases:
            with self.subTest(name):
                with self.assertRaisesRegex(ValueError, message):
                    self.infer(request)

    def test_malformed_item_fails_the_batch(self):
        items = [("application/json", b'{"inputs": "hello"}'), ("application/json", b'{"x": 1}')]
        with self.assertRaisesRegex(ValueError, '"inputs" field'):
            self.infer(batch_request(items))


class HandleTest(unittest.TestCase):
    def test_initialization_request_then_prediction(self):
        self.assertIsNone(model.handle(FakeInput({"model_dir": HERE})))
        self.assertTrue(model._service.initialized)
        got = answer(model.handle(json_request({"inputs": "Het regent al de hele dag."})))
        self.assertEqual(got[0]["label"], "nld")


class WeightsTest(unittest.TestCase):
    def test_wrong_vocabulary_is_refused(self):
        with open(os.path.join(HERE, "lande-t50.json"), encoding="utf-8") as f:
            vocab = json.load(f)
        vocab["labels"] = vocab["labels"][:-1]
        with tempfile.TemporaryDirectory() as tmp:
            path = os.path.join(tmp, "vocab.json")
            with open(path, "w", encoding="utf-8") as f:
                json.dump(vocab, f)
            with self.assertRaisesRegex(ValueError, "do not match"):
                model.LandeNetwork(os.path.join(HERE, "lande-t50.npz"), path)


if __name__ == "__main__":
    unittest.main()
