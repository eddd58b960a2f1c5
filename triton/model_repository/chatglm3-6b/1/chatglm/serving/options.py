"""How this model instance serves, read from config.pbtxt's `parameters` (all strings) and checked at load.

The request limits (prompt budget, max_new_tokens bounds, sampling defaults) live in chatglm.serving.request.Limits; this
file holds the rest: engine, scheduler, batch and queue bounds, prefill budget, idle gather and streaming interval. A bad
value fails the load with a message naming the parameter.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, Optional

from chatglm.serving.request import Limits

SCHEDULERS = ("continuous", "per_execute")
DEFAULT_ENGINE = "native"
DEFAULT_STREAM_INTERVAL_MS = 20.0  # far below a human's notice; a 6B model's decode step is usually slower anyway
DEFAULT_MAX_WAITING = 32
DEFAULT_PREFILL_TOKEN_BUDGET = 2048  # one budget of prompt tokens per iteration, then every active row decodes
MAX_ACTIVE_ROWS_LIMIT = 256
# While rows decode, an iteration with a prompt chunk may cost this many decode-only iterations ("off": always the
# whole prefill_token_budget); see chatglm.serving.chunk_sizer.ChunkSizer.
DEFAULT_PREFILL_STALL_TARGET = 2.0
# How long an idle engine waits for a burst to fill its rows, ms (the extension renders tritonChatglm.queueDelayMs
# here and 0 as Triton's own queue delay: chatglm.serving.continuous_scheduler.ContinuousScheduler._gather).
DEFAULT_IDLE_GATHER_MS = 0.0
# Whether `infill` (code completion) is taken: "auto" = the catalog entry of the loaded config.json (fillInMiddle);
# "on" / "off" = the renderer's word for the catalog model it installed (the config alone may not tell CodeGeeX4
# from GLM-4-9B-chat: same architecture).
FILL_IN_MIDDLE = ("auto", "on", "off")


@dataclass(frozen=True)
class ServingOptions:
    engine: str
    scheduler: Optional[str]  # None: continuous if the engine decodes step by step, else per_execute
    max_active_rows: int  # rows generating together (continuous: KV cache slots)
    max_waiting: int  # requests queued for a slot; more are refused as "server busy" (0 = unbounded)
    prefill_token_budget: int
    prefill_stall_target: Optional[float]  # None = off
    stream_interval_s: float
    idle_gather_s: float
    max_context: Optional[int]  # tokens per row (prompt + answer); None = what the limits need, within the model's
    limits: Limits
    fill_in_middle: str = "auto"  # FILL_IN_MIDDLE

    @staticmethod
    def from_parameters(params: Mapping[str, str], max_batch_size: int) -> "ServingOptions":
        def text(key: str) -> str:
            return str(params.get(key, "") or "").strip()

        def number(key: str, default, low, high, kind=int):
            raw = text(key)
            if not raw:
                return default
            try:
                value = kind(raw)
            except ValueError:
                value = None
            if value is None or not low <= value <= high:
                raise ValueError(f"config parameter {key} must be a number from {low} to {high}, got {raw!r}")
            return value

        scheduler = text("scheduler") or None
        if scheduler is not None and scheduler not in SCHEDULERS:
            raise ValueError(f"config parameter scheduler must be one of {', '.join(SCHEDULERS)}, got {scheduler!r}")
        max_context = number("max_context", None, 16, 1 << 20)
        fill_in_middle = text("fill_in_middle").lower() or "auto"
        if fill_in_middle not in FILL_IN_MIDDLE:
            raise ValueError(f"config parameter fill_in_middle must be one of {', '.join(FILL_IN_MIDDLE)}, got "
                             f"{fill_in_middle!r}")
        stall = None if text("prefill_stall_target").lower() == "off" else number(
            "prefill_stall_target", DEFAULT_PREFILL_STALL_TARGET, 1.5, 100.0, float)
        return ServingOptions(
            engine=text("engine") or DEFAULT_ENGINE,
            scheduler=scheduler,
            max_active_rows=number("max_active_rows", max(1, max_batch_size), 1, MAX_ACTIVE_ROWS_LIMIT),
            max_waiting=number("max_waiting", DEFAULT_MAX_WAITING, 0, 1_000_000),
            prefill_token_budget=number("prefill_token_budget", DEFAULT_PREFILL_TOKEN_BUDGET, 16, 1 << 20),
            prefill_stall_target=stall,
            stream_interval_s=number("stream_interval_ms", DEFAULT_STREAM_INTERVAL_MS, 0, 10_000, float) / 1000.0,
            idle_gather_s=number("idle_gather_ms", DEFAULT_IDLE_GATHER_MS, 0, 10_000, float) / 1000.0,
            max_context=max_context,
            limits=Limits.from_parameters(params),
            fill_in_middle=fill_in_middle,
        )

    @property
    def context_needed(self) -> int:
        """Tokens one row may need: the largest prompt plus the largest answer."""
        return self.limits.max_input_tokens + self.limits.max_new_tokens_limit
