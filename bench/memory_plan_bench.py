#!/usr/bin/env python3
"""Memory figures of the native engine at ChatGLM3-6B's real shapes, counted without a GPU (the `memory` part of
bench/run-all.mjs): the engine runs on torch's meta device under a TorchDispatchMode that counts the bytes of every
tensor it creates (triton/tests/memory_count.py; the attention kernel's own workspace excepted).

  prefill_peak_transient_mib  peak of one 2,048-token prefill chunk at position 6,144 (float16, 8 rows x 8192)
  int8_weight_bytes_ratio     int8 model bytes / float16 model bytes (ChatGLM3's quantized layers, float16 rest)

Byte counts are exact and deterministic (median_of 1). Usage: memory_plan_bench.py --out FILE [--smoke]
(--smoke: the same at 2 layers, for the bench stage of npm test).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for p in (ROOT / "triton" / "tests", ROOT / "triton" / "testing", ROOT / "triton" / "model_repository" / "chatglm3-6b" / "1"):
    sys.path.insert(0, str(p))

from chatglm.engine.memory_plan import memory_plan, model_weight_bytes  # noqa: E402
from chatglm.model.checkpoint import parse_config  # noqa: E402
from memory_count import CHATGLM3_6B, count_prefill_and_decode, meta_engine  # noqa: E402

MiB = 1 << 20
ROWS, CONTEXT, CHUNK, POSITION = 8, 8192, 2048, 6144


def figure(value, **raw):
    return {"value": value, "median_of": 1, "min": value, "max": value, "raw": raw}


CARDS_GB = (12, 16, 24, 48, 80)
CARD_OVERHEAD = 1 << 29  # 0.5 GiB of a card taken before the load (driver, display, CUDA context)


def models_table() -> str:
    """bench/README's per-model table: the memory plan of each catalog model (8 rows x 8,192 tokens, 2,048-token
    prefill chunk, 16-bit activations) and what `quantization: auto` does on a card of each size."""
    from chatglm.catalog import load_catalog
    from chatglm.engine.memory_plan import MemoryPlanError, largest_fit, plan_load

    lines = ["| model | float weights | int8 weights | KV cache | total float / int8 | "
             + " | ".join(f"{gb} GB" for gb in CARDS_GB) + " |", "|" + "---|" * (5 + len(CARDS_GB))]
    for entry in load_catalog().values():
        config = entry.checkpoint_config()
        fp, q8 = (memory_plan(config, ROWS, CONTEXT, CHUNK, "float16", q) for q in ("none", "int8"))
        cells = []
        for gb in CARDS_GB:
            free = gb * (1 << 30) - CARD_OVERHEAD
            try:
                plan = plan_load(config, ROWS, CONTEXT, CHUNK, "float16", "auto", free)
                cells.append("16-bit" if plan.quantization == "none" else "int8")
            except MemoryPlanError:
                fit = largest_fit(config, ROWS, CONTEXT, CHUNK, "float16", "int8", free)
                cells.append("no" if fit is None else f"int8, {fit.rows} rows")
        gib = lambda n: f"{n / (1 << 30):.1f} GiB"  # noqa: E731
        lines.append(f"| {entry.display_name} | {gib(fp.weights)} | {gib(q8.weights)} | {gib(fp.kv_cache)} | "
                     f"{gib(fp.total)} / {gib(q8.total)} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--models-table", action="store_true", help="print bench/README's per-model table and exit")
    args = parser.parse_args(argv)
    if args.models_table:
        print(models_table())
        return 0
    if not args.out:
        parser.error("--out is required")
    config = parse_config(dict(CHATGLM3_6B, num_layers=2) if args.smoke else CHATGLM3_6B)
    started = time.monotonic()
    counted, plans = {}, {}
    for quantization in ("none", "int8"):
        engine = meta_engine(config, ROWS, CONTEXT, CHUNK, quantization=quantization)
        counted[quantization] = count_prefill_and_decode(engine, chunk=CHUNK, position=POSITION, decode_rows=ROWS)
        plans[quantization] = memory_plan(config, ROWS, CONTEXT, CHUNK, "float16", quantization).as_dict()
    fp16, int8 = model_weight_bytes(config, "float16"), model_weight_bytes(config, "float16", "int8")
    shapes = "ChatGLM3-6B" + (" at 2 layers (smoke)" if args.smoke else "")
    result = {
        "prefill_peak_transient_mib": figure(
            round(counted["none"]["prefill_peak"] / MiB, 1), shapes=shapes, chunk=CHUNK, position=POSITION,
            rows=ROWS, context=CONTEXT, dtype="float16",
            plan_prefill_transient_mib=round(plans["none"]["prefill_transient"] / MiB, 1),
            int8_prefill_peak_mib=round(counted["int8"]["prefill_peak"] / MiB, 1),
            int8_plan_prefill_transient_mib=round(plans["int8"]["prefill_transient"] / MiB, 1),
            decode_step_peak_mib={q: round(c["decode_peak"] / MiB, 1) for q, c in counted.items()},
            plan_decode_buffers_mib={q: round(p["decode_buffers"] / MiB, 1) for q, p in plans.items()},
            allocations_counted=counted["none"]["prefill_allocations"],
            method="meta device + TorchDispatchMode: bytes of every tensor the engine creates, attention kernel excepted"),
        "int8_weight_bytes_ratio": figure(
            round(int8 / fp16, 4), shapes=shapes, int8_bytes=int8, float16_bytes=fp16,
            plan_total_gib={q: round(p["total"] / (1 << 30), 2) for q, p in plans.items()}),
        "seconds": round(time.monotonic() - started, 1),
    }
    Path(args.out).write_text(json.dumps(result, indent=1) + "\n", encoding="utf-8")
    print(json.dumps({k: v["value"] for k, v in result.items() if isinstance(v, dict)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
