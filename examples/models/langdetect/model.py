#!/usr/bin/env python
"""Language detection with langdetect.

langdetect (PyPI's langdetect, pinned in requirements/) is a Python port of Cybozu
Labs' language-detection (Apache-2.0). The trained language profiles ship
with the package.

Request:  {"inputs": "text"} or {"inputs": ["text", ...]}, or a text/plain body
Response: [{"label": "en", "score": 0.99}, ...] per text, best first;
          [] for a text without any letters to go on.
"""

import logging

from djl_python import Input, Output
from langdetect.detector_factory import PROFILES_DIRECTORY, DetectorFactory
from langdetect.lang_detect_exception import LangDetectException

SEED = 0  # langdetect samples n-grams at random; a fixed seed makes answers repeatable


class LangDetectService:
    """LangDetectService detects the language of texts with langdetect's profiles."""

    def __init__(self):
        self.factory = None
        self.initialized = False

    def initialize(self, properties: dict):  # pylint: disable=unused-argument  # DJL's signature
        """Loads langdetect's language profiles."""
        self.factory = DetectorFactory()
        self.factory.load_profile(PROFILES_DIRECTORY)
        self.factory.set_seed(SEED)
        self.initialized = True
        logging.info("langdetect loaded %d language profiles",
                     len(self.factory.get_lang_list()))

    def detect(self, text: str) -> list:
        """Returns the languages of text, best first, or [] when there is nothing to go on."""
        detector = self.factory.create()
        detector.append(text)
        try:
            languages = detector.get_probabilities()
        except LangDetectException:
            return []
        return [{"label": lang.lang, "score": lang.prob} for lang in languages]

    @staticmethod
    def parse_input(item: Input):
        """Returns the text (or list of texts) of one request."""
        content_type = item.get_property("Content-Type")
        if content_type is not None and content_type.startswith("text/"):
            return item.get_as_string()
        data = item.get_as_json()
        if not isinstance(data, dict) or "inputs" not in data:
            raise ValueError('expected a JSON object with "inputs": '
                             '{"inputs": "text"} or {"inputs": ["text", ...]}')
        texts = data["inputs"]
        if isinstance(texts, str):
            return texts
        if isinstance(texts, list) and all(isinstance(t, str) for t in texts):
            return texts
        raise ValueError('"inputs" must be a string or a list of strings')

    def predict(self, item: Input):
        """Returns the languages of one request's text, or of each of its texts."""
        texts = self.parse_input(item)
        if isinstance(texts, str):
            return self.detect(texts)
        return [self.detect(text) for text in texts]

    def inference(self, inputs: Input) -> Output:
        """Answers a request, or each request of a dynamic batch."""
        outputs = Output()
        try:
            batch = inputs.get_batches()
            for i, item in enumerate(batch):
                result = self.predict(item)
                if inputs.is_batch():
                    outputs.add_as_json(result, key="data", batch_index=i)
                else:
                    outputs.add_as_json(result)
            outputs.add_property("Content-Type", "application/json")
        except Exception as e:
            logging.exception("langdetect inference failed")
            # error handling
            outputs = Output().error(str(e))
        return outputs


_service = LangDetectService()


def handle(inputs: Input):
    """handle is the entry point the worker calls for every request."""
    if not _service.initialized:
        _service.initialize(inputs.get_properties())

    if inputs.is_empty():
        # Model server makes an empty call to warmup the model on startup
        return None

    return _service.inference(inputs)
