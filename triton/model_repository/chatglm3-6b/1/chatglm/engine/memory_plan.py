"""The memory plan of a load: what the native engine will hold on its device, from the config and the settings
alone, before anything large is allocated.

    weights            the model as it will run (float, or int8 layers + float16 scales + the float rest)
    KV cache           rows x cache positions (the context + the decode step's scratch cell, rounded up to 16:
                       chatglm.model.kv_cache.cache_positions) x layers x KV groups x head_dim, keys and values
    prefill transient  the worst moment of one prefill forward of `prefill_chunk` tokens late in the context: the
                       residual stream, the [tokens, keys] mask, the larger half-layer's temporaries (the MLP's
                       up/gate at 6B), int8's dequantized weight block, and the logits of the chunk's last token
    decode buffers     the same for one static decode step of every row over the whole key window (mask, scores,
                       per-head rotary rows, logits, sampling), plus the logits each captured CUDA graph keeps
                       (one per row bucket x key window, chatglm.engine.decode_step; counted as if captured)
    reserve            what the CUDA caching allocator loses to rounding and fragmentation

`memory_plan(...)` is the plain figure (stable name: gpu_check.py compares it with torch.cuda.mem_get_info);
`plan_load(...)` is what a load does with it: pick the quantization (`auto`: none when the float model fits, else
int8, with the reason), shrink the prefill chunk before giving up, and fail with what does fit. The transient
formula is checked against every tensor the forward pass creates, counted on torch's meta device at ChatGLM3-6B's
shapes (tests/test_memory_plan.py); the extension's setup checklist uses the same formulas
(src/core/server/memoryPlan.ts, compared with these by tests/test_memory_plan.py and its TS twin).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

from chatglm.model.checkpoint import ChatGLMConfig, CheckpointError, parameter_shapes
from chatglm.engine.decode_step import key_windows, row_buckets
from chatglm.model.forward import MASK_ALIGN
from chatglm.model.kv_cache import cache_positions
from chatglm.model.quantization import QUANTIZATIONS, dequantize_block_rows, is_quantized_weight

ELEMENT_BYTES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}
MIN_PREFILL_CHUNK = 256  # below this a long prompt takes too many forwards to be worth serving
RESERVE_FIXED = 256 << 20  # allocator rounding and the cuBLAS/attention workspaces
RESERVE_FRACTION = 0.03  # fragmentation of the caching allocator, on top of the fixed part
INDEX_BYTES = 8  # int64 ids, positions and cache indices


class MemoryPlanError(CheckpointError):
    """The configured rows x context cannot fit on the device; the message says what does."""


@dataclass(frozen=True)
class MemoryPlan:
    quantization: str  # "none" | "int8"
    dtype: str
    rows: int
    context: int
    prefill_chunk: int
    weights: int
    kv_cache: int
    prefill_transient: int
    decode_buffers: int
    reserve: int
    free: Optional[int] = None  # bytes free on the device at load (None: unknown, nothing is refused)
    total_memory: Optional[int] = None
    reasons: Tuple[str, ...] = field(default=())

    @property
    def total(self) -> int:
        return self.weights + self.kv_cache + max(self.prefill_transient, self.decode_buffers) + self.reserve

    @property
    def fits(self) -> bool:
        return self.free is None or self.total <= self.free

    def as_dict(self) -> Dict[str, object]:
        return {"quantization": self.quantization, "dtype": self.dtype, "rows": self.rows, "context": self.context,
                "prefill_chunk": self.prefill_chunk, "weights": self.weights, "kv_cache": self.kv_cache,
                "prefill_transient": self.prefill_transient, "decode_buffers": self.decode_buffers,
                "reserve": self.reserve, "total": self.total, "free": self.free, "fits": self.fits}

    def table(self) -> str:
        """The plan as the load logs it: one line per part, GiB with two decimals."""
        weights = "int8 weights (+ float16 scales, float embeddings)" if self.quantization == "int8" else f"{self.dtype} weights"
        lines = [
            ("weights", weights, self.weights),
            ("KV cache", f"{self.rows} rows x {self.context} tokens", self.kv_cache),
            ("prefill transient", f"one {self.prefill_chunk}-token chunk at position {max(0, self.context - self.prefill_chunk)}",
             self.prefill_transient),
            ("decode buffers", f"one step of {self.rows} rows", self.decode_buffers),
            ("reserve", "allocator rounding and fragmentation", self.reserve),
            ("total", "weights + cache + max(transients) + reserve", self.total),
        ]
        if self.free is not None:
            lines.append(("free", "on the device at load", self.free))
        width = max(len(name) for name, _, _ in lines)
        body = [f"  {name:<{width}}  {gib(size):>9}  {what}" for name, what, size in lines]
        return "memory plan:\n" + "\n".join(body)


def gib(count: float) -> str:
    """GiB with two decimals; MiB below one GiB (a tiny model's figures stay readable)."""
    return f"{count / (1 << 30):.2f} GiB" if count >= 1 << 30 else f"{count / (1 << 20):.1f} MiB"


def model_weight_bytes(config: ChatGLMConfig, dtype: str, quantization: str = "none") -> int:
    """Bytes of the model as it runs: ChatGLM3's quantized layers as int8 + one float16 scale per output row."""
    element = ELEMENT_BYTES[dtype]
    total = 0
    for name, shape in parameter_shapes(config).items():
        count = 1
        for dim in shape:
            count *= dim
        if quantization == "int8" and is_quantized_weight(name):
            total += count + 2 * shape[0]
        else:
            total += count * element
    return total


def kv_cache_bytes(config: ChatGLMConfig, rows: int, context: int, dtype: str) -> int:
    positions = cache_positions(context)
    return 2 * config.num_layers * rows * config.multi_query_group_num * positions * config.head_dim * ELEMENT_BYTES[dtype]


def _dequantize_bytes(out_features: int, in_features: int, tokens: int, element: int) -> int:
    """int8: the float16 block of a layer's weight (and its compute-dtype copy when that is not float16), plus the
    block's slice of the output when the layer runs in blocks (chatglm.model.quantization.DequantizeLinear)."""
    rows = dequantize_block_rows(out_features, in_features)
    block = rows * in_features * 2 + (rows * in_features * element if element != 2 else 0)
    return block + (tokens * rows * element if rows < out_features else 0)


def prefill_transient_bytes(config: ChatGLMConfig, tokens: int, context: int, rows: int, dtype: str,
                            quantization: str = "none") -> int:
    """The largest set of live temporaries of one prefill forward of `tokens` (padded) tokens attending to
    `context` keys, for up to `rows` rows (forward.py, phase by phase; the attention kernel's own workspace is the
    SDPA call's, outside this count)."""
    e, n, s = ELEMENT_BYTES[dtype], tokens, context
    h, f, d = config.hidden_size, config.ffn_hidden_size, config.head_dim
    g, heads = config.multi_query_group_num, config.num_attention_heads
    b = max(1, min(rows, tokens))  # rows in one prefill forward
    qk, hd = (heads + g) * d, heads * d
    int8 = quantization == "int8"

    def dq(out_features: int, in_features: int) -> int:
        return _dequantize_bytes(out_features, in_features, n, e) if int8 else 0

    # Live for the whole forward: residual stream, mask, rotary rows, ids / positions / cache indices; and the
    # tables of a decode step of `rows` rows that runs in the same pass (step_with_chunks: per-head cos/sin, the
    # mask over the step's key window and its boolean source).
    mask_row = -(-s // MASK_ALIGN) * MASK_ALIGN  # the mask's rows are padded (forward.py)
    step_tables = 2 * rows * (heads + 2 * g) * d * e + rows * cache_positions(s) * (e + 1) + 3 * rows * INDEX_BYTES
    persistent = n * h * e + n * mask_row * e + 2 * n * d * e + 6 * n * INDEX_BYTES + step_tables
    rms = 3 * n * h * 4  # float32 copy, its scaled copy, the weighted copy
    attention = max(
        rms,
        n * h * e + n * config.qkv_size * e + dq(config.qkv_size, h),  # normed input and the qkv projection
        n * config.qkv_size * e + 4 * n * qk * e + 2 * n * g * d * e,  # rotary: flipped, two products, sum; cache cells
        # the attention call: rotated q/k, keys and values gathered for rows that are not one block, the output,
        # and one SDPA call's contiguous query and output (a head of every group)
        n * qk * e + 2 * b * g * s * d * e + n * hd * e + 2 * n * g * d * e,
        n * qk * e + n * hd * e + 2 * n * h * e + dq(h, hd),  # dense projection and the residual
    )
    mlp = max(
        rms,
        n * h * e + 2 * n * f * e + dq(2 * f, h),  # normed input, up/gate
        4 * n * f * e,  # up/gate, silu(up), silu(up) * gate
        3 * n * f * e + n * h * e + dq(h, f),  # down projection
        2 * n * f * e + 2 * n * h * e,  # the residual
    )
    logits = b * (h * (e + 4) + config.padded_vocab_size * (e + 4))  # last positions only, then float32
    return persistent + max(attention, mlp, logits)


def decode_buffer_bytes(config: ChatGLMConfig, rows: int, context: int, dtype: str, quantization: str = "none") -> int:
    """One static decode step of `rows` rows over the largest key window (every cache position): the prefill
    formula at one token per row, the per-head cos/sin rows of the fused rotation, the float32 scores of a plain
    attention and the sampler's float32 copies of the logits (softmax, sorted values and their int64 ids); plus the
    float32 logits that every captured graph keeps as its output (chatglm.engine.decode_step)."""
    e, v = ELEMENT_BYTES[dtype], config.padded_vocab_size
    window = cache_positions(context)
    steps = prefill_transient_bytes(config, rows, window, rows, dtype, quantization)
    rotary = 2 * rows * (config.num_attention_heads + 2 * config.multi_query_group_num) * config.head_dim * e
    scores = rows * config.num_attention_heads * window * 4 * 2
    sampling = rows * v * (4 * 3 + 8)
    graphs = sum(row_buckets(rows)) * len(key_windows(window)) * v * 4
    return steps + rotary + scores + sampling + rows * v * e + graphs


def memory_plan(config: ChatGLMConfig, rows: int, context: int, prefill_chunk: int, dtype: str = "float16",
                quantization: str = "none", free: Optional[int] = None, total_memory: Optional[int] = None,
                reasons: Tuple[str, ...] = ()) -> MemoryPlan:
    """The plan of one configuration (no decision): every figure in bytes."""
    if quantization not in ("none", "int8"):
        raise ValueError(f"quantization must be none or int8 here, got {quantization!r}")
    chunk = max(1, min(prefill_chunk, context))
    weights = model_weight_bytes(config, dtype, quantization)
    cache = kv_cache_bytes(config, rows, context, dtype)
    return MemoryPlan(
        quantization=quantization, dtype=dtype, rows=rows, context=context, prefill_chunk=chunk,
        weights=weights, kv_cache=cache,
        prefill_transient=prefill_transient_bytes(config, chunk, context, rows, dtype, quantization),
        decode_buffers=decode_buffer_bytes(config, rows, context, dtype, quantization),
        reserve=RESERVE_FIXED + int(RESERVE_FRACTION * (weights + cache)),
        free=free, total_memory=total_memory, reasons=reasons,
    )


def _chunks(prefill_chunk: int) -> List[int]:
    """The configured chunk, then halves of it down to MIN_PREFILL_CHUNK."""
    sizes, chunk = [prefill_chunk], prefill_chunk
    while chunk // 2 >= MIN_PREFILL_CHUNK:
        chunk //= 2
        sizes.append(chunk)
    return sizes


def _fitting(config, rows, context, prefill_chunk, dtype, quantization, free, total) -> Optional[MemoryPlan]:
    """The plan with the largest prefill chunk (the configured one or a half of it) that fits, or None."""
    for chunk in _chunks(prefill_chunk):
        plan = memory_plan(config, rows, context, chunk, dtype, quantization, free, total)
        if plan.fits:
            return plan
    return None


def plan_load(config: ChatGLMConfig, rows: int, context: int, prefill_chunk: int, dtype: str, quantization: str,
              free: Optional[int], total_memory: Optional[int] = None, where: str = "this GPU") -> MemoryPlan:
    """What a load will hold. `quantization`: none | int8 | auto (none if the float model fits, else int8).
    The prefill chunk shrinks (halving, down to MIN_PREFILL_CHUNK) before the load is refused; a refusal says
    which rows x context do fit, and with which quantization."""
    if quantization not in QUANTIZATIONS:
        raise ValueError(f"config parameter quantization must be one of {', '.join(QUANTIZATIONS)}, got {quantization!r}")
    candidates = ["none", "int8"] if quantization == "auto" else [quantization]
    if dtype not in ("float16", "bfloat16") and "int8" in candidates and quantization == "auto":
        candidates = ["none"]  # float32 (tests, CPU): int8 is only used when asked for
    for choice in candidates:
        plan = _fitting(config, rows, context, prefill_chunk, dtype, choice, free, total_memory)
        if plan is None:
            continue
        reasons = []
        if quantization == "auto":
            if choice == "none":
                reasons.append(f"quantization auto: {dtype} weights fit ({gib(plan.total)} of {gib(free)} free)"
                               if free is not None else "quantization auto: free memory unknown, weights stay in " + dtype)
            else:
                fp = memory_plan(config, rows, context, prefill_chunk, dtype, "none")
                reasons.append(f"quantization auto: int8 weights, since {dtype} needs {gib(fp.total)} and "
                               f"{gib(free)} is free")
        if plan.prefill_chunk < prefill_chunk:
            reasons.append(f"prefill chunk lowered from {prefill_chunk} to {plan.prefill_chunk} tokens to fit")
        return MemoryPlan(**{**plan.__dict__, "reasons": tuple(reasons)})
    raise MemoryPlanError(_refusal(config, rows, context, prefill_chunk, dtype, candidates, free, total_memory, where))


def largest_fit(config: ChatGLMConfig, rows: int, context: int, prefill_chunk: int, dtype: str, quantization: str,
                free: int) -> Optional[MemoryPlan]:
    """Fewer rows at the same context, else 1 row with a shorter context (halving): the first plan that fits."""
    for fewer in range(rows - 1, 0, -1):
        plan = _fitting(config, fewer, context, prefill_chunk, dtype, quantization, free, None)
        if plan is not None:
            return plan
    shorter = context
    while shorter // 2 >= MIN_PREFILL_CHUNK:
        shorter //= 2
        plan = _fitting(config, 1, shorter, min(prefill_chunk, shorter), dtype, quantization, free, None)
        if plan is not None:
            return plan
    return None


def split_prefill(lengths: List[Tuple[int, int]], limit: int) -> List[List[Tuple[int, int, int]]]:
    """Forwards for prefill chunks [start, stop) (by index) so that none holds more than `limit` padded tokens
    (rows x widest piece), the bound the plan's prefill transient is computed for: a chunk longer than the limit
    goes in pieces, in order; short chunks share a forward. Each forward is a list of (index, start, stop)."""
    queue = [(i, start, stop) for i, (start, stop) in enumerate(lengths)]
    forwards = []
    while queue:
        group, width, rest = [], 0, []
        for index, start, stop in queue:
            piece = min(stop - start, limit)
            wider = max(width, piece)
            if group and (len(group) + 1) * wider > limit:
                rest.append((index, start, stop))
                continue
            group.append((index, start, start + piece))
            width = wider
            if start + piece < stop:
                rest.append((index, start + piece, stop))
        forwards.append(group)
        queue = rest
    return forwards


def _refusal(config, rows, context, prefill_chunk, dtype, candidates, free, total, where) -> str:
    best = memory_plan(config, rows, context, _chunks(prefill_chunk)[-1], dtype, candidates[-1], free, total)
    size = f"{where} ({gib(free)} free" + (f" of {gib(total)})" if total else ")")
    kind = "int8" if best.quantization == "int8" else dtype
    head = (f"the model does not fit: weights {gib(best.weights)} ({kind}) + KV cache {gib(best.kv_cache)} ({rows} rows x {context} tokens) + transients "
            f"{gib(max(best.prefill_transient, best.decode_buffers))} (prefill chunk {best.prefill_chunk}) + reserve "
            f"{gib(best.reserve)} = {gib(best.total)} > {size}")
    as_int8 = None
    if "int8" not in candidates and dtype in ("float16", "bfloat16"):
        as_int8 = _fitting(config, rows, context, prefill_chunk, dtype, "int8", free, total)
    hint = (f" With int8 weights {rows} rows x {context} tokens fit ({gib(as_int8.total)}): set "
            f"tritonChatglm.quantization to int8 or auto." if as_int8 is not None else "")
    advice = (" Lower tritonChatglm.maxBatchSize (max_active_rows) or the context (max_input_tokens + "
              "max_new_tokens_limit, or max_context)" + ("" if "int8" in candidates or as_int8 else
                                                          ", set tritonChatglm.quantization to int8") +
              ", or free the device.")
    for choice in candidates:
        fit = largest_fit(config, rows, context, prefill_chunk, dtype, choice, free)
        if fit is not None:
            with_q = " with int8 weights" if choice == "int8" else ""
            return (f"{head}. On {where}: {fit.rows} rows x {fit.context} tokens fit{with_q} with "
                    f"{fit.prefill_chunk:,}-token prefill chunks; {rows} rows x {context} tokens do not.{hint}{advice}")
    if hint:
        return f"{head}.{hint}{advice}"
    return (f"{head}. Not even 1 row x {MIN_PREFILL_CHUNK} tokens fits" +
            (" with int8 weights" if "int8" in candidates else "") +
            f" (the weights alone need {gib(best.weights)}): use a GPU with more memory, or free the device.")
