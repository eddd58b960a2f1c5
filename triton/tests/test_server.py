"""model.py on the REAL tritonserver (2.51, CPU, tiny engine) under both schedulers: warmup, batching, streaming,
bad input, cancellation over HTTP, unload, non-decoupled /infer and /generate. (The continuous scheduler's own
behaviour — joining mid-answer, queue bound, unload and engine failure mid-stream — is test_scheduler_server.py.)"""
import http.client
import json
import re
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from triton_server import MODEL, TritonServer, parse_sse

ROOT = Path(__file__).resolve().parents[2]
WARMUP = json.loads((ROOT / "triton" / "warmup_requests.json").read_text(encoding="utf-8"))
STREAM = f"/v2/models/{MODEL}/generate_stream"


SCHEDULERS = ["continuous", "per_execute"]


@pytest.fixture(scope="module", params=SCHEDULERS)
def scheduler(request):
    return request.param


@pytest.fixture(scope="module")
def server(tmp_path_factory, scheduler):
    log = tmp_path_factory.mktemp("prompts") / "prompts.jsonl"
    # A small per-step delay keeps a batch busy long enough for the next requests to queue behind it.
    srv = TritonServer(max_batch_size=4, parameters={"scheduler": scheduler},
                       env={"TINY_ENGINE_STEP_DELAY_MS": "4", "TINY_ENGINE_PROMPT_LOG": str(log)})
    srv.prompt_log = log
    with srv:
        srv.load()
        yield srv


def stream(server, body, timeout=120):
    status, raw = server.request("POST", STREAM, body, timeout=timeout)
    return status, parse_sse(raw)


def settled_stats(server, inference_count, timeout=30):
    """Statistics are recorded when execute() returns, which can be just after the last FINAL was streamed."""
    deadline = time.monotonic() + timeout
    while True:
        stats = server.stats()
        if stats["inference_count"] >= inference_count or time.monotonic() > deadline:
            return stats
        time.sleep(0.1)


def quiet_stats(server, polls=3, interval=0.1):
    """Statistics once the previous test's last execute() has been recorded (no change over a few polls)."""
    last = server.stats()
    same = 0
    while same < polls:
        time.sleep(interval)
        current = server.stats()
        same = same + 1 if current["inference_count"] == last["inference_count"] else 0
        last = current
    return last


def metric_value(text, name):
    match = re.search(rf'^{name}\{{[^}}]*model="{MODEL}"[^}}]*\}} ([0-9.e+]+)$', text, re.M)
    return float(match.group(1)) if match else None


def test_load_ran_the_batched_warmup(server):
    assert server.model_state()["state"] == "READY"
    rows = [json.loads(line) for line in server.prompt_log.read_text(encoding="utf-8").splitlines()]
    warmup = [r for r in rows if r["messages"][-2]["content"] == WARMUP["prompt"]]
    assert len(warmup) == 2  # batch_size 2, one execute()
    expected = [{"role": m["role"], "metadata": "", "content": m["content"]} for m in WARMUP["history"]]
    assert warmup[0]["messages"][:-2] == expected
    assert warmup[0]["prompt"].startswith("[gMASK]sop<|system|>\n") and warmup[0]["prompt"].endswith("<|assistant|>")


def test_stream_sends_deltas_then_one_final_with_all_outputs(server):
    status, events = stream(server, {"prompt": "你好", "max_new_tokens": 40, "temperature": 0})
    assert status == 200
    *deltas, final = events
    assert deltas and all(set(e) == {"model_name", "model_version", "response"} for e in deltas)
    assert set(final) >= {"response", "history", "finish_reason", "prompt_tokens", "completion_tokens", "history_trimmed"}
    history = json.loads(final["history"])
    assert history[-2] == {"role": "user", "content": "你好"}
    assert "".join(e["response"] for e in events) == history[-1]["content"]
    assert final["finish_reason"] == "length" and final["completion_tokens"] == 40 and final["history_trimmed"] == 0
    assert all("\ufffd" not in e["response"] for e in events)


def scheduler_counts(server):
    text = server.metrics()
    return {name: metric_value(text, name) or 0.0 for name in ("chatglm3_decode_steps_total", "chatglm3_decode_rows_total")}


def test_concurrent_streams_are_executed_in_batches(server, scheduler):
    before = quiet_stats(server)
    steps_before = scheduler_counts(server)
    with ThreadPoolExecutor(10) as pool:
        results = list(pool.map(lambda i: stream(server, {"prompt": f"request {i}", "max_new_tokens": 30 + i}), range(10)))
    after = settled_stats(server, before["inference_count"] + 10)
    for i, (status, events) in enumerate(results):
        assert status == 200
        finals = [e for e in events if "finish_reason" in e]
        assert len(finals) == 1 and finals[0] is events[-1]
        assert finals[0]["completion_tokens"] == 30 + i  # each row kept its own max_new_tokens
    inferences = after["inference_count"] - before["inference_count"]
    assert inferences == 10
    sizes = {b["batch_size"]: b["compute_infer"]["count"] for b in after["batch_stats"]}
    assert max(sizes) <= 4
    if scheduler == "per_execute":  # Triton's dynamic batcher is its batching: requests share one execute()
        old = {b["batch_size"]: b["compute_infer"]["count"] for b in before["batch_stats"]}
        assert after["execution_count"] - before["execution_count"] < inferences
        assert any(size > 1 and count > old.get(size, 0) for size, count in sizes.items())
        return
    # continuous: Triton hands requests over as they come (queue delay 0); the batching is the scheduler's own, its
    # decode steps generate for several rows at once (4 rows; a request at a time would give 1.0).
    deadline = time.monotonic() + 10
    while True:  # the engine hands its figures over when it goes idle
        steps_after = scheduler_counts(server)
        done = steps_after["chatglm3_decode_rows_total"] - steps_before["chatglm3_decode_rows_total"]
        if done >= sum(30 + i - 1 for i in range(10)) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    steps = steps_after["chatglm3_decode_steps_total"] - steps_before["chatglm3_decode_steps_total"]
    assert done >= sum(30 + i - 1 for i in range(10))  # every token after each row's first comes from a decode step
    assert done / steps > 2, f"{done} rows in {steps} decode steps"


def test_bad_request_in_a_batch_fails_alone(server, scheduler):
    before = quiet_stats(server)
    # Triton batches only requests that carry the same set of inputs, so every body names the same four.
    def body(prompt, history="[]", top_p=0.8, max_new_tokens=8):
        return {"prompt": prompt, "history": history, "top_p": top_p, "max_new_tokens": max_new_tokens}

    # The blocker occupies the instance (250 paced steps: a second at least) while the other four, sent together once
    # it runs, queue behind it: they reach execute() as one batch of four however loaded the machine is.
    bodies = [body("blocker", max_new_tokens=250),
              body("good a"), body("bad", top_p=5.0), body("good b", max_new_tokens=9),
              body("bad history", history='[{"role": 1}]')]
    with ThreadPoolExecutor(len(bodies)) as pool:
        futures = [pool.submit(stream, server, bodies[0])]
        time.sleep(0.3)
        futures += [pool.submit(stream, server, b) for b in bodies[1:]]
        results = [f.result() for f in futures]
    assert [r[0] for r in results] == [200, 200, 400, 200, 400]
    assert "top_p" in results[2][1][0]["error"]
    assert "history[0].role" in results[4][1][0]["error"]
    assert results[1][1][-1]["completion_tokens"] == 8 and results[3][1][-1]["completion_tokens"] == 9
    counts_before = {b["batch_size"]: b["compute_infer"]["count"] for b in before["batch_stats"]}
    after = settled_stats(server, before["inference_count"] + 5)["batch_stats"]
    if scheduler == "per_execute":  # continuous: execute() returns at once, nothing queues behind the blocker
        assert any(b["batch_size"] == 4 and b["compute_infer"]["count"] > counts_before.get(4, 0) for b in after), after
    assert metric_value(server.metrics(), "chatglm3_invalid_requests_total") >= 2


def test_closing_the_connection_cancels_only_that_request(server):
    before = metric_value(server.metrics(), "chatglm3_cancelled_requests_total") or 0
    other = {}
    worker = threading.Thread(target=lambda: other.update(result=stream(server, {"prompt": "stay", "max_new_tokens": 200})))
    conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=60)
    body = json.dumps({"prompt": "leave early", "max_new_tokens": 2000})
    conn.request("POST", STREAM, body=body, headers={"Content-Type": "application/json"})
    worker.start()
    response = conn.getresponse()
    assert response.status == 200
    received = b""
    while received.count(b"\n\n") < 3:
        received += response.read1(4096)
    conn.close()  # the client goes away mid-stream
    worker.join(120)
    status, events = other["result"]
    assert status == 200 and events[-1]["finish_reason"] == "length" and events[-1]["completion_tokens"] == 200
    deadline = time.monotonic() + 30
    while (metric_value(server.metrics(), "chatglm3_cancelled_requests_total") or 0) < before + 1:
        assert time.monotonic() < deadline, server.log()[-3000:]
        time.sleep(0.2)
    logged = [int(n) for n in re.findall(r"cancelled after (\d+) tokens", server.log())]
    assert logged and logged[-1] < 2000  # the row stopped early instead of running to its max_new_tokens
    generated = metric_value(server.metrics(), "chatglm3_generated_tokens_total")
    assert generated is not None and generated > 0


def test_unload_reaches_unavailable_and_finalizes(server):
    server.unload()
    entry = server.wait_state("UNAVAILABLE", timeout=60)
    assert entry.get("reason") == "unloaded"
    assert "chatglm3: finalized" in server.log()


def test_not_decoupled_infer_and_generate_answer_once_per_request(scheduler):
    with TritonServer(max_batch_size=4, decoupled=False, parameters={"scheduler": scheduler}) as srv:
        srv.load()
        body = {"inputs": [
            {"name": "prompt", "datatype": "BYTES", "shape": [1, 1], "data": ["hello"]},
            {"name": "max_new_tokens", "datatype": "INT64", "shape": [1, 1], "data": [12]},
            {"name": "temperature", "datatype": "FP32", "shape": [1, 1], "data": [0.0]},
        ]}
        status, raw = srv.request("POST", f"/v2/models/{MODEL}/infer", body)
        assert status == 200, raw
        outputs = {o["name"]: o["data"][0] for o in json.loads(raw)["outputs"]}
        assert outputs["completion_tokens"] == 12 and outputs["finish_reason"] == "length"
        assert outputs["response"] == json.loads(outputs["history"])[-1]["content"] != ""

        status, raw = srv.request("POST", f"/v2/models/{MODEL}/generate", {"prompt": "hello", "max_new_tokens": 12, "temperature": 0})
        assert status == 200, raw
        assert json.loads(raw)["response"] == outputs["response"]  # same greedy answer through /generate

        with ThreadPoolExecutor(4) as pool:
            results = list(pool.map(lambda b: srv.request("POST", f"/v2/models/{MODEL}/generate", b), [
                {"prompt": "one", "max_new_tokens": 5}, {"prompt": "two", "max_new_tokens": -1},
                {"prompt": "three", "max_new_tokens": 7}, {"prompt": "", "max_new_tokens": 7}]))
        assert [r[0] for r in results] == [200, 400, 200, 400]
        assert json.loads(results[0][1])["completion_tokens"] == 5 and json.loads(results[2][1])["completion_tokens"] == 7
        assert "max_new_tokens" in json.loads(results[1][1])["error"]
        assert "prompt" in json.loads(results[3][1])["error"]

        srv.unload()
        srv.wait_state("UNAVAILABLE")
