"""model.py under the pb_utils stand-in with the tiny engine, under both schedulers (continuous and per_execute):
batching, per-row settings, bad input, cancellation, streaming framing, non-decoupled mode, engine failure."""
import json
import threading

import numpy as np
import pytest
import triton_python_backend_utils as pb

from harness import cancel_after, load_model, make_request, run
from chatglm.serving.responder import MAX_LAG

PROMPTS = ["hello", "写一个快速排序", "a much longer prompt so that the batch needs left padding for the others", "x"]


SCHEDULERS = ["continuous", "per_execute"]


@pytest.fixture(scope="module", params=SCHEDULERS)
def scheduler(request):
    return request.param


@pytest.fixture(scope="module")
def model(scheduler):
    m = load_model(scheduler=scheduler)
    yield m
    m.finalize()


def metric(name):
    return pb.MetricFamily.total(name)


def test_batched_greedy_equals_one_at_a_time(model):
    batch = run(model, [make_request(p, temperature=0.0, max_new_tokens=48) for p in PROMPTS])
    single = [run(model, [make_request(p, temperature=0.0, max_new_tokens=48)])[0] for p in PROMPTS]
    for b, s in zip(batch, single):
        assert b.error is None and s.error is None
        assert b.finals == 1 and s.finals == 1
        assert b.completion_tokens == s.completion_tokens == 48
        assert b.text == s.text
        assert b.text == b.history[-1]["content"]
    assert len({o.text for o in batch}) == len(PROMPTS)  # rows did not copy each other


def test_per_row_max_new_tokens_and_sampling_settings_in_one_batch(model):
    greedy_alone = run(model, [make_request("same prompt", temperature=0.0, max_new_tokens=30)])[0]
    outs = run(model, [
        make_request("same prompt", temperature=0.0, max_new_tokens=30),
        make_request("same prompt", temperature=1.5, top_p=1.0, max_new_tokens=7),
        make_request("same prompt", temperature=1.0, top_p=1e-6, max_new_tokens=30),  # nucleus of one = greedy
        make_request("other", max_new_tokens=19),  # defaults from config
    ])
    assert [o.completion_tokens for o in outs] == [30, 7, 30, 19]
    assert all(o.finish_reason == "length" and o.finals == 1 for o in outs)
    assert outs[0].text == greedy_alone.text
    assert outs[2].text == greedy_alone.text


def test_each_bad_input_fails_alone_with_invalid_arg(model):
    limit = model.limits.max_new_tokens_limit
    cases = [
        (make_request("ok", history="[{"), "history is neither JSON nor a Python literal"),
        (make_request("ok", history="[" * 100000), "nested too deeply"),
        (make_request("ok", history="x" * (1024 * 1024 + 1)), "input 'history' is too large"),
        (make_request("ok", history=json.dumps([{"role": "wizard", "content": "x"}])), "role must be one of"),
        (make_request("ok", history=json.dumps([{"role": "user", "content": 5}])), "content must be a string"),
        (make_request("ok", history=json.dumps({"role": "user"})), "must be a JSON list"),
        (make_request("ok", history=json.dumps(["hi"])), "must be an object"),
        (make_request("ok", history=json.dumps([{"role": "user", "content": "a", "x": 1}])), "unknown keys: 'x'"),
        (make_request("ok", history="__import__('os').system('touch /tmp/pwned')"), "only literals"),
        (make_request("ok", history="[{'role': 'user', 'content': __import__('os').getcwd()}]"), "only literals"),
        (make_request("ok", temperature=float("nan")), "temperature"),
        (make_request("ok", temperature=-0.5), "temperature"),
        (make_request("ok", temperature=1e9), "temperature"),
        (make_request("ok", top_p=0.0), "top_p"),
        (make_request("ok", top_p=1.5), "top_p"),
        (make_request("ok", max_new_tokens=0), "max_new_tokens"),
        (make_request("ok", max_new_tokens=-3), "max_new_tokens"),
        (make_request("ok", max_new_tokens=limit + 1), f"between 1 and {limit}"),
        (make_request(""), "input 'prompt' is empty"),
        (make_request("  \n "), "input 'prompt' is empty"),
        (make_request(b"\xff\xfe bad"), "not valid UTF-8"),
        (make_request(None, max_new_tokens=3), "input 'prompt' is required"),
        (make_request("ok", history_len=-1), "history_len"),
        (make_request(np.array([[b"a"], [b"b"]], dtype=np.object_)), "exactly one element"),
    ]
    good = [make_request("good one", temperature=0.0, max_new_tokens=5),
            make_request("good two", temperature=0.0, max_new_tokens=6)]
    requests = [good[0]] + [c[0] for c in cases] + [good[1]]
    invalid_before = metric("chatglm3_invalid_requests_total")
    outs = run(model, requests)
    assert outs[0].error is None and outs[0].completion_tokens == 5 and outs[0].finals == 1
    assert outs[-1].error is None and outs[-1].completion_tokens == 6 and outs[-1].finals == 1
    for (_, expected), out in zip(cases, outs[1:-1]):
        assert out.finals == 1 and not out.deltas
        assert out.error is not None, expected
        assert out.error.code() == pb.TritonError.INVALID_ARG
        assert expected in out.error.message()
    assert metric("chatglm3_invalid_requests_total") == invalid_before + len(cases)


def test_history_literal_trimming_and_history_len(tmp_path, monkeypatch, scheduler):
    log = tmp_path / "prompts.jsonl"
    monkeypatch.setenv("TINY_ENGINE_PROMPT_LOG", str(log))
    m = load_model(max_input_tokens="200", scheduler=scheduler)
    try:
        turns = []
        for i in range(8):
            turns += [{"role": "user", "content": f"question {i} " + "q" * 20},
                      {"role": "assistant", "content": f"answer {i} " + "a" * 20}]
        system = {"role": "system", "content": "be brief"}
        outs = run(m, [
            make_request("now", history=json.dumps([system] + turns), max_new_tokens=3),
            make_request("now", history=str([system] + turns[:4]), max_new_tokens=3),  # Python literal (seed format)
            make_request("now", history=json.dumps([system] + turns), history_len=1, max_new_tokens=3),
            make_request("now", history=json.dumps([system] + turns), history_len=0, max_new_tokens=3),
            make_request("p" * 400, max_new_tokens=3),
        ])
        received = [json.loads(line)["messages"] for line in log.read_text(encoding="utf-8").splitlines()]
    finally:
        m.finalize()
    trimmed, literal, last_turn, no_turns, too_long = outs
    # Budget: oldest whole turns dropped, system kept, the prompt's total within max_input_tokens.
    assert trimmed.history_trimmed > 0 and trimmed.history_trimmed % 2 == 0
    assert trimmed.prompt_tokens <= 200
    assert trimmed.history[0] == system and trimmed.history[1]["role"] == "user"
    assert len(trimmed.history) == 1 + 16 - trimmed.history_trimmed + 2
    assert received[0][0]["content"] == "be brief" and received[0][1]["content"].startswith("question ")
    assert received[0][-2] == {"role": "user", "metadata": "", "content": "now"}
    assert literal.error is None and literal.history_trimmed == 0 and len(received[1]) == 1 + 4 + 2
    assert [m_["role"] for m_ in last_turn.history] == ["system", "user", "assistant", "user", "assistant"]
    assert last_turn.history[1]["content"].startswith("question 7")
    assert [m_["role"] for m_ in no_turns.history] == ["system", "user", "assistant"]
    assert too_long.error is not None and too_long.error.code() == pb.TritonError.INVALID_ARG
    assert "prompt is too long" in too_long.error.message()


def test_cancelled_row_gets_one_final_and_others_continue(model):
    before = metric("chatglm3_cancelled_requests_total")
    records = len(pb.Logger.records)
    queued = make_request("gone before start", max_new_tokens=20)
    queued.cancel()
    requests = [make_request("keep going", temperature=0.0, max_new_tokens=60),
                cancel_after(make_request("cancel me", temperature=0.0, max_new_tokens=60), 3),
                queued,
                make_request("keep going too", max_new_tokens=40)]
    outs = run(model, requests)
    assert [o.finals for o in outs] == [1, 1, 1, 1]
    assert [o.finish_reason for o in outs] == ["length", "cancelled", "cancelled", "length"]
    assert outs[0].completion_tokens == 60 and outs[3].completion_tokens == 40
    assert 3 <= outs[1].completion_tokens < 60 and outs[2].completion_tokens == 0
    # The responder's check overlaps the engine's steps: a check still in flight when the third delta goes out
    # reports "not cancelled", and the next one is waited for at most MAX_LAG iterations after it started, so up to
    # MAX_LAG more tokens can follow the delta that cancelled (responder.py).
    assert 3 <= len(outs[1].deltas) <= 3 + MAX_LAG
    assert metric("chatglm3_cancelled_requests_total") == before + 2
    assert any("cancelled" in msg for _, msg in pb.Logger.records[records:])
    for r in requests:
        with pytest.raises(pb.TritonModelException):
            r.sender.send(flags=pb.TRITONSERVER_RESPONSE_COMPLETE_FINAL)


def test_stream_holds_back_incomplete_utf8_and_matches_final_text(model):
    outs = run(model, [make_request(f"中文 {i}", temperature=1.0, top_p=0.95, max_new_tokens=120) for i in range(3)])
    saw_multibyte = False
    for out in outs:
        assert out.deltas and out.response == ""
        for delta in out.deltas:
            assert delta and "\ufffd" not in delta
            delta.encode("utf-8")  # complete characters only
            saw_multibyte |= any(ord(ch) > 0x7F for ch in delta)
        assert "".join(out.deltas) == out.history[-1]["content"]
    assert saw_multibyte  # the tiny model writes 3-byte characters, so hold-back was exercised


def test_fast_steps_are_coalesced_into_fewer_deltas(scheduler):
    m = load_model(stream_interval_ms="10000", scheduler=scheduler)
    try:
        outs = run(m, [make_request("a", temperature=0.0, max_new_tokens=40), make_request("b", max_new_tokens=30)])
        alone = run(m, [make_request("a", temperature=0.0, max_new_tokens=40)])[0]
    finally:
        m.finalize()
    for out in outs:
        assert len(out.deltas) == 1 and out.finals == 1  # the first delta at once, the rest with the FINAL
        assert out.response and out.deltas[0] + out.response == out.history[-1]["content"]
    assert outs[0].text == alone.text


def test_stop_token_ends_row_with_stop(monkeypatch, model):
    monkeypatch.setenv("TINY_ENGINE_STOP_AFTER", "5")
    outs = run(model, [make_request("a", max_new_tokens=50), make_request("b", max_new_tokens=3)])
    assert [o.finish_reason for o in outs] == ["stop", "length"]
    assert outs[0].completion_tokens == 6  # the metadata newline + 5 answer tokens; the stop id is not counted


def test_scripted_answer_is_streamed_token_by_token_beside_a_random_row(tmp_path, monkeypatch, model):
    answer = "## Reading a file\n\n```python\nprint(open('a.txt').read())\n```\n\n这段代码读取文件。"
    scripts = tmp_path / "scripts.json"
    scripts.write_text(json.dumps([{"match": "read a file", "answer": answer}]), encoding="utf-8")
    monkeypatch.setenv("TINY_ENGINE_SCRIPTS", str(scripts))
    outs = run(model, [make_request("How do I read a file?", max_new_tokens=400), make_request("other", max_new_tokens=8)])
    assert outs[0].text == answer and outs[0].history[-1]["content"] == answer  # the metadata line is not shown
    assert outs[0].finish_reason == "stop" and len(outs[0].deltas) > 5  # streamed, not one delta
    assert outs[0].completion_tokens == 1 + len(answer.encode("utf-8"))  # metadata newline + one token per byte
    assert outs[1].finish_reason == "length" and answer not in outs[1].text


def test_non_decoupled_returns_one_full_response_per_request_in_order(scheduler):
    m = load_model(decoupled=False, scheduler=scheduler)
    try:
        reqs = [make_request(p, decoupled=False, temperature=0.0, max_new_tokens=10) for p in ("one", "two")]
        bad = make_request("bad", decoupled=False, top_p=2.0)
        outs = run(m, [reqs[0], bad, reqs[1]])
        alone = run(m, [make_request("two", decoupled=False, temperature=0.0, max_new_tokens=10)])[0]
    finally:
        m.finalize()
    assert outs[0].error is None and outs[2].error is None
    assert outs[1].error.code() == pb.TritonError.INVALID_ARG
    assert outs[2].text == alone.text == outs[2].history[-1]["content"] and outs[2].response
    assert outs[0].history[-2]["content"] == "one" and outs[2].history[-2]["content"] == "two"
    # per_execute returns the responses from execute(); continuous answers later, through the (non-decoupled)
    # response sender, which takes exactly one response with the FINAL flag.
    assert all(r.sender_requested == (scheduler == "continuous") for r in reqs)


def test_engine_failure_gives_every_row_one_error_final(scheduler):
    m = load_model(engine="harness:FailingEngine", scheduler=scheduler)
    try:
        reqs = [make_request("a", max_new_tokens=20), make_request("b", max_new_tokens=20), make_request("", max_new_tokens=2)]
        outs = run(m, reqs)
    finally:
        m.finalize()
    assert [o.finals for o in outs] == [1, 1, 1]
    assert [o.error.code() for o in outs] == [pb.TritonError.INTERNAL, pb.TritonError.INTERNAL, pb.TritonError.INVALID_ARG]
    assert "generation failed" in outs[0].error.message() and outs[0].deltas  # some deltas came before the failure


def test_finalize_leaves_no_threads_and_releases_engine(scheduler):
    threads = threading.active_count()
    m = load_model(scheduler=scheduler)
    run(m, [make_request("x", max_new_tokens=2)])
    m.finalize()
    assert m.engine is None
    assert threading.active_count() == threads


def test_config_parameters_are_validated_at_load():
    with pytest.raises(ValueError, match="module:Class"):
        load_model(engine="not-a-spec")
    with pytest.raises(ValueError, match="stream_interval_ms"):
        load_model(stream_interval_ms="soon")
    with pytest.raises(ValueError, match="max_input_tokens must be a number"):
        load_model(max_input_tokens="lots")
    with pytest.raises(ValueError, match="default_max_new_tokens"):
        load_model(default_max_new_tokens="4096")
