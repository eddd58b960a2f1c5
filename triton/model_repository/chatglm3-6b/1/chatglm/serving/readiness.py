"""Whether this model is still ready, as the responder asks it to notice an unload (chatglm/serving/responder.py).

The question goes to Triton through the stub's `is_model_ready`, and it must not be asked before the server is
ready: a model loaded at start (`--load-model`, as every replica of a team server is) warms up while the server
is still starting, Triton answers "server not ready" with an error, and in the Python backend of Triton 2.51 the
stub reads that error message from shared memory after it let the server go on, while the server frees it. The
stub's allocator is then corrupt: the stub dies a moment later (a segfault in `priv_deallocate`, or `boost::interprocess::lock_exception`) and the model
never becomes ready.

Triton sends the warmup requests of `model_warmup` (batch_size requests, count times, for each sample) to each
instance before the model is ready, and no other request can reach the model until it is; so once more requests
than that arrived, the server is ready and the question is safe. Until then the probe answers None: not known.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional

import triton_python_backend_utils as pb_utils


def warmup_request_count(config: Dict[str, Any]) -> int:
    """Requests Triton sends to each instance for `model_warmup` (count 0 means once; batch_size at least 1)."""
    total = 0
    for sample in config.get("model_warmup", []) or []:
        total += max(1, int(sample.get("batch_size", 1) or 1)) * max(1, int(sample.get("count", 0) or 0))
    return total


class ReadinessProbe:
    def __init__(self, ask: Callable[[], bool], warmup_requests: int):
        self._ask = ask
        self._warmup_requests = warmup_requests
        self._seen = 0

    def saw_requests(self, n: int) -> None:
        """Called by execute() with the requests it was given (on execute's thread, before they are queued)."""
        self._seen += n

    def __call__(self) -> Optional[bool]:
        if self._seen <= self._warmup_requests:
            return None  # warmup: the server may still be starting, and asking now would break the stub
        return self._ask()


def readiness_probe(args: Dict[str, str], config: Dict[str, Any]) -> Optional[ReadinessProbe]:
    """A probe of this model's readiness (the stub's BLS API; None where the backend has none, as older ones)."""
    is_model_ready = getattr(pb_utils, "is_model_ready", None)
    name, version = args.get("model_name", ""), args.get("model_version", "")
    if is_model_ready is None or not name:
        return None
    return ReadinessProbe(lambda: is_model_ready(name, version), warmup_request_count(config))
