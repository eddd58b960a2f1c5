"""Code completions (`infill`) and chat in the same continuous scheduler, on the REAL tritonserver (2.51, CPU): the
tiny engine marked fill-in-the-middle (TINY_ENGINE_FILL_IN_MIDDLE), paced at 10 ms per forward pass, counted in
steps — the engine's step log (TINY_ENGINE_STEP_LOG: the kind of every row in every forward pass) and the
scheduler's `admitted at step a, first token at step f, finished at step e` lines."""
import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from test_scheduler_server import OpenStream, body, metric, stream, wait_logged
from triton_server import TritonServer

PACED = {"TINY_ENGINE_STEP_DELAY_MS": "10", "TINY_ENGINE_FILL_IN_MIDDLE": "1"}


def completion(request_id, max_new_tokens=32, prefix="def add(a, b):\n    return ", suffix="\n\nprint(add(1, 2))\n"):
    infill = {"prefix": prefix, "suffix": suffix, "path": "calc.py", "language": "Python", "mode": "line",
              "references": []}
    # The same input set as a chat body (history included): Triton batches only requests with identical inputs.
    return {"prompt": "", "history": "[]", "infill": json.dumps(infill), "temperature": 0.0, "top_p": 0.8,
            "max_new_tokens": max_new_tokens, "id": request_id}


def steps_of(path):
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    step_log = tmp_path_factory.mktemp("steps") / "steps.jsonl"
    # Triton's queue delay of 20 ms (the committed config has 0: the idle engine gathers instead) hands the 8
    # completions to execute() together, so the batch composition below does not depend on how far apart a
    # loaded machine delivers them; spread arrivals joining at the next iteration: test_idle_gather_standin.py.
    with TritonServer(env={**PACED, "TINY_ENGINE_STEP_LOG": str(step_log)}, max_batch_size=16, queue_delay_us=20000) as srv:
        srv.load()
        srv.step_log = step_log
        yield srv


@pytest.fixture(scope="module")
def one_row_server():
    with TritonServer(env=PACED, parameters={"max_active_rows": "1", "max_waiting": "4"}) as srv:
        srv.load()
        yield srv


def test_8_completions_and_2_chat_streams_are_batched_together(server):
    chats = [OpenStream(server, body(f"tell me a long story {i}", 300, f"chat-{i}")) for i in range(2)]
    for chat in chats:
        for _ in range(3):
            assert chat.next_event() is not None
    before = len(steps_of(server.step_log))
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda i: stream(server, completion(f"fim-{i}", 32)), range(8)))
    passes = steps_of(server.step_log)[before:]
    for chat in chats:
        assert chat.rest()[-1]["completion_tokens"] == 300
    assert all(status == 200 and events[-1]["completion_tokens"] == 32 for status, events in results), results
    decode = [(p["decode"].count("completion"), p["decode"].count("chat")) for p in passes]
    # The batch composition per step: some steps hold all 8 completions beside the 2 chat rows.
    assert max(decode) == (8, 2), decode
    # The chat streams never pause for the completions: every pass while completions run has both chat rows.
    busy = [p for p in passes if "completion" in p["decode"] + p["prefill"]]
    assert busy and all(p["decode"].count("chat") == 2 for p in busy), passes
    for i in range(8):
        _, _, admitted, first, _ = wait_logged(server, f"fim-{i}")
        assert first - admitted <= 2, f"fim-{i}: first token at step {first}, admitted at step {admitted}"


def test_completions_are_admitted_before_waiting_chats_and_a_cancelled_one_frees_its_row_within_a_step(one_row_server):
    srv = one_row_server
    running = OpenStream(srv, completion("typing-1", 2000))  # a completion the next keystroke will cancel
    for _ in range(3):
        assert running.next_event() is not None
    results = {}

    def send(name, payload):
        results[name] = stream(srv, payload)

    chat = threading.Thread(target=send, args=("chat", body("a chat question that came first", 20, "queued-chat")))
    chat.start()
    deadline = time.monotonic() + 30
    while metric(srv, "chatglm3_waiting_requests") != 1:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    later = threading.Thread(target=send, args=("completion", completion("typing-2", 16)))
    later.start()
    while metric(srv, "chatglm3_waiting_requests") != 2:
        assert time.monotonic() < deadline
        time.sleep(0.02)
    running.close()  # the next keystroke: the editor cancels the request on the server
    chat.join(120)
    later.join(120)
    assert results["completion"][0] == 200 and results["completion"][1][-1]["completion_tokens"] == 16
    assert results["chat"][0] == 200 and results["chat"][1][-1]["completion_tokens"] == 20
    reason, tokens, _, _, left_at = wait_logged(srv, "typing-1")
    assert reason == "cancelled" and tokens < 2000
    completion_admitted = wait_logged(srv, "typing-2")[2]
    chat_admitted = wait_logged(srv, "queued-chat")[2]
    assert completion_admitted <= left_at + 1, f"the row freed at step {left_at} was taken at step {completion_admitted}"
    assert completion_admitted < chat_admitted  # it arrived later, but a completion goes first
