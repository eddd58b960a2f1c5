"""Two model instances in one REAL tritonserver (2.51, CPU, tiny engine paced at 10 ms per step), as
tritonChatglm.gpus = two GPUs renders them: each instance has its own engine and continuous scheduler, and one
execute() takes at most rows ÷ instances requests (renderConfig.ts, tritonMaxBatchSize), so a burst reaches both.

Which instance served a request is counted from /metrics: every series of model.py carries its instance's name
(chatglm3-6b_0_0, chatglm3-6b_0_1), and chatglm3_first_tokens_total counts the requests each instance answered.
"""
import re
import threading
import time
from collections import Counter

import pytest

from test_scheduler_server import PACED, OpenStream, body, stream, wait_logged
from triton_server import MODEL, TritonServer

SERIES = re.compile(r'^(\w+)\{([^}]*)\} ([0-9.e+-]+)$', re.M)


def per_instance(server, name):
    """instance name → value of one of model.py's metrics."""
    out = {}
    for metric, labels, value in SERIES.findall(server.metrics()):
        fields = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        if metric == name and fields.get("model") == MODEL:
            out[fields["instance"]] = float(value)
    return out


def both_generate(server, rows):
    active = per_instance(server, "chatglm3_active_rows")
    return sum(active.values()) == rows and len(active) == 2 and all(v > 0 for v in active.values())


def wait_for(condition, what, server, timeout=30):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{what}\n{server.log()[-3000:]}"
        time.sleep(0.02)


@pytest.fixture(scope="module")
def two():
    # 8 rows per instance, 4 requests per execute(): what the extension renders for maxBatchSize 8 on two GPUs.
    with TritonServer(env=PACED, instance_count=2, max_batch_size=4, parameters={"max_active_rows": "8"}) as srv:
        srv.load()
        yield srv


def test_both_instances_load_with_their_own_engine_and_scheduler(two):
    started = re.findall(r"chatglm3: engine tiny_engine:TinyEngine on cpu, scheduler continuous", two.log())
    assert len(started) == 2, two.log()[-3000:]
    assert sorted(per_instance(two, "chatglm3_active_rows")) == [f"{MODEL}_0_0", f"{MODEL}_0_1"]
    # Each series says where its instance runs (cuda:N on a GPU), for the per-instance rows of the clients.
    assert len(re.findall(r'^chatglm3_active_rows\{[^}]*device="cpu"[^}]*\}', two.metrics(), re.M)) == 2


def test_eight_concurrent_streams_are_spread_over_both_instances(two):
    before = per_instance(two, "chatglm3_first_tokens_total")
    results = [None] * 8
    opened = []

    def run(i):
        s = OpenStream(two, body(f"concurrent question {i}", 150))
        opened.append(s)
        assert s.next_event() is not None
        results[i] = s

    threads = [threading.Thread(target=run, args=(i,)) for i in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    assert all(results), "every stream got its first token"
    # All 8 generate at once (150 tokens at 10 ms a step: still running), and on both instances (the gauges are
    # published between steps, so they are polled).
    wait_for(lambda: both_generate(two, 8), "8 rows generating, on both instances", two)
    events = [s.rest() for s in results]
    assert all(e[-1].get("completion_tokens") == 150 for e in events), [e[-1] for e in events]
    after = per_instance(two, "chatglm3_first_tokens_total")
    served = {k: after[k] - before.get(k, 0) for k in after}
    print("requests served per instance:", served)
    assert sum(served.values()) == 8 and len(served) == 2 and all(n >= 1 for n in served.values()), served


def test_one_by_one_requests_alternate_between_the_instances(two):
    before = per_instance(two, "chatglm3_first_tokens_total")
    for i in range(6):
        status, events = stream(two, body(f"sequential {i}", 5))
        assert status == 200 and events[-1]["completion_tokens"] == 5
    after = per_instance(two, "chatglm3_first_tokens_total")
    served = Counter({k: after[k] - before.get(k, 0) for k in after})
    assert sum(served.values()) == 6 and min(served.values()) >= 1, served


@pytest.fixture(scope="module")
def one_row_each():
    with TritonServer(env=PACED, instance_count=2, max_batch_size=1,
                      parameters={"max_active_rows": "1", "max_waiting": "2"}) as srv:
        srv.load()
        yield srv


def test_cancel_frees_the_row_on_either_instance(one_row_each):
    srv = one_row_each
    cancelled_before = per_instance(srv, "chatglm3_cancelled_requests_total")
    leavers = []
    for i in range(2):  # one long answer per instance: each instance's only row is taken
        s = OpenStream(srv, body(f"I will leave early {i}", 2000, f"leaver-{i}"))
        assert s.next_event() is not None
        leavers.append(s)
    wait_for(lambda: per_instance(srv, "chatglm3_active_rows") == {f"{MODEL}_0_0": 1, f"{MODEL}_0_1": 1},
             "both rows taken, one on each instance", srv)
    waiting = {}
    workers = [threading.Thread(target=lambda i=i: waiting.update({i: stream(srv, body(f"my turn {i}", 20, f"next-{i}"))}))
               for i in range(2)]
    for w in workers:
        w.start()
    wait_for(lambda: sum(per_instance(srv, "chatglm3_waiting_requests").values()) == 2, "two requests wait for a row", srv)
    for s in leavers:  # the clients go away mid-stream
        s.close()
    for w in workers:
        w.join(120)
    assert [waiting[i][1][-1].get("completion_tokens") for i in range(2)] == [20, 20], waiting
    for i in range(2):
        reason, tokens, _, _, _ = wait_logged(srv, f"leaver-{i}")
        assert reason == "cancelled" and tokens < 2000
    cancelled = per_instance(srv, "chatglm3_cancelled_requests_total")
    assert {k: cancelled[k] - cancelled_before.get(k, 0) for k in cancelled} == {f"{MODEL}_0_0": 1, f"{MODEL}_0_1": 1}
    wait_for(lambda: set(per_instance(srv, "chatglm3_active_rows").values()) == {0}, "every row free again", srv)


def test_unload_ends_every_stream_on_both_instances_exactly_once(two):
    streams = [OpenStream(two, body(f"unload me {i}", 400)) for i in range(8)]
    for s in streams:
        assert s.next_event() is not None
    wait_for(lambda: both_generate(two, 8), "8 rows generating, on both instances", two)
    two.unload()
    for events in (s.rest() for s in streams):
        finals = [e for e in events if "finish_reason" in e or "error" in e]
        assert len(finals) == 1 and finals[0] is events[-1], events[-3:]
        assert finals[0].get("error", "").startswith("model unloaded"), finals[0]
    two.wait_state("UNAVAILABLE", timeout=60)
    assert two.log().count("chatglm3: finalized") == 2
