"""`quantization: int8` end to end on the REAL tritonserver (2.51, CPU, tiny engine): the setting reaches the engine
through config.pbtxt, the load logs its memory plan, the weights info metric says int8, and the answer streamed is
the int8 engine's own greedy answer token for token (recomputed here in-process from the prompt the server logged),
which differs from the float model's."""
import json
import re

import pytest
import torch

from chatglm.engine.types import EngineOptions, PrefillChunk
from tiny_engine import TinyEngine, TinyTokenizer, _split_messages
from triton_server import MODEL, TritonServer, parse_sse

STREAM = f"/v2/models/{MODEL}/generate_stream"
NEW_TOKENS = 32


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    log = tmp_path_factory.mktemp("prompts") / "prompts.jsonl"
    srv = TritonServer(max_batch_size=2, parameters={"quantization": "int8"}, env={"TINY_ENGINE_PROMPT_LOG": str(log)})
    srv.prompt_log = log
    with srv:
        srv.load()
        yield srv


def _greedy(quantization: str, prompt_ids):
    """The tiny engine's greedy answer in-process (its output shaping included), as the server's scheduler runs it."""
    engine = TinyEngine(EngineOptions(weights_path="", dtype="float32", device="cpu", max_rows=1, context_needed=512,
                                      parameters={"quantization": quantization}))
    assert engine.quantization == quantization
    slot = engine.open_row()
    logits = engine.prefill([PrefillChunk(slot, prompt_ids, 0, len(prompt_ids))])
    tokens = []
    for _ in range(NEW_TOKENS):
        token = int(torch.argmax(logits[0]))
        tokens.append(token)
        logits = engine.decode_step([slot], [token])
    return engine.decode(tokens)


def test_int8_answers_through_the_server(server):
    status, raw = server.request("POST", STREAM, {"prompt": "quantized weights", "max_new_tokens": NEW_TOKENS, "temperature": 0})
    assert status == 200, raw
    events = parse_sse(raw)
    final = events[-1]
    assert final["finish_reason"] == "length" and final["completion_tokens"] == NEW_TOKENS
    answer = "".join(e["response"] for e in events)

    # The prompt as the model received it, rebuilt into ids with the tiny tokenizer's ChatGLM3 layout.
    logged = [json.loads(line) for line in server.prompt_log.read_text(encoding="utf-8").splitlines()]
    entry = next(e for e in logged if any(m["content"] == "quantized weights" for m in e["messages"]))
    tokenizer = TinyTokenizer()
    ids = list(tokenizer.get_prefix_tokens())
    *messages, opening = entry["messages"]
    assert opening == {"role": "assistant", "metadata": "", "content": ""}  # the bare <|assistant|> that ends it
    for m in messages:
        ids += tokenizer.build_single_message(m["role"], m["metadata"], m["content"])
    ids.append(tokenizer.get_command("<|assistant|>"))
    assert tokenizer.decode(ids) == entry["prompt"] and _split_messages(tokenizer, ids) == entry["messages"]

    # Every answer starts with ChatGLM3's (empty) metadata line, which the server does not stream.
    int8, float_answer = _greedy("int8", ids), _greedy("none", ids)
    assert int8.startswith("\n") and answer == int8[1:]
    assert float_answer != int8, "int8 and float weights give the same answer: the test cannot tell them apart"

    metrics = server.metrics()
    info = re.search(r'^chatglm3_weights_info\{([^}]*)\} 1', metrics, re.M)
    assert info and 'quantization="int8"' in info.group(1) and 'dtype="float64"' in info.group(1), metrics[:2000]
    log = server.log()
    assert "memory plan:" in log and "quantization int8 (dequantize + linear)" in log
