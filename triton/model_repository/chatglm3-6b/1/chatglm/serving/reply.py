"""Answering one request: the channel its responses travel on, and its answer as it streams.

A `Channel` sends through the request's response sender (decoupled mode, and every mode of the continuous
scheduler, which answers after execute() returned) or keeps the response for execute() to return (per-execute
without decoupling). It guarantees exactly one FINAL: whoever claims it first (the engine thread, finalize,
execute() on a rejection) sends it, every later claim is refused.

A `Reply` is a valid request being generated: its prompt, its sampling settings, the streamed text (coalesced to
one send per stream interval) and, when it ends, the FINAL with every output.
"""
from __future__ import annotations

import json
import threading
import time
from typing import Any, Dict, Optional

import triton_python_backend_utils as pb_utils

import chatglm.log as log
from chatglm.serving.answer import AnswerStream
from chatglm.engine.generation import RowResult, RowSettings
from chatglm.serving.io import DELTA_OUTPUT, OUTPUT_NAMES, int_tensor, string_tensor
from chatglm.serving.request import ChatRequest, PromptPlan


class Channel:
    def __init__(self, request, decoupled: bool, use_sender: bool):
        self.request = request
        self.decoupled = decoupled
        self.sender = request.get_response_sender() if use_sender else None
        self.response = None  # per-execute without decoupling: the response execute() returns
        self.completed = False  # the FINAL went out: the request must not be queried any more
        self._claimed = False
        self._lock = threading.Lock()

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

    def claim_final(self) -> bool:
        """True exactly once: the caller now owns this request's FINAL."""
        with self._lock:
            if self._claimed:
                return False
            self._claimed = True
            return True

    @property
    def closed(self) -> bool:
        return self._claimed

    def send(self, response, final: bool) -> None:
        """Sends one response (a delta, or the FINAL the caller claimed)."""
        if self.sender is None:
            self.response = response
        else:
            self.sender.send(response, flags=pb_utils.TRITONSERVER_RESPONSE_COMPLETE_FINAL if final else 0)
        if final:
            self.completed = True

    def send_final(self, response) -> None:
        """Sends the FINAL the caller claimed. A client that went away is only logged: the request is complete."""
        try:
            self.send(response, True)
        except Exception as exc:  # noqa: BLE001
            self.completed = True
            log.warn(f"request {self.request_id()}: final response not sent: {exc}")

    def delta_response(self, text: str):
        """A streamed delta, or None where this mode streams nothing (not decoupled: one complete response)."""
        if not self.decoupled or not text:
            return None
        return pb_utils.InferenceResponse(output_tensors=[string_tensor(DELTA_OUTPUT, text)])


def error_response(message: str, code):
    return pb_utils.InferenceResponse(output_tensors=[], error=pb_utils.TritonError(message, code))


class Reply:
    def __init__(self, channel: Channel, chat: ChatRequest, plan: PromptPlan, answer: AnswerStream):
        self.channel = channel
        self.chat = chat
        self.plan = plan
        self.answer = answer
        self.settings = RowSettings(chat.temperature, chat.top_p, chat.max_new_tokens, chat.top_k,
                                    chat.repetition_penalty, chat.seed)
        self.received_at = time.monotonic()
        self.first_token_at: Optional[float] = None
        self.unsent = ""  # stream text not yet sent (coalesced up to the stream interval)
        self.completion = plan.infill is not None
        self.last_send = float("-inf")

    def push(self, token_id: int, now: float, interval: float) -> Optional[str]:
        """Adds a kept token; returns the text to stream now, or None while it is held back or coalesced."""
        if self.first_token_at is None:
            self.first_token_at = now
        self.unsent += self.answer.push(token_id)
        # Each send is an IPC round trip to the server; when steps are faster than the stream interval, deltas are
        # coalesced (the first one always goes out at once, and the FINAL carries whatever is left). A completion's
        # line break goes out at once: the editor's line mode waits for exactly that (bench/README.md, completions).
        if self.unsent and (now - self.last_send >= interval or (self.completion and "\n" in self.unsent)):
            text, self.unsent, self.last_send = self.unsent, "", now
            return text
        return None

    def final_response(self, result: RowResult):
        """The FINAL with every output: the rest of the stream (or, not decoupled, the whole answer) and history."""
        delta, metadata, content = self.answer.finish()
        assistant: Dict[str, Any] = {"role": "assistant", "metadata": metadata, "content": content}
        # A completion or a raw continuation has no conversation: its history output is an empty list.
        history = [] if self.plan.infill is not None or self.plan.raw else self.plan.messages + [self.plan.prompt_message, assistant]
        text = self.unsent + delta if self.channel.decoupled else content
        self.unsent = ""
        outputs = {
            "response": string_tensor("response", text),
            "history": string_tensor("history", json.dumps(history, ensure_ascii=False, separators=(",", ":"))),
            "finish_reason": string_tensor("finish_reason", result.finish_reason),
            "prompt_tokens": int_tensor("prompt_tokens", len(self.plan.ids)),
            "completion_tokens": int_tensor("completion_tokens", len(result.token_ids)),
            "history_trimmed": int_tensor("history_trimmed", self.plan.trimmed),
        }
        return pb_utils.InferenceResponse(output_tensors=[outputs[name] for name in OUTPUT_NAMES])
