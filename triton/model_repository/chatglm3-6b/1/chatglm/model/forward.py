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
from typing import Dict, List, Optional, Sequence

import torch
import torch.nn.functional as F

from chatglm.model.checkpoint import ChatGLMConfig
from chatglm.model.kv_cache import KVCache, Rows, cache_positions

HAS_SDPA = hasattr(F, "scaled_dot_product_attention")  # torch >= 2.0; Debian's 1.13 takes the plain path


class Layer:
    """The tensors of one transformer layer, by what they do (norm weights kept in float32: RMSNorm runs there)."""

    def __init__(self, tensors: Dict[str, torch.Tensor], prefix: str, bias: bool):
        self.input_norm = tensors[prefix + "input_layernorm.weight"].float()
        self.qkv = tensors[prefix + "self_attention.query_key_value.weight"]
        self.qkv_bias = tensors[prefix + "self_attention.query_key_value.bias"] if bias else None
        self.dense = tensors[prefix + "self_attention.dense.weight"]
        self.post_norm = tensors[prefix + "post_attention_layernorm.weight"].float()
        self.up = tensors[prefix + "mlp.dense_h_to_4h.weight"]
        self.down = tensors[prefix + "mlp.dense_4h_to_h.weight"]


class ChatGLMModel:
    def __init__(self, config: ChatGLMConfig, tensors: Dict[str, torch.Tensor], context: int):
        self.config = config
        self.embedding = tensors["transformer.embedding.word_embeddings.weight"]
        self.dtype, self.device = self.embedding.dtype, self.embedding.device
        self.layers = [Layer(tensors, f"transformer.encoder.layers.{i}.", config.add_qkv_bias) for i in range(config.num_layers)]
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
        self._bytes = sum(t.numel() * t.element_size() for t in tensors.values())

    def parameter_bytes(self) -> int:
        """Bytes of the weights as loaded (in the model's dtype)."""
        return self._bytes

    @torch.no_grad()
    def forward(self, cache: KVCache, rows: Sequence[int], block: Rows, tokens: Sequence[Sequence[int]],
                starts: Sequence[int], all_logits: bool = False,
                wanted: Optional[Sequence[int]] = None) -> torch.Tensor:
        """Appends tokens[i] to physical cache row rows[i] (which holds starts[i] tokens); `block` reads those rows.

        Returns float32 logits [B, V] after each row's last token, or [B, T, V] at every position (all_logits;
        positions past a row's own tokens are padding). `wanted`: the rows whose logits are used (a prompt chunk
        that does not end its prompt needs none); the output layer runs for those only, other rows are 0."""
        cfg = self.config
        batch, counts = len(rows), [len(t) for t in tokens]
        width = max(counts)
        step = _StepLayout(rows, tokens, starts, counts, width, cache.context, self.device)
        cos, sin = self.cos[step.positions].unsqueeze(2), self.sin[step.positions].unsqueeze(2)  # [B, T, 1, head_dim]
        heads, groups, head_dim = cfg.num_attention_heads, cfg.multi_query_group_num, cfg.head_dim
        eps = cfg.layernorm_epsilon

        x = F.embedding(step.ids, self.embedding)
        for index, layer in enumerate(self.layers):
            qkv = F.linear(rms_norm(x, layer.input_norm, eps), layer.qkv, layer.qkv_bias)
            qkv = qkv.view(batch, width, heads + 2 * groups, head_dim)
            qk = rotate_pairs(qkv[:, :, :heads + groups], cos, sin)  # queries and keys rotated together
            q, k, v = qk[:, :, :heads], qk[:, :, heads:], qkv[:, :, heads + groups:]
            cache.write(index, step.write_rows, step.write_positions, step.flat(k), step.flat(v))
            keys, values = cache.read(index, block, step.keys_len)
            x = x + F.linear(self.attend(q, keys, values, step.bias, groups), layer.dense)
            up, gate = F.linear(rms_norm(x, layer.post_norm, eps), layer.up).chunk(2, dim=-1)
            x = x + F.linear(F.silu(up) * gate, layer.down)

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
        cfg = self.config
        batch = ids.shape[0]
        heads, groups, head_dim = cfg.num_attention_heads, cfg.multi_query_group_num, cfg.head_dim
        per_group, eps = heads // groups, cfg.layernorm_epsilon
        if self._row_index.shape[0] < batch:
            self._row_index = torch.arange(cache.rows, device=self.device)
        rows = self._row_index[:batch]
        # Rotation of every head of the fused qkv output at once: queries and keys by position, values by the
        # identity (cos 1, sin 0: exact), so the rotated key and value of a row are one block for the cache.
        cos = torch.where(self._value_heads, 1.0, self.cos.index_select(0, positions).unsqueeze(1))  # [B, heads, d]
        sin = torch.where(self._value_heads, 0.0, self.sin.index_select(0, positions).unsqueeze(1))
        visible = self._key_positions[:window].unsqueeze(0) <= positions.unsqueeze(1)  # [B, window]: keys 0..position
        bias = _mask_bias(visible, torch.float32 if self.attend_step is attend_step_plain else self.dtype).view(batch, 1, 1, -1)

        x = F.embedding(ids, self.embedding)  # [B, hidden]
        for index, layer in enumerate(self.layers):
            qkv = F.linear(rms_norm(x, layer.input_norm, eps), layer.qkv, layer.qkv_bias).view(batch, heads + 2 * groups, head_dim)
            qkv = rotate_pairs(qkv, cos, sin)
            cache.write_step(index, rows, positions, qkv[:, heads:].view(batch, 2, groups, head_dim))
            q = qkv[:, :heads].view(batch, groups, per_group, head_dim)
            keys, values = cache.keys[index, :batch, :, :window], cache.values[index, :batch, :, :window]
            out = self.attend_step(q, keys, values, bias)
            x = torch.addmm(x, out.reshape(batch, heads * head_dim), layer.dense.t())  # the residual inside the matmul
            up, gate = F.linear(rms_norm(x, layer.post_norm, eps), layer.up).chunk(2, dim=-1)
            x = torch.addmm(x, F.silu(up) * gate, layer.down.t())
        if self.final_norm is not None:
            x = rms_norm(x, self.final_norm, eps)
        return F.linear(x, self.output).float()


class _StepLayout:
    """Where one forward call's tokens go: ids, positions, the cache cells written, and the attention mask
    (query t of row b sees key j iff j <= start + t and j < start + count: its row's cached tokens and its own
    tokens up to t, never padding or what an earlier row left in the slot). Built once per call, for every layer."""

    def __init__(self, rows, tokens, starts, counts, width: int, context: int, device):
        batch = len(rows)
        self.keys_len = max(s + c for s, c in zip(starts, counts))
        self.dense = all(c == width for c in counts)  # no padding: decode steps, equal chunks
        if width == 1:  # a decode step: one small host-to-device copy for everything
            meta = torch.tensor([t[0] for t in tokens] + list(starts) + list(rows), dtype=torch.long).to(device)
            self.ids, start, row_index = meta[:batch].view(batch, 1), meta[batch:2 * batch], meta[2 * batch:]
            self.count = None
            self.positions = start.view(batch, 1)
            key_pos = torch.arange(self.keys_len, device=device)
            self.bias = _mask_bias(key_pos.view(1, 1, 1, -1) <= start.view(batch, 1, 1, 1))  # [B, 1, 1, S]
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
        key_pos = torch.arange(self.keys_len, device=device).view(1, 1, -1)
        visible = (key_pos <= self.positions.unsqueeze(2)) & (key_pos < (start + self.count).view(-1, 1, 1))
        self.bias = _mask_bias(visible.unsqueeze(1))  # [B, 1, T, S]
        row_index = torch.tensor(rows, dtype=torch.long, device=device).unsqueeze(1).expand(batch, width)
        self.write_rows = row_index.reshape(-1) if self.dense else row_index[self.valid]
        self.write_positions = self.positions.reshape(-1) if self.dense else self.positions[self.valid]

    def flat(self, x: torch.Tensor) -> torch.Tensor:
        """[B, T, groups, head_dim] → the written cells [N, groups, head_dim] (padding left out)."""
        return x.reshape(-1, *x.shape[2:]) if self.dense else x[self.valid]


def _mask_bias(visible: torch.Tensor, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """0 where attention is allowed, -inf elsewhere (added to the scores: float32 for the plain path)."""
    return torch.zeros(visible.shape, dtype=dtype, device=visible.device).masked_fill_(~visible, float("-inf"))


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


def _grouped(q: torch.Tensor, bias: torch.Tensor, groups: int):
    """q [B, T, heads, d] → [B, groups, heads_per_group * T, d] (a group's heads as one block of queries) and the
    mask bias [B, 1, 1 or heads_per_group * T, S] that goes with it."""
    batch, width, heads, head_dim = q.shape
    per_group = heads // groups
    if width == 1:  # a decode step: a reshape of what is there
        return q.reshape(batch, groups, per_group, head_dim), bias.view(batch, 1, 1, -1), per_group
    q = q.reshape(batch, width, groups, per_group, head_dim).permute(0, 2, 3, 1, 4).reshape(batch, groups, per_group * width, head_dim)
    if per_group > 1:
        bias = bias.unsqueeze(2).expand(batch, 1, per_group, width, bias.shape[-1]).reshape(batch, 1, per_group * width, -1)
    return q, bias, per_group


def _ungrouped(out: torch.Tensor, batch: int, width: int, groups: int, per_group: int) -> torch.Tensor:
    if width == 1:
        return out.reshape(batch, 1, -1)
    head_dim = out.shape[-1]
    return out.view(batch, groups, per_group, width, head_dim).permute(0, 3, 1, 2, 4).reshape(batch, width, -1)


def attend_plain(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, bias: torch.Tensor, groups: int) -> torch.Tensor:
    """Scaled dot-product attention, softmax in float32 (torch 1.13 has no fused kernel)."""
    batch, width = q.shape[:2]
    grouped, bias, per_group = _grouped(q, bias, groups)
    scores = torch.matmul(grouped * (1.0 / math.sqrt(q.shape[-1])), keys.transpose(-1, -2))
    probs = torch.softmax(scores.float() + bias, dim=-1).to(values.dtype)
    return _ungrouped(torch.matmul(probs, values), batch, width, groups, per_group)


def attend_sdpa(q: torch.Tensor, keys: torch.Tensor, values: torch.Tensor, bias: torch.Tensor, groups: int) -> torch.Tensor:
    """torch 2.x fused attention (softmax in float32 inside the kernel)."""
    batch, width = q.shape[:2]
    grouped, bias, per_group = _grouped(q, bias, groups)
    out = F.scaled_dot_product_attention(grouped, keys, values, attn_mask=bias.to(grouped.dtype))
    return _ungrouped(out, batch, width, groups, per_group)


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
