"""Our own Prometheus figures, shown on Triton's /metrics next to its built-in ones.

With the continuous scheduler execute() returns at once, so Triton's execution counts and compute times no longer
describe generation: these do. Counters are cumulative (rates and averages come from the difference of two
scrapes: rows per step = decode rows / decode steps, mean time to first token = first-token seconds / first
tokens); gauges are the state after the latest engine iteration. Step figures are recorded by the continuous
scheduler only.
"""
from __future__ import annotations

import threading
from collections import defaultdict
from typing import Any, Dict, List, Optional, Tuple

import triton_python_backend_utils as pb_utils

COUNTER, GAUGE = "counter", "gauge"
# attribute → (metric name, help text, kind)
FAMILIES = {
    "cancelled": ("chatglm3_cancelled_requests_total", "Requests cancelled by the client while generating", COUNTER),
    "invalid": ("chatglm3_invalid_requests_total", "Requests rejected with INVALID_ARG", COUNTER),
    "generated": ("chatglm3_generated_tokens_total", "Tokens generated (all finish reasons)", COUNTER),
    "busy": ("chatglm3_rejected_busy_total", "Requests refused as server busy (the waiting queue was full)", COUNTER),
    "active_rows": ("chatglm3_active_rows", "Rows generating (KV cache slots in use)", GAUGE),
    "waiting": ("chatglm3_waiting_requests", "Requests waiting for a free row", GAUGE),
    "failed": ("chatglm3_model_failed", "1 once a device fault stopped the model (reload it), else 0", GAUGE),
    "decode_steps": ("chatglm3_decode_steps_total", "Decode steps run (one token for every active row)", COUNTER),
    "decode_rows": ("chatglm3_decode_rows_total", "Rows summed over decode steps (divide by steps: rows per step)", COUNTER),
    "prefill_tokens": ("chatglm3_prefill_tokens_total", "Prompt tokens run through prefill", COUNTER),
    "first_token_seconds": ("chatglm3_first_token_seconds_total",
                            "Seconds from arrival to the first generated token, summed over requests", COUNTER),
    "first_tokens": ("chatglm3_first_tokens_total", "Requests that received their first generated token", COUNTER),
}


WEIGHTS_INFO = ("chatglm3_weights_info", "The weights as loaded: always 1, with labels quantization (none | int8) and dtype")


class Metrics:
    def __init__(self, model_name: str, version: str, instance: str, device: str = "cpu"):
        # One series per instance: each instance is its own stub process, and a series removed when one instance
        # unloads must not be another instance's. `device` (cuda:N inside the container, or cpu) says where the
        # instance runs, for the per-instance rows of Server Status and `triton-chatglm stats`.
        labels = {"model": model_name, "version": str(version), "instance": instance, "device": device}
        self._labels = labels
        # MetricFamily is injected by the stub at run time (it is absent while Triton auto-completes the config).
        kinds = {COUNTER: pb_utils.MetricFamily.COUNTER, GAUGE: pb_utils.MetricFamily.GAUGE}
        # Every write goes through `operate` (the one guard), and only this object holds the stub's objects.
        self._lock = threading.Lock()
        self._closed = False
        self._families: List[Any] = []
        self._series: Dict[str, Any] = {}
        for attribute, (name, description, kind) in FAMILIES.items():
            family = pb_utils.MetricFamily(name, description, kinds[kind])
            self._families.append(family)
            self._series[attribute] = family.Metric(labels=labels)
            setattr(self, attribute, Series(self, attribute))

    def describe_weights(self, quantization: str, dtype: str) -> None:
        """An info metric (value 1) whose labels say how the weights run, for Server Status and `triton-chatglm stats`."""
        family = pb_utils.MetricFamily(WEIGHTS_INFO[0], WEIGHTS_INFO[1], pb_utils.MetricFamily.GAUGE)
        self._families.append(family)
        self._series["weights_info"] = family.Metric(labels={**self._labels, "quantization": quantization, "dtype": dtype})
        self.weights_info = Series(self, "weights_info")
        self.weights_info.set(1)

    def apply(self, counts: Dict[str, float], gauges: Dict[str, float]) -> None:
        """Counter increments and gauge values by attribute name (each one an IPC round trip to the server)."""
        for attribute, value in counts.items():
            if value:
                self.operate(attribute, "increment", value)
        for attribute, value in gauges.items():
            self.operate(attribute, "set", value)

    def close(self) -> None:
        """finalize() calls this first: no write after it (one in flight ends first), and the stub's Metric and
        MetricFamily objects are freed now, while the stub can still tell the server; then the series leave
        /metrics. Freed at the stub's own teardown instead, they crash it (Python backend 24.10: the destructor
        asks for the stub instance, already gone, gets a new one without shared memory and dereferences it:
        SIGSEGV in Metric::SaveToSharedMemory) and the series stay on /metrics."""
        with self._lock:
            self._closed = True
            series, families = self._series, self._families
            self._series, self._families = {}, []
        series.clear()  # the metrics before their families, as the stub's MetricFamily clears its own on delete
        families.clear()

    def operate(self, attribute: str, operation: str, *value: float) -> Optional[float]:
        """`operation` (increment, set, value) on one metric, unless closed (then None): each is an IPC call."""
        with self._lock:
            if self._closed:
                return None
            return getattr(self._series[attribute], operation)(*value)


class Series:
    """One metric of the instance (`.increment` / `.set` / `.value`, as pb_utils' Metric), through Metrics.operate."""

    def __init__(self, owner: Metrics, attribute: str):
        self._owner = owner
        self._attribute = attribute

    def increment(self, value: float) -> None:
        self._owner.operate(self._attribute, "increment", value)

    def set(self, value: float) -> None:
        self._owner.operate(self._attribute, "set", value)

    def value(self) -> Optional[float]:
        return self._owner.operate(self._attribute, "value")


class MetricsBuffer:
    """Metric updates gathered where they happen (the engine thread, every step) and applied elsewhere in one
    batch: each update is an IPC round trip to the server, too slow to pay on every decode step."""

    def __init__(self):
        self._lock = threading.Lock()
        self._counts: Dict[str, float] = defaultdict(float)
        self._gauges: Dict[str, float] = {}

    def increment(self, attribute: str, value: float) -> None:
        with self._lock:
            self._counts[attribute] += value

    def set(self, attribute: str, value: float) -> None:
        with self._lock:
            self._gauges[attribute] = value

    def drain(self) -> Tuple[Dict[str, float], Dict[str, float]]:
        with self._lock:
            counts, gauges = dict(self._counts), dict(self._gauges)
            self._counts.clear()
            self._gauges.clear()
        return counts, gauges
