"""Runs the real model.py under the pb_utils stand-in (triton/testing/triton_python_backend_utils.py)."""
from __future__ import annotations

import importlib.util
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Dict, List, Optional

import numpy as np
import triton_python_backend_utils as pb

from pbtxt import parse_pbtxt
from tiny_engine import TinyEngine

ROOT = Path(__file__).resolve().parents[2]
MODEL_DIR = ROOT / "triton" / "model_repository" / "chatglm3-6b"
assert Path(pb.__file__).parent.name == "testing", "the stand-in must be the module under test"


def model_config(decoupled: bool = True, engine: str = "tiny_engine:TinyEngine", **params: str) -> Dict[str, Any]:
    config = parse_pbtxt((MODEL_DIR / "config.pbtxt").read_text(encoding="utf-8"))
    config["model_transaction_policy"] = {"decoupled": decoupled}
    config["parameters"]["engine"] = {"string_value": engine}
    for key, value in params.items():
        config["parameters"][key] = {"string_value": str(value)}
    return config


def load_model(decoupled: bool = True, engine: str = "tiny_engine:TinyEngine", kind: str = "CPU", **params: str):
    """model.py initialised like Triton does it (the committed config: scheduler continuous unless a test passes
    scheduler="per_execute"). Streams every delta at once (stream_interval_ms 0) unless a test sets that parameter,
    so tests can count deltas."""
    params.setdefault("stream_interval_ms", "0")
    spec = importlib.util.spec_from_file_location("chatglm3_model_under_test", MODEL_DIR / "1" / "model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    model = module.TritonPythonModel()
    model.initialize({
        "model_config": json.dumps(model_config(decoupled, engine, **params)),
        "model_instance_kind": kind, "model_instance_device_id": "0",
        "model_repository": str(MODEL_DIR), "model_version": "1", "model_name": "chatglm3-6b",
    })
    return model


def make_request(prompt: Any = "hello", decoupled: bool = True, request_id: str = "", **inputs: Any):
    """Inputs as Triton delivers them: [1, 1] arrays; strings as bytes (str values are encoded)."""
    def tensor(name, value):
        if isinstance(value, np.ndarray):
            return pb.Tensor(name, value)
        if name in ("prompt", "history", "infill", "raw_prompt", "stop"):
            data = value.encode("utf-8") if isinstance(value, str) else value
            return pb.Tensor(name, np.array([[data]], dtype=np.object_))
        dtype = np.float32 if name in ("temperature", "top_p") else np.int64  # the integer inputs are INT64
        return pb.Tensor(name, np.array([[value]], dtype=dtype))

    tensors = [] if prompt is None else [tensor("prompt", prompt)]
    tensors += [tensor(k, v) for k, v in inputs.items()]
    return pb.InferenceRequest(inputs=tensors, request_id=request_id, decoupled=decoupled)


def _text(response, name) -> Optional[str]:
    t = pb.get_output_tensor_by_name(response, name)
    if t is None:
        return None
    value = t.as_numpy().reshape(-1)[0]
    return value.decode("utf-8") if isinstance(value, bytes) else value


def _int(response, name) -> Optional[int]:
    t = pb.get_output_tensor_by_name(response, name)
    return None if t is None else int(t.as_numpy().reshape(-1)[0])


@dataclass
class Outcome:
    """What one request received."""

    deltas: List[str] = field(default_factory=list)
    finals: int = 0
    error: Optional[pb.TritonError] = None
    response: str = ""  # text of the final response ("" delta in streaming, full text otherwise)
    history: Optional[list] = None
    finish_reason: Optional[str] = None
    prompt_tokens: Optional[int] = None
    completion_tokens: Optional[int] = None
    history_trimmed: Optional[int] = None

    @property
    def text(self) -> str:
        return "".join(self.deltas) + self.response

    def final_fields(self, response) -> None:
        if response.has_error():
            self.error = response.error()
            return
        self.response = _text(response, "response") or ""
        history = _text(response, "history")
        self.history = None if history is None else json.loads(history)
        self.finish_reason = _text(response, "finish_reason")
        self.prompt_tokens = _int(response, "prompt_tokens")
        self.completion_tokens = _int(response, "completion_tokens")
        self.history_trimmed = _int(response, "history_trimmed")


def outcome_of(request) -> Outcome:
    """Decoupled: reads the request's response sender."""
    out = Outcome()
    for response, flags in request.sender.responses:
        final = bool(flags & pb.TRITONSERVER_RESPONSE_COMPLETE_FINAL)
        out.finals += int(final)
        if response is None:
            continue
        if final:
            out.final_fields(response)
        else:
            assert not response.has_error(), "errors come with the FINAL flag"
            out.deltas.append(_text(response, "response"))
    return out


def outcome_of_response(response) -> Outcome:
    out = Outcome(finals=1)
    out.final_fields(response)
    return out


def cancel_after(request, deltas: int):
    """Simulates the client going away once it has received `deltas` streamed responses."""
    sender = request.sender
    original = sender.send

    def send(response=None, flags=0):
        original(response, flags)
        if len(sender.responses) == deltas:
            request.cancel()

    sender.send = send
    return request


def wait_for_finals(requests, timeout: float = 120.0) -> None:
    """The continuous scheduler answers on its own thread: waits until every request has its FINAL."""
    deadline = time.monotonic() + timeout
    while not all(r.sender.final_count() for r in requests):
        if time.monotonic() > deadline:
            raise AssertionError(f"{sum(not r.sender.final_count() for r in requests)} requests got no FINAL")
        time.sleep(0.002)


def run(model, requests) -> List[Outcome]:
    result = model.execute(requests)
    if model.decoupled or model.continuous:
        assert result is None
        wait_for_finals(requests)
        return [outcome_of(r) for r in requests]
    assert isinstance(result, list) and len(result) == len(requests)
    return [outcome_of_response(r) for r in result]


class FailingEngine(TinyEngine):
    """The tiny engine whose every 4th decode step fails (the 'engine failed' path of both schedulers)."""

    def __init__(self, options=None):
        super().__init__(options)
        self.decode_steps = 0

    def decode_step(self, slots, tokens):
        self.decode_steps += 1
        if self.decode_steps % 4 == 0:
            raise RuntimeError("device lost")
        return super().decode_step(slots, tokens)


class GenerateOnlyEngine:
    """An engine with one batched generate() and no steps (like the HF engine): per_execute is its scheduler."""

    def __init__(self, options=None):
        inner = TinyEngine(options)
        self.stop_ids = inner.stop_ids
        self.prefix_ids, self.message_ids, self.assistant_ids = inner.prefix_ids, inner.message_ids, inner.assistant_ids
        self.decode, self.generate, self.close = inner.decode, inner.generate, inner.close
