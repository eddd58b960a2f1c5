"""The KV cache for continuous batching: keys and values of every layer for `rows` slots × `context` positions,
allocated once at load.

A row (one request) holds a slot from admission to its last token; each slot has its own length, which is also
the position of its next token (ChatGLM numbers a prompt's tokens 0..n-1, so no padding ever enters the cache).
The scheduler sees stable slot ids. Underneath, the slots in use are packed into the first physical rows: a
released slot is filled by moving the last row into it (one copy of that row's length, at most once per finished
request), so a decode step over all rows reads one contiguous block instead of gathering rows every step.

Each row has at least one position more than the context (`cache_positions`: rounded up to a multiple of 16,
which fused attention kernels want for the key length): the first of them, position `context`, is the scratch
cell. The static-shape decode step (chatglm.model.forward.ChatGLMModel.decode) runs every physical row of its
bucket; a row that takes no part in the step writes its key and value there, where no query ever looks (a query
at position p sees keys 0..p < context).
"""
from __future__ import annotations

import heapq
from typing import Dict, List, Optional, Sequence, Tuple, Union

import torch

Rows = Union[slice, torch.Tensor]  # a contiguous block of physical rows, or an index
POSITION_ALIGNMENT = 16


def cache_positions(context: int) -> int:
    """Positions per row: the context, the scratch cell, rounded up to POSITION_ALIGNMENT."""
    return -(-(context + 1) // POSITION_ALIGNMENT) * POSITION_ALIGNMENT


class KVCache:
    def __init__(self, layers: int, groups: int, head_dim: int, rows: int, context: int, dtype: torch.dtype, device):
        shape = (layers, rows, groups, cache_positions(context), head_dim)
        # Keys and values of a layer side by side ([layer, 0] keys, [layer, 1] values): the decode step writes a
        # token's key and value with one index_put (write_step); `keys` and `values` are views of it.
        self.kv = torch.zeros((shape[0], 2) + shape[1:], dtype=dtype, device=device)
        self.keys, self.values = self.kv[:, 0], self.kv[:, 1]
        self.rows = rows
        self.context = context
        self.scratch = context  # the scratch position (see the module docstring)
        self.positions = cache_positions(context)
        self._free: List[int] = list(range(rows))  # a heap: the lowest free slot id is handed out first
        self._row_of: Dict[int, int] = {}  # slot → physical row
        self._slot_at: List[int] = []  # physical row → slot (rows 0..len-1 are in use)
        self._length: List[int] = [0] * rows  # by physical row

    @staticmethod
    def bytes_needed(layers: int, groups: int, head_dim: int, rows: int, context: int, dtype: torch.dtype) -> int:
        element = torch.tensor([], dtype=dtype).element_size()
        return 2 * layers * rows * groups * cache_positions(context) * head_dim * element

    @property
    def nbytes(self) -> int:
        return 2 * self.keys.numel() * self.keys.element_size()

    @property
    def in_use(self) -> int:
        return len(self._slot_at)

    def acquire(self) -> int:
        if not self._free:
            raise RuntimeError(f"all {self.rows} KV cache slots are in use")
        slot = heapq.heappop(self._free)
        self._row_of[slot] = len(self._slot_at)
        self._slot_at.append(slot)
        self._length[self._row_of[slot]] = 0
        return slot

    def release(self, slot: int) -> None:
        row = self._row_of.pop(slot)
        last = len(self._slot_at) - 1
        if row != last:  # keep the rows in use packed: move the last one into the hole
            length = self._length[last]
            self.keys[:, row, :, :length] = self.keys[:, last, :, :length]
            self.values[:, row, :, :length] = self.values[:, last, :, :length]
            moved = self._slot_at[last]
            self._slot_at[row] = moved
            self._row_of[moved] = row
            self._length[row] = length
        self._slot_at.pop()
        heapq.heappush(self._free, slot)

    def length(self, slot: int) -> int:
        return self._length[self._row_of[slot]]

    def row_of(self, slot: int) -> int:
        """The physical row that holds the slot now (it changes when a row below it is released)."""
        return self._row_of[slot]

    def advance(self, slot: int, count: int) -> None:
        row = self._row_of[slot]
        if self._length[row] + count > self.context:
            raise RuntimeError(f"slot {slot} would exceed the cache's {self.context} positions")
        self._length[row] += count

    def plan(self, slots: Sequence[int]) -> Tuple[List[int], List[int], Rows]:
        """How to run `slots` as one batch: the order (indices into `slots`) that sorts them by physical row, those
        rows, and the rows to read: a slice when they form one block (always, for a decode step over every row)."""
        rows = [self._row_of[s] for s in slots]
        order = sorted(range(len(slots)), key=rows.__getitem__)
        ordered = [rows[i] for i in order]
        if ordered == list(range(ordered[0], ordered[0] + len(ordered))):
            block: Rows = slice(ordered[0], ordered[0] + len(ordered))
        else:
            block = torch.tensor(ordered, dtype=torch.long, device=self.keys.device)
        return order, ordered, block

    def write(self, layer: int, rows: torch.Tensor, positions: torch.Tensor, keys: torch.Tensor,
              values: torch.Tensor) -> None:
        """Stores keys/values [N, groups, head_dim] at (rows[i], positions[i])."""
        self.keys[layer, rows, :, positions] = keys
        self.values[layer, rows, :, positions] = values

    def write_step(self, layer: int, rows: torch.Tensor, positions: torch.Tensor, kv: torch.Tensor) -> None:
        """Stores kv [B, 2, groups, head_dim] (key and value of one token per row) at (rows[b], positions[b])."""
        self.kv[layer, :, rows, :, positions] = kv

    def read(self, layer: int, rows: Rows, length: int) -> Tuple[torch.Tensor, torch.Tensor]:
        """Keys and values [B, groups, length, head_dim] of the given physical rows (a view for a block)."""
        keys, values = self.keys[layer, :, :, :length], self.values[layer, :, :, :length]
        if isinstance(rows, slice):
            return keys[rows], values[rows]
        return keys.index_select(0, rows), values.index_select(0, rows)

    def reset(self) -> None:
        """Frees every slot and clears the content (after a failed step nothing in it is trusted)."""
        self._free = list(range(self.rows))
        self._row_of.clear()
        self._slot_at.clear()
        self._length = [0] * self.rows
        self.kv.zero_()


def describe_bytes(count: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if count < 1024 or unit == "GiB":
            return f"{count:.1f} {unit}" if unit != "B" else f"{int(count)} B"
        count /= 1024
    return f"{count:.1f} GiB"


def free_memory_bytes(device: torch.device) -> Optional[int]:
    """Free memory where the cache will live: CUDA's free bytes, or the host's MemAvailable; None if unknown."""
    if device.type == "cuda":
        free, _total = torch.cuda.mem_get_info(device)
        return int(free)
    try:
        with open("/proc/meminfo", encoding="ascii") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def total_memory_bytes(device: torch.device) -> Optional[int]:
    """The device's whole memory (CUDA), for the memory plan's messages; None on the host."""
    if device.type == "cuda":
        return int(torch.cuda.mem_get_info(device)[1])
    return None
