"""ChatGLM3-6B on Triton's Python backend: one batched generation per execute().

Every request of a dynamic batch becomes one row of a single generation, run synchronously inside execute():
while it runs Triton's dynamic batcher queues (and so batches) the next requests, the statistics extension
sees real execution times, and finalize has no thread to stop (the only thread, which overlaps cancellation
checks with the forward pass, is joined before execute() returns). Each request keeps its own sampling settings,
stops on its own, can be cancelled at any decode step, and gets exactly one FINAL response (decoupled mode) —
also when it is invalid, cancelled or the engine fails. With `decoupled: false` the same code returns one
complete response per request, in order.
"""
from __future__ import annotations

import json
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np
import triton_python_backend_utils as pb_utils

from chatglm_answer import AnswerStream
from chatglm_engine import EngineOptions, load_engine
from chatglm_generation import FINISH_CANCELLED, RowResult, RowSettings
from chatglm_request import ChatRequest, Limits, PromptPlan, RequestError, parse_request, plan_prompt

DEFAULT_STREAM_INTERVAL_MS = 20  # far below a human's notice; a 6B model's decode step is usually slower anyway
INPUT_NAMES = ("prompt", "history", "temperature", "top_p", "max_new_tokens", "history_len")


def _string_tensor(name: str, text: str):
    return pb_utils.Tensor(name, np.array([[text.encode("utf-8")]], dtype=np.object_))


def _int_tensor(name: str, value: int):
    return pb_utils.Tensor(name, np.array([[value]], dtype=np.int32))


class Channel:
    """How one request is answered: through its response sender (decoupled) or as execute()'s return value."""

    def __init__(self, request, decoupled: bool):
        self.request = request
        self.decoupled = decoupled
        self.sender = request.get_response_sender() if decoupled else None
        self.response = None  # non-decoupled: the response execute() returns
        self.closed = False

    def request_id(self) -> str:
        try:
            return self.request.request_id() or "-"
        except Exception:  # noqa: BLE001 - only used for log lines
            return "-"

    def is_cancelled(self) -> bool:
        source = self.sender if self.sender is not None else self.request
        try:
            return bool(source.is_cancelled())
        except Exception:  # noqa: BLE001 - an older backend without cancellation support
            return False

    def send_delta(self, text: str) -> None:
        if self.decoupled and not self.closed and text:
            self.sender.send(pb_utils.InferenceResponse(output_tensors=[_string_tensor("response", text)]))

    def send_final(self, response) -> None:
        if self.closed:
            return
        self.closed = True
        if self.decoupled:
            self.sender.send(response, flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        else:
            self.response = response

    def fail(self, message: str, code) -> None:
        self.send_final(pb_utils.InferenceResponse(output_tensors=[], error=pb_utils.TritonError(message, code)))


class Row:
    """One valid request inside the batch."""

    def __init__(self, channel: Channel, chat: ChatRequest, plan: PromptPlan, answer: AnswerStream):
        self.channel = channel
        self.chat = chat
        self.plan = plan
        self.answer = answer
        self.settings = RowSettings(chat.temperature, chat.top_p, chat.max_new_tokens)
        self.finished = False
        self.unsent = ""  # stream text not yet sent (coalesced up to the stream interval)
        self.last_send = float("-inf")


class Metrics:
    """Custom Prometheus counters (shown on Triton's /metrics next to the built-in ones)."""

    def __init__(self, model_name: str, version: str, instance: str):
        # One series per instance: each instance is its own stub process, and a series removed when one instance
        # unloads must not be another instance's.
        labels = {"model": model_name, "version": str(version), "instance": instance}
        family = pb_utils.MetricFamily
        self._families = [
            family("chatglm3_cancelled_requests_total", "Requests cancelled by the client while generating", family.COUNTER),
            family("chatglm3_invalid_requests_total", "Requests rejected with INVALID_ARG", family.COUNTER),
            family("chatglm3_generated_tokens_total", "Tokens generated (all finish reasons)", family.COUNTER),
        ]
        self.cancelled, self.invalid, self.generated = (f.Metric(labels=labels) for f in self._families)


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

    def __init__(self, model: "TritonPythonModel", rows: List[Row], pool: ThreadPoolExecutor):
        self.model = model
        self.rows = rows
        self.poller = CancellationPoller([r.channel for r in rows], pool)

    def on_token(self, row: int, token_id: int) -> None:
        r = self.rows[row]
        r.unsent += r.answer.push(token_id)
        now = time.monotonic()
        # Each send is an IPC round trip to the server; when steps are faster than the stream interval, deltas are
        # coalesced (the first one always goes out at once, and the FINAL carries whatever is left).
        if r.unsent and now - r.last_send >= self.model.stream_interval:
            text, r.unsent, r.last_send = r.unsent, "", now
            try:
                r.channel.send_delta(text)
            except Exception as exc:  # noqa: BLE001 - a vanished client must not stop the other rows
                self.model.log_warn(f"request {r.channel.request_id()}: could not send a delta: {exc}")

    def cancelled(self, rows: Sequence[int]) -> List[bool]:
        return self.poller.poll(rows)

    def on_finished(self, row: int, result: RowResult) -> None:
        self.poller.settle(row)
        self.model.finish_row(self.rows[row], result)


class TritonPythonModel:
    def initialize(self, args: Dict[str, str]) -> None:
        config = json.loads(args["model_config"])
        params = {k: v.get("string_value", "") for k, v in config.get("parameters", {}).items()}
        self.decoupled = bool(pb_utils.using_decoupled_model_transaction_policy(config))
        self.limits = Limits.from_parameters(params)
        # Optional parameter (not in the default config): minimum time between two streamed deltas of a request.
        try:
            interval_ms = float(params.get("stream_interval_ms", "") or DEFAULT_STREAM_INTERVAL_MS)
        except ValueError:
            interval_ms = -1.0
        if not 0 <= interval_ms <= 10_000:
            raise ValueError(f"config parameter stream_interval_ms must be between 0 and 10000, got {params['stream_interval_ms']!r}")
        self.stream_interval = interval_ms / 1000.0
        device = "cpu"
        if args.get("model_instance_kind") == "GPU":
            device = f"cuda:{int(args.get('model_instance_device_id', '0'))}"
        self.engine = load_engine(
            params.get("engine", "hf"),
            EngineOptions(
                weights_path=params.get("weights_path", ""),
                dtype=params.get("dtype", "float16"),
                device=device,
                parameters=params,
            ),
        )
        self.metrics = Metrics(args.get("model_name", "chatglm3-6b"), args.get("model_version", "1"),
                               args.get("model_instance_name", "0"))
        pb_utils.Logger.log_info(
            f"chatglm3: engine {params.get('engine', 'hf')} on {device}, decoupled={self.decoupled}, "
            f"max_input_tokens={self.limits.max_input_tokens}, max_new_tokens_limit={self.limits.max_new_tokens_limit}"
        )

    # ------------------------------------------------------------------------------------------ execute

    def execute(self, requests):
        channels = [Channel(request, self.decoupled) for request in requests]
        rows: List[Row] = []
        for channel in channels:
            row = self._prepare(channel)
            if row is not None:
                rows.append(row)
        if rows:
            self._generate(rows)
        if self.decoupled:
            return None
        return [c.response for c in channels]

    def _prepare(self, channel: Channel) -> Optional[Row]:
        try:
            inputs = {}
            for name in INPUT_NAMES:
                tensor = pb_utils.get_input_tensor_by_name(channel.request, name)
                inputs[name] = None if tensor is None else tensor.as_numpy()
            chat = parse_request(inputs, self.limits)
            plan = plan_prompt(self.engine, chat, self.limits)
        except RequestError as exc:
            self.metrics.invalid.increment(1)
            pb_utils.Logger.log_info(f"chatglm3: request {channel.request_id()} rejected: {exc}")
            self._safe_fail(channel, str(exc), pb_utils.TritonError.INVALID_ARG)
            return None
        except Exception as exc:  # noqa: BLE001 - e.g. a tokenizer failure: this request fails, not the batch
            pb_utils.Logger.log_error(f"chatglm3: request {channel.request_id()} failed while preparing: {exc!r}")
            self._safe_fail(channel, f"could not prepare the request: {exc}", pb_utils.TritonError.INTERNAL)
            return None
        return Row(channel, chat, plan, AnswerStream(self.engine.decode))

    def _generate(self, rows: List[Row]) -> None:
        started = time.monotonic()
        failure: Optional[Exception] = None
        # The pool lives only for this execute(): no thread outlives it, so finalize() has nothing to stop.
        pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="chatglm3-cancel")
        observer = BatchObserver(self, rows, pool)
        try:
            self.engine.generate([r.plan.ids for r in rows], [r.settings for r in rows], observer)
        except Exception as exc:  # noqa: BLE001 - every open row still gets its FINAL
            failure = exc
            pb_utils.Logger.log_error(f"chatglm3: generation of a batch of {len(rows)} failed: {exc!r}")
        finally:
            observer.poller.settle_all()
            pool.shutdown(wait=True)
        # An engine that fails, or returns without reporting a row, must not leave a request without its FINAL.
        for r in rows:
            if not r.finished:
                r.finished = True
                message = f"generation failed: {failure}" if failure else "generation ended without a result"
                self._safe_fail(r.channel, message, pb_utils.TritonError.INTERNAL)
        pb_utils.Logger.log_verbose(f"chatglm3: batch of {len(rows)} generated in {time.monotonic() - started:.3f} s")

    def finish_row(self, row: Row, result: RowResult) -> None:
        """Sends the row's FINAL with all final outputs (called by the engine as soon as the row ends)."""
        if row.finished:
            return
        row.finished = True
        delta, metadata, content = row.answer.finish()
        completion = len(result.token_ids)
        self.metrics.generated.increment(completion)
        if result.finish_reason == FINISH_CANCELLED:
            self.metrics.cancelled.increment(1)
            pb_utils.Logger.log_info(
                f"chatglm3: request {row.channel.request_id()} cancelled after {completion} tokens"
            )
        assistant: Dict[str, Any] = {"role": "assistant", "metadata": metadata, "content": content}
        history = row.plan.messages + [row.plan.prompt_message, assistant]
        text = row.unsent + delta if row.channel.decoupled else content
        row.unsent = ""
        response = pb_utils.InferenceResponse(
            output_tensors=[
                _string_tensor("response", text),
                _string_tensor("history", json.dumps(history, ensure_ascii=False, separators=(",", ":"))),
                _string_tensor("finish_reason", result.finish_reason),
                _int_tensor("prompt_tokens", len(row.plan.ids)),
                _int_tensor("completion_tokens", completion),
                _int_tensor("history_trimmed", row.plan.trimmed),
            ]
        )
        try:
            row.channel.send_final(response)
        except Exception as exc:  # noqa: BLE001 - the client may be gone; the request is complete either way
            pb_utils.Logger.log_warn(f"chatglm3: request {row.channel.request_id()}: final response not sent: {exc}")

    def _safe_fail(self, channel: Channel, message: str, code) -> None:
        try:
            channel.fail(message, code)
        except Exception as exc:  # noqa: BLE001
            pb_utils.Logger.log_warn(f"chatglm3: request {channel.request_id()}: error response not sent: {exc}")

    def log_warn(self, message: str) -> None:
        pb_utils.Logger.log_warn(f"chatglm3: {message}")

    # ------------------------------------------------------------------------------------------ finalize

    def finalize(self) -> None:
        engine, self.engine = getattr(self, "engine", None), None
        if engine is not None:
            engine.close()
        pb_utils.Logger.log_info("chatglm3: finalized")
