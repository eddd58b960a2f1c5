"""Raw continuations (`raw_prompt`, chatglm/serving/raw_prompt.py) and client stop texts (`stop`,
chatglm/serving/stop_texts.py + answer.py): the exact prompt ids of a raw prompt beside the chat layout (ChatGLM3's
SentencePiece tokenizer and glm4-tiny's, ids from THUDM's tokenizers in tests/data/tokenizer_corpus.json), strict validation, the
answer cut at a stop text with the tokens generated up to it counted, and model.py (stand-in, tiny engine): a
malformed request fails alone among good ones."""
import json
from pathlib import Path

import pytest

from chatglm.engine.types import TokenizerPrompts
from chatglm.serving.answer import AnswerStream
from chatglm.serving.raw_prompt import raw_prompt_ids
from chatglm.serving.request import ChatRequest, Limits, RequestError, parse_request, plan_prompt
from chatglm.serving.stop_texts import parse_stop
from chatglm.tokenizer.load import load_tokenizer
from fixture_check import GLM4_FIXTURE
from harness import load_model, make_request, run
from tiny_engine import EOS_ID, TinyEngine, TinyTokenizer

DATA = Path(__file__).resolve().parent / "data"
CORPUS = json.loads((DATA / "tokenizer_corpus.json").read_text(encoding="utf-8"))


class FolderPrompts(TokenizerPrompts):
    def __init__(self, folder=DATA / "chatglm3-spm"):
        self.tokenizer = load_tokenizer(str(folder))


class TinyPrompts(TokenizerPrompts):
    def __init__(self):
        self.tokenizer = TinyTokenizer()


def inputs(**values):
    """Inputs as chatglm.serving.io.read_inputs hands them (absent = None)."""
    import numpy as np

    out = {}
    for name, value in values.items():
        data = value.encode("utf-8") if isinstance(value, str) else value
        out[name] = np.array([[data]], dtype=np.object_ if isinstance(data, bytes) else np.int64)
    return out


def test_raw_prompt_ids_are_prefix_plus_thudms_text_ids_without_role_tokens():
    engine = FolderPrompts()
    tok = engine.tokenizer
    newline = len(tok.encode("\n"))
    prefix = tok.get_prefix_tokens()
    assert prefix == [901, 903]  # [gMASK] sop of the test vocabulary (ChatGLM3-6B's 64790, 64792)
    checked = 0
    for text, message_ids in zip(CORPUS["strings"], CORPUS["chatglm3_spm"]["user_message_ids"]):
        thudm_text_ids = message_ids[1 + newline:]  # THUDM's <|user|> + encode("\n") + encode(text)
        ids, stops = raw_prompt_ids(engine, text, 6144)
        assert ids == prefix + thudm_text_ids, text
        assert stops == (tok.eos_token_id,)  # end-of-text only: no <|user|> / <|observation|>
        checked += 1
    assert checked == len(CORPUS["strings"]) > 100


def test_a_glm4_raw_prompt_is_its_prefix_plus_thudms_text_ids_and_ends_at_endoftext():
    engine = FolderPrompts(GLM4_FIXTURE)
    tok = engine.tokenizer
    newline = len(tok.encode("\n"))
    for text, message_ids in zip(CORPUS["strings"], CORPUS["glm4_tiny"]["user_message_ids"]):
        ids, stops = raw_prompt_ids(engine, text, 6144)
        assert ids == [tok.get_command("[gMASK]"), tok.get_command("<sop>")] + message_ids[1 + newline:], text
    assert stops == (tok.get_command("<|endoftext|>"),)


def test_raw_plan_differs_from_the_chat_layout_by_exactly_the_role_tokens():
    engine = TinyPrompts()
    tok = engine.tokenizer
    limits = Limits()
    raw = plan_prompt(engine, parse_request(inputs(prompt="", raw_prompt="def f(x):"), limits), limits)
    chat = plan_prompt(engine, parse_request(inputs(prompt="def f(x):"), limits), limits)
    text = tok.encode("def f(x):")
    gmask, sop, user, assistant = (tok.get_command(n) for n in ("[gMASK]", "sop", "<|user|>", "<|assistant|>"))
    assert raw.ids == [gmask, sop] + text
    assert chat.ids == [gmask, sop, user] + tok.encode("\n") + text + [assistant]
    assert raw.raw and raw.stop_ids == (EOS_ID,) and raw.messages == []
    assert not chat.raw and chat.stop_ids is None


def test_a_raw_prompt_keeps_whitespace_and_special_token_text_as_text():
    engine = TinyPrompts()
    ids, _ = raw_prompt_ids(engine, "  <|user|>\n", 100)
    assert ids == engine.prefix_ids() + engine.tokenizer.encode("  <|user|>\n")
    assert engine.tokenizer.get_command("<|user|>") not in ids


@pytest.mark.parametrize("values, message", [
    (dict(prompt="", raw_prompt=""), "input 'raw_prompt' is empty"),
    (dict(prompt="hi", raw_prompt="x"), "input 'prompt' must be empty when 'raw_prompt' is given"),
    (dict(prompt="", raw_prompt="x", history='[{"role": "user", "content": "a"}]'), "input 'history' must be absent or empty"),
    (dict(prompt="", raw_prompt="x", infill='{"prefix": "a", "suffix": ""}'), "'raw_prompt' and 'infill' exclude each other"),
    (dict(prompt="", raw_prompt=b"\xff"), "input 'raw_prompt' is not valid UTF-8"),
    (dict(prompt="hi", stop='"x"'), "stop must be a JSON list of strings, got str"),
    (dict(prompt="hi", stop="[1]"), "stop[0] must be a string, got int"),
    (dict(prompt="hi", stop='["a", ""]'), "stop[1] is empty"),
    (dict(prompt="hi", stop=json.dumps(list("abcde"))), "stop has too many entries: 5 (limit 4)"),
    (dict(prompt="hi", stop=json.dumps(["x" * 257])), "stop[0] is too long"),
    (dict(prompt="hi", stop="[oops"), "stop must be a JSON list of strings ("),
])
def test_malformed_raw_prompt_and_stop_inputs_are_named(values, message):
    with pytest.raises(RequestError) as err:
        parse_request(inputs(**values), Limits())
    assert message in str(err.value)


def test_empty_history_and_empty_stop_are_accepted():
    request = parse_request(inputs(prompt="", raw_prompt=" ", history="[]", stop="[]"), Limits())
    assert (request.raw_prompt, request.stop) == (" ", ())
    assert parse_stop('["\\n\\n", "END"]') == ("\n\n", "END")


def test_a_raw_prompt_over_the_budget_is_refused_not_cut():
    engine = TinyPrompts()
    with pytest.raises(RequestError, match=r"raw_prompt is too long: 12 tokens \(limit max_input_tokens = 11\)"):
        raw_prompt_ids(engine, "0123456789", 11)
    assert len(raw_prompt_ids(engine, "0123456789", 12)[0]) == 12


def byte_stream(stop_texts, raw):
    tok = TinyTokenizer()
    return AnswerStream(tok.decode, raw=raw, stop_texts=stop_texts), tok


@pytest.mark.parametrize("raw", [True, False])
def test_a_stop_text_ends_the_answer_at_the_token_that_completed_it(raw):
    answer, tok = byte_stream(("END",), raw)
    text = ("" if raw else "\n") + "one END two"
    sent, pushed = "", 0
    for token in tok.encode(text):
        sent += answer.push(token)
        pushed += 1
        if answer.stopped:
            break
    # The row ends with the token of "D": every token up to it was generated, the stop text is not sent.
    assert pushed == len(tok.encode(text[:text.index("END") + 3]))
    delta, _, content = answer.finish()
    assert sent + delta == content == "one "


def test_a_chat_stop_text_of_whitespace_is_seen_at_the_token_that_completes_it():
    answer, tok = byte_stream(("\n",), False)
    pushed = 0
    for token in tok.encode("\nHi\nthere"):
        answer.push(token)
        pushed += 1
        if answer.stopped:
            break
    assert pushed == 4  # metadata "\n", "H", "i", "\n": not one token later
    assert answer.finish()[2] == "Hi"
    # Without a stop, the answer's trailing whitespace is still dropped at the end.
    answer, tok = byte_stream(("END",), False)
    sent = "".join(answer.push(t) for t in tok.encode("\n  Hi there \n"))
    delta, _, content = answer.finish()
    assert sent + delta == content == "Hi there"


def test_a_held_back_partial_stop_text_is_sent_when_it_becomes_something_else():
    answer, tok = byte_stream(("\n\n",), False)
    deltas = [answer.push(t) for t in tok.encode("\na\n")]
    assert "".join(deltas) == "a" and not answer.stopped  # the "\n" after "a" may start "\n\n": held back
    deltas.append(answer.push(tok.encode("b")[0]))
    assert deltas[-1] == "\nb" and not answer.stopped
    delta, _, content = answer.finish()
    assert content == "a\nb" and "".join(deltas) + delta == content


def test_model_answers_a_malformed_raw_request_alone_among_good_ones(monkeypatch):
    monkeypatch.setenv("TINY_ENGINE_STOP_AFTER", "5")
    model = load_model(max_active_rows="4")
    try:
        requests = [
            make_request("", raw_prompt="Once upon", max_new_tokens=20, temperature=0),
            make_request("hello", raw_prompt="x", max_new_tokens=20),
            make_request("", raw_prompt="Once upon", stop='["q", 7]', max_new_tokens=20),
            make_request("hello", max_new_tokens=20, temperature=0),
        ]
        raw, both, bad_stop, chat = run(model, requests)
    finally:
        model.finalize()
    assert "must be empty when 'raw_prompt'" in both.error.message()
    assert "stop[1] must be a string" in bad_stop.error.message()
    # The raw row: no metadata line, ends at end-of-text after 5 tokens (not counted, as the chat stops), no history.
    assert raw.error is None and raw.finish_reason == "stop" and raw.completion_tokens == 5 and raw.history == []
    assert len(raw.text.encode("utf-8")) == 5 and raw.prompt_tokens == 2 + len("Once upon")
    assert chat.error is None and chat.finish_reason == "stop" and chat.history[-1]["role"] == "assistant"


def test_per_execute_refuses_raw_prompt_and_stop_and_answers_the_chat_beside_them():
    model = load_model(scheduler="per_execute")
    try:
        requests = [
            make_request("", raw_prompt="Once upon", max_new_tokens=4),
            make_request("hello", stop='["x"]', max_new_tokens=4),
            make_request("hello", max_new_tokens=4, temperature=0),
        ]
        raw, stop, chat = run(model, requests)
    finally:
        model.finalize()
    for refused in (raw, stop):
        assert "raw_prompt and stop need scheduler 'continuous'" in refused.error.message()
    assert chat.error is None and chat.completion_tokens == 4
