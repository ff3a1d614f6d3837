"""A slot-based KV cache for batched decoding of sequences of different lengths.

Each running sequence owns one slot: a row of per-layer key and value tensors
shaped ``[max_batch, n_head, n_positions, head_dim]``. The running sequences
always sit in slots ``0 .. n-1`` (a finishing sequence's slot is filled by
moving the last one), so a decode step reads a view of the first ``n`` rows,
never a copy. Keys past a sequence's own length are masked out.
"""

from __future__ import annotations

import math

import torch

from gpt import GPTConfig, causal_attend


class SlotCache:
    """SlotCache holds keys and values for up to max_batch sequences."""

    def __init__(self, cfg: GPTConfig, max_batch: int, device="cpu", dtype=torch.float32):
        shape = (max_batch, cfg.n_head, cfg.n_positions, cfg.head_dim)
        self.k = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(cfg.n_layer)]
        self.v = [torch.zeros(shape, device=device, dtype=dtype) for _ in range(cfg.n_layer)]
        self.max_batch = max_batch
        self.n_positions = cfg.n_positions
        self.scale = math.sqrt(cfg.head_dim)

    def prefill_attend(self, slot: int):
        """prefill_attend returns an attend function that runs causal
        attention over one whole prompt and stores its keys and values in
        slot (positions 0 .. T-1)."""
        def attend(layer, q, k, v):
            t = k.shape[2]
            self.k[layer][slot, :, :t] = k[0]
            self.v[layer][slot, :, :t] = v[0]
            return causal_attend(q, k, v)
        return attend

    def decode_attend(self, pos: torch.Tensor):
        """decode_attend returns an attend function for one new token per
        slot 0 .. B-1, where pos[b] is that token's position: it stores the
        token's key and value, then attends over positions 0 .. pos[b]."""
        b = pos.shape[0]
        rows = torch.arange(b, device=pos.device)
        t = int(pos.max()) + 1
        cols = torch.arange(t, device=pos.device)
        mask = torch.zeros(b, 1, 1, t, device=pos.device, dtype=self.k[0].dtype)
        mask.masked_fill_((cols.unsqueeze(0) > pos.unsqueeze(1)).view(b, 1, 1, t), float("-inf"))

        def attend(layer, q, k, v):
            self.k[layer][rows, :, pos] = k[:, :, 0]
            self.v[layer][rows, :, pos] = v[:, :, 0]
            keys = self.k[layer][:b, :, :t]
            att = (q @ keys.transpose(-1, -2)) / self.scale + mask
            return att.softmax(dim=-1) @ self.v[layer][:b, :, :t]
        return attend

    def move(self, src: int, dst: int, length: int) -> None:
        """move copies the first length positions of slot src into slot dst."""
        for keys, values in zip(self.k, self.v):
            keys[dst, :, :length] = keys[src, :, :length]
            values[dst, :, :length] = values[src, :, :length]
