"""Unload and server exit under the pb_utils stand-in: once finalize() began, nothing of the model calls into the
stub any more (no metric write, no readiness question, no send from a thread finalize gave up on), and the
stub's metric objects are freed inside finalize(), not at the stub's teardown, where the real stub segfaults
(chatglm/serving/metrics.py, Metrics.close; triton/README.md)."""
import threading
import time
import weakref

import pytest
import triton_python_backend_utils as pb

from harness import load_model, make_request, outcome_of, wait_for_finals
from tiny_engine import TinyEngine
from chatglm.serving.responder import Responder


class GateEngine(TinyEngine):
    """The tiny engine whose decode steps stop at a gate once it is closed: finalize can begin while the engine
    thread is inside a step."""

    in_step = threading.Event()
    gate = threading.Event()

    def decode_step(self, slots, tokens):
        if not GateEngine.gate.is_set():
            GateEngine.in_step.set()
            GateEngine.gate.wait()
        return super().decode_step(slots, tokens)


@pytest.fixture
def gate():
    GateEngine.in_step.clear()
    GateEngine.gate.set()
    yield GateEngine
    GateEngine.gate.set()
    pb.stub_phase("running")


def new_metrics(load):
    """Weak references to the metrics that `load()` created (strong ones would keep them alive), and its result."""
    before = {id(m) for m in pb.MetricFamily.live}
    result = load()
    return [weakref.ref(m) for m in list(pb.MetricFamily.live) if id(m) not in before], result


def alive(refs):
    return [r for r in refs if r() is not None]


def test_no_metric_is_written_or_left_alive_once_finalize_began_while_the_engine_thread_generates(gate):
    mine, m = new_metrics(lambda: load_model(engine=f"{__name__}:GateEngine", max_active_rows="2"))
    assert len(mine) >= 12  # every family of chatglm/serving/metrics.py
    reqs = [make_request(f"s{i}", max_new_tokens=2000) for i in range(3)]  # 2 rows generating, 1 waiting
    m.execute(reqs)
    wait_for_steps = lambda: len(reqs[0].sender.responses) > 3 and len(reqs[1].sender.responses) > 3  # noqa: E731
    while not wait_for_steps():
        gate.in_step.wait(0.01)
    late_before = pb.MetricFamily.late_writes
    gate.gate.clear()
    gate.in_step.clear()
    assert gate.in_step.wait(30)  # the engine thread is inside a decode step, figures still to send
    pb.stub_phase("finalizing")
    gate.gate.set()  # the step goes on while finalize begins
    m.finalize()
    pb.stub_phase("torn_down")
    outs = [outcome_of(r) for r in reqs]
    assert [o.finals for o in outs] == [1, 1, 1]
    assert all(o.error.message().startswith("model unloaded") for o in outs)
    assert pb.MetricFamily.late_writes == late_before
    # Freed inside finalize (while the real stub can still tell the server), not left to the stub's teardown.
    assert alive(mine) == []


@pytest.mark.parametrize("scheduler", ["continuous", "per_execute"])
def test_finalize_frees_the_metrics_of_either_scheduler(scheduler):
    mine, m = new_metrics(lambda: load_model(scheduler=scheduler))
    req = make_request("x", max_new_tokens=3)
    out = m.execute([req])
    if out is None:
        wait_for_finals([req])
    pb.stub_phase("finalizing")
    try:
        late_before = pb.MetricFamily.late_writes
        m.finalize()
    finally:
        pb.stub_phase("running")
    assert mine and alive(mine) == []
    assert pb.MetricFamily.late_writes == late_before


def test_a_failed_initialize_frees_its_metrics(monkeypatch):
    """The stub does not call finalize() after a failed initialize(): the metrics are freed before it raises."""
    from chatglm.serving.continuous_scheduler import ContinuousScheduler

    def broken(self, *args, **kwargs):
        raise RuntimeError("scheduler broke")

    monkeypatch.setattr(ContinuousScheduler, "__init__", broken)
    before = {id(m) for m in pb.MetricFamily.live}
    with pytest.raises(RuntimeError, match="scheduler broke") as failure:
        load_model()
    # The traceback holds the model instance, as the real stub does until its teardown.
    assert failure.traceback and [m for m in pb.MetricFamily.live if id(m) not in before] == []


def test_a_responder_that_finalize_gave_up_on_does_nothing_more():
    """close() waits `timeout` for the thread (an IPC call may hang); after that it must not send or write."""
    stuck, done = threading.Event(), []
    responder = Responder()
    responder.call(stuck.wait)
    responder.call(lambda: done.append("metrics written"))
    assert responder.close(timeout=0.01) is False  # the first job is stuck
    stuck.set()
    responder._thread.join(30)
    assert not responder._thread.is_alive() and done == []


def test_the_responder_asks_no_readiness_question_once_finalize_began():
    """At server exit the question breaks the real stub (readiness.py); finalize() is where the model learns of it."""
    asked, release = [], threading.Event()
    responder = Responder(ready_probe=lambda: asked.append(1) or True, probe_interval=0.0)
    req = make_request("open")
    from chatglm.serving.reply import Channel

    channel = Channel(req, decoupled=True, use_sender=True)
    responder.call(lambda: release.wait(30))  # holds the thread until close() has begun
    responder.start_poll([channel], iteration=1)  # queued behind it: a cancellation check and a readiness question
    closer = threading.Thread(target=responder.close, args=(30,))
    closer.start()
    deadline = time.monotonic() + 30
    while responder._ready_probe is not None and time.monotonic() < deadline:  # until close() has begun
        closer.join(0.001)
    release.set()
    closer.join(30)
    assert not closer.is_alive() and asked == []
