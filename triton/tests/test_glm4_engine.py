"""GLM-4 specifics of the native engine on the glm4-tiny fixture: the output layer runs only where a token is
sampled (151,552 logits a position at full size), `dtype: auto`, and a row whose logits overflow fails alone with
a clear error (GLM-4 is a bfloat16 model; in float16 its activations can overflow), never as text."""
import pytest
import torch

from chatglm.engine.generation import FINISH_FAILED, RowSettings
from chatglm.engine.native import resolve_dtype
from chatglm.engine.overflow import OVERFLOW_TOKEN, mark_overflow
from chatglm.engine.types import PrefillChunk
from fixture_check import GLM4_FIXTURE, Fixture


class Observer:
    def __init__(self):
        self.finished = {}

    def on_token(self, row, token_id):
        pass

    def cancelled(self, rows):
        return [False] * len(rows)

    def on_finished(self, row, result):
        self.finished[row] = result


@pytest.fixture()
def fixture():
    return Fixture(GLM4_FIXTURE)


def test_prefill_runs_the_output_layer_only_for_completed_prompts(fixture):
    engine = fixture.engine()
    rows_seen = []
    logits_of = engine.model._logits
    engine.model._logits = lambda x: (rows_seen.append(x.shape[0]), logits_of(x))[1]
    prompt = fixture.prompts[3]  # 53 tokens in chunks of 16: four forwards, one sampled position
    slot, start = engine.open_row(), 0
    while start < len(prompt):
        stop = min(len(prompt), start + 16)
        engine.prefill([PrefillChunk(slot, prompt, start, stop)])
        start = stop
    assert rows_seen == [1]
    others = [engine.open_row() for _ in range(3)]
    engine.prefill([PrefillChunk(s, p, 0, len(p)) for s, p in zip(others, fixture.prompts[:3])])
    assert rows_seen == [1, 3]  # 81 prompt positions, 3 rows of logits


def test_dtype_auto_is_float32_on_the_cpu_and_names_are_checked():
    assert resolve_dtype("auto", torch.device("cpu")) == torch.float32
    assert resolve_dtype("bf16", torch.device("cpu")) == torch.bfloat16
    with pytest.raises(ValueError, match="dtype must be auto or one of"):
        resolve_dtype("int4", torch.device("cpu"))


def test_mark_overflow_marks_only_non_finite_rows():
    logits = torch.tensor([[0.0, 1.0], [float("nan"), 1.0], [float("inf"), 0.0]])
    assert mark_overflow(logits, torch.tensor([1, 1, 0])).tolist() == [1, OVERFLOW_TOKEN, OVERFLOW_TOKEN]


def test_an_overflowing_row_fails_alone_with_a_clear_error(fixture):
    """Token 700 (a padding row of the vocabulary) gets an infinite embedding: a prompt holding it overflows, the
    other rows of the same batch are untouched and still reproduce THUDM's tokens."""
    engine = fixture.engine()
    assert engine.fails_on_overflow  # GLM-4's tokenizer: no fallback token
    engine.model.embedding[700] = float("inf")
    golden = fixture.golden["cases"]
    prompts = [fixture.prompts[0], fixture.prompts[2][:-1] + [700, fixture.prompts[2][-1]], fixture.prompts[1]]
    settings = [RowSettings(temperature=0.0, top_p=1.0, max_new_tokens=8) for _ in prompts]
    observer = Observer()
    results = engine.generate(prompts, settings, observer)
    assert results[1].finish_reason == FINISH_FAILED and results[1].token_ids == []
    error = observer.finished[1].error  # what the client is told
    assert "overflowed in float32" in error and "bfloat16" in error
    assert results[0].token_ids == golden[0]["generate_tokens"][:8]
    assert results[2].token_ids == golden[1]["generate_tokens"][:8]


def test_chatglm3_keeps_its_fallback_token():
    from fixture_check import Fixture as ChatGLM3Fixture

    assert not ChatGLM3Fixture().engine().fails_on_overflow


from tiny_engine import TinyEngine  # noqa: E402


class OverflowEngine(TinyEngine):
    """The tiny engine as GLM-4 behaves: no fallback token; a prompt holding "OVERFLOW" gets NaN logits."""

    def __init__(self, options=None):
        super().__init__(options)
        self.fails_on_overflow = True

    def prefill(self, chunks):
        logits = super().prefill(chunks)
        marker = self.tokenizer.encode("OVERFLOW")
        for k, chunk in enumerate(chunks):
            ids = list(chunk.prompt)
            if any(ids[i:i + len(marker)] == marker for i in range(len(ids))):
                logits[k] = float("nan")
        return logits


def test_the_continuous_scheduler_fails_an_overflowing_row_alone():
    from harness import load_model, make_request, run

    model = load_model(engine="test_glm4_engine:OverflowEngine")
    try:
        bad, bystander = run(model, [make_request("OVERFLOW please", temperature=0.0, max_new_tokens=8),
                                     make_request("hello", temperature=0.0, max_new_tokens=8)])
    finally:
        model.finalize()
    assert bad.error is not None and "overflowed in float64" in bad.error.message() and not bad.text
    assert bystander.error is None and bystander.completion_tokens == 8


INT8_TOLERANCE = 0.25  # max abs logit difference of int8 weights (per-row absmax scales) from float32 on glm4-tiny,
# whose logits span about ±4 (std 0.9); measured 0.14. THUDM ships no int8 GLM-4 code to compare against (README).


def test_int8_quantization_handles_glm4_shapes_close_to_float(fixture):
    from fixture_check import run_checks

    engine = fixture.engine(parameters={"quantization": "int8"})
    assert engine.quantization == "int8" and engine.model.quantization.startswith("int8")
    checks = run_checks(fixture, engine)
    assert max(checks.values()) < INT8_TOLERANCE, checks
    assert min(checks.values()) > 1e-3, checks  # the weights really are quantized
