"""Code completion (`infill`) through the REAL tritonserver (2.51, CPU) and the production path (model.py, the
native engine, the continuous scheduler) with glm4-tiny standing in for CodeGeeX4 (GLM-4's tokenizer family;
`fim_engine:FimNativeEngine` marks it fill-in-the-middle and logs the prompt ids the engine received): the exact
prompt ids for a set of cursor positions, the budget, a malformed infill failing alone in a batch."""
import json
import os
import sysconfig

import pytest

from chatglm.tokenizer.load import load_tokenizer
from fixture_check import GLM4_FIXTURE
from triton_server import MODEL, TESTING, TritonServer, parse_sse, stream_together

STREAM = f"/v2/models/{MODEL}/generate_stream"
SPECIAL = {v["content"]: int(k) for k, v in json.loads(
    (GLM4_FIXTURE / "tokenizer_config.json").read_text(encoding="utf-8"))["added_tokens_decoder"].items()}
TOKENIZER = load_tokenizer(str(GLM4_FIXTURE))


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    log = tmp_path_factory.mktemp("fim") / "prompts.jsonl"
    site = sysconfig.get_paths()["purelib"]
    srv = TritonServer(engine="fim_engine:FimNativeEngine", max_batch_size=4,
                       env={"PYTHONPATH": os.pathsep.join([str(TESTING), site]), "FIM_ENGINE_PROMPT_LOG": str(log)},
                       parameters={"weights_path": str(GLM4_FIXTURE), "dtype": "float32", "scheduler": "continuous",
                                   "infill_max_input_tokens": "256", "stream_interval_ms": "0"})
    with srv:
        srv.load()
        srv.prompt_log = log
        yield srv


def complete(server, infill, max_new_tokens=4):
    body = {"prompt": "", "infill": json.dumps(infill, ensure_ascii=False), "max_new_tokens": max_new_tokens,
            "temperature": 0}
    status, raw = server.request("POST", STREAM, body)
    return status, parse_sse(raw)


def logged_prompts(server):
    return [json.loads(line) for line in server.prompt_log.read_text(encoding="utf-8").splitlines()]


def guide_ids(user_text):
    """THUDM's guide's `<|user|>{text}<|assistant|>\\n` as its tokenizer encodes it, after [gMASK] <sop>."""
    return ([SPECIAL["[gMASK]"], SPECIAL["<sop>"], SPECIAL["<|user|>"]] + TOKENIZER.encode(user_text)
            + [SPECIAL["<|assistant|>"]] + TOKENIZER.encode("\n"))


SOURCE = 'import os\n\ndef main():\n\tname = "世界"\n    print(f"你好 {name}")\r\n    return 0\n'
CURSORS = [("start", 0), ("middle", SOURCE.index("def") + 4), ("in a string", SOURCE.index("世界") + 1),
           ("after a tab", SOURCE.index("\tname") + 1), ("crlf", SOURCE.index("\r\n") + 2), ("end", len(SOURCE))]


def test_exact_prompt_ids_for_cursor_positions(server):
    expected = []
    for _, cut in CURSORS:
        prefix, suffix = SOURCE[:cut], SOURCE[cut:]
        status, events = complete(server, {"prefix": prefix, "suffix": suffix, "path": "pkg/main.py",
                                           "language": "Python", "mode": "block", "references": []})
        assert status == 200 and "error" not in events[-1], events
        ids = guide_ids("\n###PATH:pkg/main.py\n###LANGUAGE:Python\n###MODE:BLOCK\n"
                        f"<|code_suffix|>{suffix}<|code_prefix|>{prefix}<|code_middle|>")
        assert events[-1]["prompt_tokens"] == len(ids) and events[-1]["history"] == "[]"
        expected.append(ids)
    assert logged_prompts(server)[-len(CURSORS):] == expected


def test_the_budget_trims_prefix_start_suffix_end_and_drops_references(server):
    prefix = "".join(f"x{i} = {i}\n" for i in range(300))
    suffix = "".join(f"y{i} = {i}\n" for i in range(300))
    status, events = complete(server, {"prefix": prefix, "suffix": suffix, "path": "a.py", "language": "Python",
                                       "mode": "line", "references": [{"path": "b.py", "text": "z = 1\n"}]})
    assert status == 200 and "error" not in events[-1], events
    ids = logged_prompts(server)[-1]
    assert len(ids) == events[-1]["prompt_tokens"] <= 256
    text = TOKENIZER.decode(ids)
    assert "###REFERENCE:" not in text and "###MODE:LINE\n" in text
    kept_suffix = text.split("<|code_suffix|>")[1].split("<|code_prefix|>")[0]
    kept_prefix = text.split("<|code_prefix|>")[1].split("<|code_middle|>")[0]
    assert suffix.startswith(kept_suffix) and prefix.endswith(kept_prefix)
    assert len(TOKENIZER.encode(kept_suffix)) <= 256 // 4 < len(TOKENIZER.encode(kept_prefix))


def test_a_malformed_infill_fails_alone_among_completions_and_chat(server):
    good = {"prefix": "def f(", "suffix": "):\n", "path": "f.py", "language": "Python", "mode": "line"}
    bodies = [
        {"prompt": "", "infill": json.dumps(good), "max_new_tokens": 6, "temperature": 0},
        {"prompt": "", "infill": json.dumps({**good, "cursor": 4}), "max_new_tokens": 6, "temperature": 0},
        {"prompt": "", "infill": "not json", "max_new_tokens": 6, "temperature": 0},
        {"prompt": "", "infill": json.dumps(good), "max_new_tokens": 6, "temperature": 0},
    ]
    (s0, e0), (s1, e1), (s2, e2), (s3, e3) = stream_together(server, STREAM, bodies)
    assert s1 == 400 and "unknown keys: 'cursor'" in e1[-1]["error"]
    assert s2 == 400 and "infill must be a JSON object" in e2[-1]["error"]
    for status, events in ((s0, e0), (s3, e3)):
        assert status == 200 and events[-1]["finish_reason"] == "length" and events[-1]["completion_tokens"] == 6
    assert "".join(e.get("response", "") for e in e0) == "".join(e.get("response", "") for e in e3)  # greedy
