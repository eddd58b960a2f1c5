"""The continuous scheduler's prefill side (a part of ContinuousScheduler, chatglm/serving/continuous_scheduler.py):
which prompt chunks an iteration runs, admitting waiting requests into free rows (code completions first), the
chunks' own forward pass, and out-of-memory in a chunk failing only its request."""
from __future__ import annotations

from typing import List

import torch
import triton_python_backend_utils as pb_utils

import chatglm.log as log
from chatglm.engine.generation import TokenPresence
from chatglm.engine.types import PrefillChunk
from chatglm.serving.faults import is_out_of_memory
from chatglm.serving.scheduler_rows import Row


class PrefillAdmission:
    """Mixed into ContinuousScheduler: uses its engine, limits, lock, rows and metric figures."""

    def _plan_prefill(self, budget: int):
        """This iteration's prompt chunks within `budget` tokens, code completions first (scheduler_rows): rows of
        completions still in their prompt, waiting completions admitted while slots are free, then the same for
        chats. Returns (rows, chunks)."""
        chunks, rows = [], []

        def take(row: Row) -> None:
            nonlocal budget
            stop = min(len(row.prompt), row.prefilled + budget)
            chunks.append(PrefillChunk(row.slot, row.prompt, row.prefilled, stop))
            rows.append(row)
            budget -= stop - row.prefilled

        def admit(next_row) -> None:
            while budget > 0 and len(self._active) < self.limits.max_active_rows:
                with self._lock:
                    row = next_row()
                if row is None:
                    return
                row.slot = self.engine.open_row()
                row.admitted_step = self.steps
                self._active.append(row)
                take(row)

        for completions in (True, False):
            for row in [r for r in self._active if r.completion == completions and not r.decoding]:
                if budget > 0:
                    take(row)
            admit(self._waiting.pop_completion if completions else
                  lambda: self._waiting.popleft() if self._waiting else None)
        for row, chunk in zip(rows, chunks):
            if chunk.start == 0 and row.reply.settings.repetition_penalty != 1.0:
                self._presence_of(None).start(row.slot, row.prompt)
        return rows, chunks

    def _run_prefill(self, rows: List[Row], chunks: List[PrefillChunk]):
        """The chunks' own forward pass; returns the rows whose prompt is now complete, their logits and the
        number of prompt tokens run."""
        try:
            logits = self.engine.prefill(chunks)
        except Exception as exc:  # noqa: BLE001 - out of memory: retried chunk by chunk, the culprit fails alone
            if not is_out_of_memory(exc):
                raise
            rows, chunks, logits = self._prefill_alone(rows, chunks, exc)
            if not chunks:
                return [], None, 0
        done = [i for i, c in enumerate(chunks) if c.complete]
        if done and len(done) < len(chunks):
            logits = logits.index_select(0, torch.tensor(done, dtype=torch.long, device=logits.device))
        return self._prefilled(rows, chunks), (logits if done else None), sum(c.stop - c.start for c in chunks)

    def _prefilled(self, rows: List[Row], chunks: List[PrefillChunk]) -> List[Row]:
        """Books chunks that ran; the rows whose prompt they completed, in order."""
        self._figures.increment("prefill_tokens", sum(c.stop - c.start for c in chunks))
        for row, chunk in zip(rows, chunks):
            row.prefilled = chunk.stop
        return [row for row, chunk in zip(rows, chunks) if chunk.complete]

    def _prefill_alone(self, rows: List[Row], chunks: List[PrefillChunk], error: Exception):
        """After an out-of-memory prefill: with several chunks, each again on its own; a chunk that runs out of
        memory alone (or the only chunk) ends its request. A failed chunk advanced no cache length, so nothing
        of it is ever read and the other rows are unaffected."""
        self._release_cached_memory()
        kept = []
        for row, chunk in zip(rows, chunks):
            logits = None
            if len(chunks) > 1:
                try:
                    logits = self.engine.prefill([chunk])
                except Exception as exc:  # noqa: BLE001 - only out of memory is this row's own failure
                    if not is_out_of_memory(exc):
                        raise
                    error = exc
            if logits is None:
                self._release_cached_memory()
                log.warn(f"request {row.reply.channel.request_id()}: out of memory in its prefill chunk "
                         f"[{chunk.start}, {chunk.stop}): {error}")
                self._retire_failed(row, f"out of memory while reading the prompt ({len(row.prompt)} tokens, chunk of "
                                         f"{chunk.stop - chunk.start}): send a shorter prompt or history, or lower "
                                         f"prefill_token_budget / max_active_rows", pb_utils.TritonError.INTERNAL)
                continue
            kept.append((row, chunk, logits))
        if not kept:
            return [], [], None
        return [k[0] for k in kept], [k[1] for k in kept], torch.cat([k[2] for k in kept])

    def _release_cached_memory(self) -> None:
        if getattr(getattr(self.engine, "device", None), "type", None) == "cuda":
            torch.cuda.empty_cache()

    def _presence_of(self, logits) -> TokenPresence:
        if self._presence is None:
            vocab = int(logits.shape[-1]) if logits is not None else int(self.engine.config.padded_vocab_size)
            self._presence = TokenPresence(self.engine.max_rows, vocab, self.engine.device)
        return self._presence
