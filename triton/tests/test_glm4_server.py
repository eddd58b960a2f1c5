"""glm4-tiny (../shared/fixtures/glm4-tiny: GLM-4's architecture and tokenizer, THUDM's numbers) through the REAL
tritonserver (2.51, CPU) and the production path: model.py, the native engine, our tokenizer over the fixture's
tokenizer.model (no remote code), the continuous scheduler. The prompt ids are GLM-4's layout (prompt_tokens) and
greedy decoding reproduces THUDM's `model.generate` tokens (their text)."""
import json
import os
import sysconfig

import pytest

from chatglm.serving.answer import AnswerStream
from chatglm.tokenizer.load import load_tokenizer
from fixture_check import GLM4_FIXTURE
from triton_server import MODEL, TESTING, TritonServer, parse_sse

GOLDEN = json.loads((GLM4_FIXTURE / "golden.json").read_text(encoding="utf-8"))
STREAM = f"/v2/models/{MODEL}/generate_stream"


@pytest.fixture(scope="module")
def server():
    # The stub embeds Debian's Python, which sees the virtual environment's packages (tiktoken, safetensors) only
    # through PYTHONPATH (chatglm.engine.factory appends it); the image installs them into its own Python.
    site = sysconfig.get_paths()["purelib"]
    srv = TritonServer(engine="native", max_batch_size=4, env={"PYTHONPATH": os.pathsep.join([str(TESTING), site])},
                       parameters={"weights_path": str(GLM4_FIXTURE), "dtype": "float32", "scheduler": "continuous"})
    with srv:
        srv.load()
        yield srv


def _request(case):
    *history, last = case["messages"]
    body = {"prompt": last["content"], "max_new_tokens": GOLDEN["generate_max_new_tokens"], "temperature": 0}
    if history:
        body["history"] = json.dumps(history, ensure_ascii=False)
    return body


@pytest.mark.parametrize("index", [0, 1, 2, 3])
def test_a_glm4_checkpoint_answers_with_thudms_tokens(server, index):
    case = GOLDEN["cases"][index]
    status, raw = server.request("POST", STREAM, _request(case))
    assert status == 200, raw
    *deltas, final = parse_sse(raw)
    assert final["prompt_tokens"] == len(case["input_ids"])  # GLM-4's [gMASK]<sop><|role|>\n... layout
    assert final["completion_tokens"] == len(case["generate_tokens"]) and final["finish_reason"] == "length"
    # THUDM's tokens, as the answer layer turns them into text (a first line is metadata, as in ChatGLM3's and
    # GLM-4's process_response): the streamed text must be exactly that.
    answer = AnswerStream(load_tokenizer(str(GLM4_FIXTURE)).decode)
    for token in case["generate_tokens"]:
        answer.push(token)
    _, metadata, expected = answer.finish()
    assert "".join(e["response"] for e in [*deltas, final]) == expected
    assert json.loads(final["history"])[-1].get("metadata", "") == metadata
    assert len(expected) > 10 or metadata


def test_the_log_names_the_tokenizer_and_no_remote_code(server):
    log = server.log()
    assert "a model the catalog does not list, 3 layers" in log
    assert "trust_remote_code" not in log


def test_a_model_without_fill_in_the_middle_refuses_infill_alone(server):
    """glm4-tiny as the catalog sees it (no entry, so no fillInMiddle, like GLM-4-9B-chat): a completion is refused
    with what to load, and a chat request beside it is answered."""
    infill = json.dumps({"prefix": "def f(", "suffix": ")", "path": "a.py", "language": "Python", "mode": "line"})
    status, raw = server.request("POST", STREAM, {"prompt": "", "infill": infill, "max_new_tokens": 4})
    assert status == 400
    error = parse_sse(raw)[-1]["error"]
    assert "has no fill-in-the-middle" in error and "codegeex4-all-9b" in error
    status, raw = server.request("POST", STREAM, {"prompt": "hi", "max_new_tokens": 4, "temperature": 0})
    assert status == 200 and parse_sse(raw)[-1]["completion_tokens"] == 4
