"""Our own Prometheus figures, shown on Triton's /metrics next to its built-in ones.

With the continuous scheduler execute() returns at once, so Triton's execution counts and compute times no longer
describe generation: these do. Counters are cumulative (rates and averages come from the difference of two
scrapes: rows per step = decode rows / decode steps, mean time to first token = first-token seconds / first
tokens); gauges are the state after the latest engine iteration. Step figures are recorded by the continuous
scheduler only.
"""
from __future__ import annotations

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
    "decode_steps": ("chatglm3_decode_steps_total", "Decode steps run (one token for every active row)", COUNTER),
    "decode_rows": ("chatglm3_decode_rows_total", "Rows summed over decode steps (divide by steps: rows per step)", COUNTER),
    "prefill_tokens": ("chatglm3_prefill_tokens_total", "Prompt tokens run through prefill", COUNTER),
    "first_token_seconds": ("chatglm3_first_token_seconds_total",
                            "Seconds from arrival to the first generated token, summed over requests", COUNTER),
    "first_tokens": ("chatglm3_first_tokens_total", "Requests that received their first generated token", COUNTER),
}


class Metrics:
    def __init__(self, model_name: str, version: str, instance: str):
        # One series per instance: each instance is its own stub process, and a series removed when one instance
        # unloads must not be another instance's.
        labels = {"model": model_name, "version": str(version), "instance": instance}
        # MetricFamily is injected by the stub at run time (it is absent while Triton auto-completes the config).
        kinds = {COUNTER: pb_utils.MetricFamily.COUNTER, GAUGE: pb_utils.MetricFamily.GAUGE}
        self._families = []
        for attribute, (name, description, kind) in FAMILIES.items():
            family = pb_utils.MetricFamily(name, description, kinds[kind])
            self._families.append(family)
            setattr(self, attribute, family.Metric(labels=labels))
