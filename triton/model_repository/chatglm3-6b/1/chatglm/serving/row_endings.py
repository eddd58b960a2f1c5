"""How rows of the continuous scheduler end (a part of ContinuousScheduler, chatglm/serving/continuous_scheduler.py):
a finished or cancelled row frees its slot at once, a row's own failure ends it alone, and unload, a device fault
or an engine failure end every open row — each request with exactly one FINAL."""
from __future__ import annotations

from typing import Optional

import triton_python_backend_utils as pb_utils

import chatglm.log as log
from chatglm.engine.generation import FINISH_CANCELLED, RowResult
from chatglm.serving.faults import model_failed_message
from chatglm.serving.reply import Reply, error_response
from chatglm.serving.scheduler_rows import Row, WaitingRows


class RowEndings:
    """Mixed into ContinuousScheduler: uses its engine, lock, rows, responder and metric figures."""

    def _retire(self, row: Row, reason: str) -> None:
        """Ends a running row at once: its slot is free for the next request from this step on."""
        self._active.remove(row)
        self.engine.close_row(row.slot)
        self._finish(row, row.progress.result(reason))

    def _retire_failed(self, row: Row, message: str, code) -> None:
        """Ends one running row with an error; its slot is free, the other rows go on."""
        self._active.remove(row)
        self.engine.close_row(row.slot)
        self._figures.increment("generated", len(row.progress.tokens))
        self._fail(row, message, code)
        self._send_figures(force=True)

    def _finish(self, row: Row, result: RowResult) -> None:
        channel = row.reply.channel
        if channel.claim_final():
            try:
                response = self._final(row.reply, result, row)
            except Exception as exc:  # noqa: BLE001 - the detokenizer failed on the last tokens: this row only
                log.warn(f"request {channel.request_id()}: building the final response failed: {exc!r}")
                response = error_response(f"could not turn the answer's tokens into text: {exc}",
                                          pb_utils.TritonError.INTERNAL)
            self._send_figures(force=True)
            self._responder.send(channel, response, True)

    def _final(self, reply: Reply, result: RowResult, row: Optional[Row]):
        tokens = len(result.token_ids)
        self._figures.increment("generated", tokens)
        if result.finish_reason == FINISH_CANCELLED:
            self._figures.increment("cancelled", 1)
        steps = ""
        if row is not None and row.admitted_step is not None:
            first = f"first token at step {row.first_token_step}" if row.first_token_step is not None else "no token"
            waited = (f"; first token after {1000 * (reply.first_token_at - reply.received_at):.0f} ms"
                      if reply.first_token_at is not None else "")
            steps = f"; admitted at step {row.admitted_step}, {first}, finished at step {self.steps}{waited}"
        log.info(f"request {reply.channel.request_id()} {result.finish_reason} after {tokens} tokens "
                 f"(prompt {len(reply.plan.ids)} tokens{steps})")
        return reply.final_response(result)

    def _fail(self, row: Row, message: str, code) -> None:
        if row.reply.channel.claim_final():
            self._responder.send(row.reply.channel, error_response(message, code), True)

    def _end_everything(self, message: str) -> None:
        """Unload: every running and waiting request ends now (Triton finalizes the model once all have)."""
        with self._lock:
            self._stopping = True
            rows = self._active + list(self._waiting)
            self._active, self._waiting = [], WaitingRows()
        for row in rows:
            self._fail(row, message, pb_utils.TritonError.UNAVAILABLE)
        self.engine.reset()
        self._figures.set("waiting", 0)
        self._send_figures(force=True)

    def _model_failed(self, exc: Exception) -> None:
        """A device fault: nothing on the device can be trusted any more. Every open and waiting request fails,
        later ones are refused at once, and model.py reports the model not ready until it is reloaded."""
        message = model_failed_message(exc)
        with self._lock:
            self.failed = message
            rows = self._active + list(self._waiting)
            self._active, self._waiting = [], WaitingRows()
        log.error(f"device fault with {len(rows)} open or waiting requests at step {self.steps}: {exc!r}; the model "
                  f"stops accepting requests until it is reloaded")
        for row in rows:
            self._fail(row, message, pb_utils.TritonError.UNAVAILABLE)
        self._figures.set("waiting", 0)
        self._figures.set("failed", 1)
        self._send_figures(force=True)

    def _engine_failed(self, exc: Exception) -> None:
        rows, self._active = self._active, []
        log.error(f"engine failure with {len(rows)} open rows at step {self.steps}: {exc!r}; resetting the KV cache")
        for row in rows:
            self._fail(row, f"generation failed: {exc}", pb_utils.TritonError.INTERNAL)
        try:
            self.engine.reset()
        except Exception as reset_exc:  # noqa: BLE001 - nothing more to do than to say so
            log.error(f"resetting the engine failed: {reset_exc!r}")
        self._send_figures(force=True)
