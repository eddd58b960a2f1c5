#!/usr/bin/env python3
"""GPU check: the real model.py (under the pb_utils stand-in) with the production HF engine on a randomly
initialised model of ChatGLM3-6B's shape, for a machine with CUDA, torch and transformers but neither Triton
nor the weights.

Checks (exit 1 if one fails):
  - batched streaming: 4 requests with different settings in one execute(): deltas, exactly one FINAL each, each
    row's own max_new_tokens, streamed text == final content;
  - cancellation: a row cancelled mid-stream ends with finish_reason "cancelled" and one FINAL, the others finish.
Measures: tokens/s at batch 1, 4, 8 (greedy, fixed length) and, at batch 1, the achieved memory bandwidth
(weight bytes read per decode step / step time) against the GPU's nominal bandwidth.

Model: Llama-style stand-in for ChatGLM3-6B (28 layers, hidden 4096, 32 heads with 2 KV groups, FFN 13696,
vocab 65024; ~6.2 B parameters, ~12.5 GB in fp16) — the same work per token as ChatGLM3, which cannot be built
without its remote code. Tokenizer: a byte-level stand-in with ChatGLM3's special tokens and prompt layout.
`--small` builds a 2-layer, 64-wide variant (for CPU runs; pytest runs it that way so the script cannot rot).

Usage:
  python3 triton/tests/gpu_check.py --out gpu_check.json                  # CUDA, full size, float16
  python3 triton/tests/gpu_check.py --device cpu --small --out check.json  # anywhere
Options: --dtype float16|bfloat16|float32, --new-tokens N, --nominal-gbps X (if the GPU is not in the table).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
for p in (HERE, ROOT / "triton" / "testing", ROOT / "triton" / "model_repository" / "chatglm3-6b" / "1"):
    if str(p) not in sys.path:
        sys.path.insert(0, str(p))

import torch  # noqa: E402

# Nominal memory bandwidth in GB/s by (lower-case) name fragment; first match wins.
NOMINAL_GBPS = [("h200", 4800), ("h100 nvl", 3900), ("h100 sxm", 3350), ("h100 pcie", 2000), ("h100", 3350),
                ("a100-sxm4-80gb", 2039), ("a100 80gb pcie", 1935), ("a100", 1555), ("l40s", 864), ("l40", 864),
                ("rtx 4090", 1008), ("rtx 3090", 936), ("a10g", 600), ("a10", 600), ("l4", 300), ("t4", 320),
                ("v100", 900)]
FULL = dict(vocab_size=65024, hidden_size=4096, intermediate_size=13696, num_hidden_layers=28,
            num_attention_heads=32, num_key_value_heads=2, max_position_embeddings=8192)
SMALL = dict(vocab_size=65024, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=8192)


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


NEWLINE_ID = 3 + ord("\n")


def starts_with_metadata_line(model_class):
    """ChatGLM3 opens every answer with its (normally empty) metadata line; the random stand-in is made to do the
    same by favouring "\\n" at the first generated position, so streaming behaves as with the real model."""

    class Model(model_class):
        def forward(self, input_ids=None, **kwargs):
            out = super().forward(input_ids=input_ids, **kwargs)
            if input_ids is not None and input_ids.shape[1] > 1:  # prefill
                out.logits[:, -1, NEWLINE_ID] = out.logits[:, -1].max(dim=-1).values + 100.0
            return out

    return Model


class RandomChatGLMEngine:
    """Engine seam plug-in (`gpu_check:RandomChatGLMEngine`): the production HFEngine around a random model."""

    def __new__(cls, options):
        from transformers import LlamaConfig, LlamaForCausalLM

        from chatglm_hf import DTYPES, HFEngine

        shape = SMALL if options.parameters.get("gpu_check_size") == "small" else FULL
        dtype = DTYPES[options.dtype]
        config = LlamaConfig(**shape, pad_token_id=0, bos_token_id=1, eos_token_id=2, torch_dtype=dtype)
        torch.manual_seed(0)
        if options.device == "cpu":
            model = starts_with_metadata_line(LlamaForCausalLM)(config).to(dtype)
        else:  # torch 2.x: build on the GPU in the target dtype (no fp32 copy of 6 B parameters in host memory)
            previous = torch.get_default_dtype()
            torch.set_default_dtype(dtype)
            try:
                with torch.device(options.device):
                    model = starts_with_metadata_line(LlamaForCausalLM)(config)
            finally:
                torch.set_default_dtype(previous)
        # Llama derives positions from the attention mask; ChatGLM's remote code takes them explicitly.
        engine = HFEngine(options, model=model.eval(), tokenizer=ChatGLMLikeTokenizer(), pass_position_ids=False)
        # Stop ids outside the vocabulary: the random model runs every row to its own length, which keeps the
        # throughput figures comparable (stopping on ChatGLM3's real stop ids is covered by the CPU tests).
        engine.stop_ids = (config.vocab_size, config.vocab_size + 1, config.vocab_size + 2)
        return engine


def load(device: str, dtype: str, small: bool):
    from harness import load_model

    kind = "GPU" if device.startswith("cuda") else "CPU"
    model = load_model(engine="gpu_check:RandomChatGLMEngine", kind=kind, dtype=dtype,
                       gpu_check_size="small" if small else "full", stream_interval_ms="20")
    if kind == "GPU" and device != "cuda:0":
        raise SystemExit("run on cuda:0 (model.py places GPU instances by model_instance_device_id)")
    return model


def check_streaming_and_cancellation(model, new_tokens: int) -> dict:
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


def sync(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def throughput(model, device: str, new_tokens: int, batches) -> dict:
    from harness import make_request, run

    result = {}
    run(model, [make_request("warm-up", temperature=0.0, max_new_tokens=4)])
    for b in batches:
        reqs = [make_request(f"throughput {i}", temperature=0.0, max_new_tokens=new_tokens) for i in range(b)]
        short = [make_request(f"throughput {i}", temperature=0.0, max_new_tokens=1) for i in range(b)]
        sync(device)
        t0 = time.perf_counter()
        run(model, short)  # prefill + one step: subtracted to get decode-only step time
        sync(device)
        t1 = time.perf_counter()
        outs = run(model, reqs)
        sync(device)
        t2 = time.perf_counter()
        failed = [o.error for o in outs if o.error is not None]
        if failed:
            raise RuntimeError(f"batch {b} failed: {failed[0]!r}")
        tokens = sum(o.completion_tokens for o in outs)
        step = ((t2 - t1) - (t1 - t0)) / max(1, new_tokens - 1)
        result[str(b)] = {"tokens": tokens, "seconds": round(t2 - t1, 4), "tokens_per_second": round(tokens / (t2 - t1), 2),
                          "decode_step_ms": round(step * 1000, 3)}
    return result


def weight_bytes_per_step(engine) -> int:
    """Every weight is read once per decode step except the input embedding (one row per token)."""
    model = engine.model
    total = sum(p.numel() * p.element_size() for p in model.parameters())
    embed = model.get_input_embeddings().weight
    return total - embed.numel() * embed.element_size()


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
    parser = argparse.ArgumentParser(description="GPU check for model.py + HF engine (no Triton, no weights)")
    parser.add_argument("--device", default="cuda:0")
    parser.add_argument("--small", action="store_true", help="2-layer 64-wide variant (CPU friendly)")
    parser.add_argument("--dtype", default=None, help="default: float16 on CUDA, float32 on CPU")
    parser.add_argument("--new-tokens", type=int, default=None, help="default: 128 (full) / 32 (small)")
    parser.add_argument("--batches", default="1,4,8")
    parser.add_argument("--nominal-gbps", default=None)
    parser.add_argument("--out", required=True)
    args = parser.parse_args(argv)
    device = "cuda:0" if args.device == "cuda" else args.device
    if device.startswith("cuda") and not torch.cuda.is_available():
        raise SystemExit("CUDA is not available (use --device cpu --small)")
    dtype = args.dtype or ("float16" if device.startswith("cuda") else "float32")
    new_tokens = args.new_tokens or (32 if args.small else 128)
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

    started = time.perf_counter()
    model = load(device, dtype, args.small)
    load_seconds = time.perf_counter() - started
    report = {"device": device, "dtype": dtype, "small": args.small, "new_tokens": new_tokens,
              "torch": torch.__version__, "load_seconds": round(load_seconds, 2)}
    try:
        import transformers

        report["transformers"] = transformers.__version__
        report["parameters"] = sum(p.numel() for p in model.engine.model.parameters())
        report["checks"] = check_streaming_and_cancellation(model, new_tokens)
        report["throughput"] = throughput(model, device, new_tokens, [int(b) for b in args.batches.split(",")])
        step = report["throughput"].get("1", {}).get("decode_step_ms")
        weights = weight_bytes_per_step(model.engine)
        gbps, gpu = nominal_gbps(device, args.nominal_gbps)
        achieved = weights / (step / 1000) / 1e9 if step and step > 0 else None
        report["bandwidth"] = {"weight_bytes_per_step": weights, "decode_step_ms_batch1": step,
                               "achieved_gbps": round(achieved, 1) if achieved else None, "gpu": gpu,
                               "nominal_gbps": gbps,
                               "fraction_of_nominal": round(achieved / gbps, 3) if achieved and gbps else None}
        if device.startswith("cuda"):
            report["max_memory_allocated_gib"] = round(torch.cuda.max_memory_allocated() / 2**30, 2)
    finally:
        model.finalize()
    Path(args.out).write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    print(json.dumps(report, indent=2))
    return 0 if report["checks"]["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
