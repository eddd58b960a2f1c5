"""The continuous scheduler on the REAL tritonserver (2.51, CPU): the native engine's forward pass, KV cache and
scheduler on the tiny random model, paced at 10 ms per forward pass so that steps can be counted.

Steps, not time: every finished request logs `admitted at step a, first token at step f, finished at step e`
(decode steps of the engine thread), and /metrics counts decode steps, rows per step and generated tokens.
"""
import http.client
import json
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from triton_server import MODEL, TritonServer, parse_sse

STREAM = f"/v2/models/{MODEL}/generate_stream"
PACED = {"TINY_ENGINE_STEP_DELAY_MS": "10", "TINY_ENGINE_FAIL_MARKER": "EXPLODE"}
FINISHED = re.compile(r"request (\S+) (\w+) after (\d+) tokens \(prompt \d+ tokens; admitted at step (\d+), "
                      r"first token at step (\d+), finished at step (\d+)")


def body(prompt, max_new_tokens, request_id=None, temperature=0.0):
    out = {"prompt": prompt, "history": "[]", "temperature": temperature, "top_p": 0.8, "max_new_tokens": max_new_tokens}
    if request_id:
        out["id"] = request_id
    return out


def stream(server, payload, timeout=180):
    status, raw = server.request("POST", STREAM, payload, timeout=timeout)
    return status, parse_sse(raw)


def text_of(events):
    return "".join(e.get("response", "") for e in events)


class OpenStream:
    """A /generate_stream request read event by event (to act while it is still generating)."""

    def __init__(self, server, payload):
        self.conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=120)
        self.conn.request("POST", STREAM, body=json.dumps(payload), headers={"Content-Type": "application/json"})
        self.response = self.conn.getresponse()
        self.buffer = b""
        self.events = []

    def next_event(self):
        while b"\n\n" not in self.buffer:
            chunk = self.response.read1(65536)
            if not chunk:
                return None
            self.buffer += chunk
        block, self.buffer = self.buffer.split(b"\n\n", 1)
        event = json.loads(block.decode("utf-8")[len("data:"):].strip())
        self.events.append(event)
        return event

    def rest(self):
        while self.next_event() is not None:
            pass
        self.conn.close()
        return self.events

    def close(self):
        self.conn.close()


def finished_lines(server):
    """request id → (finish reason, tokens, admitted step, first-token step, finished step)."""
    return {m.group(1): (m.group(2), int(m.group(3)), int(m.group(4)), int(m.group(5)), int(m.group(6)))
            for m in FINISHED.finditer(server.log())}


def wait_logged(server, request_id, timeout=30):
    deadline = time.monotonic() + timeout
    while request_id not in finished_lines(server):
        assert time.monotonic() < deadline, server.log()[-3000:]
        time.sleep(0.05)
    return finished_lines(server)[request_id]


def metric(server, name):
    match = re.search(rf'^{name}\{{[^}}]*model="{MODEL}"[^}}]*\}} ([0-9.e+]+)$', server.metrics(), re.M)
    return float(match.group(1)) if match else None


@pytest.fixture(scope="module")
def server():
    with TritonServer(env=PACED) as srv:  # the committed config: max_active_rows 8, max_waiting 32
        srv.load()
        yield srv


@pytest.fixture(scope="module")
def one_row_server():
    with TritonServer(env=PACED, parameters={"max_active_rows": "1", "max_waiting": "2"}) as srv:
        srv.load()
        yield srv


def test_greedy_answer_is_the_same_alone_in_a_batch_of_8_and_joining_mid_answer(server):
    probe = body("the probe question", 40)
    status, alone = stream(server, probe)
    assert status == 200 and alone[-1]["completion_tokens"] == 40
    with ThreadPoolExecutor(8) as pool:
        batch = list(pool.map(lambda b: stream(server, b),
                              [probe] + [body(f"other question {i} " + "x" * (5 * i), 30 + 7 * i) for i in range(7)]))
    assert all(status == 200 for status, _ in batch)
    long = OpenStream(server, body("a long answer is running", 400, "join-long"))
    for _ in range(5):
        assert long.next_event() is not None
    status, joined = stream(server, dict(probe, id="join-probe"))
    long.rest()
    assert status == 200
    assert text_of(alone) == text_of(batch[0][1]) == text_of(joined) != ""
    reason, _, admitted, _, _ = wait_logged(server, "join-probe")
    long_finished = wait_logged(server, "join-long")[4]
    assert reason == "length" and long_finished > admitted  # it really joined while the long answer ran


def test_late_request_gets_its_first_token_within_2_steps_of_admission(server):
    long = OpenStream(server, body("write a long essay", 400, "late-long"))
    for _ in range(3):
        assert long.next_event() is not None
    status, events = stream(server, body("a short question", 16, "late-short"))
    assert status == 200 and events[-1]["completion_tokens"] == 16
    long_events = long.rest()
    assert long_events[-1]["completion_tokens"] == 400
    _, _, admitted, first, _ = wait_logged(server, "late-short")
    _, _, long_admitted, _, long_finished = wait_logged(server, "late-long")
    assert long_finished - admitted >= 100, "the long row still had 100 or more steps to go"
    assert admitted > long_admitted
    assert first - admitted <= 2, f"first token at step {first}, admitted at step {admitted}"


def test_finished_rows_cost_nothing(server):
    before = {k: metric(server, k) for k in ("chatglm3_decode_rows_total", "chatglm3_generated_tokens_total",
                                             "chatglm3_first_tokens_total", "chatglm3_decode_steps_total")}
    with ThreadPoolExecutor(2) as pool:
        results = list(pool.map(lambda b: stream(server, b), [body("short one", 16, "cost-16"), body("long one", 400, "cost-400")]))
    assert [r[1][-1]["completion_tokens"] for r in results] == [16, 400]
    wait_logged(server, "cost-400")
    after = {k: metric(server, k) for k in before}
    delta = {k: after[k] - before[k] for k in before}
    # Every decode step gives each row in it one token, and each row's first token comes from its prefill: so the
    # rows summed over steps are exactly the generated tokens minus one per admission — none for finished rows.
    assert delta["chatglm3_generated_tokens_total"] == 416
    assert delta["chatglm3_first_tokens_total"] == 2
    assert delta["chatglm3_decode_rows_total"] == 416 - 2
    admitted = [wait_logged(server, r)[2] for r in ("cost-16", "cost-400")]
    # 399 steps for the long row's other tokens, plus the steps between the two admissions; a row admitted while
    # the other decodes takes its first token in that step's own pass (step_with_chunks), not in a pass before it:
    # one step more then.
    gap = abs(admitted[1] - admitted[0])
    assert 399 <= delta["chatglm3_decode_steps_total"] <= 399 + gap + (1 if gap else 0)


def test_an_engine_error_fails_only_the_open_rows_and_the_next_request_succeeds(server):
    failures_before = metric(server, "chatglm3_generated_tokens_total")
    bystander = OpenStream(server, body("an innocent long answer", 300, "bystander"))
    assert bystander.next_event() is not None
    status, exploded = stream(server, body("EXPLODE please", 50, "exploder"))
    rest = bystander.rest()
    assert exploded[-1].get("error", "").startswith("generation failed: injected engine failure"), exploded[-1]
    assert rest[-1].get("error", "").startswith("generation failed"), rest[-1]
    assert sum("error" in e for e in rest) == 1 and "finish_reason" not in rest[-1]
    status, after = stream(server, body("are you still there", 20))
    assert status == 200 and after[-1]["finish_reason"] == "length" and after[-1]["completion_tokens"] == 20
    assert "engine failure with 2 open rows" in server.log()
    assert metric(server, "chatglm3_generated_tokens_total") >= failures_before + 20


def test_cancel_frees_the_slot_by_the_next_step(one_row_server):
    srv = one_row_server
    leaver = OpenStream(srv, body("I will leave early", 2000, "leaver"))
    for _ in range(3):
        assert leaver.next_event() is not None
    waiting = {}
    worker = threading.Thread(target=lambda: waiting.update(result=stream(srv, body("my turn next", 20, "next-in-line"))))
    worker.start()
    deadline = time.monotonic() + 30
    while metric(srv, "chatglm3_waiting_requests") != 1:  # the only row is taken: it waits
        assert time.monotonic() < deadline
        time.sleep(0.02)
    leaver.close()  # the client goes away mid-stream
    worker.join(120)
    status, events = waiting["result"]
    assert status == 200 and events[-1]["completion_tokens"] == 20
    reason, tokens, _, _, left_at = wait_logged(srv, "leaver")
    assert reason == "cancelled" and tokens < 2000
    admitted = wait_logged(srv, "next-in-line")[2]
    assert admitted <= left_at + 1, f"the freed slot was taken at step {admitted}, the row left at step {left_at}"


def test_a_full_waiting_queue_refuses_with_server_busy(one_row_server):
    srv = one_row_server
    busy_before = metric(srv, "chatglm3_rejected_busy_total") or 0
    running = OpenStream(srv, body("hold the only row", 300))
    assert running.next_event() is not None
    with ThreadPoolExecutor(4) as pool:
        queued = [pool.submit(stream, srv, body(f"queued {i}", 5)) for i in range(2)]
        deadline = time.monotonic() + 30
        while metric(srv, "chatglm3_waiting_requests") != 2:
            assert time.monotonic() < deadline
            time.sleep(0.02)
        refused = [stream(srv, body(f"one too many {i}", 5)) for i in range(2)]
        for status, events in refused:
            assert status != 200 and "server busy" in events[-1]["error"], events
        running.rest()
        assert all(f.result()[1][-1]["completion_tokens"] == 5 for f in queued)
    assert metric(srv, "chatglm3_rejected_busy_total") == busy_before + 2


def test_unload_during_8_streams_ends_each_with_one_final_and_reaches_unavailable(server):
    streams = [OpenStream(server, body(f"unload me {i}", 400)) for i in range(8)]
    for s in streams:
        assert s.next_event() is not None  # all 8 are generating, each with hundreds of steps to go
    server.unload()
    results = [s.rest() for s in streams]
    for events in results:
        finals = [e for e in events if "finish_reason" in e or "error" in e]
        assert len(finals) == 1 and finals[0] is events[-1], events[-3:]
        # Triton finalizes a model only when every stream has its FINAL: the scheduler notices the unload (the
        # model is no longer ready) and ends them instead of letting the unload wait for 400-token answers.
        assert finals[0].get("error", "").startswith("model unloaded"), finals[0]
    server.wait_state("UNAVAILABLE", timeout=60)
    assert "chatglm3: finalized" in server.log()
