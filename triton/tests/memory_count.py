"""Counts the bytes of every tensor the engine creates, without a GPU: the engine runs on torch's `meta` device
(shapes and dtypes, no data) at ChatGLM3-6B's real shapes, under a TorchDispatchMode that sees every aten op.

A tensor an op returns is a new allocation unless the op's schema says it aliases an input (views, in-place ops);
an allocation stays live while any tensor on its storage (itself or a view) is alive, and its bytes are freed when
the last one is collected. Tensors on another device (the host-side ids the engine copies over) are not counted.
`AllocationCounter.outside(fn)` wraps a function (the attention kernel) whose own temporaries are not counted:
only what it returns is. Used by tests/test_memory_plan.py and bench/memory_plan_bench.py.
"""
from __future__ import annotations

import weakref
from contextlib import contextmanager
from typing import Callable, Dict, List, Optional

import torch
from torch.utils._python_dispatch import TorchDispatchMode
from torch.utils._pytree import tree_flatten

CHATGLM3_6B = {"num_layers": 28, "hidden_size": 4096, "num_attention_heads": 32, "kv_channels": 128,
               "multi_query_attention": True, "multi_query_group_num": 2, "ffn_hidden_size": 13696,
               "padded_vocab_size": 65024, "layernorm_epsilon": 1e-5, "add_qkv_bias": True, "post_layer_norm": True,
               "rmsnorm": True, "seq_length": 8192, "original_rope": True}


class _Allocation:
    __slots__ = ("nbytes", "holders", "__weakref__")

    def __init__(self, nbytes: int):
        self.nbytes = nbytes
        self.holders = 0


class AllocationCounter(TorchDispatchMode):
    def __init__(self, device: str = "meta"):
        super().__init__()
        self.device = torch.device(device)
        self.live = 0
        self.peak = 0
        self.allocations = 0
        self._of: Dict[int, _Allocation] = {}  # id(tensor) → its allocation, while the tensor lives
        self._paused = 0

    # -- accounting
    def _hold(self, tensor: torch.Tensor, allocation: _Allocation) -> None:
        key = id(tensor)
        if self._of.get(key) is allocation:
            return
        allocation.holders += 1
        self._of[key] = allocation
        weakref.finalize(tensor, self._release, key, allocation)

    def _release(self, key: int, allocation: _Allocation) -> None:
        if self._of.get(key) is allocation:
            del self._of[key]
        allocation.holders -= 1
        if allocation.holders == 0:
            self.live -= allocation.nbytes

    def adopt(self, tensor: torch.Tensor) -> None:
        """Counts `tensor` as a new allocation (what an uncounted function returned)."""
        if isinstance(tensor, torch.Tensor) and tensor.device == self.device and id(tensor) not in self._of:
            allocation = _Allocation(tensor.numel() * tensor.element_size())
            self.live += allocation.nbytes
            self.allocations += 1
            self.peak = max(self.peak, self.live)
            self._hold(tensor, allocation)

    def outside(self, fn: Callable) -> Callable:
        def wrapped(*args, **kwargs):
            with self.paused():
                out = fn(*args, **kwargs)
            self.adopt(out)
            return out

        return wrapped

    @contextmanager
    def paused(self):
        self._paused += 1
        try:
            yield
        finally:
            self._paused -= 1

    def reset_peak(self) -> None:
        self.peak = self.live

    # -- every aten op
    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        if self._paused:
            return out
        outputs = [t for t in tree_flatten(out)[0] if isinstance(t, torch.Tensor)]
        aliased = _aliased_input(func, args, kwargs or {})
        for tensor in outputs:
            if tensor.device != self.device:
                continue
            if aliased is not None:
                source = self._of.get(id(aliased))
                if source is not None:
                    self._hold(tensor, source)
                continue
            self.adopt(tensor)
        return out


UNANNOTATED_VIEWS = {"_unsafe_view"}  # returns a view of its input though its schema says nothing


def _aliased_input(func, args, kwargs) -> Optional[torch.Tensor]:
    """The input tensor an op's output aliases (a view or an in-place result), or None for a new tensor."""
    schema = func._schema
    if schema.name.split("::")[-1] in UNANNOTATED_VIEWS:
        return args[0]
    if not schema.returns or all(r.alias_info is None for r in schema.returns):
        return None
    sets = set()
    for r in schema.returns:
        if r.alias_info is not None:
            sets |= set(r.alias_info.before_set) or {"*"}  # a list of views (split, chunk): its set is on the elements
    values: List = list(args) + [kwargs.get(a.name) for a in schema.arguments[len(args):]]
    for argument, value in zip(schema.arguments, values):
        if argument.alias_info is not None and (set(argument.alias_info.before_set) & sets or "*" in sets):
            if isinstance(value, torch.Tensor):
                return value
            if isinstance(value, (list, tuple)) and value and isinstance(value[0], torch.Tensor):
                return value[0]
    return None


def meta_weights(config, dtype: torch.dtype, quantization: str = "none") -> Dict[str, object]:
    """The model's tensors on the meta device (int8 layers as Int8Weight)."""
    from chatglm.model.checkpoint import parameter_shapes
    from chatglm.model.quantization import Int8Weight, is_quantized_weight

    tensors: Dict[str, object] = {}
    for name, shape in parameter_shapes(config).items():
        if quantization == "int8" and is_quantized_weight(name):
            tensors[name] = Int8Weight(torch.empty(shape, dtype=torch.int8, device="meta"),
                                       torch.empty(shape[0], dtype=torch.float16, device="meta"))
        else:
            tensors[name] = torch.empty(shape, dtype=dtype, device="meta")
    return tensors


class _Tokenizer:
    eos_token_id = 2

    def get_command(self, name):
        return {"<|user|>": 64795, "<|observation|>": 64797, "<|assistant|>": 64796}[name]


def meta_engine(config, rows: int, context: int, prefill_chunk: int, dtype: torch.dtype = torch.float16,
                quantization: str = "none"):
    """The native engine on the meta device (free memory unknown: the plan refuses nothing)."""
    import chatglm.engine.native as native
    from chatglm.engine.types import EngineOptions

    options = EngineOptions(weights_path="", dtype=str(dtype).replace("torch.", ""), device="meta", max_rows=rows,
                            max_context=context, parameters={"quantization": quantization,
                                                             "prefill_token_budget": str(prefill_chunk)})
    original = native.free_memory_bytes, native.total_memory_bytes, torch.Generator
    native.free_memory_bytes = native.total_memory_bytes = lambda device: None
    torch.Generator = lambda device=None: original[2]()  # meta has no generator; sampling is not run here
    try:
        return native.NativeEngine(options, tokenizer=_Tokenizer(), config=config,
                                   tensors=meta_weights(config, dtype, quantization), dtype=dtype, sampling_seed=0)
    finally:
        native.free_memory_bytes, native.total_memory_bytes, torch.Generator = original


def count_prefill_and_decode(engine, chunk: int = 2048, position: int = 6144, decode_rows: int = 8) -> Dict[str, int]:
    """Peak bytes the engine creates (attention kernel excepted) for one `chunk`-token prefill at `position` and
    one decode step of `decode_rows` rows at the end of the context."""
    from chatglm.engine.types import PrefillChunk

    counter = AllocationCounter("meta")
    engine.model.attend = counter.outside(engine.model.attend)
    prompt = [5] * (position + chunk)
    slot = engine.open_row()
    engine.cache.advance(slot, position)  # the earlier chunks are in the cache
    with counter:
        engine.prefill([PrefillChunk(slot, prompt, position, position + chunk)])
    prefill_peak, allocations = counter.peak, counter.allocations
    engine.close_row(slot)
    slots = [engine.open_row() for _ in range(decode_rows)]
    for s in slots:
        engine.cache.advance(s, engine.max_context - 1)
    before = counter.live  # nothing of the prefill is left (its logits were dropped)
    counter.reset_peak()
    with counter:
        engine.decode_step(slots, [7] * decode_rows)
    decode_peak = counter.peak - before
    for s in slots:
        engine.close_row(s)
    return {"prefill_peak": prefill_peak, "prefill_allocations": allocations, "decode_peak": decode_peak,
            "left_after_prefill": before}


def count_mixed(engine, chunk: int = 2040, position: int = 6144, decode_rows: int = 7) -> Dict[str, int]:
    """Peak bytes the engine creates (both attention kernels excepted) for one pass that holds a decode step of
    `decode_rows` rows at the end of the context and a `chunk`-token prompt chunk at `position`
    (step_with_chunks: together, the prefill forward's tokens)."""
    from chatglm.engine.types import PrefillChunk

    counter = AllocationCounter("meta")
    engine.model.attend = counter.outside(engine.model.attend)
    engine.model.attend_step = counter.outside(engine.model.attend_step)
    slots = [engine.open_row() for _ in range(decode_rows)]
    for s in slots:
        engine.cache.advance(s, engine.max_context - 1)
    prompt = [5] * (position + chunk)
    slot = engine.open_row()
    engine.cache.advance(slot, position)
    with counter:
        out = engine.step_with_chunks([PrefillChunk(slot, prompt, position, position + chunk)], slots, [7] * decode_rows)
    assert out is not None, "the pass fits the prefill bound"
    del out
    for s in slots + [slot]:
        engine.close_row(s)
    return {"mixed_peak": counter.peak, "mixed_allocations": counter.allocations}
