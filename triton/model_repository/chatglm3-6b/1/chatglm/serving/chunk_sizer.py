"""How many prompt tokens an iteration of the continuous scheduler may prefill while rows decode
(config.pbtxt's `prefill_stall_target`), learnt from the iterations' own times."""
from __future__ import annotations

from typing import Optional


class ChunkSizer:
    """Prompt tokens an iteration may prefill while rows decode, learnt from the iterations themselves.

    `step` is a running mean of the time of an iteration that only decodes. After an iteration with a chunk, its
    cost in decode-only iterations says where to go: the part above one step is taken as proportional to the
    chunk's tokens, and the next chunk is sized for AIM x `target` (growing at most by half, shrinking at most to
    a quarter). Inside the band HOLD x `target` it stays, so the size does not jitter with noise. Aiming under the
    target leaves the rest for the machine's noise and for attention that grows as the prompt's context does.
    That needs no model of what a chunk costs (a forward pass's fixed cost, the context, a paced test engine),
    never goes under MIN_TOKENS (a prompt always progresses) nor over what fits the step's own pass
    (`beside_step`). It starts at PROBE_TOKENS.
    With no row decoding the whole budget is used: nothing waits."""

    MIN_TOKENS = 4  # on slow hardware a 16-token chunk alone can cost a whole decode step
    PROBE_TOKENS = 64
    WEIGHT = 0.3  # of the newest decode-only iteration in the running mean
    AIM = 0.8
    HOLD = (0.7, 0.9)

    def __init__(self, budget: int, target: Optional[float], beside_step: Optional[int] = None):
        """`beside_step`: the most prompt tokens that still fit one pass with the decode step (the engine's
        prefill bound less the step's rows), so that the chunk of an iteration with decoding rows can share
        their pass; the budget when unknown."""
        self.budget, self.target = budget, target
        self.beside_step = max(self.MIN_TOKENS, min(budget, beside_step if beside_step is not None else budget))
        self.step: Optional[float] = None
        self.chunk = min(self.beside_step, self.PROBE_TOKENS)

    def tokens(self, decoding: bool) -> int:
        if not decoding or self.target is None:  # off: fixed chunks of the whole budget
            return self.budget
        return self.chunk

    def observe(self, seconds: float, prefilled: int, decoding: bool) -> None:
        if not decoding or self.target is None:
            return
        if prefilled == 0:
            self.step = seconds if self.step is None else (1 - self.WEIGHT) * self.step + self.WEIGHT * seconds
            return
        if self.step is None or prefilled < self.chunk:  # no yardstick yet, or a prompt's last, shorter chunk
            return
        cost = seconds / self.step
        if self.HOLD[0] * self.target <= cost <= self.HOLD[1] * self.target:
            return
        scale = (self.AIM * self.target - 1.0) / max(cost - 1.0, 1e-9)
        self.chunk = int(max(self.MIN_TOKENS, min(self.beside_step, prefilled * min(1.5, max(0.25, scale)))))
