"""Weight-only int8, as ChatGLM3's own `quantize(8)` does it, and the linear layers the forward pass calls.

ChatGLM3 quantizes exactly the four linear layers of every transformer layer (QUANTIZED_LAYERS); embeddings, the
output layer and the norms stay in the compute dtype. Per output row of the float16 weight: `scale = max(|w|) / 127`
(float16) and `q = round(w / scale)` (int8) — the arithmetic of its `QuantizedLinear.__init__`, checked bit for bit
against the fixture's golden-int8.safetensors. Its kernel multiplies by `q * scale` in float16; so does ours: either
dequantize-then-linear in the compute dtype, or torch's fused int8 weight-only matmul where the installed torch has
one for the device (chosen at load by `choose_int8_matmul`).

Float16 arithmetic is done in float32 and rounded to float16 after each step: torch 1.13 has no float16 `round` (and
few float16 ops) on CPU, and one float32 operation rounded once to float16 is the correctly rounded float16 result
for a division or a product of a float16 by an 8-bit integer (what CUDA's half ops give as well).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Dict, Optional, Union

import torch
import torch.nn.functional as F

QUANTIZED_LAYERS = ("self_attention.query_key_value", "self_attention.dense", "mlp.dense_h_to_4h", "mlp.dense_4h_to_h")
QUANTIZATIONS = ("none", "int8", "auto")
QUANTIZE_BLOCK_ELEMENTS = 1 << 24  # weight elements quantized at a time: float32 temporaries of 2 x 64 MiB
DEQUANTIZE_BLOCK_ELEMENTS = 1 << 25  # weight elements dequantized at a time: 64 MiB in float16


def is_quantized_weight(name: str) -> bool:
    """True for the `.weight` of one of ChatGLM3's quantized layers (never their biases)."""
    return name.endswith(".weight") and name[:-len(".weight")].endswith(QUANTIZED_LAYERS) and ".layers." in name


@dataclass
class Int8Weight:
    """One quantized weight: `q` [out, in] int8 and `scale` [out] float16, on the target device."""

    q: torch.Tensor
    scale: torch.Tensor

    @property
    def nbytes(self) -> int:
        return self.q.numel() * self.q.element_size() + self.scale.numel() * self.scale.element_size()

    def dequantized(self, dtype: torch.dtype, rows: slice = slice(None)) -> torch.Tensor:
        """`q * scale` of `rows` in float16 (ChatGLM3's kernel), then in the compute dtype: one float16 temporary."""
        weight = self.q[rows].to(torch.float16).mul_(self.scale[rows].unsqueeze(1))
        return weight if dtype == torch.float16 else weight.to(dtype)


def quantize_int8(weight: torch.Tensor) -> Int8Weight:
    """ChatGLM3's QuantizedLinear arithmetic on `weight` cast to float16, on the weight's own device, a block of rows
    at a time (the float32 temporaries never hold more than QUANTIZE_BLOCK_ELEMENTS elements, twice)."""
    w16 = weight.to(torch.float16)
    rows, columns = w16.shape
    q = torch.empty(w16.shape, dtype=torch.int8, device=w16.device)
    scale = torch.empty(rows, dtype=torch.float16, device=w16.device)
    step = max(1, QUANTIZE_BLOCK_ELEMENTS // columns)
    for first in range(0, rows, step):
        block = w16[first:first + step].float()
        block_scale = (block.abs().amax(dim=-1) / 127).to(torch.float16)  # a float16 division, rounded once
        ratio = block.div_(block_scale.float().unsqueeze(1)).to(torch.float16)  # w / scale in float16
        del block
        # an all-zero row has scale 0 and 0/0 = NaN: its q is 0
        q[first:first + step] = ratio.float().nan_to_num_(nan=0.0).round_().to(torch.int8)
        scale[first:first + step] = block_scale
        del ratio
    return Int8Weight(q, scale)


def quantize_tensors(tensors: Dict[str, "WeightValue"]) -> Dict[str, "WeightValue"]:
    """Quantizes the layers ChatGLM3 quantizes, one at a time, in place: each float weight is dropped as soon as its
    int8 form exists, so the peak is the int8 model plus one float weight."""
    for name in [n for n in tensors if is_quantized_weight(n)]:
        if isinstance(tensors[name], torch.Tensor):
            tensors[name] = quantize_int8(tensors[name])  # the float weight is freed by this assignment
    return tensors


WeightValue = Union[torch.Tensor, Int8Weight]


def weight_nbytes(value: Optional[WeightValue]) -> int:
    if value is None:
        return 0
    if isinstance(value, Int8Weight):
        return value.nbytes
    return value.numel() * value.element_size()


class Linear:
    """`F.linear` over a float weight (the compute dtype) — the unquantized layers."""

    mode = "none"

    def __init__(self, weight: torch.Tensor, bias: Optional[torch.Tensor] = None):
        self.weight, self.bias = weight, bias

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight, self.bias)


class DequantizeLinear:
    """int8 weight dequantized for each call, then one linear in the compute dtype: the only extra memory is the
    layer's dequantized weight, for the length of the call."""

    mode = "int8 (dequantize + linear)"

    def __init__(self, weight: Int8Weight, bias: Optional[torch.Tensor], dtype: torch.dtype):
        self.weight, self.bias, self.dtype = weight, bias, dtype

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        out_features, in_features = self.weight.q.shape
        rows = dequantize_block_rows(out_features, in_features)
        if rows >= out_features:
            return F.linear(x, self.weight.dequantized(self.dtype), self.bias)
        # A wide layer (the MLP's) a block of output rows at a time, so its whole float weight never exists.
        out = x.new_empty(*x.shape[:-1], out_features)
        for first in range(0, out_features, rows):
            part = slice(first, first + rows)
            bias = None if self.bias is None else self.bias[part]
            out[..., part] = F.linear(x, self.weight.dequantized(self.dtype, part), bias)
        return out


def dequantize_block_rows(out_features: int, in_features: int) -> int:
    """Output rows DequantizeLinear dequantizes at a time (the memory plan counts the same block)."""
    return max(1, min(out_features, DEQUANTIZE_BLOCK_ELEMENTS // in_features))


class FusedInt8Linear:
    """torch's int8 weight-only matmul (`torch._weight_int8pack_mm`, torch >= 2.4 where the device has it): the
    weight is never dequantized in memory. Scales in the compute dtype, as the kernel wants them."""

    mode = "int8 (fused int8 weight-only matmul)"

    def __init__(self, weight: Int8Weight, bias: Optional[torch.Tensor], dtype: torch.dtype):
        self.q, self.bias = weight.q, bias
        self.scale = weight.scale.to(dtype)

    def __call__(self, x: torch.Tensor) -> torch.Tensor:
        out = torch._weight_int8pack_mm(x.reshape(-1, x.shape[-1]), self.q, self.scale)
        out = out.view(*x.shape[:-1], out.shape[-1])
        return out if self.bias is None else out + self.bias


def choose_int8_matmul(device: torch.device, dtype: torch.dtype) -> Callable:
    """The fused kernel where this torch has it for (device, dtype) and it agrees with dequantize-then-linear on a
    small case; else dequantize-then-linear (torch 1.13, and devices the kernel does not cover)."""
    if not hasattr(torch, "_weight_int8pack_mm"):
        return DequantizeLinear
    try:
        generator = torch.Generator().manual_seed(0)
        weight = quantize_int8(torch.randn(64, 64, generator=generator).to(device))
        x = torch.randn(3, 64, generator=generator).to(device=device, dtype=dtype)
        fused = FusedInt8Linear(weight, None, dtype)(x).float()
        plain = DequantizeLinear(weight, None, dtype)(x).float()
        if not torch.allclose(fused, plain, rtol=2e-2, atol=2e-2):
            return DequantizeLinear
    except (RuntimeError, NotImplementedError, TypeError):
        return DequantizeLinear
    return FusedInt8Linear


def load_converter(device, dtype: torch.dtype, quantization: str) -> Optional[Callable]:
    """For chatglm.model.checkpoint.load_weights: each tensor as it is read, to `device` — a quantized layer's weight
    cast to float16 there (as ChatGLM3 quantizes it) and quantized at once, so the device never holds more than the
    int8 model plus one float16 weight. None when nothing is quantized (the loader's own conversion)."""
    if quantization != "int8":
        return None

    def convert(name: str, tensor: torch.Tensor) -> WeightValue:
        if is_quantized_weight(name):
            return quantize_int8(tensor.to(device=device, dtype=torch.float16))
        return tensor.to(device=device, dtype=dtype)

    return convert


def make_linear(value: WeightValue, bias: Optional[torch.Tensor], dtype: torch.dtype, int8_linear: Callable = DequantizeLinear):
    if isinstance(value, Int8Weight):
        return int8_linear(value, bias, dtype)
    return Linear(value, bias)
