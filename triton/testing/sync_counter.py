"""Counts, on any device (CPU in the tests), what would make the host wait on a GPU, and the compute ops.

`HostSyncCounter` is a TorchDispatchMode (torch 1.13 and 2.x): every aten op that runs inside it is seen.
A host synchronisation is counted for
- `aten._local_scalar_dense` (item(), bool(), int() and float() of a tensor: the host needs the value),
- ops whose output shape depends on values (`nonzero`, `masked_select`, `unique*`, indexing or index_put with a
  boolean mask, which is a nonzero underneath),
- a device-to-host copy: a copy into one of the `host_buffers` (on CUDA the pinned readback), and `tolist()`,
  `numpy()`, `cpu()` of any other tensor (patched while counting: on CPU they never reach the dispatcher).
Compute ops are every other op except views and aliases (what would launch a kernel on a GPU).
"""
from __future__ import annotations

from collections import Counter
from typing import Iterable, List

import torch
from torch.utils._python_dispatch import TorchDispatchMode

aten = torch.ops.aten
DATA_DEPENDENT = {"nonzero", "masked_select", "unique", "_unique", "_unique2", "unique_dim", "unique_consecutive"}
NOT_COMPUTE = {"view", "_unsafe_view", "expand", "permute", "transpose", "t", "unsqueeze", "squeeze", "slice", "select",
               "as_strided", "alias", "detach", "split", "split_with_sizes", "unbind", "lift_fresh", "_reshape_alias",
               "reshape", "flatten", "chunk", "narrow", "diagonal", "unfold", "view_as_real", "view_as_complex",
               "numpy_T", "_local_scalar_dense"}


def _name(func) -> str:
    return func.overloadpacket.__name__ if hasattr(func, "overloadpacket") else str(func)


class HostSyncCounter(TorchDispatchMode):
    def __init__(self, host_buffers: Iterable[torch.Tensor] = ()):
        super().__init__()
        self._hosts = [(b.data_ptr(), b.data_ptr() + b.numel() * b.element_size()) for b in host_buffers]
        self.syncs: List[str] = []
        self.ops: Counter = Counter()
        self._patched = []

    def _is_host(self, t: torch.Tensor) -> bool:
        ptr = t.data_ptr()
        return any(lo <= ptr < hi for lo, hi in self._hosts)

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = _name(func)
        if name == "_local_scalar_dense":
            self.syncs.append("_local_scalar_dense")
        elif name in DATA_DEPENDENT:
            self.syncs.append(name)
        elif name in ("index", "index_put", "index_put_") and any(
                isinstance(i, torch.Tensor) and i.dtype == torch.bool for i in (args[1] if len(args) > 1 else []) or []):
            self.syncs.append(f"{name} with a boolean mask")
        elif name == "copy_" and isinstance(args[0], torch.Tensor) and self._is_host(args[0]):
            self.syncs.append("device-to-host copy")
        if name not in NOT_COMPUTE:
            self.ops[name] += 1
        return func(*args, **kwargs)

    @property
    def compute_ops(self) -> int:
        return sum(self.ops.values())

    def __enter__(self):
        counter = self
        for method in ("tolist", "numpy", "cpu"):
            original = getattr(torch.Tensor, method)

            def wrapped(tensor, *a, __original=original, __method=method, **k):
                if not counter._is_host(tensor):
                    counter.syncs.append(f"{__method}()")
                return __original(tensor, *a, **k)

            self._patched.append((method, original, method in torch.Tensor.__dict__))
            setattr(torch.Tensor, method, wrapped)
        return super().__enter__()

    def __exit__(self, *exc):
        for method, original, own in self._patched:
            if own:
                setattr(torch.Tensor, method, original)
            else:
                delattr(torch.Tensor, method)
        self._patched.clear()
        return super().__exit__(*exc)
