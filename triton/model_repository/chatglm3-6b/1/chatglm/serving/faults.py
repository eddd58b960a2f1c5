"""Which failures stay with one request and which make the whole model unusable.

- Out of memory (torch.cuda.OutOfMemoryError, or a RuntimeError saying so): the allocation failed before the
  kernel ran, the CUDA context is intact; the request whose work ran out fails alone.
- A device fault (an illegal address, a device-side assert, a launch failure, ECC...): CUDA reports it on every
  later call in the process (the context is poisoned). Nothing more can run until the model is reloaded (a new
  stub process), so the model stops accepting work and says why.
- Anything else raised by a forward pass leaves the KV cache in an unknown state: the open rows fail, the cache
  is reset and the next requests are served (the scheduler's engine-failure path).
"""
from __future__ import annotations

import torch

_OOM_TYPES = tuple(t for t in (getattr(torch.cuda, "OutOfMemoryError", None),) if t is not None)
# Texts of the CUDA runtime / cuBLAS errors that poison the context (torch raises them as RuntimeError).
_DEVICE_FAULT_MARKS = ("cuda error", "cublas_status", "cudnn_status", "device-side assert", "illegal memory access",
                       "unspecified launch failure", "ecc error", "cuda driver error", "nccl error")


def is_out_of_memory(exc: BaseException) -> bool:
    return isinstance(exc, _OOM_TYPES) or (isinstance(exc, RuntimeError) and "out of memory" in str(exc).lower())


def is_device_fault(exc: BaseException) -> bool:
    if is_out_of_memory(exc):
        return False
    text = str(exc).lower()
    return any(mark in text for mark in _DEVICE_FAULT_MARKS)


def model_failed_message(exc: BaseException) -> str:
    """What every request is told once the model failed (the extension offers Reload Model on this prefix)."""
    cause = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"the model failed: {cause[:300]}; reload it (the GPU state is lost until the model is loaded again)"
