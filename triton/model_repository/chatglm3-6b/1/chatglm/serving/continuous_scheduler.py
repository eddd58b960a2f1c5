"""Scheduler `continuous` (the default): requests join a running generation at the next step.

execute() only validates and calls `submit`, which queues the request (or refuses it at once when the waiting
queue is full) and returns. One engine thread owns the model; woken from idle by chat requests, it first waits
briefly for the rest of a burst (`idle_gather_ms`, `_gather`; never for a completion, never while rows run), then
repeats an iteration:

1. take the latest cancellation check (chatglm/serving/responder.py): cancelled rows end at once, their slots are free;
2. prefill (chatglm/serving/prefill_admission.py): rows still in their prompt continue, then waiting requests are
   admitted while slots are free — code completions (`infill`) before chats in both (chatglm/serving/scheduler_rows.py)
   — within a budget of prompt tokens per iteration (a long prompt is prefilled in chunks over several iterations); while
   rows are decoding, the chunk is sized by `ChunkSizer` so that an iteration with a chunk costs at most
   `prefill_stall_target` decode-only iterations: running answers never pause for a whole chunk;
3. one decode step for every row past its prompt. While rows decode, the chunks run in the same forward pass as
   their step (the native engine's `step_with_chunks`, as vLLM's chunked prefill: the weights are read once per
   iteration), and a row whose prompt the chunk completed takes its first token in the same sampling call; with
   no row decoding (or an engine that cannot mix), the chunks run on their own and a row whose prompt is
   complete gets its first token at once, then joins the step. ONE sampling call on the device per pass (each
   row with its own settings) and one readback of the ids, the iteration's only waits on the device;
4. each token is streamed (coalesced to one send per stream interval); a row that hit a stop id (or a completion's
   stop text) or its own max_new_tokens ends at once (chatglm/serving/row_endings.py): its FINAL goes out and its KV cache slot takes the next request;
5. the responder thread sends what the iteration produced and checks the open requests for cancellation while
   the engine goes on.

Every request gets exactly one FINAL: normal end, cancellation, refusal, engine failure (the open rows fail, the
cache is reset and the next requests are served) and unload (`close`: every running and waiting request ends
with "model unloaded"; the thread is joined with a timeout, so unloading never hangs).

Faults stay with their request where the state allows it (chatglm/serving/faults.py classifies them):
- a row whose sampled distribution is invalid (the sampler's id -1), whose text cannot be detokenized, or whose
  own prefill chunk runs out of memory ends alone with an error (a mixed pass that runs out of memory advanced
  nothing: it runs again as separate passes, where the chunk that fails alone is found); every other row goes on with exactly the tokens
  it would have had (its sampling depends only on its own seed and counter, and a failed chunk left no length in
  the cache, so nothing of it is read);
- a decode step that runs out of memory runs once more (nothing advanced): only a second failure fails the rows;
- any other error of a forward pass leaves the cache unknown: the open rows fail and the cache is reset;
- a device error that is not out-of-memory (a CUDA fault poisons the context) makes the model `failed`: every
  open, waiting and later request is answered "the model failed: ... reload it" and model.py reports not ready.
"""
from __future__ import annotations

import threading
import time
from typing import List, Optional

import torch
import triton_python_backend_utils as pb_utils

import chatglm.log as log
from chatglm.engine.types import PrefillChunk
from chatglm.engine.generation import FINISH_CANCELLED, FINISH_STOP, INVALID_TOKEN, RowResult, SamplingTensors, \
    TokenPresence, invalid_distribution_message, sample_tokens
from chatglm.engine.overflow import OVERFLOW_TOKEN, mark_overflow, overflow_message
from chatglm.serving.chunk_sizer import ChunkSizer
from chatglm.serving.faults import is_device_fault, is_out_of_memory
from chatglm.serving.metrics import MetricsBuffer
from chatglm.serving.reply import Reply, error_response
from chatglm.serving.prefill_admission import PrefillAdmission
from chatglm.serving.responder import Responder
from chatglm.serving.row_endings import RowEndings
from chatglm.serving.scheduler_rows import Row, SchedulerLimits, WaitingRows

METRICS_INTERVAL = 0.25  # seconds between two metric updates while rows run (and always before a FINAL)
# The seam to the sampler (chatglm.engine.generation.sample_tokens): (float logits [rows, V] on the device,
# SamplingTensors of the rows, seen-token mask or None) -> int64 ids [rows] on the device, -1 for a row whose
# distribution is invalid. One call per iteration, no host synchronisation inside.
SAMPLER = sample_tokens


class ContinuousScheduler(PrefillAdmission, RowEndings):
    def __init__(self, engine, limits: SchedulerLimits, metrics, ready_probe=None):
        self.engine = engine
        self._fails_on_overflow = bool(getattr(engine, "fails_on_overflow", False))
        self.limits = limits
        self.metrics = metrics
        self._figures = MetricsBuffer()  # the engine thread's metric updates, applied by the responder
        self._figures_sent = 0.0
        self.stop_ids = frozenset(int(i) for i in engine.stop_ids)
        self.steps = 0  # decode steps run; log lines and tests count in these
        self.gathers = 0  # times the idle engine waited to gather a burst (_gather); tests count these
        bound = getattr(engine, "prefill_chunk", None)  # the native engine's memory-plan bound of one prefill pass
        self.chunks = ChunkSizer(limits.prefill_token_budget, limits.prefill_stall_target,
                                 None if bound is None else int(bound) - limits.max_active_rows)
        self._readback = getattr(engine, "readback", None)  # pinned ids of the iteration (native engine)
        self._mixes = callable(getattr(engine, "step_with_chunks", None))  # decode step and chunks in one pass
        self._iterations = 0
        self._lock = threading.Condition()
        self._waiting = WaitingRows()
        self._active: List[Row] = []  # the engine thread's own (and close()'s once that thread stopped)
        self._stopping = False
        self.failed: Optional[str] = None  # set once a device fault made the model unusable (model_failed_message)
        self._presence: Optional[TokenPresence] = None  # tokens each slot has seen (repetition penalty)
        self._responder = Responder(ready_probe)
        self._thread = threading.Thread(target=self._run, name="chatglm3-engine", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------------------ execute() side

    def submit(self, replies: List[Reply]) -> None:
        """Queues valid requests and returns at once; refusals and already cancelled requests are answered here.

        The requests of one execute() enter the queue together, under one lock and with one wake-up, so that the
        engine admits them in the same iteration: woken by the first while the others were still being checked
        (each check is an IPC call), it would start decoding that one alone and admit the rest in step-sized
        chunks beside it."""
        live = []
        for reply in replies:
            if reply.channel.is_cancelled():  # gone while queued in Triton: no slot for it
                self._final_now(reply, RowResult([], FINISH_CANCELLED))
            else:
                live.append(reply)
        refused, busy = [], 0
        seeds = getattr(self.engine, "seeds", None)
        with self._lock:
            for reply in live:
                if self.failed is not None:
                    refused.append((reply, self.failed))
                elif self._stopping:
                    refused.append((reply, "model unloaded: the model is being unloaded"))
                elif self.limits.max_waiting and len(self._waiting) >= self.limits.max_waiting:
                    refused.append((reply, f"server busy: the waiting queue is full ({self.limits.max_waiting} requests "
                                           f"wait for one of {self.limits.max_active_rows} rows); try again shortly"))
                    busy += 1
                else:
                    stops = self.stop_ids if reply.plan.stop_ids is None else frozenset(reply.plan.stop_ids)
                    self._waiting.append(Row(reply, stops, seeds))
            if len(refused) < len(live):
                self._lock.notify()
            waiting = len(self._waiting)
        if busy:
            self.metrics.busy.increment(busy)
        if live:
            self.metrics.waiting.set(waiting)
        for reply, message in refused:
            log.verbose(f"request {reply.channel.request_id()} refused: {message}")
            if reply.channel.claim_final():
                reply.channel.send_final(error_response(message, pb_utils.TritonError.UNAVAILABLE))

    def _final_now(self, reply: Reply, result: RowResult) -> None:
        """On execute()'s thread: the figures go to Triton from here too, before the FINAL."""
        if reply.channel.claim_final():
            response = self._final(reply, result, None)
            self.metrics.apply(*self._figures.drain())
            reply.channel.send_final(response)

    # ------------------------------------------------------------------------------ finalize side

    def close(self, timeout: float = 30.0) -> None:
        """Unload: stops the engine thread, then every running and waiting request gets its FINAL."""
        with self._lock:
            self._stopping = True
            self._lock.notify_all()
        self._thread.join(timeout)
        if self._thread.is_alive():
            log.error(f"the engine thread did not stop within {timeout:.0f} s; answering its requests anyway")
        with self._lock:
            rows = list(self._active) + list(self._waiting)
            self._waiting.clear()
        for row in rows:
            self._fail(row, "model unloaded: the request was still running", pb_utils.TritonError.UNAVAILABLE)
        self._active = []
        self._send_figures(force=True)
        if not self._responder.close(timeout):
            log.error("the responder thread did not stop in time")

    # ------------------------------------------------------------------------------ engine thread

    def _run(self) -> None:
        while True:
            with self._lock:
                idle = not self._stopping and not self._waiting and not self._active
            if idle:
                self._send_figures(force=True)
            with self._lock:
                while not self._stopping and not self._waiting and not self._active:
                    self._lock.wait()
                if idle:
                    self._gather()
                if self._stopping:
                    return
            try:
                self._iteration()
            except Exception as exc:  # noqa: BLE001 - the open rows fail, the next requests are served
                if is_device_fault(exc):
                    self._model_failed(exc)
                    return
                self._engine_failed(exc)

    def _gather(self) -> None:
        """With the lock held, on an engine that was idle and has just been handed requests: waits up to
        `idle_gather` from the first one's arrival for more, so that a burst (8 explain selections) is admitted in
        one iteration with the whole prefill budget instead of one alone and the rest in chunks beside its decode
        step. It stops as soon as the waiting requests fill the free rows, and never waits for a code completion
        (a person is typing): Triton's own queue delay, which held every request, is 0 for this scheduler
        (renderConfig.ts). While rows run there is no wait at all: a request joins at the next iteration."""
        if self.limits.idle_gather <= 0 or self._active or not self._waiting:
            return
        first = min(row.reply.received_at for row in self._waiting)
        waited = False
        while not self._stopping and not self._waiting.has_completion() \
                and len(self._waiting) < self.limits.max_active_rows:
            left = first + self.limits.idle_gather - time.monotonic()
            if left <= 0:
                break
            waited = True
            self._lock.wait(left)
        if waited:
            self.gathers += 1
            log.verbose(f"idle engine gathered {len(self._waiting)} requests in "
                        f"{1000 * (time.monotonic() - first):.1f} ms")

    def _iteration(self) -> None:
        self._iterations += 1
        cancelled = set(self._responder.collect(self._iterations))
        if self._responder.unloading:
            self._end_everything("model unloaded: the model is being unloaded")
            return
        self._retire_cancelled(cancelled)
        started = time.monotonic()
        decoding = [r for r in self._active if r.decoding]  # rows past their prompt as the iteration begins
        rows, chunks = self._plan_prefill(self.chunks.tokens(bool(decoding)))
        prefilled = self._mixed_iteration(rows, chunks, decoding) if rows and decoding and self._mixes else None
        if prefilled is None:
            prefilled = self._separate_iteration(rows, chunks)
        self.chunks.observe(time.monotonic() - started, prefilled, bool(decoding))
        with self._lock:
            waiting = [row.reply.channel for row in self._waiting]
        self._responder.start_poll([row.reply.channel for row in self._active] + waiting, self._iterations)
        self._figures.set("waiting", len(waiting))
        self._send_figures(force=False)

    def _separate_iteration(self, rows: List[Row], chunks: List[PrefillChunk]) -> int:
        """The chunks' forward pass, then the step's: rows that completed their prompt take their first token at
        once (time to first token) and their second in the step. Returns the prompt tokens run."""
        first, first_logits, prefilled = self._run_prefill(rows, chunks) if rows else ([], None, 0)
        if first:
            self._sample_and_take(first, first_logits, decoded=0)
        decoding = [r for r in self._active if r.decoding]
        if decoding:
            self._sample_and_take(decoding, self._decode(decoding), decoded=len(decoding))
        return prefilled

    def _mixed_iteration(self, rows: List[Row], chunks: List[PrefillChunk], decoding: List[Row]) -> Optional[int]:
        """The decode step and the chunks in one forward pass (engine.step_with_chunks), sampled in one call:
        running rows pay for a chunk only its own tokens, never a second pass over the weights. None when the
        engine cannot mix these chunks (or ran out of memory trying: nothing advanced): the separate passes run."""
        try:
            out = self.engine.step_with_chunks(chunks, [r.slot for r in decoding], [r.last_token for r in decoding])
        except Exception as exc:  # noqa: BLE001 - out of memory: the separate passes, where a culprit fails alone
            if not is_out_of_memory(exc):
                raise
            self._release_cached_memory()
            return None
        if out is None:
            return None
        first_logits, step_logits = out
        first = self._prefilled(rows, chunks)
        logits = torch.cat((first_logits, step_logits)) if first else step_logits
        self._sample_and_take(first + decoding, logits, decoded=len(decoding))
        return sum(c.stop - c.start for c in chunks)

    def _send_figures(self, force: bool) -> None:
        """Hands the gathered metric updates to the responder (every METRICS_INTERVAL, and before each FINAL, so
        a client that has its answer also finds it counted)."""
        now = time.monotonic()
        if not force and now - self._figures_sent < METRICS_INTERVAL:
            return
        self._figures_sent = now
        self._figures.set("active_rows", len(self._active))
        counts, gauges = self._figures.drain()
        self._responder.call(lambda: self.metrics.apply(counts, gauges))

    def _retire_cancelled(self, cancelled: set) -> None:
        if not cancelled:
            return
        for row in [r for r in self._active if r.reply.channel in cancelled]:
            self._retire(row, FINISH_CANCELLED)
        with self._lock:
            gone = [r for r in self._waiting if r.reply.channel in cancelled]
            for row in gone:
                self._waiting.remove(row)
        for row in gone:
            self._finish(row, row.progress.result(FINISH_CANCELLED))

    def _decode(self, rows: List[Row]):
        """One decode step for `rows`; their logits. Out of memory in it is no row's own fault and leaves the cache
        as it was (no length advanced; what the step wrote is written again with the same values): the
        allocator's cache is emptied and the step runs once more. A second failure fails the open rows."""
        slots, tokens = [r.slot for r in rows], [r.last_token for r in rows]
        try:
            return self.engine.decode_step(slots, tokens)
        except Exception as exc:  # noqa: BLE001 - only out of memory is retried
            if not is_out_of_memory(exc):
                raise
            self._release_cached_memory()
            log.warn(f"out of memory in the decode step of {len(rows)} rows at step {self.steps}: {exc}; running "
                     f"it once more after emptying the allocator's cache")
            return self.engine.decode_step(slots, tokens)

    def _sample_and_take(self, rows: List[Row], logits, decoded: int) -> None:
        """One sampling call on the device for `rows` (each with its own settings, seed and counter) and one
        readback of the ids (pinned and non-blocking on the native engine), the iteration's wait on the device.
        The last `decoded` rows are the decode step's; the others take their first token."""
        settings = [r.reply.settings for r in rows]
        params = SamplingTensors.build(settings, [r.sampled for r in rows], logits.device, [r.seed for r in rows])
        penalized = any(s.repetition_penalty != 1.0 for s in settings)
        slots = (torch.tensor([r.slot for r in rows], dtype=torch.long).to(logits.device, non_blocking=True)
                 if penalized else None)  # non-blocking: a blocking copy to CUDA waits for the stream
        seen = self._presence_of(logits).rows(slots) if penalized else None
        ids = SAMPLER(logits, params, seen)
        if self._fails_on_overflow:  # GLM-4: a row whose logits overflowed fails alone, with what to change
            ids = mark_overflow(logits, ids)
        if penalized:
            self._presence.add(slots, ids)
        tokens = self._readback.start(ids).wait() if self._readback is not None else ids.tolist()
        if decoded:
            self.steps += 1
            self._figures.increment("decode_steps", 1)
            self._figures.increment("decode_rows", decoded)
        for row, token in zip(rows, tokens):
            row.sampled += 1
            self._take(row, token)

    def _take(self, row: Row, token: int) -> None:
        now = time.monotonic()
        if row.first_token_step is None:
            row.first_token_step = self.steps
            row.reply.first_token_at = now
            self._figures.increment("first_tokens", 1)
            self._figures.increment("first_token_seconds", max(0.0, now - row.reply.received_at))
        if token == OVERFLOW_TOKEN:  # the model's logits for this row were not finite: it alone ends
            message = overflow_message(getattr(self.engine, "dtype_name", "float16"))
            log.warn(f"request {row.reply.channel.request_id()}: {message}")
            self._retire_failed(row, message, pb_utils.TritonError.INTERNAL)
            return
        if token == INVALID_TOKEN:  # this row's own settings made its distribution invalid: it alone ends
            message = invalid_distribution_message(row.reply.settings)
            log.warn(f"request {row.reply.channel.request_id()}: {message}")
            self._retire_failed(row, message, pb_utils.TritonError.INTERNAL)
            return
        row.last_token = token
        if row.progress.accept(token):
            try:
                text = row.reply.push(token, now, self.limits.stream_interval)
            except Exception as exc:  # noqa: BLE001 - the detokenizer failed on this row's tokens: it alone ends
                log.warn(f"request {row.reply.channel.request_id()}: detokenizing failed: {exc!r}")
                self._retire_failed(row, f"could not turn the answer's tokens into text: {exc}",
                                    pb_utils.TritonError.INTERNAL)
                return
            if text:
                self._responder.send_delta(row.reply.channel, text)
            if row.reply.answer.stopped and row.progress.finish is None:  # a stop text (completions)
                row.progress.finish = FINISH_STOP
        if row.progress.finish is not None:
            self._retire(row, row.progress.finish)
