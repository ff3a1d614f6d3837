"""Tests for the toy chat model: checkpoint, tokenizer, template and engine.

Run from this folder with Debian's Python:

    /usr/bin/python3 -m unittest -v test_engine
"""

from __future__ import annotations

import json
import os
import random
import tempfile
import threading
import unittest

import torch

import chattok
import engine
import gpt
import jargon
import sampling
import train
from textstream import TextStream

# CHAT_MODEL_DIR points the tests at another checkpoint (e.g. a fresh
# `train.py --out /tmp/chat` run); by default they check the shipped one.
HERE = os.environ.get("CHAT_MODEL_DIR", os.path.dirname(os.path.abspath(__file__)))
CHECKPOINT = ["config.json", "pytorch_model.bin", "tokenizer.model", "tokenizer_config.json",
              "generation_config.json"]
QUESTIONS = ["What does cruft mean?", "Define hack.", "What is a kludge?", "grok?"]


def chat_ids(eng: engine.Engine, question: str) -> list[int]:
    """Returns the token ids of a one-question chat prompt."""
    return eng.encode(eng.render_chat([{"role": "user", "content": question}]))


def reference_greedy(model: gpt.GPT, ids: list[int], n: int, eos: set[int]) -> list[int]:
    """reference_greedy decodes with a full forward per token (no cache)."""
    ids, out = list(ids), []
    with torch.inference_mode():
        for _ in range(n):
            tid = int(model(torch.tensor([ids]))[0, -1].argmax())
            out.append(tid)
            ids.append(tid)
            if tid in eos:
                break
    return out


def run_ids(seq: engine.Sequence) -> list[int]:
    """Returns the token ids a sequence generates, run to its end."""
    return [t.id for t in seq]


class CheckpointTest(unittest.TestCase):
    def test_files_are_shipped_and_small(self):
        total = 0
        for name in CHECKPOINT:
            path = os.path.join(HERE, name)
            self.assertTrue(os.path.isfile(path), name)
            total += os.path.getsize(path)
        self.assertLess(total, 10 * 1024 * 1024)

    def test_config_is_gpt2(self):
        cfg = gpt.read_config(HERE)
        self.assertEqual(cfg["model_type"], "gpt2")
        self.assertEqual(cfg["architectures"], ["GPT2LMHeadModel"])
        self.assertEqual(cfg["activation_function"], "gelu_new")
        tok = chattok.ChatTokenizer(HERE)
        self.assertEqual(cfg["vocab_size"], tok.vocab_size)
        self.assertEqual(cfg["eos_token_id"], tok.end_id)

    def test_state_dict_uses_gpt2_names_and_conv1d_layout(self):
        sd = torch.load(os.path.join(HERE, gpt.WEIGHTS_FILE), map_location="cpu")
        cfg = gpt.GPTConfig.from_hf(gpt.read_config(HERE))
        d = cfg.n_embd
        want = {
            "transformer.wte.weight": (cfg.vocab_size, d),
            "transformer.wpe.weight": (cfg.n_positions, d),
            "transformer.h.0.attn.c_attn.weight": (d, 3 * d),
            "transformer.h.0.attn.c_proj.weight": (d, d),
            "transformer.h.0.mlp.c_fc.weight": (d, 4 * d),
            "transformer.h.0.mlp.c_proj.weight": (4 * d, d),
            f"transformer.h.{cfg.n_layer - 1}.ln_2.bias": (d,),
            "transformer.ln_f.weight": (d,),
        }
        for key, shape in want.items():
            with self.subTest(key=key):
                self.assertEqual(tuple(sd[key].shape), shape)
        self.assertTrue(torch.equal(sd["lm_head.weight"], sd["transformer.wte.weight"]))

    def test_loader_rejects_untied_head(self):
        sd = torch.load(os.path.join(HERE, gpt.WEIGHTS_FILE), map_location="cpu")
        sd["lm_head.weight"] = sd["lm_head.weight"] + 1
        model = gpt.GPT(gpt.GPTConfig.from_hf(gpt.read_config(HERE)))
        with self.assertRaises(ValueError):
            gpt.load_state(model, sd)

    def test_save_then_load_round_trips(self):
        model = gpt.from_pretrained(HERE)
        with tempfile.TemporaryDirectory() as tmp:
            gpt.save_pretrained(model, tmp)
            again = gpt.from_pretrained(tmp)
        for (k, a), (_, b) in zip(model.state_dict().items(), again.state_dict().items()):
            self.assertTrue(torch.equal(a, b), k)

    def test_tokenizer_config_carries_template(self):
        with open(os.path.join(HERE, "tokenizer_config.json"), encoding="utf-8") as f:
            tc = json.load(f)
        self.assertEqual(tc["chat_template"], chattok.CHAT_TEMPLATE)
        self.assertEqual(tc["tokenizer_class"], "LlamaTokenizer")
        self.assertEqual(tc["eos_token"], chattok.END)
        with open(os.path.join(HERE, "generation_config.json"), encoding="utf-8") as f:
            self.assertIn(chattok.ChatTokenizer(HERE).end_id, json.load(f)["eos_token_id"])


class TokenizerTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tok = chattok.ChatTokenizer(HERE)

    def test_round_trip(self):
        cases = {
            "plain": "What does cruft mean?",
            "leading and double spaces": "  two  spaces\tand a tab ",
            "newlines": "line one\nline two\n\n",
            "unicode": "“quoted” naïve café — ™ Ø",
            "emoji": "ship it 🚀 now",
            "tags": "<|user|>hi<|end|><|assistant|>",
            "empty": "",
        }
        for name, text in cases.items():
            with self.subTest(name):
                self.assertEqual(self.tok.decode(self.tok.encode(text)), text)

    def test_tags_are_single_tokens(self):
        for tag in chattok.SPECIAL_TOKENS:
            with self.subTest(tag):
                self.assertEqual(self.tok.encode(tag), [self.tok.special[tag]])


class RenderChatTest(unittest.TestCase):
    def test_tags_in_order(self):
        msgs = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Define foo."},
                {"role": "assistant", "content": "A word."}, {"role": "user", "content": "And bar?"}]
        want = ("<|system|>Be brief.<|end|><|user|>Define foo.<|end|>"
                "<|assistant|>A word.<|end|><|user|>And bar?<|end|><|assistant|>")
        self.assertEqual(chattok.render_chat(msgs), want)

    def test_content_parts_and_errors(self):
        parts = [{"type": "text", "text": "Define "}, {"type": "text", "text": "foo."}]
        self.assertEqual(chattok.render_chat([{"role": "user", "content": parts}]),
                         "<|user|>Define foo.<|end|><|assistant|>")
        bad = {"unknown role": [{"role": "tool", "content": "x"}],
               "image part": [{"role": "user", "content": [{"type": "image_url", "image_url": "u"}]}],
               "number content": [{"role": "user", "content": 3}]}
        for name, msgs in bad.items():
            with self.subTest(name), self.assertRaises(ValueError):
                chattok.render_chat(msgs)

    @unittest.skipUnless(__import__("importlib").util.find_spec("jinja2"), "jinja2 not installed")
    def test_jinja_template_matches(self):
        import jinja2  # pylint: disable=import-error  # optional: the test skips without it
        msgs = [{"role": "system", "content": "S"}, {"role": "user", "content": "U"}]
        out = jinja2.Template(chattok.CHAT_TEMPLATE).render(messages=msgs, add_generation_prompt=True)
        self.assertEqual(out, chattok.render_chat(msgs))


class TextStreamTest(unittest.TestCase):
    @staticmethod
    def stream(stop):
        """Returns a TextStream whose token ids are code points."""
        # One "token" per character: ids are code points.
        return TextStream(lambda ids: "".join(map(chr, ids)), stop)

    def test_stop_prefix_is_held_back(self):
        s = self.stream(["END"])
        got = [s.push(ord(c)) for c in "abEN"]
        self.assertEqual(got, [("a", False), ("b", False), ("", False), ("", False)])
        self.assertEqual(s.push(ord("D")), ("", True))
        self.assertEqual((s.text, s.matched), ("ab", "END"))

    def test_false_alarm_is_released(self):
        s = self.stream(["END"])
        for c in "aEN":
            s.push(ord(c))
        self.assertEqual(s.push(ord("x")), ("ENx", False))
        self.assertEqual(s.flush(), "")

    def test_flush_releases_held_tail(self):
        s = self.stream(["END"])
        s.push(ord("E"))
        self.assertEqual(s.flush(), "E")

    def test_unfinished_character_waits(self):
        s = TextStream(lambda ids: bytes(ids).decode("utf-8", errors="replace"))
        data = "é!".encode()
        self.assertEqual(s.push(data[0]), ("", False))
        self.assertEqual(s.push(data[1]), ("é", False))
        self.assertEqual(s.push(data[2]), ("!", False))

    def test_random_streams_add_up(self):
        rng = random.Random(7)
        for _ in range(300):
            text = "".join(rng.choice("abc ") for _ in range(rng.randint(0, 30)))
            stop = ["".join(rng.choice("abc") for _ in range(rng.randint(1, 3)))]
            s = self.stream(stop)
            out, stopped = "", False
            for c in text:
                delta, stopped = s.push(ord(c))
                out += delta
                if stopped:
                    break
            out += "" if stopped else s.flush()
            cut = text.find(stop[0])
            self.assertEqual(out, text if cut < 0 else text[:cut], (text, stop))


class SamplingTest(unittest.TestCase):
    def test_greedy_and_tiny_top_p_pick_the_max(self):
        logits = torch.tensor([0.1, 2.0, 1.9, -1.0])
        gen = sampling.generator(0)
        self.assertEqual(sampling.choose(logits, 0.0, 1.0, gen), 1)
        for _ in range(20):
            self.assertEqual(sampling.choose(logits, 1.0, 1e-6, gen), 1)

    def test_nucleus_keeps_smallest_set(self):
        probs = torch.tensor([0.1, 0.5, 0.3, 0.1])
        kept = sampling.nucleus(probs, 0.7)
        self.assertEqual((kept > 0).tolist(), [False, True, True, False])

    def test_seeded_generators_repeat(self):
        logits = torch.randn(50, generator=torch.Generator().manual_seed(1))
        a = [sampling.choose(logits, 1.0, 0.9, g) for g in [sampling.generator(5)] for _ in range(30)]
        b = [sampling.choose(logits, 1.0, 0.9, g) for g in [sampling.generator(5)] for _ in range(30)]
        self.assertEqual(a, b)


class EngineTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.eng = engine.Engine(HERE, max_batch=8)
        cls.eos = cls.eng.tokenizer.eos_ids

    @classmethod
    def tearDownClass(cls):
        cls.eng.close()

    def greedy(self, question, n=40, **kw):
        """Submits question for n greedy tokens and returns the sequence."""
        return self.eng.submit(chat_ids(self.eng, question), n, temperature=0, **kw)

    def test_cached_decode_equals_full_forward(self):
        for q in QUESTIONS[:2]:
            with self.subTest(q):
                seq = self.greedy(q, 48, ignore_eos=True)
                want = reference_greedy(self.eng.model, seq.prompt_ids, 48, set())
                self.assertEqual(run_ids(seq), want)

    def test_batch_with_late_joiners_matches_alone(self):
        alone = {q: run_ids(self.greedy(q, 60, ignore_eos=True)) for q in QUESTIONS}
        first = self.greedy(QUESTIONS[0], 60, ignore_eos=True)
        got = {QUESTIONS[0]: [next(first).id for _ in range(10)]}
        late = {q: self.greedy(q, 60, ignore_eos=True) for q in QUESTIONS[1:]}
        got[QUESTIONS[0]] += run_ids(first)
        for q, seq in late.items():
            got[q] = run_ids(seq)
        self.assertEqual(got, alone)

    def test_greedy_answer_streams_its_text(self):
        seq = self.greedy("What does cruft mean?", 120)
        tokens = list(seq)
        self.assertIn(seq.finish_reason, ("eos", "length"))
        self.assertEqual(seq.generated_tokens, len(tokens))
        ids = [t.id for t in tokens if t.id not in self.eos]
        self.assertEqual("".join(t.text for t in tokens), self.eng.decode(ids))
        self.assertEqual(seq.text, self.eng.decode(ids))

    def test_max_new_tokens_bounds_output(self):
        for n in (0, 1, 5, 17):
            with self.subTest(n=n):
                seq = self.greedy(QUESTIONS[2], n, ignore_eos=True)
                self.assertEqual(len(list(seq)), n)
                self.assertEqual(seq.finish_reason, "length")
                seq = self.eng.submit(chat_ids(self.eng, QUESTIONS[2]), n, temperature=1.0, seed=n)
                self.assertLessEqual(len(list(seq)), n)

    def test_stop_string_ends_without_it(self):
        full = self.greedy(QUESTIONS[1], 60, ignore_eos=True)
        list(full)
        stop = full.text[12:16]
        seq = self.greedy(QUESTIONS[1], 60, ignore_eos=True, stop=["\x00never", stop])
        streamed = "".join(t.text for t in seq)
        self.assertEqual(seq.finish_reason, "stop")
        self.assertEqual(streamed, full.text[: full.text.find(stop)])
        self.assertEqual(seq.text, streamed)

    def test_eos_ends_with_eos(self):
        seq = self.greedy("Define cruft.", 200)
        tokens = list(seq)
        self.assertEqual(seq.finish_reason, "eos", seq.text)
        self.assertIn(tokens[-1].id, self.eos)
        self.assertNotIn(chattok.END, seq.text)

    def test_seeded_sampling_repeats_in_a_batch(self):
        ids = chat_ids(self.eng, QUESTIONS[3])
        a = self.eng.submit(ids, 30, temperature=1.0, top_p=0.9, seed=42, ignore_eos=True)
        others = [self.eng.submit(chat_ids(self.eng, q), 30, temperature=0.7, seed=1) for q in QUESTIONS]
        b = self.eng.submit(ids, 30, temperature=1.0, top_p=0.9, seed=42, ignore_eos=True)
        self.assertEqual(run_ids(a), run_ids(b))
        for s in others:
            list(s)

    def test_cancel_stops_a_running_sequence(self):
        seq = self.greedy(QUESTIONS[0], 200, ignore_eos=True)
        next(seq)
        seq.cancel()
        rest = list(seq)
        self.assertEqual(seq.finish_reason, "canceled")
        self.assertLess(len(rest), 199)
        self.assertEqual(list(seq), [])

    def test_long_prompt_is_left_truncated_and_ends_at_window(self):
        n_pos = self.eng.config.n_positions
        ids = chat_ids(self.eng, "cruft " * 400)
        seq = self.eng.submit(ids, 50, temperature=0, ignore_eos=True)
        tokens = list(seq)
        self.assertEqual(seq.prompt_tokens, n_pos - 1)
        self.assertEqual(seq.prompt_ids, ids[-(n_pos - 1):])
        self.assertEqual(seq.finish_reason, "length")
        self.assertEqual(len(tokens), 2)

    def test_bad_arguments_raise(self):
        ids = chat_ids(self.eng, "foo?")
        bad = {"empty prompt": ([], 5, {}), "id out of range": ([10**6], 5, {}),
               "negative max": (ids, -1, {}), "temperature": (ids, 5, {"temperature": -1}),
               "top_p zero": (ids, 5, {"top_p": 0}), "stop not str": (ids, 5, {"stop": [3]})}
        for name, (p, n, kw) in bad.items():
            with self.subTest(name), self.assertRaises(ValueError):
                self.eng.submit(p, n, **kw)


class LifecycleTest(unittest.TestCase):
    def test_waiting_sequence_can_be_canceled(self):
        with engine.Engine(HERE, max_batch=1) as eng:
            first = eng.submit(chat_ids(eng, QUESTIONS[0]), 100, temperature=0, ignore_eos=True)
            next(first)
            queued = eng.submit(chat_ids(eng, QUESTIONS[1]), 100, temperature=0)
            queued.cancel()
            self.assertEqual(list(queued), [])
            self.assertEqual(queued.finish_reason, "canceled")
            self.assertEqual(len(list(first)), 99)

    def test_close_cancels_and_joins(self):
        before = set(threading.enumerate())
        eng = engine.Engine(HERE, max_batch=2)
        seqs = [eng.submit(chat_ids(eng, q), 200, temperature=0, ignore_eos=True) for q in QUESTIONS]
        next(seqs[0])
        eng.close()
        eng.close()
        for s in seqs:
            list(s)
            self.assertIn(s.finish_reason, ("canceled", "length"))
        self.assertEqual(seqs[-1].finish_reason, "canceled")
        self.assertEqual(set(threading.enumerate()), before)
        with self.assertRaises(RuntimeError):
            eng.submit(chat_ids(eng, "foo?"), 5)


JARGON_SAMPLE = """\
   :cruft: /kruhft/

   [very common; back-formation from {crufty}]

   1. n. An unpleasant substance. The dust that gathers under your bed is
   cruft; the TMRC Dictionary correctly noted that attacking it with a broom
   only produces more.

   2. n. The results of shoddy construction.

   :cruft together: vt.

   (also cruft up) To throw together something ugly but temporarily
   workable. Like vt. {kluge up}, but more pejorative.

   :zorkmid: /zork'mid/, n.

   The canonical unit of currency in hacker-written games, e.g. in {Zork}.
   It has spread to {nethack}.

                             Part III. Appendices

   :not an entry: n.

   Appendix text.
"""


class JargonTest(unittest.TestCase):
    def test_parse_sample(self):
        got = [(e.term, e.pos, e.definition) for e in jargon.parse(JARGON_SAMPLE.splitlines())]
        want = [
            ("cruft", "noun", "An unpleasant substance. The dust that gathers under your bed is cruft; "
                              "the TMRC Dictionary correctly noted that attacking it with a broom only "
                              "produces more."),
            ("cruft together", "verb", "To throw together something ugly but temporarily workable. "
                                       "Like vt. kluge up, but more pejorative."),
            ("zorkmid", "noun", "The canonical unit of currency in hacker-written games, e.g. in Zork. "
                                "It has spread to nethack."),
        ]
        self.assertEqual(got, want)

    def test_random_input_never_raises(self):
        rng = random.Random(3)
        parts = ["   :", ":", " n.", " vt.", "[", "]", "(", ")", "1. ", "{", "}", "word", " ", ".",
                 "Part III. Appendices", "“", "é", "\t"]
        for _ in range(500):
            lines = ["".join(rng.choice(parts) for _ in range(rng.randint(0, 8)))
                     for _ in range(rng.randint(0, 12))]
            for e in jargon.parse(lines):
                self.assertTrue(e.term)
                self.assertGreaterEqual(len(e.definition), 12)

    def test_training_labels_cover_assistant_text_only(self):
        tok = chattok.ChatTokenizer(HERE)
        chat = [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "foo?"},
                {"role": "assistant", "content": "foo (noun): A word."}]
        ids, labels = train.encode_chat(tok, chat, 256)
        learned = [i for i in labels if i != train.IGNORE]
        self.assertEqual(tok.decode(learned), "foo (noun): A word.<|end|>")
        self.assertEqual(ids[len(ids) - len(learned) - 1], tok.special[chattok.ASSISTANT])


if __name__ == "__main__":
    unittest.main()
