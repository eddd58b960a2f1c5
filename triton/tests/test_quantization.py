"""int8 weights as ChatGLM3's own quantize(8) makes them, checked against the fixture (golden-int8.*: its README):
the quantizer bit for bit, the quantized engine's logits within 1e-4 of THUDM's code run with those weights, alone,
in a padded batch, joining mid-generation and chunked; the matmul paths; conversion layer by layer."""
import pytest
import torch

from chatglm.model.quantization import (QUANTIZED_LAYERS, DequantizeLinear, FusedInt8Linear,
                                        choose_int8_matmul, is_quantized_weight, quantize_int8)
from fixture_check import FIXTURE, run_checks
from int8_fixture import Int8Fixture

TOLERANCE = 1e-4


@pytest.fixture(scope="module")
def fixture():
    try:
        return Int8Fixture()
    except FileNotFoundError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="module")
def checks(fixture):
    engine = fixture.engine()
    assert engine.quantization == "int8" and engine.model.quantization.startswith("int8")
    return run_checks(fixture, engine)


def test_the_quantized_layers_are_chatglm3s(fixture):
    from safetensors.torch import load_file

    names = [n[:-len(".weight")] for n in load_file(str(FIXTURE / "model.safetensors")) if is_quantized_weight(n)]
    assert sorted(names) == sorted(fixture.quantized_layers)
    assert len(fixture.quantized_layers) == 2 * len(QUANTIZED_LAYERS)


def test_int8_weights_and_scales_are_bit_identical_to_chatglm3s(fixture):
    from safetensors.torch import load_file

    weights = load_file(str(FIXTURE / "model.safetensors"))
    for layer in fixture.quantized_layers:
        ours = quantize_int8(weights[layer + ".weight"].to(torch.float16))
        assert ours.q.dtype == torch.int8 and ours.scale.dtype == torch.float16
        assert torch.equal(ours.q, fixture.weights_int8[layer]), layer
        assert torch.equal(ours.scale, fixture.scales[layer]), layer


def test_quantizing_in_row_blocks_gives_the_same_bits(monkeypatch):
    import chatglm.model.quantization as quantization

    weight = torch.randn(37, 19, generator=torch.Generator().manual_seed(3)) * 0.1
    whole = quantize_int8(weight)
    monkeypatch.setattr(quantization, "QUANTIZE_BLOCK_ELEMENTS", 19 * 5)  # 5 rows at a time
    blocked = quantize_int8(weight)
    assert torch.equal(whole.q, blocked.q) and torch.equal(whole.scale, blocked.scale)


def test_an_all_zero_row_quantizes_to_zero():
    weight = torch.zeros(3, 8)
    weight[1] = torch.linspace(-1, 1, 8)
    q = quantize_int8(weight)
    assert torch.equal(q.q[0], torch.zeros(8, dtype=torch.int8)) and q.q[1].abs().max() == 127


@pytest.mark.parametrize("case", ["alone_prefill", "alone_decode", "padded_batch_prefill", "padded_batch_decode",
                                  "join_mid_generation_decode", "chunked_prefill_decode",
                                  "mixed_step_with_chunks"])
def test_int8_logits_match_chatglm3s_own_code(checks, case):
    assert checks[case] < TOLERANCE, checks


def test_dequantizing_in_blocks_is_the_same_linear(monkeypatch):
    import chatglm.model.quantization as quantization

    generator = torch.Generator().manual_seed(1)
    weight = quantize_int8(torch.randn(40, 24, generator=generator))
    x, bias = torch.randn(2, 3, 24, generator=generator), torch.randn(40, generator=generator)
    whole = DequantizeLinear(weight, bias, torch.float32)(x)
    monkeypatch.setattr(quantization, "DEQUANTIZE_BLOCK_ELEMENTS", 24 * 7)  # 7 rows at a time, 6 blocks
    assert quantization.dequantize_block_rows(40, 24) == 7
    blocked = DequantizeLinear(weight, bias, torch.float32)(x)
    # The same products and sums; a BLAS may order a narrower matmul's sums differently (bit-equal on some CPUs,
    # 2e-6 apart at magnitude 13 on others), so equal to float32 rounding.
    assert torch.allclose(whole, blocked, rtol=1e-6, atol=1e-5), float((whole - blocked).abs().max())


def test_the_fused_kernel_agrees_with_dequantize_then_linear_where_torch_has_it():
    """torch >= 2.4's _weight_int8pack_mm; torch 1.13 (Debian, CI) has none and the engine dequantizes."""
    if not hasattr(torch, "_weight_int8pack_mm"):
        # This torch has no fused kernel: what the test can check here is that the engine falls back to it.
        assert choose_int8_matmul(torch.device("cpu"), torch.float32) is DequantizeLinear
        return
    generator = torch.Generator().manual_seed(2)
    weight = quantize_int8(torch.randn(64, 32, generator=generator))
    x = torch.randn(5, 32, generator=generator)
    fused = FusedInt8Linear(weight, None, torch.float32)(x)
    assert torch.allclose(fused, DequantizeLinear(weight, None, torch.float32)(x), atol=1e-2, rtol=1e-2)


def test_none_keeps_float_weights(fixture):
    engine = fixture.engine(quantization="none")
    assert engine.quantization == "none" and engine.model.quantization == "none"
    assert not any(isinstance(getattr(layer, "qkv"), DequantizeLinear) for layer in engine.model.layers)


def test_int8_bytes_are_int8_weights_plus_scales(fixture):
    engine = fixture.engine()
    fp = fixture.engine(quantization="none")
    quantized = sum(v.numel() for k, v in fixture.weights_int8.items())
    scales = sum(v.numel() for v in fixture.scales.values())
    # float32 model: each quantized element goes from 4 bytes to 1, plus a 2-byte scale per row
    assert fp.model.parameter_bytes() - engine.model.parameter_bytes() == quantized * 3 - scales * 2
