"""Scheduler `per_execute`: every valid request of one execute() becomes a row of one batched generation, run
synchronously inside execute() (the HF engine's path, and the benchmark baseline of the continuous scheduler).

While it runs, Triton's dynamic batcher queues (and so batches) the next requests; a request arriving meanwhile
waits for the whole batch. Each row keeps its own sampling settings, stops on its own, can be cancelled at any
decode step and gets its FINAL as soon as it ends. The only thread, which overlaps cancellation checks with the
forward pass, lives for one execute() and is joined before it returns.
"""
from __future__ import annotations

import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Dict, List, Optional, Sequence, Tuple

import triton_python_backend_utils as pb_utils

import chatglm.log as log
from chatglm.engine.generation import FINISH_CANCELLED, FINISH_FAILED, RowResult
from chatglm.serving.reply import Channel, Reply, error_response


class CancellationPoller:
    """Checks every open row for cancellation once per decode step.

    Each check is an IPC round trip to the server (it releases the GIL). The checks a step uses are started, on
    one worker thread, when the previous step's answers are taken, so the round trips overlap the forward pass
    instead of adding up after it; a cancellation is acted on within one step. A row's in-flight check is
    settled before its FINAL is sent: a request must not be queried once it is complete.
    """

    def __init__(self, channels: List[Channel], pool: ThreadPoolExecutor):
        self.channels = channels
        self.pool = pool
        self.in_flight: Optional[Tuple[List[int], Future]] = None

    def poll(self, rows: Sequence[int]) -> List[bool]:
        known: Dict[int, bool] = {}
        if self.in_flight is not None:
            asked, future = self.in_flight
            known = dict(zip(asked, future.result()))
        answers = [known[row] if row in known else self.channels[row].is_cancelled() for row in rows]
        open_rows = [row for row, gone in zip(rows, answers) if not gone]
        self.in_flight = (open_rows, self.pool.submit(self._check, open_rows)) if open_rows else None
        return answers

    def _check(self, rows: List[int]) -> List[bool]:
        return [self.channels[row].is_cancelled() for row in rows]  # Channel.is_cancelled does not raise

    def settle(self, row: int) -> None:
        if self.in_flight is not None and row in self.in_flight[0]:
            self.in_flight[1].result()

    def settle_all(self) -> None:
        if self.in_flight is not None:
            self.in_flight[1].result()


class BatchObserver:
    """Receives the engine's per-row events and turns them into responses."""

    def __init__(self, scheduler: "PerExecuteScheduler", replies: List[Reply], pool: ThreadPoolExecutor):
        self.scheduler = scheduler
        self.replies = replies
        self.finished = [False] * len(replies)
        self.poller = CancellationPoller([r.channel for r in replies], pool)

    def on_token(self, row: int, token_id: int) -> None:
        reply = self.replies[row]
        text = reply.push(token_id, time.monotonic(), self.scheduler.stream_interval)
        response = reply.channel.delta_response(text) if text else None
        if response is not None:
            try:
                reply.channel.send(response, False)
            except Exception as exc:  # noqa: BLE001 - a vanished client must not stop the other rows
                log.warn(f"request {reply.channel.request_id()}: could not send a delta: {exc}")

    def cancelled(self, rows: Sequence[int]) -> List[bool]:
        return self.poller.poll(rows)

    def on_finished(self, row: int, result: RowResult) -> None:
        self.poller.settle(row)
        self.finished[row] = True
        self.scheduler.finish(self.replies[row], result)


class PerExecuteScheduler:
    def __init__(self, engine, metrics, stream_interval: float):
        self.engine = engine
        self.metrics = metrics
        self.stream_interval = stream_interval

    def submit(self, replies: List[Reply]) -> None:
        """Generates the batch; returns when every request has its FINAL."""
        if not replies:
            return
        started = time.monotonic()
        failure: Optional[Exception] = None
        # The pool lives only for this execute(): no thread outlives it, so finalize() has nothing to stop.
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chatglm3-cancel")
        observer = BatchObserver(self, replies, pool)
        try:
            self.engine.generate([r.plan.ids for r in replies], [r.settings for r in replies], observer)
        except Exception as exc:  # noqa: BLE001 - every open row still gets its FINAL
            failure = exc
            log.error(f"generation of a batch of {len(replies)} failed: {exc!r}")
        finally:
            observer.poller.settle_all()
            pool.shutdown(wait=True)
        # An engine that fails, or returns without reporting a row, must not leave a request without its FINAL.
        for reply, done in zip(replies, observer.finished):
            if not done and reply.channel.claim_final():
                message = f"generation failed: {failure}" if failure else "generation ended without a result"
                reply.channel.send_final(error_response(message, pb_utils.TritonError.INTERNAL))
        log.verbose(f"batch of {len(replies)} generated in {time.monotonic() - started:.3f} s")

    def finish(self, reply: Reply, result: RowResult) -> None:
        """Sends the row's FINAL with all final outputs (called by the engine as soon as the row ends)."""
        if not reply.channel.claim_final():
            return
        if result.finish_reason == FINISH_FAILED:  # this row alone failed; the others go on
            log.warn(f"request {reply.channel.request_id()} failed after {len(result.token_ids)} tokens: {result.error}")
            reply.channel.send_final(error_response(result.error or "generation failed", pb_utils.TritonError.INTERNAL))
            return
        completion = len(result.token_ids)
        self.metrics.generated.increment(completion)
        if reply.first_token_at is not None:
            self.metrics.first_tokens.increment(1)
            self.metrics.first_token_seconds.increment(max(0.0, reply.first_token_at - reply.received_at))
        if result.finish_reason == FINISH_CANCELLED:
            self.metrics.cancelled.increment(1)
            log.info(f"request {reply.channel.request_id()} cancelled after {completion} tokens")
        reply.channel.send_final(reply.final_response(result))

    def close(self, timeout: float = 30.0) -> None:
        """Nothing runs between two execute() calls."""
