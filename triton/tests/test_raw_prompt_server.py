"""Raw continuations (`raw_prompt`) and stop texts (`stop`) through the REAL tritonserver (2.51, CPU) and the
production path (model.py, the native engine, the continuous scheduler) with the tiny engine: the exact prompt ids
the engine received for a raw prompt beside the chat layout, the end-of-text stop, an answer cut at a stop text
with completion_tokens = the tokens generated up to it, and malformed requests failing alone in a batch."""
import json

import pytest

from tiny_engine import TinyTokenizer
from triton_server import MODEL, TritonServer, parse_sse, stream_together

STREAM = f"/v2/models/{MODEL}/generate_stream"
TOK = TinyTokenizer()
STOP_AFTER = 24  # the tiny engine ends each answer after this many tokens (raw: end-of-text; chat: <|user|>)


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    log = tmp_path_factory.mktemp("raw") / "prompts.jsonl"
    env = {"TINY_ENGINE_PROMPT_LOG": str(log), "TINY_ENGINE_STOP_AFTER": str(STOP_AFTER)}
    with TritonServer(env=env, max_batch_size=4, parameters={"stream_interval_ms": "0"}) as srv:
        srv.load()
        srv.prompt_log = log
        yield srv


def generate(server, body):
    status, raw = server.request("POST", STREAM, {"temperature": 0, "max_new_tokens": 64, **body})
    events = parse_sse(raw)
    assert status == 200 and "error" not in events[-1], (status, events)
    return "".join(e.get("response", "") for e in events), events[-1]


def last_logged_ids(server):
    return json.loads(server.prompt_log.read_text(encoding="utf-8").splitlines()[-1])["ids"]


def test_the_engine_gets_prefix_plus_text_for_a_raw_prompt_and_the_chat_layout_otherwise(server):
    text = "def add(a, b):\n    <|user|> 你好"
    gmask, sop, user, assistant = (TOK.get_command(n) for n in ("[gMASK]", "sop", "<|user|>", "<|assistant|>"))
    _, final = generate(server, {"prompt": "", "raw_prompt": text})
    raw_ids = last_logged_ids(server)
    assert raw_ids == [gmask, sop] + TOK.encode(text)  # special-token text stays text
    assert final["prompt_tokens"] == len(raw_ids) and final["history"] == "[]"
    _, final = generate(server, {"prompt": text})
    chat_ids = last_logged_ids(server)
    assert chat_ids == [gmask, sop, user] + TOK.encode("\n") + TOK.encode(text) + [assistant]
    assert final["prompt_tokens"] == len(chat_ids) and json.loads(final["history"])[-1]["role"] == "assistant"


def test_a_raw_continuation_has_no_metadata_line_and_ends_at_end_of_text(server):
    answer, final = generate(server, {"prompt": "", "raw_prompt": "Once upon a time"})
    assert final["finish_reason"] == "stop" and final["completion_tokens"] == STOP_AFTER
    # Byte tokens: every generated token is in the text, but a CJK character the end cut short is dropped.
    assert STOP_AFTER - 2 <= len(answer.encode("utf-8")) <= STOP_AFTER
    _, chat = generate(server, {"prompt": "Once upon a time"})
    assert chat["finish_reason"] == "stop" and chat["completion_tokens"] == STOP_AFTER + 1  # + its metadata line
    short, final = generate(server, {"prompt": "", "raw_prompt": "Once upon a time", "max_new_tokens": 7})
    assert final["finish_reason"] == "length" and final["completion_tokens"] == 7
    assert answer.encode("utf-8").startswith(short.encode("utf-8"))  # greedy: the same start


@pytest.mark.parametrize("kind", ["raw", "chat"])
def test_a_stop_text_cuts_the_answer_and_counts_the_tokens_generated_up_to_it(server, kind):
    body = {"prompt": "", "raw_prompt": "Once upon a time"} if kind == "raw" else {"prompt": "Tell a story"}
    whole, _ = generate(server, body)
    chars = list(whole)
    assert len(chars) >= 6, whole
    stop = "".join(chars[3:5])  # two characters in the middle of the greedy answer
    before = whole[:whole.index(stop)]
    answer, final = generate(server, {**body, "stop": json.dumps([stop, "never appears"])})
    assert answer == before and final["finish_reason"] == "stop"
    # Byte tokens: the row generated the text before the stop and the stop itself (a chat answer also its
    # metadata line "\n"), then ended at that step.
    metadata = 0 if kind == "raw" else 1
    assert final["completion_tokens"] == metadata + len((before + stop).encode("utf-8"))


def test_malformed_raw_requests_fail_alone_beside_good_ones(server):
    bodies = [
        {"prompt": "", "raw_prompt": "abc", "max_new_tokens": 6, "temperature": 0},
        {"prompt": "hi", "raw_prompt": "abc", "max_new_tokens": 6},
        {"prompt": "", "raw_prompt": "abc", "stop": "[\"a\", 3]", "max_new_tokens": 6},
        {"prompt": "", "raw_prompt": "abc", "max_new_tokens": 6, "temperature": 0},
    ]
    (s0, e0), (s1, e1), (s2, e2), (s3, e3) = stream_together(server, STREAM, bodies)
    assert s1 == 400 and "input 'prompt' must be empty when 'raw_prompt' is given" in e1[-1]["error"]
    assert s2 == 400 and "stop[1] must be a string, got int" in e2[-1]["error"]
    for status, events in ((s0, e0), (s3, e3)):
        assert status == 200 and events[-1]["finish_reason"] == "length" and events[-1]["completion_tokens"] == 6
    assert "".join(e.get("response", "") for e in e0) == "".join(e.get("response", "") for e in e3)  # greedy
