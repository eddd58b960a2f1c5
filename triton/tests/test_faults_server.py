"""Faults stay with their request, on the REAL tritonserver (2.51, CPU, tiny engine paced at 10 ms per forward
pass): each hostile setting or failing request is sent while three greedy requests stream, and the three end
with exactly the tokens they get alone; the server stays ready. Then a device fault stops the model (it refuses
every request with "the model failed ... reload it" until it is reloaded), and a burst of 200 requests is refused
only by the model's own bound ("server busy"), never by Triton's queue."""
import http.client
import json
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from test_scheduler_server import OpenStream, body, metric, stream, text_of, wait_logged
from triton_server import MODEL, TritonServer

FAULTS = {"TINY_ENGINE_STEP_DELAY_MS": "10", "TINY_ENGINE_OOM_MARKER": "OOM-IN-PREFILL",
          "TINY_ENGINE_OVERFLOW_MARKER": "OVERFLOWING-LOGITS", "TINY_ENGINE_DEVICE_FAULT_MARKER": "POISON-THE-GPU"}
LIMITS = {"max_input_tokens": "1024", "max_new_tokens_limit": "128", "default_max_new_tokens": "64"}  # a context of 1,152 tokens per row
BYSTANDERS = [body(f"bystander question {i}", 90 + 10 * i) for i in range(3)]


def ready(server):
    return server.request("GET", f"/v2/models/{MODEL}/ready")[0] == 200


@pytest.fixture(scope="module")
def server():
    with TritonServer(env=FAULTS, parameters=LIMITS) as srv:
        srv.load()
        yield srv


@pytest.fixture(scope="module")
def alone(server):
    """Each bystander's answer when it runs alone."""
    answers = []
    for payload in BYSTANDERS:
        status, events = stream(server, payload)
        assert status == 200 and events[-1]["finish_reason"] == "length", events[-1]
        answers.append(text_of(events))
    return answers


def prompt_of_tokens(n):
    """A prompt whose planned ids are exactly n tokens (tiny tokenizer: a byte per token + 6 for the layout:
    [gMASK] sop <|user|> "\\n" ... <|assistant|>)."""
    return "x" * (n - 5)


HOSTILE = {
    "temperature 1e-39 (greedy)": (dict(temperature=1e-39), "ok"),
    "temperature 1e-30 (greedy)": (dict(temperature=1e-30), "ok"),
    "temperature 0": (dict(temperature=0.0), "ok"),
    "top_p 1e-30": (dict(temperature=0.8, top_p=1e-30), "ok"),
    "temperature NaN": (dict(temperature=float("nan")), "input 'temperature' must be a finite number, got nan"),
    "temperature inf (1e39 overflows FP32)": (dict(temperature=1e39), "finite number"),
    "top_p NaN": (dict(top_p=float("nan")), "input 'top_p' must be a finite number, got nan"),
    "repetition_penalty inf": (dict(temperature=0.8, repetition_penalty=1e39), "finite number"),
    "repetition_penalty 1e-38": (dict(temperature=0.8, repetition_penalty=1e-38),
                                 "input 'repetition_penalty' must be between 0.01 and 10 (1 = off), got 1e-38"),
    "repetition_penalty 0.01 (the smallest)": (dict(temperature=1e-5, repetition_penalty=0.01), "ok"),
    "prompt at the context limit": (dict(prompt=prompt_of_tokens(1024), max_new_tokens=128), "ok"),
    "prompt one token over": (dict(prompt=prompt_of_tokens(1025), max_new_tokens=8), "prompt is too long"),
    "prefill out of memory": (dict(prompt="OOM-IN-PREFILL now"), "out of memory while reading the prompt"),
    "logits that overflow its temperature": (dict(prompt="OVERFLOWING-LOGITS here", temperature=0.5),
                                             "sampling failed"),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_request_beside_three_greedy_streams_leaves_them_unchanged(server, alone, case):
    change, expected = HOSTILE[case]
    payload = dict(body("a hostile request", 20), **change)
    streams = [OpenStream(server, b) for b in BYSTANDERS]
    for s in streams:
        assert s.next_event() is not None  # all three are generating
    status, raw = _post_raw(server, payload)
    texts = [text_of(s.rest()) for s in streams]
    assert texts == alone, f"{case}: a bystander's answer changed"
    if expected == "ok":
        events = _events(raw)
        assert status == 200 and events[-1].get("finish_reason") in ("length", "stop"), (case, raw[-400:])
    else:  # Triton's JSON parser takes the literal NaN (and 1e39 becomes inf in FP32): the model refuses it
        # an error as a stream's first response is HTTP 400 with its SSE event, whatever its code (INVALID_ARG
        # for bad input, INTERNAL for the request's own failure)
        assert status == 400 and expected in raw.decode(errors="replace"), (case, status, raw[-400:])
    assert ready(server), f"{case}: the model is not ready any more"


def test_integers_wider_than_32_bits_reach_the_model_intact(server):
    """The integer inputs are INT64: Triton's JSON parser narrowed INT32 inputs silently (2**32 + 7 ran as 7)."""
    status, raw = _post_raw(server, dict(body("wide", 8), max_new_tokens=2**32 + 7))
    assert status == 400 and "input 'max_new_tokens' must be between 1 and 128, got 4294967303" in raw.decode(), raw

    def answer(**change):
        status, raw = _post_raw(server, dict(body("wide top_k", 40), temperature=1.5, seed=11, **change))
        assert status == 200, raw[-300:]
        return _events(raw)

    off, three = text_of(answer(top_k=0)), text_of(answer(top_k=3))
    assert off != three  # the seed's answer tells the two apart
    assert text_of(answer(top_k=2**32 + 3)) == off  # more than the vocabulary: top-k keeps everything, not 3
    history = json.dumps([{"role": "user", "content": "an old question"}, {"role": "assistant", "content": "its answer"}])
    kept = [answer(history=history, history_len=n, max_new_tokens=2)[-1]["prompt_tokens"] for n in (1, 0, 2**32)]
    assert kept[0] > kept[1] and kept[2] == kept[0], kept  # 2**32 keeps every turn (it wrapped to 0: none)
    # Beyond INT64, Triton's JSON parser refuses the request before the model sees it; nothing is generated.
    status, raw = _post_raw(server, dict(body("wide", 8), max_new_tokens=2**63))
    assert status != 200 and b"Unable to parse" in raw, (status, raw)
    assert ready(server)


def test_generate_on_the_streaming_model_is_an_error_and_the_answer_is_still_generated(server):
    """What triton/README.md documents (and why our clients only call /generate_stream): Triton's /generate takes
    exactly one response, answers HTTP 200 with an error body, and nothing cancels the request; the model cannot
    tell that caller from a /generate_stream one, so it generates the whole answer, which is then thrown away."""
    status, raw = server.request("POST", f"/v2/models/{MODEL}/generate", body("a non-streaming caller", 30, "generate-on-streaming"))
    assert status == 200 and "generate expects model to produce exactly 1 response" in json.loads(raw)["error"], raw
    assert wait_logged(server, "generate-on-streaming")[:2] == ("length", 30)  # generated to the end, not cancelled
    assert ready(server)


def _post_raw(server, payload):
    """POST with Python's JSON (NaN goes out as the literal NaN, which strict JSON parsers refuse)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=180)
    try:
        conn.request("POST", f"/v2/models/{MODEL}/generate_stream", body=json.dumps(payload),
                     headers={"Content-Type": "application/json"})
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


def _events(raw):
    return [json.loads(block[len(b"data:"):]) for block in raw.split(b"\n\n") if block.startswith(b"data:")]


def test_a_burst_of_200_is_refused_only_by_the_model_s_bound(server):
    """The committed config: max_waiting 32, Triton's queue 32 + 1024. The model answers "server busy" (the SSE
    error event the extension shows as busy); Triton's own 'Exceeds maximum queue size' never appears."""
    busy_before = metric(server, "chatglm3_rejected_busy_total") or 0

    def one(i):  # 60 tokens at 10 ms a step: the first 8 rows run ~0.6 s while the rest arrive
        return _post_raw(server, body(f"burst {i}", 60))

    with ThreadPoolExecutor(200) as pool:
        results = list(pool.map(one, range(200)))
    outcomes = {"completed": 0, "server busy": 0, "triton queue full": 0, "other": 0}
    for status, raw in results:
        text = raw.decode(errors="replace")
        if status == 200 and '"finish_reason":"length"' in text:
            outcomes["completed"] += 1
        elif "server busy" in text:
            outcomes["server busy"] += 1
        elif "Exceeds maximum queue size" in text:
            outcomes["triton queue full"] += 1
        else:
            outcomes["other"] += 1
    print(f"burst of 200: {outcomes}")
    assert outcomes["triton queue full"] == 0 and outcomes["other"] == 0, outcomes
    assert outcomes["completed"] >= 8 + 32 and outcomes["server busy"] >= 1, outcomes
    assert outcomes["completed"] + outcomes["server busy"] == 200
    assert metric(server, "chatglm3_rejected_busy_total") == busy_before + outcomes["server busy"]
    assert ready(server)


def test_a_device_fault_stops_the_model_until_it_is_reloaded(server):
    bystander = OpenStream(server, body("running when the GPU faults", 100))
    assert bystander.next_event() is not None
    status, raw = _post_raw(server, body("POISON-THE-GPU please", 30))
    events = bystander.rest()
    assert "the model failed: CUDA error: an illegal memory access" in raw.decode(), raw[-300:]
    assert events[-1].get("error", "").startswith("the model failed"), events[-1]
    status, raw = _post_raw(server, body("and now?", 5))  # refused at once, with the cause
    assert status != 200 and "the model failed" in raw.decode() and "reload it" in raw.decode(), raw
    assert metric(server, "chatglm3_model_failed") == 1
    assert "device fault with" in server.log()
    server.load()  # Reload Model: a new stub process, a healthy model
    deadline = time.monotonic() + 60
    while not ready(server):
        assert time.monotonic() < deadline
        time.sleep(0.2)
    status, events = stream(server, body("after the reload", 10))
    assert status == 200 and events[-1]["completion_tokens"] == 10


def test_json_type_errors_on_generate_stream_are_triton_s_http_500(server):
    """Triton converts /generate_stream's JSON to tensors before the model sees anything: a string where FP32 is
    declared is its own error, answered HTTP 500 (not 400), which the model cannot change (triton/README.md)."""
    status, raw = _post_raw(server, dict(body("typed", 5), temperature="0.8"))
    assert status == 500 and b"attempt to access JSON non-number as double" in raw, (status, raw)
    status, raw = _post_raw(server, dict(body("typed", 5), top_k=1.5))
    assert status == 500 and b"non-signed-integer" in raw, (status, raw)
    assert ready(server)


@pytest.fixture(scope="module")
def unary_server():
    """Streaming off (decoupled: false, setting tritonChatglm.streaming), as the tutorial's /infer clients need."""
    with TritonServer(env={"TINY_ENGINE_STEP_DELAY_MS": "10"}, decoupled=False) as srv:
        srv.load()
        yield srv


def tutorial_request(prompt, history, temperature=0.3, max_token=64):
    """The tutorial's batched client body (its handle(info)), with exactly the edits of triton/README.md's table:
    max_token (BYTES) -> max_new_tokens (INT64, new tokens only), string temperature -> FP32."""
    return {
        "inputs": [
            {"name": "prompt", "datatype": "BYTES", "shape": [1, 1], "data": [prompt]},
            {"name": "history", "datatype": "BYTES", "shape": [1, 1], "data": [history]},
            {"name": "temperature", "datatype": "FP32", "shape": [1, 1], "data": [temperature]},
            {"name": "max_new_tokens", "datatype": "INT64", "shape": [1, 1], "data": [max_token]},
        ],
        "outputs": [{"name": "response"}, {"name": "history"}],
    }


def test_the_tutorial_s_batched_client_with_the_documented_edits_gets_answers(unary_server):
    questions = ["请介绍一下自己", "你是谁", "你几岁", "你是哪个国家的"]
    with ThreadPoolExecutor(4) as pool:  # its ThreadPoolExecutor(4), history [""] as it sends it
        results = list(pool.map(lambda q: unary_server.request(
            "POST", f"/v2/models/{MODEL}/infer", tutorial_request([q], [""])), questions))
    histories = []
    for status, raw in results:
        assert status == 200, raw
        outputs = {o["name"]: o["data"][0] for o in json.loads(raw)["outputs"]}
        assert outputs["response"], outputs
        histories.append(outputs["history"])
    # its next turn sends the history back as str(list_of_dicts): a Python literal, accepted (never eval'ed)
    previous = json.loads(histories[0])
    status, raw = unary_server.request("POST", f"/v2/models/{MODEL}/infer", tutorial_request(["再说一遍"], [str(previous)]))
    assert status == 200, raw
    history = json.loads({o["name"]: o["data"][0] for o in json.loads(raw)["outputs"]}["history"])
    assert [m["role"] for m in history] == ["user", "assistant", "user", "assistant"]
    assert history[0]["content"] == "请介绍一下自己"


def test_infer_takes_int64_integers_intact_and_refuses_int32_tensors(unary_server):
    """/infer's JSON tensors: an INT64 value past 32 bits reaches the range check; an INT32 tensor (what clients of
    the former contract sent) is refused by Triton, naming the datatype, before the model sees it."""
    wide = tutorial_request(["hi"], [""], max_token=2**32 + 7)
    wide["inputs"][3]["datatype"] = "INT64"
    status, raw = unary_server.request("POST", f"/v2/models/{MODEL}/infer", wide)
    assert status == 400 and b"must be between 1 and" in raw and b"got 4294967303" in raw, raw
    narrow = tutorial_request(["hi"], [""])
    narrow["inputs"][3]["datatype"] = "INT32"
    status, raw = unary_server.request("POST", f"/v2/models/{MODEL}/infer", narrow)
    assert status == 400 and b"data-type is 'INT32'" in raw and b"expects 'INT64'" in raw, raw


def test_a_non_streaming_generate_client_that_disconnects_is_not_cancelled(unary_server):
    """Not decoupled, /generate: Triton 2.51 does not cancel the request when its HTTP client goes away, so the
    row runs to its max_new_tokens (triton/README.md). Closing an SSE stream does cancel (test_scheduler_server)."""
    import socket

    srv = unary_server
    payload = json.dumps(dict(body("leave me running", 200), id="gone-client")).encode()
    sock = socket.create_connection(("127.0.0.1", srv.http_port))
    sock.sendall(b"POST /v2/models/" + MODEL.encode() + b"/generate HTTP/1.1\r\nHost: x\r\nContent-Type: "
                 b"application/json\r\nContent-Length: " + str(len(payload)).encode() + b"\r\n\r\n" + payload)
    time.sleep(0.5)
    sock.close()  # the client is gone long before the 200 tokens
    deadline = time.monotonic() + 60
    while "request gone-client" not in srv.log():
        assert time.monotonic() < deadline, srv.log()[-2000:]
        time.sleep(0.1)
    assert "request gone-client length after 200 tokens" in srv.log()
