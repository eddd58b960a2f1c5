"""The continuous scheduler's rows (chatglm/serving/continuous_scheduler.py): its limits, one request inside it,
and the queue of requests waiting for a row, where code completions go first.

Completions (`infill`) are short, many, cancelled at every keystroke and waited for by a person typing; a chat
answer streams for seconds. A waiting completion is therefore admitted before every waiting chat request, and its
prompt is prefilled before the rest of a long chat prompt: it is never stuck behind long chat answers or prompts.
Among completions, and among chats, the order of arrival is kept."""
from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Deque, Iterator, Optional

from chatglm.engine.generation import RowProgress, random_seed
from chatglm.serving.reply import Reply


@dataclass(frozen=True)
class SchedulerLimits:
    max_active_rows: int
    max_waiting: int  # 0 = unbounded
    prefill_token_budget: int
    stream_interval: float  # seconds between two deltas of a request
    prefill_stall_target: Optional[float] = 2.0  # an iteration with a chunk ≤ this many decode steps; None = off
    idle_gather: float = 0.0  # seconds an idle engine waits for a burst to fill its rows (ContinuousScheduler._gather)


class Row:
    """A request inside the scheduler: its KV cache slot, how much of its prompt is in the cache, its tokens."""

    def __init__(self, reply: Reply, stop_ids: frozenset, seeds=None):
        self.reply = reply
        self.prompt = reply.plan.ids
        self.completion = reply.plan.infill is not None  # a code completion: admitted and prefilled first
        self.progress = RowProgress(reply.settings.max_new_tokens, stop_ids)
        self.slot: Optional[int] = None
        self.prefilled = 0
        self.last_token: Optional[int] = None
        self.admitted_step: Optional[int] = None
        self.first_token_step: Optional[int] = None
        settings = reply.settings
        self.seed = settings.seed if settings.seed is not None else random_seed(seeds)
        self.sampled = 0  # tokens sampled so far: the counter of the row's random numbers

    @property
    def decoding(self) -> bool:
        return self.prefilled == len(self.prompt)


class WaitingRows:
    """Requests waiting for a row: completions first, then chats, each in order of arrival."""

    def __init__(self):
        self._completions: Deque[Row] = deque()
        self._chats: Deque[Row] = deque()

    def append(self, row: Row) -> None:
        (self._completions if row.completion else self._chats).append(row)

    def popleft(self) -> Row:
        return self._completions.popleft() if self._completions else self._chats.popleft()

    def has_completion(self) -> bool:
        return bool(self._completions)

    def pop_completion(self) -> Optional[Row]:
        return self._completions.popleft() if self._completions else None

    def remove(self, row: Row) -> None:
        (self._completions if row.completion else self._chats).remove(row)

    def clear(self) -> None:
        self._completions.clear()
        self._chats.clear()

    def __len__(self) -> int:
        return len(self._completions) + len(self._chats)

    def __iter__(self) -> Iterator[Row]:
        yield from self._completions
        yield from self._chats
