"""Tokenizers without remote code (chatglm.tokenizer): ids identical to THUDM's own tokenizers on the glm4-tiny
fixture's prompts and on a corpus of 229 English / Chinese / code strings (tests/data/tokenizer_corpus.json: the
ids THUDM's tokenization_chatglm.py produced once, at development time; its provenance says from which file),
for GLM-4 (tiktoken over glm4-tiny's rank file) and ChatGLM3 (sentencepiece over a tiny SentencePiece model
trained for this test, tests/data/chatglm3-spm). And: no Python file of a weights folder ever runs."""
import json
import shutil
from pathlib import Path

import pytest

from chatglm.engine.types import EngineOptions
from chatglm.model.checkpoint import CheckpointError
from chatglm.tokenizer.chatglm3 import ChatGLM3Tokenizer
from chatglm.tokenizer.glm4 import GLM4Tokenizer
from chatglm.tokenizer.load import load_tokenizer, tokenizer_kind
from fixture_check import GLM4_FIXTURE

DATA = Path(__file__).resolve().parent / "data"
CORPUS = json.loads((DATA / "tokenizer_corpus.json").read_text(encoding="utf-8"))
SPM = DATA / "chatglm3-spm"


@pytest.fixture(scope="module")
def glm4():
    return load_tokenizer(str(GLM4_FIXTURE))


@pytest.fixture(scope="module")
def chatglm3():
    return load_tokenizer(str(SPM))


def test_the_kind_is_read_from_tokenizer_model(glm4, chatglm3):
    assert tokenizer_kind(str(GLM4_FIXTURE / "tokenizer.model")) == "tiktoken" and isinstance(glm4, GLM4Tokenizer)
    assert tokenizer_kind(str(SPM / "tokenizer.model")) == "sentencepiece" and isinstance(chatglm3, ChatGLM3Tokenizer)


def test_corpus_is_large_and_mixed():
    strings = CORPUS["strings"]
    assert len(strings) >= 200 and len(set(strings)) == len(strings)
    assert sum(any("\u4e00" <= ch <= "\u9fff" for ch in s) for s in strings) >= 50  # Chinese
    assert sum(("def " in s or "{" in s or ";" in s) for s in strings) >= 40  # code


@pytest.mark.parametrize("kind", ["glm4_tiny", "chatglm3_spm"])
def test_every_corpus_message_has_thudms_ids(kind, glm4, chatglm3):
    tokenizer = glm4 if kind == "glm4_tiny" else chatglm3
    expected = CORPUS[kind]["user_message_ids"]
    mismatches = [s for s, ids in zip(CORPUS["strings"], expected) if tokenizer.build_single_message("user", "", s) != ids]
    assert len(expected) == len(CORPUS["strings"]) and not mismatches, mismatches[:5]


@pytest.mark.parametrize("kind", ["glm4_tiny", "chatglm3_spm"])
def test_conversations_have_thudms_prompt_layout(kind, glm4, chatglm3):
    tokenizer = glm4 if kind == "glm4_tiny" else chatglm3
    for conversation in CORPUS[kind]["conversations"]:
        assert tokenizer.chat_prompt(conversation["messages"]) == conversation["input_ids"]


def test_glm4_fixture_prompts(glm4):
    golden = json.loads((GLM4_FIXTURE / "golden.json").read_text(encoding="utf-8"))
    for case in golden["cases"]:
        assert glm4.chat_prompt(case["messages"]) == case["input_ids"]
    assert {name: glm4.get_command(name) for name in golden["special_token_ids"]} == golden["special_token_ids"]
    assert glm4.eos_token_id == 656


def test_special_ids_follow_the_vocabulary(chatglm3):
    assert chatglm3.get_prefix_tokens() == [901, 903]  # [gMASK] sop after 900 pieces, as ChatGLM3-6B's 64790, 64792
    assert [chatglm3.get_command(f"<|{r}|>") for r in ("system", "user", "assistant", "observation")] == [905, 906, 907, 908]
    assert chatglm3.eos_token_id == 2


@pytest.mark.parametrize("kind", ["glm4_tiny", "chatglm3_spm"])
def test_decode_round_trips_text(kind, glm4, chatglm3):
    tokenizer = glm4 if kind == "glm4_tiny" else chatglm3
    for text in CORPUS["strings"]:
        if kind == "chatglm3_spm" and text != text.strip(" "):
            continue  # SentencePiece drops the dummy-prefix space of a leading blank, as ChatGLM3's decode does
        assert tokenizer.decode(tokenizer.encode(text)) == text
    assert glm4.decode([658, 660, 663]) == "[gMASK]<sop><|user|>"
    assert glm4.decode([767, 700]) == ""  # padding rows of the output layer have no text


def _weights_folder(tmp_path: Path, witness: Path) -> Path:
    """glm4-tiny plus THUDM-style Python files and an auto_map pointing at them; importing any of them writes
    `witness`."""
    folder = tmp_path / "weights"
    shutil.copytree(GLM4_FIXTURE, folder)
    payload = f"open({str(witness)!r}, 'w').write('ran')\n"
    for name in ("tokenization_chatglm.py", "modeling_chatglm.py", "configuration_chatglm.py", "__init__.py"):
        (folder / name).write_text(payload)
    for name in ("tokenizer_config.json", "config.json"):
        raw = json.loads((folder / name).read_text())
        raw["auto_map"] = {"AutoTokenizer": ["tokenization_chatglm.ChatGLM4Tokenizer", None],
                           "AutoConfig": "configuration_chatglm.ChatGLMConfig",
                           "AutoModel": "modeling_chatglm.ChatGLMForConditionalGeneration"}
        (folder / name).write_text(json.dumps(raw))
    return folder


def test_python_files_in_the_weights_folder_never_run(tmp_path):
    from chatglm.engine.native import NativeEngine

    witness = tmp_path / "witness.txt"
    folder = _weights_folder(tmp_path, witness)
    engine = NativeEngine(EngineOptions(weights_path=str(folder), dtype="float32", device="cpu", max_rows=2,
                                        context_needed=64), sampling_seed=0)
    assert isinstance(engine.tokenizer, GLM4Tokenizer)
    assert engine.prefix_ids() == [658, 660]
    assert not witness.exists(), "a Python file from the weights folder ran"


def test_a_folder_without_tokenizer_model_is_a_load_error_naming_the_file(tmp_path):
    """#31 item 9: it used to fail inside the tokenizer's code with `TypeError: stat: path should be string…`."""
    from chatglm.engine.native import NativeEngine

    folder = tmp_path / "weights"
    shutil.copytree(GLM4_FIXTURE, folder)
    (folder / "tokenizer.model").unlink()
    with pytest.raises(CheckpointError) as info:
        NativeEngine(EngineOptions(weights_path=str(folder), dtype="float32", device="cpu", max_rows=2, context_needed=64))
    assert "no tokenizer.model in" in str(info.value) and "download tokenizer.model" in str(info.value)


def test_a_broken_tokenizer_model_is_a_load_error(tmp_path):
    folder = tmp_path / "weights"
    shutil.copytree(GLM4_FIXTURE, folder)
    (folder / "tokenizer.model").write_text("aGk= 0\nnot a rank line\n")
    with pytest.raises(CheckpointError, match="line 2 is not 'base64"):
        load_tokenizer(str(folder))
    (folder / "tokenizer.model").write_bytes(b"\x00\x01garbage")
    with pytest.raises(CheckpointError, match="as a SentencePiece model"):
        load_tokenizer(str(folder))
