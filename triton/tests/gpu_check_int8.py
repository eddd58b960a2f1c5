"""gpu_check.py's int8 part: ChatGLM3's 8-bit weights on the device, next to the float figures of the same run.

  - the fixture's int8 logits (golden-int8.*) through the engine on this device, with the matmul the load picks
    (torch's fused int8 kernel where this torch has one for the device) and with dequantize-then-linear;
  - conversion: seconds to quantize the 6B random float16 weights on the device, layer by layer;
  - decode tokens/s at 1 and 8 rows (engine steps, synchronised), int8 ÷ float16 of the same run;
  - memory: bytes allocated once loaded, the peak of the decode runs, and the memory plan's figures.
Called by gpu_check.main() (report["int8"]); on CPU (--small) it runs the same code in seconds (tests/test_gpu_check.py).
"""
from __future__ import annotations

import time

import torch

from chatglm.engine.types import EngineOptions
from chatglm.model.checkpoint import DTYPES, parse_config
from chatglm.model.quantization import DequantizeLinear, quantize_tensors


def check_int8_fixture(device: str, path=None) -> dict:
    """path: the fixture gpu_check reads (--fixture), default fixture_check.FIXTURE; None-like = that default."""
    from pathlib import Path

    from fixture_check import FIXTURE, run_checks
    from int8_fixture import Int8Fixture

    path = Path(path) if path else FIXTURE
    if not (path / "golden-int8.json").is_file():
        return {"ok": False, "error": f"the fixture's int8 files are missing at {path}"}
    fixture = Int8Fixture(path)
    engine = fixture.engine(device=device, dtype="float32")
    out = {"matmul": engine.model.quantization, "chosen": run_checks(fixture, engine)}
    ok = max(out["chosen"].values()) < 1e-4
    if engine.model.quantization != DequantizeLinear.mode:  # the fused kernel was chosen: the other path too
        import chatglm.engine.native as native

        chooser = native.choose_int8_matmul
        native.choose_int8_matmul = lambda device, dtype: DequantizeLinear
        try:
            out["dequantize"] = run_checks(fixture, fixture.engine(device=device, dtype="float32"))
        finally:
            native.choose_int8_matmul = chooser
        ok = ok and max(out["dequantize"].values()) < 1e-4
    out["ok"] = ok
    return out


def measure_int8(device: str, dtype: str, small: bool, rows_list=(1, 8), steps: int = 64, float_decode=None,
                 fixture_path=None) -> dict:
    """The int8 engine on random 6B-shaped weights; `float_decode`: gpu_check's float16 decode figures (at its
    shortest context), for ratios; `fixture_path`: gpu_check's --fixture (None: left out, or the default)."""
    import gpu_check

    cuda = device.startswith("cuda")
    if fixture_path is False:  # --no-fixture
        result = {"fixture": {"ok": True, "left_out": "--no-fixture"}}
    else:
        result = {"fixture": check_int8_fixture(device, fixture_path)}
    config = parse_config(gpu_check.SMALL if small else gpu_check.CHATGLM3_6B)
    tensors = gpu_check.random_tensors(config, DTYPES[dtype], device)
    gpu_check.sync(device)
    started = time.perf_counter()
    quantize_tensors(tensors)
    gpu_check.sync(device)
    result["conversion_seconds"] = round(time.perf_counter() - started, 3)
    options = EngineOptions(weights_path="", dtype=dtype, device=device, max_rows=max(rows_list), context_needed=2048,
                            parameters={"quantization": "int8"})
    engine = gpu_check.NativeEngine(options, tokenizer=gpu_check.ChatGLMLikeTokenizer(), config=config, tensors=tensors,
                                    sampling_seed=0)
    del tensors
    try:
        result["matmul"] = engine.model.quantization
        result["weight_bytes"] = engine.model.parameter_bytes()
        result["memory_plan"] = engine.memory_plan.as_dict()
        if cuda:
            result["allocated_after_load_gib"] = round(torch.cuda.memory_allocated() / 2**30, 2)
            torch.cuda.reset_peak_memory_stats()
        by_context = gpu_check.decode_throughput(engine, device, list(rows_list), [32], steps, lambda: None)
        result["decode"] = {rows: entry["best"] for rows, entry in by_context["32"].items()}
        if cuda:
            result["peak_memory_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
        if float_decode:
            result["tokens_per_second_int8_over_float"] = {
                k: round(v["tokens_per_second"] / float_decode[k]["tokens_per_second"], 3)
                for k, v in result["decode"].items() if k in float_decode and float_decode[k]["tokens_per_second"]}
    finally:
        engine.close()
    result["ok"] = bool(result["fixture"]["ok"])
    return result
