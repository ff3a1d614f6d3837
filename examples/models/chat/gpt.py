"""A GPT-2 decoder in plain torch that reads and writes the Hugging Face layout.

The module is GPT-2 itself: learned position embeddings, pre-LayerNorm blocks,
a fused ``c_attn`` projection, Conv1D weights stored as ``[in, out]``, the tanh
GELU ("gelu_new") and an output head tied to the token embedding. Parameter
names match ``GPT2LMHeadModel`` so ``pytorch_model.bin`` loads in either.

Attention is delegated to a callable so that the same weights serve a plain
causal forward (training, reference decoding) and a KV-cached batched decode
(the engine). The callable gets ``(layer, q, k, v)`` shaped ``[B, H, T, D]``
and returns the attention output with the shape of ``q``.
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import dataclass
from typing import Callable

import torch
import torch.nn.functional as F
from torch import nn

CONFIG_FILE = "config.json"
WEIGHTS_FILE = "pytorch_model.bin"

Attend = Callable[[int, torch.Tensor, torch.Tensor, torch.Tensor], torch.Tensor]


@dataclass
class GPTConfig:
    """GPTConfig holds the GPT-2 hyper-parameters stored in config.json."""

    vocab_size: int = 2000
    n_positions: int = 256
    n_embd: int = 128
    n_layer: int = 4
    n_head: int = 4
    layer_norm_epsilon: float = 1e-5
    dropout: float = 0.0
    bos_token_id: int = 1
    eos_token_id: int = 2

    @property
    def head_dim(self) -> int:
        """head_dim is the width of one attention head."""
        return self.n_embd // self.n_head

    def to_hf(self) -> dict:
        """to_hf returns the config as a Hugging Face GPT-2 config.json dict."""
        return {
            "model_type": "gpt2",
            "architectures": ["GPT2LMHeadModel"],
            "vocab_size": self.vocab_size,
            "n_positions": self.n_positions,
            "n_ctx": self.n_positions,
            "n_embd": self.n_embd,
            "n_layer": self.n_layer,
            "n_head": self.n_head,
            "n_inner": None,
            "activation_function": "gelu_new",
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "resid_pdrop": self.dropout,
            "embd_pdrop": self.dropout,
            "attn_pdrop": self.dropout,
            "initializer_range": 0.02,
            "scale_attn_weights": True,
            "tie_word_embeddings": True,
            "use_cache": True,
            "bos_token_id": self.bos_token_id,
            "eos_token_id": self.eos_token_id,
            "torch_dtype": "float32",
        }

    @classmethod
    def from_hf(cls, d: dict) -> "GPTConfig":
        """from_hf reads a GPT-2 config.json dict, rejecting other model types."""
        if d.get("model_type") != "gpt2":
            raise ValueError(f"gpt: model_type {d.get('model_type')!r} is not gpt2")
        if d.get("activation_function", "gelu_new") != "gelu_new":
            raise ValueError("gpt: only activation_function gelu_new is supported")
        if d.get("n_inner") not in (None, 4 * d["n_embd"]):
            raise ValueError("gpt: n_inner must be 4 * n_embd")
        return cls(
            vocab_size=d["vocab_size"],
            n_positions=d["n_positions"],
            n_embd=d["n_embd"],
            n_layer=d["n_layer"],
            n_head=d["n_head"],
            layer_norm_epsilon=d.get("layer_norm_epsilon", 1e-5),
            bos_token_id=d.get("bos_token_id", 1),
            eos_token_id=d.get("eos_token_id", 2),
        )


class Conv1D(nn.Module):
    """Conv1D is GPT-2's linear layer: weight stored as [in, out]."""

    def __init__(self, n_in: int, n_out: int):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(n_in, n_out).normal_(std=0.02))
        self.bias = nn.Parameter(torch.zeros(n_out))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Returns x times the weight, plus the bias."""
        shape = x.shape[:-1] + (self.weight.shape[1],)
        y = torch.addmm(self.bias, x.reshape(-1, x.shape[-1]), self.weight)
        return y.view(shape)


class Attention(nn.Module):
    """Attention is the fused-QKV multi-head attention of one block."""

    def __init__(self, cfg: GPTConfig, layer: int):
        super().__init__()
        self.layer = layer
        self.n_head = cfg.n_head
        self.c_attn = Conv1D(cfg.n_embd, 3 * cfg.n_embd)
        self.c_proj = Conv1D(cfg.n_embd, cfg.n_embd)

    def _heads(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        return x.view(b, t, self.n_head, c // self.n_head).transpose(1, 2)

    def forward(self, x: torch.Tensor, attend: Attend) -> torch.Tensor:
        """Returns the attention output for x."""
        q, k, v = self.c_attn(x).split(x.shape[-1], dim=2)
        y = attend(self.layer, self._heads(q), self._heads(k), self._heads(v))
        b, _, t, _ = y.shape
        return self.c_proj(y.transpose(1, 2).reshape(b, t, -1))


class MLP(nn.Module):
    """MLP is the 4x-wide feed-forward layer with the tanh GELU."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.c_fc = Conv1D(cfg.n_embd, 4 * cfg.n_embd)
        self.c_proj = Conv1D(4 * cfg.n_embd, cfg.n_embd)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """Returns the feed-forward output for x."""
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class Block(nn.Module):
    """Block is one pre-LayerNorm transformer layer."""

    def __init__(self, cfg: GPTConfig, layer: int):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_epsilon)
        self.attn = Attention(cfg, layer)
        self.ln_2 = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_epsilon)
        self.mlp = MLP(cfg)

    def forward(self, x: torch.Tensor, attend: Attend) -> torch.Tensor:
        """Returns x after this layer's attention and MLP, each added to x."""
        x = x + self.attn(self.ln_1(x), attend)
        return x + self.mlp(self.ln_2(x))


class Transformer(nn.Module):  # pylint: disable=abstract-method  # a container: GPT calls its parts
    """Transformer is GPT2Model: embeddings, blocks and the final LayerNorm."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.n_positions, cfg.n_embd)
        self.drop = nn.Dropout(cfg.dropout)
        self.h = nn.ModuleList(Block(cfg, i) for i in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd, eps=cfg.layer_norm_epsilon)
        nn.init.normal_(self.wte.weight, std=0.02)
        nn.init.normal_(self.wpe.weight, std=0.01)


def causal_attend(q, k, v, dropout: float = 0.0):
    """causal_attend is plain masked self-attention over one whole sequence."""
    t = q.shape[2]
    att = (q @ k.transpose(-1, -2)) / math.sqrt(q.shape[-1])
    mask = torch.ones(t, t, dtype=torch.bool, device=q.device).triu(1)
    att = att.masked_fill(mask, float("-inf")).softmax(dim=-1)
    if dropout > 0:
        att = F.dropout(att, dropout)
    return att @ v


class GPT(nn.Module):
    """GPT is GPT2LMHeadModel with the head tied to the token embedding."""

    def __init__(self, cfg: GPTConfig):
        super().__init__()
        self.config = cfg
        self.transformer = Transformer(cfg)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, std=0.02 / math.sqrt(2 * cfg.n_layer))

    def hidden(self, idx: torch.Tensor, pos: torch.Tensor, attend: Attend):
        """hidden runs the blocks on token ids idx at positions pos."""
        tr = self.transformer
        x = tr.drop(tr.wte(idx) + tr.wpe(pos))
        for block in tr.h:
            x = block(x, attend)
        return tr.ln_f(x)

    def logits(self, x: torch.Tensor) -> torch.Tensor:
        """logits projects hidden states onto the vocabulary (tied weights)."""
        return x @ self.transformer.wte.weight.t()

    def features(self, idx: torch.Tensor, attend: Attend | None = None):
        """features returns the final hidden states for every position of
        idx [B, T], numbered from 0. Without attend it is the plain causal
        forward used in training and as the no-cache reference."""
        t = idx.shape[1]
        if t > self.config.n_positions:
            raise ValueError(f"gpt: {t} tokens exceed n_positions")
        if attend is None:
            p = self.config.dropout if self.training else 0.0

            def attend(_layer, q, k, v):
                return causal_attend(q, k, v, p)
        pos = torch.arange(t, device=idx.device).unsqueeze(0)
        return self.hidden(idx, pos, attend)

    def forward(self, idx: torch.Tensor, attend: Attend | None = None):
        """forward returns next-token logits for every position of idx."""
        return self.logits(self.features(idx, attend))

    def num_parameters(self) -> int:
        """num_parameters counts unique parameters (the tied head once)."""
        return sum(p.numel() for p in self.parameters())

    def hf_state_dict(self) -> dict:
        """hf_state_dict returns weights under GPT2LMHeadModel's key names."""
        sd = {k: v.detach().clone() for k, v in self.state_dict().items()}
        sd["lm_head.weight"] = sd["transformer.wte.weight"]
        return sd


def load_state(model: GPT, sd: dict) -> None:
    """load_state copies a GPT-2 state_dict into model, checking every key."""
    sd = {k: v for k, v in sd.items() if not _is_buffer(k)}
    head = sd.pop("lm_head.weight", None)
    if head is not None and not torch.equal(head, sd["transformer.wte.weight"]):
        raise ValueError("gpt: lm_head.weight is not tied to transformer.wte.weight")
    model.load_state_dict(sd, strict=True)


def _is_buffer(key: str) -> bool:
    return key.endswith(".attn.bias") or key.endswith(".attn.masked_bias")


def save_pretrained(model: GPT, out_dir: str) -> None:
    """save_pretrained writes config.json and pytorch_model.bin into out_dir."""
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, CONFIG_FILE), "w", encoding="utf-8") as f:
        json.dump(model.config.to_hf(), f, indent=2, sort_keys=True)
        f.write("\n")
    torch.save(model.hf_state_dict(), os.path.join(out_dir, WEIGHTS_FILE))


def read_config(model_dir: str) -> dict:
    """read_config returns the raw config.json of a model folder."""
    with open(os.path.join(model_dir, CONFIG_FILE), encoding="utf-8") as f:
        return json.load(f)


def from_pretrained(model_dir: str, device: str = "cpu") -> GPT:
    """from_pretrained builds a GPT from config.json and pytorch_model.bin."""
    model = GPT(GPTConfig.from_hf(read_config(model_dir)))
    path = os.path.join(model_dir, WEIGHTS_FILE)
    load_state(model, torch.load(path, map_location="cpu"))
    return model.to(device).eval()
