"""Next-token choice: greedy, temperature and nucleus (top-p) sampling."""

from __future__ import annotations

import torch


def choose(logits: torch.Tensor, temperature: float, top_p: float, gen: torch.Generator | None) -> int:
    """choose picks a token id from one row of logits.

    temperature 0 is greedy (argmax, ties to the lowest id). Otherwise the
    logits are divided by temperature, cut to the smallest set of tokens
    whose probability reaches top_p, and sampled with gen.
    """
    if temperature <= 0:
        return int(torch.argmax(logits))
    probs = torch.softmax(logits.float() / temperature, dim=-1)
    if top_p < 1.0:
        probs = nucleus(probs, top_p)
    return int(torch.multinomial(probs, 1, generator=gen))


def nucleus(probs: torch.Tensor, top_p: float) -> torch.Tensor:
    """nucleus zeroes every token outside the top-p set; the most likely
    token is always kept. The result is not renormalised (multinomial does
    not need it)."""
    sorted_p, order = torch.sort(probs, descending=True)
    before = torch.cumsum(sorted_p, dim=-1) - sorted_p
    sorted_p = sorted_p.masked_fill(before >= top_p, 0.0)
    return torch.zeros_like(probs).scatter(-1, order, sorted_p)


def generator(seed: int | None) -> torch.Generator:
    """generator returns a CPU generator seeded with seed, or randomly."""
    gen = torch.Generator()
    if seed is None:
        gen.seed()
    else:
        gen.manual_seed(seed)
    return gen
