"""The memory plan (chatglm/engine/memory_plan.py) against what the engine really allocates, counted without a GPU:
ChatGLM3-6B's real shapes on torch's meta device, every tensor the engine creates outside the attention kernel
(tests/memory_count.py); and the plan's decisions: which quantization, which prefill chunk, what a refusal says."""
import json
from pathlib import Path

import pytest
import torch

from chatglm.engine.memory_plan import (MemoryPlanError, memory_plan, model_weight_bytes, plan_load,
                                        split_prefill)
from chatglm.model.checkpoint import parameter_shapes, parse_config
from chatglm.model.quantization import is_quantized_weight, load_converter
from fixture_check import run_checks
from memory_count import CHATGLM3_6B, AllocationCounter, count_mixed, count_prefill_and_decode, meta_engine

GiB = 1 << 30
MiB = 1 << 20
CONFIG = parse_config(CHATGLM3_6B)
ROWS, CONTEXT, CHUNK = 8, 8192, 2048  # the README's defaults: max_active_rows 8, 6144 + 2048 tokens, 2048 budget
PLAN_CASES = Path(__file__).resolve().parents[2] / "test" / "unit" / "server" / "memory-plan-cases.json"


@pytest.fixture(scope="module", params=["none", "int8"])
def counted(request):
    engine = meta_engine(CONFIG, ROWS, CONTEXT, CHUNK, quantization=request.param)
    return request.param, count_prefill_and_decode(engine, chunk=2048, position=6144, decode_rows=8)


def test_the_counter_counts_what_is_created_and_frees_what_is_dropped():
    counter = AllocationCounter("meta")
    base = torch.empty(4, 1024, device="meta")
    with counter:
        a = torch.zeros(1024, 1024, dtype=torch.float16, device="meta")  # 2 MiB
        halves = a.chunk(2)  # views: nothing new
        b = base.expand(3, 4, 1024).contiguous()  # a copy: 48 KiB
        del a
        assert counter.live == 2 * MiB + 48 * 1024  # the halves keep a's storage
        del halves
        assert counter.live == 48 * 1024
        b.add_(1)  # in place: nothing new
    assert counter.peak == 2 * MiB + 48 * 1024 and counter.allocations == 2


def test_a_2048_token_chunk_at_6144_stays_within_the_plan(counted):
    quantization, figures = counted
    plan = memory_plan(CONFIG, ROWS, CONTEXT, CHUNK, "float16", quantization)
    assert figures["prefill_allocations"] > 100  # every layer's temporaries were seen
    assert figures["prefill_peak"] <= plan.prefill_transient, (figures, plan.prefill_transient)
    assert figures["prefill_peak"] >= 0.9 * plan.prefill_transient  # the formula is the engine's, not a guess
    assert figures["left_after_prefill"] == 0
    if quantization == "none":
        assert figures["prefill_peak"] <= 384 * MiB  # the target (bench key prefill_peak_transient_mib)


def test_a_decode_step_with_a_chunk_in_its_pass_stays_within_the_prefill_transient():
    """step_with_chunks: 7 decode rows at the end of the context and a 2,040-token chunk at 6,144 (the eighth row,
    inside the step's bucket of 8) in one pass, the 2,048 tokens one prefill forward may hold: no more than the
    plan's prefill transient."""
    plan = memory_plan(CONFIG, ROWS, CONTEXT, CHUNK, "float16", "none")
    figures = count_mixed(meta_engine(CONFIG, ROWS, CONTEXT, CHUNK), chunk=CHUNK - ROWS, position=6144,
                          decode_rows=ROWS - 1)
    assert figures["mixed_allocations"] > 100
    assert figures["mixed_peak"] <= plan.prefill_transient, (figures, plan.prefill_transient)


def test_a_decode_step_of_8_rows_stays_within_the_plan(counted):
    quantization, figures = counted
    plan = memory_plan(CONFIG, ROWS, CONTEXT, CHUNK, "float16", quantization)
    assert 0 < figures["decode_peak"] <= plan.decode_buffers, (figures, plan.decode_buffers)


def test_int8_conversion_never_holds_the_float_model():
    """Each tensor converted as the loader reads it: the peak is the int8 model plus one float16 layer."""
    counter = AllocationCounter("meta")
    convert = load_converter(torch.device("meta"), torch.float16, "int8")
    shapes = parameter_shapes(CONFIG)
    kept = {}
    with counter:
        for name, shape in shapes.items():
            with counter.paused():  # what the checkpoint shard holds (host memory, not the device's)
                read = torch.empty(shape, dtype=torch.float32, device="meta")  # so that moving it is a copy
            kept[name] = convert(name, read)
            del read
    int8_model = model_weight_bytes(CONFIG, "float16", "int8")
    layer = "transformer.encoder.layers.0."
    one_layer_fp16 = sum(2 * torch.Size(s).numel() for n, s in shapes.items() if n.startswith(layer))
    assert counter.live == int8_model  # what stays is exactly the int8 model the plan counts
    assert counter.peak <= int8_model + one_layer_fp16, (counter.peak, int8_model, one_layer_fp16)
    assert sum(1 for n in kept if is_quantized_weight(n)) == 4 * CONFIG.num_layers


def test_int8_model_bytes_ratio_at_6b():
    ratio = model_weight_bytes(CONFIG, "float16", "int8") / model_weight_bytes(CONFIG, "float16", "none")
    assert 0.53 < ratio < 0.56  # float16 embeddings and output layer stay: ≈ 0.55


def test_a_16_gb_card_holds_the_default_settings():
    free = int(15.5 * GiB)  # a 16 GB card (16 GiB) less the CUDA context and a desktop
    plan = plan_load(CONFIG, ROWS, CONTEXT, CHUNK, "float16", "auto", free, 16 * GiB)
    assert plan.quantization == "none" and plan.prefill_chunk == CHUNK and plan.fits
    assert "float16 weights fit" in plan.reasons[0]
    assert plan.weights == model_weight_bytes(CONFIG, "float16") and 11.6 * GiB < plan.weights < 11.7 * GiB
    assert plan.kv_cache == 8 * 8208 * 28 * 1024  # 1.75 GiB: 8,192 positions + the scratch cell, rounded to 16
    table = plan.table()
    for part in ("weights", "KV cache", "prefill transient", "decode buffers", "reserve", "total", "free"):
        assert part in table


def test_auto_picks_int8_for_12_gb_and_none_for_24_gb():
    twelve = plan_load(CONFIG, ROWS, CONTEXT, CHUNK, "float16", "auto", int(11.5 * GiB), 12 * GiB)
    assert twelve.quantization == "int8" and twelve.rows == ROWS and twelve.context == CONTEXT
    assert "int8 weights, since float16 needs" in twelve.reasons[0]
    assert plan_load(CONFIG, ROWS, CONTEXT, CHUNK, "float16", "auto", int(23.5 * GiB), 24 * GiB).quantization == "none"


def test_6_gb_is_refused_with_the_figures():
    with pytest.raises(MemoryPlanError) as info:
        plan_load(CONFIG, ROWS, CONTEXT, CHUNK, "float16", "auto", int(5.5 * GiB), 6 * GiB)
    message = str(info.value)
    assert "the model does not fit: weights 6.31 GiB (int8)" in message and "KV cache 1.75 GiB" in message
    assert "5.50 GiB free of 6.00 GiB" in message and "Not even 1 row" in message


def test_the_prefill_chunk_shrinks_before_rows_do():
    full = memory_plan(CONFIG, ROWS, CONTEXT, CHUNK, "float16", "none")
    half = memory_plan(CONFIG, ROWS, CONTEXT, CHUNK // 2, "float16", "none")
    assert half.total < full.total
    plan = plan_load(CONFIG, ROWS, CONTEXT, CHUNK, "float16", "none", half.total, None)
    assert plan.rows == ROWS and plan.prefill_chunk == 1024
    assert "prefill chunk lowered from 2048 to 1024 tokens" in plan.reasons[0]


def test_a_refusal_says_which_rows_fit():
    free = 15 * GiB
    with pytest.raises(MemoryPlanError) as info:
        plan_load(CONFIG, 12, CONTEXT, CHUNK, "float16", "none", free, 16 * GiB)
    message = str(info.value)
    fewer = max(r for r in range(1, 12) if memory_plan(CONFIG, r, CONTEXT, CHUNK, "float16", "none", free).fits)
    assert f"{fewer} rows x 8192 tokens fit with 2,048-token prefill chunks; 12 rows x 8192 tokens do not" in message
    assert fewer == 11 and "tritonChatglm.maxBatchSize" in message
    with pytest.raises(MemoryPlanError, match="do not. With int8 weights 16 rows x 8192 tokens fit"):
        plan_load(CONFIG, 16, CONTEXT, CHUNK, "float16", "none", free, 16 * GiB)


def test_a_bad_quantization_value_is_refused():
    with pytest.raises(ValueError, match="config parameter quantization must be one of none, int8, auto"):
        plan_load(CONFIG, ROWS, CONTEXT, CHUNK, "float16", "int4", None)


def test_split_prefill_keeps_every_forward_within_the_limit():
    forwards = split_prefill([(0, 41), (0, 20), (5, 6), (100, 300)], 64)
    for forward in forwards:
        assert len(forward) * max(stop - start for _, start, stop in forward) <= 64
    covered = {0: 0, 1: 0, 2: 5, 3: 100}
    for forward in forwards:
        for index, start, stop in forward:
            assert covered[index] == start  # each chunk's pieces in order, none skipped
            covered[index] = stop
    assert covered == {0: 41, 1: 20, 2: 6, 3: 300}


def test_the_fixture_holds_its_logits_with_a_small_prefill_chunk():
    """prefill_token_budget 16: the joining prompts (20 and 41 tokens) go in pieces of at most 16 padded tokens."""
    from fixture_check import Fixture, FixtureTokenizer
    from chatglm.engine.native import NativeEngine
    from chatglm.engine.types import EngineOptions

    fixture = Fixture()
    engine = NativeEngine(EngineOptions(weights_path=str(fixture.path), dtype="float32", device="cpu", max_rows=4,
                                        context_needed=128, parameters={"prefill_token_budget": "16"}),
                          tokenizer=FixtureTokenizer(), sampling_seed=0)
    assert engine.prefill_chunk == 16
    widths = []
    run = engine._run
    engine._run = lambda slots, tokens, wanted: widths.append(len(tokens) * max(map(len, tokens))) or run(slots, tokens, wanted)
    checks = run_checks(fixture, engine)
    assert max(checks.values()) < 1e-4, checks
    # prefill forwards only (decode steps take the static step, chatglm.engine.decode_step, not _run)
    assert widths and max(widths) <= 16 and len(widths) > 8, widths


PLAN_CONFIGS = [
    dict(rows=8, context=8192, prefill_chunk=2048, dtype="float16", quantization="none"),
    dict(rows=8, context=8192, prefill_chunk=2048, dtype="float16", quantization="int8"),
    dict(rows=16, context=4096, prefill_chunk=1024, dtype="bfloat16", quantization="int8"),
    dict(rows=1, context=32768, prefill_chunk=512, dtype="float16", quantization="none",
         config={"seq_length": 32768, "rope_ratio": 50}),
    dict(rows=3, context=100, prefill_chunk=2048, dtype="float32", quantization="none",
         config={"num_layers": 2, "hidden_size": 64, "num_attention_heads": 4, "kv_channels": 16,
                 "ffn_hidden_size": 128, "padded_vocab_size": 416}),
]
# GLM-4-9B-Chat / CodeGeeX4-ALL-9B (the catalog's config: 40 layers, 151,552 vocabulary, 40 KiB KV per token)
PLAN_CONFIGS += [
    dict(model="glm-4-9b-chat", rows=8, context=8192, prefill_chunk=2048, dtype="bfloat16", quantization="none"),
    dict(model="glm-4-9b-chat", rows=8, context=8192, prefill_chunk=2048, dtype="bfloat16", quantization="int8"),
    dict(model="glm-4-9b-chat", rows=2, context=32768, prefill_chunk=1024, dtype="float16", quantization="int8"),
]
# (free GiB, rows, context, quantization setting[, catalog model]): what the load decides, in float16 (bf16 alike)
DECISIONS = [(23.5, 8, 8192, "auto"), (15.5, 8, 8192, "auto"), (11.5, 8, 8192, "auto"), (7.5, 8, 8192, "auto"),
             (5.5, 8, 8192, "auto"), (15.0, 12, 8192, "none"), (14.28, 8, 8192, "none"), (9.0, 16, 8192, "int8"),
             (23.5, 8, 8192, "auto", "glm-4-9b-chat"), (15.5, 8, 8192, "auto", "glm-4-9b-chat"),
             (11.5, 8, 8192, "auto", "glm-4-9b-chat"), (11.5, 8, 8192, "auto", "codegeex4-all-9b")]
FIGURES = ("weights", "kv_cache", "prefill_transient", "decode_buffers", "reserve", "total")


def _model_config(model=None):
    from chatglm.catalog import load_catalog

    return CONFIG if model is None else load_catalog()[model].checkpoint_config()


def _plan_figures(case):
    config = _model_config(case["model"]) if "model" in case else parse_config({**CHATGLM3_6B, **case.get("config", {})})
    plan = memory_plan(config, case["rows"], case["context"],
                       case["prefill_chunk"], case["dtype"], case["quantization"])
    return {k: plan.as_dict()[k] for k in FIGURES}


def _decision(free_gib, rows, context, quantization, model=None):
    """plan_load's choice, or what a refusal offers instead (largest_fit)."""
    from chatglm.engine.memory_plan import largest_fit

    free = int(free_gib * GiB)
    config = _model_config(model)
    try:
        plan = plan_load(config, rows, context, CHUNK, "float16", quantization, free)
        return {"kind": "runs", "quantization": plan.quantization, "rows": plan.rows, "context": plan.context,
                "prefill_chunk": plan.prefill_chunk, "total": plan.total}
    except MemoryPlanError:
        last = "int8" if quantization in ("auto", "int8") else "none"
        fit = largest_fit(config, rows, context, CHUNK, "float16", last, free)
        return {"kind": "too-small", "fits": None if fit is None else {
            "quantization": fit.quantization, "rows": fit.rows, "context": fit.context, "prefill_chunk": fit.prefill_chunk}}


def plan_cases():
    return {
        "plans": [{**case, "expected": _plan_figures(case)} for case in PLAN_CONFIGS],
        "decisions": [{"free": int(d[0] * GiB), "rows": d[1], "context": d[2], "quantization": d[3],
                       **({"model": d[4]} if len(d) > 4 else {}), "expected": _decision(*d)} for d in DECISIONS],
    }


def test_the_plan_agrees_with_the_extensions_figures():
    """test/unit/server/memory-plan-cases.json holds the Python plan's figures and decisions; the TypeScript plan
    (src/core/server/memoryPlan.ts) is checked against the same file by test/unit/server/memoryPlan.test.ts.
    After a change of the formulas: PYTHONPATH=triton/tests:triton/testing:triton/model_repository/chatglm3-6b/1
    python3 triton/tests/test_memory_plan.py --write-cases."""
    cases = json.loads(PLAN_CASES.read_text(encoding="utf-8"))
    assert cases == plan_cases()
    kinds = {d["expected"]["kind"] for d in cases["decisions"]}
    assert kinds == {"runs", "too-small"}


if __name__ == "__main__":
    import sys

    if sys.argv[1:] == ["--write-cases"]:
        PLAN_CASES.write_text(json.dumps(plan_cases(), indent=1) + "\n", encoding="utf-8")


def test_the_compact_mask_holds_the_fixture_on_the_sdpa_path_too(monkeypatch):
    """torch 2.x's branch (one SDPA call per head of a group, the [B, 1, T, S] mask broadcast over heads), run here
    with SDPA replaced by its documented reference formula (torch 1.13 has none)."""
    import math

    import torch.nn.functional as F

    from chatglm.model import forward
    from fixture_check import Fixture, run_checks

    calls = []

    def reference_sdpa(q, k, v, attn_mask=None):
        calls.append((tuple(q.shape), tuple(attn_mask.shape)))
        scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1]) + attn_mask
        return torch.softmax(scores.float(), dim=-1).to(q.dtype) @ v

    monkeypatch.setattr(F, "scaled_dot_product_attention", reference_sdpa, raising=False)
    fixture = Fixture()
    engine = fixture.engine()
    engine.model.attend = forward.attend_sdpa
    checks = run_checks(fixture, engine)
    assert max(checks.values()) < 1e-4, checks
    prefill = [(q, m) for q, m in calls if m[2] > 1]  # decode steps have a [B, 1, 1, S] mask
    # per call: one head of each of the 2 groups, and a mask with one row per query position and no head axis
    assert prefill and all(q[1] == 2 and m[1] == 1 and m[2] == q[2] for q, m in prefill)
