"""The continuous scheduler under the pb_utils stand-in (tiny engine), counted in the engine thread's own steps:
slots reused at once, the queue bound, the prefill budget, cancellation of waiting rows, engine failure, unload
and finalize with requests running."""
import re
import statistics
import threading
import time

import pytest
import triton_python_backend_utils as pb

from harness import cancel_after, load_model, make_request, outcome_of, run, wait_for_finals

FINISHED = re.compile(r"request (\S+) (\w+) after (\d+) tokens \(prompt (\d+) tokens; admitted at step (\d+), "
                      r"first token at step (\d+), finished at step (\d+)")


def finished(request_id):
    """(reason, tokens, prompt tokens, admitted step, first-token step, finished step) from the log line."""
    for _, message in reversed(pb.Logger.records):
        m = FINISHED.search(message)
        if m and m.group(1) == request_id:
            return m.group(2), int(m.group(3)), int(m.group(4)), int(m.group(5)), int(m.group(6)), int(m.group(7))
    raise AssertionError(f"no log line for request {request_id}")


def wait_until(condition, timeout=60.0):
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.002)


@pytest.fixture
def paced(monkeypatch):
    monkeypatch.setenv("TINY_ENGINE_STEP_DELAY_MS", "2")


def test_a_finished_row_hands_its_slot_to_the_waiting_request_in_the_same_step(paced):
    m = load_model(max_active_rows="1")
    try:
        outs = run(m, [make_request("first", request_id="a", temperature=0.0, max_new_tokens=30),
                       make_request("second", request_id="b", temperature=0.0, max_new_tokens=30)])
    finally:
        m.finalize()
    assert [o.completion_tokens for o in outs] == [30, 30]
    _, _, _, _, _, a_done = finished("a")
    _, _, _, b_admitted, b_first, _ = finished("b")
    assert b_admitted == a_done and b_first == b_admitted


def test_cancelling_frees_the_slot_by_the_next_step(paced):
    m = load_model(max_active_rows="1")
    try:
        leaver = cancel_after(make_request("leave", request_id="leaver", max_new_tokens=2000), 5)
        outs = run(m, [leaver, make_request("next", request_id="next", max_new_tokens=10)])
    finally:
        m.finalize()
    assert outs[0].finish_reason == "cancelled" and outs[0].completion_tokens < 2000
    assert outs[1].completion_tokens == 10
    assert finished("next")[3] <= finished("leaver")[5] + 1


def test_a_cancelled_waiting_request_ends_without_a_slot(paced):
    m = load_model(max_active_rows="1")
    try:
        holder = make_request("hold", max_new_tokens=200)
        waiter = make_request("wait", request_id="waiter", max_new_tokens=10)
        m.execute([holder, waiter])
        wait_until(lambda: m.metrics.waiting.value() == 1 and len(holder.sender.responses) > 2)
        waiter.cancel()
        wait_for_finals([holder, waiter])
        out = outcome_of(waiter)
    finally:
        m.finalize()
    assert out.finals == 1 and out.finish_reason == "cancelled" and out.completion_tokens == 0
    assert outcome_of(holder).completion_tokens == 200


def test_the_waiting_queue_is_bounded_and_refuses_with_server_busy(paced):
    m = load_model(max_active_rows="1", max_waiting="2")
    busy = pb.MetricFamily.total("chatglm3_rejected_busy_total")
    try:
        holder = make_request("hold", max_new_tokens=100)
        m.execute([holder])
        wait_until(lambda: m.metrics.active_rows.value() == 1)
        queued = [make_request(f"q{i}", max_new_tokens=3) for i in range(2)]
        extra = [make_request(f"x{i}", max_new_tokens=3) for i in range(2)]
        m.execute(queued + extra)
        refused = [outcome_of(r) for r in extra]  # answered inside execute()
        wait_for_finals([holder] + queued)
    finally:
        m.finalize()
    for out in refused:
        assert out.finals == 1 and out.error.code() == pb.TritonError.UNAVAILABLE
        assert out.error.message().startswith("server busy: the waiting queue is full (2 requests wait for one of 1 rows)")
    assert all(outcome_of(r).completion_tokens == 3 for r in queued)
    assert pb.MetricFamily.total("chatglm3_rejected_busy_total") == busy + 2


def test_the_requests_of_one_execute_are_admitted_in_the_same_iteration():
    # Each cancellation check is an IPC call, slow on a busy server: the engine thread, woken by the first
    # request, must not start decoding it alone while execute() still checks the others.
    def slow_check(sender):
        quick = sender.is_cancelled

        def check():
            time.sleep(0.02)
            return quick()
        sender.is_cancelled = check

    m = load_model(max_active_rows="4")
    try:
        requests = [make_request(f"together {i}", request_id=f"t{i}", temperature=0.0, max_new_tokens=8) for i in range(4)]
        for r in requests:
            slow_check(r.sender)
        outs = run(m, requests)
    finally:
        m.finalize()
    assert [o.completion_tokens for o in outs] == [8] * 4
    steps = [finished(f"t{i}")[3:5] for i in range(4)]  # (admitted, first token) in decode steps
    assert steps == [steps[0]] * 4, steps


def test_a_long_prompt_is_prefilled_in_budget_chunks_while_the_others_keep_decoding():
    long_prompt = "a long prompt " * 30  # ~430 tokens with the chat layout
    alone_model = load_model()
    try:
        alone = run(alone_model, [make_request(long_prompt, request_id="alone", temperature=0.0, max_new_tokens=12)])[0]
    finally:
        alone_model.finalize()
    m = load_model(prefill_token_budget="64", prefill_stall_target="off")  # fixed chunks (the sizer: below)
    try:
        runner = make_request("keep going", request_id="runner", temperature=0.0, max_new_tokens=60)
        m.execute([runner])
        wait_until(lambda: len(runner.sender.responses) >= 3)
        outs = run(m, [make_request(long_prompt, request_id="chunked", temperature=0.0, max_new_tokens=12)])
        wait_for_finals([runner])
    finally:
        m.finalize()
    _, _, prompt_tokens, admitted, first, _ = finished("chunked")
    chunks = -(-prompt_tokens // 64)
    assert chunks >= 6
    # One chunk per iteration, each in the same pass as the decode step of the running row (so the pass of the
    # last chunk is a step too, and its first token is sampled with that step's tokens).
    assert first - admitted == chunks
    assert outs[0].text == alone.text and outs[0].completion_tokens == 12
    assert outcome_of(runner).completion_tokens == 60


def test_an_engine_failure_fails_the_open_rows_and_serves_the_waiting_and_next_ones(paced):
    m = load_model(engine="harness:FailingEngine", max_active_rows="2")
    try:
        reqs = [make_request(f"r{i}", max_new_tokens=40) for i in range(3)]  # two rows open, one waiting
        outs = run(m, reqs)
        after = run(m, [make_request("after", max_new_tokens=2)])[0]
    finally:
        m.finalize()
    assert [o.finals for o in outs] == [1, 1, 1]
    assert outs[0].error.code() == outs[1].error.code() == pb.TritonError.INTERNAL
    assert outs[0].error.message() == "generation failed: device lost"
    # The waiting row is admitted after the reset; the failing engine fails every 4th step, so it may fail too,
    # but only as an open row of a later step, never without its FINAL.
    assert outs[2].error is None or "generation failed" in outs[2].error.message()
    assert after.error is None and after.completion_tokens == 2


def test_unload_ends_running_and_waiting_requests_with_model_unloaded(paced):
    m = load_model(max_active_rows="1")
    try:
        reqs = [make_request(f"u{i}", max_new_tokens=2000) for i in range(3)]
        m.execute(reqs)
        wait_until(lambda: len(reqs[0].sender.responses) > 3)
        pb.set_model_ready("chatglm3-6b", False)  # what Triton answers once an unload was requested
        wait_for_finals(reqs)
        outs = [outcome_of(r) for r in reqs]
        late = make_request("too late", max_new_tokens=2)
        m.execute([late])
        refused = outcome_of(late)
    finally:
        pb.set_model_ready("chatglm3-6b", True)
        m.finalize()
    for out in outs:
        assert out.finals == 1 and out.error.code() == pb.TritonError.UNAVAILABLE
        assert out.error.message() == "model unloaded: the model is being unloaded"
    assert refused.error.message().startswith("model unloaded")


def test_warmup_never_asks_triton_whether_the_model_is_ready_then_an_unload_is_still_noticed(paced):
    # A model loaded at start (--load-model, every team replica) warms up while the server is still starting:
    # is_model_ready then fails inside Triton 2.51's stub and corrupts its shared memory (chatglm/serving/readiness.py).
    m = load_model(max_active_rows="2")
    pb.set_server_starting(True)
    before = pb.calls_while_starting
    try:
        warmup = [make_request(f"w{i}", max_new_tokens=40) for i in range(2)]  # config.pbtxt: batch_size 2, count 1
        m.execute(warmup)
        wait_for_finals(warmup)
        asked_in_warmup = pb.calls_while_starting - before
        pb.set_server_starting(False)
        req = make_request("after warmup", max_new_tokens=2000)
        m.execute([req])
        wait_until(lambda: len(req.sender.responses) > 3)
        pb.set_model_ready("chatglm3-6b", False)
        wait_for_finals([req])
        out = outcome_of(req)
    finally:
        pb.set_server_starting(False)
        pb.set_model_ready("chatglm3-6b", True)
        m.finalize()
    assert [outcome_of(r).error for r in warmup] == [None, None]
    assert asked_in_warmup == 0
    assert out.finals == 1 and out.error.message() == "model unloaded: the model is being unloaded"


def test_finalize_with_requests_running_gives_each_one_final_and_joins_the_threads(paced):
    threads = threading.active_count()
    m = load_model(max_active_rows="2")
    reqs = [make_request(f"f{i}", max_new_tokens=2000) for i in range(5)]
    m.execute(reqs)
    wait_until(lambda: len(reqs[0].sender.responses) > 3)
    m.finalize()
    outs = [outcome_of(r) for r in reqs]
    assert [o.finals for o in outs] == [1] * 5
    assert all(o.error.code() == pb.TritonError.UNAVAILABLE and o.error.message().startswith("model unloaded") for o in outs)
    assert threading.active_count() == threads and m.engine is None


def test_step_metrics_count_every_row_of_every_step_and_nothing_for_finished_rows():
    m = load_model()
    try:
        before = {n: pb.MetricFamily.total(n) for n in ("chatglm3_decode_rows_total", "chatglm3_generated_tokens_total",
                                                        "chatglm3_first_tokens_total", "chatglm3_prefill_tokens_total")}
        outs = run(m, [make_request("short", max_new_tokens=16), make_request("long", max_new_tokens=400)])
        delta = {n: pb.MetricFamily.total(n) - v for n, v in before.items()}
    finally:
        m.finalize()
    assert [o.completion_tokens for o in outs] == [16, 400]
    assert delta["chatglm3_generated_tokens_total"] == 416 and delta["chatglm3_first_tokens_total"] == 2
    assert delta["chatglm3_decode_rows_total"] == 416 - 2
    assert delta["chatglm3_prefill_tokens_total"] == sum(o.prompt_tokens for o in outs)


def test_a_request_that_cannot_fit_the_context_is_refused_up_front():
    m = load_model(max_context="64")
    try:
        out = run(m, [make_request("hello", max_new_tokens=100)])[0]
    finally:
        m.finalize()
    assert out.error.code() == pb.TritonError.INVALID_ARG
    assert "exceed the context of 64 tokens" in out.error.message()


def test_continuous_needs_a_step_engine():
    with pytest.raises(ValueError, match="scheduler 'continuous' needs an engine that decodes step by step"):
        load_model(engine="harness:GenerateOnlyEngine", scheduler="continuous")
    m = load_model(engine="harness:GenerateOnlyEngine", scheduler="")  # none given: per_execute for such an engine
    try:
        assert not m.continuous and run(m, [make_request("x", max_new_tokens=3)])[0].completion_tokens == 3
    finally:
        m.finalize()


def test_the_chunk_sizer_settles_under_its_target_while_the_context_grows():
    """A modelled cost (a step, a fixed part, and per prompt token a part that grows with the context, as
    attention does): after the probe, never more than 0.9 x the target, near its aim, at most 1.5 x per step."""
    from chatglm.serving.chunk_sizer import ChunkSizer

    sizer, step = ChunkSizer(2048, 2.0), 0.010
    sizer.observe(step, 0, True)
    done, sizes, costs = 0, [], []
    while done < 4000:
        tokens = sizer.tokens(True)
        seconds = step + 0.001 + tokens * 0.00002 * (1 + done / 1000)
        sizer.observe(seconds, tokens, True)
        sizes.append(tokens)
        costs.append(seconds / step)
        done += tokens
    assert sizes[0] == ChunkSizer.PROBE_TOKENS and all(b <= 1.5 * a for a, b in zip(sizes, sizes[1:])), sizes
    assert max(costs) <= 0.92 * 2.0 and statistics.median(costs) >= 1.5, costs
    assert sizer.tokens(False) == 2048  # with no row decoding, the whole budget


def test_the_chunk_sizer_keeps_a_chunk_within_the_steps_own_pass():
    """Chunks that cost nothing grow to what fits one pass with the step (beside_step), never to the whole budget;
    with no row decoding the whole budget is used."""
    from chatglm.serving.chunk_sizer import ChunkSizer

    sizer = ChunkSizer(2048, 2.0, beside_step=2040)
    sizer.observe(0.010, 0, True)
    for _ in range(30):
        tokens = sizer.tokens(True)
        sizer.observe(0.0101, tokens, True)
    assert sizer.tokens(True) == 2040 and sizer.tokens(False) == 2048
