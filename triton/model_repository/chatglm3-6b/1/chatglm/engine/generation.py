"""Engine-independent pieces of generation (torch only: 1.13 and 2.x).

Every engine and both schedulers use these, so sampling, stopping, cancellation and streaming are per row alike:

- `left_pad`: ChatGLM-style left padding (ids 0, mask 0, position 0; real tokens at positions 0..n-1).
- The sampler (`sample_tokens`, `SamplingTensors`, `TokenPresence`, `RowWarper`, `guard_invalid_scores`,
  `choose_tokens`, `RowSettings`) is in chatglm.engine.sampling, with its contract; imported here too, so the
  engines and schedulers import every piece of generation from this module.
- `RowProgress`: one row's tokens and how it ended (stop id, its own max_new_tokens).
- `BatchTracker`: a batch of RowProgress for one per-execute generation; polls cancellation, forwards kept tokens.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import List, Optional, Protocol, Sequence

import torch

from chatglm.engine.overflow import OVERFLOW_TOKEN, overflow_message
from chatglm.engine.sampling import (  # noqa: F401 (re-exported: the sampler's names, importable from here)
    CHATGLM_NAN_FALLBACK_ID, GREEDY_BELOW, INVALID_TOKEN, RowSettings, RowWarper, SamplingTensors, TokenPresence,
    choose_tokens, guard_invalid_scores, random_seed, sample_tokens, seen_from_ids)

FINISH_STOP = "stop"
FINISH_LENGTH = "length"
FINISH_CANCELLED = "cancelled"
FINISH_FAILED = "failed"  # this row alone failed (RowResult.error says why); answered as an error


@dataclass
class RowResult:
    token_ids: List[int]
    finish_reason: str
    error: Optional[str] = None  # FINISH_FAILED: what the client is told


def invalid_distribution_message(settings: RowSettings) -> str:
    """The error of a row that sample_tokens gave id -1 (its own settings made its distribution invalid)."""
    # A penalty below 1 multiplies scores: it can overflow them as a small temperature does, so name it too.
    penalty = " or a repetition_penalty closer to 1" if settings.repetition_penalty < 1 else ""
    return (f"sampling failed: the next-token probabilities became non-finite with this request's settings "
            f"(temperature {settings.temperature:g}, top_p {settings.top_p:g}, top_k {settings.top_k}, "
            f"repetition_penalty {settings.repetition_penalty:g}); use a larger temperature{penalty}, or 0 for greedy")


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

    def result(self, reason: Optional[str] = None, error: Optional[str] = None) -> RowResult:
        return RowResult(list(self.tokens), reason or self.finish or FINISH_LENGTH, error)


class BatchTracker:
    """Per-row state of one batched generation; engines call `step` once per decode step.

    `step(tokens, rows)` receives the token sampled for each active row; finished rows are ignored, stop tokens
    end a row without being reported, a row ends on its own max_new_tokens, and every active row is polled for
    cancellation at every step. `done_mask()` is what a per-row stopping criterion returns.
    """

    def __init__(self, settings: Sequence[RowSettings], stop_ids: Sequence[int], observer: GenerationObserver,
                 overflow_dtype: str = "float16"):  # the dtype named in the error of a row whose logits overflowed
        self.settings = list(settings)
        self.overflow_dtype = overflow_dtype
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
            if token < 0:  # -2: the model's logits were not finite; -1: this row's distribution is invalid
                self._finish(row, FINISH_FAILED, overflow_message(self.overflow_dtype) if token == OVERFLOW_TOKEN
                             else invalid_distribution_message(self.settings[row]))
                continue
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

    def _finish(self, row: int, reason: str, error: Optional[str] = None) -> None:
        self.rows[row].finish = reason
        if not self.reported[row]:
            self.reported[row] = True
            self.observer.on_finished(row, self.rows[row].result(reason, error))
