"""One token per row chosen on the device, without waiting on the host: the decode step's sampler.

`sample_tokens(scores, settings, generator)` returns ONE int64 tensor [rows] on the scores' device: the token of
each row, or -1 for a row whose distribution is not a distribution (its temperature or top-p leave nothing
finite): that row alone ends, on the host, when the ids are read back. Everything that decides the shape of the
work (which rows are greedy, which use top-p) is read from the settings on the host, never from device values,
so no step of it synchronises:

- non-finite logits (fp16 overflow) become a one-hot on ChatGLM's fallback id, as its InvalidScoreLogitsProcessor
  does, through torch.where instead of a branch on the device's answer;
- greedy rows (temperature 0) take the argmax;
- sampled rows: temperature, then top-p on the rows that ask for it, then a draw by the exponential race
  (argmax of p / E with E ~ Exp(1), which picks index i with probability p_i), because torch.multinomial checks
  its input on the host on some devices.

The continuous scheduler calls it through one seam (chatglm.serving.continuous_scheduler.SAMPLER); a batched
sampler with top-k, repetition penalty and per-request seeds replaces it there with the same contract.
"""
from __future__ import annotations

from typing import Optional, Sequence

import torch

from chatglm.engine.generation import CHATGLM_NAN_FALLBACK_ID, RowSettings

INVALID_TOKEN = -1


def sample_tokens(scores: torch.Tensor, settings: Sequence[RowSettings], generator: Optional[torch.Generator] = None,
                  fallback_id: int = CHATGLM_NAN_FALLBACK_ID) -> torch.Tensor:
    """int64 [rows] token ids of `scores` ([rows, V] logits), row i chosen with settings[i]; -1 = invalid row."""
    scores = scores.float()
    broken = ~torch.isfinite(scores).all(dim=-1, keepdim=True)
    fallback = torch.zeros_like(scores[:1]).index_fill_(1, _index([fallback_id], scores.device), 5e4)
    scores = torch.where(broken, fallback, scores)
    best = scores.argmax(dim=-1)
    greedy = [s.temperature <= 0 for s in settings]
    if all(greedy):
        return best

    temperature = _values([s.temperature if s.temperature > 0 else 1.0 for s in settings], scores.device)
    scaled = scores / temperature.unsqueeze(1)
    nucleus = [i for i, s in enumerate(settings) if not greedy[i] and s.top_p < 1.0]
    if nucleus:  # the sort over the vocabulary is the costly part: only the rows that ask for it
        index = _index(nucleus, scores.device)
        top_p = _values([settings[i].top_p for i in nucleus], scores.device)
        sub = scaled.index_select(0, index)
        ordered, order = torch.sort(sub, dim=-1, descending=True)
        probs = torch.softmax(ordered, dim=-1)
        remove = (probs.cumsum(dim=-1) - probs) >= top_p.unsqueeze(1)  # the mass before it already reaches top_p
        remove[:, 0] = False  # the top token always stays
        sub = sub.masked_fill(torch.zeros_like(remove).scatter(1, order, remove), float("-inf"))
        scaled = scaled.index_copy(0, index, sub)
    probs = torch.softmax(scaled, dim=-1)
    race = torch.empty_like(probs).exponential_(generator=generator)
    sampled = (probs / race).argmax(dim=-1)
    valid = torch.isfinite(probs).all(dim=-1)
    sampled = torch.where(valid, sampled, torch.full_like(sampled, INVALID_TOKEN))
    return torch.where(_flags(greedy, scores.device), best, sampled)


def _host(values, dtype) -> torch.Tensor:
    tensor = torch.tensor(values, dtype=dtype)
    return tensor.pin_memory() if torch.cuda.is_available() else tensor


def _values(values, device) -> torch.Tensor:
    return _host(values, torch.float32).to(device, non_blocking=True)


def _index(values, device) -> torch.Tensor:
    return _host(values, torch.long).to(device, non_blocking=True)


def _flags(values, device) -> torch.Tensor:
    return _host(values, torch.bool).to(device, non_blocking=True)
