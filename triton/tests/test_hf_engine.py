"""The test-only HF engine's pieces (testing/hf_engine.py; no longer served: it needs remote code) inside the REAL
`generate` of transformers 4.40.2, on a tiny randomly initialised Llama (no download), plus ChatGLM3's prompt layout
with a tokenizer built for the test. And: the served factory refuses `engine: hf`."""
import json

import pytest
import torch

transformers = pytest.importorskip("transformers")
assert transformers.__version__ == "4.40.2", "the Dockerfile pins transformers 4.40.2; test the same version"

from transformers import LlamaConfig, LlamaForCausalLM  # noqa: E402

from chatglm.engine.types import EngineOptions  # noqa: E402
from chatglm.engine.generation import RowSettings  # noqa: E402
from hf_engine import HFEngine, carries_position_ids  # noqa: E402
from chatglm.serving.request import ChatRequest, Limits, plan_prompt  # noqa: E402
from tiny_engine import VOCAB_SIZE, TinyTokenizer  # noqa: E402


class Observer:
    def __init__(self, cancel_after=None):
        self.tokens, self.finished, self.events, self.cancel_after = {}, {}, [], cancel_after or {}

    def on_token(self, row, token):
        self.tokens.setdefault(row, []).append(token)
        self.events.append(row)

    def cancelled(self, rows):
        return [len(self.tokens.get(row, [])) >= self.cancel_after.get(row, 10**9) for row in rows]

    def on_finished(self, row, result):
        assert row not in self.finished, "one completion per row"
        self.finished[row] = result


class OutOfVocabStops(TinyTokenizer):
    """Stop ids the random model can never produce, so rows end only where a test makes them end."""

    eos_token_id = 1000

    def get_command(self, name):
        return {"<|user|>": 1001, "<|observation|>": 1002}.get(name) or super().get_command(name)


@pytest.fixture(scope="module")
def engine():
    torch.manual_seed(0)
    config = LlamaConfig(vocab_size=VOCAB_SIZE, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
                         pad_token_id=0, bos_token_id=1, eos_token_id=2)
    model = LlamaForCausalLM(config)
    return HFEngine(EngineOptions("", "float32", "cpu"), model=model, tokenizer=OutOfVocabStops())


PROMPTS = [[5, 6, 7, 8, 9, 10, 11], [20, 21], [30, 31, 32, 33]]


def generate(engine, prompts, settings, observer=None):
    observer = observer or Observer()
    results = engine.generate(prompts, settings, observer)
    return results, observer


def test_batched_greedy_equals_single_and_streams_every_step(engine):
    settings = [RowSettings(0.0, 1.0, 12)] * 3
    batch, obs = generate(engine, PROMPTS, settings)
    single = [generate(engine, [p], settings[:1])[0][0] for p in PROMPTS]
    assert [r.token_ids for r in batch] == [r.token_ids for r in single]
    assert all(len(r.token_ids) == 12 and r.finish_reason == "length" for r in batch)
    assert obs.events[:6] == [0, 1, 2, 0, 1, 2]  # one token per row per decode step, as generated
    assert {row: r.token_ids for row, r in obs.finished.items()} == {i: batch[i].token_ids for i in range(3)}


def test_per_row_length_sampling_stop_and_cancellation(engine):
    greedy, _ = generate(engine, [PROMPTS[0]], [RowSettings(0.0, 1.0, 20)])
    tokens = greedy[0].token_ids
    stop_token = next(t for i, t in enumerate(tokens) if i >= 3 and t not in tokens[:i])
    engine_stops = engine.stop_ids
    engine.stop_ids = engine_stops + (stop_token,)
    try:
        results, obs = generate(engine, [PROMPTS[0], PROMPTS[1], PROMPTS[2], PROMPTS[1]], [
            RowSettings(0.0, 1.0, 20),  # greedy: stops at stop_token
            RowSettings(1.3, 0.9, 5),  # sampled, own max_new_tokens
            RowSettings(0.0, 1.0, 20),  # cancelled after 4 tokens
            RowSettings(0.7, 1.0, 9),
        ], Observer(cancel_after={2: 4}))
    finally:
        engine.stop_ids = engine_stops
    assert [r.finish_reason for r in results] == ["stop", "length", "cancelled", "length"]
    assert results[0].token_ids == tokens[:tokens.index(stop_token)]
    assert len(results[1].token_ids) == 5 and len(results[3].token_ids) == 9
    assert len(results[2].token_ids) == 4
    assert set(obs.finished) == {0, 1, 2, 3}


def test_generate_ends_when_every_row_is_cancelled(engine):
    calls = []
    handle = engine.model.register_forward_hook(lambda *_: calls.append(1))
    try:
        results, _ = generate(engine, PROMPTS[:2], [RowSettings(0.0, 1.0, 200)] * 2, Observer(cancel_after={0: 2, 1: 3}))
    finally:
        handle.remove()
    assert [r.finish_reason for r in results] == ["cancelled", "cancelled"]
    assert len(calls) == 3  # stopped right after the last open row was cancelled, not at 200 tokens


def test_rows_cancelled_before_start_skip_generation(engine):
    class Gone(Observer):
        def cancelled(self, rows):
            return [True] * len(rows)

    calls = []
    handle = engine.model.register_forward_hook(lambda *_: calls.append(1))
    try:
        results, _ = generate(engine, PROMPTS[:2], [RowSettings(0.0, 1.0, 5)] * 2, Gone())
    finally:
        handle.remove()
    assert [r.finish_reason for r in results] == ["cancelled", "cancelled"] and not calls


def test_nan_logits_are_guarded_per_row(engine):
    step = {"n": 0}

    def poison(_module, _inputs, output):
        step["n"] += 1
        if step["n"] == 3:
            output.logits[0, -1, :] = float("nan")
        return output

    handle = engine.model.register_forward_hook(poison)
    try:
        results, _ = generate(engine, PROMPTS[:2], [RowSettings(0.8, 0.9, 6)] * 2)
    finally:
        handle.remove()
    assert results[0].token_ids[2] == 5  # ChatGLM's InvalidScoreLogitsProcessor token
    assert len(results[1].token_ids) == 6


class ChatGLMLikeTokenizer:
    """Mimics ChatGLM3's remote tokenizer API with its real special ids (reference 8.2/8.4); text → byte ids."""

    eos_token_id = 2
    special = {"[MASK]": 64789, "[gMASK]": 64790, "[sMASK]": 64791, "sop": 64792, "eop": 64793,
               "<|system|>": 64794, "<|user|>": 64795, "<|assistant|>": 64796, "<|observation|>": 64797}

    def get_command(self, name):
        return self.special[name]

    def get_prefix_tokens(self):
        return [self.special["[gMASK]"], self.special["sop"]]

    def encode(self, text):
        return [1000 + b for b in text.encode()]

    def build_single_message(self, role, metadata, message):
        assert role in ("system", "user", "assistant", "observation")
        return [self.get_command(f"<|{role}|>")] + self.encode(f"{metadata}\n") + self.encode(message)

    def decode(self, ids):
        return bytes(i - 1000 for i in ids if i >= 1000).decode("utf-8", "replace")


class RecordingModel(torch.nn.Module):
    """Records what `generate` is called with; generates nothing."""

    def generate(self, **kwargs):
        self.kwargs = kwargs


class ExtendsPositions(RecordingModel):
    """Like ChatGLM3's remote code: its own per-step update appends a position to the passed position_ids."""

    def _update_model_kwargs_for_generation(self, outputs, model_kwargs, **kwargs):
        return model_kwargs


def test_position_ids_are_passed_only_to_a_model_that_carries_them_from_step_to_step(engine):
    # Llama keeps transformers' own update, which leaves position_ids as passed: a fixed copy breaks step two.
    assert not carries_position_ids(engine.model)
    assert carries_position_ids(ExtendsPositions())
    prompts = [[5, 6, 7], [20, 21]]
    settings = [RowSettings(temperature=0.0, top_p=1.0, max_new_tokens=2)] * 2
    for model, passed in ((RecordingModel(), False), (ExtendsPositions(), True)):
        HFEngine(EngineOptions("", "float32", "cpu"), model=model, tokenizer=OutOfVocabStops()).generate(prompts, settings, Observer())
        assert ("position_ids" in model.kwargs) is passed
        if passed:  # the left-padded row's positions start at 0 on its first real token
            assert model.kwargs["position_ids"].tolist() == [[0, 1, 2], [0, 0, 1]]


def test_chatglm3_prompt_layout_and_stop_ids():
    tok = ChatGLMLikeTokenizer()
    eng = HFEngine(EngineOptions("", "float16", "cpu"), model=torch.nn.Linear(1, 1), tokenizer=tok)
    assert eng.stop_ids == (2, 64795, 64797)
    tools = [{"name": "get_weather", "parameters": {"city": "string"}}]
    history = [{"role": "system", "content": "S", "tools": tools}, {"role": "user", "content": "Q1"},
               {"role": "assistant", "metadata": "get_weather", "content": "call"},
               {"role": "observation", "content": "{\"t\": 3}"}, {"role": "assistant", "content": "A1"}]
    plan = plan_prompt(eng, ChatRequest("Q2", history, 0.8, 0.8, 8), Limits())
    e = tok.encode
    expected = ([64790, 64792]
                + [64794] + e("\n") + e("S\n" + json.dumps(tools, indent=4, ensure_ascii=False))
                + [64795] + e("\n") + e("Q1")
                + [64796] + e("get_weather\n") + e("call")
                + [64797] + e("\n") + e("{\"t\": 3}")
                + [64796] + e("\n") + e("A1")
                + [64795] + e("\n") + e("Q2")
                + [64796])
    assert plan.ids == expected and plan.trimmed == 0


class TinyLlamaHFEngine(HFEngine):
    """The HF engine on the tiny Llama, as a model.py plug-in (`test_hf_engine:TinyLlamaHFEngine`)."""

    def __init__(self, options):
        torch.manual_seed(0)
        config = LlamaConfig(vocab_size=VOCAB_SIZE, hidden_size=64, intermediate_size=128, num_hidden_layers=2,
                             num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=2048,
                             pad_token_id=0, bos_token_id=1, eos_token_id=2)
        super().__init__(options, model=LlamaForCausalLM(config), tokenizer=TinyTokenizer())
        self.stop_ids = (1000, 1001, 1002)  # the random model runs every row to its own length


def test_model_py_serves_the_hf_engine_with_the_per_execute_scheduler():
    from harness import load_model, make_request, run

    with pytest.raises(ValueError, match="scheduler 'continuous' needs an engine that decodes step by step"):
        load_model(engine="test_hf_engine:TinyLlamaHFEngine", scheduler="continuous")
    model = load_model(engine="test_hf_engine:TinyLlamaHFEngine", scheduler="per_execute")  # what the renderer writes
    try:
        assert not model.continuous
        outs = run(model, [make_request("hello", temperature=0.0, max_new_tokens=6),
                           make_request("again", temperature=0.0, max_new_tokens=4)])
    finally:
        model.finalize()
    assert [o.completion_tokens for o in outs] == [6, 4] and all(o.finals == 1 and o.error is None for o in outs)


def test_the_factory_refuses_the_hf_engine():
    from chatglm.engine.factory import load_engine

    with pytest.raises(ValueError, match="engine 'hf' is no longer served: it ran Python files from the weights folder"):
        load_engine("hf", EngineOptions("", "float32", "cpu"))
