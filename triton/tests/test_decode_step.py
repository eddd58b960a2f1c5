"""The decode step, counted on CPU: at most one host synchronisation per step (the readback of the sampled ids),
shapes that depend only on the row bucket and the key window (so CUDA can capture it), rows outside the step
untouched, the SDPA branch against the fixture, and the scheduler's one token per iteration for every running
row while a 4,000-token prompt is admitted."""
import math
import threading

import pytest
import torch
import torch.nn.functional as F

from chatglm.engine.decode_step import key_windows, row_buckets
from chatglm.engine.generation import INVALID_TOKEN, RowSettings, SamplingTensors, TokenPresence, sample_tokens
from chatglm.engine.types import PrefillChunk
from chatglm.model import forward
from chatglm.model.kv_cache import cache_positions
from fixture_check import Fixture, run_checks
from harness import load_model, make_request, outcome_of, run, wait_for_finals
from sync_counter import HostSyncCounter
from tiny_engine import TinyEngine

# greedy; temperature with top-k and a repetition penalty; temperature with top-p and a seed
SETTINGS = [RowSettings(0.0, 1.0, 64), RowSettings(0.8, 1.0, 64, top_k=20, repetition_penalty=1.2),
            RowSettings(0.7, 0.8, 64, seed=5)]


@pytest.fixture(scope="module")
def fixture():
    try:
        return Fixture()
    except FileNotFoundError as exc:
        pytest.fail(str(exc))


def _engine_with_rows(fixture, lengths):
    engine = fixture.engine(rows=4)
    slots = [engine.open_row() for _ in lengths]
    prompt = fixture.prompts[3]
    engine.prefill([PrefillChunk(s, prompt, 0, n) for s, n in zip(slots, lengths)])
    return engine, slots


def _counted_steps(engine, slots, steps, sampler):
    """`steps` decode steps, each sampled as the continuous scheduler does (chatglm.serving.continuous_scheduler
    ._sample_and_take: SamplingTensors from the host, the seen-token mask, sample_tokens, the pinned readback),
    or read back with a host-side check instead ("host": what the counter must see)."""
    tokens = [7] * len(slots)
    presence = TokenPresence(engine.cache.rows, engine.config.padded_vocab_size, engine.device)
    with HostSyncCounter([engine.readback.buffer]) as counter:
        for step in range(steps):
            logits = engine.decode_step(slots, tokens)
            if sampler == "device":
                params = SamplingTensors.build(SETTINGS, [step] * len(slots), logits.device, [1, 2, 3])
                index = torch.tensor(slots, dtype=torch.long).to(logits.device, non_blocking=True)
                ids = sample_tokens(logits, params, presence.rows(index))
                presence.add(index, ids)
                tokens = engine.readback.start(ids).wait()
            else:
                assert bool(torch.isfinite(logits).all())
                tokens = logits.argmax(-1).tolist()
    return counter


def test_a_decode_step_with_device_sampling_waits_on_the_host_once(fixture):
    engine, slots = _engine_with_rows(fixture, [5, 17, 33])
    counter = _counted_steps(engine, slots, 6, "device")
    assert counter.syncs == ["device-to-host copy"] * 6, counter.syncs  # greedy, top-k + penalty, top-p rows


def test_the_host_sync_counter_sees_what_a_host_side_sampler_waits_for(fixture):
    """The counter is not blind: a finite check on the host (item) and tolist of device ids are counted."""
    engine, slots = _engine_with_rows(fixture, [5, 17, 33])
    counter = _counted_steps(engine, slots, 3, "host")
    assert counter.syncs.count("_local_scalar_dense") == 3 and counter.syncs.count("tolist()") == 3, counter.syncs


def _shapes_of_a_step(fixture, lengths):
    engine, slots = _engine_with_rows(fixture, lengths)
    seen = []

    class Shapes(HostSyncCounter):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            seen.append((str(func), tuple(tuple(t.shape) for t in (out if isinstance(out, (tuple, list)) else [out])
                                         if isinstance(t, torch.Tensor))))
            return out

    with Shapes([engine.readback.buffer]):
        engine.decode_step(slots, [7] * len(slots))
    return seen


def test_a_decode_steps_shapes_depend_on_the_bucket_not_on_the_rows_lengths(fixture):
    short, longer = _shapes_of_a_step(fixture, [3, 9, 4]), _shapes_of_a_step(fixture, [40, 21, 30])
    assert short == longer and len(short) > 50


def test_buckets_and_windows():
    assert row_buckets(8) == [1, 2, 4, 8] and row_buckets(16) == [1, 2, 4, 8, 16] and row_buckets(12) == [1, 2, 4, 8, 12]
    assert row_buckets(1) == [1]
    assert key_windows(8208) == [256, 512, 1024, 2048, 4096, 8192, 8208] and key_windows(144) == [144]
    assert cache_positions(8192) == 8208 and cache_positions(128) == 144 and cache_positions(15) == 16


def test_rows_outside_the_step_keep_their_cache(fixture):
    """Three rows in a bucket of 4: the middle one (still in its prompt) and the free fourth are not written."""
    engine, slots = _engine_with_rows(fixture, [5, 17, 33])
    cache = engine.cache
    before_keys, before_values = cache.keys.clone(), cache.values.clone()
    engine.decode_step([slots[0], slots[2]], [7, 8])
    real = slice(0, cache.context)  # every position but the scratch one, which rows outside the step write to
    changed = ((cache.keys[:, :, :, real] != before_keys[:, :, :, real]).flatten(2).any(-1)
               | (cache.values[:, :, :, real] != before_values[:, :, :, real]).flatten(2).any(-1))
    middle, free = cache.row_of(slots[1]), 3
    assert not changed[:, middle].any() and not changed[:, free].any()
    for slot, position in ((slots[0], 5), (slots[2], 33)):
        row = cache.row_of(slot)
        assert changed[:, row].all()
        assert (cache.keys[:, row, :, position] != before_keys[:, row, :, position]).any()
        others = [p for p in range(cache.context) if p != position]
        assert torch.equal(cache.keys[:, row, :, others], before_keys[:, row, :, others])


def test_the_static_step_gives_the_padded_forwards_logits(fixture):
    """The static-shape step against the general forward (one token per row, padded layout) on the same cache."""
    engine, slots = _engine_with_rows(fixture, [5, 17, 33])
    snapshot = engine.cache.keys.clone(), engine.cache.values.clone()
    static = engine.decode_step(slots, [7, 8, 9]).clone()
    engine.cache.keys.copy_(snapshot[0])
    engine.cache.values.copy_(snapshot[1])
    order, rows, block = engine.cache.plan(slots)
    general = engine.model.forward(engine.cache, rows, block, [[7], [8], [9]], [5, 17, 33])
    assert float((static - general).abs().max()) < 1e-5


def _reference_sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None):
    """torch's documented reference of scaled_dot_product_attention (its docs), for torch 1.13, which lacks it."""
    assert dropout_p == 0.0 and not is_causal
    factor = 1.0 / math.sqrt(query.shape[-1]) if scale is None else scale
    bias = torch.zeros(query.shape[-2], key.shape[-2], dtype=query.dtype, device=query.device)
    if attn_mask is not None:
        bias = bias.masked_fill(~attn_mask, float("-inf")) if attn_mask.dtype == torch.bool else attn_mask + bias
    weights = torch.softmax(query @ key.transpose(-2, -1) * factor + bias, dim=-1)
    return weights @ value


def test_the_sdpa_branch_holds_the_fixtures_logits(fixture, monkeypatch):
    """The production attention path (torch 2.x): alone, batched, joining and chunked within 1e-4."""
    monkeypatch.setattr(F, "scaled_dot_product_attention", _reference_sdpa, raising=False)
    monkeypatch.setattr(forward, "HAS_SDPA", True)
    engine = fixture.engine()
    assert engine.model.attend is forward.attend_sdpa and engine.model.attend_step is forward.attend_step_sdpa
    checks = run_checks(fixture, engine)
    assert max(checks.values()) < 1e-4, checks


class RecordingEngine(TinyEngine):
    """The tiny engine that records every forward pass: ("prefill", [(slot, tokens)]), ("decode", slots) or
    ("mixed", [(slot, tokens)], slots): chunks and a decode step in one pass."""

    calls = []

    def prefill(self, chunks):
        RecordingEngine.calls.append(("prefill", [(c.slot, c.stop - c.start) for c in chunks]))
        return super().prefill(chunks)

    def decode_step(self, slots, tokens):
        RecordingEngine.calls.append(("decode", list(slots)))
        return super().decode_step(slots, tokens)

    def step_with_chunks(self, chunks, slots, tokens):
        out = super().step_with_chunks(chunks, slots, tokens)
        if out is not None:  # None: the scheduler runs prefill and decode_step instead (recorded there)
            RecordingEngine.calls.append(("mixed", [(c.slot, c.stop - c.start) for c in chunks], list(slots)))
        return out


def test_every_running_row_gets_a_token_each_iteration_while_a_4000_token_prompt_is_admitted(monkeypatch):
    monkeypatch.setenv("TINY_ENGINE_STEP_DELAY_MS", "1")
    RecordingEngine.calls = []
    m = load_model(engine="test_decode_step:RecordingEngine", max_active_rows="4", max_input_tokens="4200",
                   max_new_tokens_limit="1600", prefill_token_budget="2048")
    try:
        # Long enough to outlast the admission: on this CPU engine the sizer keeps chunks small (tens of tokens).
        runners = [make_request(f"runner {i}", temperature=0.0, max_new_tokens=1500) for i in range(2)]
        m.execute(runners)
        pause = threading.Event()
        while not all(len(r.sender.responses) >= 3 for r in runners):
            pause.wait(0.002)
        long = make_request("x" * 4000, temperature=0.0, max_new_tokens=4)
        m.execute([long])
        wait_for_finals(runners + [long])
    finally:
        m.finalize()
    assert all(outcome_of(r).completion_tokens == 1500 for r in runners) and outcome_of(long).completion_tokens == 4
    calls = RecordingEngine.calls
    runner_slots, long_slot = {0, 1}, 2  # slots are handed out lowest first
    admission = [i for i, (kind, *part) in enumerate(calls) if kind != "decode" and any(s == long_slot for s, _ in part[0])]
    chunks = [n for i in admission for s, n in calls[i][1] if s == long_slot]
    assert sum(chunks) > 4000 and len(chunks) >= 2, chunks
    # Each chunk ran in the same forward pass as a decode step of every running row, one pass per iteration:
    # mixed, mixed, mixed... with nothing in between.
    for i in admission:
        kind, _, slots = calls[i]
        assert kind == "mixed" and runner_slots <= set(slots), (i, calls[i])
    assert admission == list(range(admission[0], admission[-1] + 1)), admission
    # While rows decode the sizer starts with at most a probe chunk and at most doubles it from one iteration to the
    # next (the last chunk is what is left of the prompt).
    from chatglm.serving.chunk_sizer import ChunkSizer

    assert chunks[0] <= ChunkSizer.PROBE_TOKENS and all(b <= 2 * a for a, b in zip(chunks, chunks[1:-1])), chunks


def test_bad_cuda_graphs_and_stall_target_settings_fail_the_load():
    from chatglm.serving.options import ServingOptions

    with pytest.raises(ValueError, match="cuda_graphs must be one of auto, off"):
        load_model(cuda_graphs="sometimes")
    with pytest.raises(ValueError, match="prefill_stall_target must be a number from 1.5 to 100"):
        ServingOptions.from_parameters({"prefill_stall_target": "1"}, 8)
    assert ServingOptions.from_parameters({"prefill_stall_target": "off"}, 8).prefill_stall_target is None
    assert ServingOptions.from_parameters({}, 8).prefill_stall_target == 2.0


def test_a_row_the_sampler_marks_invalid_ends_alone(monkeypatch):
    """The sampler's -1 (no valid distribution for that row's settings) ends that request; the others go on."""
    from chatglm.serving import continuous_scheduler

    real = continuous_scheduler.SAMPLER

    def marking(scores, params, seen):
        ids = real(scores, params, seen)
        marked = (params.temperature - 0.5).abs() < 1e-6
        return torch.where(marked, torch.full_like(ids, INVALID_TOKEN), ids)

    alone_model = load_model()
    try:
        alone = run(alone_model, [make_request("bystander", temperature=0.0, max_new_tokens=20)])[0]
    finally:
        alone_model.finalize()
    monkeypatch.setattr(continuous_scheduler, "SAMPLER", marking)
    m = load_model()
    try:
        bad, bystander = run(m, [make_request("hostile", temperature=0.5, max_new_tokens=20),
                                            make_request("bystander", temperature=0.0, max_new_tokens=20)])
    finally:
        m.finalize()
    assert bad.finals == 1 and bad.error is not None and "sampling failed" in bad.error.message()
    assert bystander.error is None and bystander.text == alone.text and bystander.completion_tokens == 20


def test_a_chunk_that_does_not_end_its_prompt_skips_the_output_layer(fixture):
    engine = fixture.engine(rows=4)
    done, partial = engine.open_row(), engine.open_row()
    prompt = fixture.prompts[3]
    seen = []

    class Matmuls(HostSyncCounter):
        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            if "mm" in str(func):
                seen.append(tuple(a.shape for a in args if isinstance(a, torch.Tensor)))
            return func(*args, **(kwargs or {}))

    with Matmuls():
        logits = engine.prefill([PrefillChunk(done, fixture.prompts[0], 0, len(fixture.prompts[0])),
                                 PrefillChunk(partial, prompt, 0, 16)])
    assert float((logits[0] - fixture.decode[0][0]).abs().max()) < 1e-4
    assert torch.count_nonzero(logits[1]) == 0
    vocab = engine.model.output.shape[0]
    assert sum(1 for shapes in seen if any(vocab in s for s in shapes)) == 1 and [1, 64] in [list(s) for shapes in seen for s in shapes]


def test_a_failed_capture_leaves_eager_steps_and_says_so_once(fixture):
    """Capture cannot run here (no CUDA): the fallback path keeps the eager step, with one log line."""
    import triton_python_backend_utils as pb

    engine, slots = _engine_with_rows(fixture, [5, 17, 33])
    before = len(pb.Logger.records)
    engine.decoder._capture_all()
    lines = [m for _, m in pb.Logger.records[before:]]
    assert len(lines) == 1 and "cuda_graphs: capture failed, decode steps run eagerly" in lines[0]
    assert engine.decoder.graphs == [] and engine.decoder.graph_note.startswith("eager (CUDA graph capture failed")
    logits = engine.decode_step(slots, [7, 8, 9])
    assert logits.shape == (3, engine.model.output.shape[0]) and torch.isfinite(logits).all()
