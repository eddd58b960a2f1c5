"""Fill-in-the-middle (`infill`, code completion; chatglm/serving/infill.py): CodeGeeX4's infilling prompt as ids
over glm4-tiny's tokenizer (GLM-4's family, as CodeGeeX4-ALL-9B), the token budget, strict validation, the raw
answer with its stop texts, and model.py (stand-in, tiny engine): refusal on a model without fill-in-the-middle,
a malformed infill failing alone, a completion beside chat rows."""
import json

import pytest
import triton_python_backend_utils as pb

from chatglm.engine.types import TokenizerPrompts
from chatglm.serving.answer import AnswerStream
from chatglm.serving.infill import InfillRequest, Reference, infill_ids, parse_infill
from chatglm.serving.request import RequestError
from chatglm.tokenizer.load import load_tokenizer
from fixture_check import GLM4_FIXTURE
from harness import load_model, make_request, run

GLM4 = json.loads((GLM4_FIXTURE / "tokenizer_config.json").read_text(encoding="utf-8"))["added_tokens_decoder"]
SPECIAL = {v["content"]: int(k) for k, v in GLM4.items()}


class Prompts(TokenizerPrompts):
    def __init__(self):
        self.tokenizer = load_tokenizer(str(GLM4_FIXTURE))


@pytest.fixture(scope="module")
def engine():
    return Prompts()


def expected_ids(engine, user_text: str):
    """THUDM's infilling guide's string `<|user|>{user_text}<|assistant|>\\n` as THUDM's tokenizer encodes it:
    [gMASK] <sop> (its build_inputs_with_special_tokens), the two special tokens as their ids, the text between
    them as one ordinary string (the code markers are not special tokens of GLM-4 / CodeGeeX4)."""
    tok = engine.tokenizer
    return ([SPECIAL["[gMASK]"], SPECIAL["<sop>"], SPECIAL["<|user|>"]] + tok.encode(user_text)
            + [SPECIAL["<|assistant|>"]] + tok.encode("\n"))


FILE = 'def greet(name):\n    msg = "你好, " + name\n\treturn msg\n\nprint(greet("世界"))\n'
CURSORS = {
    "start of file": 0,
    "middle of a line": FILE.index("msg ="),
    "inside a string": FILE.index("你好") + 1,
    "after a tab": FILE.index("\treturn") + 1,
    "end of file": len(FILE),
}


@pytest.mark.parametrize("where", sorted(CURSORS))
def test_prompt_ids_for_cursor_positions(engine, where):
    cut = CURSORS[where]
    prefix, suffix = FILE[:cut], FILE[cut:]
    request = InfillRequest(prefix, suffix, "src/app.py", "Python", "line")
    ids, layout = infill_ids(engine, request, 2048)
    text = ("\n###PATH:src/app.py\n###LANGUAGE:Python\n###MODE:LINE\n"
            f"<|code_suffix|>{suffix}<|code_prefix|>{prefix}<|code_middle|>")
    assert ids == expected_ids(engine, text)
    assert (layout.prefix, layout.suffix, layout.references) == (prefix, suffix, ())


def test_prompt_ids_of_a_crlf_file_keep_the_carriage_returns(engine):
    crlf = FILE.replace("\n", "\r\n")
    cut = crlf.index("print")
    ids, _ = infill_ids(engine, InfillRequest(crlf[:cut], crlf[cut:], "a.py", "Python", "block"), 2048)
    text = f"\n###PATH:a.py\n###LANGUAGE:Python\n###MODE:BLOCK\n<|code_suffix|>{crlf[cut:]}<|code_prefix|>{crlf[:cut]}<|code_middle|>"
    assert ids == expected_ids(engine, text)
    assert engine.decode(ids).count("\r\n") == crlf.count("\r\n")


def test_references_come_first_as_the_guide_lays_them_out(engine):
    refs = (Reference("lib/util.py", "def helper():\n    return 1\n"), Reference("lib/b.py", "X = 2"))
    ids, layout = infill_ids(engine, InfillRequest("x = ", "\n", "main.py", "Python", "block", refs), 2048)
    text = ("\n###REFERENCE:\n###PATH:lib/util.py\ndef helper():\n    return 1\n"
            "###REFERENCE:\n###PATH:lib/b.py\nX = 2\n"
            "###PATH:main.py\n###LANGUAGE:Python\n###MODE:BLOCK\n<|code_suffix|>\n<|code_prefix|>x = <|code_middle|>")
    assert ids == expected_ids(engine, text) and layout.references == refs


def test_special_token_text_in_the_code_stays_text(engine):
    ids, _ = infill_ids(engine, InfillRequest("a = '<|user|><|assistant|>'", "", "", "", "line"), 2048)
    assert ids.count(SPECIAL["<|user|>"]) == 1 and ids.count(SPECIAL["<|assistant|>"]) == 1
    assert SPECIAL["<|endoftext|>"] not in ids


def test_the_budget_drops_references_first(engine):
    refs = tuple(Reference(f"r{i}.py", "value = 1\n" * 20) for i in range(5))
    request = InfillRequest("print(", ")\n", "m.py", "Python", "line", refs)
    full, layout = infill_ids(engine, request, 100_000)
    assert layout.references == refs
    budget = len(full) - 10  # not room for the last reference
    ids, layout = infill_ids(engine, request, budget)
    assert len(ids) <= budget and layout.references == refs[:4]
    assert (layout.prefix, layout.suffix) == ("print(", ")\n")


def test_the_budget_cuts_the_prefix_from_its_start_and_the_suffix_from_its_end(engine):
    prefix = "".join(f"line_{i} = {i}  # 前缀\n" for i in range(400))
    suffix = "".join(f"after_{i} = {i}\n" for i in range(400))
    refs = (Reference("r.py", "dropped = True\n"),)
    budget = 512
    ids, layout = infill_ids(engine, InfillRequest(prefix, suffix, "m.py", "Python", "block", refs), budget)
    assert budget - 8 <= len(ids) <= budget  # filled, not overfilled
    assert layout.references == ()
    assert prefix.endswith(layout.prefix) and layout.prefix != prefix
    assert suffix.startswith(layout.suffix) and layout.suffix
    tok = engine.tokenizer
    prefix_tokens, suffix_tokens = len(tok.encode(layout.prefix)), len(tok.encode(layout.suffix))
    assert suffix_tokens <= budget // 4 < prefix_tokens  # the prefix, nearer the cursor, keeps ≥ 3/4
    assert ids == expected_ids(engine, "\n###PATH:m.py\n###LANGUAGE:Python\n###MODE:BLOCK\n<|code_suffix|>"
                               f"{layout.suffix}<|code_prefix|>{layout.prefix}<|code_middle|>")


def test_a_short_prefix_leaves_the_suffix_the_rest(engine):
    suffix = "".join(f"after_{i} = {i}\n" for i in range(400))
    ids, layout = infill_ids(engine, InfillRequest("x = ", suffix, "m.py", "Python", "block"), 300)
    assert len(ids) <= 300 and layout.prefix == "x = " and len(engine.tokenizer.encode(layout.suffix)) > 300 // 4


def test_a_cut_never_splits_a_character(engine):
    prefix = "中文字符" * 300
    ids, layout = infill_ids(engine, InfillRequest(prefix, "", "", "", "line"), 200)
    assert "\ufffd" not in engine.decode(ids) and prefix.endswith(layout.prefix) and layout.prefix


@pytest.mark.parametrize("raw, message", [
    ("{", "infill must be a JSON object"),
    ("[]", "infill must be a JSON object, got list"),
    ('{"prefix": "a"}', "infill.suffix is required"),
    ('{"prefix": 1, "suffix": ""}', "infill.prefix must be a string"),
    ('{"prefix": "", "suffix": "", "cursor": 3}', "unknown keys: 'cursor'"),
    ('{"prefix": "", "suffix": "", "mode": "LINE"}', "infill.mode must be one of line, block"),
    ('{"prefix": "", "suffix": "", "path": "a\\nb"}', "infill.path must be one line"),
    ('{"prefix": "", "suffix": "", "language": 5}', "infill.language must be a string"),
    ('{"prefix": "", "suffix": "", "references": {}}', "infill.references must be a list"),
    ('{"prefix": "", "suffix": "", "references": [{"path": "a"}]}', "needs 'path' and 'text'"),
    ('{"prefix": "", "suffix": "", "references": [{"path": "a", "text": "", "x": 1}]}', "unknown keys: 'x'"),
    ('{"prefix": "", "suffix": "", "references": [{"path": "a", "text": 3}]}', "text must be a string"),
    ('{"prefix": "", "suffix": "", "path": "' + "p" * 2000 + '"}', "infill.path is too long"),
])
def test_malformed_infill_is_a_clear_error(raw, message):
    with pytest.raises(RequestError, match=message.replace("(", r"\(").replace(")", r"\)")):
        parse_infill(raw)


def test_a_valid_infill_parses_with_defaults():
    request = parse_infill('{"prefix": "a", "suffix": "b"}')
    assert (request.path, request.language, request.mode, request.references) == ("", "", "block", ())


def test_the_raw_answer_keeps_whitespace_and_ends_before_a_stop_text():
    pieces = ["\n", "    return", " x", "\n", "<|code", "_suffix|>", "junk"]
    answer = AnswerStream(lambda ids: "".join(pieces[i] for i in ids), raw=True,
                          stop_texts=("<|code_suffix|>", "<|code_prefix|>", "<|code_middle|>"))
    deltas = [answer.push(i) for i in range(len(pieces))]
    last, metadata, content = answer.finish()
    assert content == "\n    return x\n" and metadata == ""
    assert "".join(deltas) + last == content
    assert deltas[4] == "" and answer.stopped  # "<|code" was held back, never streamed


def test_a_held_back_partial_stop_text_is_released_when_it_turns_out_different():
    pieces = ["a <|", "code_x"]
    answer = AnswerStream(lambda ids: "".join(pieces[i] for i in ids), raw=True, stop_texts=("<|code_middle|>",))
    assert answer.push(0) == "a "
    assert answer.push(1) == "<|code_x" and not answer.stopped


# ---------------------------------------------------------------------------------------------- model.py


@pytest.fixture(scope="module")
def fim_model(monkeypatch_module):
    monkeypatch_module.setenv("TINY_ENGINE_FILL_IN_MIDDLE", "1")
    model = load_model()
    yield model
    model.finalize()


@pytest.fixture(scope="module")
def monkeypatch_module():
    mp = pytest.MonkeyPatch()
    yield mp
    mp.undo()


def infill(prefix="def f():\n    ", suffix="\n", **extra):
    return json.dumps({"prefix": prefix, "suffix": suffix, "path": "a.py", "language": "Python", "mode": "block",
                       **extra})


def test_a_model_without_fill_in_the_middle_refuses_infill_alone(monkeypatch):
    monkeypatch.delenv("TINY_ENGINE_FILL_IN_MIDDLE", raising=False)
    model = load_model()  # the tiny engine without TINY_ENGINE_FILL_IN_MIDDLE: like ChatGLM3 / GLM-4-chat
    try:
        refused, chat = run(model, [make_request("", infill=infill(), max_new_tokens=8),
                                    make_request("hello", max_new_tokens=8, temperature=0.0)])
        assert refused.error is not None and refused.finals == 1
        assert "has no fill-in-the-middle" in refused.error.message() and "codegeex4-all-9b" in refused.error.message()
        assert refused.error.code() == pb.TritonError.INVALID_ARG
        assert chat.error is None and chat.completion_tokens == 8
    finally:
        model.finalize()


def test_malformed_infill_fails_alone_beside_a_completion_and_a_chat(fim_model):
    bad, good, chat = run(fim_model, [
        make_request("", infill='{"prefix": "x", "suffix": "", "mode": "fast"}', max_new_tokens=8),
        make_request("", infill=infill(), max_new_tokens=8, temperature=0.0),
        make_request("hello", max_new_tokens=8, temperature=0.0),
    ])
    assert bad.error is not None and "infill.mode must be one of line, block" in bad.error.message()
    assert good.error is None and good.finals == 1 and good.completion_tokens == 8 and good.history == []
    assert chat.error is None and chat.completion_tokens == 8 and chat.history[-1]["role"] == "assistant"


def test_a_completion_streams_raw_text(fim_model):
    out = run(fim_model, [make_request("", infill=infill(), max_new_tokens=12, temperature=0.0)])[0]
    assert out.error is None and out.finish_reason == "length" and out.completion_tokens == 12
    # Every token is a byte of the answer (no metadata line taken off); a character cut off at the end is dropped.
    assert 10 <= len(out.text.encode("utf-8")) <= 12 and not out.text.startswith("\n")


def test_the_fill_in_middle_parameter_overrides_the_catalog(monkeypatch):
    monkeypatch.delenv("TINY_ENGINE_FILL_IN_MIDDLE", raising=False)
    on = load_model(fill_in_middle="on")  # the renderer installed a catalog model with fillInMiddle
    try:
        out = run(on, [make_request("", infill=infill(), max_new_tokens=4, temperature=0.0)])[0]
        assert out.error is None and out.completion_tokens == 4
    finally:
        on.finalize()
    monkeypatch.setenv("TINY_ENGINE_FILL_IN_MIDDLE", "1")
    off = load_model(fill_in_middle="off")
    try:
        out = run(off, [make_request("", infill=infill(), max_new_tokens=4)])[0]
        assert out.error is not None and "has no fill-in-the-middle" in out.error.message()
    finally:
        off.finalize()
    with pytest.raises(ValueError, match="fill_in_middle must be one of auto, on, off"):
        load_model(fill_in_middle="yes")


def test_a_scripted_answer_is_the_completion_without_a_metadata_line(monkeypatch, tmp_path):
    """The tiny engine's TINY_ENGINE_SCRIPTS (readable answers for e2e pictures) also script completions: the
    answer is the middle text exactly, then the engine stops (finish_reason stop)."""
    scripts = tmp_path / "scripts.json"
    scripts.write_text(json.dumps([{"match": "def add(", "answer": "a + b"}]), encoding="utf-8")
    monkeypatch.setenv("TINY_ENGINE_SCRIPTS", str(scripts))
    monkeypatch.setenv("TINY_ENGINE_FILL_IN_MIDDLE", "1")
    model = load_model()
    try:
        out = run(model, [make_request("", infill=infill("def add(a, b):\n    return ", "\n"), max_new_tokens=64)])[0]
        assert out.error is None and out.text == "a + b" and out.finish_reason == "stop"
    finally:
        model.finalize()


def test_a_completion_line_break_is_sent_at_once_while_a_chat_stays_coalesced(monkeypatch, tmp_path):
    """The editor's LINE mode ends the request once a line is complete: a completion's line break must not wait
    for the stream interval (here far longer than the test), while a chat answer's deltas stay coalesced."""
    scripts = tmp_path / "scripts.json"
    scripts.write_text(json.dumps([{"match": "def add(", "answer": "a + b\n    c = 1\n"}]), encoding="utf-8")
    monkeypatch.setenv("TINY_ENGINE_SCRIPTS", str(scripts))
    monkeypatch.setenv("TINY_ENGINE_FILL_IN_MIDDLE", "1")
    model = load_model(stream_interval_ms="10000")
    try:
        completion, chat = run(model, [
            make_request("", infill=infill("def add(a, b):\n    return ", "\n"), max_new_tokens=64),
            make_request("hello", max_new_tokens=20, temperature=0.0),
        ])
    finally:
        model.finalize()
    assert completion.error is None and completion.text == "a + b\n    c = 1\n"
    sent = ["".join(completion.deltas[:i + 1]) for i in range(len(completion.deltas))]
    assert "a + b\n" in sent and "a + b\n    c = 1\n" in sent  # each line complete in a delta of its own
    assert len(chat.deltas) == 1 and chat.finals == 1  # the chat: the first delta at once, the rest with the FINAL


def test_markers_declared_by_the_tokenizer_files_are_one_id_each(tmp_path):
    """A tokenizer_config.json that declares the three markers as added tokens makes each one id, the text between
    them encoded piece by piece (as that tokenizer splits added tokens out first); code that contains a marker's
    text still encodes it as text."""
    import shutil
    folder = tmp_path / "tok"
    shutil.copytree(GLM4_FIXTURE, folder)
    config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    marks = {"<|code_suffix|>": 670, "<|code_prefix|>": 671, "<|code_middle|>": 672}
    for content, i in marks.items():
        config["added_tokens_decoder"][str(i)] = {"content": content, "special": True, "lstrip": False,
                                                  "normalized": False, "rstrip": False, "single_word": False}
    (folder / "tokenizer_config.json").write_text(json.dumps(config), encoding="utf-8")

    class Declared(TokenizerPrompts):
        def __init__(self):
            self.tokenizer = load_tokenizer(str(folder))

    engine = Declared()
    tok = engine.tokenizer
    prefix, suffix = "x = '<|code_middle|>'\ny = ", "\nprint(x)\n"
    ids, _ = infill_ids(engine, InfillRequest(prefix, suffix, "a.py", "Python", "line"), 2048)
    assert ids == ([SPECIAL["[gMASK]"], SPECIAL["<sop>"], SPECIAL["<|user|>"]]
                   + tok.encode("\n###PATH:a.py\n###LANGUAGE:Python\n###MODE:LINE\n") + [670] + tok.encode(suffix)
                   + [671] + tok.encode(prefix) + [672] + [SPECIAL["<|assistant|>"]] + tok.encode("\n"))
    assert ids.count(672) == 1  # the marker's text inside the code stayed text
    assert tok.decode([670, 671, 672]) == "<|code_suffix|><|code_prefix|><|code_middle|>"


def test_the_fixture_tokenizer_declares_no_markers_so_they_stay_text(engine):
    """glm4-tiny's tokenizer_config.json has GLM-4-9B-chat's 14 added tokens only: the markers are plain text."""
    assert [engine.added_token_id(m) for m in ("<|code_suffix|>", "<|code_prefix|>", "<|code_middle|>")] == [None] * 3
    assert engine.added_token_id("<|user|>") == SPECIAL["<|user|>"]
