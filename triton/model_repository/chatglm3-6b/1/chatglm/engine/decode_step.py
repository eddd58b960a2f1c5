"""The native engine's decode step: static shapes by row bucket, inputs from pinned buffers, CUDA graphs.

A decode step runs ChatGLMModel.decode over physical cache rows 0..B-1, B the smallest bucket (1, 2, 4, 8, 16,
..., max_rows) that holds every row of the step; rows of the bucket outside the step (free, or still in their
prompt) write to the cache's scratch position and their logits are dropped. Keys are read from a window of the
cache: the smallest of 256, 512, 1024, ... positions (then the whole cache) that holds the longest row of the
step, so a step at short contexts does not read the whole cache of every row (at 16 rows x 8,192 tokens that
would be 3.7 GB per ChatGLM3-6B step, a third more than its weights). The step's inputs (token ids,
positions, and which logits row belongs to which caller row) are written into one preallocated pinned host
buffer and copied to one preallocated device buffer without blocking, so a step's tensors live at the same
addresses every time: with `cuda_graphs: auto` (config.pbtxt) each bucket's step is captured once at load, after
a warm-up, and replayed; if capture fails, or a replay does not give the eager step's logits, the engine logs one
line and stays eager. On CPU the same static-shape step runs eagerly.

`TokenReadback` is the step's only device-to-host transfer: the sampled ids, one non-blocking copy into pinned
memory, waited for when the host needs them.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

import torch

import chatglm.log as log
from chatglm.model.forward import ChatGLMModel
from chatglm.model.kv_cache import KVCache

CUDA_GRAPHS = ("auto", "off")
WARMUP_STEPS = 2  # eager runs before capture (kernel selection, lazy allocations, cuBLAS workspaces)
SMALLEST_WINDOW = 256


def row_buckets(max_rows: int) -> List[int]:
    """1, 2, 4, 8, 16, ... below max_rows, then max_rows itself."""
    buckets, size = [], 1
    while size < max_rows:
        buckets.append(size)
        size *= 2
    return buckets + [max_rows]


def key_windows(positions: int) -> List[int]:
    """256, 512, 1024, ... below the cache's positions, then all of them."""
    windows, size = [], SMALLEST_WINDOW
    while size < positions:
        windows.append(size)
        size *= 2
    return windows + [positions]


def _pinned(shape, dtype, device: torch.device) -> torch.Tensor:
    tensor = torch.zeros(shape, dtype=dtype)
    return tensor.pin_memory() if device.type == "cuda" and torch.cuda.is_available() else tensor


class StaticDecoder:
    def __init__(self, model: ChatGLMModel, cache: KVCache, cuda_graphs: str = "auto"):
        if cuda_graphs not in CUDA_GRAPHS:
            raise ValueError(f"config parameter cuda_graphs must be one of {', '.join(CUDA_GRAPHS)}, got {cuda_graphs!r}")
        self.model, self.cache = model, cache
        self.device = model.device
        self.buckets = row_buckets(cache.rows)
        self.windows = key_windows(cache.positions)
        # Rows of the staging buffers: token id, position, logits row of the caller's i-th row.
        self._host = _pinned((3, cache.rows), torch.long, self.device)
        self._host_view = self._host.numpy()  # filled element by element on the host, no torch op per element
        self._inputs = torch.zeros((3, cache.rows), dtype=torch.long, device=self.device)
        self._staged = torch.cuda.Event() if self.device.type == "cuda" else None
        self._graphs: Dict[Tuple[int, int], torch.cuda.CUDAGraph] = {}
        self._graph_logits: Dict[Tuple[int, int], torch.Tensor] = {}
        self.graph_note = "off (cuda_graphs: off)" if cuda_graphs == "off" else "eager (not on CUDA)"
        if cuda_graphs == "auto" and self.device.type == "cuda":
            self._capture_all()

    @property
    def graphs(self) -> List[Tuple[int, int]]:
        """The (row bucket, key window) shapes replayed from a captured graph."""
        return sorted(self._graphs)

    def bucket_for(self, rows: int) -> int:
        return next(b for b in self.buckets if b >= rows)

    def window_for(self, positions: int) -> int:
        return next(w for w in self.windows if w >= positions)

    def step(self, physical_rows: Sequence[int], tokens: Sequence[int], positions: Sequence[int]) -> torch.Tensor:
        """Appends tokens[i] at positions[i] of physical row physical_rows[i]; float32 logits [len(rows), V] in
        the caller's order (a view of the graph's output buffer when replayed: valid until the next step)."""
        ids, where, window = self.stage(physical_rows, tokens, positions)
        graph = self._graphs.get((ids.shape[0], window))
        if graph is not None:
            graph.replay()
            logits = self._graph_logits[(ids.shape[0], window)]
        else:
            logits = self.model.decode(self.cache, ids, where, window)
        return self.in_callers_order(logits, physical_rows)

    def step_with_chunks(self, physical_rows: Sequence[int], tokens: Sequence[int], positions: Sequence[int], rows,
                         block, chunk_tokens, starts, wanted):
        """The same step and prompt chunks in one eager pass (ChatGLMModel.mixed): (step logits in the caller's
        order, logits of the `wanted` chunks)."""
        ids, where, window = self.stage(physical_rows, tokens, positions)
        logits, chunk_logits = self.model.mixed(self.cache, ids, where, window, rows, block, chunk_tokens, starts, wanted)
        return self.in_callers_order(logits, physical_rows), chunk_logits

    def stage(self, physical_rows: Sequence[int], tokens: Sequence[int], positions: Sequence[int]):
        """The step's inputs through the pinned buffer: (ids [B], positions [B] on the device, key window)."""
        bucket = self.bucket_for(max(physical_rows) + 1)
        window = self.window_for(max(positions) + 1)
        if self._staged is not None:
            self._staged.synchronize()  # the previous step's inputs have left the buffer (always, after its readback)
        host = self._host_view
        host[0, :bucket] = 0
        host[1, :bucket] = self.cache.scratch
        for i, (row, token, position) in enumerate(zip(physical_rows, tokens, positions)):
            host[0, row], host[1, row], host[2, i] = token, position, row
        self._inputs.copy_(self._host, non_blocking=True)  # the whole (contiguous) buffer: one small copy
        if self._staged is not None:
            self._staged.record()
        return self._inputs[0, :bucket], self._inputs[1, :bucket], window

    def in_callers_order(self, logits: torch.Tensor, physical_rows: Sequence[int]) -> torch.Tensor:
        count = len(physical_rows)
        if list(physical_rows) == list(range(count)):
            return logits[:count]
        return logits.index_select(0, self._inputs[2, :count])

    # -- CUDA graphs
    def _capture_all(self) -> None:
        """One graph per (row bucket, key window), largest first (they share one memory pool), each checked
        against the eager step."""
        pool = None
        try:
            for bucket in reversed(self.buckets):
                for window in reversed(self.windows):
                    graph, logits = self._capture(bucket, window, pool)
                    pool = graph.pool()
                    self._graphs[(bucket, window)], self._graph_logits[(bucket, window)] = graph, logits
                    self._check(bucket, window)
        except Exception as exc:  # noqa: BLE001 - any failure: eager steps, which are always right
            self._graphs.clear()
            self._graph_logits.clear()
            self.graph_note = f"eager (CUDA graph capture failed: {exc!r})"
            log.info(f"cuda_graphs: capture failed, decode steps run eagerly: {exc!r}")
            return
        self.graph_note = (f"CUDA graphs for row buckets {', '.join(map(str, self.buckets))} x key windows "
                           f"{', '.join(map(str, self.windows))}")
        log.info(f"cuda_graphs: decode step captured, {len(self._graphs)} graphs ({self.graph_note})")

    def _scratch_inputs(self, bucket: int):
        """Inputs that touch only the scratch position (the cache is empty at load, and stays as it was)."""
        self._inputs[0, :bucket] = torch.arange(bucket, device=self.device) % self.model.config.padded_vocab_size
        self._inputs[1, :bucket] = self.cache.scratch
        return self._inputs[0, :bucket], self._inputs[1, :bucket]

    def _capture(self, bucket: int, window: int, pool):
        ids, where = self._scratch_inputs(bucket)
        side = torch.cuda.Stream(self.device)
        side.wait_stream(torch.cuda.current_stream(self.device))
        with torch.cuda.stream(side):
            for _ in range(WARMUP_STEPS):
                self.model.decode(self.cache, ids, where, window)
        torch.cuda.current_stream(self.device).wait_stream(side)
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, pool=pool):
            logits = self.model.decode(self.cache, ids, where, window)
        return graph, logits

    def _check(self, bucket: int, window: int) -> None:
        ids, where = self._scratch_inputs(bucket)
        eager = self.model.decode(self.cache, ids, where, window).clone()
        self._graphs[(bucket, window)].replay()
        replayed = self._graph_logits[(bucket, window)]
        if not torch.allclose(replayed, eager, rtol=1e-3, atol=1e-3):  # at load, once per graph
            raise RuntimeError(f"bucket {bucket} x window {window}: the replayed step differs from the eager one by "
                               f"{float((replayed - eager).abs().max()):.3g}")


class TokenReadback:
    """Pinned host memory for the sampled ids of one iteration: `start` copies without blocking, `wait` returns
    them as ints once the copy is done (the one synchronisation of an iteration)."""

    def __init__(self, capacity: int, device: torch.device):
        self.buffer = _pinned((capacity,), torch.long, device)
        self._done = torch.cuda.Event() if device.type == "cuda" else None
        self._count: Optional[int] = None

    def start(self, ids: torch.Tensor) -> "TokenReadback":
        self._count = ids.shape[0]
        self.buffer[:self._count].copy_(ids, non_blocking=True)
        if self._done is not None:
            self._done.record()
        return self

    def wait(self) -> List[int]:
        if self._count is None:
            raise RuntimeError("no readback started")
        if self._done is not None:
            self._done.synchronize()
        count, self._count = self._count, None
        return self.buffer[:count].tolist()
