"""The batched sampler of every engine and both schedulers (torch only: 1.13 and 2.x); generation.py imports it.

- `sample_tokens`: the batched sampler (below); `SamplingTensors` holds its per-row settings on the device and
  `TokenPresence` the tokens each slot has seen (for the repetition penalty).
- `RowWarper`: the same warping as a score matrix for engines that sample themselves (HF generate).
- `guard_invalid_scores`: ChatGLM's InvalidScoreLogitsProcessor, applied per row.
- `choose_tokens`: guard + warp + one token per row, as a host list (the per-execute loop); -2 marks overflow.

The sampler's contract (what a decode step calls)::

    ids = sample_tokens(logits, params, seen=None)

- `logits`: float32 [rows, vocab] on the device; `params`: `SamplingTensors` for those rows, on the same device
  (`SamplingTensors.build(settings, counters, device, seeds)` copies two small host tensors; a step with
  preallocated pinned buffers can fill the same fields itself); `seen`: bool [rows, vocab], the tokens each row
  has seen (prompt + answer, `TokenPresence.rows(slots)`), needed only when a row's repetition_penalty != 1.
- Returns ONE int64 tensor [rows] on the device. Nothing in it synchronises with the host (no `.item()`, no
  `bool(tensor)`, no `nonzero`), so the caller's single copy of the ids is the step's only device-to-host transfer.
- A row whose warped distribution is not valid (non-finite after its own temperature / top-k / top-p, or no
  probability left) gets id -1: the caller ends that row alone; every other row keeps the id it would have had.
- Order of the warps, as ChatGLM3's chat() gets them from transformers 4.40.2's generate: ChatGLM's NaN guard and
  the repetition penalty (generate runs the penalty first; either order gives the same ids, the guard replaces a
  whole row), then temperature, top-k, top-p. Temperatures below `GREEDY_BELOW` mean greedy (argmax after
  the penalty). Top-p uses TopPLogitsWarper's rule in float32: over probabilities sorted ascending, a token goes
  when the cumulative probability up to and including it is <= 1 - top_p; the most likely token always stays.
- Randomness is counter-based: row i's uniform number is a hash of (seed_i, counter_i), where the counter is the
  number of tokens the row has sampled so far, and the token is the inverse CDF of its own distribution at that
  number. So a request with a seed gets the same tokens alone or in any batch (float32), and no generator state
  is shared between rows. Requests without a seed get a random one at admission (`random_seed`).
"""
from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import List, Optional, Sequence

import torch

from chatglm.engine.overflow import mark_overflow

CHATGLM_NAN_FALLBACK_ID = 5  # the token ChatGLM's InvalidScoreLogitsProcessor forces
GREEDY_BELOW = 1e-5  # a temperature below this is greedy (dividing by it would overflow float32 logits)
INVALID_TOKEN = -1  # sample_tokens' id for a row whose distribution is not valid
_MASK32 = 0xFFFFFFFF


@dataclass(frozen=True)
class RowSettings:
    """Sampling settings of one row (one request) of a batch."""

    temperature: float  # < GREEDY_BELOW = greedy
    top_p: float  # (0, 1]
    max_new_tokens: int  # >= 1
    top_k: int = 0  # 0 = off
    repetition_penalty: float = 1.0  # 1 = off; transformers' RepetitionPenaltyLogitsProcessor
    seed: Optional[int] = None  # None: a random seed per request

    @property
    def greedy(self) -> bool:
        return self.temperature < GREEDY_BELOW


def guard_invalid_scores(scores: torch.Tensor, fallback_id: int) -> torch.Tensor:
    """Rows with NaN/inf logits (fp16 overflow) are replaced by a one-hot on `fallback_id`, as ChatGLM does.
    No host synchronisation: every row goes through the same `where`."""
    bad = ~torch.isfinite(scores).all(dim=-1, keepdim=True)
    one_hot = torch.zeros_like(scores)
    one_hot[:, fallback_id] = 5e4
    return torch.where(bad, one_hot, scores)


def random_seed(source=None) -> int:
    """A seed for a request that did not send one (63 bits, so it fits an int64 tensor); from `source` (a
    random.Random, e.g. an engine built with a sampling seed, so that tests are reproducible) or the OS."""
    return source.getrandbits(63) if source is not None else secrets.randbits(63)


@dataclass
class SamplingTensors:
    """Per-row settings of one sampling call, on the logits' device ([rows] each)."""

    temperature: torch.Tensor  # float32; greedy rows hold 1 (their flag is `greedy`)
    greedy: torch.Tensor  # bool
    top_p_tail: torch.Tensor  # float32: 1 - top_p, computed in float64 first (as TopPLogitsWarper's python float)
    top_k: torch.Tensor  # int64, 0 = off
    penalty: torch.Tensor  # float32, 1 = off
    seed: torch.Tensor  # int64
    counter: torch.Tensor  # int64: tokens the row has sampled so far
    all_greedy: bool = False  # known on the host: every row is greedy (the sampler then only takes the argmax)

    @staticmethod
    def build(settings: Sequence[RowSettings], counters: Sequence[int], device=None,
              seeds: Optional[Sequence[int]] = None) -> "SamplingTensors":
        """From host values: one float and one integer tensor, each copied to the device once. `seeds` overrides
        the settings' seeds (the scheduler draws one per unseeded request at admission)."""
        seeds = [s.seed if s.seed is not None else 0 for s in settings] if seeds is None else list(seeds)
        floats = torch.tensor([[1.0 if s.greedy else s.temperature, 1.0 - s.top_p, s.repetition_penalty,
                                1.0 if s.greedy else 0.0] for s in settings], dtype=torch.float32).reshape(-1, 4)
        ints = torch.tensor([[int(s.top_k), int(seed), int(c)] for s, seed, c in zip(settings, seeds, counters)],
                            dtype=torch.long).reshape(-1, 3)
        if device is not None:
            floats, ints = floats.to(device, non_blocking=True), ints.to(device, non_blocking=True)
        return SamplingTensors(floats[:, 0], floats[:, 3] > 0, floats[:, 1], ints[:, 0], floats[:, 2], ints[:, 1],
                               ints[:, 2], all(s.greedy for s in settings))

    def select(self, index: torch.Tensor) -> "SamplingTensors":
        """The rows `index` (a long tensor on the same device)."""
        return SamplingTensors(*(t.index_select(0, index) for t in (
            self.temperature, self.greedy, self.top_p_tail, self.top_k, self.penalty, self.seed, self.counter)),
            self.all_greedy)


class TokenPresence:
    """Which tokens each KV-cache slot has seen (prompt and answer), as bool [slots, vocab] on the device: what
    the repetition penalty reads. Updating it with the sampled ids is a scatter on the device (no sync)."""

    def __init__(self, slots: int, vocab: int, device=None):
        self.bits = torch.zeros((slots, vocab), dtype=torch.bool, device=device)

    def start(self, slot: int, prompt: Sequence[int]) -> None:
        self.bits[slot] = False
        if prompt:
            ids = torch.tensor(list(prompt), dtype=torch.long).to(self.bits.device, non_blocking=True)
            self.bits[slot].index_fill_(0, ids, True)

    def add(self, slots: torch.Tensor, tokens: torch.Tensor) -> None:
        """Marks tokens[i] as seen by slots[i]; ids < 0 (invalid rows) change nothing."""
        index = (slots, tokens.clamp(min=0))
        # read, or, write back: one (slot, token) pair per row, so no duplicates (bool accumulate is not on CUDA)
        self.bits.index_put_(index, self.bits[index] | (tokens >= 0))

    def rows(self, slots: torch.Tensor) -> torch.Tensor:
        return self.bits.index_select(0, slots)


def _fmix32(h: torch.Tensor) -> torch.Tensor:
    """MurmurHash3's 32-bit finaliser on int64 tensors holding values in [0, 2**32) (products wrap in int64, and
    the mask keeps their low 32 bits, which is what the 32-bit arithmetic would give)."""
    h = h ^ (h >> 16)
    h = (h * 0x85EBCA6B) & _MASK32
    h = h ^ (h >> 13)
    h = (h * 0xC2B2AE35) & _MASK32
    return h ^ (h >> 16)


def uniforms(seed: torch.Tensor, counter: torch.Tensor) -> torch.Tensor:
    """One float32 number in (0, 1) per row from (seed, counter); the same pair always gives the same number."""
    h = _fmix32(seed & _MASK32)
    h = _fmix32(h ^ ((seed >> 32) & _MASK32))
    h = _fmix32(h ^ (counter & _MASK32))
    return ((h >> 8).to(torch.float32) + 0.5) / float(1 << 24)


def penalize(scores: torch.Tensor, penalty: torch.Tensor, seen: Optional[torch.Tensor]) -> torch.Tensor:
    """transformers' RepetitionPenaltyLogitsProcessor per row: a seen token's score is divided by the penalty if
    positive, multiplied by it if negative."""
    if seen is None:
        return scores
    p = penalty.unsqueeze(1)
    return torch.where(seen, torch.where(scores < 0, scores * p, scores / p), scores)


def _warp_sorted(scores: torch.Tensor, params: SamplingTensors):
    """Temperature, top-k and top-p of every row: (scaled scores sorted ascending, their vocabulary ids, the
    removed mask in that order)."""
    scaled = scores / params.temperature.unsqueeze(1)
    ordered, order = torch.sort(scaled, dim=-1, descending=False)
    vocab = scores.shape[-1]
    # Top-k (TopKLogitsWarper): remove what is below the k-th largest score (ties with it stay); 0 = off.
    k = torch.where(params.top_k > 0, params.top_k.clamp(max=vocab), torch.full_like(params.top_k, vocab))
    kth = ordered.gather(1, (vocab - k).unsqueeze(1))
    removed = ordered < kth
    # Top-p (TopPLogitsWarper) over what top-k kept, in float32.
    probs = torch.softmax(ordered.masked_fill(removed, float("-inf")), dim=-1)
    removed = removed | (probs.cumsum(dim=-1) <= params.top_p_tail.unsqueeze(1))
    removed[:, -1] = False  # min_tokens_to_keep = 1: the most likely token always stays
    return ordered, order, removed


def sample_tokens(logits: torch.Tensor, params: SamplingTensors, seen: Optional[torch.Tensor] = None,
                  fallback_id: int = CHATGLM_NAN_FALLBACK_ID) -> torch.Tensor:
    """One token id per row (int64 [rows], on the device; -1 = this row's distribution is invalid). See the
    contract at the top of this file."""
    scores = penalize(guard_invalid_scores(logits.float(), fallback_id), params.penalty, seen)
    best = scores.argmax(dim=-1)
    greedy_ok = torch.isfinite(scores.gather(1, best.unsqueeze(1)).squeeze(1))
    if params.all_greedy:  # what the general path gives greedy rows, without warping and drawing for nobody
        return torch.where(greedy_ok, best, torch.full_like(best, INVALID_TOKEN))
    ordered, order, removed = _warp_sorted(scores, params)
    probs = torch.softmax(ordered.masked_fill(removed, float("-inf")), dim=-1)
    cdf = probs.cumsum(dim=-1)
    total = cdf[:, -1]
    # Inverse CDF: the first position whose cumulative probability reaches u * total; removed tokens (at the
    # front, probability 0) are never reached because u > 0.
    u = uniforms(params.seed, params.counter) * total
    position = (cdf < u.unsqueeze(1)).sum(dim=-1).clamp(max=scores.shape[-1] - 1)
    drawn = order.gather(1, position.unsqueeze(1)).squeeze(1)
    sampled_ok = torch.isfinite(total) & (total > 0) & torch.isfinite(ordered).all(dim=-1)
    ids = torch.where(params.greedy, best, drawn)
    ok = torch.where(params.greedy, greedy_ok, sampled_ok)
    return torch.where(ok, ids, torch.full_like(ids, INVALID_TOKEN))


class RowWarper:
    """The same guard-free warping (penalty, temperature, top-k, top-p) as a score matrix, for engines that sample
    from it themselves (HF generate: softmax + multinomial). Greedy rows keep only their argmax, so sampling picks
    it with probability 1 and the whole batch can share one sampling call."""

    def __init__(self, settings: Sequence[RowSettings]):
        self.settings = list(settings)
        self.params = SamplingTensors.build(self.settings, [0] * len(self.settings))
        self.penalized = any(s.repetition_penalty != 1.0 for s in self.settings)

    def __call__(self, scores: torch.Tensor, rows: Optional[torch.Tensor] = None,
                 seen: Optional[torch.Tensor] = None) -> torch.Tensor:
        """`rows` maps the rows of `scores` to rows of the settings (for engines that drop finished rows)."""
        params = self.params if rows is None else self.params.select(rows.cpu())
        params = SamplingTensors(*(t.to(scores.device) for t in (
            params.temperature, params.greedy, params.top_p_tail, params.top_k, params.penalty, params.seed, params.counter)))
        scores = penalize(scores.float(), params.penalty, seen)
        ordered, order, removed = _warp_sorted(scores, params)
        warped = torch.empty_like(scores).scatter_(1, order, ordered.masked_fill(removed, float("-inf")))
        best = scores.argmax(dim=-1, keepdim=True)
        one_hot = torch.full_like(scores, float("-inf")).scatter(1, best, 0.0)
        return torch.where(params.greedy.unsqueeze(1), one_hot, warped)


def seen_from_ids(input_ids: torch.Tensor, vocab: int) -> torch.Tensor:
    """bool [B, vocab]: the tokens of each row of `input_ids` (HF passes the prompt + answer so far)."""
    seen = torch.zeros((input_ids.shape[0], vocab), dtype=torch.bool, device=input_ids.device)
    return seen.scatter_(1, input_ids.clamp(0, vocab - 1), True)


def choose_tokens(scores: torch.Tensor, settings: Sequence[RowSettings], counters: Sequence[int],
                  seeds: Sequence[int], seen: Optional[torch.Tensor] = None,
                  fallback_id: int = CHATGLM_NAN_FALLBACK_ID, fail_on_overflow: bool = False) -> List[int]:
    """One token per row of `scores` ([B, V] logits), row i sampled with settings[i] at its counters[i]-th token
    with seeds[i]; -1 for a row whose distribution is invalid, -2 (fail_on_overflow) for one whose logits are not
    finite. One device-to-host copy (the ids)."""
    ids = sample_tokens(scores, SamplingTensors.build(settings, counters, scores.device, seeds), seen, fallback_id)
    return (mark_overflow(scores, ids) if fail_on_overflow else ids).tolist()
