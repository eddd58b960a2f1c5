"""Engine-independent pieces of generation.

Every engine and both schedulers use these, so per-row sampling, per-row stopping, cancellation and streaming
behave the same whatever runs the forward pass:

- `left_pad`: ChatGLM-style left padding (ids 0, mask 0, position 0; real tokens at positions 0..n-1).
- `RowWarper`: per-row temperature / top-p (temperature 0 = greedy) on a [B, V] score matrix.
- `guard_invalid_scores`: ChatGLM's InvalidScoreLogitsProcessor, applied per row.
- `choose_tokens`: guard + warper + one token per row (engines with their own decode loop, the scheduler).
- `RowProgress`: one row's tokens and how it ended (stop id, its own max_new_tokens).
- `BatchTracker`: a batch of RowProgress for one per-execute generation; polls cancellation and forwards kept
  tokens to an observer.
Only torch is needed (works on torch 1.13 and 2.x).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Protocol, Sequence

import torch

FINISH_STOP = "stop"
FINISH_LENGTH = "length"
FINISH_CANCELLED = "cancelled"
CHATGLM_NAN_FALLBACK_ID = 5  # the token ChatGLM's InvalidScoreLogitsProcessor forces


@dataclass(frozen=True)
class RowSettings:
    """Sampling settings of one row (one request) of a batch."""

    temperature: float  # 0 = greedy
    top_p: float  # (0, 1]
    max_new_tokens: int  # >= 1


@dataclass
class RowResult:
    token_ids: List[int]
    finish_reason: str


class GenerationObserver(Protocol):
    """What an engine reports to while it generates (model.py implements it per batch)."""

    def on_token(self, row: int, token_id: int) -> None:
        """A kept token of `row` (stop tokens are not reported)."""

    def cancelled(self, rows: Sequence[int]) -> Sequence[bool]:
        """Polled once per decode step with every row still generating; True = that row's client went away.
        One call per step lets the implementation check all rows concurrently (each check may be an IPC)."""

    def on_finished(self, row: int, result: RowResult) -> None:
        """Called exactly once per row, as soon as that row is finished."""


def left_pad(prompts: Sequence[Sequence[int]], pad_id: int = 0, device=None):
    """Returns input_ids, attention_mask, position_ids ([B, T] long tensors) for left-padded prompts."""
    if not prompts or any(len(p) == 0 for p in prompts):
        raise ValueError("every prompt needs at least one token")
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), pad_id, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    pos = torch.zeros((len(prompts), width), dtype=torch.long)
    for i, p in enumerate(prompts):
        n = len(p)
        ids[i, width - n:] = torch.tensor(list(p), dtype=torch.long)
        mask[i, width - n:] = 1
        pos[i, width - n:] = torch.arange(n, dtype=torch.long)
    if device is not None:
        ids, mask, pos = ids.to(device), mask.to(device), pos.to(device)
    return ids, mask, pos


def guard_invalid_scores(scores: torch.Tensor, fallback_id: int) -> torch.Tensor:
    """Rows with NaN/inf logits (fp16 overflow) are replaced by a one-hot on `fallback_id`, as ChatGLM does."""
    finite = torch.isfinite(scores)
    if bool(finite.all()):  # the usual case: one check for the whole batch
        return scores
    bad = ~finite.all(dim=-1)
    scores = scores.clone()
    scores[bad] = 0.0
    scores[bad, fallback_id] = 5e4
    return scores


class RowWarper:
    """Per-row temperature and nucleus filtering; the result is meant for softmax + multinomial sampling.

    Greedy rows (temperature 0) keep only their argmax, so sampling picks it with probability 1 and the whole
    batch can share one sampling call.
    """

    def __init__(self, settings: Sequence[RowSettings]):
        self.temperature = torch.tensor([s.temperature for s in settings], dtype=torch.float32)
        self.top_p = torch.tensor([s.top_p for s in settings], dtype=torch.float32)

    def __call__(self, scores: torch.Tensor, rows: Optional[torch.Tensor] = None) -> torch.Tensor:
        """`rows` maps the rows of `scores` to rows of the settings (for engines that drop finished rows)."""
        temp = self.temperature if rows is None else self.temperature.index_select(0, rows.cpu())
        top_p = self.top_p if rows is None else self.top_p.index_select(0, rows.cpu())
        temp = temp.to(scores.device)
        top_p = top_p.to(scores.device)
        scores = scores.float()
        greedy = temp <= 0
        scaled = scores / torch.where(greedy, torch.ones_like(temp), temp).unsqueeze(1)

        # Nucleus, only on sampled rows that ask for it (a full-vocabulary sort per row is the costly part): drop
        # the tail whose cumulative probability before it already reaches top_p; the top token always stays.
        nucleus = (~greedy) & (top_p < 1.0)
        if bool(nucleus.any()):
            index = nucleus.nonzero().squeeze(1)
            sub = scaled.index_select(0, index)
            sorted_scores, order = torch.sort(sub, dim=-1, descending=True)
            probs = torch.softmax(sorted_scores, dim=-1)
            remove_sorted = (probs.cumsum(dim=-1) - probs) >= top_p.index_select(0, index).unsqueeze(1)
            remove_sorted[:, 0] = False
            remove = torch.zeros_like(remove_sorted).scatter(1, order, remove_sorted)
            scaled = scaled.index_copy(0, index, sub.masked_fill(remove, float("-inf")))

        if bool(greedy.any()):
            best = scores.argmax(dim=-1, keepdim=True)
            one_hot = torch.full_like(scaled, float("-inf")).scatter(1, best, 0.0)
            scaled = torch.where(greedy.unsqueeze(1), one_hot, scaled)
        return scaled

    def choose(self, scores: torch.Tensor, rows: Optional[torch.Tensor] = None,
               generator: Optional[torch.Generator] = None) -> torch.Tensor:
        """One token per row: argmax for greedy rows, a sample from the warped distribution for the others
        (for engines with their own decode loop; HF generate samples the output of __call__ itself)."""
        temp = self.temperature if rows is None else self.temperature.index_select(0, rows.cpu())
        if bool((temp <= 0).all()):
            return scores.argmax(dim=-1)
        probs = torch.softmax(self(scores, rows), dim=-1)
        return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(1)


def choose_tokens(scores: torch.Tensor, settings: Sequence[RowSettings], generator: Optional[torch.Generator] = None,
                  fallback_id: int = CHATGLM_NAN_FALLBACK_ID) -> List[int]:
    """One token per row of `scores` ([B, V] logits), row i sampled with settings[i]."""
    scores = guard_invalid_scores(scores, fallback_id)
    if all(s.temperature <= 0 for s in settings):  # all greedy: no warper to build
        return scores.argmax(dim=-1).tolist()
    return RowWarper(settings).choose(scores, generator=generator).tolist()


class RowProgress:
    """The tokens of one row and how it ended: a stop id ends it without being kept, and it ends on its own
    max_new_tokens (`limit`)."""

    def __init__(self, limit: int, stop_ids: frozenset):
        self.limit = limit
        self.stop_ids = stop_ids
        self.tokens: List[int] = []
        self.finish: Optional[str] = None

    def accept(self, token: int) -> bool:
        """Takes the row's next token; True if it is kept (streamed), False if it was a stop id."""
        if token in self.stop_ids:
            self.finish = FINISH_STOP
            return False
        self.tokens.append(token)
        if len(self.tokens) >= self.limit:
            self.finish = FINISH_LENGTH
        return True

    def result(self, reason: Optional[str] = None) -> RowResult:
        return RowResult(list(self.tokens), reason or self.finish or FINISH_LENGTH)


class BatchTracker:
    """Per-row state of one batched generation; engines call `step` once per decode step.

    `step(tokens, rows)` receives the token sampled for each active row; finished rows are ignored, stop tokens
    end a row without being reported, a row ends on its own max_new_tokens, and every active row is polled for
    cancellation at every step. `done_mask()` is what a per-row stopping criterion returns.
    """

    def __init__(self, settings: Sequence[RowSettings], stop_ids: Sequence[int], observer: GenerationObserver):
        self.settings = list(settings)
        self.stop_ids = frozenset(int(i) for i in stop_ids)
        self.observer = observer
        self.rows = [RowProgress(s.max_new_tokens, self.stop_ids) for s in settings]
        self.reported = [False] * len(settings)

    @property
    def size(self) -> int:
        return len(self.settings)

    @property
    def tokens(self) -> List[List[int]]:
        return [r.tokens for r in self.rows]

    @property
    def finish(self) -> List[Optional[str]]:
        return [r.finish for r in self.rows]

    def active_rows(self) -> List[int]:
        return [i for i, r in enumerate(self.rows) if r.finish is None]

    def all_done(self) -> bool:
        return all(r.finish is not None for r in self.rows)

    def done_mask(self, device=None) -> torch.Tensor:
        return torch.tensor([r.finish is not None for r in self.rows], dtype=torch.bool, device=device)

    def poll_cancelled(self) -> None:
        """Ends rows whose client went away (also used before the first forward pass)."""
        rows = self.active_rows()
        if not rows:
            return
        for row, gone in zip(rows, self.observer.cancelled(rows)):
            if gone:
                self._finish(row, FINISH_CANCELLED)

    def step(self, tokens: Sequence[int], rows: Optional[Sequence[int]] = None) -> None:
        rows = range(len(tokens)) if rows is None else rows
        for row, token in zip(rows, tokens):
            progress = self.rows[row]
            if progress.finish is not None:
                continue
            token = int(token)
            if progress.accept(token):
                self.observer.on_token(row, token)
            if progress.finish is not None:
                self._finish(row, progress.finish)
        self.poll_cancelled()

    def finish_remaining(self, reason: str) -> None:
        """Ends every row still open (e.g. the engine hit its own length limit or failed)."""
        for row in self.active_rows():
            self._finish(row, reason)

    def results(self) -> List[RowResult]:
        return [r.result() for r in self.rows]

    def _finish(self, row: int, reason: str) -> None:
        self.rows[row].finish = reason
        if not self.reported[row]:
            self.reported[row] = True
            self.observer.on_finished(row, self.rows[row].result(reason))
