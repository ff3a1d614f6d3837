"""Tests for the langdetect model folder; run from this folder with

    /usr/bin/python3 -m unittest -v test_langdetect

They need python3-langdetect and switchyard's Python worker runtime, whose
djl_python shim (pyruntime/shim) gives model.py the Input and
Output the workers use. The runtime is SWITCHYARD_RUNTIME_PYTHON (the path of
pyruntime) when that is set, else ../../../pyruntime
from this folder.
"""

import importlib.util
import json
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
RUNTIME = (os.environ.get("SWITCHYARD_RUNTIME_PYTHON")
           or os.path.join(HERE, "..", "..", "..", "pyruntime"))
sys.path[:0] = [os.path.join(RUNTIME, "shim"), RUNTIME]
from djl_python import Input, Output, PairList  # noqa: E402  (found through sys.path above)


def load_model():
    """Import model.py under a private name, so that it cannot meet another folder's model."""
    spec = importlib.util.spec_from_file_location("langdetect_model", os.path.join(HERE, "model.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


model = load_model()


def json_request(body, content_type="application/json"):
    """A single request: body (bytes, or JSON to encode) as "data", with its content-type."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode("utf-8")
    return Input({"content-type": content_type}, PairList(["data"], [data]))


def text_batch(texts):
    """A dynamic batch of {"inputs": text} requests, keyed batch_%03d. as the front-end sends it."""
    properties, content = {"batch_size": str(len(texts))}, PairList()
    for i, text in enumerate(texts):
        properties["batch_%03d.content-type" % i] = "application/json"
        content.add("batch_%03d.data" % i, json.dumps({"inputs": text}).encode("utf-8"))
    return Input(properties, content)


def answer(outputs):
    """The JSON body of a single reply: its only content item, "data"."""
    assert isinstance(outputs, Output), type(outputs)
    assert outputs.content.keys == ["data"], outputs.content.keys
    return json.loads(outputs.content.values[0])


KNOWN = [
    ("en", "The quick brown fox jumps over the lazy dog near the river bank."),
    ("fr", "Bonjour tout le monde, comment allez-vous aujourd'hui ?"),
    ("de", "Ich habe heute keine Zeit, weil ich noch arbeiten muss."),
    ("es", "¿Dónde está la biblioteca? Necesito devolver dos libros."),
    ("it", "La cena è pronta, vieni a tavola prima che si raffreddi."),
    ("nl", "Het regent al de hele dag in Amsterdam."),
    ("ru", "Я не знаю, где он живёт сейчас."),
    ("ja", "今日はとても暑いので、冷たい水を飲みたいです。"),
    ("zh-cn", "我们今天下午去公园散步，然后一起吃晚饭。"),
    ("ko", "저는 매일 아침 커피를 마십니다."),
    ("ar", "أنا أحب تعلم اللغات الجديدة كثيرا."),
]


class ServiceTestCase(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.service = model.LangDetectService()
        cls.service.initialize({})

    def infer(self, request):
        """Returns the service's answer to request."""
        return self.service.inference(request)


class DetectTest(ServiceTestCase):
    def test_known_sentences(self):
        for label, text in KNOWN:
            with self.subTest(label):
                got = self.service.detect(text)
                self.assertEqual(got[0]["label"], label)
                self.assertGreater(got[0]["score"], 0.9)

    def test_scores_are_ranked_probabilities(self):
        got = self.service.detect("Hello Привет")
        scores = [r["score"] for r in got]
        self.assertEqual(scores, sorted(scores, reverse=True))
        self.assertTrue(all(0 < s <= 1 for s in scores))
        self.assertLessEqual(sum(scores), 1 + 1e-9)

    def test_seeded_answers_repeat(self):
        text = "Ciao, come stai? Tutto bene, grazie."
        other = model.LangDetectService()
        other.initialize({})
        self.assertEqual(self.service.detect(text), other.detect(text))

    def test_no_features(self):
        for text in ["", "12345 !!! ???", "😀"]:
            with self.subTest(text=text):
                self.assertEqual(self.service.detect(text), [])


class InferenceTest(ServiceTestCase):
    def test_single_and_list(self):
        cases = [
            ("string", {"inputs": KNOWN[0][1]}, lambda got: got[0]["label"], "en"),
            ("list", {"inputs": [KNOWN[1][1], KNOWN[2][1]]},
             lambda got: [r[0]["label"] for r in got], ["fr", "de"]),
            ("empty list", {"inputs": []}, lambda got: got, []),
        ]
        for name, body, pick, want in cases:
            with self.subTest(name):
                outputs = self.infer(json_request(body))
                self.assertEqual(outputs.code, 200)
                self.assertEqual(pick(answer(outputs)), want)

    def test_plain_text_body(self):
        outputs = self.infer(json_request(KNOWN[3][1].encode("utf-8"), "text/plain"))
        self.assertEqual(answer(outputs)[0]["label"], "es")

    def test_dynamic_batch(self):
        outputs = self.infer(text_batch([text for _, text in KNOWN[:3]]))
        self.assertIsInstance(outputs, Output)
        self.assertEqual(outputs.code, 200)
        self.assertEqual(outputs.content.keys, ["batch_0.data", "batch_1.data", "batch_2.data"])
        got = [json.loads(value)[0]["label"] for value in outputs.content.values]
        self.assertEqual(got, [label for label, _ in KNOWN[:3]])

    def test_malformed_requests_answer_424(self):
        cases = [
            ("missing inputs", json_request({"text": "hello"}), '"inputs"'),
            ("inputs not text", json_request({"inputs": 7}), "string or a list"),
            ("not json", json_request(b"{inputs"), "Expecting"),
        ]
        for name, request, message in cases:
            with self.subTest(name):
                with self.assertLogs(level="ERROR"):
                    outputs = self.infer(request)
                self.assertEqual(outputs.code, 424)
                self.assertIn(message, answer(outputs)["error"])


class HandleTest(unittest.TestCase):
    def test_initialization_request_then_prediction(self):
        self.assertIsNone(model.handle(Input()))
        self.assertTrue(model._service.initialized)  # pylint: disable=protected-access
        got = answer(model.handle(json_request({"inputs": KNOWN[4][1]})))
        self.assertEqual(got[0]["label"], "it")


if __name__ == "__main__":
    unittest.main()
