"""The ChatGLM2/3 forward pass in plain torch, over rows of a KVCache.

The arithmetic of THUDM's modeling_chatglm.py (checked against its logits by tests/test_native_fixture.py):
RMSNorm computed in float32; fused query/key/value projection with bias; rotary embedding on the first half of
each head, in (even, odd) pairs, with ChatGLM's table (cast to the model's dtype for fp16/bf16, as it does);
multi-query attention with `multi_query_group_num` key/value heads, softmax in float32; SwiGLU MLP; residuals
around both; the final RMSNorm and the output layer.

One call runs a batch of rows, each appending its own number of tokens at its own position (a prompt chunk, or
one token of a decode step): rows are right-padded to the longest, padding is never written to the cache and
never attended to. Key/value heads are not expanded to the query heads: the query heads of a group attend as one
block to their group's keys, so a decode step reads each cached key once.

`decode` is the decode step with static shapes: its tensors depend only on the row bucket and the key window (a
bucket of the cache's positions, the whole cache at most), masked by each row's length, never on a row's own
length, so the same step can be captured once per bucket as a CUDA graph (chatglm.engine.decode_step).
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional, Sequence

import torch
import torch.nn.functional as F

from chatglm.model.checkpoint import ChatGLMConfig
from chatglm.model.kv_cache import KVCache, Rows, cache_positions
from chatglm.model.quantization import DequantizeLinear, Linear, WeightValue, make_linear, weight_nbytes

HAS_SDPA = hasattr(F, "scaled_dot_product_attention")  # torch >= 2.0; Debian's 1.13 takes the plain path
MASK_ALIGN = 16  # elements: the prefill mask's row stride (memory-efficient SDPA wants it aligned)


class Layer:
    """The tensors of one transformer layer, by what they do (norm weights kept in float32: RMSNorm runs there).
    The four linear layers are callables (chatglm.model.quantization): float, or int8 as ChatGLM3 quantizes them."""

    def __init__(self, tensors: Dict[str, WeightValue], prefix: str, bias: bool, dtype: torch.dtype, int8_linear):
        def linear(name: str, with_bias: bool = False):
            return make_linear(tensors[prefix + name + ".weight"], tensors[prefix + name + ".bias"] if with_bias else None,
                               dtype, int8_linear)

        self.input_norm = tensors[prefix + "input_layernorm.weight"].float()
        self.qkv = linear("self_attention.query_key_value", bias)
        self.dense = linear("self_attention.dense")
        self.post_norm = tensors[prefix + "post_attention_layernorm.weight"].float()
        self.up = linear("mlp.dense_h_to_4h")
        self.down = linear("mlp.dense_4h_to_h")


class ChatGLMModel:
    def __init__(self, config: ChatGLMConfig, tensors: Dict[str, WeightValue], context: int,
                 int8_linear=DequantizeLinear):
        self.config = config
        self.embedding = tensors["transformer.embedding.word_embeddings.weight"]
        self.dtype, self.device = self.embedding.dtype, self.embedding.device
        self.layers = [Layer(tensors, f"transformer.encoder.layers.{i}.", config.add_qkv_bias, self.dtype, int8_linear)
                       for i in range(config.num_layers)]
        final_norm = tensors.get("transformer.encoder.final_layernorm.weight")
        self.final_norm = None if final_norm is None else final_norm.float()
        self.output = tensors["transformer.output_layer.weight"]
        # One entry past the context: the decode step's scratch position (chatglm.model.kv_cache).
        self.cos, self.sin = rotary_table(config, context + 1, self.dtype, self.device)
        self.attend = attend_sdpa if HAS_SDPA else attend_plain
        self.attend_step = attend_step_sdpa if HAS_SDPA else attend_step_plain
        self._key_positions = torch.arange(cache_positions(context), device=self.device)
        self._row_index = torch.arange(0)
        heads = config.num_attention_heads + 2 * config.multi_query_group_num
        self._value_heads = (torch.arange(heads, device=self.device) >= heads - config.multi_query_group_num).view(heads, 1)
        self._bytes = sum(weight_nbytes(t) for t in tensors.values())
        quantized = [layer.qkv for layer in self.layers if not isinstance(layer.qkv, Linear)]
        self.quantization = quantized[0].mode if quantized else "none"

    def parameter_bytes(self) -> int:
        """Bytes of the weights as loaded (int8 layers with their scales, the rest in the model's dtype)."""
        return self._bytes

    @torch.no_grad()
    def forward(self, cache: KVCache, rows: Sequence[int], block: Rows, tokens: Sequence[Sequence[int]],
                starts: Sequence[int], all_logits: bool = False,
                wanted: Optional[Sequence[int]] = None) -> torch.Tensor:
        """Appends tokens[i] to physical cache row rows[i] (which holds starts[i] tokens); `block` reads those rows.

        Returns float32 logits [B, V] after each row's last token, or [B, T, V] at every position (all_logits;
        positions past a row's own tokens are padding). `wanted`: the rows whose logits are used (a prompt chunk
        that does not end its prompt needs none); the output layer runs for those only, other rows are 0."""
        batch, counts = len(rows), [len(t) for t in tokens]
        width = max(counts)
        eps = self.config.layernorm_epsilon
        step = _StepLayout(rows, tokens, starts, counts, width, cache.context, self.device, self.dtype)
        cos, sin = self.cos[step.positions].unsqueeze(2), self.sin[step.positions].unsqueeze(2)  # [B, T, 1, head_dim]

        x = F.embedding(step.ids, self.embedding)
        for index, layer in enumerate(self.layers):
            x = self._attention_block(x, index, layer, cache, block, step, cos, sin)
            x = self._mlp_block(x, layer)

        if not all_logits:
            x = x[:, 0] if width == 1 else x[torch.arange(batch, device=self.device), step.count - 1]  # each row's last token
            if wanted is not None and len(wanted) < batch:  # the output layer is a decode step's worth of weights
                logits = torch.zeros(batch, self.output.shape[0], dtype=torch.float32, device=self.device)
                if wanted:
                    index = torch.tensor(list(wanted), dtype=torch.long, device=self.device)
                    logits[index] = self._logits(x.index_select(0, index))
                return logits
        return self._logits(x)

    def _logits(self, x: torch.Tensor) -> torch.Tensor:
        if self.final_norm is not None:
            x = rms_norm(x, self.final_norm, self.config.layernorm_epsilon)
        return F.linear(x, self.output).float()


    @torch.no_grad()
    def decode(self, cache: KVCache, ids: torch.Tensor, positions: torch.Tensor, window: int) -> torch.Tensor:
        """One decode step over physical cache rows 0..B-1 (B = the bucket, len(ids)), with static shapes.

        ids, positions: int64 [B] on the device. Row b appends token ids[b] at positions[b] (its length) and
        attends to its keys 0..positions[b], read from the first `window` cache positions (> every position of
        the step); a row outside the step has position cache.scratch, where its write is never read. Returns
        float32 logits [B, V]. No host synchronisation and no shape that depends on the values: what a CUDA
        graph can capture."""
        eps = self.config.layernorm_epsilon
        tables = self._step_tables(cache, positions, window)
        x = F.embedding(ids, self.embedding)  # [B, hidden]
        for index, layer in enumerate(self.layers):
            q = self._store_step(index, layer.qkv(rms_norm(x, layer.input_norm, eps)), cache, tables)
            x = _plus_linear(x, layer.dense, self._attend_step(index, q, cache, tables))
            up, gate = layer.up(rms_norm(x, layer.post_norm, eps)).chunk(2, dim=-1)
            x = _plus_linear(x, layer.down, F.silu(up) * gate)
        return self._logits(x)

    @torch.no_grad()
    def mixed(self, cache: KVCache, ids: torch.Tensor, positions: torch.Tensor, window: int, rows: Sequence[int],
              block: Rows, tokens: Sequence[Sequence[int]], starts: Sequence[int], wanted: Sequence[int]):
        """A decode step (as `decode`: bucket rows 0..B-1) and prompt chunks (as `forward`: tokens[i] appended to
        physical row rows[i]) in one pass, as vLLM's chunked prefill does: every linear layer runs once over the
        step's B tokens and the chunks' tokens together, so the weights are read once per iteration and running
        rows never wait for a separate prefill pass; attention runs for each part on its own. A chunk's row may be
        in the bucket: the step writes that row's scratch position only, which the chunk never reads.

        Returns float32 logits: [B, V] of the step and [len(wanted), V] after the last token of the chunks
        `wanted` (indices into rows: the chunks that complete their prompt), in one output-layer call."""
        batch, count = ids.shape[0], len(rows)
        counts = [len(t) for t in tokens]
        width = max(counts)
        step = _StepLayout(rows, tokens, starts, counts, width, cache.context, self.device, self.dtype)
        cos, sin = self.cos[step.positions].unsqueeze(2), self.sin[step.positions].unsqueeze(2)
        tables = self._step_tables(cache, positions, window)
        x = torch.cat((F.embedding(ids, self.embedding), F.embedding(step.ids, self.embedding).flatten(0, 1)))
        for index, layer in enumerate(self.layers):
            x = self._mixed_attention_block(x, index, layer, cache, tables, block, step, cos, sin)
            x = self._mlp_block(x, layer)
        last = x[batch:].view(count, width, -1)
        last = last[:, 0] if width == 1 else last[torch.arange(count, device=self.device), step.count - 1]
        if len(wanted) < count:
            last = last.index_select(0, torch.tensor(list(wanted), dtype=torch.long, device=self.device))
        logits = self._logits(torch.cat((x[:batch], last)))
        return logits[:batch], logits[batch:]

    def _mixed_attention_block(self, x, index: int, layer: Layer, cache: KVCache, tables: "_StepTables", block: Rows,
                               step: "_StepLayout", cos, sin):
        """`mixed`'s attention half: one qkv projection over the step's and the chunks' tokens (x [B + N, hidden]),
        each part's keys and values into the cache, each part's attention, one output projection."""
        batch, (count, width) = tables.rows.shape[0], step.ids.shape
        qkv = layer.qkv(rms_norm(x, layer.input_norm, self.config.layernorm_epsilon))
        q_step = self._store_step(index, qkv[:batch], cache, tables)
        q_chunk = self._store_chunk(index, qkv[batch:].view(count, width, -1), cache, step, cos, sin)
        del qkv  # the cache holds the keys and values now: only the queries live on into attention
        keys, values = cache.read(index, block, step.keys_len)
        chunk_out = self.attend(q_chunk, keys, values, step.bias, self.config.multi_query_group_num)
        return x + layer.dense(torch.cat((self._attend_step(index, q_step, cache, tables), chunk_out.flatten(0, 1))))

    def _step_tables(self, cache: KVCache, positions: torch.Tensor, window: int) -> "_StepTables":
        """What every layer of a decode step shares: the rows, the rotation of each row's position, the mask."""
        batch = positions.shape[0]
        if self._row_index.shape[0] < batch:
            self._row_index = torch.arange(cache.rows, device=self.device)
        # Rotation of every head of the fused qkv output at once: queries and keys by position, values by the
        # identity (cos 1, sin 0: exact), so the rotated key and value of a row are one block for the cache.
        cos = torch.where(self._value_heads, 1.0, self.cos.index_select(0, positions).unsqueeze(1))  # [B, heads, d]
        sin = torch.where(self._value_heads, 0.0, self.sin.index_select(0, positions).unsqueeze(1))
        visible = self._key_positions[:window].unsqueeze(0) <= positions.unsqueeze(1)  # [B, window]: keys 0..position
        bias = _mask_bias(visible, torch.float32 if self.attend_step is attend_step_plain else self.dtype).view(batch, 1, 1, -1)
        return _StepTables(self._row_index[:batch], positions, window, cos, sin, bias)

    def _store_step(self, index: int, qkv: torch.Tensor, cache: KVCache, tables: "_StepTables") -> torch.Tensor:
        """A decode step's fused qkv [B, ...] rotated, its key and value written to the cache; the queries
        [B, groups, heads_per_group, head_dim]."""
        cfg = self.config
        heads, groups, head_dim = cfg.num_attention_heads, cfg.multi_query_group_num, cfg.head_dim
        batch = qkv.shape[0]
        qkv = rotate_pairs(qkv.view(batch, heads + 2 * groups, head_dim), tables.cos, tables.sin)
        cache.write_step(index, tables.rows, tables.positions, qkv[:, heads:].view(batch, 2, groups, head_dim))
        return qkv[:, :heads].view(batch, groups, heads // groups, head_dim)

    def _attend_step(self, index: int, q: torch.Tensor, cache: KVCache, tables: "_StepTables") -> torch.Tensor:
        """The step's attention over the first `window` cache positions of its rows: [B, heads * head_dim]."""
        batch, window = q.shape[0], tables.window
        keys, values = cache.keys[index, :batch, :, :window], cache.values[index, :batch, :, :window]
        return self.attend_step(q, keys, values, tables.bias).reshape(batch, -1)

    # One method per half-layer, so that its temporaries (qkv, the MLP's up/gate) are freed when it returns and
    # never live on into the other half: the prefill transient is the larger half, not their sum.
    def _attention_block(self, x, index: int, layer: Layer, cache: KVCache, block: Rows, step: "_StepLayout", cos, sin):
        q = self._store_chunk(index, layer.qkv(rms_norm(x, layer.input_norm, self.config.layernorm_epsilon)), cache, step,
                              cos, sin)
        keys, values = cache.read(index, block, step.keys_len)
        return x + layer.dense(self.attend(q, keys, values, step.bias, self.config.multi_query_group_num))

    def _store_chunk(self, index: int, qkv: torch.Tensor, cache: KVCache, step: "_StepLayout", cos, sin) -> torch.Tensor:
        """Chunks' fused qkv [B, T, ...]: queries and keys rotated, keys and values written to the cache (padding
        left out); returns the queries [B, T, heads, head_dim]. The caller's qkv is freed once it returns: the
        attention reads keys and values from the cache."""
        cfg = self.config
        heads, groups, head_dim = cfg.num_attention_heads, cfg.multi_query_group_num, cfg.head_dim
        batch, width = qkv.shape[:2]
        qkv = qkv.view(batch, width, heads + 2 * groups, head_dim)
        qk = rotate_pairs(qkv[:, :, :heads + groups], cos, sin)  # queries and keys rotated together
        cache.write(index, step.write_rows, step.write_positions, step.flat(qk[:, :, heads:]), step.flat(qkv[:, :, heads + groups:]))
        return qk[:, :, :heads]

    def _mlp_block(self, x, layer: Layer):
        up, gate = layer.up(rms_norm(x, layer.post_norm, self.config.layernorm_epsilon)).chunk(2, dim=-1)
        return x + layer.down(F.silu(up) * gate)


@dataclass(frozen=True)
class _StepTables:
    rows: torch.Tensor  # physical rows 0..B-1
    positions: torch.Tensor  # [B]: where each row writes (its length, or the scratch position)
    window: int  # cache positions the step reads
    cos: torch.Tensor  # [B, heads + 2 groups, head_dim]
    sin: torch.Tensor
    bias: torch.Tensor  # [B, 1, 1, window]: 0 for keys 0..position, -inf after


class _StepLayout:
    """Where one forward call's tokens go: ids, positions, the cache cells written, and the attention mask
    (query t of row b sees key j iff j <= start + t and j < start + count: its row's cached tokens and its own
    tokens up to t, never padding or what an earlier row left in the slot). Built once per call, for every layer,
    in the compute dtype and without a head dimension: [B, 1, T, S], broadcast over the heads by the attention."""

    def __init__(self, rows, tokens, starts, counts, width: int, context: int, device, dtype: torch.dtype = torch.float32):
        batch = len(rows)
        self.keys_len = max(s + c for s, c in zip(starts, counts))
        self.dense = all(c == width for c in counts)  # no padding: decode steps, equal chunks
        if width == 1:  # a decode step: one small host-to-device copy for everything
            meta = torch.tensor([t[0] for t in tokens] + list(starts) + list(rows), dtype=torch.long).to(device)
            self.ids, start, row_index = meta[:batch].view(batch, 1), meta[batch:2 * batch], meta[2 * batch:]
            self.count = None
            self.positions = start.view(batch, 1)
            key_pos = torch.arange(self.keys_len, device=device)
            self.bias = torch.zeros(batch, 1, 1, self.keys_len, dtype=dtype, device=device).masked_fill_(
                key_pos.view(1, 1, 1, -1) > start.view(batch, 1, 1, 1), float("-inf"))  # [B, 1, 1, S]
            self.write_rows, self.write_positions = row_index, start
            return
        ids = torch.zeros(batch, width, dtype=torch.long)
        for i, t in enumerate(tokens):
            ids[i, :counts[i]] = torch.as_tensor(t, dtype=torch.long)
        self.ids = ids.to(device)
        start = torch.tensor(starts, dtype=torch.long, device=device)
        self.count = torch.tensor(counts, dtype=torch.long, device=device)
        offsets = torch.arange(width, device=device)
        self.valid = offsets.unsqueeze(0) < self.count.unsqueeze(1)  # [B, T]
        self.positions = (start.unsqueeze(1) + offsets).clamp(max=context - 1)
        key_pos = torch.arange(self.keys_len, device=device).view(1, 1, 1, -1)
        # Two in-place fills: at most one [B, T, S] boolean exists at a time besides the mask itself. Rows start at
        # multiples of MASK_ALIGN elements, as fused attention kernels want them (else they copy the mask per call).
        padded = -(-self.keys_len // MASK_ALIGN) * MASK_ALIGN
        self.bias = torch.zeros(batch, 1, width, padded, dtype=dtype, device=device)[..., :self.keys_len]
        self.bias.masked_fill_(key_pos > self.positions.view(batch, 1, width, 1), float("-inf"))  # the future
        self.bias.masked_fill_(key_pos >= (start + self.count).view(batch, 1, 1, 1), float("-inf"))  # padding
        row_index = torch.tensor(rows, dtype=torch.long, device=device).unsqueeze(1).expand(batch, width)
        self.write_rows = row_index.reshape(-1) if self.dense else row_index[self.valid]
        self.write_positions = self.positions.reshape(-1) if self.dense else self.positions[self.valid]

    def flat(self, x: torch.Tensor) -> torch.Tensor:
        """[B, T, groups, head_dim] → the written cells [N, groups, head_dim] (padding left out)."""
        return x.reshape(-1, *x.shape[2:]) if self.dense else x[self.valid]


def _mask_bias(visible: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """0 where attention is allowed, -inf elsewhere (added to the scores: float32 for the plain path)."""
    return torch.zeros(visible.shape, dtype=dtype, device=visible.device).masked_fill_(~visible, float("-inf"))


def _plus_linear(x: torch.Tensor, linear, inputs: torch.Tensor) -> torch.Tensor:
    """x + linear(inputs) for the decode step's [B, hidden] rows: a float layer without bias takes the residual
    inside its matmul (one op); an int8 layer (chatglm.model.quantization) adds it after its own call."""
    if isinstance(linear, Linear) and linear.bias is None:
        return torch.addmm(x, inputs, linear.weight.t())
    return x + linear(inputs)


def rms_norm(x: torch.Tensor, weight32: torch.Tensor, eps: float) -> torch.Tensor:
    """ChatGLM's RMSNorm: statistics and scaling in float32 (weight32 is float32), result in the input's dtype."""
    x32 = x.float()
    return (x32 * torch.rsqrt(x32.pow(2).mean(-1, keepdim=True) + eps) * weight32).to(x.dtype)


def rotary_table(config: ChatGLMConfig, context: int, dtype: torch.dtype, device):
    """cos and sin [context, head_dim] for positions 0..context-1, laid out for `rotate_pairs`: ChatGLM's angles
    (RotaryEmbedding.forward_impl) repeated for both channels of a pair, with sign -/+ on sin, and cos 1 / sin 0
    on the second half of the head, which ChatGLM does not rotate."""
    n_elem = config.rotary_dim
    base = 10000.0 * config.rope_ratio
    theta = 1.0 / (base ** (torch.arange(0, n_elem, 2, dtype=torch.float32) / n_elem))
    angles = torch.outer(torch.arange(context, dtype=torch.float32), theta)  # [context, rotary_dim / 2]
    # Computed in float32 and cast to the model's dtype, as ChatGLM does for its fp16/bf16 cache.
    cos, sin = torch.cos(angles).to(dtype), torch.sin(angles).to(dtype)
    rest = config.head_dim - n_elem
    cos_full = torch.cat((cos.repeat_interleave(2, dim=-1), torch.ones(context, rest, dtype=dtype)), dim=-1)
    sin_full = torch.cat((torch.stack((-sin, sin), dim=-1).flatten(-2), torch.zeros(context, rest, dtype=dtype)), dim=-1)
    return cos_full.to(device), sin_full.to(device)


def rotate_pairs(x: torch.Tensor, cos: torch.Tensor, sin: torch.Tensor) -> torch.Tensor:
    """(a, b) → (a cos - b sin, b cos + a sin) for each (even, odd) channel pair of every head, in one pass over
    the whole head (the table leaves ChatGLM's unrotated half as it is)."""
    swapped = x.reshape(*x.shape[:-1], -1, 2).flip(-1).reshape(x.shape)
    return x * cos + swapped * sin


def _grouped(q: torch.Tensor, groups: int):
    """q [B, T, heads, d] → [B, groups, heads_per_group * T, d]: a group's heads as one block of queries, in
    (head, position) order, so that the scores of a head are a [T, S] block the [T, S] mask lines up with."""
    batch, width, heads, head_dim = q.shape
    per_group = heads // groups
    if width == 1:  # a decode step: a reshape of what is there
        return q.reshape(batch, groups, per_group, head_dim), per_group
    q = q.reshape(batch, width, groups, per_group, head_dim).permute(0, 2, 3, 1, 4).reshape(batch, groups, per_group * width, head_dim)
    return q, per_group


def _ungrouped(out: torch.Tensor, batch: int, width: int, groups: int, per_group: int) -> torch.Tensor:
    if width == 1:
        return out.reshape(batch, 1, -1)
    head_dim = out.shape[-1]
    return out.view(batch, groups, per_group, width, head_dim).permute(0, 3, 1, 2, 4).reshape(batch, width, -1)


def attend_plain(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, bias: torch.Tensor, groups: int) -> torch.Tensor:
    """Scaled dot-product attention, softmax in float32 (torch 1.13 has no fused kernel). The mask [B, 1, T, S] is
    added to a [B, groups, heads_per_group, T, S] view of the scores: broadcast over the heads, never copied."""
    batch, width = q.shape[:2]
    grouped, per_group = _grouped(q, groups)
    scores = torch.matmul(grouped * (1.0 / math.sqrt(q.shape[-1])), keys.transpose(-1, -2))
    shape = scores.shape
    scores = scores.float().view(batch, groups, -1, width, shape[-1]) + bias.view(batch, 1, 1, width, shape[-1])
    probs = torch.softmax(scores, dim=-1).to(values.dtype).view(shape)
    return _ungrouped(torch.matmul(probs, values), batch, width, groups, per_group)


def attend_sdpa(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, bias: torch.Tensor, groups: int) -> torch.Tensor:
    """torch 2.x fused attention (softmax in float32 inside the kernel). A decode step runs the group's heads as
    one block of queries against the group's keys ([B, 1, 1, S] mask). A prefill runs one call per head of a group
    (the j-th head of every group together), so the [B, 1, T, S] mask broadcasts over heads as it is and neither
    the mask nor the keys are ever expanded to the query heads."""
    batch, width, heads, head_dim = q.shape
    if width == 1:
        grouped, per_group = _grouped(q, groups)
        return _ungrouped(F.scaled_dot_product_attention(grouped, keys, values, attn_mask=bias), batch, width, groups, per_group)
    per_group = heads // groups
    by_group = q.view(batch, width, groups, per_group, head_dim)
    out = torch.empty_like(by_group)
    for j in range(per_group):
        head = by_group[:, :, :, j].transpose(1, 2)  # [B, groups, T, d]
        out[:, :, :, j] = F.scaled_dot_product_attention(head, keys, values, attn_mask=bias).transpose(1, 2)
    return out.view(batch, width, heads * head_dim)


def attend_step_plain(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """Decode-step attention: q [B, groups, heads_per_group, d] against keys/values [B, groups, S, d]; the mask
    bias [B, 1, 1, S] is float32, as is the softmax."""
    scores = torch.matmul(q * (1.0 / math.sqrt(q.shape[-1])), keys.transpose(-1, -2))
    probs = torch.softmax(scores.float() + bias, dim=-1).to(values.dtype)
    return torch.matmul(probs, values)


def attend_step_sdpa(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, bias: torch.Tensor) -> torch.Tensor:
    """The same with torch 2.x's fused kernel (bias in the model's dtype, built once per step)."""
    return F.scaled_dot_product_attention(q, keys, values, attn_mask=bias)


def logits_rows(logits: torch.Tensor, order: List[int]) -> torch.Tensor:
    """Puts rows computed in `order` back into the caller's order."""
    if order == list(range(len(order))):
        return logits
    inverse = [0] * len(order)
    for position, index in enumerate(order):
        inverse[index] = position
    return logits.index_select(0, torch.tensor(inverse, dtype=torch.long, device=logits.device))
