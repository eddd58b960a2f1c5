#!/usr/bin/env python3
"""GPU check of the native engine: ChatGLM3-6B's real shapes with random float16 weights (no download, no Triton),
for a machine with CUDA and torch 2.x. One script, a few minutes (under 6 on an H200); writes
bench/results/gpu.json after every measurement, so a late failure loses nothing measured before it.

Checks (exit 1 if one fails):
  - the fixture (--fixture PATH, default the git-ignored copy triton/tests/fixtures/chatglm3-tiny, else
    ../shared/fixtures/chatglm3-tiny) through the production loader on this device: float32 logits within 1e-4
    of THUDM's code (SDPA attention on torch 2.x), float16 within 0.05. A missing fixture FAILS the check
    unless --no-fixture says to leave it out;
  - model.py + the continuous scheduler (under the pb_utils stand-in) on the 6B shapes: 4 requests with different
    settings stream, each ends with one FINAL after its own max_new_tokens, a cancelled one ends early.
Measures:
  - decode tokens/s at 1, 8 and 16 rows at contexts 32, 1k, 4k and 8k, eager and with CUDA graphs (the rows'
    contexts are set by advancing the cache after a short prefill: what the keys hold does not change the time);
  - decode_host_syncs_per_step: torch.cuda.set_sync_debug_mode("warn") over the scheduler's path (decode step,
    its sampler, the readback), warnings counted, plus the readback's own wait (1 by design);
  - the memory plan (engine.memory_plan, chatglm.engine.memory_plan) against torch.cuda.mem_get_info and the
    allocated bytes: weights + KV cache as planned, the peak against the plan's total;
  - prefill tokens/s of a 1,000-token prompt; tokens/s through the scheduler;
  - mixed_pass: a decode step of 15 rows at context 1k with a 64 / 256 / 512-token chunk in one pass
    (step_with_chunks, eager) against the chunk's prefill and then the step (graph-replayed where captured):
    whether the continuous scheduler's one pass costs less than the two (mixed_over_separate < 1);
  - the HBM roofline fraction at 1 row: weight bytes read per decode step / step time / nominal bandwidth
    (goal >= 0.6; H200: 12.5 GB at 4.8 TB/s = 2.6 ms per step);
  - late join in steps: a 16-token request sent while a 400-token one runs;
  - peak GPU memory.

Usage:
  cp -r ../shared/fixtures/chatglm3-tiny triton/tests/fixtures/     # once: the device machine has no ../shared
  python3 triton/tests/gpu_check.py                                   # cuda:0, float16 -> bench/results/gpu.json
  python3 triton/tests/gpu_check.py --device cpu --small --out /tmp/g.json   # anywhere (what pytest runs)
Options: --dtype float16|bfloat16|float32, --rows 1,8,16, --contexts 32,1024,4096,8192, --steps N,
--nominal-gbps X (GPU not in the table), --fixture PATH, --no-fixture.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for p in (HERE, ROOT / "triton" / "testing", ROOT / "triton" / "model_repository" / "chatglm3-6b" / "1"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import torch  # noqa: E402

from chatglm.model.checkpoint import DTYPES, parameter_shapes, parse_config  # noqa: E402
from chatglm.engine.types import PrefillChunk  # noqa: E402
from chatglm.engine.native import NativeEngine  # noqa: E402
from chatglm.serving import continuous_scheduler  # noqa: E402
from chatglm.engine.generation import RowSettings, SamplingTensors  # noqa: E402

IN_TREE_FIXTURE = HERE / "fixtures" / "chatglm3-tiny"  # git-ignored copy for machines without ../shared

# Nominal memory bandwidth in GB/s by (lower-case) name fragment; first match wins.
NOMINAL_GBPS = [("h200", 4800), ("h100 nvl", 3900), ("h100 sxm", 3350), ("h100 pcie", 2000), ("h100", 3350),
                ("a100-sxm4-80gb", 2039), ("a100 80gb pcie", 1935), ("a100", 1555), ("l40s", 864), ("l40", 864),
                ("rtx 4090", 1008), ("rtx 3090", 936), ("a10g", 600), ("a10", 600), ("l4", 300), ("t4", 320),
                ("v100", 900)]
CHATGLM3_6B = {"num_layers": 28, "hidden_size": 4096, "num_attention_heads": 32, "kv_channels": 128,
               "multi_query_attention": True, "multi_query_group_num": 2, "ffn_hidden_size": 13696,
               "padded_vocab_size": 65024, "layernorm_epsilon": 1e-5, "add_qkv_bias": True, "post_layer_norm": True,
               "rmsnorm": True, "seq_length": 8192, "original_rope": True}
SMALL = dict(CHATGLM3_6B, num_layers=2, hidden_size=64, num_attention_heads=4, kv_channels=16, ffn_hidden_size=128)


NEWLINE_ID = 3 + ord("\n")


class ChatGLMLikeTokenizer:
    """ChatGLM3's special ids and message builder; text as bytes (ids 3..258)."""

    special = {"[MASK]": 64789, "[gMASK]": 64790, "[sMASK]": 64791, "sop": 64792, "eop": 64793,
               "<|system|>": 64794, "<|user|>": 64795, "<|assistant|>": 64796, "<|observation|>": 64797}
    eos_token_id = 2

    def get_command(self, name):
        return self.special[name]

    def get_prefix_tokens(self):
        return [self.special["[gMASK]"], self.special["sop"]]

    def build_single_message(self, role, metadata, message):
        return [self.special[f"<|{role}|>"]] + [3 + b for b in f"{metadata}\n{message}".encode()]

    def decode(self, ids):
        # Byte ids as UTF-8; any other non-special id as one CJK character, so random output is visible text.
        out, pending = [], bytearray()
        for i in ids:
            if 3 <= i < 259:
                pending.append(i - 3)
                continue
            out.append(pending.decode("utf-8", "replace"))
            pending.clear()
            if 259 <= i < 64789:
                out.append(chr(0x4E00 + i % 0x5000))
        out.append(pending.decode("utf-8", "replace"))
        return "".join(out)


def random_tensors(config, dtype, device, seed: int = 0):
    """Random weights under ChatGLM3's names, made on the device in the target dtype (no 25 GB float32 copy)."""
    generator = torch.Generator(device=device).manual_seed(seed)
    tensors = {}
    for name, shape in parameter_shapes(config).items():
        t = torch.randn(shape, generator=generator, device=device, dtype=torch.float32 if device == "cpu" else dtype)
        scale = 0.1 if name.endswith("layernorm.weight") else (0.05 if name.endswith(".bias") else 0.02)
        t = t.mul_(scale)
        if name.endswith("layernorm.weight"):
            t += 1.0
        tensors[name] = t.to(dtype)
    return tensors


class RandomChatGLMEngine(NativeEngine):
    """The production native engine on random weights of ChatGLM3-6B's shapes (`gpu_check:RandomChatGLMEngine`)."""

    def __init__(self, options):
        small = options.parameters.get("gpu_check_size") == "small"
        config = parse_config(SMALL if small else CHATGLM3_6B)
        dtype = DTYPES[options.dtype]
        super().__init__(options, tokenizer=ChatGLMLikeTokenizer(), config=config,
                         tensors=random_tensors(config, dtype, options.device), sampling_seed=0)
        # Stop ids outside the vocabulary: the random model runs every row to its own length, which keeps the
        # figures comparable (stopping on ChatGLM3's stop ids is covered by the CPU tests).
        vocab = config.padded_vocab_size
        self.stop_ids = (vocab, vocab + 1, vocab + 2)

    def prefill(self, chunks):
        """ChatGLM3 opens every answer with its (normally empty) metadata line; the random model is made to do the
        same at the first generated position, so streaming behaves as with the real model."""
        return _newline_first(super().prefill(chunks))

    def step_with_chunks(self, chunks, slots, tokens):
        out = super().step_with_chunks(chunks, slots, tokens)
        return None if out is None else (_newline_first(out[0]), out[1])


def _newline_first(logits):
    logits[:, NEWLINE_ID] = logits.max(dim=-1).values + 100.0
    return logits


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def load_served(device: str, dtype: str, small: bool, rows: int, context: int):
    from harness import load_model

    kind = "GPU" if device.startswith("cuda") else "CPU"
    if kind == "GPU" and device != "cuda:0":
        raise SystemExit("run on cuda:0 (model.py places GPU instances by model_instance_device_id)")
    return load_model(engine="gpu_check:RandomChatGLMEngine", kind=kind, dtype=dtype, max_active_rows=str(rows),
                      gpu_check_size="small" if small else "full", stream_interval_ms="20",
                      max_input_tokens=str(context - 512), max_new_tokens_limit="512", default_max_new_tokens="128",
                      max_context=str(context))


def default_fixture() -> Path:
    from fixture_check import FIXTURE

    return IN_TREE_FIXTURE if (IN_TREE_FIXTURE / "golden.json").is_file() else FIXTURE


def check_fixture(device: str, path) -> dict:
    """The fixture's logits on this device (SDPA on torch 2.x). path None = left out (--no-fixture)."""
    from fixture_check import Fixture, run_checks

    if path is None:
        return {"ok": True, "left_out": "--no-fixture"}
    path = Path(path)
    if not (path / "golden.json").is_file():
        return {"ok": False, "error": f"fixture not found at {path} (copy ../shared/fixtures/chatglm3-tiny to "
                                      f"{IN_TREE_FIXTURE}, pass --fixture PATH, or --no-fixture to leave it out)"}
    fixture = Fixture(path)
    out = {"ok": True, "path": str(path), "float32": run_checks(fixture, fixture.engine(device=device, dtype="float32"))}
    out["ok"] = max(out["float32"].values()) < 1e-4
    if device.startswith("cuda"):
        out["float16"] = run_checks(fixture, fixture.engine(device=device, dtype="float16"))
        out["ok"] = out["ok"] and max(out["float16"].values()) < 0.05
    return out


def check_serving(model, new_tokens: int) -> dict:
    from harness import cancel_after, make_request, run

    failures = []
    settings = [dict(temperature=0.0, max_new_tokens=new_tokens), dict(temperature=0.8, top_p=0.8, max_new_tokens=new_tokens // 2),
                dict(temperature=1.0, top_p=0.95, max_new_tokens=new_tokens), dict(temperature=0.0, max_new_tokens=5)]
    requests = [make_request(f"GPU check {i}: 你好", **s) for i, s in enumerate(settings)]
    requests[2] = cancel_after(requests[2], 2)
    outs = run(model, requests)
    expected = ["length", "length", "cancelled", "length"]
    for i, (out, s) in enumerate(zip(outs, settings)):
        if out.finals != 1 or out.error is not None:
            failures.append(f"row {i}: finals={out.finals} error={out.error}")
            continue
        if out.finish_reason != expected[i]:
            failures.append(f"row {i}: finish_reason {out.finish_reason}, expected {expected[i]}")
        if expected[i] == "length" and out.completion_tokens != s["max_new_tokens"]:
            failures.append(f"row {i}: {out.completion_tokens} tokens, expected {s['max_new_tokens']}")
        if out.text != out.history[-1]["content"]:
            failures.append(f"row {i}: streamed text differs from the final content")
    if outs[2].finish_reason == "cancelled" and not outs[2].completion_tokens < settings[2]["max_new_tokens"]:
        failures.append("cancelled row was not stopped early")
    return {"ok": not failures, "failures": failures,
            "rows": [{"finish_reason": o.finish_reason, "completion_tokens": o.completion_tokens, "deltas": len(o.deltas)} for o in outs]}


def _sample(logits, settings, step: int):
    """The scheduler's sampling call (continuous_scheduler._sample_and_take): the rows' SamplingTensors copied to
    the device, then SAMPLER; no repetition penalty here (the seen-token mask is None)."""
    params = SamplingTensors.build(settings, [step] * len(settings), logits.device, list(range(1, len(settings) + 1)))
    return continuous_scheduler.SAMPLER(logits, params, None)


def _timed_steps(engine: NativeEngine, device: str, slots, steps: int) -> float:
    """Seconds per decode step as the scheduler runs it: step, device sampler, readback of the ids."""
    settings = [RowSettings(0.0, 1.0, 1 << 20)] * len(slots)
    tokens = [7] * len(slots)
    for i in range(3):
        tokens = engine.readback.start(_sample(engine.decode_step(slots, tokens), settings, i)).wait()
    sync(device)
    t0 = time.perf_counter()
    for i in range(steps):
        tokens = engine.readback.start(_sample(engine.decode_step(slots, tokens), settings, i)).wait()
    sync(device)
    return (time.perf_counter() - t0) / steps


def _rows_at_context(engine: NativeEngine, rows: int, context: int, steps: int):
    """`rows` rows after a 32-token prompt, then advanced to `context` (contents do not change the time)."""
    prompt = list(range(100, 132))
    slots = []
    try:
        for _ in range(rows):
            slots.append(engine.open_row())
        engine.prefill([PrefillChunk(s, prompt, 0, len(prompt)) for s in slots])
    except Exception:
        for s in slots:
            engine.close_row(s)
        raise
    ahead = min(context, engine.max_context - steps - 8) - len(prompt)
    for s in slots:
        if ahead > 0:
            engine.cache.advance(s, ahead)
    return slots


def decode_throughput(engine: NativeEngine, device: str, rows_list, contexts, steps: int, write) -> dict:
    """tokens/s by context and rows, eager and (on CUDA, when captured) with CUDA graphs."""
    result = {}
    decoder = engine.decoder
    graphs = dict(decoder._graphs)
    for context in contexts:
        by_rows = result.setdefault(str(context), {})
        for rows in rows_list:
            slots = _rows_at_context(engine, rows, context, 2 * steps + 8)
            entry = {"context": engine.cache.length(slots[0])}
            try:
                for mode in ("eager", "cuda_graphs"):
                    if mode == "cuda_graphs" and not graphs:
                        entry[mode] = None
                        continue
                    decoder._graphs = graphs if mode == "cuda_graphs" else {}
                    step = _timed_steps(engine, device, slots, steps)
                    entry[mode] = {"decode_step_ms": round(step * 1000, 3), "tokens_per_second": round(rows / step, 1)}
            finally:
                decoder._graphs = graphs
                for s in slots:
                    engine.close_row(s)
            best = min((entry[m] for m in ("eager", "cuda_graphs") if entry.get(m)), key=lambda v: v["decode_step_ms"])
            by_rows[str(rows)] = dict(entry, best=best)
            write()
    return result


def host_syncs_per_step(engine: NativeEngine, device: str, steps: int = 16) -> dict:
    """Synchronisations torch flags (set_sync_debug_mode) over the scheduler's path, per step; the readback's own
    event wait (by design the one per step) is added. On CPU: the TorchDispatchMode count instead."""
    import warnings

    rows = min(4, engine.max_rows)
    slots = _rows_at_context(engine, rows, 64, steps + 8)
    settings = [RowSettings(0.0, 1.0, 1 << 20), RowSettings(0.8, 1.0, 1 << 20, top_k=50), RowSettings(0.7, 0.8, 1 << 20),
                RowSettings(0.0, 1.0, 1 << 20)][:rows]
    tokens = [7] * rows
    try:
        if device.startswith("cuda"):
            _timed_steps(engine, device, slots, 2)
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                torch.cuda.set_sync_debug_mode("warn")
                try:
                    for i in range(steps):
                        ids = _sample(engine.decode_step(slots, tokens), settings, i)
                        tokens = engine.readback.start(ids).wait()
                finally:
                    torch.cuda.set_sync_debug_mode("default")
            flagged = [str(w.message).splitlines()[0] for w in caught if "synchroniz" in str(w.message).lower()]
            return {"value": round(len(flagged) / steps + 1, 3), "flagged_per_step": len(flagged) / steps,
                    "flagged": sorted(set(flagged))[:10], "readback_waits_per_step": 1, "method": "set_sync_debug_mode"}
        from sync_counter import HostSyncCounter

        with HostSyncCounter([engine.readback.buffer]) as counter:
            for i in range(steps):
                ids = _sample(engine.decode_step(slots, tokens), settings, i)
                tokens = engine.readback.start(ids).wait()
        return {"value": round(len(counter.syncs) / steps, 3), "syncs": sorted(set(counter.syncs)), "method": "TorchDispatchMode"}
    finally:
        for s in slots:
            engine.close_row(s)


def memory_plan(engine: NativeEngine, device: str) -> dict:
    """The engine's memory plan (chatglm.engine.memory_plan, the figures the load decided on) against what the
    device shows once loaded: weights + KV cache as planned vs torch's allocated bytes, and the peak so far vs
    the plan's total (the decode buffers include the captured graphs' outputs)."""
    plan = engine.memory_plan.as_dict()
    out = {"plan": plan, "weights_bytes": engine.model.parameter_bytes(), "kv_cache_bytes": engine.cache.nbytes,
           "kv_cache_as_planned": engine.cache.nbytes == plan["kv_cache"]}
    if device.startswith("cuda"):
        free, total = torch.cuda.mem_get_info(torch.device(device))
        allocated, peak = int(torch.cuda.memory_allocated()), int(torch.cuda.max_memory_allocated())
        out.update({"mem_get_info_free": int(free), "mem_get_info_total": int(total), "allocated": allocated,
                    "peak_allocated": peak,
                    "allocated_over_planned_weights_and_cache": round(allocated / (plan["weights"] + plan["kv_cache"]), 3),
                    "peak_over_planned_total": round(peak / plan["total"], 3)})
    return out


def prefill_throughput(engine: NativeEngine, device: str, tokens: int) -> dict:
    prompt = [100 + (i % 50000) for i in range(tokens)]
    times = []
    for _ in range(3):
        slot = engine.open_row()
        try:
            sync(device)
            t0 = time.perf_counter()
            engine.prefill([PrefillChunk(slot, prompt, 0, tokens)])
            sync(device)
            times.append(time.perf_counter() - t0)
        finally:
            engine.close_row(slot)
    best = min(times[1:])  # the first run pays for kernel selection
    return {"prompt_tokens": tokens, "seconds": round(best, 4), "tokens_per_second": round(tokens / best, 1)}


def mixed_pass(engine: NativeEngine, device: str, rows: int, chunks, context: int = 1024, repeats: int = 5) -> dict:
    """A decode step of `rows` rows at `context` with one prompt chunk: in one pass (step_with_chunks, eager) against
    the separate passes (the chunk's prefill, then the step as the scheduler runs it: a captured graph where there
    is one). ms per iteration, best of `repeats` after a warm-up; `mixed_over_separate` < 1 means the one pass wins."""
    slots = _rows_at_context(engine, rows, context, 16)
    result = {"rows": rows, "context": context}
    tokens = [7] * rows

    def timed(run) -> float:
        best = float("inf")
        for i in range(repeats + 1):
            sync(device)
            t0 = time.perf_counter()
            run()
            sync(device)
            if i:
                best = min(best, time.perf_counter() - t0)
        return best

    try:
        for chunk in chunks:
            prompt = [100 + (i % 50000) for i in range(context + chunk * (2 * repeats + 2))]
            long = engine.open_row()
            try:
                engine.cache.advance(long, context)  # the chunk comes late in a prompt of `context` tokens

                def next_chunk():
                    start = engine.cache.length(long)
                    return [PrefillChunk(long, prompt, start, start + chunk)]

                def mixed():
                    out = engine.step_with_chunks(next_chunk(), slots, tokens)
                    if out is None:
                        raise RuntimeError(f"a {chunk}-token chunk and {rows} rows do not fit one pass")
                    engine.readback.start(out[1].argmax(-1)).wait()

                def separate():
                    engine.prefill(next_chunk())
                    engine.readback.start(engine.decode_step(slots, tokens).argmax(-1)).wait()

                m, s = timed(mixed), timed(separate)
            finally:
                engine.close_row(long)
            result[str(chunk)] = {"mixed_ms": round(m * 1000, 3), "separate_ms": round(s * 1000, 3),
                                  "mixed_over_separate": round(m / s, 3)}
    finally:
        for s in slots:
            engine.close_row(s)
    return result


def served_throughput(model, rows_list, new_tokens: int) -> dict:
    """Through model.py and the continuous scheduler: `rows` greedy requests together (includes prefill)."""
    from harness import make_request, run

    result = {}
    for rows in rows_list:
        reqs = [make_request(f"throughput {i}", temperature=0.0, max_new_tokens=new_tokens) for i in range(rows)]
        t0 = time.perf_counter()
        outs = run(model, reqs)
        seconds = time.perf_counter() - t0
        failed = [o.error for o in outs if o.error is not None]
        if failed:
            raise RuntimeError(f"{rows} rows failed: {failed[0]!r}")
        tokens = sum(o.completion_tokens for o in outs)
        result[str(rows)] = {"tokens": tokens, "seconds": round(seconds, 4), "tokens_per_second": round(tokens / seconds, 1)}
    return result


def late_join_steps(model, long_tokens: int = 400, short_tokens: int = 16) -> dict:
    """A short request arrives while a long one runs: steps from its arrival to its first token (log lines)."""
    import triton_python_backend_utils as pb

    from harness import make_request, wait_for_finals

    scheduler = model.scheduler
    start = scheduler.steps
    long = make_request("a long answer", request_id="gpu-long", temperature=0.0, max_new_tokens=long_tokens)
    model.execute([long])
    deadline = time.monotonic() + 120
    while scheduler.steps < start + 20:  # the long answer is well under way (and has hundreds of steps to go)
        if time.monotonic() > deadline or long.sender.final_count():
            raise RuntimeError("the long request did not get going")
        time.sleep(0.0005)
    arrived = scheduler.steps
    short = make_request("a short question", request_id="gpu-short", temperature=0.0, max_new_tokens=short_tokens)
    model.execute([short])
    wait_for_finals([long, short])
    pattern = re.compile(r"request gpu-short \w+ after \d+ tokens \(prompt \d+ tokens; admitted at step (\d+), "
                         r"first token at step (\d+), finished at step \d+; first token after (\d+) ms")
    match = next(m for m in (pattern.search(msg) for _, msg in reversed(pb.Logger.records)) if m)
    admitted, first, ms = (int(g) for g in match.groups())
    return {"arrived_at_step": arrived, "admitted_at_step": admitted, "first_token_at_step": first,
            "steps_from_arrival_to_first_token": first - arrived, "steps_from_admission_to_first_token": first - admitted,
            "first_token_ms": ms, "long_row_steps": long_tokens}


def weight_bytes_per_step(engine: NativeEngine) -> int:
    """Every weight is read once per decode step except the input embedding (one row per token)."""
    embedding = engine.model.embedding
    return engine.model.parameter_bytes() - embedding.numel() * embedding.element_size()


def nominal_gbps(device: str, override):
    if override:
        return float(override), "--nominal-gbps"
    if not device.startswith("cuda"):
        return None, None
    name = torch.cuda.get_device_name(0)
    for fragment, gbps in NOMINAL_GBPS:
        if fragment in name.lower():
            return float(gbps), name
    return None, name


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description="GPU check of the native engine (ChatGLM3-6B shapes, no weights, no Triton)")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--small", action="store_true", help="2-layer 64-wide variant (CPU friendly)")
    parser.add_argument("--dtype", default=None, help="default: float16 on CUDA, float32 on CPU")
    parser.add_argument("--rows", default="1,8,16")
    parser.add_argument("--contexts", default=None, help="decode contexts (default 32,1024,4096,8192; 32,1024 small)")
    parser.add_argument("--steps", type=int, default=None, help="timed decode steps per measurement (default 48 / 8 small)")
    parser.add_argument("--prefill-tokens", type=int, default=None, help="default 1000 (200 small)")
    parser.add_argument("--nominal-gbps", default=None)
    parser.add_argument("--fixture", default=None, help=f"the ChatGLM3 fixture (default {IN_TREE_FIXTURE} if present, "
                                                        "else ../shared/fixtures/chatglm3-tiny)")
    parser.add_argument("--no-fixture", action="store_true", help="leave the fixture check out (it fails otherwise)")
    parser.add_argument("--out", default=str(ROOT / "bench" / "results" / "gpu.json"))
    args = parser.parse_args(argv)
    device = "cuda:0" if args.device == "cuda" else args.device
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("CUDA is not available (use --device cpu --small)")
    dtype = args.dtype or ("float16" if device.startswith("cuda") else "float32")
    rows_list = [int(r) for r in args.rows.split(",")]
    contexts = [int(c) for c in (args.contexts or ("32,1024" if args.small else "32,1024,4096,8192")).split(",")]
    steps = args.steps or (8 if args.small else 48)
    new_tokens = 16 if args.small else 128
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    started = time.perf_counter()
    out_path = Path(args.out)
    report = {"device": device, "dtype": dtype, "small": args.small, "torch": torch.__version__,
              "gpu": torch.cuda.get_device_name(0) if device.startswith("cuda") else None, "ok": False, "complete": False}

    def write() -> None:
        report["seconds"] = round(time.perf_counter() - started, 1)
        out_path.parent.mkdir(parents=True, exist_ok=True)
        out_path.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")

    def measure(key, fn):
        try:
            report[key] = fn()
        except Exception as exc:  # noqa: BLE001 - recorded; the figures before it are kept
            report.setdefault("errors", {})[key] = repr(exc)
        write()

    report["fixture"] = check_fixture(device, None if args.no_fixture else (args.fixture or default_fixture()))
    write()
    context = max(max(contexts) + 2 * steps + 64, 2048)  # room for the late-join and serving checks too
    model = load_served(device, dtype, args.small, max(rows_list), context)
    report["load_seconds"] = round(time.perf_counter() - started, 2)
    try:
        engine = model.engine
        report["attention"] = "sdpa" if engine.model.attend.__name__ == "attend_sdpa" else "plain"
        report["cuda_graphs"] = engine.decoder.graph_note
        report["parameters"] = sum(torch.Size(s).numel() for s in parameter_shapes(engine.config).values())
        report["kv_cache_bytes"] = engine.cache.nbytes
        measure("memory_plan", lambda: memory_plan(engine, device))
        measure("checks", lambda: check_serving(model, new_tokens))
        measure("decode_host_syncs_per_step", lambda: host_syncs_per_step(engine, device))
        report["decode_by_context"] = {}
        measure("decode_by_context", lambda: decode_throughput(engine, device, rows_list, contexts, steps, write))
        measure("decode", lambda: {r: v["best"] for r, v in report["decode_by_context"][str(contexts[0])].items()})
        measure("prefill", lambda: prefill_throughput(engine, device, args.prefill_tokens or (200 if args.small else 1000)))
        if max(rows_list) >= 2:  # the step's rows and the chunk's own row
            measure("mixed_pass", lambda: mixed_pass(engine, device, max(rows_list) - 1, (16, 64) if args.small else (64, 256, 512)))
        measure("served", lambda: served_throughput(model, rows_list, new_tokens))
        measure("late_join", lambda: late_join_steps(model))

        def roofline():
            step_ms = report["decode"].get("1", {}).get("decode_step_ms")
            weights = weight_bytes_per_step(engine)
            gbps, gpu = nominal_gbps(device, args.nominal_gbps)
            achieved = weights / (step_ms / 1000) / 1e9 if step_ms else None
            return {"weight_bytes_per_step": weights, "decode_step_ms_1_row": step_ms,
                    "achieved_gbps": round(achieved, 1) if achieved else None, "nominal_gbps": gbps, "gpu": gpu,
                    "fraction": round(achieved / gbps, 3) if achieved and gbps else None, "goal": 0.6,
                    "roofline_step_ms": round(weights / (gbps * 1e9) * 1000, 3) if gbps else None}

        measure("roofline", roofline)
        if device.startswith("cuda"):
            report["peak_memory_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
    finally:
        model.finalize()
    from gpu_check_int8 import measure_int8  # int8 weights next to the float figures (issue #21)

    fixture_path = False if args.no_fixture else report["fixture"].get("path", args.fixture or default_fixture())
    measure("int8", lambda: measure_int8(device, dtype, args.small, (1, 8), steps, report.get("decode"), fixture_path))
    report["complete"] = True
    report["ok"] = bool(report["fixture"]["ok"] and report.get("checks", {}).get("ok")
                        and report.get("int8", {}).get("ok") and not report.get("errors"))
    write()
    print(json.dumps(report, indent=2))
    return 0 if report["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
