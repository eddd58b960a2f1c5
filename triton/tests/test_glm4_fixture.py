"""The native engine against GLM-4's own numbers (../shared/fixtures/glm4-tiny: a tiny checkpoint in THUDM's GLM-4
format, its tiny tiktoken tokenizer and the logits THUDM's glm-4-9b-chat code computes for it; see its README),
loaded through the production loader and tokenizer: the config-driven parts (rotary base 10000 × rope_ratio,
epsilon 1.5625e-7, vocabulary, context) and GLM-4's prompt layout.

The fixture must be present (CI has ../shared beside the clone): a missing fixture fails these tests."""
import pytest

from chatglm.model.checkpoint import read_config
from fixture_check import GLM4_FIXTURE, Fixture, run_checks

TOLERANCE = 1e-4  # float32 (the README: two independent implementations agree to 4e-6)


@pytest.fixture(scope="module")
def fixture():
    try:
        return Fixture(GLM4_FIXTURE)
    except FileNotFoundError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="module")
def engine(fixture):
    return fixture.engine()


@pytest.fixture(scope="module")
def checks(fixture, engine):
    return run_checks(fixture, engine)


@pytest.mark.parametrize("case", ["alone_prefill", "alone_decode", "padded_batch_prefill", "padded_batch_decode",
                                  "join_mid_generation_decode", "chunked_prefill_decode",
                                  "mixed_step_with_chunks"])
def test_logits_match_glm4s_own_code(checks, case):
    assert checks[case] < TOLERANCE, checks


def test_config_is_read_from_config_json(fixture, engine):
    config = read_config(str(GLM4_FIXTURE))
    assert (config.num_layers, config.hidden_size, config.padded_vocab_size, config.seq_length) == (3, 128, 768, 512)
    assert config.rope_ratio == 500.0 and config.layernorm_epsilon == 1.5625e-07
    assert engine.max_context == 128  # min(seq_length 512, what the requests need)
    assert [len(p) for p in fixture.prompts] == [32, 39, 10, 53] and fixture.steps == 16


def test_prompt_ids_are_glm4s_layout(fixture, engine):
    """The production tokenizer (chatglm.tokenizer, tiktoken over tokenizer.model) builds every prompt of the
    fixture exactly as THUDM's apply_chat_template did."""
    for case in fixture.golden["cases"]:
        ids = engine.prefix_ids()
        for message in case["messages"]:
            ids += engine.message_ids(message["role"], message.get("metadata", ""), message["content"])
        ids += engine.assistant_ids()
        assert ids == case["input_ids"]


def test_stop_ids_are_the_configs_eos_ids(fixture, engine):
    assert sorted(engine.stop_ids) == sorted(fixture.golden["stop_token_ids"]) == [656, 663, 665]


def test_greedy_generation_reproduces_generate(fixture, engine):
    """The engine's own generation loop, greedy, all four prompts batched: THUDM's `model.generate` tokens."""
    from chatglm.engine.generation import RowSettings

    class Quiet:
        def on_token(self, row, token_id):
            pass

        def cancelled(self, rows):
            return [False] * len(rows)

        def on_finished(self, row, result):
            pass

    settings = [RowSettings(temperature=0.0, top_p=1.0, max_new_tokens=fixture.golden["generate_max_new_tokens"])
                for _ in fixture.prompts]
    results = engine.generate(fixture.prompts, settings, Quiet())
    for result, case in zip(results, fixture.golden["cases"]):
        assert result.token_ids == case["generate_tokens"], result


def test_transformers_own_glm_layout_is_refused_naming_what_to_fetch(tmp_path):
    """GLM-4-9B-chat's later Hub revisions are transformers' GlmForCausalLM (split q/k/v, other names): config.json
    is read first and the load stops there, saying to fetch the THUDM-format revision."""
    import json
    import shutil

    from chatglm.model.checkpoint import CheckpointError

    folder = tmp_path / "hf-layout"
    shutil.copytree(GLM4_FIXTURE, folder)
    raw = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**raw, "model_type": "glm", "architectures": ["GlmForCausalLM"]}))
    (folder / "model.safetensors").unlink()  # never reached
    with pytest.raises(CheckpointError) as info:
        Fixture(GLM4_FIXTURE).engine(weights_path=str(folder))
    message = str(info.value)
    assert "transformers' own layout (architectures GlmForCausalLM)" in message
    assert "fetch the THUDM-format checkpoint instead" in message
    assert "THUDM/glm-4-9b-chat at revision bd8234fe5e0c09c48637a92abb0c797cb5fa0e73" in message
