"""Tests for the langdetect model folder; run from this folder with

    /usr/bin/python3 -m unittest -v test_langdetect

They need python3-langdetect only, not the switchyard runtime: djl_python is
replaced by the small fake below, which follows DJL's Input/Output behaviour.
"""

import importlib.util
import json
import os
import sys
import types
import unittest

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
    spec = importlib.util.spec_from_file_location("langdetect_model", path)
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
        items = [("application/json", json.dumps({"inputs": text}).encode())
                 for _, text in KNOWN[:3]]
        outputs = self.infer(batch_request(items))
        keys = [k for k, _ in outputs.content]
        self.assertEqual(keys, ["batch_0.data", "batch_1.data", "batch_2.data"])
        got = [answer(outputs, k)[0]["label"] for k in keys]
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
        self.assertIsNone(model.handle(FakeInput()))
        self.assertTrue(model._service.initialized)
        got = answer(model.handle(json_request({"inputs": KNOWN[4][1]})))
        self.assertEqual(got[0]["label"], "it")


if __name__ == "__main__":
    unittest.main()
