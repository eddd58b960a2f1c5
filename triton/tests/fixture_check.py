"""Runs the native engine on ../shared/fixtures/chatglm3-tiny (a tiny checkpoint in ChatGLM3's format and the
logits THUDM's modeling code computes for it) and reports the largest absolute logit difference of each way of
running it: alone, in a padded batch, joining a running batch mid-generation, with the prompt prefilled in chunks.

Used by tests/test_native_fixture.py (CPU, float32, plain attention on torch 1.13) and by gpu_check.py (CUDA,
SDPA on torch 2.x). Decode steps are teacher-forced with the fixture's greedy tokens (its README: compare logits,
not argmax chains). Weights come through the production loader (chatglm.model.checkpoint) into the production engine.
"""
from __future__ import annotations

import json
from pathlib import Path
from typing import Dict, List, Optional

import torch

from chatglm.engine.types import EngineOptions, PrefillChunk
from chatglm.engine.native import NativeEngine

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT.parent / "shared" / "fixtures" / "chatglm3-tiny"  # CI has ../shared beside the clone
GLM4_FIXTURE = ROOT.parent / "shared" / "fixtures" / "glm4-tiny"  # GLM-4's architecture, its own tiny tokenizer


class FixtureTokenizer:
    """The fixture's special ids (its README): [gMASK] 381, sop 383, <|system|> 385, <|user|> 386, <|assistant|> 387."""

    eos_token_id = 2
    commands = {"[MASK]": 380, "[gMASK]": 381, "[sMASK]": 382, "sop": 383, "eop": 384, "<|system|>": 385,
                "<|user|>": 386, "<|assistant|>": 387, "<|observation|>": 388}

    def get_command(self, name: str) -> int:
        return self.commands[name]

    def get_prefix_tokens(self) -> List[int]:
        return [381, 383]

    def decode(self, ids) -> str:
        return " ".join(str(int(i)) for i in ids)


class Fixture:
    def __init__(self, path: Path = FIXTURE):
        from safetensors.torch import load_file

        if not (path / "golden.json").is_file():
            raise FileNotFoundError(f"the fixture is missing: {path} (CI checks out ../shared beside the repository)")
        self.path = path
        golden = json.loads((path / "golden.json").read_text(encoding="utf-8"))
        self.golden = golden
        # chatglm3-tiny lists the prompt ids; glm4-tiny keeps them with each case's messages.
        self.prompts: List[List[int]] = golden.get("prompts") or [case["input_ids"] for case in golden["cases"]]
        self.steps: int = golden["steps"]
        self.greedy: List[List[int]] = [case["greedy_tokens"] for case in golden["cases"]]
        tensors = load_file(str(path / "golden.safetensors"))
        self.prefill = [tensors[f"prefill_logits_{i}"] for i in range(len(self.prompts))]
        self.decode = [tensors[f"decode_logits_{i}"] for i in range(len(self.prompts))]

    def engine(self, device: str = "cpu", dtype: str = "float32", rows: int = 4, weights_path: str = "",
               parameters: Optional[Dict[str, str]] = None) -> NativeEngine:
        options = EngineOptions(weights_path=weights_path or str(self.path), dtype=dtype, device=device, max_rows=rows,
                                context_needed=128, parameters=parameters or {})
        # glm4-tiny has its tokenizer.model: the production loader reads it; chatglm3-tiny has none.
        tokenizer = FixtureTokenizer() if self.path == FIXTURE else None
        return NativeEngine(options, tokenizer=tokenizer, sampling_seed=0)


def _diff(a: torch.Tensor, b: torch.Tensor) -> float:
    return float((a.float().cpu() - b.float()).abs().max())


def prefill_all_positions(engine: NativeEngine, slots: List[int], prompts: List[List[int]]) -> torch.Tensor:
    """Logits at every position of each prompt, all prompts in one padded batch ([B, T, V])."""
    order, rows, block = engine.cache.plan(slots)
    assert order == list(range(len(slots))), "fresh slots are packed in order"
    logits = engine.model.forward(engine.cache, rows, block, prompts, [0] * len(prompts), all_logits=True)
    for slot, prompt in zip(slots, prompts):
        engine.cache.advance(slot, len(prompt))
    return logits


def run_checks(fixture: Fixture, engine: NativeEngine) -> Dict[str, float]:
    """Max abs logit difference against THUDM's code for each way of running the fixture."""
    n = len(fixture.prompts)
    results: Dict[str, float] = {}

    # Alone: each prompt in its own forward pass (every position), then its decode steps one at a time.
    alone_prefill, alone_decode = 0.0, 0.0
    for i, prompt in enumerate(fixture.prompts):
        slot = engine.open_row()
        logits = prefill_all_positions(engine, [slot], [prompt])[0]
        alone_prefill = max(alone_prefill, _diff(logits, fixture.prefill[i]))
        alone_decode = max(alone_decode, _diff(logits[len(prompt) - 1], fixture.decode[i][0]))
        for s in range(1, fixture.steps):
            step = engine.decode_step([slot], [fixture.greedy[i][s - 1]])[0]
            alone_decode = max(alone_decode, _diff(step, fixture.decode[i][s]))
        engine.close_row(slot)
    results["alone_prefill"], results["alone_decode"] = alone_prefill, alone_decode

    # A padded batch: the four prompts (7 to 41 tokens) in one prefill, then every decode step for all four.
    slots = [engine.open_row() for _ in range(n)]
    logits = prefill_all_positions(engine, slots, fixture.prompts)
    batch_prefill = max(_diff(logits[i, :len(p)], fixture.prefill[i]) for i, p in enumerate(fixture.prompts))
    batch_decode = max(_diff(logits[i, len(p) - 1], fixture.decode[i][0]) for i, p in enumerate(fixture.prompts))
    for s in range(1, fixture.steps):
        step = engine.decode_step(slots, [fixture.greedy[i][s - 1] for i in range(n)])
        batch_decode = max(batch_decode, max(_diff(step[i], fixture.decode[i][s]) for i in range(n)))
    for slot in slots:
        engine.close_row(slot)
    results["padded_batch_prefill"], results["padded_batch_decode"] = batch_prefill, batch_decode

    results["join_mid_generation_decode"] = _join_mid_generation(fixture, engine)
    results["chunked_prefill_decode"] = _chunked_prefill(fixture, engine)
    results["mixed_step_with_chunks"] = _mixed_steps(fixture, engine)
    return results


def _join_mid_generation(fixture: Fixture, engine: NativeEngine) -> float:
    """Prompts 0 and 1 start; after 3 steps prompts 2 and 3 join through the engine's prefill while the others
    are mid-answer; prompt 1 ends early (its slot is freed and the last row is moved into it) and prompt 0 ends
    later; every logit along the way must match."""
    worst = 0.0
    step_of: Dict[int, int] = {}
    slots: Dict[int, int] = {}

    def admit(rows: List[int]) -> None:
        nonlocal worst
        for r in rows:
            slots[r] = engine.open_row()
        logits = engine.prefill([PrefillChunk(slots[r], fixture.prompts[r], 0, len(fixture.prompts[r])) for r in rows])
        for k, r in enumerate(rows):
            worst = max(worst, _diff(logits[k], fixture.decode[r][0]))
            step_of[r] = 1

    admit([0, 1])
    for _ in range(3):
        worst = max(worst, _step(fixture, engine, slots, step_of))
    admit([2, 3])
    while slots:
        for r in [r for r in slots if step_of[r] >= fixture.steps or (r == 1 and step_of[r] >= 6)]:
            engine.close_row(slots.pop(r))
        if slots:
            worst = max(worst, _step(fixture, engine, slots, step_of))
    return worst


def _step(fixture: Fixture, engine: NativeEngine, slots: Dict[int, int], step_of: Dict[int, int]) -> float:
    """One teacher-forced decode step for every row in `slots`; the worst difference of that step."""
    rows = list(slots)
    logits = engine.decode_step([slots[r] for r in rows], [fixture.greedy[r][step_of[r] - 1] for r in rows])
    worst = max(_diff(logits[k], fixture.decode[r][step_of[r]]) for k, r in enumerate(rows))
    for r in rows:
        step_of[r] += 1
    return worst


def _chunked_prefill(fixture: Fixture, engine: NativeEngine, chunk: int = 16) -> float:
    """The longest prompt (41 tokens; glm4-tiny: 53) in chunks of 16 while prompt 0 decodes, as a small prefill budget does."""
    long_row, worst = len(fixture.prompts) - 1, 0.0
    other = engine.open_row()
    first = engine.prefill([PrefillChunk(other, fixture.prompts[0], 0, len(fixture.prompts[0]))])
    worst = max(worst, _diff(first[0], fixture.decode[0][0]))
    slot, prompt, start, step = engine.open_row(), fixture.prompts[long_row], 0, 1
    while start < len(prompt):
        stop = min(len(prompt), start + chunk)
        logits = engine.prefill([PrefillChunk(slot, prompt, start, stop)])
        start = stop
        worst = max(worst, _diff(engine.decode_step([other], [fixture.greedy[0][step - 1]])[0], fixture.decode[0][step]))
        step += 1
    worst = max(worst, _diff(logits[0], fixture.decode[long_row][0]))
    for s in range(1, fixture.steps):
        out = engine.decode_step([slot], [fixture.greedy[long_row][s - 1]])[0]
        worst = max(worst, _diff(out, fixture.decode[long_row][s]))
    engine.close_row(slot)
    engine.close_row(other)
    return worst


def _mixed_steps(fixture: Fixture, engine: NativeEngine, chunk: int = 16) -> float:
    """Chunks in the decode step's own forward pass (step_with_chunks), as the continuous scheduler runs them
    while rows decode: prompts 0 and 2 decode while the longest prompt is prefilled in chunks of 16, its row
    between theirs in the cache (inside the step's bucket); then prompt 1 joins whole in one more mixed pass
    while those three decode, and every row decodes to the end. Every logit along the way must match."""
    long_row, worst = len(fixture.prompts) - 1, 0.0
    chunk = min(chunk, engine.prefill_chunk - 4)  # with the step's bucket of 4 rows, within one prefill forward
    slots: Dict[int, int] = {0: engine.open_row()}
    long_slot = engine.open_row()
    slots[2] = engine.open_row()
    step_of = {0: 1, 2: 1}
    first = engine.prefill([PrefillChunk(slots[r], fixture.prompts[r], 0, len(fixture.prompts[r])) for r in (0, 2)])
    worst = max(_diff(first[0], fixture.decode[0][0]), _diff(first[1], fixture.decode[2][0]))

    def mixed(chunks: List[PrefillChunk]) -> torch.Tensor:
        nonlocal worst
        rows = list(slots)
        out = engine.step_with_chunks(chunks, [slots[r] for r in rows], [fixture.greedy[r][step_of[r] - 1] for r in rows])
        assert out is not None, "the chunks fit one forward pass"
        chunk_logits, step_logits = out
        worst = max(worst, max(_diff(step_logits[k], fixture.decode[r][step_of[r]]) for k, r in enumerate(rows)))
        for r in rows:
            step_of[r] += 1
        return chunk_logits

    prompt, start = fixture.prompts[long_row], 0
    while start < len(prompt):
        stop = min(len(prompt), start + chunk)
        chunk_logits = mixed([PrefillChunk(long_slot, prompt, start, stop)])
        assert chunk_logits.shape[0] == (1 if stop == len(prompt) else 0)
        start = stop
    worst = max(worst, _diff(chunk_logits[0], fixture.decode[long_row][0]))
    slots[long_row], step_of[long_row] = long_slot, 1
    joining = engine.open_row()
    chunk_logits = mixed([PrefillChunk(joining, fixture.prompts[1], 0, len(fixture.prompts[1]))])
    worst = max(worst, _diff(chunk_logits[0], fixture.decode[1][0]))
    slots[1], step_of[1] = joining, 1
    while slots:
        for r in [r for r in slots if step_of[r] >= fixture.steps]:
            engine.close_row(slots.pop(r))
        if slots:
            worst = max(worst, _step(fixture, engine, slots, step_of))
    return worst
