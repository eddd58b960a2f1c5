"""Faults stay with their request, under the pb_utils stand-in (model.py + continuous scheduler + tiny engine):
validation of the sampling inputs, per-request seeds, a failing detokenizer, out of memory in one row's prefill
chunk, and a device fault that stops the model (is_ready False, every later request refused with the cause)."""
import numpy as np
import pytest
import torch
import triton_python_backend_utils as pb

from harness import load_model, make_request, run
from tiny_engine import TinyEngine


def request(prompt, **inputs):
    """make_request, with the new inputs in their declared types (top_k INT64, repetition_penalty FP32, seed INT64)."""
    types = {"top_k": np.int64, "repetition_penalty": np.float32, "seed": np.int64, "temperature": np.float32,
             "top_p": np.float32}
    arrays = {k: np.array([[v]], dtype=types[k]) if k in types else v for k, v in inputs.items()}
    return make_request(prompt, **arrays)


@pytest.fixture
def model():
    m = load_model()
    yield m
    m.finalize()


def test_sampling_inputs_are_validated_and_non_finite_numbers_refused(model):
    cases = [
        (request("x", temperature=float("nan")), "input 'temperature' must be a finite number"),
        (request("x", temperature=float("inf")), "input 'temperature' must be a finite number"),
        (request("x", top_p=float("nan")), "input 'top_p' must be a finite number"),
        (request("x", top_p=float("-inf")), "input 'top_p' must be a finite number"),
        (request("x", repetition_penalty=float("nan")), "input 'repetition_penalty' must be a finite number"),
        (request("x", repetition_penalty=0.0), "input 'repetition_penalty' must be between 0.01 and 10"),
        (request("x", repetition_penalty=1e-38), "input 'repetition_penalty' must be between 0.01 and 10"),
        (request("x", repetition_penalty=0.0099), "input 'repetition_penalty' must be between 0.01 and 10"),
        (request("x", repetition_penalty=11.0), "input 'repetition_penalty' must be between 0.01 and 10"),
        (request("x", top_k=-1), "input 'top_k' must be >= 0"),
        (request("x", top_p=1e-30, temperature=-1.0), "input 'temperature' must be between 0 and 2"),
    ]
    good = request("fine", temperature=0.0, max_new_tokens=5)
    smallest = request("fine fine", temperature=1e-5, repetition_penalty=0.01, max_new_tokens=5)
    outs = run(model, [good, smallest] + [c[0] for c in cases])
    assert outs[0].error is None and outs[0].completion_tokens == 5
    assert outs[1].error is None and outs[1].completion_tokens == 5, outs[1].error  # the range's edge works
    outs = outs[1:]
    for (_, expected), out in zip(cases, outs[1:]):
        assert out.error is not None and out.error.code() == pb.TritonError.INVALID_ARG, expected
        assert expected in out.error.message(), (expected, out.error.message())


def test_temperatures_below_1e_5_are_greedy_and_tiny_top_p_keeps_the_top_token(model):
    greedy = run(model, [request("same question", temperature=0.0, max_new_tokens=20)])[0].text
    for change in (dict(temperature=1e-39), dict(temperature=1e-30), dict(temperature=9e-6),
                   dict(temperature=0.8, top_p=1e-30), dict(temperature=0.8, top_k=1)):
        out = run(model, [request("same question", max_new_tokens=20, **change)])[0]
        assert out.error is None and out.text == greedy, change


def test_a_seed_gives_the_same_answer_alone_and_in_any_batch(model):
    seeded = dict(temperature=1.0, top_p=0.95, top_k=40, repetition_penalty=1.1, seed=2024, max_new_tokens=24)
    alone = run(model, [request("tell me a story", **seeded)])[0].text
    batch = run(model, [request("other one", temperature=0.9, max_new_tokens=30), request("tell me a story", **seeded),
                        request("a third", temperature=0.0, max_new_tokens=10)])
    assert batch[1].text == alone != ""
    other_seed = run(model, [request("tell me a story", **dict(seeded, seed=7))])[0].text
    assert other_seed != alone


class DecodeFailsEngine(TinyEngine):
    """The detokenizer raises on a BEL byte (0x07), which only the scripted answer holds (random rows write
    printable text): that row's text cannot be produced."""

    def decode(self, ids):
        if 3 + 0x07 in [int(i) for i in ids]:
            raise UnicodeError("injected detokenizer failure")
        return super().decode(ids)


def test_a_detokenizer_failure_ends_only_its_request(tmp_path, monkeypatch):
    scripts = tmp_path / "scripts.json"
    scripts.write_text('[{"match": "ring the bell", "answer": "abc\\u0007def"}]')
    monkeypatch.setenv("TINY_ENGINE_SCRIPTS", str(scripts))
    m = load_model(engine="test_faults_standin:DecodeFailsEngine")
    try:
        alone = run(m, [request("bystander", temperature=0.0, max_new_tokens=30)])[0].text
        outs = run(m, [request("bystander", temperature=0.0, max_new_tokens=30), request("ring the bell", max_new_tokens=30)])
    finally:
        m.finalize()
    assert outs[0].error is None and outs[0].text == alone
    assert outs[1].error.code() == pb.TritonError.INTERNAL
    assert "could not turn the answer's tokens into text: injected detokenizer failure" in outs[1].error.message()


def test_out_of_memory_in_one_row_s_prefill_chunk_fails_that_row_only(monkeypatch):
    monkeypatch.setenv("TINY_ENGINE_OOM_MARKER", "HUGE-PROMPT")
    m = load_model()
    try:
        alone = [run(m, [request(f"neighbour {i}", temperature=0.0, max_new_tokens=15)])[0].text for i in range(2)]
        # admitted in the same iteration: one prefill of three chunks runs out of memory, then each alone
        outs = run(m, [request("neighbour 0", temperature=0.0, max_new_tokens=15), request("HUGE-PROMPT here"),
                       request("neighbour 1", temperature=0.0, max_new_tokens=15)])
    finally:
        m.finalize()
    assert [outs[0].text, outs[2].text] == alone and outs[0].error is None
    assert outs[1].error.code() == pb.TritonError.INTERNAL
    assert outs[1].error.message().startswith("out of memory while reading the prompt")


def test_out_of_memory_in_a_decode_step_runs_the_step_again_and_no_row_fails(monkeypatch):
    monkeypatch.setenv("TINY_ENGINE_DECODE_OOM_MARKER", "TIGHT")
    m = load_model()
    try:
        alone = [run(m, [request(p, temperature=0.0, max_new_tokens=15)])[0].text for p in ("neighbour", "TIGHT fit")]
        outs = run(m, [request("neighbour", temperature=0.0, max_new_tokens=15),
                       request("TIGHT fit", temperature=0.0, max_new_tokens=15)])
    finally:
        m.finalize()
    assert [o.error for o in outs] == [None, None] and [o.text for o in outs] == alone
    warnings = [message for level, message in pb.Logger.records if level == pb.Logger.WARNING]
    assert any("out of memory in the decode step of 2 rows" in w for w in warnings), warnings[-5:]


def test_a_device_fault_stops_the_model_and_says_so(monkeypatch):
    monkeypatch.setenv("TINY_ENGINE_DEVICE_FAULT_MARKER", "POISON")
    m = load_model()
    try:
        assert m.is_ready()
        outs = run(m, [request("bystander", max_new_tokens=50), request("POISON it", max_new_tokens=50)])
        later = run(m, [request("anyone there?", max_new_tokens=5)])[0]
        assert not m.is_ready()
    finally:
        m.finalize()
    for out in outs + [later]:
        assert out.error.code() == pb.TritonError.UNAVAILABLE and out.finals == 1
        assert out.error.message().startswith("the model failed: CUDA error: an illegal memory access")
        assert "reload it" in out.error.message()
    assert pb.MetricFamily.total("chatglm3_model_failed") >= 1


def test_the_sampler_s_invalid_row_fails_alone(monkeypatch):
    monkeypatch.setenv("TINY_ENGINE_OVERFLOW_MARKER", "OVERFLOW")
    m = load_model()
    try:
        alone = run(m, [request("steady", temperature=0.0, max_new_tokens=12)])[0].text
        outs = run(m, [request("steady", temperature=0.0, max_new_tokens=12), request("OVERFLOW me", temperature=0.5),
                       request("OVERFLOW greedy", temperature=0.0, max_new_tokens=4)])
    finally:
        m.finalize()
    assert outs[0].text == alone and outs[0].error is None
    assert outs[1].error.code() == pb.TritonError.INTERNAL and "sampling failed" in outs[1].error.message()
    assert outs[2].error is None  # greedy needs no division: argmax of finite logits is fine


def test_hf_style_engines_keep_the_per_row_warper():
    """The HF engine's logits processor (RowWarper) takes the new settings too."""
    from chatglm.engine.generation import RowSettings, RowWarper, seen_from_ids

    scores = torch.tensor([[3.0, 2.0, 1.0, 0.5, -1.0]])
    warped = RowWarper([RowSettings(1.0, 1.0, 1, top_k=2)])(scores)
    assert torch.isfinite(warped[0]).tolist() == [True, True, False, False, False]
    penalized = RowWarper([RowSettings(1.0, 1.0, 1, repetition_penalty=2.0)])(scores, seen=seen_from_ids(torch.tensor([[0, 4]]), 5))
    assert penalized[0].tolist() == [1.5, 2.0, 1.0, 0.5, -2.0]


def test_the_top_k_default_comes_from_the_checkpoint_s_generation_config(tmp_path):
    (tmp_path / "generation_config.json").write_text('{"top_k": 7, "temperature": 0.8}')
    m = load_model(weights_path=str(tmp_path))
    try:
        assert m.limits.default_top_k == 7
    finally:
        m.finalize()
    m = load_model()  # the committed weights_path has no such file here: transformers' 50
    try:
        assert m.limits.default_top_k == 50
    finally:
        m.finalize()
