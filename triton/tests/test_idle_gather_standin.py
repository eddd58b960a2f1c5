"""The continuous scheduler's gather at an idle engine (`idle_gather_ms`, ContinuousScheduler._gather), under the
pb_utils stand-in, counted in decode steps and gathers, never in time: Triton's own queue delay is 0 for this
scheduler, so requests reach execute() one by one as Triton would hand them, and only the engine waits, only when
idle, never for a code completion."""
import json
import time

import pytest

from harness import load_model, make_request, outcome_of, wait_for_finals
from test_scheduler_standin import finished, wait_until

LONG = "10000"  # the longest window (10 s): a burst that fills the rows must end the gather long before it


def infill():
    return json.dumps({"prefix": "def f():\n    ", "suffix": "\n", "path": "a.py", "language": "Python", "mode": "line"})


def one_by_one(model, requests, pause=0.02):
    """Each request in its own execute(), a little apart: the engine thread wakes up on the first."""
    for r in requests:
        model.execute([r])
        time.sleep(pause)


@pytest.fixture
def paced(monkeypatch):
    monkeypatch.setenv("TINY_ENGINE_STEP_DELAY_MS", "2")


def test_a_burst_at_an_idle_engine_is_admitted_in_one_iteration(paced):
    # Fails without the gather: the first request is admitted alone, the others one iteration later or more.
    m = load_model(max_active_rows="4", idle_gather_ms=LONG)
    try:
        burst = [make_request(f"burst {i}", request_id=f"b{i}", temperature=0.0, max_new_tokens=6) for i in range(4)]
        one_by_one(m, burst)  # the fourth fills the free rows: the gather ends there, not at the window
        wait_for_finals(burst)
        gathers = m.scheduler.gathers
    finally:
        m.finalize()
    assert [outcome_of(r).completion_tokens for r in burst] == [6] * 4
    steps = [finished(f"b{i}")[3:5] for i in range(4)]  # (admitted, first token) in decode steps
    assert steps == [steps[0]] * 4, steps
    assert gathers == 1


def test_a_burst_smaller_than_the_rows_is_gathered_until_the_window_ends(paced):
    m = load_model(max_active_rows="4", idle_gather_ms="500")
    try:
        pair = [make_request(f"pair {i}", request_id=f"p{i}", temperature=0.0, max_new_tokens=6) for i in range(2)]
        one_by_one(m, pair)
        wait_for_finals(pair)
        gathers = m.scheduler.gathers
    finally:
        m.finalize()
    assert finished("p0")[3:5] == finished("p1")[3:5]
    assert gathers == 1


def test_a_completion_at_an_idle_engine_is_not_held(paced):
    m = load_model(max_active_rows="4", idle_gather_ms=LONG, fill_in_middle="on")
    try:
        alone = make_request("", request_id="c", infill=infill(), temperature=0.0, max_new_tokens=4)
        m.execute([alone])
        wait_for_finals([alone])
        held_alone = m.scheduler.gathers
        # A chat starts a gather; a completion arriving during it ends the gather: both go in the next iteration.
        chat, completion = (make_request("chat", request_id="h", temperature=0.0, max_new_tokens=4),
                            make_request("", request_id="k", infill=infill(), temperature=0.0, max_new_tokens=4))
        one_by_one(m, [chat, completion])
        wait_for_finals([chat, completion])
        gathers = m.scheduler.gathers
    finally:
        m.finalize()
    assert outcome_of(alone).error is None and held_alone == 0
    assert outcome_of(chat).error is None and outcome_of(completion).error is None
    assert finished("h")[3] == finished("k")[3] and gathers == 1


def test_requests_arriving_while_rows_run_join_at_the_next_iteration_without_a_gather(paced):
    m = load_model(max_active_rows="4", idle_gather_ms="200", fill_in_middle="on")
    try:
        runner = make_request("keep going", request_id="runner", temperature=0.0, max_new_tokens=300)
        m.execute([runner])
        wait_until(lambda: len(runner.sender.responses) >= 3)
        gathered_for_runner = m.scheduler.gathers
        joined = {}
        for rid, request in (("joins-c", make_request("", request_id="joins-c", infill=infill(), max_new_tokens=4)),
                             ("joins-h", make_request("join", request_id="joins-h", max_new_tokens=4))):
            joined[rid] = (m.scheduler.steps, request)
            m.execute([request])
            wait_for_finals([request])
        wait_for_finals([runner])
        gathers = m.scheduler.gathers
    finally:
        m.finalize()
    assert gathered_for_runner == 1  # the runner arrived at an idle engine
    for rid, (step_at_submit, request) in joined.items():
        assert outcome_of(request).error is None
        # admitted in the iteration after the one running at submit (whose step may still have been counted)
        assert finished(rid)[3] <= step_at_submit + 1, (rid, finished(rid), step_at_submit)
    assert gathers == gathered_for_runner
    assert outcome_of(runner).completion_tokens == 300
