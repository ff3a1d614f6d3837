"""LoRA adapters on the causal-LM fixture: residency, and mixed batches against PEFT in-process.

Needs transformers, peft and the fixtures qwen2-chat and
qwen2-chat-adapters (built by fixtures/build.py; the Go test that runs this
suite builds them); skipped without them.
"""

import importlib
import json
import os
import unittest

from switchyard_runtime.djl.inputs import Input
from switchyard_runtime.djl.pairlist import PairList
from switchyard_runtime.generative.handler import Settings
from tests.helpers import make_model
from tests.test_hf import fixture

HAVE_PEFT = all(importlib.util.find_spec(m) is not None for m in ("transformers", "peft"))
if HAVE_PEFT:  # imported once here, so that no test's import cleanup drops torch from sys.modules
    for _name in ("torch", "transformers", "peft"):
        importlib.import_module(_name)
NAMES = ("extraction", "classification", "summarization", "qa")
# The worker's --device-id for the adapters and the reference alike: -1 (the CPU) unless
# SWITCHYARD_TEST_DEVICE_ID names a GPU (scripts/gpu_lora_check.sh runs this suite on one).
DEVICE_ID = os.environ.get("SWITCHYARD_TEST_DEVICE_ID", "-1")
QUESTION = "Farid Haddad signed a trade deal in Paris on Tuesday."


def adapter_dir(name):
    """Returns the folder of one of the chat fixture's adapters."""
    return os.path.join(os.path.dirname(fixture("qwen2-chat")), "qwen2-chat-adapters", name)


def chat(adapter=None, max_tokens=24):
    """Returns an Input of a greedy chat request, naming adapter when given."""
    body = {"messages": [{"role": "user", "content": QUESTION}], "max_tokens": max_tokens, "temperature": 0}
    content = PairList()
    content.add("data", json.dumps(body).encode("utf-8"))
    props = {"content-type": "application/json"}
    if adapter:
        props["adapter"] = adapter
    return Input(props, content)


@unittest.skipUnless(HAVE_PEFT and fixture("qwen2-chat") and os.path.isdir(adapter_dir("qa")),
                     "needs transformers, peft and the qwen2-chat fixtures with adapters")
class AdaptersTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        from switchyard_runtime.hf.adapters import Adapters
        from switchyard_runtime.hf.causal import CausalModel
        from switchyard_runtime.hf.generate import GenerateBackend
        from switchyard_runtime.generative.schemas import Capabilities

        props = {"device_id": DEVICE_ID, "max_loras": "2", "max_cpu_loras": "3"}
        cls.model = CausalModel(fixture("qwen2-chat"), props)
        cls.adapters = Adapters(cls.model, props)
        for name in NAMES:
            cls.adapters.register(name, adapter_dir(name), preload=False)
        settings = Settings({"model_dir": fixture("qwen2-chat"), "max_tokens": "24"})
        cls.backend = GenerateBackend(cls.model, settings, Capabilities(512), cls.adapters)
        cls.want = cls.reference()

    @classmethod
    def reference(cls):
        """Greedy answers of the base and of each adapter, from peft.PeftModel in-process, one at a time."""
        import peft
        import torch
        import transformers

        tok = transformers.AutoTokenizer.from_pretrained(fixture("qwen2-chat"))
        prompt = tok.apply_chat_template([{"role": "user", "content": QUESTION}], tokenize=False,
                                         add_generation_prompt=True)
        device = "cuda:%s" % DEVICE_ID if int(DEVICE_ID) >= 0 else "cpu"
        ids = tok(prompt, add_special_tokens=False, return_tensors="pt").to(device)
        out = {}
        for name in (None,) + NAMES:
            base = transformers.AutoModelForCausalLM.from_pretrained(fixture("qwen2-chat")).to(device).eval()
            model = base if name is None else peft.PeftModel.from_pretrained(base, adapter_dir(name)).eval()
            with torch.no_grad():
                gen = model.generate(**ids, max_new_tokens=24, do_sample=False)
            out[name] = tok.decode(gen[0, ids["input_ids"].shape[1]:], skip_special_tokens=True)
        return out

    def answer(self, out):
        """Returns the text of a whole chat answer."""
        return json.loads(bytes(out.content.values[0]))["choices"][0]["message"]["content"]

    def test_each_adapter_alone_matches_peft(self):
        for name in (None,) + NAMES:
            with self.subTest(adapter=name):
                out = self.backend.answer(chat(name))
                self.assertEqual(self.answer(out), self.want[name])
                self.assertEqual(out.properties.get("x-switchyard-adapter"), name)
        self.assertLessEqual(self.adapters.on_device(), 2)

    def test_mixed_batch_one_forward_pass_per_step(self):
        from switchyard_runtime.hf.generate import ForwardCount

        names = ["qa", None, "extraction", "qa"]
        with ForwardCount(self.model.model) as passes:
            outs = self.backend.answer_batch([chat(n) for n in names])
        self.assertEqual([self.answer(o) for o in outs], [self.want[n] for n in names])
        longest = max(len(self.model.tokenizer(self.want[n], add_special_tokens=False)["input_ids"]) for n in names)
        self.assertLessEqual(passes.n, longest + 1, "more forward passes than one per generated token")

    def test_lru_eviction_and_pin(self):
        from switchyard_runtime.hf.adapters import AdapterError

        self.adapters.take_events()
        self.adapters.update("summarization", pinned=True)
        self.adapters.ensure({"qa"})
        self.adapters.ensure({"extraction"})
        on = sorted(a.name for a in self.adapters.registered.values() if a.on_device)
        self.assertEqual(on, ["extraction", "summarization"])
        self.assertIn("evicted:qa", self.adapters.take_events())
        with self.assertRaises(AdapterError) as caught:
            self.adapters.ensure({"qa", "classification"})
        self.assertEqual(caught.exception.code, 507)
        self.adapters.update("summarization", pinned=False)

    def test_refusals(self):
        from switchyard_runtime.hf.adapters import AdapterError

        out = self.backend.answer(chat("nope"))
        self.assertEqual(out.code, 404)
        with self.assertRaises(AdapterError) as caught:
            self.adapters.register("x", make_model(self, {"README": "x"}))
        self.assertEqual(caught.exception.code, 400)
        with self.assertRaises(AdapterError):
            self.adapters.register("__base__", adapter_dir("qa"))

    def test_no_lora_no_base_answer(self):
        """A request naming an adapter on a model without option.enable_lora gets 404, never the base's answer,
        whether the body names it or the front-end's adapter property does."""
        from switchyard_runtime.generative.schemas import AdapterNotServed, refuse_adapter
        from switchyard_runtime.hf.generate import GenerateBackend

        plain = GenerateBackend(self.model, self.backend.settings, self.backend.caps, None)
        with self.assertRaises(AdapterNotServed) as caught:
            plain.answer(chat("qa"))
        self.assertEqual(caught.exception.code, 404)
        self.assertIn("adapter qa: this model serves no adapters", str(caught.exception))
        body = {"messages": [{"role": "user", "content": QUESTION}], "adapters": ["qa"]}
        content = PairList()
        content.add("data", json.dumps(body).encode("utf-8"))
        with self.assertRaises(AdapterNotServed):
            plain.answer(Input({"content-type": "application/json"}, content))
        for named in ("qa", "x"):
            with self.subTest(named=named), self.assertRaises(AdapterNotServed):
                refuse_adapter(chat(named), type("Req", (), {"adapter": None})())
        refuse_adapter(chat("__base__"), type("Req", (), {"adapter": None})())


@unittest.skipUnless(HAVE_PEFT and fixture("bert-cls"), "needs transformers and the bert-cls fixture")
class LoRAOnClassifierTest(unittest.TestCase):
    def test_refused_at_load(self):
        from switchyard_runtime.djl.errors import LoadError
        from switchyard_runtime.hf.handler import HuggingFaceService

        with self.assertRaises(LoadError) as caught:
            HuggingFaceService().initialize({"model_dir": fixture("bert-cls"), "enable_lora": "true"})
        self.assertIn("LoRA adapters are served for causal LMs (text-generation) only", str(caught.exception))


if __name__ == "__main__":
    unittest.main()
