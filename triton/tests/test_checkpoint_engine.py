"""The e2e GLM-4 journey's engine (triton/testing/checkpoint_engine.py): it runs the mounted glm4-tiny checkpoint
through the production loaders, so the prompt it logs is GLM-4's layout from GLM-4's tokenizer, and a scripted
question gets its scripted answer token by token, then end-of-text."""
import json

import pytest

from checkpoint_engine import CheckpointEngine
from chatglm.engine.types import EngineOptions, PrefillChunk
from fixture_check import GLM4_FIXTURE


@pytest.fixture()
def engine(tmp_path, monkeypatch):
    scripts = tmp_path / "scripts.json"
    scripts.write_text(json.dumps([{"match": "Which model answers?", "answer": "GLM-4 tiny answers."}]))
    monkeypatch.setenv("TINY_ENGINE_SCRIPTS", str(scripts))
    monkeypatch.setenv("TINY_ENGINE_PROMPT_LOG", str(tmp_path / "prompts.jsonl"))
    return CheckpointEngine(EngineOptions(weights_path=str(GLM4_FIXTURE), dtype="float16", device="cuda:0", max_rows=2))


def test_it_runs_the_mounted_checkpoint_with_its_own_tokenizer(engine, tmp_path):
    assert (engine.device.type, engine.dtype_name) == ("cpu", "float32")
    assert engine.config.padded_vocab_size == 768 and engine.config.num_layers == 3
    prompt = engine.tokenizer.chat_prompt([{"role": "user", "content": "Which model answers?"}])
    # GLM-4's layout: [gMASK] <sop> <|user|> "\n" content <|assistant|> (the fixture's ids 658, 660, 663, 664).
    assert prompt[:3] == [658, 660, 663] and prompt[-1] == 664
    slot = engine.open_row()
    tokens = [int(engine.prefill([PrefillChunk(slot, prompt, 0, len(prompt))])[0].argmax())]
    while tokens[-1] != engine.tokenizer.eos_token_id and len(tokens) < 40:
        tokens.append(int(engine.decode_step([slot], [tokens[-1]])[0].argmax()))
    assert engine.tokenizer.decode(tokens) == "\nGLM-4 tiny answers.<|endoftext|>"
    logged = [json.loads(line) for line in (tmp_path / "prompts.jsonl").read_text().splitlines()]
    assert logged == [{"prompt": "[gMASK]<sop><|user|>\nWhich model answers?<|assistant|>", "ids": prompt}]


def test_an_unscripted_row_samples_freely_and_a_missing_folder_is_refused(engine):
    prompt = engine.tokenizer.chat_prompt([{"role": "user", "content": "Something else"}])
    slot = engine.open_row()
    logits = engine.prefill([PrefillChunk(slot, prompt, 0, len(prompt))])[0]
    assert float(logits.max()) - float(logits.min()) < 1e6  # no forced row: the model's own logits
    with pytest.raises(ValueError, match="needs weights_path"):
        CheckpointEngine(EngineOptions(weights_path="", dtype="float32", device="cpu"))
