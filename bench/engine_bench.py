#!/usr/bin/env python3
"""The native engine's decode step and prefill, counted and timed on CPU (no tritonserver): the `engine` part.

Figures (JSON to --out, each {value, median_of, min, max, ...}):
  decode_host_syncs_per_step  host synchronisations per decode step, counted by a TorchDispatchMode
                              (triton/testing/sync_counter.py) over the path the continuous scheduler takes:
                              engine.decode_step -> the scheduler's SAMPLER -> engine.readback; rows greedy,
                              with temperature, and with top-p (target <= 1)
  decode_ops_per_layer        compute ops (no views) of one decode step per layer: ops of a 2-layer model minus a
                              1-layer one, plain attention, float32 (reported; bfloat16, with its casts, in raw)
  glm4_tiny_decode_tokens_per_s, chatglm3_tiny_decode_tokens_per_s
                              greedy decode tokens/s, 4 rows, on glm4-tiny's sizes with GLM-4's and ChatGLM3's
                              config (tiny_decode_tokens_per_s)
  prefill_stall_ratio         model.py + the continuous scheduler (pb_utils stand-in), unpaced, on an engine
                              whose 2,048-token chunk alone costs >= 10 decode steps: p99 of the gaps between the
                              decode steps of 2 running rows while a ~4,000-token prompt is admitted, over the
                              median gap of the same rows in the 150 steps just before (same run; target <= 3);
                              raw.noise_floor_ratio is the same p99 / median of those 150 steps with no
                              admission: what the machine's own noise gives
Usage: python3 bench/engine_bench.py --out=<file> [--rounds=5] [--smoke]
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
for p in ("triton/testing", "triton/tests", "triton/model_repository/chatglm3-6b/1"):
    sys.path.insert(0, str(ROOT / p))

import torch  # noqa: E402

import gpu_check  # noqa: E402
from chatglm.engine.native import NativeEngine  # noqa: E402
from chatglm.engine.generation import RowSettings, SamplingTensors  # noqa: E402
from chatglm.engine.types import EngineOptions, PrefillChunk  # noqa: E402
from chatglm.model.checkpoint import parse_config  # noqa: E402
from chatglm.serving import continuous_scheduler  # noqa: E402
from sync_counter import HostSyncCounter  # noqa: E402

# The stall engine: big enough on one CPU thread that a 2,048-token chunk costs well over 10 decode steps.
STALL_CONFIG = dict(gpu_check.CHATGLM3_6B, num_layers=4, hidden_size=256, num_attention_heads=8, kv_channels=32,
                    ffn_hidden_size=704)  # ChatGLM3's vocabulary (the tokenizer's special ids are near its end)
SETTINGS = [RowSettings(0.0, 1.0, 64), RowSettings(0.8, 1.0, 64), RowSettings(0.7, 0.8, 64), RowSettings(0.0, 1.0, 64)]


def summary(values, digits=3):
    values = sorted(values)
    return {"value": round(statistics.median(values), digits), "median_of": len(values), "min": round(values[0], digits),
            "max": round(values[-1], digits)}


def small_engine(layers: int, dtype=torch.float32, rows: int = 4) -> NativeEngine:
    config = parse_config(dict(gpu_check.SMALL, num_layers=layers))
    return NativeEngine(EngineOptions("", str(dtype).replace("torch.", ""), "cpu", max_rows=rows, context_needed=256),
                        tokenizer=gpu_check.ChatGLMLikeTokenizer(), config=config,
                        tensors=gpu_check.random_tensors(config, dtype, "cpu"), dtype=dtype, sampling_seed=0)


def _open(engine, rows, prompt_len=20):
    slots = [engine.open_row() for _ in range(rows)]
    engine.prefill([PrefillChunk(s, list(range(100, 100 + prompt_len + 7 * i)), 0, prompt_len + 7 * i) for i, s in enumerate(slots)])
    return slots


def host_syncs_per_step(steps: int) -> dict:
    engine = small_engine(2)
    slots = _open(engine, 4)
    tokens = [7] * 4
    per_step = []
    for step in range(steps):
        with HostSyncCounter([engine.readback.buffer]) as counter:  # the scheduler's path: step, sampler, readback
            logits = engine.decode_step(slots, tokens)
            params = SamplingTensors.build(SETTINGS, [step] * len(SETTINGS), logits.device, [1, 2, 3, 4])
            ids = continuous_scheduler.SAMPLER(logits, params, None)
            tokens = engine.readback.start(ids).wait()
        per_step.append(len(counter.syncs))
    out = summary(per_step)
    out["syncs_of_one_step"] = counter.syncs
    out["sampler"] = f"{continuous_scheduler.SAMPLER.__module__}.{continuous_scheduler.SAMPLER.__name__}"
    return out


def ops_per_layer() -> dict:
    def count(layers, dtype):
        engine = small_engine(layers, dtype)
        slots = _open(engine, 3)
        with HostSyncCounter([engine.readback.buffer]) as counter:
            engine.decode_step(slots, [1, 2, 3])
        return counter

    one, two = count(1, torch.float32), count(2, torch.float32)
    per_layer = two.ops - one.ops
    bf_one, bf_two = count(1, torch.bfloat16), count(2, torch.bfloat16)
    value = two.compute_ops - one.compute_ops
    return {"value": value, "median_of": 1, "min": value, "max": value, "attention": "plain (torch 1.13)",
            "ops_of_a_layer": dict(sorted(per_layer.items())), "outside_the_layers": one.compute_ops - value,
            "bfloat16_per_layer": bf_two.compute_ops - bf_one.compute_ops}


class StallEngine(NativeEngine):
    """A mid-size random ChatGLM (STALL_CONFIG) that stamps every decode step, alone or with chunks in its pass:
    (time, slots), and every chunk as its pass starts."""

    stamps = []
    chunks = []

    def __init__(self, options):
        config = parse_config(STALL_CONFIG)
        super().__init__(options, tokenizer=gpu_check.ChatGLMLikeTokenizer(), config=config,
                         tensors=gpu_check.random_tensors(config, torch.float32, "cpu"), dtype=torch.float32, sampling_seed=0)
        vocab = config.padded_vocab_size
        self.stop_ids = (vocab, vocab + 1, vocab + 2)

    def prefill(self, chunks):
        StallEngine.chunks.append((time.perf_counter(), [(c.slot, c.stop - c.start) for c in chunks]))
        return super().prefill(chunks)

    def decode_step(self, slots, tokens):
        logits = super().decode_step(slots, tokens)
        StallEngine.stamps.append((time.perf_counter(), list(slots)))
        return logits

    def step_with_chunks(self, chunks, slots, tokens):
        started = time.perf_counter()
        out = super().step_with_chunks(chunks, slots, tokens)
        if out is not None:  # else the scheduler runs prefill and decode_step, stamped there
            StallEngine.chunks.append((started, [(c.slot, c.stop - c.start) for c in chunks]))
            StallEngine.stamps.append((time.perf_counter(), list(slots)))
        return out


def chunk_cost_in_steps(engine, budget: int) -> dict:
    """One prefill chunk of `budget` tokens alone vs one decode step of 2 rows (the config's premise)."""
    slots = _open(engine, 2)
    for _ in range(3):
        engine.decode_step(slots, [5, 6])
    t0 = time.perf_counter()
    for _ in range(10):
        engine.decode_step(slots, [5, 6])
    step = (time.perf_counter() - t0) / 10
    long = engine.open_row()
    t0 = time.perf_counter()
    engine.prefill([PrefillChunk(long, list(range(10, 10 + budget)), 0, budget)])
    chunk = time.perf_counter() - t0
    for s in slots + [long]:
        engine.close_row(s)
    return {"decode_step_ms": round(step * 1000, 2), "chunk_ms": round(chunk * 1000, 1), "chunk_in_steps": round(chunk / step, 1)}


def stall_round(model, prompt_tokens: int, answer: int, baseline: int) -> dict:
    from harness import make_request, wait_for_finals

    StallEngine.stamps, StallEngine.chunks = [], []
    runners = [make_request(f"runner {i}", temperature=0.0, max_new_tokens=answer) for i in range(2)]
    model.execute(runners)
    pause, deadline = threading.Event(), time.monotonic() + 300
    while len(StallEngine.stamps) < baseline:  # a baseline of decode steps with nothing else going on
        if time.monotonic() > deadline or any(r.sender.final_count() for r in runners):
            raise RuntimeError("the running rows did not get going (see the engine's log)")
        pause.wait(0.001)
    long = make_request("x" * prompt_tokens, temperature=0.0, max_new_tokens=2)
    model.execute([long])
    wait_for_finals(runners + [long])
    stamps = [t for t, slots in StallEngine.stamps if {0, 1} <= set(slots)]
    long_chunks = [(t, n) for t, part in StallEngine.chunks for s, n in part if s == 2]
    start, end = long_chunks[0][0], long_chunks[-1][0]
    gaps = [(b, b - a) for a, b in zip(stamps, stamps[1:])]
    before = [g for t, g in gaps if t < start][5:]  # after the runners' own start-up
    during = [g for t, g in gaps if start <= t and t - g <= end + 1e-9]
    if len(before) < 10 or len(during) < 3:
        raise RuntimeError(f"too few gaps measured (before {len(before)}, during {len(during)}): lengthen the answers")
    p99 = _p99(during)
    median = statistics.median(before)
    return {"ratio": p99 / median, "p99_gap_ms": round(p99 * 1000, 2), "median_gap_ms": round(median * 1000, 2),
            # the same statistic with no admission at all: how much of the ratio this machine's noise explains
            "noise_floor_ratio": round(_p99(before) / median, 3),
            "median_ratio": round(statistics.median(during) / median, 3),
            "max_gap_ms": round(max(during) * 1000, 2), "gaps_during": len(during), "chunks": [n for _, n in long_chunks],
            "gaps_during_ms": [round(g * 1000, 1) for g in during]}


def _p99(values):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]


def prefill_stall(rounds: int, prompt_tokens: int, answer: int, baseline: int) -> dict:
    from harness import load_model

    model = load_model(engine="engine_bench:StallEngine", max_active_rows="4", max_input_tokens=str(prompt_tokens + 200),
                       max_new_tokens_limit=str(answer), default_max_new_tokens="16", prefill_token_budget="2048",
                       max_context=str(max(2304, prompt_tokens + 200 + answer)))
    try:
        premise = chunk_cost_in_steps(model.engine, 2048)
        results = [stall_round(model, prompt_tokens, answer, baseline) for _ in range(rounds + 1)][1:]  # the first warms up
    finally:
        model.finalize()
    out = summary([r["ratio"] for r in results])
    out.update({"premise": premise, "rounds": results, "prompt_tokens": prompt_tokens,
                "noise_floor_ratio": round(statistics.median(r["noise_floor_ratio"] for r in results), 3),
                "median_gap_ratio": round(statistics.median(r["median_ratio"] for r in results), 3),
                "prefill_stall_target": continuous_scheduler.SchedulerLimits(1, 0, 1, 0).prefill_stall_target})
    return out


def tiny_decode_tokens_per_s(rounds: int, steps: int) -> dict:
    """Greedy decode tokens/s of 4 rows on glm4-tiny's sizes (3 layers, 128 wide, vocabulary 768, float32, one
    thread): GLM-4's config (rotary base 10000 x 500, epsilon 1.5625e-7, the fixture's weights) beside ChatGLM3's
    (base 10000, epsilon 1e-5, random weights of the same shapes). Same sizes, so the pair shows that GLM-4's
    config costs nothing per step; the real models differ in layers and vocabulary (bench/README's memory table)."""
    from fixture_check import GLM4_FIXTURE

    glm4_raw = json.loads((GLM4_FIXTURE / "config.json").read_text(encoding="utf-8"))
    results = {}
    for name, raw in (("glm4", glm4_raw), ("chatglm3", dict(glm4_raw, rope_ratio=1, layernorm_epsilon=1e-5))):
        config = parse_config(raw)
        options = EngineOptions(str(GLM4_FIXTURE), "float32", "cpu", max_rows=4, context_needed=256)
        tensors = None if name == "glm4" else gpu_check.random_tensors(config, torch.float32, "cpu")
        engine = NativeEngine(options, config=config, tensors=tensors, dtype=torch.float32, sampling_seed=0)
        rates = []
        for _ in range(rounds):
            slots = [engine.open_row() for _ in range(4)]
            logits = engine.prefill([PrefillChunk(s, [658, 660, 663, 10 + k], 0, 4) for k, s in enumerate(slots)])
            started = time.perf_counter()
            for _ in range(steps):
                logits = engine.decode_step(slots, logits.argmax(dim=-1).tolist())
            rates.append(4 * steps / (time.perf_counter() - started))
            for s in slots:
                engine.close_row(s)
        results[name] = dict(summary(rates, 1), rows=4, steps=steps, layers=config.num_layers,
                             hidden=config.hidden_size, vocabulary=config.padded_vocab_size,
                             rope_base=10000 * config.rope_ratio)
    return results


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", required=True)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="seconds: short answers, a 600-token prompt, one round")
    args = parser.parse_args(argv)
    torch.set_num_threads(int(os.environ.get("TINY_ENGINE_THREADS", "1")))
    sys.modules.setdefault("engine_bench", sys.modules[__name__])  # model.py loads StallEngine by module name
    started = time.perf_counter()
    report = {"decode_host_syncs_per_step": host_syncs_per_step(3 if args.smoke else 20),
              "decode_ops_per_layer": ops_per_layer()}
    report["prefill_stall_ratio"] = (prefill_stall(1, 600, 160, 40) if args.smoke
                                     else prefill_stall(args.rounds, 4000, 900, 150))
    tiny = tiny_decode_tokens_per_s(1 if args.smoke else args.rounds, 20 if args.smoke else 200)
    report["glm4_tiny_decode_tokens_per_s"] = tiny["glm4"]
    report["chatglm3_tiny_decode_tokens_per_s"] = tiny["chatglm3"]
    report["seconds"] = round(time.perf_counter() - started, 1)
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps({k: v["value"] if isinstance(v, dict) else v for k, v in report.items()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
