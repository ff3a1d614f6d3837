"""Tests for the langid model folder; run from this folder with

    ../../../.venv/bin/python -m unittest -v test_langid

They need numpy and switchyard's Python worker runtime: model.py's djl_python
is the shim the workers use (pyruntime/shim), found through
SWITCHYARD_RUNTIME_PYTHON (the path of pyruntime) when it is
set, else at ../../../pyruntime from this folder.
"""

import importlib.util
import json
import os
import sys
import tempfile
import unittest

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
RUNTIME = (os.environ.get("SWITCHYARD_RUNTIME_PYTHON")
           or os.path.join(HERE, "..", "..", "..", "pyruntime"))
sys.path[:0] = [os.path.join(RUNTIME, "shim"), RUNTIME]
from djl_python import Input, Output  # noqa: E402  (found through sys.path above)


def load_model():
    """Import model.py under a private name, so that it cannot meet another folder's model."""
    spec = importlib.util.spec_from_file_location("langid_model", os.path.join(HERE, "model.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


model = load_model()


def json_request(body, content_type="application/json"):
    """One request as a worker gets it: a content-type header and a data item."""
    request = Input({"content-type": content_type})
    request.content.add("data", body if isinstance(body, bytes) else json.dumps(body).encode())
    return request


def batch_request(requests):
    """Merge requests into one dynamic batch the way the front-end does (batch_000.data)."""
    batch = Input({"batch_size": str(len(requests))})
    for i, request in enumerate(requests):
        prefix = "batch_%03d." % i
        batch.properties.update((prefix + k, v) for k, v in request.properties.items())
        for key, value in request.content:
            batch.content.add(prefix + key, value)
    return batch


def answer(outputs, key=None):
    """Decode the JSON content item named key (the only one, "data", when key is None)."""
    assert isinstance(outputs, Output) and outputs.code == 200, outputs
    if key is None:
        assert outputs.content.keys == ["data"], outputs.content
        key = "data"
    assert key in outputs.content.keys, (key, outputs.content.keys)
    return json.loads(outputs.content.get(key))


class ServiceTestCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.service = model.LanguageIdentifier()
        cls.service.initialize({})

    def infer(self, request):
        """Returns the service's answer to request."""
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
        requests = [
            json_request({"inputs": "Ich weiß es nicht."}),
            json_request("Non lo so davvero.".encode(), "text/plain"),
            json_request({"inputs": ["Я не знаю, где он живёт сейчас.", "No lo sé"],
                          "parameters": {"top_k": 1}}),
        ]
        outputs = self.infer(batch_request(requests))
        keys = outputs.content.keys
        self.assertEqual(keys, ["batch_0.data", "batch_1.data", "batch_2.data"])
        self.assertEqual(answer(outputs, "batch_0.data")[0]["label"], "deu")
        self.assertEqual(answer(outputs, "batch_1.data")[0]["label"], "ita")
        third = answer(outputs, "batch_2.data")
        self.assertEqual([[r["label"] for r in t] for t in third], [["rus"], ["spa"]])

    def test_batch_item_matches_single_request(self):
        request = json_request({"inputs": "Hyvää huomenta"})
        alone = answer(self.infer(request))
        outputs = self.infer(batch_request([request] * 2))
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
        requests = [json_request({"inputs": "hello"}), json_request({"x": 1})]
        with self.assertRaisesRegex(ValueError, '"inputs" field'):
            self.infer(batch_request(requests))


class ChatSchemaTest(ServiceTestCase):
    """The chat schema an agent's tool sends: the last user message, named in words."""

    def chat(self, messages, **fields):
        """Sends a chat request with messages and fields; returns the decoded answer."""
        body = dict(fields, messages=messages)
        request = json_request(body)
        request.properties["request_id"] = "r-1"
        return answer(self.infer(request))

    def test_names_the_language_of_the_last_user_message(self):
        got = self.chat([{"role": "system", "content": "Name the language of the text."},
                         {"role": "user", "content": "Bonjour tout le monde"},
                         {"role": "assistant", "content": "French (fra)"},
                         {"role": "user", "content": "Guten Morgen, wie geht es dir?"}],
                        max_tokens=256, temperature=0.1)
        self.assertEqual(got["object"], "chat.completion")
        self.assertEqual(got["id"], "chatcmpl-r-1")
        self.assertEqual(got["model"], "langid")
        self.assertEqual(got["choices"], [{"index": 0, "finish_reason": "stop",
                                           "message": {"role": "assistant", "content": "German (deu)"}}])

    def test_text_parts(self):
        got = self.chat([{"role": "user", "content": [{"type": "text", "text": "Dziękuję bardzo"},
                                                      {"type": "text", "text": "za pomoc"}]}])
        self.assertEqual(got["choices"][0]["message"]["content"], "Polish (pol)")

    def test_every_label_has_a_name(self):
        self.assertEqual(sorted(model.LANGUAGE_NAMES), sorted(self.service.network.labels))

    def test_chat_and_inputs_in_one_batch(self):
        requests = [json_request({"messages": [{"role": "user", "content": "Non lo so davvero."}]}),
                    json_request({"inputs": "Ich weiß es nicht."})]
        outputs = self.infer(batch_request(requests))
        self.assertEqual(answer(outputs, "batch_0.data")["choices"][0]["message"]["content"], "Italian (ita)")
        self.assertEqual(answer(outputs, "batch_1.data")[0]["label"], "deu")

    def test_malformed_chat_requests(self):
        cases = [
            ("messages not a list", {"messages": "hello"}, "list of"),
            ("message not an object", {"messages": ["hello"]}, "list of"),
            ("no user message", {"messages": [{"role": "system", "content": "x"}]}, "no user message"),
            ("content a number", {"messages": [{"role": "user", "content": 5}]}, "string or a list"),
            ("image part", {"messages": [{"role": "user", "content": [{"type": "image_url"}]}]}, "string or a list"),
            ("stream", {"messages": [{"role": "user", "content": "a"}], "stream": True}, "stream is not supported"),
        ]
        for name, body, message in cases:
            with self.subTest(name):
                with self.assertRaisesRegex(ValueError, message):
                    self.infer(json_request(body))


class HandleTest(unittest.TestCase):
    def test_initialization_request_then_prediction(self):
        self.assertIsNone(model.handle(Input({"model_dir": HERE})))
        self.assertTrue(model._service.initialized)  # pylint: disable=protected-access
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
